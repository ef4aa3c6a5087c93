"""The MLflow tracking store a run logs to, checked before Spark starts so that no run computes for hours and then
cannot be logged: MLflow installed, a store MLflow has for the URI, and one that answers a probe of a few seconds (a
sqlite write transaction begun and rolled back; a tracking server's ``/health``). The applications call
:func:`check_tracking` on the loaded configuration before Spark starts; :mod:`sparktc.tracking.mlflow_run` probes
again before it logs.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import os
import sqlite3
from pathlib import Path

from sparktc.errors import ConfigError
from sparktc.experiment.config import Config, TrackConfig, load_section
from sparktc.filesystem import absolute, is_uri, local_path, unwritable

#: The tracking stores MLflow's client has without plugins (``mlflow.tracking._tracking_service.utils``): its
#: databases, as SQLAlchemy URIs (``sqlite:///FILE``, ``postgresql+psycopg2://...``), which need SQLAlchemy and
#: Alembic, and its servers; a path or a ``file:`` URI is a file store. Plugins add theirs as entry points.
MLFLOW_DATABASES = ("sqlite", "postgresql", "mysql", "mssql")
MLFLOW_DATABASE_MODULES = ("sqlalchemy", "alembic")
MLFLOW_SERVERS = ("http", "https", "databricks")
MLFLOW_PLUGINS = "mlflow.tracking_store"
#: MLflow 3.13 and later refuse a file store (in maintenance mode, mlflow/mlflow#18534) unless this is true.
MLFLOW_FILE_STORE = "MLFLOW_ALLOW_FILE_STORE"
#: What installs MLflow, and what its database stores need, beside sparktc (pyproject.toml's extra).
TRACK_EXTRA = "pip install 'sparktc[track]'"


def check_track(track: TrackConfig) -> TrackConfig:
    """[track] checked before Spark starts, so that no run computes for hours and then cannot be logged: MLflow
    installed (the optional extra), with SQLAlchemy and Alembic for a database; a store MLflow has for the URI (a
    sqlite file in a directory that exists; a file store only where MLflow is told to allow it), which answers
    (:func:`store_problem`). A file store's path is made absolute, as the history's is.
    """
    uri = track.mlflow_uri
    if not uri:
        return track
    key = f"track.mlflow_uri = {uri!r}"
    if importlib.util.find_spec("mlflow") is None:
        raise ConfigError(f"{key}: MLflow is not installed; {TRACK_EXTRA}, or leave track.mlflow_uri empty")
    scheme = uri.partition(":")[0].lower() if is_uri(uri) or uri in MLFLOW_SERVERS else ""
    database = scheme.partition("+")[0]  # a SQLAlchemy URI may name its driver: postgresql+psycopg2://
    if scheme in ("", "file"):
        if os.environ.get(MLFLOW_FILE_STORE, "").lower() not in ("true", "1"):
            raise ConfigError(f"{key} is a file store, which MLflow (3.13 and later) keeps in maintenance mode and "
                              f"refuses unless {MLFLOW_FILE_STORE}=true; use a sqlite database, e.g. "
                              f"sqlite:///{os.path.join(local_path(uri) or '', 'mlflow.db')}, or set "
                              f"{MLFLOW_FILE_STORE}=true")
        return dataclasses.replace(track, mlflow_uri=absolute(uri))
    if database in MLFLOW_DATABASES:
        missing = [name for name in MLFLOW_DATABASE_MODULES if importlib.util.find_spec(name) is None]
        if missing:
            raise ConfigError(f"{key}: MLflow's database stores need {' and '.join(missing)}, which "
                              f"{'is' if len(missing) == 1 else 'are'} not installed; {TRACK_EXTRA}")
        if database == "sqlite":
            _check_sqlite(key, uri)
    elif scheme not in MLFLOW_SERVERS and scheme not in {
            entry.name for entry in importlib.metadata.entry_points(group=MLFLOW_PLUGINS)}:
        raise ConfigError(f"{key}: MLflow has no tracking store for {scheme}: URIs; use sqlite:///FILE, a tracking "
                          f"server (http://HOST:PORT), a database ({', '.join(MLFLOW_DATABASES[1:])}) or databricks")
    problem = store_problem(uri)
    if problem:
        raise ConfigError(f"{key}: {problem}, or leave track.mlflow_uri empty to run without MLflow")
    return track


def store_problem(uri: str) -> str | None:
    """Why the MLflow store at ``uri`` cannot take a run now, with what to do, by a probe of a few seconds at most
    (:data:`PROBE_SECONDS`); None when it can, or when it is not probed. Probed: a sqlite database (its folder can be
    written, as sqlite writes its journal there; the file, when there is one, is a database that opens for writing
    and is not locked: a write transaction begun and rolled back) and a tracking server (``http(s)://``: it answers
    an HTTP request below 500). Other stores (postgresql, mysql, mssql, databricks, plugins) are not probed. The
    configuration check runs it before Spark starts; :func:`sparktc.tracking.mlflow_run.log` again before logging,
    so that a store lost during the run fails in seconds, not after MLflow's own retries (minutes).
    """
    path = sqlite_path(uri)
    if path:
        return _sqlite_problem(os.path.abspath(path))
    if uri.partition(":")[0].lower() in ("http", "https"):
        return _server_problem(uri)
    return None


#: The longest a probe of a tracking store waits: for a server's answer, or for another process's write to a sqlite
#: database to end (MLflow's own writes of a run take well under a second).
PROBE_SECONDS = 5.0


def _sqlite_problem(path: str) -> str | None:
    folder = os.path.dirname(path)
    problem = unwritable(folder)
    if problem:
        return (f"the directory {folder} cannot be written ({problem}); sqlite writes the database and its journal "
                "there: give a database in a directory this user can write")
    if not os.path.exists(path):
        return None  # MLflow makes it, and its tables, when it first logs
    if not os.path.isfile(path):
        return f"{path} is not a file; name a sqlite database file"
    try:
        connection = sqlite3.connect(Path(path).as_uri() + "?mode=rw", uri=True, timeout=PROBE_SECONDS,
                                     isolation_level=None)
    except sqlite3.Error as error:
        return f"the database {path} cannot be opened for writing ({error}); give a database this user can write"
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        connection.execute("BEGIN IMMEDIATE")  # a write lock: what logging a run needs
        connection.execute("ROLLBACK")
    except sqlite3.Error as error:
        if "locked" in str(error) or "busy" in str(error):
            return (f"the database {path} is locked by another process (a write held over {PROBE_SECONDS:g} s); "
                    "let it finish, or give another database")
        return f"the database {path} cannot be written ({error}); give a sqlite database MLflow made, or a new file"
    finally:
        connection.close()
    return None


def _server_problem(uri: str) -> str | None:
    import ssl  # imported only for a server: the configuration's import stays light
    import urllib.error
    import urllib.request

    url = uri.rstrip("/") + "/health"  # a tracking server's liveness check; any answer below 500 will do
    try:
        with urllib.request.urlopen(url, timeout=PROBE_SECONDS):  # the proxies of the environment, as MLflow's
            return None
    except urllib.error.HTTPError as error:
        if error.code < 500:
            return None
        answer = f"the answer {error.code} {error.reason}"
    except (OSError, ValueError) as error:  # refused, no such host, timed out (URLError is an OSError)
        reason = getattr(error, "reason", error)
        if isinstance(reason, ssl.SSLError):
            return None  # a server answered; whether MLflow trusts its certificate is MLflow's settings' business
        answer = f"no answer ({reason})"
    return (f"the tracking server does not answer: {url} got {answer} within {PROBE_SECONDS:g} s; start the "
            "server, or correct track.mlflow_uri")


def track_config(uri: str) -> TrackConfig:
    """[track] for a tool that takes only an MLflow tracking URI (a benchmark harness's ``--track``), checked as a
    run's (:func:`check_track`), the experiment its default.
    """
    return check_track(load_section("track", {"mlflow_uri": uri}))


def sqlite_path(uri: str) -> str | None:
    """The database file of a sqlite tracking URI (``sqlite:///relative.db``, ``sqlite:////absolute.db``, with a
    driver, ``sqlite+pysqlite:///``, or a query after ``?``); "" for one without a file (``sqlite://``, in memory);
    None for any other URI.
    """
    scheme, _, rest = uri.partition(":")
    if not is_uri(uri) or scheme.partition("+")[0].lower() != "sqlite":
        return None
    return rest[3:].partition("?")[0] if rest.startswith("///") else ""


def _check_sqlite(key: str, uri: str) -> None:
    """A sqlite URI names a database file in a directory that exists: sqlite makes the file, not its directory, and
    without a file (``sqlite://``, ``:memory:``) the runs would be kept nowhere.
    """
    path = sqlite_path(uri)
    if not path or path == ":memory:":
        raise ConfigError(f"{key} keeps the runs in memory only; name a database file, e.g. sqlite:///runs/mlflow.db")
    if os.path.isdir(path):
        raise ConfigError(f"{key} names a directory; name a database file in it, e.g. "
                          f"sqlite:///{os.path.join(path, 'mlflow.db')}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"{key}: the directory {folder} does not exist; create it (sqlite makes the database file, "
                          "not its directory)")


def check_tracking(config: Config) -> Config:
    """``config`` with its [track] checked (:func:`check_track`): what the applications call on a loaded
    configuration before Spark starts.
    """
    return dataclasses.replace(config, track=check_track(config.track))
