"""A benchmark harness run recorded in the run history (``--history``, :mod:`benchmarks.harness_recording`), without
Spark: run_harness around tiny bodies whose commands are short Python processes, measured as the benchmarks' are.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trackers import tracking_server

from benchmarks import harness as benchmark_harness
from benchmarks import harness_recording
from benchmarks.harness_recording import HARNESS_STAGE, arguments
from sparktc.errors import INPUT_EXIT, INTERRUPTED_EXIT
from sparktc.tracking import history_table
from sparktc.tracking.record import digest

#: A stand-in for jobs/pipeline.py: writes the run's ingest manifest and metrics.json into its --output, as a
#: pipeline run does, and prints its arguments (the history settings the harness added among them).
PIPELINE = """
import json, pathlib, sys
run = pathlib.Path(sys.argv[sys.argv.index("--output") + 1])
(run / "manifests").mkdir(parents=True, exist_ok=True)
files = {"/data/corpus": [["train.dat", 100, "a" * 64], ["test.dat", 200, "b" * 64]]}
(run / "manifests" / "ingest.json").write_text(json.dumps({"inputs": {"tables": {}, "files": files}}))
(run / "metrics.json").write_text(json.dumps({"micro_precision": 0.9, "micro_recall": 0.75, "micro_f1": 0.8182,
                                              "macro_precision": 0.7, "macro_recall": 0.5, "macro_f1": 0.5833,
                                              "cv_micro_f1": 0.79, "ranking": {"p_at_1": 0.95}}))
print("arguments:", json.dumps(sys.argv[1:]))
import time  # and 0.4 CPU-s of work: sampled at least once (every 0.2 s) even on a loaded machine
started = time.process_time()
while time.process_time() - started < 0.4:
    pass
