"""MLflow tracking without Spark: records logged to real local stores (a sqlite database, a file store) and read
back with MLflow's own client; params, metrics, tags and artifacts checked against the record.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO
from docs_examples import example
from histories import make
from mlflow import MlflowClient
from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH
from trackers import free_port, tracking_server

from sparktc.experiment.config import Config, TrackConfig
from sparktc.runtime.usage import StageUsage
from sparktc.tracking import mlflow_run, store_probe
from sparktc.tracking.record import RunRecord

#: A real PNG's first bytes (the signature and the IHDR chunk of a 1x1 image), enough to compare byte for byte.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")
CATEGORIES = [f"C{index:05d}" for index in range(1200)]  # 10,799 characters as JSON: beyond MLflow's 6,000


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """One sqlite database for the module's runs (MLflow makes its tables once, in about 5 s)."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


def configuration() -> dict:
    """The whole default configuration with 40 Spark settings (over 100 params: more than one MLflow request), a
    subset and a category list longer than MLflow keeps.
    """
    config = Config().as_dict()
    config["corpus"] |= {"format": "jsonl", "path": "/data/corpus", "categories": CATEGORIES}
    config["spark"]["conf"] = {f"spark.sparktc.test.key{index}": index for index in range(40)}
    config["evaluate"]["subsets"] = {"energy": ["CRUDE", "NAT-GAS"]}
    return config


def finished(run_id: str, exit_status: int = 0, error: str | None = None) -> RunRecord:
    record = make(run_id, 0, settings=configuration(), exit_status=exit_status, error=error, label="nightly")
    record.output = "/runs/nightly"
    record.add_stage(StageUsage("ingest", 12.5, 20.25, 2**30), "run")
    record.add_stage(StageUsage("train", 4.5, None, None), "skipped")
    if exit_status == 0:
        record.add_metrics({"micro_precision": 0.9, "micro_recall": 0.8, "micro_f1": 0.85, "macro_precision": 0.6,
                            "macro_recall": 0.5, "macro_f1": 0.55, "ranking": {"P@1": 0.93, "nDCG@3": 0.88}})
        record.cv_micro_f1, record.figures = 0.81, {"blend alpha": 0.25}
    else:
        record.metrics = {}
    return record


