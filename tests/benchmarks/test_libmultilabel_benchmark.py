"""The LibMultiLabel benchmark's pure parts (benchmarks/libmultilabel.py): arguments and refusals, the commands
it runs, the figures it reads, the comparison of decisions, and the table. No Spark, no network, no LibMultiLabel.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO

from benchmarks import libmultilabel as bench
from benchmarks.rcv1_scale import HarnessError
from sparktc.experiment.config import load_config


def corpus(directory: Path, *names: str) -> Path:
    directory.mkdir()
    for name in names:
        (directory / name).write_text("")
    return directory


# --- arguments ---------------------------------------------------------------------------------

def test_the_default_is_a_small_synthetic_corpus_and_every_method(tmp_path):
    arguments = bench.parse_arguments(["--output", str(tmp_path / "out"), "--venv", str(tmp_path / "venv")])
    assert arguments.documents == bench.DEFAULT_DOCUMENTS and arguments.corpus is None
    assert arguments.methods == ["1vsrest", "thresholding", "cost_sensitive", "cost_sensitive_micro"]


def test_a_corpus_needs_plain_files_and_says_how_to_get_them(tmp_path, capsys):
    given = corpus(tmp_path / "c", "train.svm.bz2", "test.svm.bz2")
    with pytest.raises(SystemExit) as exit_:
        bench.parse_arguments(["--corpus", str(given), "--output", str(tmp_path / "out")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "has no train.svm or test.svm" in error and "bunzip2 -k" in error
    plain = corpus(tmp_path / "plain", "train.svm", "test.svm")
    assert bench.parse_arguments(["--corpus", str(plain), "--output", str(tmp_path / "o")]).documents is None


def test_corpus_and_documents_exclude_each_other(tmp_path):
    with pytest.raises(SystemExit):
        bench.parse_arguments(["--corpus", str(tmp_path), "--documents", "1000", "--output", str(tmp_path / "o")])


def test_the_projects_own_environment_is_refused_for_libmultilabel(tmp_path, capsys):
    for venv in (REPO / ".venv", Path(sys.prefix)):
        with pytest.raises(SystemExit):
            bench.parse_arguments(["--output", str(tmp_path / "out"), "--venv", str(venv)])
        assert "overwrite its liblinear-official" in capsys.readouterr().err


def test_an_output_of_someone_else_is_refused(tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.txt").write_text("mine")
    assert "was not written by benchmarks/libmultilabel.py" in bench.output_refusal(tmp_path / "theirs")
    (tmp_path / "ours").mkdir()
    (tmp_path / "ours" / bench.MARKER).write_text(json.dumps({"written_by": bench.WRITER}))
    (tmp_path / "ours" / "libmultilabel.md").write_text("earlier")
    assert bench.output_refusal(tmp_path / "ours") is None
    assert bench.output_refusal(tmp_path / "new") is None


@pytest.mark.parametrize("text", ["1vsrest,1vsrest", "tree", ""])
def test_bad_methods_are_refused(text):
    with pytest.raises(Exception, match="expected distinct methods"):
        bench.selected_methods(text)


# --- methods and commands ----------------------------------------------------------------------

def test_every_counterpart_is_valid_sparktc_settings_and_says_whether_it_is_the_same_algorithm(tmp_path):
    def config_of(method: bench.Method):
        return load_config(str(REPO / "conf" / "libsvm.toml"), [f"corpus.path={tmp_path}", *method.overrides])

    for method in bench.METHODS.values():
        config = config_of(method)
        assert (config.train.C, config.train.bias, config.train.epsilon) == (1.0, 1.0, 0.0001)
        assert config.evaluate.zero_division == 0.0
    assert [m.same_algorithm for m in bench.METHODS.values()] == [True, True, True, True]
    assert [m.takes_folds for m in bench.METHODS.values()] == [False, True, True, True]
    tuned = config_of(bench.METHODS["cost_sensitive"])
    assert tuned.tune.positive_weight == [1, 1.33, 1.8, 2.5, 3.67, 6, 13]  # LibMultiLabel's param_space
    assert tuned.train.folds == 3 and tuned.train.threshold == 0.0 and tuned.train.one_class == "liblinear"
    shared = config_of(bench.METHODS["cost_sensitive_micro"])
    assert shared.tune.shared_positive_weight and shared.tune.positive_weight == tuned.tune.positive_weight
    assert config_of(bench.METHODS["thresholding"]).train.thresholding == "micromacro"


def test_the_commands_are_the_normal_ones(tmp_path):
    method = bench.METHODS["thresholding"]
    ours = bench.sparktc_command(tmp_path / "c", tmp_path / "run", method, tmp_path / "folds.tsv")
    assert ours[:4] == ["./spark-submit.sh", "jobs/pipeline.py", "--config", "conf/libsvm.toml"]
    assert "train.thresholding=micromacro" in ours and ours[-2:] == ["--output", str(tmp_path / "run")]
    assert f"train.fold_file={tmp_path / 'folds.tsv'}" in ours
    theirs = bench.peer_command(tmp_path / "venv", tmp_path / "c", tmp_path / "r.json", tmp_path / "d.npz", method,
                                tmp_path / "folds.tsv")
    assert theirs[:3] == [str(tmp_path / "venv" / "bin" / "python"), "-I", bench.PEER]  # -I: no benchmarks/ on path
    assert theirs[theirs.index("--options") + 1] == "-s 1 -c 1 -B 1 -e 0.0001"
    assert theirs[theirs.index("--method") + 1] == "thresholding"
    assert theirs[theirs.index("--folds") + 1] == str(tmp_path / "folds.tsv")


def test_a_peer_record_of_the_same_command_is_reused(tmp_path):
    method, corpus_dir = bench.METHODS["thresholding"], tmp_path / "c"
    record, decisions, folds = tmp_path / "r.json", tmp_path / "d.npz", tmp_path / "f.tsv"
    same = {"train": str(corpus_dir / "train.svm"), "test": str(corpus_dir / "test.svm"), "method": "thresholding",
            "options": bench.OPTIONS, "seed": bench.PEER_SEED}
    record.write_text(json.dumps(same))
    decisions.write_text("")
    assert bench.reusable_peer(record, [decisions, folds], corpus_dir, method) is None  # no folds yet
    folds.write_text("")
    assert bench.reusable_peer(record, [decisions, folds], corpus_dir, method) == same
    record.write_text(json.dumps({**same, "seed": 1}))
    assert bench.reusable_peer(record, [decisions, folds], corpus_dir, method) is None


def fake_python(venv: Path, versions: dict) -> None:
    """A stand-in interpreter that answers the version query with ``versions``."""
    (venv / "bin").mkdir(parents=True)
    script = venv / "bin" / "python"
    script.write_text(f"#!/bin/sh\necho '{json.dumps(versions)}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_an_existing_environment_must_hold_the_pinned_versions(tmp_path):
    pinned = {"python": "3.11.7", "libmultilabel": "0.10.0", "liblinear-multicore": "2.50.0", "scipy": "1.13.1",
              "numpy": "2.2.6"}
    fake_python(tmp_path / "good", pinned)
    record = bench.ensure_venv(tmp_path / "good", tmp_path / "venv.log")
    assert record["created"] is False and record["versions"] == pinned
    fake_python(tmp_path / "bad", pinned | {"scipy": "1.17.1"})
    with pytest.raises(HarnessError, match="give another --venv"):
        bench.ensure_venv(tmp_path / "bad", tmp_path / "venv.log")


# --- figures and decisions ---------------------------------------------------------------------

def test_figures_are_read_from_each_tools_own_output():
    metrics = {"micro_f1": 0.8, "macro_f1": 0.5, "n_categories": 101, "zero_division": 0.0,
               "ranking": {"P@1": 0.9, "P@3": 0.7, "P@5": 0.5, "R@1": 0.3}}
    assert bench.sparktc_figures(metrics) == {"micro_f1": 0.8, "macro_f1": 0.5, "P@1": 0.9, "P@3": 0.7, "P@5": 0.5,
                                              "labels": 101, "zero_division": 0.0, "cv_micro_f1": None}
    assert bench.sparktc_figures({**metrics, "cv_micro_f1": 0.7})["cv_micro_f1"] == 0.7
    record = {"metrics": {"Micro-F1": 0.8, "Macro-F1": 0.5, "P@1": 0.9, "P@3": 0.7, "P@5": 0.5}, "labels": 101}
    assert bench.peer_figures(record) == bench.sparktc_figures(metrics)


def test_sparktcs_decisions_are_rows_of_test_svm_and_integer_labels(tmp_path):
    table = pa.table({"doc_id": ["test.svm:1", "test.svm:3", "test.svm:2"],
                      "predicted": pa.array([["5", "17"], [], None], pa.list_(pa.string()))})
    (tmp_path / "predictions").mkdir()
    pq.write_table(table, tmp_path / "predictions" / "part-0.parquet")
    rows, labels = bench.sparktc_decisions(tmp_path / "predictions")
    assert rows.tolist() == [0, 0] and labels.tolist() == [5, 17]


def test_decisions_are_compared_pair_by_pair():
    ours = (np.array([0, 0, 1, 2]), np.array([5, 17, 5, 3]))
    theirs = (np.array([0, 1, 1, 2]), np.array([5, 5, 9, 4]))
    assert bench.compare_decisions(ours, theirs) == {
        "sparktc_positive": 4, "libmultilabel_positive": 4, "only_sparktc": 2, "only_libmultilabel": 2,
        "differing": 4, "documents": 3, "labels": 4}
    same = bench.compare_decisions(ours, ours)
    assert same["differing"] == same["documents"] == same["labels"] == 0


def test_figures_agree_when_equal_to_four_decimals():
    assert bench.agree(0.80081, 0.80084) is True
    assert bench.agree(0.80081, 0.80096) is False
    assert bench.agree(None, 0.5) is None


# --- the table ---------------------------------------------------------------------------------

def method_record(name: str, differing: int) -> dict:
    method = bench.METHODS[name]
    figures = {"micro_f1": 0.8008, "macro_f1": 0.5172, "P@1": 0.95, "P@3": 0.8, "P@5": 0.55, "labels": 101,
               "zero_division": 0.0}
    side = {"wall_seconds": 10.0, "cpu_seconds": 12.5, "peak_rss_mb": {"total": 1234.0}, "figures": figures}
    return {"method": name, "libmultilabel": method.libmultilabel, "sparktc_counterpart": method.sparktc,
            "overrides": list(method.overrides), "same_algorithm": method.same_algorithm,
            "differences": method.differences, "sparktc": side, "peer": {**side, "wall_seconds": 5.0},
            "decisions": {"sparktc_positive": 1000, "libmultilabel_positive": 1001, "only_sparktc": 0,
                          "only_libmultilabel": differing, "differing": differing, "documents": differing,
                          "labels": min(differing, 1)},
            "f1_agree_4_decimals": {"micro_f1": True, "macro_f1": True}}


def test_the_table_sets_both_tools_side_by_side():
    result = {"settings": {"corpus": "/tmp/c", "documents_note": "given", "masters": ["local[*,4]"]},
              "venv": {"path": "/v", "versions": {"libmultilabel": "0.10.0"}},
              "machine": {"cores": 2, "memory_gb": 23.5, "cpu_model": "x", "python": "3.11.7", "java": "17",
                          "pyspark": "4.3.0"},
              "command": "cmd", "methods": [method_record("1vsrest", 0), method_record("thresholding", 1)]}
    markdown = bench.render(result)
    rows = [line for line in markdown.splitlines() if line.startswith("| 1vsrest") or line.startswith("| thresh")]
    assert len(rows) == 2
    assert "| yes | 0.8008 / 0.8008 | 0.5172 / 0.5172 |" in rows[0]
    assert "| 5.0 / 10.0 | 12.5 / 12.5 | 1,234 / 1,234 | 0 (equal; 1,000 positive) | yes / yes |" in rows[0]
    assert "| yes |" in rows[1] and "train.thresholding=micromacro" in rows[1]
    assert "1 of 1,001 positive (1 LibMultiLabel only, 0 sparktc only; 1 documents, 1 labels)" in rows[1]
    assert "The same algorithm over the same folds" in markdown and "F1 = 0 at 0/0" in markdown
