"""jobs/history.py (:mod:`sparktc.apps.history_gate`): what it prints, its exit statuses and its report, over histories
of records built with RunRecord (no Spark).
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shlex
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO
from docs_examples import example, output
from histories import make, with_setting, write

from sparktc.apps.cli import parse_arguments as pipeline_arguments
from sparktc.apps.history_gate import REPORT, run
from sparktc.errors import CONFIG_EXIT, INPUT_EXIT, REGRESSION_EXIT
from sparktc.runtime.outputs import MARKER

PNG = b"\x89PNG\r\n\x1a\n"


def three_runs(path: str) -> list[dict]:
    """A run, its rerun, and a run with a worse setting (train.liblinear.C = 0.001)."""
    return write(path, make("20261125T0600Z-h-1", 1), make("20261125T0700Z-h-2", 2, micro_f1=0.8601, seconds=104.0),
                 make("20261125T0800Z-h-3", 3, settings=with_setting("train.liblinear", "C", 0.001), micro_f1=0.7012,
                      macro_f1=0.4))


def test_the_job_flags_exactly_the_worse_run_with_its_setting_and_exits_3(tmp_path) -> None:
    history = str(tmp_path / "history")
    three_runs(history)
    job = subprocess.run([sys.executable, "jobs/history.py", history, "--all", "--baseline", "first"],
                         cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                         timeout=120)
    assert job.returncode == REGRESSION_EXIT, job.stderr
    lines = job.stdout.splitlines()
    assert lines[0].split() == ["started", "run", "kind", "label", "code", "config", "corpus", "status", "micro_F1",
                                "macro_F1", "seconds", "CPU_s", "peak_MiB"]
    assert [line.split()[2] for line in lines[1:4]] == ["20261125T0600Z-h-1", "20261125T0700Z-h-2",
                                                       "20261125T0800Z-h-3"]
    assert [line for line in lines if line.startswith("REGRESSION")] == [
        f"REGRESSION run 20261125T0800Z-h-3: {figure} vs baseline 20261125T0600Z-h-1; "
        "configuration changed: train.liblinear.C: 1.0 -> 0.001"
        for figure in ("micro_f1 0.8600 -> 0.7012 (-0.1588 > 0.002)", "macro_f1 0.5500 -> 0.4000 (-0.1500 > 0.002)")]


def test_the_latest_run_against_the_previous_same_settings_run(tmp_path, capsys) -> None:
    history = str(tmp_path / "history")
    write(history, make("a", 1), make("b", 2, settings=with_setting("train.liblinear", "C", 0.001), micro_f1=0.5),
          make("c", 3, seconds=130.0))
    assert run(history) == REGRESSION_EXIT
    out = capsys.readouterr().out
    assert "run c vs baseline a (the previous run with the same configuration and corpus): nothing changed" in out
    assert out.splitlines()[-1] == "REGRESSION run c: seconds 100.0 -> 130.0 (x1.30 > x1.25) vs baseline a"
    assert run(history, tolerances={"max_time_ratio": 1.3}) == 0
    # b alone: no baseline, which is no regression, and the earlier run that differs is named with the setting
    assert run(history, run_id="b") == 0
    out = capsys.readouterr().out
    assert "run b: no baseline" in out and "  a: configuration changed: train.liblinear.C: 1.0 -> 0.001" in out


def test_a_label_selects_its_runs(tmp_path, capsys) -> None:
    history = str(tmp_path / "history")
    write(history, make("a", 1, label="nightly"), make("b", 2, micro_f1=0.1), make("c", 3, label="nightly"))
    assert run(history, label="nightly") == 0
    out = capsys.readouterr().out
    assert "run c vs baseline a" in out and " b " not in out
    assert run(history, label="weekly") == INPUT_EXIT
    assert "holds no run labelled weekly" in capsys.readouterr().err


@pytest.mark.parametrize(("arguments", "message"), [
    ({"tolerances": {"max_time_ratio": 0.5}}, "--max-time-ratio 0.5"),
    ({"run_id": "zzz"}, "--run zzz: no such run"),
    ({"baseline": "b"}, "--baseline b failed (exit 1)"),
])
def test_arguments_refused_exit_2(tmp_path, capsys, arguments: dict, message: str) -> None:
    history = str(tmp_path / "history")
    write(history, make("a", 1), make("b", 2, exit_status=1), make("c", 3))
    assert run(history, **arguments) == CONFIG_EXIT
    err = capsys.readouterr().err
    assert err.startswith("sparktc: configuration error: ") and message in err


def test_a_history_directory_that_does_not_exist_is_named_exit_2(tmp_path, capsys) -> None:
    assert run(str(tmp_path / "none")) == CONFIG_EXIT
    assert capsys.readouterr().err == (f"sparktc: configuration error: HISTORY {tmp_path}/none: no such directory; "
                                       "give the directory a history was written to (pipeline runs with --set "
                                       "history.path=DIR, benchmarks with --history DIR)\n")


def test_a_history_without_records_exits_1(tmp_path, capsys) -> None:
    (tmp_path / "none").mkdir()
    assert run(str(tmp_path / "none")) == INPUT_EXIT
    assert "holds no run: 0 run records read from 0 files, 0 other files skipped;" in capsys.readouterr().err
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run-x.parquet").write_text("not parquet")
    assert run(str(tmp_path / "broken")) == INPUT_EXIT
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"sparktc: warning: skipped {tmp_path}/broken/run-x.parquet: not a run record (not a "
                             "Parquet file: ")
    assert "holds no run: 0 run records read from 0 files, 1 other file skipped (--strict refuses it);" in err[1]


def foreign_files(path: str) -> list[str]:
    """Files a history directory may hold beside its records: another Parquet table, a note; their paths."""
    table, note = os.path.join(path, "features.parquet"), os.path.join(path, "notes.txt")
    pq.write_table(pa.table({"doc_id": ["d1", "d2"], "label": [1, 0]}), table)
    with open(note, "w") as handle:
        handle.write("the nightly runs\n")
    return [table, note]


def test_files_that_are_not_run_records_are_named_and_skipped_or_refused_with_strict(tmp_path, capsys,
                                                                                      monkeypatch) -> None:
    history = str(tmp_path / "history")
    write(history, make("a", 1), make("b", 2, seconds=130.0))
    table, note = foreign_files(history)
    assert run(history) == REGRESSION_EXIT  # b against a, as without the other files
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"sparktc: warning: skipped {table}: not a run record (no run_id column; its columns: doc_id, label)",
        f"sparktc: warning: skipped {note}: not a run record (not a Parquet file: Parquet magic bytes not found in "
        f"footer. Either the file is corrupted or this is not a parquet file.)"]
    assert [line.split()[2] for line in out.splitlines()[1:3]] == ["a", "b"]
    assert f"history {history}: 2 run records read from 2 files, 2 other files skipped (--strict refuses them)" in \
        out.splitlines()
    assert out.splitlines()[-1] == "REGRESSION run b: seconds 100.0 -> 130.0 (x1.30 > x1.25) vs baseline a"
    # --strict, as the job takes it: refused, the first such file named
    job = runpy.run_path(str(REPO / "jobs" / "history.py"))
    monkeypatch.setattr(sys, "argv", ["jobs/history.py", history, "--strict"])
    assert job["main"]() == INPUT_EXIT
    out, err = capsys.readouterr()
    assert out == "" and err == (f"sparktc: error: the history {history} holds {table}, which is not a run record "
                                 "(no run_id column; its columns: doc_id, label): move it out of the history\n")
    # a history of other files only holds no run
    alone = tmp_path / "alone"
    alone.mkdir()
    foreign_files(str(alone))
    assert run(str(alone)) == INPUT_EXIT
    assert "holds no run: 0 run records read from 0 files, 2 other files skipped (--strict refuses them);" in \
        capsys.readouterr().err


def record_table(**columns: pa.Array) -> pa.Table:
    """A record of the history (as sparktc writes it) with ``columns`` replaced, each given as an Arrow array."""
    table = make("zz", 1).table()
    for name, values in columns.items():
        table = table.set_column(table.schema.get_field_index(name), name, values)
    return table


@pytest.mark.parametrize(("table", "problem"), [
    (pa.table({"run_id": ["zz"], "kind": [5]}), "column kind is int64, a run record's is string"),
    (record_table(exit_status=pa.array([0], pa.int64())), "column exit_status is int64, a run record's is int32"),
    (record_table(stages=pa.array([["train"]])),
     "column stages is list<element: string>, a run record's is list<item: struct<stage: string, status: string, "
     "seconds: double, cpu_seconds: double, peak_memory_bytes: int64>>"),
    (pa.table({"run_id": ["zz"], "kind": ["run"], "micro_f1": [0.9]}),
     "a run record without the columns label, started, finished, user, host, ... (29 of the record's 32)"),
    (record_table(run_id=pa.array([None], pa.string())), "a run record without a run id"),
])
def test_a_run_record_sparktc_did_not_write_is_refused_naming_the_file_and_the_column(
        tmp_path, capsys, table: pa.Table, problem: str) -> None:
    history = str(tmp_path / "history")
    write(history, make("a", 1))
    pq.write_table(table, os.path.join(history, "run-zz.parquet"))
    assert run(history) == INPUT_EXIT
    out, err = capsys.readouterr()
    assert out == "" and err == (f"sparktc: error: {history}/run-zz.parquet: {problem}; it is not a record sparktc "
                                 "wrote: move it out of the history\n")


def test_the_report_and_its_plots(tmp_path, capsys) -> None:
    history, report = str(tmp_path / "history"), tmp_path / "report"
    three_runs(history)
    assert run(history, str(report), baseline="20261125T0600Z-h-1", every=True) == REGRESSION_EXIT
    assert capsys.readouterr().out.splitlines()[-1] == f"report: {report / REPORT}"
    assert sorted(os.listdir(report)) == sorted([MARKER, ".sparktc.lock", REPORT, "f1.png", "seconds.png"])
    assert json.loads((report / MARKER).read_text())["kind"] == "history"
    text = (report / REPORT).read_text()
    assert "**2 regressions** in 2 runs checked." in text
    assert ("| micro_f1 | 0.8600 | 0.7012 | -0.1588 | 0.002 | REGRESSION |" in text
            and "| seconds | 100.0 | 104.0 | x1.04 | x1.25 | within |" in text)
    assert "configuration changed: train.liblinear.C: 1.0 -> 0.001" in text
    assert text.count("| 20261125T0") == 3 and "](f1.png)" in text and "](seconds.png)" in text
    plots = {name: (report / name).read_bytes() for name in ("f1.png", "seconds.png")}
    assert all(data.startswith(PNG) for data in plots.values())
    # a second report into the same directory replaces the first, with the same bytes for the same history
    assert run(history, str(report), baseline="20261125T0600Z-h-1", every=True) == REGRESSION_EXIT
    assert {name: (report / name).read_bytes() for name in plots} == plots


def test_the_report_never_goes_into_a_directory_sparktc_did_not_write(tmp_path, capsys) -> None:
    history, mine = str(tmp_path / "history"), tmp_path / "mine"
    three_runs(history)
    mine.mkdir()
    (mine / "notes.md").write_text("mine")
    assert run(history, str(mine)) == CONFIG_EXIT
    assert capsys.readouterr().err.startswith(f"sparktc: configuration error: --report {mine} is not empty (notes.md) "
                                              "and is not a sparktc output directory")
    assert run(history, str(mine / "notes.md")) == CONFIG_EXIT
    assert capsys.readouterr().err == (f"sparktc: configuration error: --report {mine / 'notes.md'} is an existing "
                                       "file, not a directory; give a directory path\n")
    assert os.listdir(mine) == ["notes.md"]
    assert run(history, str(tmp_path / "history" / "report")) == CONFIG_EXIT  # inside the history it reads
    assert capsys.readouterr().err.startswith(f"sparktc: configuration error: --report {history}/report is inside "
                                              "HISTORY")


def mixed(path: str) -> list[dict]:
    """Two nights of a benchmark: each its own record (kind benchmark:text_scale) and the pipeline run it started
    (kind pipeline, labelled with the benchmark); sparktc's wall time in the benchmark grows by 40% the second
    night; then a third night whose benchmark failed.
    """
    bench = {"kind": "benchmark:text_scale", "label": "benchmark:text_scale", "micro_f1": None, "macro_f1": None,
             "settings": {"benchmark": {"documents": 200000, "repeat": 1}}, "seconds": 400.0}
    pipeline = {"kind": "pipeline", "label": "benchmark:text_scale"}
    return write(path,
                 make("n1-bench", 1, figures={"sparktc.seconds": 100.0, "sparktc.micro_f1": 0.7, "peer.seconds": 50.0},
                      **bench),
                 make("n1-pipeline", 1.01, seconds=100.0, **pipeline),
                 make("n2-bench", 25, figures={"sparktc.seconds": 140.0, "sparktc.micro_f1": 0.7, "peer.seconds": 51.0},
                      **bench),
                 make("n2-pipeline", 25.01, seconds=140.0, **pipeline),
                 make("n3-bench", 49, exit_status=1, error="HarnessError: command failed with exit code 1", **bench))


def test_a_mixed_history_checks_each_kind_against_its_own(tmp_path, capsys) -> None:
    history, report = str(tmp_path / "history"), tmp_path / "report"
    mixed(history)
    # the benchmark runs alone: each against the previous one, sparktc's time in it regressed, the failed one too
    assert run(history, str(report), every=True, kind="benchmark:text_scale") == REGRESSION_EXIT
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert [line.split()[2:4] for line in lines[1:4]] == [["n1-bench", "benchmark:text_scale"]] + [
        [f"n{n}-bench", "benchmark:text_scale"] for n in (2, 3)]
    assert "  sparktc.seconds 100.0 -> 140.0 (x1.40 > x1.25)" in lines
    assert "  peer.seconds 50.0 -> 51.0 (x1.02 <= x1.25)" in lines
    assert [line for line in lines if line.startswith("REGRESSION")] == [
        "REGRESSION run n2-bench: sparktc.seconds 100.0 -> 140.0 (x1.40 > x1.25) vs baseline n1-bench",
        "REGRESSION run n3-bench: failed (exit 1): HarnessError: command failed with exit code 1 vs baseline n2-bench"]
    text = (report / REPORT).read_text()
    assert "5 runs" not in text and "3 runs of kind benchmark:text_scale" in text
    assert "| sparktc.seconds | 100.0 | 140.0 | x1.40 | x1.25 | REGRESSION |" in text
    # the pipeline runs the benchmark started, by its label and their kind: the same regression, as a pipeline's
    assert run(history, kind="pipeline", label="benchmark:text_scale") == REGRESSION_EXIT
    assert capsys.readouterr().out.splitlines()[-1] == ("REGRESSION run n2-pipeline: seconds 100.0 -> 140.0 "
                                                        "(x1.40 > x1.25) vs baseline n1-pipeline")
    assert run(history, kind="benchmark:lyrl2004") == INPUT_EXIT
    assert ("holds no run of kind benchmark:lyrl2004: 5 run records read from 5 files, 0 other files skipped; pipeline "
            "runs add their records with --set history.path=") in capsys.readouterr().err


def test_the_job_takes_a_kind(tmp_path, monkeypatch, capsys) -> None:
    history = str(tmp_path / "history")
    mixed(history)
    job = runpy.run_path(str(REPO / "jobs" / "history.py"))  # its main, in this process: no interpreter to start
    monkeypatch.setattr(sys, "argv", ["jobs/history.py", history, "--kind", "pipeline", "--run", "n1-pipeline"])
    assert job["main"]() == 0
    out = capsys.readouterr().out
    assert [line.split()[2] for line in out.splitlines()[1:3]] == ["n1-pipeline", "n2-pipeline"]
    assert "run n1-pipeline: no baseline" in out and "-bench" not in out


def page_commands(code: str, date: str = "") -> list[list[str]]:
    r"""The commands of a block of docs/scheduled-runs.md as words (``\`` continuations joined, ``date`` for
    ``$(date +%s)``).
    """
    code = code.replace("\\\n", " ").replace("$(date +%s)", date)
    return [shlex.split(line) for line in code.splitlines() if line.strip()]


def test_the_pages_three_runs_are_commands_the_pipeline_accepts(tmp_path, monkeypatch) -> None:
    """The loop's pipeline command, for each C it gives, is one the pipeline job accepts, into the history and
    label the gate reads (the runs themselves are the suite's R(90) run, not started again here).
    """
    monkeypatch.chdir(REPO)
    loop = example("history-three-runs")
    values = re.search(r"^for C in ([^;]+); do$", loop, re.M)[1].split()
    [command] = [line for line in page_commands(loop, "1764300000") if line[0] == "./spark-submit.sh"]
    assert values == ["1.0", "0.001", "1.0"] and command[1] == "jobs/pipeline.py"
    for value in values:
        words = [word.replace("$C", value) for word in command[2:]]
        config, output_path, _ = pipeline_arguments("", words)
        assert (config.history.path, config.history.label, config.train.liblinear.C) == (
            str(REPO / "runs" / "history"), "r90", float(value))
        assert output_path.endswith(f"runs/r90-C{value}-1764300000")


def the_pages_history(folder) -> None:
    """In ``folder``/runs/history, what the page's three runs leave: C = 1.0, 0.001 (micro-F1 0.7012), 1.0."""
    write(str(folder / "runs" / "history"),
          make("20261125T0600Z-host-4100", 0, micro_f1=0.8612),
          make("20261125T0614Z-host-4242", 1, settings=with_setting("train.liblinear", "C", 0.001), micro_f1=0.7012),
          make("20261125T0628Z-host-4388", 2, micro_f1=0.8612))


def page_job(code: str, folder, monkeypatch, capsys) -> tuple[int, str]:
    """The page's ``jobs/history.py`` command ``code`` run in ``folder`` (the job's main, in this process)."""
    [words] = page_commands(code)
    assert words[:2] == [".venv/bin/python", "jobs/history.py"]
    job = runpy.run_path(str(REPO / words[1]))
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "argv", words[1:])
    status = job["main"]()
    return status, capsys.readouterr().out


def test_the_pages_trend_checks_the_latest_run_against_the_same_settings(tmp_path, monkeypatch, capsys) -> None:
    the_pages_history(tmp_path)
    status, out = page_job(example("history-trend"), tmp_path, monkeypatch, capsys)
    assert status == 0
    assert sum(line.split()[2:3] == [run] for line in out.splitlines() for run in (
        "20261125T0600Z-host-4100", "20261125T0614Z-host-4242", "20261125T0628Z-host-4388")) == 3
    assert "run 20261125T0628Z-host-4388 vs baseline 20261125T0600Z-host-4100" in out


def test_the_pages_gate_flags_the_worse_run_as_the_page_shows_and_exits_3(tmp_path, monkeypatch, capsys) -> None:
    the_pages_history(tmp_path)
    status, out = page_job(example("history-gate"), tmp_path, monkeypatch, capsys)
    assert status == REGRESSION_EXIT
    assert [line for line in out.splitlines() if line.startswith("REGRESSION")] == output("history-gate").splitlines()
    assert (tmp_path / "runs" / "history-report" / REPORT).is_file()