def test_a_finished_run_is_logged_whole_and_read_back_by_mlflows_client(store, tmp_path) -> None:
    output = tmp_path / "run"
    output.mkdir()
    (output / "metrics.json").write_text(json.dumps({"micro_f1": 0.85}))
    (output / "report.md").write_text("# Report\n\n![Micro- and macro-F1 by frequency band](f1_by_band.png)\n")
    (output / "f1_by_band.png").write_bytes(PNG)
    record = finished("20261125T0600Z-host-1")

    logged = mlflow_run.log(TrackConfig(store, "tests"), record, {p.name: p.read_bytes() for p in output.iterdir()})

    client = MlflowClient(tracking_uri=store)
    run = client.get_run(logged)
    assert client.get_experiment(run.info.experiment_id).name == "tests"
    assert (run.info.run_name, run.info.status) == (record.run_id, "FINISHED")
    assert (run.info.start_time, run.info.end_time) == (int(record.started.timestamp() * 1000),
                                                        int(record.finished.timestamp() * 1000))
    # params: the configuration flattened by pandas, strings as they are and anything else as JSON
    flat = pd.json_normalize(record.config, sep=".").iloc[0].to_dict()
    expected = {key: value if isinstance(value, str) else json.dumps(value) for key, value in flat.items()}
    assert len(expected) > 100 and "spark.conf.spark.sparktc.test.key39" in expected
    whole = expected.pop("corpus.categories")
    params = run.data.params
    assert {key: value for key, value in params.items() if key != "corpus.categories"} == expected
    assert params["train.liblinear.C"] == "1.0" and params["corpus.test_parts"] == "[0, 1, 2, 3]"
    assert params["tokenize.title_terms"] == "false" and params["evaluate.subsets.energy"] == '["CRUDE", "NAT-GAS"]'
    cut = params["corpus.categories"]
    assert len(cut) == MAX_PARAM_VAL_LENGTH and cut.endswith(f"... ({len(whole):,} characters; whole in record.json)")
    assert whole.startswith(cut.split(" ... (")[0])
    assert run.data.metrics == {
        "micro_precision": 0.9, "micro_recall": 0.8, "micro_f1": 0.85, "macro_precision": 0.6, "macro_recall": 0.5,
        "macro_f1": 0.55, "cv_micro_f1": 0.81, "ranking/P_at_1": 0.93, "ranking/nDCG_at_3": 0.88,
        "figures/blend alpha": 0.25, "seconds": 100.0, "cpu_seconds": 150.0, "peak_memory_bytes": 2.0**30,
        "stage/ingest/seconds": 12.5, "stage/ingest/cpu_seconds": 20.25, "stage/ingest/peak_memory_bytes": 2.0**30,
        "stage/train/seconds": 4.5}
    tags = run.data.tags
    assert {key: tags[key] for key in tags if key.startswith("sparktc.")} == {
        "sparktc.run_id": record.run_id, "sparktc.kind": "run", "sparktc.label": "nightly",
        "sparktc.git_commit": "1111111111aaaa", "sparktc.code_digest": "d" * 64,
        "sparktc.config_digest": record.config_digest, "sparktc.corpus_digest": "c" * 64,
        "sparktc.output": "/runs/nightly", "sparktc.master": "local[2]", "sparktc.cpu_complete": "true",
        "sparktc.exit_status": "0", "sparktc.stage.ingest": "run", "sparktc.stage.train": "skipped"}
    assert tags["mlflow.source.git.commit"] == "1111111111aaaa"
    # artifacts: the files as given, beside the database, and the record whole
    assert sorted(item.path for item in client.list_artifacts(logged)) == [
        "f1_by_band.png", "metrics.json", "record.json", "report.md"]
    assert run.info.artifact_uri.startswith(Path(store.removeprefix("sqlite:///")).parent.joinpath(
        "mlartifacts").as_uri())
    downloaded = Path(client.download_artifacts(logged, "", str(tmp_path / "downloaded")))
    assert (downloaded / "f1_by_band.png").read_bytes() == PNG
    assert (downloaded / "report.md").read_bytes() == (output / "report.md").read_bytes()
    kept = json.loads((downloaded / "record.json").read_text())
    assert kept["config"] == record.config and kept["config"]["corpus"]["categories"] == CATEGORIES
    assert kept["started"] == record.started.isoformat() and kept["stages"] == record.stages


def test_a_failed_run_is_logged_failed_with_its_error(store) -> None:
    record = finished("20261125T0700Z-host-2", exit_status=1, error="InjectedFault: injected at train:start")

    run = MlflowClient(tracking_uri=store).get_run(mlflow_run.log(TrackConfig(store, "tests"), record, {}))

    assert run.info.status == "FAILED"
    assert run.data.tags["sparktc.error"] == "InjectedFault: injected at train:start"
    assert run.data.tags["sparktc.exit_status"] == "1"
    assert set(run.data.metrics) == {"seconds", "cpu_seconds", "peak_memory_bytes", "stage/ingest/seconds",
                                     "stage/ingest/cpu_seconds", "stage/ingest/peak_memory_bytes",
                                     "stage/train/seconds"}


def test_a_file_store_is_logged_to_where_mlflow_is_told_to_allow_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = str(tmp_path / "mlruns")

    logged = mlflow_run.log(TrackConfig(store), finished("20261125T0800Z-host-3"), {})

    client = MlflowClient(tracking_uri=store)
    run = client.get_run(logged)
    assert run.info.status == "FINISHED" and run.data.metrics["micro_f1"] == 0.85
    assert run.info.artifact_uri.startswith(store)  # inside the store, MLflow's own choice
    assert [item.path for item in client.list_artifacts(logged)] == ["record.json"]


