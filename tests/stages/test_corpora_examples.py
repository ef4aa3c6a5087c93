"""docs/corpora.md's commands as they stand, each run as its job runs it (the job's own argument parsing, then its
work on this session), on small corpora: Reuters-21578 cut to two of its files (one of training stories, one of
test stories) for the R(115) commands and the export of their run, a small JSON Lines corpus written here for the
JSON Lines commands, and the synthesize command. Only paths are substituted (the corpus, the outputs); the
synthesized corpus keeps the command's settings.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import invented_words, job_arguments, prepared_job, run_prepared, shared_data, substituted
from docs_examples import example

#: Two files of Reuters-21578: ModApte training stories (NEWID 1-1000) and test stories (NEWID 20001-21000).
REUTERS_FILES = ("reut2-000.sgm.gz", "reut2-020.sgm.gz")


@pytest.fixture(scope="module")
def small_reuters(tmp_path_factory) -> Path:
    """Reuters-21578 cut to :data:`REUTERS_FILES`, with the category descriptions, as links into ../shared/data."""
    corpus = tmp_path_factory.mktemp("reuters-cut")
    for name in (*REUTERS_FILES, "cat-descriptions_120396.txt"):
        (corpus / name).symlink_to(shared_data("reuters21578", name))
    return corpus


def run_block(spark, code: str, paths: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """A block (its code) run as its job runs it, ``paths`` substituted; its output directory."""
    job, arguments = job_arguments(code)
    prepared = prepared_job(job, substituted(arguments, paths), monkeypatch)
    run_prepared(spark, prepared)
    return prepared.output


def metrics_of(output: str) -> dict:
    return json.loads(Path(output, "metrics.json").read_text())


@pytest.fixture(scope="module")
def r115(spark, small_reuters: Path, tmp_path_factory) -> str:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return run_block(spark, example("reuters21578-r115"), {"../shared/data/reuters21578": str(small_reuters),
                                                      "runs/r115": str(tmp_path_factory.mktemp("r115") / "run")},
                         monkeypatch)


def test_r115_with_10000_terms(r115: str):
    metrics = metrics_of(r115)
    settings = metrics["settings"]
    assert (settings["corpus"]["category_set"], settings["corpus"]["document_filter"]) == ("R115", "none")
    assert settings["select"]["top_k"] == 10_000
    assert 0.5 < metrics["micro_f1"] <= 1


def test_one_of_debole_and_sebastianis_setups(spark, small_reuters: Path, tmp_path: Path, monkeypatch):
    output = run_block(spark, example("reuters21578-r115-ig"), {"../shared/data/reuters21578": str(small_reuters),
                                                        "runs/r115-ig": str(tmp_path / "run")}, monkeypatch)
    metrics = metrics_of(output)
    assert metrics["method"]["name"] == "rocchio" and metrics["thresholding"]["name"] == "proportional"
    settings = metrics["settings"]
    assert (settings["rank"]["score"], settings["select"]["reduction_factor"], settings["weight"]["scheme"]) == (
        "ig", 0.9, "supervised")
    assert 0.3 < metrics["micro_f1"] <= 1


def test_export_the_r115_run(spark, r115: str, tmp_path: Path, monkeypatch):
    exported = tmp_path / "libsvm"
    run_block(spark, example("export-libsvm"), {"runs/r115": r115, "runs/r115-libsvm": str(exported)}, monkeypatch)
    vectors = pq.read_table(Path(r115, "vectors"), columns=["split"]).to_pandas()["split"].value_counts()
    for split in ("train", "test"):
        lines = (exported / f"{split}.svm").read_text().splitlines()
        assert len(lines) == len((exported / f"{split}.ids").read_text().splitlines()) == vectors[split]


def test_synthesize_a_corpus(spark, tmp_path: Path, monkeypatch):
    output = Path(run_block(spark, example("synthesize-corpus"), {"data/synthetic-10k": str(tmp_path / "corpus")},
                            monkeypatch))
    manifest = json.loads((output / "manifests" / "synthesize.json").read_text())
    assert manifest["rows_out"] == 10_000
    assert {"lyrl2004_tokens_train.dat.gz", "rcv1-v2.topics.qrels.gz", "rcv1-v2.industries.qrels.gz",
            "rcv1-v2.regions.qrels.gz", "rcv1.topics.hier.orig", "rcv1.industries.hier", "rcv1.regions.txt"} <= {
        path.name for path in output.iterdir()}


@pytest.fixture(scope="module")
def my_corpus(tmp_path_factory) -> Path:
    """A small labelled corpus in JSON Lines: 240 documents of three topics, a word list of its own each, 160 of
    them for training.
    """
    rng = np.random.default_rng(3)
    words = invented_words(rng, 300)
    topics = {"grain": words[:60], "crude": words[60:120], "earn": words[120:180]}
    common = words[180:]
    corpus = tmp_path_factory.mktemp("my-corpus")
    with (corpus / "part-0.jsonl").open("w") as lines:
        for i in range(240):
            labels = sorted(rng.choice(list(topics), size=rng.integers(1, 3), replace=False))
            text = " ".join([*(rng.choice(topics[label]) for label in labels for _ in range(12)),
                             *rng.choice(common, size=20)])
            lines.write(json.dumps({"id": f"d{i}", "text": text, "labels": labels,
                                    "split": "train" if i < 160 else "test"}) + "\n")
    return corpus


@pytest.mark.parametrize(("name", "scheme"), [("jsonl-corpus", "ltc"), ("jsonl-corpus-sklearn", "sklearn")])
def test_any_labelled_corpus_as_json_lines(spark, my_corpus: Path, tmp_path: Path, monkeypatch, name, scheme):
    code = {"jsonl-corpus": example("jsonl-corpus"), "jsonl-corpus-sklearn": example("jsonl-corpus-sklearn")}[name]
    output = run_block(spark, code, {"/data/my-corpus": str(my_corpus), "runs/mine": str(tmp_path / "run"),
                                     "runs/mine-sklearn": str(tmp_path / "run")}, monkeypatch)
    metrics = metrics_of(output)
    assert metrics["settings"]["weight"]["scheme"] == scheme and metrics["test_documents"] == 80
    assert metrics["micro_f1"] > 0.9
