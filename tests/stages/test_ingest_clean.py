"""A clean LYRL2004 or JSON Lines corpus takes ingest's short path (its counts from the parsing tasks, its
documents the staged files renamed); its outputs and report must be exactly those of the general path.
"""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pytest
from chispa import assert_df_equality
from conftest import lyrl2004_corpus, shared_data
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparktc.corpora import line_ranges
from sparktc.corpora.label_index import id_hashes
from sparktc.experiment.config import load_config
from sparktc.runtime.runner import Tables
from sparktc.stages import ingest as ingest_stage
from sparktc.stages.ingest import assemblies, outputs, parsing, qrels

HIERARCHY = shared_data("rcv1", "rcv1.topics.hier.orig")


def test_a_clean_corpus_shown_free_of_repeated_ids_without_a_spark_job_writes_what_the_general_path_writes(
        spark, small_corpus, tmp_path, monkeypatch):
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={small_corpus}", "tokenize.stemmer=none"])
    taken = []
    real_write_clean = outputs._write_clean
    monkeypatch.setattr(outputs, "_write_clean", lambda *args: taken.append(1) or real_write_clean(*args))
    # Every document has labels and the labelled ids have the qrels' id digest: no grouping of the ids.
    with pytest.MonkeyPatch.context() as no_grouping:
        no_grouping.setattr(DataFrame, "groupBy", lambda *args: pytest.fail("the ids were grouped"))
        short = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "short")))
    assert taken == [1] and short.rows_out == short.rows_in and not short.set_aside
    monkeypatch.setattr(qrels, "_clean", lambda *args: None)
    general = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "general")))
    assert taken == [1]

    assert (short.rows_in, short.rows_out, short.set_aside) == (general.rows_in, general.rows_out, general.set_aside)
    assert list(short.details.items()) == list(general.details.items())
    for table, key in (("documents", "doc_id"), ("categories", "category"), ("rejects", "doc_id")):
        assert_df_equality(spark.read.parquet(str(tmp_path / "short" / table)).orderBy(key),
                           spark.read.parquet(str(tmp_path / "general" / table)).orderBy(key), ignore_nullable=True)


def test_a_repeated_id_balanced_by_a_missing_one_takes_the_general_path(spark, tmp_path):
    # Document 2286 twice and 2287 never: as many labelled documents as qrels documents, but not the same ones.
    corpus = lyrl2004_corpus(tmp_path / "corpus")
    train = corpus / "lyrl2004_tokens_train.dat"
    train.write_text(train.read_text().replace(".I 2287\n", ".I 2286\n", 1))
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", f"corpus.hierarchy={HIERARCHY}",
                                "corpus.test_parts=[0]", "corpus.on_error=reject"])
    report = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "staged")))
    rejects = spark.read.parquet(str(tmp_path / "staged" / "rejects")).toPandas()
    assert "2286" in set(rejects["doc_id"]) and report.set_aside.get("rejected")
    assert any(reason.startswith("duplicate") for reason in rejects["reason"])


def ingested_whole_and_in_ranges(spark, tmp_path, monkeypatch, corpus, settings):
    """Ingest ``corpus`` (LYRL2004) twice: its plain token file whole, then in byte ranges of about 40 bytes (the
    files' share of a task set that small); the two reports and each run's number of parsing tasks for the tokens
    (one part file each in ``documents`` on the short path).
    """
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", f"corpus.hierarchy={HIERARCHY}",
                                "corpus.test_parts=[0]", *settings])
    whole = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "whole")))
    monkeypatch.setattr(line_ranges, "RANGE_BYTES", 40)
    ranged = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "ranged")))
    return whole, ranged, [len(list((tmp_path / run / "documents").glob("part-*.parquet"))) for run in ("whole",
                                                                                                     "ranged")]


def assert_same_tables(spark, tmp_path, first, second, tables=("documents", "categories", "rejects")):
    keys = {"documents": ["doc_id"], "categories": ["category"], "rejects": ["source", "line"]}
    for table in tables:
        assert_df_equality(spark.read.parquet(str(tmp_path / first / table)).orderBy(*keys[table]),
                           spark.read.parquet(str(tmp_path / second / table)).orderBy(*keys[table]))


def test_a_plain_token_file_in_byte_ranges_gives_the_outputs_of_the_whole_file(spark, tmp_path, monkeypatch):
    corpus = lyrl2004_corpus(tmp_path / "corpus")
    assert (corpus / "lyrl2004_tokens_train.dat").stat().st_size > 500  # cut into a dozen ranges
    whole, ranged, parts = ingested_whole_and_in_ranges(spark, tmp_path, monkeypatch, corpus, [])
    assert parts[1] > parts[0] + 10  # the short path: a part file per task
    assert (whole.rows_in, whole.rows_out, whole.set_aside) == (ranged.rows_in, ranged.rows_out, ranged.set_aside)
    assert list(whole.details.items()) == list(ranged.details.items())
    assert_same_tables(spark, tmp_path, "whole", "ranged")