"""
SETTINGS = {"corpus": "runs/corpus-1000", "documents": 1000, "masters": ["local[2]"], "repeat": 1}


def pipeline(run: Path) -> list[str]:
    """A command the harness takes for a pipeline run (its script named as a pipeline command's is) into ``run``."""
    return [sys.executable, "-c", PIPELINE, "jobs/pipeline.py", "--config", "conf/rcv1.toml", "--output", str(run)]


def harness(output: Path, argv: list[str], body: Callable[[dict[str, Any], Callable[[], str]], int],
            settings: dict[str, Any] | None = None,
            headline: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> int:
    """run_harness with ``body`` as benchmark ``fake``, the machine left unread (it runs java and git)."""
    return benchmark_harness.run_harness("fake", output, argv, settings or SETTINGS, body, lambda result: "# fake\n",
                                         "fake", headline=headline, runs=[])


def records(path: Path) -> list[dict[str, Any]]:
    return history_table.read(str(path)).to_pylist()


@pytest.fixture(autouse=True)
def no_machine(monkeypatch) -> None:
    monkeypatch.setattr(benchmark_harness, "machine_info", lambda: {"cores": os.cpu_count()})


def test_a_harness_run_adds_its_record_with_stages_corpus_metrics_and_figures(tmp_path: Path, capsys) -> None:
    output, store = tmp_path / "out", tmp_path / "history"

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        benchmark_harness.measured(pipeline(output / "run-1"), output / "logs" / "sparktc-1000.log", "jobs/pipeline.py",
                            harness="fake")
        # A peer that computes for 0.4 CPU-s, as the pipeline's stand-in does: a 0.04 s command could end before the
        # sampler's first look on a loaded machine and be recorded without its memory.
        busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass"
        benchmark_harness.measured([sys.executable, "-c", busy], output / "logs" / "peer-1000.log", None,
                            harness="fake")
        result["runs"].append({"micro_f1": 0.8182, "seconds": 12.5})
        return 0

    def headline(result: dict[str, Any]) -> dict[str, Any]:
        return {"sparktc": {**result["runs"][0], "macro_f1": None}, "peer": {"seconds": 3}}

    assert harness(output, ["--output", str(output), "--history", str(store)], body, headline=headline) == 0
    [record] = records(store)
    assert record["kind"] == record["label"] == "benchmark:fake" and record["exit_status"] == 0
    assert record["error"] is None and record["output"] == str(output)
    assert re.fullmatch(r"\d{8}T\d{6}Z-.+-\d+(\.\d+)?", record["run_id"])  # .N: a later run of this process
    assert f"fake: run {record['run_id']} recorded in {store / ('run-' + record['run_id'] + '.parquet')}" in \
        capsys.readouterr().out
    # the settings are the configuration; the corpus's path is outside the digest, as a pipeline run's is
    assert json.loads(record["config"]) == {"benchmark": {"documents": 1000, "masters": ["local[2]"], "repeat": 1},
                                            "corpus": {"path": "runs/corpus-1000"}}
    assert record["config_digest"] == digest({"benchmark": {"documents": 1000, "masters": ["local[2]"], "repeat": 1},
                                              "corpus": {}})
    assert (record["master"], record["cores"], record["cpu_complete"]) == ("local[2]", os.cpu_count(), True)
    # one stage per command, named by its log, and the harness's own process; the totals over them
    stages = record["stages"]
    assert [(s["stage"], s["status"]) for s in stages] == [("sparktc-1000", "run"), ("peer-1000", "run"),
                                                          (HARNESS_STAGE, "run")]
    assert all(s["seconds"] > 0 and s["cpu_seconds"] > 0 and s["peak_memory_bytes"] > 2**20 for s in stages), stages
    assert record["cpu_seconds"] == round(sum(s["cpu_seconds"] for s in stages), 2)
    assert record["peak_memory_bytes"] == max(s["peak_memory_bytes"] for s in stages)
    # the one pipeline run's metrics, and the corpus digest of the files it ingested, as its own record has them
    assert (record["micro_precision"], record["micro_f1"], record["macro_f1"], record["cv_micro_f1"]) == (
        0.9, 0.8182, 0.5833, 0.79)
    assert dict(record["ranking"]) == {"p_at_1": 0.95}
    assert record["corpus_digest"] == digest(sorted([sorted([["train.dat", 100, "a" * 64],
                                                             ["test.dat", 200, "b" * 64]])]))
    assert dict(record["figures"]) == {"sparktc.micro_f1": 0.8182, "sparktc.seconds": 12.5, "peer.seconds": 3.0}
    # the pipeline command ran with the history settings added, recording itself under the benchmark's label
    printed = (output / "logs" / "sparktc-1000.log").read_text().split("arguments: ", 1)[1]
    assert json.loads(printed)[-4:] == ["--set", f'history.path="{store}"', "--set",
                                        'history.label="benchmark:fake"']
    # the benchmark's own results are written as without --history
    assert (output / "fake.json").is_file() and (output / "fake.md").read_text() == "# fake\n"


def test_without_history_nothing_is_recorded_and_commands_run_as_given(tmp_path: Path) -> None:
    output = tmp_path / "out"

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        benchmark_harness.measured(pipeline(output / "run-1"), output / "logs" / "sparktc.log", "jobs/pipeline.py")
        return 0

    assert harness(output, ["--output", str(output)], body) == 0
    printed = (output / "logs" / "sparktc.log").read_text().split("arguments: ", 1)[1]
    assert "--set" not in json.loads(printed) and not (tmp_path / "history").exists()


def test_a_failed_harness_run_is_recorded_with_its_exit_status_and_error(tmp_path: Path) -> None:
    output = tmp_path / "out"
    fail = [sys.executable, "-c", "import sys; print('no such corpus'); sys.exit(3)", "jobs/pipeline.py"]

    def stopped(result: dict[str, Any], write: Callable[[], str]) -> int:
        benchmark_harness.measured(pipeline(output / "run-1"), output / "logs" / "sparktc-1.log", "jobs/pipeline.py")
        benchmark_harness.measured(fail, output / "logs" / "sparktc-2.log", "jobs/pipeline.py")  # HarnessError
        return 0

    def went_on(result: dict[str, Any], write: Callable[[], str]) -> int:
        ran = benchmark_harness.measured(fail, output / "logs" / "memory-3.log", None, check=False)
        return int(ran.returncode != 0)

    # one history each: a run id is the second, the host and the process, and both runs share the last two
    argv = ["--output", str(output), "--history"]
    assert harness(output, [*argv, str(tmp_path / "h1")], stopped,
                   headline=lambda result: {"sparktc": {"seconds": 1.0}}) == 1
    assert harness(output, [*argv, str(tmp_path / "h2")], went_on) == 1
    [first], [second] = records(tmp_path / "h1"), records(tmp_path / "h2")
    assert first["exit_status"] == second["exit_status"] == 1
    assert first["error"].startswith("HarnessError: command failed with exit code 3: ")
    assert [(s["stage"], s["status"]) for s in first["stages"]] == [("sparktc-1", "run"), ("sparktc-2", "failed"),
                                                                   (HARNESS_STAGE, "run")]
    assert dict(first["figures"]) == {"sparktc.seconds": 1.0}
    # two pipeline commands, one failed: no run's metrics stand for the benchmark's; the corpus is the one ingested
    assert first["micro_f1"] is None and first["corpus_digest"] is not None
    assert second["error"] == "failed: memory-3" and second["corpus_digest"] is None


@pytest.mark.parametrize(("error", "status"), [(KeyboardInterrupt, INTERRUPTED_EXIT), (ZeroDivisionError, 1)])
def test_a_run_ended_by_any_other_error_is_recorded_and_the_error_raised(tmp_path: Path, error: type,
                                                                         status: int) -> None:
    output, store = tmp_path / "out", tmp_path / "history"

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        raise error("stopped\nat once")

    with pytest.raises(error):
        harness(output, ["--output", str(output), "--history", str(store)], body)
    [record] = records(store)
    assert (record["exit_status"], record["error"]) == (status, f"{error.__name__}: stopped")
    assert (output / "fake.json").is_file()


def test_a_record_that_cannot_be_kept_fails_the_run_and_says_why(tmp_path: Path, capsys) -> None:
    output, blocker = tmp_path / "out", tmp_path / "file"
    blocker.write_text("not a directory")
    status = harness(output, ["--output", str(output), "--history", str(blocker / "history")], lambda r, w: 0)
    assert status == INPUT_EXIT
    err = capsys.readouterr().err
    assert "fake: error: run " in err and f"could not be recorded in the history {blocker / 'history'}" in err
    assert json.loads((output / "fake.json").read_text())["harness_seconds"] >= 0


def test_the_history_option_is_parsed_once_for_every_harness(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("x")
    parser = benchmark_harness.harness_parser("a benchmark")
    assert parser.parse_args(["--history", "h"]).history == str(tmp_path / "h")  # commands run from the repository
    assert parser.parse_args(["--history", "s3://bucket/h"]).history == "s3://bucket/h"
    assert parser.parse_args([]).history is None
    for refused, message in (("file", "file is not a directory"), ("", "expected the run history's directory")):
        with pytest.raises(SystemExit) as exit:
            parser.parse_args(["--history", refused])
        assert exit.value.code == 2 and message in capsys.readouterr().err
    # every harness benchmark takes it, and its help says what it does
    for module in ("rcv1_scale", "methods_rcv1", "lyrl2004", "text_scale", "libmultilabel"):
        source = (Path(benchmark_harness.__file__).parent / f"{module}.py").read_text()
        assert "harness_parser(__doc__)" in source and f'run_harness("{module}"' in source, module
    assert "run history DIR" in " ".join(arguments().format_help().split())


def test_moving_the_corpus_keeps_the_configuration_digest_and_other_settings_change_it(tmp_path: Path) -> None:
    digests = []
    for index, settings in enumerate([SETTINGS, {**SETTINGS, "corpus": "/elsewhere/corpus-1000"},
                                      {**SETTINGS, "repeat": 3}]):
        output, store = tmp_path / f"out-{index}", tmp_path / f"history-{index}"
        assert harness(output, ["--output", str(output), "--history", str(store)], lambda r, w: 0, settings) == 0
        digests += [record["config_digest"] for record in records(store)]
    assert digests[0] == digests[1] != digests[2]


def test_track_logs_the_record_and_report_to_mlflow_and_has_each_pipeline_run_log_itself(tmp_path: Path,
                                                                                         capsys) -> None:
    from mlflow import MlflowClient

    output, store, database = tmp_path / "out", tmp_path / "history", tmp_path / "mlflow.db"
    uri = f"sqlite:///{database}"

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        benchmark_harness.measured(pipeline(output / "run-1"), output / "logs" / "sparktc-1000.log", "jobs/pipeline.py",
                            harness="fake")
        return 0

    argv = ["--output", str(output), "--history", str(store), "--track", uri]
    assert harness(output, argv, body, headline=lambda result: {"peer": {"seconds": 3}}) == 0
    [record] = records(store)
    out = capsys.readouterr().out
    assert f"fake: run {record['run_id']} logged to MLflow at {uri} (experiment 'sparktc', run " in out
    # the same record, read back through MLflow's client: its figures, settings, identity and the report
    client = MlflowClient(tracking_uri=uri)
    [run] = client.search_runs([client.get_experiment_by_name("sparktc").experiment_id])
    assert run.info.run_name == record["run_id"] and run.info.status == "FINISHED"
    assert run.data.metrics["figures/peer.seconds"] == 3.0 and run.data.metrics["micro_f1"] == 0.8182
    assert run.data.metrics["cpu_seconds"] == record["cpu_seconds"]
    assert run.data.params["benchmark.documents"] == "1000" and run.data.params["corpus.path"] == "runs/corpus-1000"
    assert (run.data.tags["sparktc.kind"], run.data.tags["sparktc.config_digest"]) == (
        "benchmark:fake", record["config_digest"])
    assert sorted(artifact.path for artifact in client.list_artifacts(run.info.run_id)) == [
        "fake.json", "fake.md", "record.json"]
    # the pipeline command ran with both the history's and MLflow's settings added
    printed = json.loads((output / "logs" / "sparktc-1000.log").read_text().split("arguments: ", 1)[1])
    assert printed[-8:] == ["--set", f'history.path="{store}"', "--set", 'history.label="benchmark:fake"',
                            "--set", f'track.mlflow_uri="{uri}"', "--set", 'track.experiment="sparktc"']


def test_track_without_history_logs_only_to_mlflow_and_a_bad_uri_is_refused(tmp_path: Path, capsys) -> None:
    from mlflow import MlflowClient

    output, uri = tmp_path / "out", f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert harness(output, ["--output", str(output), "--track", uri], lambda r, w: 0) == 0
    client = MlflowClient(tracking_uri=uri)
    assert len(client.search_runs([client.get_experiment_by_name("sparktc").experiment_id])) == 1
    assert "recorded in" not in capsys.readouterr().out
    parser = benchmark_harness.harness_parser("a benchmark")
    with pytest.raises(SystemExit) as exit:
        parser.parse_args(["--track", f"sqlite:///{tmp_path / 'missing' / 'mlflow.db'}"])
    assert exit.value.code == 2
    assert f"the directory {tmp_path / 'missing'} does not exist" in capsys.readouterr().err


def test_a_run_mlflow_cannot_log_is_recorded_in_the_history_with_exit_status_1(tmp_path: Path, capsys) -> None:
    output, store = tmp_path / "out", tmp_path / "history"
    with tracking_server(status=503, health=200) as failing:  # answers the probe, fails MLflow's requests
        status = harness(output, ["--output", str(output), "--history", str(store), "--track", failing],
                         lambda r, w: 0)
    assert status == INPUT_EXIT
    [record] = records(store)
    assert record["exit_status"] == INPUT_EXIT and record["error"].startswith(
        f"TrackingError: cannot log run {record['run_id']} to MLflow at {failing}")
    err = capsys.readouterr().err
    assert f"could not be logged to MLflow at {failing}" in err and "Retrying" not in err


def test_a_driver_benchmark_records_its_figures_with_its_own_process_as_the_one_stage(tmp_path: Path, capsys) -> None:
    output, store = tmp_path / "out", tmp_path / "history"
    settings = {"corpus": "/data/reuters21578", "sets": ["R(90)"], "masters": ["local[*]"]}
    report = {"benchmark.md": b"# fake\n"}
    status = harness_recording.record_driver("fake", ["--output", str(output), "--history", str(store)], output,
                                             tmp_path, settings,
                                             lambda: (0, {"R90": {"svm": {"micro_f1": 0.86}}}, report))
    assert status == 0
    [record] = records(store)
    assert (record["kind"], record["label"], record["exit_status"]) == ("benchmark:fake", "benchmark:fake", 0)
    assert dict(record["figures"]) == {"R90.svm.micro_f1": 0.86}
    assert json.loads(record["config"]) == {"benchmark": {"sets": ["R(90)"], "masters": ["local[*]"]},
                                            "corpus": {"path": "/data/reuters21578"}}
    # the driver's own process only: spark-submit's JVM and the Python workers are not its children
    assert [s["stage"] for s in record["stages"]] == [HARNESS_STAGE] and record["cpu_complete"] is False
    assert "fake: run" in capsys.readouterr().out


def test_a_driver_benchmark_without_history_records_nothing_and_one_ended_by_an_error_is_recorded(
        tmp_path: Path) -> None:
    store = tmp_path / "history"
    assert harness_recording.record_driver("fake", [], tmp_path, tmp_path, {}, lambda: (3, {}, {})) == 3
    assert not store.exists()

    def body() -> tuple[int, dict[str, Any], dict[str, bytes]]:
        raise ZeroDivisionError("stopped")

    with pytest.raises(ZeroDivisionError):
        harness_recording.record_driver("fake", ["--history", str(store)], tmp_path, tmp_path, {}, body)
    [record] = records(store)
    assert (record["exit_status"], record["error"]) == (1, "ZeroDivisionError: stopped")


def test_a_driver_benchmarks_report_files_are_written_printed_and_returned(tmp_path, capsys):
    files = harness_recording.report_files(tmp_path, "bench", {"micro_f1": 0.5}, "# bench\n")
    assert files == {"bench.json": b'{\n  "micro_f1": 0.5\n}\n', "bench.md": b"# bench\n"}
    assert {name: (tmp_path / name).read_bytes() for name in files} == files
    assert capsys.readouterr().out == "# bench\n\n"
