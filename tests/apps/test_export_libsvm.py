"""A run's weighted vectors exported as multi-label LIBSVM files (sparktc.apps.export, jobs/export_libsvm.py):
scikit-learn's reader finds the run's vectors and labels in them, sparktc's own LIBSVM ingest reads the same
vectors back, the lines follow the format to the letter, and the export writes only into a directory it creates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import REPO
from scipy import sparse
from sklearn.datasets import load_svmlight_file

from sparktc.apps import export
from sparktc.apps.export import EMPTY, ExportError, check_export, export_libsvm, libsvm_labels, libsvm_lines
from sparktc.apps.pipeline import run as run_stages
from sparktc.corpora.libsvm import parse_libsvm
from sparktc.corpora.records import Document
from sparktc.errors import InputError
from sparktc.experiment.config import load_config
from sparktc.runtime.outputs import claim


@pytest.fixture(scope="module")
def weighted(spark, small_corpus, tmp_path_factory) -> Path:
    """Run ingest -> tokenize -> weight (ltc, conf/rcv1.toml) on the 1,200-document synthetic LYRL2004 corpus."""
    output = tmp_path_factory.mktemp("export") / "run"
    config = load_config(str(REPO / "conf" / "rcv1.toml"), [f"corpus.path={small_corpus}"])
    run_stages(spark, config, str(output), "ingest", "tokenize", "weight")
    return output


@pytest.fixture(scope="module")
def exported(spark, weighted, tmp_path_factory) -> tuple[Path, dict]:
    """The run exported (holding its lock, as the job does): the directory and the summary returned."""
    directory = tmp_path_factory.mktemp("exported") / "libsvm"
    with claim(str(weighted), "run"):
        summary = export_libsvm(spark, str(weighted), str(directory))
    return directory, summary


def vectors(run: Path, split: str) -> pd.DataFrame:
    return pd.read_parquet(run / "vectors" / f"split={split}", columns=["doc_id", "labels", "indices", "values"])


def as_matrix(rows: pd.DataFrame, n_features: int) -> sparse.csr_matrix:
    """The vectors as a documents x features float32 matrix, 1-based feature j in column j - 1."""
    lengths = rows["indices"].map(len).to_numpy()
    return sparse.csr_matrix((np.concatenate([*rows["values"], np.zeros(0, np.float32)]).astype(np.float32),
                              np.concatenate([*rows["indices"], np.zeros(0, np.int32)]),
                              np.concatenate([[0], np.cumsum(lengths)])), shape=(len(rows), n_features))


def test_scikit_learn_reads_the_runs_vectors_and_labels(weighted, exported):
    directory, summary = exported
    n_features = len(pd.read_parquet(weighted / "vocabulary"))
    category_of = json.loads((directory / "export.json").read_text())["labels"]
    assert category_of == summary["labels"] and len(category_of) == 103  # the generated RCV1-shaped tree
    assert sorted(category_of.values()) == list(category_of.values())  # names are not numbers: positions
    for split in ("train", "test"):
        X, y = load_svmlight_file(str(directory / f"{split}.svm"), n_features=n_features, multilabel=True,
                                  zero_based=False)
        rows = vectors(weighted, split).set_index("doc_id")
        ids = (directory / f"{split}.ids").read_text().splitlines()
        assert len(ids) == X.shape[0] == summary["files"][f"{split}.svm"]["lines"] == len(rows)  # none empty
        rows = rows.loc[ids]
        expected = as_matrix(rows, n_features)
        assert (X.astype(np.float32) != expected).nnz == 0  # float32 values exact, indices term_id + 1
        assert [{category_of[str(int(label))] for label in labels} for labels in y] == [set(v) for v in rows["labels"]]
    assert summary["files"]["train.svm"]["set_aside"] == {EMPTY: 0}


def test_sparktc_reads_the_same_vectors_back(spark, weighted, exported, tmp_path):
    directory, summary = exported
    again = tmp_path / "again"
    config = load_config(str(REPO / "conf" / "libsvm.toml"), [f"corpus.path={directory}"])
    run_stages(spark, config, str(again), "ingest", "tokenize", "weight")
    vocabulary = pd.read_parquet(again / "vocabulary").sort_values("term_id")
    original = pd.read_parquet(weighted / "vocabulary")
    # The training features are 1 .. V again, in the same order: the term ids are the run's.
    assert vocabulary["term"].astype(int).tolist() == list(range(1, len(original) + 1))
    for split in ("train", "test"):
        ids = (directory / f"{split}.ids").read_text().splitlines()
        back = vectors(again, split)
        back = back.assign(line=back["doc_id"].str.rsplit(":", n=1).str[1].astype(int)).sort_values("line")
        assert back["line"].tolist() == list(range(1, len(ids) + 1))
        rows = vectors(weighted, split).set_index("doc_id").loc[ids]
        assert [list(v) for v in back["indices"]] == [list(v) for v in rows["indices"]]
        assert all(np.array_equal(a, b) for a, b in zip(back["values"], rows["values"]))  # bit for bit
        names = [sorted(summary["labels"][label] for label in labels) for labels in back["labels"]]
        assert names == [sorted(labels) for labels in rows["labels"]]


def test_the_same_run_exports_to_the_same_bytes(spark, weighted, exported, tmp_path):
    directory, _ = exported
    second = tmp_path / "second"
    with claim(str(weighted), "run"):
        export_libsvm(spark, str(weighted), str(second))
    for name in ("train.svm", "test.svm", "train.ids", "test.ids"):
        assert (second / name).read_bytes() == (directory / name).read_bytes(), name
    assert sorted(path.name for path in second.iterdir()) == ["export.json", "test.ids", "test.svm", "train.ids",
                                                            "train.svm"]  # no parts or hidden files left


def batch(labels: list[list[str] | None], indices: list[list[int]], values: list[list[float]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"doc_id": [f"d{i}" for i in range(len(labels))], "labels": pa.array(labels, pa.list_(pa.string())),
         "indices": pa.array(indices, pa.list_(pa.int32())), "values": pa.array(values, pa.list_(pa.float32()))})


def test_lines_follow_the_format_and_read_back_alike(tmp_path):
    rows = batch([["b", "a"], [], ["c"], None, []],
                 [[0, 4, 9], [2], [], [0], []],
                 [[0.1, 2.5e-8, 3.0], [0.5], [], [1.0], []])
    lines, kept = libsvm_lines(rows, pa.array(["a", "b", "c"]), pa.array(["0", "1", "2"]))
    assert lines.to_pylist() == ["1,0 1:0.1 5:2.5e-8 10:3", " 3:0.5", "2", " 1:1"]
    assert kept.to_pylist() == [True, True, True, True, False]  # neither labels nor features: no line
    (tmp_path / "train.svm").write_text("\n".join(lines.to_pylist()) + "\n")
    X, y = load_svmlight_file(str(tmp_path / "train.svm"), n_features=10, multilabel=True, zero_based=False)
    assert y == [(0.0, 1.0), (), (2.0,), ()]
    assert X.toarray()[0, [0, 4, 9]].astype(np.float32).tolist() == np.float32([0.1, 2.5e-8, 3.0]).tolist()
    read = list(parse_libsvm((tmp_path / "train.svm").read_bytes().splitlines(keepends=True), "train.svm"))
    assert all(isinstance(record, Document) for record in read)
    assert [record.labels for record in read] == [("1", "0"), (), ("2",), ()]
    assert [record.tokens for record in read] == [("1:0.1", "5:2.5e-08", "10:3.0"), ("3:0.5",), (), ("1:1.0",)]


def test_a_weight_of_zero_is_left_out_of_the_line():
    rows = batch([["a"], [], ["b"], []], [[0, 3, 5], [1, 2], [4], [6, 7]], [[0.0, 0.5, -0.0], [0.0, 0.0], [0.0],
                                                                          [0.25, 0.0]])
    lines, kept = libsvm_lines(rows, pa.array(["a", "b"]), pa.array(["0", "1"]))
    assert lines.to_pylist() == ["0 4:0.5", "1", " 7:0.25"]
    assert kept.to_pylist() == [True, False, True, True]  # zero weights only and no label: no line


def test_a_label_outside_the_categories_is_a_bug():
    with pytest.raises(ValueError, match="label z is not in the run's categories"):
        libsvm_lines(batch([["z"]], [[0]], [[1.0]]), pa.array(["a"]), pa.array(["0"]))


@pytest.mark.parametrize("names, labels", [
    (["0", "10", "2"], ["0", "10", "2"]),  # a LIBSVM corpus's labels are kept
    (["CCAT", "ECAT"], ["0", "1"]),
    (["007", "7"], ["0", "1"]),  # LibMultiLabel would read both as 7
    (["+1", "2"], ["0", "1"]),
])
def test_labels_are_numbers(names, labels):
    assert libsvm_labels(names) == labels


def test_the_output_must_be_new_and_apart_from_the_run(weighted, tmp_path):
    (tmp_path / "empty").mkdir()
    for output, message in [(tmp_path / "empty", "already exists"), (weighted / "libsvm", "overlap"),
                            (weighted.parent, "overlap")]:
        with pytest.raises(ExportError, match=message):
            check_export(str(weighted), str(output))
    assert check_export(str(weighted), str(tmp_path / "new")) == (str(weighted), str(tmp_path / "new"))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("a user's file")
    with pytest.raises(ExportError, match="not a sparktc run directory"):
        check_export(str(tmp_path / "mine"), str(tmp_path / "out"))


def test_a_damaged_run_is_refused_and_a_failed_export_leaves_nothing(spark, weighted, tmp_path, monkeypatch):
    with pytest.raises(InputError, match="no manifests/rank.json"):
        export.intact_manifest(spark, str(weighted), "rank")
    calls = []

    def failing(*arguments, **options):
        calls.append(1)
        if len(calls) == 2:  # the parts are written; the concatenation fails
            raise OSError("No space left on device")
        return real(*arguments, **options)

    real = export.map_parts
    monkeypatch.setattr(export, "map_parts", failing)
    with pytest.raises(OSError, match="No space left"):
        export_libsvm(spark, str(weighted), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_run_held_by_a_running_pipeline_is_told_as_the_input_in_use(tmp_path):
    """The export holds RUN to read it: while a pipeline holds RUN, the refusal names RUN as the input in use,
    never as the export's --output (which is another, free directory). Refused before Spark starts.
    """
    run = tmp_path / "run"
    (run / "manifests").mkdir(parents=True)
    (run / ".sparktc").write_text(json.dumps({"kind": "run"}))
    (run / "manifests" / "weight.json").write_text("{}")
    with claim(str(run), "run") as held:  # as jobs/pipeline.py holds its --output while it runs
        jobs = []
        for _ in range(2):  # its weight stage finished, then being recomputed (--force removes the manifests first)
            jobs.append(subprocess.run(
                [sys.executable, "jobs/export_libsvm.py", str(run), "--output", str(tmp_path / "out")], cwd=REPO,
                capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120))
            (run / "manifests" / "weight.json").unlink(missing_ok=True)
    holder = held.holder
    for job in jobs:
        assert job.returncode == 75
        assert job.stderr == (
            f"sparktc: error: RUN {run} (an input of this job) is in use by run {holder.run_id} (host {holder.host}, "
            f"process {holder.pid}, started {holder.started}: {holder.command}), which may be writing it; wait for "
            "that job to finish, then run this command again\n")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ExportError, match="has no weighted vectors yet"):  # once the run is over, what is there
        check_export(str(run), str(tmp_path / "out"))


def test_a_run_whose_vectors_hold_zero_weights_exports_its_nonzero_features_only(spark, tmp_path):
    """The ltc weighting gives a term in every training document idf ln(N / N) = 0, so its weight is stored as 0
    in every vector that has it: the LIBSVM files leave it out (they list nonzero features) and still read back as
    the same matrix.
    """
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(40)]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for split, count in (("train", 40), ("test", 12)):
        lines = [{"id": f"{split}{i}", "text": " ".join(["everywhere", *rng.choice(words, size=6)]),
                  "labels": sorted({str(label) for label in rng.choice(["a", "b", "c"], size=2)}), "split": split}
                 for i in range(count)]
        lines[0] = {"id": f"{split}-only", "text": "everywhere", "labels": [] if split == "train" else ["a"],
                    "split": split}  # zero weights only: no line in train.svm, the label alone in test.svm
        (corpus / f"{split}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    run, directory = tmp_path / "run", tmp_path / "libsvm"
    config = load_config(None, ["corpus.format=jsonl", f"corpus.path={corpus}", "tokenize.stemmer=none"])
    run_stages(spark, config, str(run), "ingest", "tokenize", "weight")
    with claim(str(run), "run"):
        summary = export_libsvm(spark, str(run), str(directory))
    n_features = len(pd.read_parquet(run / "vocabulary"))
    for split in ("train", "test"):
        rows = vectors(run, split).set_index("doc_id")
        assert (np.concatenate(rows["values"].to_list()) == 0).sum() >= len(rows)  # the run does store zeros
        fields = [field for line in (directory / f"{split}.svm").read_text().splitlines()
                  for field in line.split(" ")[1:]]
        assert fields and all(float(field.split(":")[1]) != 0 for field in fields)
        ids = (directory / f"{split}.ids").read_text().splitlines()
        X, _ = load_svmlight_file(str(directory / f"{split}.svm"), n_features=n_features, multilabel=True,
                                  zero_based=False)
        assert (X.astype(np.float32) != as_matrix(rows.loc[ids], n_features)).nnz == 0
        assert X.nnz == sum(int((np.asarray(values) != 0).sum()) for values in rows.loc[ids, "values"])
    assert "train-only" not in (directory / "train.ids").read_text().splitlines()
    assert summary["files"]["train.svm"]["set_aside"] == {EMPTY: 1}
    assert (directory / "test.svm").read_text().splitlines()[(directory / "test.ids").read_text().splitlines()
                                                            .index("test-only")] == "0"
