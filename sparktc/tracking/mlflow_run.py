"""MLflow tracking (``[track] mlflow_uri``): a run's record logged as one MLflow run, for MLflow's UI and client.

What a run logs (docs/scheduled-runs.md, "Tracked in MLflow: [track]"):

* params: the configuration flattened, ``section.key`` = its value, a string as it is and anything else as JSON
  (``true``, ``1.0``, ``[0, 1, 2, 3]``); a table's entries one level further
  (``spark.conf.spark.sql.shuffle.partitions``);
* metrics: micro/macro precision, recall and F1, the cross-validated micro-F1, the ranking measures
  (``ranking/P_at_1``, ...), a benchmark's figures (``figures/NAME``), and the run's and each stage's wall seconds,
  CPU-seconds and peak memory where they were measured (``seconds``, ``stage/train/seconds``,
  ``stage/train/cpu_seconds``, ``stage/train/peak_memory_bytes``; no name is the folder of another, as a file
  store needs);
* tags: sparktc's run id, kind and label, the code version (git commit and code digest; the commit also as MLflow's
  ``mlflow.source.git.commit``), the configuration and corpus digests, the output, the master, each stage's status
  (``run``, ``skipped``, ``failed``), the exit status and a failed run's error. MLflow's status is FINISHED for a
  run that ended normally (exit status 0), FAILED for any other;
* artifacts: the record itself, ``record.json`` (the whole configuration included), and evaluate's report files
  (``metrics.json``, ``report.md`` and its plots, ``per_category.csv``, ``contingency_tables.txt``) when the record
  holds the figures they go with, read through Hadoop's file system from wherever the run wrote them.

MLflow's limits are kept: names hold only the characters it allows (``P@1`` becomes ``P_at_1``), a param value
longer than it takes is cut with a note that ``record.json`` holds it whole, and
:meth:`mlflow.MlflowClient.log_batch` sends the params, metrics and tags in requests of at most MLflow's batch sizes.

MLflow is the optional extra ``sparktc[track]``: this module imports it, and only :func:`sparktc.apps.recording.keep`
imports this module, when ``[track] mlflow_uri`` is set. The applications refuse such a run before Spark starts
when MLflow is missing, has no store for the URI, or the store does not answer its probe
(:func:`sparktc.tracking.store_probe.store_problem`). A store lost during the run fails in seconds, not minutes: the
same probe runs before logging, MLflow's HTTP retries are bounded (:data:`HTTP_LIMITS`) and its warnings kept off the
terminal (:data:`NOISY_LOGGERS`); the run is logged once its output is released (:mod:`sparktc.apps.recording`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from mlflow import MlflowClient
from mlflow.entities import LifecycleStage, Metric, Param, RunStatus, RunTag
from mlflow.exceptions import MlflowException
from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH
from pyspark.sql import SparkSession

from sparktc.errors import InputError
from sparktc.experiment.config import TrackConfig
from sparktc.runtime import storage
from sparktc.stages.evaluate import REPORTS
from sparktc.tracking.record import RunRecord
from sparktc.tracking.store_probe import sqlite_path, store_problem

#: The artifact holding the whole record, what a param cut to MLflow's length leaves out included.
RECORD_FILE = "record.json"
#: Where a new experiment on a sqlite database keeps its artifacts: a folder beside the database.
ARTIFACTS_FOLDER = "mlartifacts"
#: The costs measured per stage and for the whole run (:class:`sparktc.runtime.usage.StageUsage`).
COSTS = ("seconds", "cpu_seconds", "peak_memory_bytes")
#: The record's fields logged as ``sparktc.<field>`` tags.
TAGGED = ("run_id", "kind", "label", "git_commit", "code_digest", "config_digest", "corpus_digest", "output",
          "host", "master", "executors", "cores", "cpu_complete", "exit_status", "error")


class TrackingError(InputError):
    """A run that cannot be logged to MLflow: the store refused it or could not be reached."""


def mlflow_name(key: str) -> str:
    """``key`` in the characters MLflow allows in the name of a param, metric or tag (letters, digits and
    ``_ - . / space``): ``@`` spelled ``_at_``, any other character replaced by ``_``.
    """
    return re.sub(r"[^\w./ -]", "_", key.replace("@", "_at_"))


def _text(value: Any) -> str:
    """A setting's value as MLflow stores it, a string: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _fitted(text: str) -> str:
    """``text`` cut to MLflow's length for a param value, with a note saying so, when it is longer."""
    if len(text) <= MAX_PARAM_VAL_LENGTH:
        return text
    note = f" ... ({len(text):,} characters; whole in {RECORD_FILE})"
    return text[:MAX_PARAM_VAL_LENGTH - len(note)] + note


