"""Runs recorded whatever their end, in the history and in MLflow: a failed run's record says which stage failed
and how; records written at the same moment by separate processes all land; a run without [track] never imports
MLflow.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys

import pytest
from conftest import REPO
from trackers import free_port, tracking_server

from sparktc.apps.api import run_pipeline
from sparktc.errors import CONFIG_EXIT, INPUT_EXIT
from sparktc.runtime.faults import DRIVER_SETTING
from sparktc.runtime.outputs import check_free
from sparktc.runtime.usage import StageUsage
from sparktc.stages.evaluate import REPORTS
from sparktc.tracking import history_table
from sparktc.tracking.record import RunRecord, digest

SMALL = {"corpus": {"format": "synthetic"},
         "synthesize": {"documents": 1500, "train_documents": 500, "vocabulary_size": 2000},
         "tokenize": {"stemmer": "none"}}


@pytest.fixture(scope="module")
def failed_then_resumed(spark, tmp_path_factory) -> dict:
    """A run that fails in train, then the same run again, both recorded in a history and logged to MLflow (a
    sqlite database): the history after each run, the second run's result, and the MLflow store.
    """
    folder = tmp_path_factory.mktemp("recorded")
    store = f"sqlite:///{folder / 'mlflow.db'}"
    overrides = [f"history.path={folder / 'history'}", f"track.mlflow_uri={store}"]
    spark.conf.set(DRIVER_SETTING, "train:start:raise")
    try:
        with pytest.raises(Exception, match="injected"):
            run_pipeline(spark, SMALL, str(folder / "run"), overrides=overrides)
    finally:
        spark.conf.unset(DRIVER_SETTING)
    failed = history_table.read(str(folder / "history")).to_pylist()
    result = run_pipeline(spark, SMALL, str(folder / "run"), overrides=overrides)
    return {"failed": failed, "records": history_table.read(str(folder / "history")).to_pylist(), "result": result,
            "store": store, "folder": folder}


def test_a_failed_run_is_recorded_with_its_failed_stage_and_exit_status(failed_then_resumed) -> None:
    [record] = failed_then_resumed["failed"]
    assert record["exit_status"] == 1 and "injected" in record["error"]
    statuses = {stage["stage"]: stage["status"] for stage in record["stages"]}
    assert statuses == {"synthesize": "run", "ingest": "run", "tokenize": "run", "weight": "run", "rank": "run",
                        "train": "failed"}
    assert record["micro_f1"] is None and record["corpus_digest"]
    # The same run again: the stages done are skipped as current, and the record says so.
    records, result = failed_then_resumed["records"], failed_then_resumed["result"]
    assert [r["exit_status"] for r in records] == [1, 0] and records[1]["run_id"] == result.record.run_id
    assert [s["status"] for s in records[1]["stages"]] == ["skipped"] * 5 + ["run", "run"]
    assert records[0]["config_digest"] == records[1]["config_digest"]
    # The digest is over the settings away from the defaults, here the ones the run gave.
    assert records[1]["config_digest"] == digest(SMALL)
    assert records[0]["corpus_digest"] == records[1]["corpus_digest"]


def test_both_runs_are_logged_to_mlflow_the_failed_one_failed(failed_then_resumed, tmp_path) -> None:
    from mlflow import MlflowClient

    store, records = failed_then_resumed["store"], failed_then_resumed["records"]
    client = MlflowClient(tracking_uri=store)
    experiment = client.get_experiment_by_name("sparktc")
    runs = {run.info.run_name: run for run in client.search_runs([experiment.experiment_id])}
    assert set(runs) == {record["run_id"] for record in records}
    failed, finished = (runs[record["run_id"]] for record in records)
    assert failed.info.status == "FAILED" and "injected" in failed.data.tags["sparktc.error"]
    assert failed.data.tags["sparktc.stage.train"] == "failed" and "micro_f1" not in failed.data.metrics
    assert [item.path for item in client.list_artifacts(failed.info.run_id)] == ["record.json"]
    # The run that ended normally: its figures, settings, code and corpus as the history holds them, its reports.
    record = records[1]
    assert finished.info.status == "FINISHED" and "sparktc.error" not in finished.data.tags
    assert {name: finished.data.metrics[name] for name in ("micro_f1", "macro_f1", "micro_precision",
                                                            "macro_recall")} == \
        {name: record[name] for name in ("micro_f1", "macro_f1", "micro_precision", "macro_recall")}
    assert finished.data.metrics["ranking/P_at_1"] == dict(record["ranking"])["P@1"]
    assert finished.data.metrics["stage/train/seconds"] == record["stages"][5]["seconds"]
    config = json.loads(record["config"])
    assert finished.data.params["synthesize.documents"] == "1500" == str(config["synthesize"]["documents"])
    assert finished.data.params["track.mlflow_uri"] == store
    tags = finished.data.tags
    assert (tags["sparktc.git_commit"], tags["sparktc.code_digest"], tags["sparktc.corpus_digest"],
            tags["sparktc.config_digest"], tags["sparktc.output"]) == (
        record["git_commit"], record["code_digest"], record["corpus_digest"], record["config_digest"],
        record["output"])
    assert sorted(item.path for item in client.list_artifacts(finished.info.run_id)) == sorted(
        [*REPORTS, "record.json"])
    downloaded = client.download_artifacts(finished.info.run_id, "metrics.json", str(tmp_path))
    output = failed_then_resumed["folder"] / "run"
    assert open(downloaded, "rb").read() == (output / "metrics.json").read_bytes()


def test_a_run_mlflow_cannot_log_at_its_end_is_recorded_failed_without_holding_its_output(
        spark, failed_then_resumed, monkeypatch, capfd) -> None:
    """A tracking server that answered the configuration's probe, then fails every request when the run ends: MLflow
    is called once the output is released (another run may take it), its retries bounded and its warnings kept off
    the terminal; the run fails with exit status 1 and its record in the history says so. The same run as the
    fixture's into its output: every stage is skipped as current.
    """
    from sparktc.tracking import mlflow_run

    output, histories = failed_then_resumed["folder"] / "run", failed_then_resumed["folder"] / "untracked"
    real, called = mlflow_run.log, []

    def log(track, record, artifacts):
        check_free(str(output), "--output")  # OutputBusyError while a run holds the output
        called.append(sorted(artifacts))
        return real(track, record, artifacts)

    monkeypatch.setattr(mlflow_run, "log", log)
    with tracking_server(status=503, health=200) as failing:
        with pytest.raises(mlflow_run.TrackingError, match=f"cannot log run .* to MLflow at {failing} .*503") as raised:
            run_pipeline(spark, SMALL, str(output), overrides=[f"history.path={histories}",
                                                               f"track.mlflow_uri={failing}"])
    assert raised.value.exit_code == INPUT_EXIT and called == [sorted(REPORTS)]
    [record] = history_table.read(str(histories)).to_pylist()
    assert record["exit_status"] == INPUT_EXIT and record["error"] == f"TrackingError: {raised.value}"[:1000]
    assert [stage["status"] for stage in record["stages"]] == ["skipped"] * 7  # the results are those of the run
    assert record["micro_f1"] == failed_then_resumed["records"][1]["micro_f1"]
    out, err = capfd.readouterr()
    assert "recorded in" in out and "Retrying" not in out + err and "WARNING" not in out + err


def test_a_tracking_server_that_does_not_answer_is_refused_before_spark_starts(tmp_path) -> None:
    uri, output = f"http://127.0.0.1:{free_port()}", tmp_path / "run"
    job = subprocess.run([sys.executable, "jobs/pipeline.py", "--set", "corpus.format=synthetic", "--set",
                          f"track.mlflow_uri={uri}", "--output", str(output)], cwd=REPO, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert job.returncode == CONFIG_EXIT and job.stdout == ""
    assert job.stderr == (f"sparktc: configuration error: track.mlflow_uri = '{uri}': the tracking server does not "
                          f"answer: {uri}/health got no answer ([Errno 111] Connection refused) within 5 s; start the "
                          "server, or correct track.mlflow_uri, or leave track.mlflow_uri empty to run without "
                          "MLflow\n")
    assert not output.exists()  # nothing claimed, no Spark started


def test_a_run_without_track_never_imports_mlflow(tmp_path) -> None:
    """The default path, in a fresh interpreter where MLflow is installed: the jobs' and the API's modules, a
    configuration without [track], and a record kept in the history.
    """
    script = f"""
