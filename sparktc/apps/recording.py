"""A run recorded: its stages measured and watched, and its record kept where ``[history]`` and ``[track]`` say.

Every pipeline run, from a job or from the Python API (:mod:`sparktc.apps.api`), goes through :func:`execute`:

* each stage runs inside a watch that measures its wall time, the CPU-seconds and the peak resident memory of the
  run's process tree (:mod:`sparktc.runtime.usage`: exact in local mode; on a cluster the driver's only, and the
  record says so) and shows its progress (:mod:`sparktc.runtime.progress`);
* when the run ends, however it ends, its :class:`sparktc.tracking.record.RunRecord` (what ran, on what, what it
  cost, what it scored, its exit status) is logged to MLflow at ``[track] mlflow_uri``
  (:mod:`sparktc.tracking.mlflow_run`) and then added to the history at ``[history] path``
  (:mod:`sparktc.tracking.history_table`), once the output is released (:meth:`sparktc.runtime.outputs.Claim.then`): a
  tracking server slow to fail never holds the output, and a run that MLflow could not log is recorded with exit
  status 1.

A run refused before it starts (a configuration error, an output held by another run) does not run, and leaves no
record: its exit status tells the scheduler.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from typing import Any

from pyspark.sql import SparkSession

from sparktc.experiment.config import RUN_SECTIONS, Config
from sparktc.runtime import progress, session, storage
from sparktc.runtime.outputs import Claim
from sparktc.runtime.runner import Stage, read_manifest, run_stages
from sparktc.runtime.usage import ProcessTree
from sparktc.tracking import history_table
from sparktc.tracking.record import CORPUS_STAGE, METRICS_FILE, RunRecord, corpus_digest


def _fill(spark: SparkSession, record: RunRecord, output: str, names: Sequence[str], failed: str | None) -> None:
    """The stages' statuses (recomputed by this run, or skipped as current), the corpus digest and the metrics."""
    statuses = {}
    for name in names:
        manifest = read_manifest(spark, output, name) if name != failed else None
        statuses[name] = "failed" if name == failed else (
            "run" if manifest and manifest.get("run_id") == record.run_id else "skipped")
        if name == CORPUS_STAGE and manifest:
            record.corpus_digest = corpus_digest(manifest.get("inputs", {}).get("files", {}))
    for stage in record.stages:
        stage["status"] = statuses.get(stage["stage"], stage["status"])
    metrics_path = storage.join(output, METRICS_FILE)
    if "evaluate" in statuses and statuses["evaluate"] != "failed" and storage.exists(spark, metrics_path):
        metrics = json.loads(storage.read_text(spark, metrics_path))
        record.add_metrics(metrics)
        record.cv_micro_f1 = metrics.get("cv_micro_f1")


def reports(spark: SparkSession, config: Config, record: RunRecord, output: str) -> dict[str, bytes]:
    """The run's report files that MLflow keeps beside the record (:func:`sparktc.tracking.mlflow_run.reports`),
    read while the run holds ``output``; none without ``[track]``.
    """
    if not config.track.mlflow_uri:
        return {}
    from sparktc.tracking import mlflow_run  # the optional extra: imported only when asked for

    return mlflow_run.reports(spark, record, output)


def keep(config: Config, record: RunRecord, artifacts: Mapping[str, bytes]) -> None:
    """Log the finished record to MLflow with the files ``artifacts`` (by name), then add it to the history, as the
    configuration asks. MLflow first, so that the history's record holds the run's final exit status: a run that
    MLflow could not log ends with exit status 1 (the :class:`sparktc.tracking.mlflow_run.TrackingError`, raised
    once the record is in the history), and its record says so.
    """
    failure = None
    if config.track.mlflow_uri:
        from sparktc.tracking import mlflow_run  # the optional extra: imported only when asked for

        try:
            logged = mlflow_run.log(config.track, record, artifacts)
        except mlflow_run.TrackingError as error:
            failure = error
            if record.exit_status == 0:
                record.fail(error)
        else:
            print(f"sparktc: run {record.run_id} logged to MLflow {config.track.mlflow_uri} as run {logged}",
                  flush=True)
    if config.history.path:
        written = history_table.append(config.history.path, record)
        print(f"sparktc: run {record.run_id} recorded in {written}", flush=True)
    if failure is not None:
        raise failure


def _keep_failed(config: Config, record: RunRecord, artifacts: Mapping[str, bytes]) -> None:
    """:func:`keep` for a run that failed: what cannot be kept is said in one line, the run's own error goes on."""
    try:
        keep(config, record, artifacts)
    except Exception as unkept:  # the run's own failure is what the user must see first
        print(f"sparktc: error: run {record.run_id} failed and its record could not be kept whole: {unkept}",
              file=sys.stderr, flush=True)


@contextmanager
def _stage_watch(tree: ProcessTree, record: RunRecord, name: str, failures: list[str]) -> Iterator[None]:
    try:
        with tree.stage(name) as usage:
            yield
    except BaseException:
        failures.append(name)
        raise
    finally:
        record.add_stage(usage, "run")


def execute(spark: SparkSession, config: Config, plan: Sequence[tuple[Stage, Config]], held: Claim,
            owners: Mapping[str, Stage], force: bool = False,
            kind: str = "pipeline") -> tuple[list[dict[str, Any]], RunRecord]:
    """Run the planned stages into the held output, each watched, and keep the run's record however it ends
    (see the module docstring); the stages' manifests and the record.
    """
    record = RunRecord.start(held.run_id, kind, config.as_dict(), RUN_SECTIONS, config.history.label, held.output,
                             datetime.fromisoformat(held.holder.started),  # when the output was claimed
                             defaults=Config().as_dict())
    record.master, record.cores, record.executors = session.master(spark), session.cores(spark), session.executors(
        spark)
    tree = ProcessTree(complete=record.master.startswith("local") and not session.is_connect(spark))
    record.cpu_complete = tree.complete
    progress.configure(config.progress.mode, config.progress.interval)
    shown, failures = progress.stages(spark), []

    def watch(name: str) -> Any:
        stack = ExitStack()
        stack.enter_context(_stage_watch(tree, record, name, failures))
        stack.enter_context(shown(name))
        return stack

    def kept() -> str:
        done = [stage["stage"] for stage in record.stages if stage["stage"] not in failures]
        return (f"the stages finished before it are kept in {held.output} ({', '.join(done) or 'none'}): start the "
                "server, or give another, and run the same command again to resume from there")

    try:
        with tree.running(), session.bounded_retries(spark, kept):
            manifests = run_stages(spark, plan, held, owners, force, watch)
    except BaseException as error:
        artifacts: dict[str, bytes] = {}
        try:
            _fill(spark, record, held.output, [stage.name for stage, _ in plan], failures[0] if failures else None)
            artifacts = reports(spark, config, record.fail(error), held.output)
        except Exception as unreadable:  # Spark itself may be what failed: the record still says how the run ended
            print(f"sparktc: the record of run {record.run_id} lacks its stages' statuses or reports ({unreadable})",
                  file=sys.stderr)
        if record.finished is None:
            record.fail(error)
        held.then(lambda: _keep_failed(config, record, artifacts))
        raise
    _fill(spark, record, held.output, [stage.name for stage, _ in plan], None)
    artifacts = reports(spark, config, record.finish(0), held.output)
    held.then(lambda: keep(config, record, artifacts))  # no output held while MLflow is called
    return manifests, record
