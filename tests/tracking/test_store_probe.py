"""The MLflow tracking store, checked before Spark starts (:func:`sparktc.tracking.store_probe.check_tracking`, which
the applications call on the loaded configuration): a URI MLflow cannot log to, a server that does not answer, a
sqlite database that cannot be written or is locked are refused, naming the key and what to do.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from trackers import free_port, tracking_server

from sparktc.experiment.config import Config, ConfigError, load_config
from sparktc.tracking import store_probe

REPO = Path(__file__).resolve().parents[2]
REUTERS = ["corpus.format=reuters21578", f"corpus.path={REPO}"]


def loaded(overrides: list[str]) -> Config:
    """The configuration of ``overrides`` as a job takes it: loaded, then its [track] checked."""
    return store_probe.check_tracking(load_config(None, overrides))


def refused(overrides: list[str]) -> str:
    with pytest.raises(ConfigError) as error:
        loaded(overrides)
    return str(error.value)


# --- issue 29: [track] mlflow_uri, refused before Spark starts when MLflow cannot log to it


def test_a_tracking_uri_mlflow_cannot_log_to_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    database = tmp_path / "mlflow.db"
    assert loaded([*REUTERS, f"track.mlflow_uri=sqlite:///{database}"]).track.mlflow_uri == \
        f"sqlite:///{database}"
    with tracking_server() as server:  # a server that answers: any answer below 500 will do
        assert loaded([*REUTERS, f"track.mlflow_uri={server}"]).track.mlflow_uri == server
    assert refused([*REUTERS, "track.mlflow_uri=mlruns"]) == (
        "track.mlflow_uri = 'mlruns' is a file store, which MLflow (3.13 and later) keeps in maintenance mode and "
        "refuses unless MLFLOW_ALLOW_FILE_STORE=true; use a sqlite database, e.g. sqlite:///mlruns/mlflow.db, or set "
        "MLFLOW_ALLOW_FILE_STORE=true")
    assert refused([*REUTERS, f"track.mlflow_uri=sqlite:///{tmp_path}/no/such/mlflow.db"]) == (
        f"track.mlflow_uri = 'sqlite:///{tmp_path}/no/such/mlflow.db': the directory {tmp_path}/no/such does not "
        "exist; create it (sqlite makes the database file, not its directory)")
    assert refused([*REUTERS, f"track.mlflow_uri=sqlite:///{tmp_path}"]).endswith(
        f"names a directory; name a database file in it, e.g. sqlite:///{tmp_path}/mlflow.db")
    assert "keeps the runs in memory only" in refused([*REUTERS, "track.mlflow_uri=sqlite://"])
    assert refused([*REUTERS, "track.mlflow_uri=s3://bucket/mlflow"]) == (
        "track.mlflow_uri = 's3://bucket/mlflow': MLflow has no tracking store for s3: URIs; use sqlite:///FILE, a "
        "tracking server (http://HOST:PORT), a database (postgresql, mysql, mssql) or databricks")
    assert refused([*REUTERS, "track.experiment= "]) == \
        "track.experiment = ' ' is out of range; expected a name of 1 to 500 characters"
    # a file store where MLflow is told to allow it, its path made absolute as the history's
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    assert loaded([*REUTERS, "track.mlflow_uri=mlruns"]).track.mlflow_uri == str(tmp_path / "mlruns")


@pytest.mark.parametrize(("missing", "message"), [
    ("mlflow", "MLflow is not installed; pip install 'sparktc[track]', or leave track.mlflow_uri empty"),
    ("alembic", "MLflow's database stores need alembic, which is not installed; pip install 'sparktc[track]'"),
])
def test_a_tracked_run_without_mlflow_installed_is_refused(missing: str, message: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # what find_spec says of a module that is not installed
    assert refused([*REUTERS, f"track.mlflow_uri=sqlite:///{tmp_path / 'mlflow.db'}"]) == \
        f"track.mlflow_uri = 'sqlite:///{tmp_path / 'mlflow.db'}': {message}"
    assert loaded(REUTERS).track.mlflow_uri == ""


# --- issue 38: a tracker that cannot be reached, refused before Spark starts


def test_a_tracking_server_that_does_not_answer_is_refused() -> None:
    uri = f"http://127.0.0.1:{free_port()}"
    assert refused([*REUTERS, f"track.mlflow_uri={uri}"]) == (
        f"track.mlflow_uri = '{uri}': the tracking server does not answer: {uri}/health got no answer ([Errno 111] "
        "Connection refused) within 5 s; start the server, or correct track.mlflow_uri, or leave track.mlflow_uri "
        "empty to run without MLflow")
    with tracking_server(status=502) as proxied:  # a proxy whose server is down
        assert "the tracking server does not answer: " in refused([*REUTERS, f"track.mlflow_uri={proxied}"])
    with tracking_server(status=401) as guarded:  # a server that wants credentials: MLflow's to give
        assert loaded([*REUTERS, f"track.mlflow_uri={guarded}"]).track.mlflow_uri == guarded


def test_a_sqlite_store_that_cannot_be_written_or_is_locked_is_refused(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # /proc takes no new file, even from root (whom permission bits do not stop)
    assert refused([*REUTERS, "track.mlflow_uri=sqlite:////proc/mlflow.db"]).startswith(
        "track.mlflow_uri = 'sqlite:////proc/mlflow.db': the directory /proc cannot be written (")
    broken = tmp_path / "broken.db"
    broken.write_text("not a database\n" * 100)
    assert refused([*REUTERS, f"track.mlflow_uri=sqlite:///{broken}"]).endswith(
        f"the database {broken} cannot be written (file is not a database); give a sqlite database MLflow made, or a "
        "new file, or leave track.mlflow_uri empty to run without MLflow")
    database = tmp_path / "mlflow.db"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    monkeypatch.setattr(store_probe, "PROBE_SECONDS", 0.2)  # the test need not wait 5 s
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the probe waits
    try:
        assert refused([*REUTERS, f"track.mlflow_uri=sqlite:///{database}"]) == (
            f"track.mlflow_uri = 'sqlite:///{database}': the database {database} is locked by another process (a "
            "write held over 0.2 s); let it finish, or give another database, or leave track.mlflow_uri empty to run "
            "without MLflow")
    finally:
        holder.execute("ROLLBACK")
    assert loaded([*REUTERS, f"track.mlflow_uri=sqlite:///{database}"]).track.mlflow_uri
    holder.close()
    assert not [path.name for path in tmp_path.iterdir() if path.name.startswith(".sparktc-probe")]
