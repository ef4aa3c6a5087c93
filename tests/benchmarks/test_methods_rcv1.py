"""The methods-at-RCV1-scale benchmark's pure parts: arguments, refusals, stage status, the markdown and the figures
it records (no Spark).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmarks.harness import CORPUS_FILES
from benchmarks.harness_pipeline import corpus_refusal, output_refusal, stage_status
from benchmarks.methods_rcv1 import (
    MARKER,
    METHODS,
    WRITER,
    corpus_cell,
    headline,
    parse_arguments,
    pipeline_command,
    render,
    selected_methods,
)


def corpus(directory: Path) -> Path:
    directory.mkdir()
    for name in CORPUS_FILES:
        (directory / name).write_text("")
    return directory


# --- arguments ---------------------------------------------------------------------------------

def test_methods_default_to_all_five_in_yang_and_lius_order(tmp_path: Path):
    arguments = parse_arguments(["--corpus", str(corpus(tmp_path / "c")), "--output", str(tmp_path / "out")])
    assert arguments.methods == ["svm", "knn", "llsf", "nb", "nnet"] == list(METHODS)


def test_methods_keep_the_order_given():
    assert selected_methods("nb, svm") == ["nb", "svm"]


@pytest.mark.parametrize("text, message", [("svm,lr", "unknown method(s) lr"), ("", "(none given)"),
                                           ("knn,svm,knn", "given twice: knn")])
def test_bad_methods_are_refused_naming_them(text: str, message: str):
    with pytest.raises(argparse.ArgumentTypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        selected_methods(text)


def test_a_missing_corpus_is_refused_with_the_command_that_makes_one(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_arguments(["--corpus", str(tmp_path / "none"), "--output", str(tmp_path / "out")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "jobs/synthesize.py" in error and "synthesize.documents=804414" in error
    assert "synthesize.train_documents=23149" in error


def test_uncompressed_corpus_files_are_accepted(tmp_path: Path):
    directory = tmp_path / "c"
    directory.mkdir()
    for name in CORPUS_FILES:
        (directory / name.removesuffix(".gz")).write_text("")
    assert corpus_refusal(directory) is None


def test_new_empty_and_own_outputs_are_accepted(tmp_path: Path):
    assert output_refusal(tmp_path / "new", MARKER, WRITER) is None
    (tmp_path / "empty").mkdir()
    assert output_refusal(tmp_path / "empty", MARKER, WRITER) is None
    own = tmp_path / "own"
    own.mkdir()
    (own / MARKER).write_text(json.dumps({"written_by": WRITER}))
    (own / "methods_rcv1.md").write_text("earlier")
    assert output_refusal(own, MARKER, WRITER) is None


@pytest.mark.parametrize("marker", [None, "not json", json.dumps({"written_by": "someone else"})])
def test_an_output_this_script_did_not_write_is_refused(tmp_path: Path, capsys, marker: str | None):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    if marker is not None:
        (theirs / MARKER).write_text(marker)
    assert "never deletes or replaces what it did not write" in output_refusal(theirs, MARKER, WRITER)
    with pytest.raises(SystemExit) as exit_:
        parse_arguments(["--corpus", str(corpus(tmp_path / "c")), "--output", str(theirs)])
    assert exit_.value.code == 2
    assert (theirs / "notes.txt").read_text() == "mine"


def test_an_output_that_is_a_file_is_refused(tmp_path: Path):
    (tmp_path / "file").write_text("")
    assert "is an existing file" in output_refusal(tmp_path / "file", MARKER, WRITER)


def test_the_command_carries_the_methods_overrides():
    from benchmarks.rcv1_scale import REPO

    command = pipeline_command(REPO / "c", REPO / "runs" / "m" / "methods" / "llsf", METHODS["llsf"])
    assert command == ["./spark-submit.sh", "--master", "local[2]", "jobs/pipeline.py", "--config", "conf/rcv1.toml",
                       "--set", "corpus.path=c", "--set", "train.method=llsf", "--set", "select.top_k=2415",
                       "--set", "train.llsf.k=500", "--set", "train.thresholding=scutfbr",
                       "--output", "runs/m/methods/llsf"]


# --- corpus stages -----------------------------------------------------------------------------

def test_stage_status_tells_skipped_from_recomputed_and_not_reached():
    events = [(1.0, "sparktc: ingest    up to date, skipped (manifest of 2026-11-22T19:03:40+00:00)"),
              (2.0, "sparktc: tokenize  up to date, skipped (manifest of 2026-11-22T19:03:43+00:00)"),
              (9.0, "sparktc: weight    in    804,414  out    804,414  [7.0 s]")]
    assert stage_status(events, {"weight": "written by other code"}) == {
        "ingest": "skipped (current)", "tokenize": "skipped (current)",
        "weight": "recomputed (written by other code)", "rank": "not reached"}


# --- the markdown ------------------------------------------------------------------------------

def segment(wall: float, cpu: float, jvm: float, driver: float, workers: float) -> dict:
    return {"wall_seconds": wall, "segment_seconds": wall + 0.3, "cpu_seconds": cpu, "samples": 5,
            "peak_rss_mb": {"jvm": jvm, "python_driver": driver, "python_workers": workers, "other": 3.0}}


SKIPPED = dict.fromkeys(("ingest", "tokenize", "weight", "rank"), "skipped (current)")


def result() -> dict:
    ok = {"method": "svm", "overrides": list(METHODS["svm"]), "failed": False, "returncode": 0,
          "command": "./spark-submit.sh --master 'local[2]' jobs/pipeline.py --set train.thresholding=scutfbr",
          "end_to_end_seconds": 61.24, "cpu_seconds": 110.5, "corpus_stages": SKIPPED,
          "segments": {"startup": segment(9.0, 14.0, 300, 150, 0), "train": segment(30.4, 55.1, 1187, 203, 1868),
                       "evaluate": segment(12.06, 22.0, 1329, 263, 1889.4)},
          "metrics": {"micro_f1": 0.81234, "macro_f1": 0.45}}
    failed = {"method": "knn", "overrides": list(METHODS["knn"]), "failed": True, "returncode": 1,
              "command": "./spark-submit.sh --master 'local[2]' jobs/pipeline.py --set train.method=knn",
              "end_to_end_seconds": 700.0, "cpu_seconds": 1300.0, "log": "runs/x/logs/knn.log",
              "corpus_stages": {**SKIPPED, "weight": "recomputed (written by other code)"},
              "segments": {"train": segment(20.0, 35.0, 900, 200, 1500)},
              "cause": "out of memory: java.lang.OutOfMemoryError: Java heap space",
              "tail": [f"line {i}" for i in range(40)]}
    return {"command": ".venv/bin/python -m benchmarks.methods_rcv1 --output runs/x", "cwd": "/repo",
            "repository": "/repo", "started_utc": "2026-11-23 10:00 UTC", "harness_seconds": 900.0,
            "machine": {"cores": 2, "memory_gb": 23.5, "cpu_model": "AMD EPYC", "python": "3.11.7", "java": "17",
                        "pyspark": "4.3.0", "spark_defaults": {"spark.driver.memory": "1g"}, "load_start": "2.50",
                        "load_end": "3.10", "git": "commit abc1234"},
            "settings": {"corpus": "runs/benchmark-rcv1/corpus-804414", "methods": ["svm", "knn"],
                         "masters": ["local[2]"]},
            "prepared": {"command": "./spark-submit.sh jobs/pipeline.py --output runs/x/prepared",
                         "end_to_end_seconds": 88.0, "cpu_seconds": 150.0,
                         "corpus_stages": dict.fromkeys(SKIPPED, "recomputed (no manifest)")},
            "methods": [ok, failed]}


def test_the_table_has_one_row_per_method_with_times_memory_f1_and_command():
    markdown = render(result())
    rows = [line for line in markdown.splitlines() if line.startswith("| svm") or line.startswith("| knn")]
    assert rows[0] == ("| svm | 30.4 / 55.1 | 12.1 / 22.0 | 1,187 / 203 / 1,868 | 1,329 / 263 / 1,889 "
                       "| 61.2 / 110.5 | 0.8123 | 0.4500 | skipped (current) "
                       "| `./spark-submit.sh --master 'local[2]' jobs/pipeline.py --set train.thresholding=scutfbr` |")
    assert rows[1].startswith("| knn (**failed**) | 20.0 / 35.0 | — | 900 / 200 / 1,500 | — | 700.0 / 1,300.0 | — | — "
                              "| weight recomputed (written by other code) |")


def test_a_failure_is_told_with_its_cause_and_last_lines():
    markdown = render(result())
    assert "**knn** failed: out of memory: java.lang.OutOfMemoryError: Java heap space (exit code 1" in markdown
    assert "line 39" in markdown and "line 20" in markdown and "line 19\n" not in markdown


def test_the_machine_and_load_are_stated():
    markdown = render(result())
    assert "2 cores; the load averages below show whether other work ran beside it" in markdown
    assert "Load average (1 min) at start / end: 2.50 / 3.10" in markdown
    command = "`.venv/bin/python -m benchmarks.methods_rcv1 --output runs/x`"
    assert f"- Command (run from the repository root): {command}" in markdown
    assert "88.0 s wall, 150.0 CPU-seconds; ingest recomputed (no manifest); tokenize recomputed, weight recomputed, " \
        "rank recomputed" in markdown


def test_no_failure_and_an_early_stop_are_said():
    record = result()
    record["methods"] = record["methods"][:1]
    assert "No method failed." in render(record)
    record.update(error="command failed with exit code 2", methods=[], prepared=None)
    markdown = render(record)
    assert "**The benchmark stopped early:** command failed with exit code 2" in markdown
    assert "## Corpus stages\n\nnot run" in markdown


def test_the_corpus_stages_cell_names_the_first_stage_not_skipped_and_why():
    states = {"ingest": "skipped (current)", "tokenize": "recomputed (written by other code (code a; this is b))",
              "weight": "recomputed (tokenize was recomputed (written by other code (code a; this is b)))",
              "rank": "not reached"}
    assert corpus_cell({"corpus_stages": states}) == (
        "tokenize recomputed (written by other code (code a; this is b)); weight recomputed, rank not reached")
    assert corpus_cell({"corpus_stages": SKIPPED}) == "skipped (current)"
    assert corpus_cell({}) == "—"


def test_the_records_figures_are_each_runs_costs_and_f1_failed_runs_left_out():
    record = result()
    record["prepared"].update(failed=False, peak_rss_mb={"total": 1000.0})
    record["methods"][0]["peak_rss_mb"] = {"total": 3000.0}
    assert headline(record) == {"sparktc": {
        "prepared": {"seconds": 88.0, "cpu_seconds": 150.0, "peak_memory_bytes": 1000 * 2**20, "micro_f1": None,
                     "macro_f1": None, "train": {"seconds": None, "cpu_seconds": None},
                     "evaluate": {"seconds": None, "cpu_seconds": None}},
        "svm": {"seconds": 61.24, "cpu_seconds": 110.5, "peak_memory_bytes": 3000 * 2**20, "micro_f1": 0.81234,
                "macro_f1": 0.45, "train": {"seconds": 30.4, "cpu_seconds": 55.1},
                "evaluate": {"seconds": 12.06, "cpu_seconds": 22.0}},
        "knn": {}}}
    record.update(prepared=None, methods=[])  # stopped before the corpus stages ended
    assert headline(record) == {"sparktc": {"prepared": {}}}
