"""Classifying new documents with a model bundle (OUTPUT/model, written by the train stage).

* Reuters-21578 R(10): the test documents as JSON Lines, through ``jobs/classify.py`` on the suite's session,
  get exactly the pipeline's own predictions (evaluate's ``predictions`` table) and top scores;
  the same texts as plain text files likewise, written as JSON Lines;
* the synthetic LYRL2004-format corpus (tokenized): its test token files get the pipeline's
  predictions, with PCut (thresholds over the documents classified) and with kNN (training vectors
  in the bundle);
* clear errors: a bundle of another format, a part of the bundle or a file of one missing or changed
  (in size, or at the same size: bundle.json records each file's SHA-256), a bundle.json changed (its own digest),
  a missing input or one without documents, an unknown input format (exit 2 before Spark starts);
  documents without a vocabulary term, bad lines and repeated doc ids go to rejects.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, flip_bytes, prepared_job, reseal_bundle, run_prepared

from sparktc.apps.classify import (
    NO_TERMS,
    SHOWN_CATEGORIES,
    SHOWN_DOCUMENTS,
    ClassifyError,
    classify,
    summary_text,
    vectors,
)
from sparktc.apps.pipeline import run as run_pipeline
from sparktc.experiment.bundle import BUNDLE_FORMAT, BundleError, load_bundle
from sparktc.experiment.config import load_config
from sparktc.features.text import TermFeatures


@pytest.fixture(scope="module")
def reuters(reuters21578_run) -> Path:
    """The suite's pipeline run on Reuters-21578 R(90), ApteMod (conf/reuters21578.toml)."""
    return Path(reuters21578_run[0])


@pytest.fixture(scope="module")
def test_documents(spark, reuters) -> pd.DataFrame:
    """The pipeline's test documents (id, text) with whether their vector is empty."""
    documents = spark.read.parquet(str(reuters / "documents")).filter("split = 'test'").select("doc_id", "text")
    vectors = spark.read.parquet(str(reuters / "vectors")).filter("split = 'test'").selectExpr(
        "doc_id", "size(indices) = 0 AS empty")
    return documents.join(vectors, "doc_id").orderBy("doc_id").toPandas()


def pipeline_predictions(spark, run: Path) -> pd.DataFrame:
    return spark.read.parquet(str(run / "predictions")).toPandas().set_index("doc_id")