def params(config: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The configuration (sections of settings) as params: ``section.key`` = the value, a table's entries as
    ``section.key.entry`` (an empty table as ``{}``).
    """
    flat: dict[str, Any] = {}
    for section, settings in config.items():
        for key, value in settings.items():
            if isinstance(value, Mapping) and value:
                flat |= {f"{section}.{key}.{entry}": item for entry, item in value.items()}
            else:
                flat[f"{section}.{key}"] = value
    return {mlflow_name(key): _fitted(_text(value)) for key, value in flat.items()}


def metrics(record: RunRecord) -> dict[str, float]:
    """The record's figures and costs as metrics (the module docstring); those it does not hold are left out."""
    figures: dict[str, Any] = {
        **record.metrics, "cv_micro_f1": record.cv_micro_f1,
        **{f"ranking/{measure}": value for measure, value in record.ranking.items()},
        **{f"figures/{figure}": value for figure, value in record.figures.items()},
        **{cost: getattr(record, cost) for cost in COSTS},
        **{f"stage/{stage['stage']}/{cost}": stage[cost] for stage in record.stages for cost in COSTS},
    }
    return {mlflow_name(key): float(value) for key, value in figures.items() if value is not None}


def tags(record: RunRecord) -> dict[str, str]:
    """The record's identity, code, digests, output and ending as tags (the module docstring); empty ones left out."""
    fields = {**{field: getattr(record, field) for field in TAGGED},
              **{f"stage.{stage['stage']}": stage["status"] for stage in record.stages}}
    found = {f"sparktc.{mlflow_name(key)}": _text(value) for key, value in fields.items() if value not in (None, "")}
    if record.user:
        found["mlflow.user"] = record.user
    if record.git_commit:
        found["mlflow.source.git.commit"] = record.git_commit.removesuffix("+dirty")
    return found


def record_json(record: RunRecord) -> bytes:
    """The whole record as JSON, times in ISO 8601: the ``record.json`` artifact."""
    return json.dumps(asdict(record), default=datetime.isoformat, indent=2, sort_keys=True).encode("utf-8")


def artifact_location(uri: str) -> str | None:
    """Where a new experiment at ``uri`` keeps its artifacts: beside a sqlite database, in ``mlartifacts/``; for
    any other store MLflow's choice (None: inside a file store, a server's artifact root). MLflow's own choice for
    sqlite, ``./mlruns`` in the working directory, would scatter them wherever runs start (a scheduler's home).
    """
    path = sqlite_path(uri)
    return Path(os.path.abspath(path)).parent.joinpath(ARTIFACTS_FOLDER).as_uri() if path else None


def reports(spark: SparkSession, record: RunRecord, output: str) -> dict[str, bytes]:
    """The evaluate stage's report files in ``output`` (:data:`sparktc.stages.evaluate.REPORTS`) by name, read
    through Hadoop's file system (a local, HDFS or S3 output alike), when ``record`` holds the figures they go with;
    none when it does not (the run did not get to evaluate), so that a failed run never shows an earlier run's
    reports.
    """
    if all(value is None for value in record.metrics.values()):
        return {}
    paths = {report: storage.join(output, report) for report in REPORTS}
    return {report: storage.read_bytes(spark, path) for report, path in paths.items() if storage.exists(spark, path)}


def _experiment(client: MlflowClient, track: TrackConfig) -> str:
    """The id of the experiment ``track.experiment``, made when missing (:func:`artifact_location`)."""
    found = client.get_experiment_by_name(track.experiment)
    if found is None:
        try:
            return client.create_experiment(track.experiment, artifact_location=artifact_location(track.mlflow_uri))
        except MlflowException:  # made at the same moment by another run
            found = client.get_experiment_by_name(track.experiment)
            if found is None:
                raise
    if found.lifecycle_stage != LifecycleStage.ACTIVE:
        raise TrackingError(f"the MLflow experiment {track.experiment!r} at {track.mlflow_uri} is deleted: restore "
                            f"it (mlflow experiments restore --experiment-id {found.experiment_id}) or give another "
                            "track.experiment")
    return found.experiment_id


def _first_line(error: BaseException) -> str:
    return next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)[:500]