def test_a_store_that_cannot_log_is_a_clear_error(store, tmp_path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_text("not a database\n" * 100)
    with pytest.raises(mlflow_run.TrackingError, match=f"cannot log run r9 to MLflow at sqlite:///{broken} "
                                                        r"\(experiment 'sparktc'\): .*file is not a database"):
        mlflow_run.log(TrackConfig(f"sqlite:///{broken}"), make("r9", 0), {})
    client = MlflowClient(tracking_uri=store)
    client.delete_experiment(client.create_experiment("deleted"))
    with pytest.raises(mlflow_run.TrackingError, match="the MLflow experiment 'deleted' .* is deleted: restore it"):
        mlflow_run.log(TrackConfig(store, "deleted"), make("r10", 0), {})


def test_names_and_values_keep_mlflows_rules() -> None:
    assert mlflow_run.mlflow_name("P@1") == "P_at_1"
    assert mlflow_run.mlflow_name("evaluate.subsets.oil&gas (x)") == "evaluate.subsets.oil_gas _x_"
    assert mlflow_run.params({"spark": {"conf": {}}, "train": {"C": 2, "method": "svm"}}) == {
        "spark.conf": "{}", "train.C": "2", "train.method": "svm"}


def test_the_tests_install_the_track_extra_as_pinned() -> None:
    """CI installs the runtime and test dependencies (scripts/ensure-env.sh): the test extra carries the track
    extra's pins, so that these tests run against the MLflow users install.
    """
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["track"] and set(extras["track"]) <= set(extras["test"])


def test_a_store_lost_during_the_run_fails_in_seconds_in_one_line(tmp_path, capfd, monkeypatch) -> None:
    """The stores the configuration's probe refuses, lost after it: found by the same probe before MLflow is called
    (a server down, a database locked), or failing inside MLflow's client with its retries bounded and its warnings
    kept off the terminal (a server whose every request fails).
    """
    uri = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(mlflow_run.TrackingError, match=f"cannot log run r11 to MLflow at {uri} .*: the tracking "
                                                       "server does not answer: .*Connection refused"):
        mlflow_run.log(TrackConfig(uri), make("r11", 0), {})
    database = tmp_path / "mlflow.db"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(store_probe, "PROBE_SECONDS", 0.2)
    with pytest.raises(mlflow_run.TrackingError, match=f"the database {database} is locked by another process"):
        mlflow_run.log(TrackConfig(f"sqlite:///{database}"), make("r12", 0), {})
    holder.close()
    with tracking_server(status=503, health=200) as failing:
        with pytest.raises(mlflow_run.TrackingError, match=f"cannot log run r13 to MLflow at {failing} .*: .*503"):
            mlflow_run.log(TrackConfig(failing), make("r13", 0), {})
    assert capfd.readouterr().err == ""  # MLflow's and urllib3's retry warnings kept off the terminal


def test_mlflows_http_limits_are_set_for_the_logging_only_and_never_over_the_users(monkeypatch) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "300")
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", raising=False)
    with mlflow_run._bounded():
        set_here = {name: os.environ.get(name) for name in mlflow_run.HTTP_LIMITS}
    assert set_here == {"MLFLOW_HTTP_REQUEST_TIMEOUT": "300", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
                        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "300" and "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ


def test_the_guides_read_back_lists_the_runs_newest_first(store) -> None:
    """docs/scheduled-runs.md's MLflow client block, on a store holding two of sparktc's runs: one line per run, the
    newest first, with its status, micro-F1 and commit.
    """
    older, newer = finished("20261125T0600Z-host-1"), make("20261125T0700Z-host-2", 1, micro_f1=0.8612)
    for record in (older, newer):
        mlflow_run.log(TrackConfig(store, "sparktc"), record, {})
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(example("mlflow-read-runs").replace("sqlite:////data/sparktc/mlflow.db", store), {})
    assert printed.getvalue().splitlines() == [f"{newer.run_id} FINISHED 0.8612 1111111111aaaa",
                                               f"{older.run_id} FINISHED 0.85 1111111111aaaa"]