def assert_same_predictions(classified: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Same predicted categories and top categories per document, top scores to 1e-9."""
    expected = expected.loc[classified.index]
    assert [list(p) for p in classified["predicted"]] == [list(p) for p in expected["predicted"]]
    assert [list(c) for c in classified["top_categories"]] == [list(c) for c in expected["top_categories"]]
    np.testing.assert_allclose(np.vstack(classified["top_scores"]), np.vstack(expected["top_scores"]),
                               rtol=0, atol=1e-9)


def test_plain_text_files_get_the_pipeline_predictions(spark, reuters, test_documents, tmp_path, monkeypatch,
                                                      capsys):
    """Through ``jobs/classify.py --quiet``: its stage line, no table of predictions and no counts by category."""
    directory = tmp_path / "texts"
    directory.mkdir()
    chosen = test_documents[~test_documents["empty"]].iloc[::25]
    for row in chosen.itertuples():
        (directory / row.doc_id).write_text(row.text, encoding="utf-8")
    job = prepared_job("jobs/classify.py", ["--model", str(reuters / "model"), "--input", str(directory),
                                            "--output", str(tmp_path / "out"), "--input-format", "text",
                                            "--format", "jsonl", "--top-k", "3", "--quiet"], monkeypatch)
    capsys.readouterr()
    run_prepared(spark, job)
    [line] = capsys.readouterr().out.splitlines()  # the stage's line only
    assert line.startswith(f"sparktc: classify  in {len(chosen):>10,}  out {len(chosen):>10,}  [")
    parts = sorted((tmp_path / "out" / "predictions").glob("part-*.json"))
    classified = pd.concat([pd.read_json(part, lines=True, dtype={"doc_id": str})
                            for part in parts]).set_index("doc_id")
    expected = pipeline_predictions(spark, reuters)
    expected["top_categories"] = expected["top_categories"].map(lambda c: list(c)[:3])
    expected["top_scores"] = expected["top_scores"].map(lambda s: list(s)[:3])
    assert sorted(classified.index) == sorted(chosen["doc_id"])
    assert_same_predictions(classified, expected)


def test_a_libmultilabel_text_file_gets_the_pipeline_predictions_and_keeps_its_labels(spark, reuters, test_documents,
                                                                                       tmp_path):
    # LibMultiLabel's form of the test documents (id, labels, text on one line; a .bz2 file of any name), with a
    # line of four fields, which the reader rejects with its line.
    chosen = test_documents[~test_documents["empty"]].iloc[1::25]
    labels = spark.read.parquet(str(reuters / "documents")).filter("split = 'test'").select("doc_id", "labels") \
        .toPandas().set_index("doc_id")["labels"]
    lines = [f"{row.doc_id}\t{' '.join(labels[row.doc_id])}\t{' '.join(row.text.split())}"
             for row in chosen.itertuples()]
    lines.insert(3, "extra\tearn\tone tab\ttoo many")
    source = tmp_path / "rcv1_style_test.txt.bz2"
    source.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode("utf-8")))
    report = classify(spark, load_bundle(spark, str(reuters / "model")), str(source), str(tmp_path / "out"),
                      input_format="libmultilabel_text")
    assert (report.rows_in, report.rows_out) == (len(chosen) + 1, len(chosen))
    [reject] = spark.read.parquet(str(tmp_path / "out" / "rejects")).collect()
    assert (reject.line, reject.doc_id) == (4, "extra") and "4 tab-separated fields" in reject.reason
    classified = spark.read.parquet(str(tmp_path / "out" / "predictions")).toPandas().set_index("doc_id")
    assert sorted(classified.index) == sorted(chosen["doc_id"])
    assert all(list(classified.at[doc_id, "labels"]) == list(labels[doc_id]) for doc_id in chosen["doc_id"])
    assert_same_predictions(classified, pipeline_predictions(spark, reuters))


def test_documents_without_vocabulary_terms_bad_lines_and_repeated_ids_are_rejected(spark, reuters, tmp_path):
    source = tmp_path / "documents"
    source.mkdir()
    oil = {"id": "oil", "text": "Crude oil prices rose as OPEC cut output", "labels": ["crude"]}
    (source / "a.jsonl").write_text("\n".join([
        json.dumps(oil),
        json.dumps({"id": "stop", "text": "the and of it was"}),
        json.dumps({"id": "unknown", "text": "zzqx qqzv 12345"}),
        "{not json",
        json.dumps({"id": "wheat", "text": "Wheat exports rose", "labels": ["wheat", "wheat"]}),
    ]) + "\n")
    (source / "b.jsonl").write_text(json.dumps({**oil, "text": "Oil output fell"}) + "\n")  # "oil" again
    report = classify(spark, load_bundle(spark, str(reuters / "model")), str(source), str(tmp_path / "out"))
    assert (report.rows_in, report.rows_out, report.set_aside) == (6, 1, {"no vocabulary term": 2, "rejected": 3})
    rejects = pd.read_parquet(tmp_path / "out" / "rejects").sort_values(["source", "line"])
    assert [(s.rsplit("/", 1)[-1], line) for s, line in zip(rejects["source"], rejects["line"])] == [
        ("a.jsonl", 2), ("a.jsonl", 3), ("a.jsonl", 4), ("a.jsonl", 5), ("b.jsonl", 1)]
    assert list(rejects["doc_id"]) == ["stop", "unknown", None, "wheat", "oil"]
    assert list(rejects["reason"][:2]) == [NO_TERMS] * 2 and "invalid JSON" in rejects["reason"].iloc[2]
    assert list(rejects["reason"][3:]) == [
        "label 'wheat' repeated in field 'labels'; list each label once",
        f"duplicate doc id (first at file:{source}/a.jsonl:1); doc ids must be unique"]
    predictions = pd.read_parquet(tmp_path / "out" / "predictions")
    assert list(predictions["doc_id"]) == ["oil"] and list(predictions["labels"][0]) == ["crude"]
    assert "crude" in predictions["predicted"][0]


@pytest.fixture(scope="module")
def synthetic(spark, small_corpus, tmp_path_factory) -> Path:
    """A PCut pipeline run on the synthetic LYRL2004-format corpus (tokenized, no stemming)."""
    output = tmp_path_factory.mktemp("synthetic") / "run"
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={small_corpus}", "tokenize.stemmer=none",
                                "train.thresholding=pcut"])
    run_pipeline(spark, config, str(output))
    return output


def token_files(small_corpus: Path, directory: Path) -> Path:
    """The corpus's test token files alone, in a directory of their own."""
    directory.mkdir()
    for path in small_corpus.glob("lyrl2004_tokens_test_pt*"):
        shutil.copy(path, directory / path.name)
    return directory


@pytest.fixture(scope="module")
def knn(spark, small_corpus, synthetic, tmp_path_factory) -> Path:
    """The synthetic run trained and evaluated again with kNN: its bundle holds the training vectors."""
    run = tmp_path_factory.mktemp("knn") / "run"
    shutil.copytree(synthetic, run)
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={small_corpus}", "tokenize.stemmer=none",
                                "train.thresholding=scut", "train.method=knn", "train.knn.k=10"])
    run_pipeline(spark, config, str(run), "train", "evaluate")
    assert (run / "model" / "training").is_dir()
    return run