def log(track: TrackConfig, record: RunRecord, artifacts: Mapping[str, bytes]) -> str:
    """Log the finished ``record``, with the files ``artifacts`` (by name; :func:`reports`), as one MLflow run of
    the experiment ``track.experiment`` at ``track.mlflow_uri``; the MLflow run's id. A store that refuses it or
    cannot be reached is a :class:`TrackingError`; an MLflow run begun and not logged whole is left FAILED.
    """
    ended = _milliseconds(record.finished)
    logged = {"metrics": [Metric(key, value, ended, 0) for key, value in metrics(record).items()],
              "params": [Param(key, value) for key, value in params(record.config).items()],
              "tags": [RunTag(key, value) for key, value in tags(record).items()]}
    files = {**artifacts, RECORD_FILE: record_json(record)}
    status = RunStatus.FINISHED if record.exit_status == 0 else RunStatus.FAILED
    where = f"MLflow at {track.mlflow_uri} (experiment {track.experiment!r})"
    problem = store_problem(track.mlflow_uri)  # a store lost during the run: said now, not after MLflow's retries
    if problem:
        raise TrackingError(f"cannot log run {record.run_id} to {where}: {problem}")
    with _bounded(), _quiet():
        # The store's failures come as MLflow's errors, its database driver's (SQLAlchemy) or the network's.
        try:
            client = MlflowClient(tracking_uri=track.mlflow_uri)
            run_id = client.create_run(_experiment(client, track), start_time=_milliseconds(record.started),
                                       run_name=record.run_id).info.run_id
        except TrackingError:
            raise
        except Exception as error:
            raise TrackingError(f"cannot log run {record.run_id} to {where}: {_first_line(error)}") from None
        try:
            client.log_batch(run_id, **logged)
            with tempfile.TemporaryDirectory(prefix="sparktc-mlflow-") as folder:
                for file, data in files.items():
                    Path(folder, file).write_bytes(data)
                client.log_artifacts(run_id, folder)
            client.set_terminated(run_id, RunStatus.to_string(status), end_time=ended)
        except Exception as error:
            with contextlib.suppress(Exception):  # the store may refuse this too: the error below says why
                client.set_terminated(run_id, RunStatus.to_string(RunStatus.FAILED))
            raise TrackingError(f"cannot log run {record.run_id} to {where} (its MLflow run {run_id} is left FAILED): "
                                f"{_first_line(error)}") from None
        return run_id


#: MLflow's settings of its HTTP client for sparktc's logging, unless the environment sets them: one retry, a second
#: apart, and 10 s for an answer; MLflow's own defaults (7 retries, backoff factor 2, 120 s) wait about 4 minutes for
#: a server that is down.
HTTP_LIMITS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
               "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}
#: The loggers whose warnings a failing store repeats over many lines (MLflow's retries, urllib3's, the database
#: driver's and Alembic's): kept off the terminal while sparktc logs; its own one-line error says what failed.
NOISY_LOGGERS = ("mlflow", "urllib3", "sqlalchemy", "alembic")


@contextlib.contextmanager
def _bounded() -> Iterator[None]:
    """:data:`HTTP_LIMITS` in the environment while MLflow logs, each only where the user has not set it."""
    added = {name: value for name, value in HTTP_LIMITS.items() if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """:data:`NOISY_LOGGERS` silenced while MLflow logs."""
    loggers = [logging.getLogger(name) for name in NOISY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _milliseconds(moment: datetime) -> int:
    """``moment`` as MLflow's times, milliseconds since the epoch."""
    return int(moment.timestamp() * 1000)