def test_gzipped_token_files_inflated_and_parsed_in_byte_ranges_give_the_outputs_of_the_plain_files(
        spark, tmp_path, monkeypatch):
    # Every token file gzipped and larger than a task's share: the first job inflates each, the second parses the
    # contents in ranges of about 40 bytes; the documents and report are those of the plain files read whole.
    plain = lyrl2004_corpus(tmp_path / "plain")
    packed = lyrl2004_corpus(tmp_path / "packed")
    train = packed / "lyrl2004_tokens_train.dat"
    (packed / "lyrl2004_tokens_train.dat.gz").write_bytes(gzip.compress(train.read_bytes()))
    train.unlink()
    test = packed / "lyrl2004_tokens_test_pt0.dat.gz"
    (plain / "lyrl2004_tokens_test_pt0.dat").write_bytes(gzip.decompress(test.read_bytes()))
    (plain / "lyrl2004_tokens_test_pt0.dat.gz").unlink()
    settings = [f"corpus.hierarchy={HIERARCHY}", "corpus.test_parts=[0]"]
    whole = ingest_stage.ingest(spark, load_config(None, ["corpus.format=lyrl2004", f"corpus.path={plain}",
                                                          *settings]), Tables(str(tmp_path), str(tmp_path / "whole")))
    monkeypatch.setattr(line_ranges, "RANGE_BYTES", 40)
    ranged = ingest_stage.ingest(spark, load_config(None, ["corpus.format=lyrl2004", f"corpus.path={packed}",
                                                           *settings]), Tables(str(tmp_path), str(tmp_path / "ranged")))
    assert len(list((tmp_path / "ranged" / "documents").glob("part-*.parquet"))) > 20  # a part per range's task
    assert (whole.rows_in, whole.rows_out, whole.set_aside) == (ranged.rows_in, ranged.rows_out, ranged.set_aside)
    assert [value for value in whole.details.values()] == [value for value in ranged.details.values()]
    assert_same_tables(spark, tmp_path, "whole", "ranged", ("categories",))
    documents = [spark.read.parquet(str(tmp_path / run / "documents")).orderBy("doc_id") for run in ("whole", "ranged")]
    assert_df_equality(documents[0].withColumn("source", F.replace("source", F.lit("/plain/"), F.lit("/packed/"))),
                       documents[1].withColumn("source", F.regexp_replace("source", r"\.gz$", "")))
    assert {row.source[-3:] for row in documents[1].collect()} == {".gz"}  # named by the files as given
    assert not list(tmp_path.glob("ranged/**/inflated"))  # the staged contents go with the staging


def test_rejects_and_a_repeated_id_in_byte_ranges_give_the_rejects_of_the_whole_file(spark, tmp_path, monkeypatch):
    # A record rejected near a range's end, blank lines, no final newline, and an id (2290) repeated far from its
    # first record: the whole file's reader rejects the repeat, ingest's duplicate check the ranges' one.
    corpus = lyrl2004_corpus(tmp_path / "corpus")
    train = corpus / "lyrl2004_tokens_train.dat"
    text = train.read_text().replace(".I 2288\n.W\n", ".I 2288\nearly\n.W\n").replace("\n\n", "\n\n\n\n")
    train.write_text(text.rstrip("\n") + "\n\n.I 2290\n.W\nrepeat")
    whole, ranged, _ = ingested_whole_and_in_ranges(spark, tmp_path, monkeypatch, corpus, ["corpus.on_error=reject"])
    assert (whole.rows_in, whole.rows_out, whole.set_aside) == (ranged.rows_in, ranged.rows_out, ranged.set_aside)
    assert whole.set_aside["rejected"] == 2 and list(whole.details.items()) == list(ranged.details.items())
    assert_same_tables(spark, tmp_path, "whole", "ranged", ("documents", "categories"))
    rejects = [spark.read.parquet(str(tmp_path / run / "rejects")).orderBy("line").collect() for run in ("whole",
                                                                                                       "ranged")]
    assert [row[:3] for row in rejects[0]] == [row[:3] for row in rejects[1]]
    assert [row.doc_id for row in rejects[0]] == ["2288", "2290"] and rejects[0][0].reason == rejects[1][0].reason
    assert rejects[0][1].reason.startswith("duplicate doc id 2290 (already read earlier in this file)")
    assert rejects[1][1].reason.startswith("duplicate doc id (first at ")