@pytest.mark.parametrize("method", ["liblinear", "knn"])
def test_lyrl2004_token_files_get_the_pipeline_predictions(request, spark, small_corpus, tmp_path, method, capsys):
    run = request.getfixturevalue("synthetic" if method == "liblinear" else "knn")
    inputs = token_files(small_corpus, tmp_path / "tokens")
    capsys.readouterr()
    report = classify(spark, load_bundle(spark, str(run / "model")), str(inputs), str(tmp_path / "out"),
                      input_format="lyrl2004")
    assert "documents classified" not in capsys.readouterr().out  # the function prints no table unless shown > 0
    expected = pipeline_predictions(spark, run)
    assert report.rows_in == report.rows_out == len(expected) == 800
    classified = pd.read_parquet(tmp_path / "out" / "predictions").set_index("doc_id")
    assert sorted(classified.index) == sorted(expected.index)
    assert_same_predictions(classified, expected)


def test_a_bundle_of_another_format_or_incomplete_is_refused(spark, synthetic, tmp_path):
    bundle = tmp_path / "model"
    shutil.copytree(synthetic / "model", bundle)
    description = json.loads((bundle / "bundle.json").read_text())
    (bundle / ".bundle.json.crc").unlink(missing_ok=True)  # edited behind a checksum sidecar, as an editor would
    (bundle / "bundle.json").write_text(json.dumps({**description, "bundle_format": 0, "sparktc_version": "0.0.1"}))
    with pytest.raises(BundleError,
                       match=rf"bundle format 0 \(written by sparktc 0.0.1\); this sparktc .* reads bundle format "
                             rf"{BUNDLE_FORMAT} only"):
        load_bundle(spark, str(bundle))
    (bundle / "bundle.json").write_text('{"bundle_format": ')
    with pytest.raises(BundleError, match="damaged: bundle.json cannot be read"):
        load_bundle(spark, str(bundle))
    (bundle / "bundle.json").write_text(json.dumps(description))
    # A part's data file missing, cut short, or added: never read as a smaller model or an unreadable one.
    [vocabulary] = (bundle / "vocabulary").glob("part-*.parquet")
    [categories] = (bundle / "categories").glob("part-*.parquet")
    categories.rename(tmp_path / categories.name)
    with pytest.raises(BundleError, match=rf"damaged: categories/{categories.name} is missing; restore the whole model "
                                          "directory from a good copy, or train again"):
        load_bundle(spark, str(bundle))
    categories.with_name("part-extra.parquet").write_bytes((tmp_path / categories.name).read_bytes())
    size = vocabulary.stat().st_size
    with vocabulary.open("r+b") as handle:
        handle.truncate(size - 1)
    with pytest.raises(BundleError, match=rf"{categories.name} is missing; vocabulary/{vocabulary.name} has "
                                          rf"{size - 1:,} bytes, {size:,} when written; categories/part-extra.parquet "
                                          "was not written with it; restore"):
        load_bundle(spark, str(bundle))
    shutil.rmtree(bundle / "categories")
    with pytest.raises(BundleError, match="incomplete: categories is missing"):
        load_bundle(spark, str(bundle))
    with pytest.raises(BundleError, match="no model bundle at"):
        load_bundle(spark, str(tmp_path / "nowhere"))