import importlib.util, sys
assert importlib.util.find_spec("mlflow"), "MLflow must be installed for this test to tell anything"
from sparktc.apps import api, cli, recording
from sparktc.experiment.config import load_config
from sparktc.tracking.record import RunRecord, digest
config = load_config({{"corpus": {{"format": "synthetic"}}, "history": {{"path": {str(tmp_path / "history")!r}}}}})
record = RunRecord.start("no-track", "pipeline", config.as_dict()).finish(0)
recording.keep(config, record, recording.reports(None, config, record, {str(tmp_path / "run")!r}))  # none
assert "mlflow" not in sys.modules, sorted(name for name in sys.modules if name.startswith("mlflow"))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "sparktc: run no-track recorded in" in done.stdout


def _append(path: str, run_id: str, start, count: int) -> None:
    start.wait()
    for index in range(count):
        record = RunRecord.start(f"{run_id}-{index}", "pipeline", {"train": {"C": 1.0}})
        record.add_stage(StageUsage("train", 1.0, 2.0, 3), "run")
        history_table.append(path, record.finish(0))


def test_records_written_at_the_same_moment_by_separate_processes_all_land(tmp_path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [context.Process(target=_append, args=(str(tmp_path / "history"), f"w{n}", start, 20)) for n in range(4)]
    for writer in writers:
        writer.start()
    start.set()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    records = history_table.read(str(tmp_path / "history"))
    assert sorted(records["run_id"].to_pylist()) == sorted(f"w{n}-{i}" for n in range(4) for i in range(20))
    assert not [p for p in (tmp_path / "history").iterdir() if not p.name.startswith("run-")]


def test_a_record_is_never_replaced(tmp_path) -> None:
    record = RunRecord.start("same", "pipeline", {}).finish(0)
    history_table.append(str(tmp_path), record)
    with pytest.raises(history_table.HistoryError, match="never replaced"):
        history_table.append(str(tmp_path), record)