def jsonl_corpus(directory, repeat: str | None = None, label: str = "acq"):
    """Two JSON Lines files of clean documents; ``repeat`` gives the second file's last document that id."""
    directory.mkdir()
    lines = [[{"id": f"{part}-{n}", "text": f"Shares of company {n} rose in part {part}.",
               "labels": [label, "earn"][: 1 + n % 2] if n % 3 else [], "split": "train" if n % 4 else "test"}
              for n in range(6)] for part in ("a", "b")]
    if repeat:
        lines[1][-1]["id"] = repeat
    for part, records in zip(("a", "b"), lines):
        (directory / f"{part}.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    return directory


def ingested_both_ways(spark, tmp_path, monkeypatch, settings):
    """Ingest twice, by the short path and (``_clean_lines`` refusing) by the general one; whether each took the
    short path, and the two reports.
    """
    taken = []
    real_write_clean = outputs._write_clean
    monkeypatch.setattr(outputs, "_write_clean", lambda *args: taken.append(1) or real_write_clean(*args))
    config = load_config(None, settings)
    short = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "short")))
    monkeypatch.setattr(assemblies, "_clean_lines", lambda *args: None)
    general = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "general")))
    return taken, short, general


def assert_same_outputs(spark, tmp_path, short, general):
    assert (short.rows_in, short.rows_out, short.set_aside) == (general.rows_in, general.rows_out, general.set_aside)
    assert list(short.details.items()) == list(general.details.items())
    for table, key in (("documents", "doc_id"), ("categories", "category"), ("rejects", "doc_id")):
        assert_df_equality(spark.read.parquet(str(tmp_path / "short" / table)).orderBy(key),
                           spark.read.parquet(str(tmp_path / "general" / table)).orderBy(key),
                           ignore_nullable=table != "categories")  # both written by Spark: the same nullability


@pytest.mark.parametrize("categories", [[], ["acq", "earn", "grain"]], ids=["labels-seen", "categories-given"])
def test_a_clean_jsonl_corpus_takes_the_short_path_and_writes_what_the_general_path_writes(
        spark, tmp_path, monkeypatch, categories):
    corpus = jsonl_corpus(tmp_path / "corpus")
    taken, short, general = ingested_both_ways(spark, tmp_path, monkeypatch, [
        "corpus.format=jsonl", f"corpus.path={corpus}", f"corpus.categories={json.dumps(categories)}"])
    assert taken == [1] and short.rows_out == short.rows_in == 12
    assert_same_outputs(spark, tmp_path, short, general)


def test_a_clean_libsvm_corpus_in_byte_ranges_takes_the_short_path_and_writes_what_the_general_path_writes(
        spark, tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, lines in (("train.svm", ["acq 1:0.5 3:1", "acq,earn 2:0.25", " 4:1", "earn 1:1 4:2"] * 3),
                        ("test.svm", ["earn 3:0.5", "acq 1:1 2:1"])):
        (corpus / name).write_text("".join(line + "\n" for line in lines))
    monkeypatch.setattr(line_ranges, "RANGE_BYTES", 40)  # train.svm in 4 ranges: 5 tasks, 5 buckets of ids
    taken, short, general = ingested_both_ways(spark, tmp_path, monkeypatch, [
        "corpus.format=libsvm", f"corpus.path={corpus}", "weight.scheme=given"])
    assert taken == [1] and short.rows_out == short.rows_in == 14 and short.details["tokens"]["tokens"] == 21
    assert_same_outputs(spark, tmp_path, short, general)


@pytest.mark.parametrize("case", ["repeated id", "label outside the categories", "hash shared by two ids"])
def test_a_jsonl_corpus_that_is_not_clean_takes_the_general_path(spark, tmp_path, monkeypatch, case):
    corpus = jsonl_corpus(tmp_path / "corpus", repeat="a-1" if case == "repeated id" else None)
    settings = [f"corpus.path={corpus}", "corpus.on_error=reject"]
    if case == "label outside the categories":
        settings.append('corpus.categories=["earn"]')
    if case == "hash shared by two ids":  # as if two distinct ids had one hash: not shown distinct, so no short path
        monkeypatch.setattr(assemblies, "ids_distinct", lambda *args: False)
    taken = []
    monkeypatch.setattr(outputs, "_write_clean", lambda *args: taken.append(1))
    report = ingest_stage.ingest(spark, load_config(None, ["corpus.format=jsonl", *settings]),
                                 Tables(str(tmp_path), str(tmp_path / "out")))
    assert taken == []
    rejected = {"repeated id": 1, "label outside the categories": 8, "hash shared by two ids": 0}[case]
    assert report.set_aside.get("rejected", 0) == rejected and report.rows_in == 12


def test_ids_distinct_finds_a_hash_written_twice_in_any_bucket(spark, tmp_path):
    ids = pa.array([f"d{n}" for n in range(40)])
    directory = str(tmp_path / "ids")
    parsing.write_id_hashes([id_hashes(ids[:25])], directory, 0, 3)
    parsing.write_id_hashes([id_hashes(ids[25:])], directory, 1, 3)
    assert parsing.ids_distinct(spark, directory, 3)
    parsing.write_id_hashes([id_hashes(ids[:1])], directory, 2, 3)  # d0 again, from a third file
    assert not parsing.ids_distinct(spark, directory, 3)