def test_bundle_json_records_the_sha256_of_every_part_file_as_the_train_manifest(synthetic, knn):
    for run in (synthetic, knn):
        bundle = run / "model"
        parts = json.loads((bundle / "bundle.json").read_text())["parts"]
        files = sorted(str(file.relative_to(bundle)) for file in bundle.rglob("*")
                       if file.is_file() and not file.name.startswith(("_", ".")) and file.name != "bundle.json")
        assert sorted(parts) == files and any(name.startswith("training/") for name in files) == (run == knn)
        assert parts == {name: {"size": (bundle / name).stat().st_size,
                                "sha256": hashlib.sha256((bundle / name).read_bytes()).hexdigest()} for name in files}
        listed = {path: [size, sha] for path, size, _, sha in
                  json.loads((run / "manifests" / "train.json").read_text())["outputs"]["model"]["files"]}
        assert {name: [entry["size"], entry["sha256"]] for name, entry in parts.items()} == {
            name: listed[name] for name in parts}


def test_a_part_file_changed_at_the_same_size_is_refused_naming_it(spark, synthetic, knn, tmp_path):
    """40 bytes inverted inside a part's data file, its size kept: bundle.json's sizes cannot tell, its SHA-256s do
    (a categories part so changed classified with scores near 1e181 and wrong categories).
    """
    for run, part in ((synthetic, "categories"), (synthetic, "vocabulary"), (knn, "training")):
        bundle = tmp_path / part
        shutil.copytree(run / "model", bundle)
        file = sorted((bundle / part).rglob("part-*.parquet"))[0]
        size = file.stat().st_size
        flip_bytes(file)
        assert file.stat().st_size == size
        with pytest.raises(BundleError, match=rf"^the model bundle {bundle} is damaged: {file.relative_to(bundle)} has "
                                              r"other bytes than when written \(its SHA-256 is not the one bundle.json "
                                              r"records\); restore the whole model directory from a good copy, or "
                                              "train again$"):
            load_bundle(spark, str(bundle))


def test_a_bundle_json_changed_or_of_the_previous_format_is_refused(spark, synthetic, knn, tmp_path):
    bundle = tmp_path / "model"
    shutil.copytree(synthetic / "model", bundle)
    (bundle / ".bundle.json.crc").unlink(missing_ok=True)  # edited behind a checksum sidecar, as an editor would
    description = json.loads((bundle / "bundle.json").read_text())
    restore = "; restore the whole model directory from a good copy, or train again$"
    # A value changed (N, which PCut's training shares count), or the digest gone: not as it was written.
    (bundle / "bundle.json").write_text(json.dumps({**description, "weight": {
        **description["weight"], "train_documents": description["weight"]["train_documents"] + 1}}))
    with pytest.raises(BundleError, match=r"damaged: bundle.json does not match the digest it records of itself "
                                          rf"\(changed since it was written\){restore}"):
        load_bundle(spark, str(bundle))
    (bundle / "bundle.json").write_text(json.dumps({key: value for key, value in description.items()
                                                    if key != "digest"}))
    with pytest.raises(BundleError, match=rf"damaged: bundle.json records no digest of itself{restore}"):
        load_bundle(spark, str(bundle))
    # Edited and sealed again: a part's SHA-256 wrong, or missing, is still refused, naming the file.
    [categories] = [name for name in description["parts"] if name.startswith("categories/")]
    parts = description["parts"]
    reseal_bundle(bundle, {**description, "parts": {**parts, categories: {**parts[categories], "sha256": "0" * 64}}})
    with pytest.raises(BundleError, match=rf"damaged: {categories} has other bytes than when written"):
        load_bundle(spark, str(bundle))
    reseal_bundle(bundle, {**description, "parts": {**parts, categories: {"size": parts[categories]["size"]}}})
    with pytest.raises(BundleError, match=rf"damaged: bundle.json records no size and SHA-256 of {categories}"
                                          rf"{restore}"):
        load_bundle(spark, str(bundle))
    for garbled, reason in ((b'\xff{"bundle_format": 5}', "not UTF-8"), (b"[5]", "not a JSON object")):
        (bundle / "bundle.json").write_bytes(garbled)
        with pytest.raises(BundleError, match=rf"damaged: bundle.json cannot be read \({reason}\); copy the bundle "
                                              "again, or train again$"):
            load_bundle(spark, str(bundle))
    # The previous format: sizes only, no digest.
    (bundle / "bundle.json").write_text(json.dumps({
        **{key: value for key, value in description.items() if key != "digest"}, "bundle_format": BUNDLE_FORMAT - 1,
        "parts": {name: entry["size"] for name, entry in parts.items()}}))
    with pytest.raises(BundleError, match=rf"has bundle format {BUNDLE_FORMAT - 1} \(written by sparktc .*\); this "
                                          rf"sparktc .* reads bundle format {BUNDLE_FORMAT} only: train the model "
                                          "again with this version, or classify with the version that wrote it$"):
        load_bundle(spark, str(bundle))
    reseal_bundle(bundle, description)
    assert load_bundle(spark, str(bundle)).n_train == description["weight"]["train_documents"]
    # kNN's training vectors left out of bundle.json: the part kNN scores against is checked all the same.
    bundle = tmp_path / "knn"
    shutil.copytree(knn / "model", bundle)
    description = json.loads((bundle / "bundle.json").read_text())
    [training] = [name for name in description["parts"] if name.startswith("training/")]
    reseal_bundle(bundle, {**description, "parts": {name: entry for name, entry in description["parts"].items()
                                                    if name != training}})
    with pytest.raises(BundleError, match=rf"damaged: {training} was not written with it{restore}"):
        load_bundle(spark, str(bundle))


def test_a_missing_input_or_one_without_documents_is_an_error(spark, synthetic, tmp_path):
    bundle = load_bundle(spark, str(synthetic / "model"))
    with pytest.raises(ClassifyError, match="no input at .*nowhere"):
        classify(spark, bundle, str(tmp_path / "nowhere"), str(tmp_path / "out"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank.jsonl").write_text("\n  \n")
    for empty in (tmp_path / "empty", tmp_path / "blank.jsonl"):
        with pytest.raises(ClassifyError, match=f"no documents in {empty} .*; give a file or a directory of jsonl"):
            classify(spark, bundle, str(empty), str(tmp_path / "out"))
        assert not (tmp_path / "out" / "predictions").exists()


def test_an_input_of_rejects_only_is_classified_into_rejects(spark, synthetic, tmp_path, capsys):
    """No document to score (PCut's thresholds over none), yet every record is accounted for and shown: an empty text
    is a document (as in a corpus), without a term of the model's vocabulary.
    """
    source = tmp_path / "bad.jsonl"
    source.write_text('{"id": "a", "text": ""}\n{not json\n')
    report = classify(spark, load_bundle(spark, str(synthetic / "model")), str(source), str(tmp_path / "out"))
    assert (report.rows_in, report.rows_out, report.set_aside) == (2, 0, {"no vocabulary term": 1, "rejected": 1})
    assert len(pd.read_parquet(tmp_path / "out" / "predictions")) == 0
    assert list(pd.read_parquet(tmp_path / "out" / "rejects").sort_values("line")["line"]) == [1, 2]
    assert "sparktc: 2 records not classified" in capsys.readouterr().out


def test_an_unknown_input_format_stops_the_job_before_spark_starts(tmp_path):
    job = subprocess.run(
        [sys.executable, "jobs/classify.py", "--model", str(tmp_path), "--input", str(tmp_path),
         "--output", str(tmp_path / "out"), "--input-format", "xml"],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert job.returncode == 2
    assert ("sparktc: configuration error: --input-format 'xml' is not known; formats: lyrl2004, jsonl, "
            "libmultilabel_text, text" in job.stderr)


def test_the_classify_job_classifies_the_reuters_test_documents_as_the_pipeline(spark, reuters, test_documents,
                                                                              tmp_path, monkeypatch, capsys):
    """``jobs/classify.py`` (its arguments parsed and checked as before its session starts, its work on the suite's
    session: classify in a process of its own, from the installed command, is tests/apps/test_cluster.py's) on the
    Reuters test documents as JSON Lines.
    """
    source, output = tmp_path / "documents.jsonl", tmp_path / "classified"
    with source.open("w") as handle:
        for row in test_documents.itertuples():
            handle.write(json.dumps({"id": row.doc_id, "text": row.text}) + "\n")
    job = prepared_job("jobs/classify.py", ["--model", str(reuters / "model"), "--input", str(source),
                                            "--output", str(output)], monkeypatch)
    capsys.readouterr()
    run_prepared(spark, job)
    classified = pd.read_parquet(output / "predictions").set_index("doc_id")
    rejects = pd.read_parquet(output / "rejects")
    expected = pipeline_predictions(spark, reuters)
    empty = set(test_documents.loc[test_documents["empty"], "doc_id"])
    # Every test document is classified, but those the pipeline scored with an empty vector, which are rejected.
    assert set(classified.index) == set(expected.index) - empty and len(classified) + len(empty) == len(test_documents)
    assert set(rejects["doc_id"]) == empty and set(rejects["reason"]) <= {NO_TERMS}
    assert_same_predictions(classified, expected)
    names = load_bundle(spark, str(reuters / "model")).names
    assert [list(n) for n in classified["predicted_names"]] == [[names[c] for c in p] for p in classified["predicted"]]
    assert not (output / "_incomplete").exists()  # nothing staged is left
    printed = capsys.readouterr().out.splitlines()
    # The table: the first documents by doc id, each assigned category with its score among the 5 best.
    start = printed.index(f"sparktc: {len(classified):,} documents classified; the first {SHOWN_DOCUMENTS} by doc id, "
                          "with the categories assigned (and their scores when among the 5 best):")
    rows = [line.split(None, 1) for line in printed[start + 2:start + 2 + SHOWN_DOCUMENTS]]
    first = classified.sort_index().iloc[:SHOWN_DOCUMENTS]
    assert [doc_id for doc_id, _ in rows] == list(first.index)
    for (doc_id, shown), row in zip(rows, first.itertuples()):
        best = dict(zip(row.top_categories, row.top_scores))
        ranked = [c for c in row.top_categories if c in set(row.predicted)] + \
            [c for c in row.predicted if c not in best]  # by score, then those outside the 5 best
        expected_row = [f"{c} {best[c]:.2f}" if c in best else c for c in ranked]
        assert shown == (", ".join(expected_row) if expected_row else
                         f"(none; best: {row.top_categories[0]} {row.top_scores[0]:.2f})"), doc_id
    # The counts: documents per category, from the predictions as written, the most assigned first.
    assigned = classified["predicted"].explode().dropna().value_counts()
    ordered = sorted(assigned.items(), key=lambda pair: (-pair[1], pair[0]))
    none = int((classified["predicted"].map(len) == 0).sum())
    start = printed.index(f"sparktc: documents by category ({len(assigned):,} categories, {assigned.sum():,} "
                          f"assignments; {none:,} documents assigned none):")
    counts = [line.split() for line in printed[start + 2:start + 2 + SHOWN_CATEGORIES]]
    assert [(code, int(count.replace(",", ""))) for code, count in counts] == ordered[:SHOWN_CATEGORIES]
    rest = ordered[SHOWN_CATEGORIES:]
    assert printed[start + 2 + SHOWN_CATEGORIES] == (f"  ... {len(rest):,} more categories, "
                                                      f"{sum(count for _, count in rest):,} assignments")
    assert printed[-1].startswith("sparktc: classify ")
    print(f"Reuters R(90): {len(test_documents)} test documents, {len(classified)} classified, "
          f"{len(empty)} without vocabulary terms, predictions equal for all {len(classified)}")


def test_a_bundle_counting_titles_apart_is_refused() -> None:
    # Refused before Spark is used: classify's readers give no title, so the title terms would be missing unseen.
    bundle = SimpleNamespace(path="m", scheme="ltc", features=TermFeatures(title_terms=True))
    with pytest.raises(ClassifyError, match="counts titles apart .* the jsonl documents classify reads have no title"):
        vectors(None, bundle, "in", "jsonl")


def test_the_summary_shows_the_first_documents_with_their_scored_categories_then_the_counts_by_category() -> None:
    first = [("d1", ["acq", "earn"], ["earn", "grain", "acq"], [1.234, 0.5, -0.2]),
             ("d10-long", [], ["ship", "earn", "acq"], [-0.31, -0.5, -0.9]),
             ("d2", ["grain", "wheat", "acq"], ["earn", "acq", "grain"], [0.1, 0.0, -0.1])]  # wheat below the 3 best
    counts = {"earn": 40, "acq": 12, "grain": 12, "wheat": 3, None: 7}
    assert summary_text(62, first, counts, 3, shown_categories=2).splitlines() == [
        "sparktc: 62 documents classified; the first 3 by doc id, with the categories assigned (and their scores "
        "when among the 3 best):",
        "  doc_id    categories",
        "  d1        earn 1.23, acq -0.20",
        "  d10-long  (none; best: ship -0.31)",
        "  d2        acq 0.00, grain -0.10, wheat",
        "sparktc: documents by category (4 categories, 67 assignments; 7 documents assigned none):",
        "  category  documents",
        "  earn             40",
        "  acq              12",  # ties by code
        "  ... 2 more categories, 15 assignments",
    ]
    assert summary_text(1, first[:1], {"earn": 1, "acq": 1}, 3).splitlines()[-3:] == [
        "  category  documents", "  acq               1", "  earn              1"]
