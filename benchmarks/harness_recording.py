"""A benchmark's run recorded in the run history (:mod:`sparktc.tracking.history_table`), as a pipeline run records
itself (:mod:`sparktc.apps.recording`).

``--history DIR`` (a directory, or a URI pyarrow opens: s3://, hdfs://, gs://), an option of every benchmark built
on :func:`benchmarks.harness.run_harness` (:func:`arguments`), makes the harness add one
:class:`~sparktc.tracking.record.RunRecord` of kind and label ``benchmark:NAME`` when it ends, however it ends:

* the benchmark's settings as the configuration, its ``corpus`` setting as ``corpus.path``, which the digest leaves
  out as it does a pipeline's (the corpus digest says what the corpus holds); the masters it ran on, the cores of
  the machine, the code version;
* one stage per command it measured, named by the command's log (``pipeline-100000-local2-1``, ``lean_peer-100000``):
  wall, CPU-seconds and peak resident memory of the command's process tree, ``failed`` when it exited non-zero;
  and ``harness``, the benchmark's own process (the sampler, a corpus it writes itself), so that the record's
  CPU-seconds (the sum) are the whole benchmark's and its peak memory the largest of one command's;
* the corpus digest over the files its pipeline runs ingested (their ingest manifests), None when none got that far;
* its headline figures (the benchmark's ``headline`` function, nested names flattened: ``sparktc.micro_f1``), and
  micro/macro P/R/F1 when it ran one pipeline;
* its exit status and what ended it: the error, or the commands that failed.

Every ``jobs/pipeline.py`` command it starts gets ``--set history.path=DIR --set history.label=benchmark:NAME``:
each pipeline run is recorded too (kind ``pipeline``), labelled with the benchmark that started it. The commands
the benchmark's tables list leave these settings out: they change nothing a run computes.

A benchmark that runs its stages in its own Spark driver (``./spark-submit.sh benchmarks/reuters21578.py``: the
Reuters-21578 tables, Yang & Liu 1999, Debole & Sebastiani 2005) takes the same options and records itself with
:func:`record_driver`: no command is measured apart, so its record has the one stage ``harness``, the driver
process's wall and CPU-seconds, and ``cpu_complete`` false (spark-submit's JVM, the driver's parent, and the Python
workers are not counted).

``--track URI`` (an MLflow tracking URI, checked as ``[track] mlflow_uri`` is) logs the same record to MLflow
(:mod:`sparktc.tracking.mlflow_run`: the settings as params, the figures as metrics ``figures/...``, the costs per
stage), with the benchmark's report (``STEM.md``, ``STEM.json``) as artifacts; each pipeline run it starts gets
``--set track.mlflow_uri=URI`` and logs itself. With or without ``--history``; without either, nothing is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.harness_measure import MB, Measured
from sparktc.errors import INPUT_EXIT, ConfigError
from sparktc.experiment.config import TrackConfig
from sparktc.filesystem import is_uri
from sparktc.runtime.outputs import Holder
from sparktc.runtime.usage import StageUsage
from sparktc.tracking import history_table
from sparktc.tracking.record import CORPUS_STAGE, METRICS_FILE, RunRecord, corpus_digest
from sparktc.tracking.store_probe import TRACK_EXTRA, track_config

PIPELINE = "jobs/pipeline.py"
#: The stage of a record that is the benchmark's own process.
HARNESS_STAGE = "harness"


def history_path(text: str) -> str:
    """The argparse type of ``--history``: a URI as given, a local directory made absolute (the commands run from the
    repository root), created when missing.
    """
    if not text:
        raise argparse.ArgumentTypeError("expected the run history's directory, or a URI (s3://, hdfs://, gs://)")
    if is_uri(text):
        return text
    path = os.path.abspath(text)
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text} is not a directory: give the run history's directory (created when "
                                         "missing)")
    return path


def arguments() -> argparse.ArgumentParser:
    """The options every harness benchmark takes, as a parent parser (:func:`benchmarks.harness.harness_parser`)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--history", type=history_path, metavar="DIR",
                        help="add this run's record (kind benchmark:NAME) to the run history DIR, a directory or a "
                             "URI, and have each pipeline run it starts record itself there too (see README, "
                             "Scheduled runs)")
    parser.add_argument("--track", type=track_uri, metavar="URI",
                        help="log this run's record and report to MLflow at URI (sqlite:///FILE, a server, ...; "
                             "experiment sparktc), and have each pipeline run it starts log itself there too "
                             f"(needs MLflow: {TRACK_EXTRA})")
    return parser


def track_uri(text: str) -> TrackConfig:
    """The argparse type of ``--track``: the [track] section of ``mlflow_uri = text``, checked as a run's."""
    if not text:
        raise argparse.ArgumentTypeError("expected an MLflow tracking URI, e.g. sqlite:////data/sparktc/mlflow.db")
    try:
        return track_config(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def option(command: Sequence[str], name: str) -> str:
    """The value given to option ``name`` in ``command`` (the last one, as argparse takes it)."""
    found = [command[i + 1] for i, part in enumerate(command[:-1]) if part == name]
    if not found:
        raise ValueError(f"no {name} in the command {' '.join(command)}")
    return found[-1]


def own_usage(seconds: float) -> StageUsage:
    """The harness process's own usage over its ``seconds``: its CPU-seconds and peak resident memory (the kernel's
    account: getrusage of this process, without its children, which the commands' stages hold).
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return StageUsage(HARNESS_STAGE, round(seconds, 3), round(usage.ru_utime + usage.ru_stime, 2),
                      usage.ru_maxrss * 1024)  # ru_maxrss is in KiB on Linux


def command_usage(name: str, result: Measured) -> StageUsage:
    """A measured command's usage: wall, CPU-seconds and the peak resident memory of its whole process tree."""
    return StageUsage(name, round(result.seconds, 3), round(result.cpu_seconds, 3),
                      memory_bytes(result.peak_rss_mb()["total"]))


def memory_bytes(megabytes: float | None) -> int | None:
    """A peak resident memory in MB (the sampler's unit) as a record holds it, in bytes; None when not measured."""
    return None if megabytes is None else round(megabytes * MB)


def configuration(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A benchmark's settings as a record's configuration: ``{"benchmark": settings}``, with the ``corpus`` setting (a
    path) as ``corpus.path``, which the configuration digest leaves out.
    """
    config: dict[str, Any] = {"benchmark": {key: value for key, value in settings.items() if key != "corpus"}}
    if "corpus" in settings:
        config["corpus"] = {"path": settings["corpus"]}
    return config


def masters(settings: Mapping[str, Any]) -> list[str]:
    """The Spark masters a benchmark ran on: its ``masters`` setting, or its ``master``."""
    return list(settings.get("masters") or ([settings["master"]] if "master" in settings else []))


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (a pipeline's manifest or metrics, which a successful run always wrote)."""
    return json.loads(path.read_text())


@dataclass
class Recorder:
    """What a harness run records: started when the harness starts, told each measured command, kept at its end."""

    module: str
    history: str | None  # --history, or None
    output: Path
    cwd: Path  # where the commands run: their relative paths are relative to it
    track: TrackConfig | None = None  # --track, or None
    driver: bool = False  # a Spark driver recording itself (record_driver): its CPU is not the whole run's
    holder: Holder = field(default_factory=Holder.of_this_process)
    commands: list[tuple[str, Measured]] = field(default_factory=list)

    @staticmethod
    def of(module: str, argv: Sequence[str], output: Path, cwd: Path) -> Recorder | None:
        """The recorder of benchmark ``module`` run with ``argv`` (parsed by its :func:`arguments` already); None
        without ``--history`` and ``--track``.
        """
        given = arguments().parse_known_args(argv)[0]
        if given.history is None and given.track is None:
            return None
        return Recorder(module, given.history, output, cwd, given.track)

    @property
    def kind(self) -> str:
        """``benchmark:NAME``: the record's kind, and the label of it and of the pipeline runs it starts."""
        return f"benchmark:{self.module}"

    @property
    def run_id(self) -> str:
        """The run id: the start time, the host and the process, as a pipeline run's."""
        return self.holder.run_id

    def command(self, command: Sequence[str]) -> list[str]:
        """``command`` as the benchmark runs it: a pipeline run records itself into the history, labelled, and logs
        itself to MLflow.
        """
        if PIPELINE not in command:
            return list(command)
        settings = {"history.path": self.history, "history.label": self.kind} if self.history is not None else {}
        if self.track is not None:
            settings.update({"track.mlflow_uri": self.track.mlflow_uri, "track.experiment": self.track.experiment})
        return [*command, *(part for key, value in settings.items()
                            for part in ("--set", f"{key}={json.dumps(value)}"))]

    def measured(self, log: Path, result: Measured) -> None:
        """A command measured, named by its log's name."""
        self.commands.append((log.stem, result))

    def record(self, settings: Mapping[str, Any], status: int, failure: BaseException | None,
               figures: Mapping[str, Any], own: StageUsage) -> RunRecord:
        """The finished record (module docstring): ``status`` is the harness's exit status, ``failure`` the error
        that ended it (None when it ended by itself), ``own`` the harness process's usage.
        """
        record = RunRecord.start(self.run_id, self.kind, configuration(settings), label=self.kind,
                                 output=str(self.output), started=datetime.fromisoformat(self.holder.started))
        ran = masters(settings)
        record.master, record.cores = ",".join(ran), os.cpu_count()
        # Executors on a cluster run elsewhere; a driver's parent JVM and its workers are not its children.
        record.cpu_complete = not self.driver and all(master.startswith("local") for master in ran)
        for name, result in self.commands:
            record.add_stage(command_usage(name, result), "run" if result.returncode == 0 else "failed")
        record.add_stage(own, "run")
        pipelines = [self.cwd / option(result.command, "--output") for _, result in self.commands
                     if PIPELINE in result.command and result.returncode == 0]
        if pipelines:
            files: dict[str, Any] = {}
            for run in pipelines:
                files.update(read_json(run / "manifests" / f"{CORPUS_STAGE}.json")["inputs"]["files"])
            record.corpus_digest = corpus_digest(files)
        if len(pipelines) == 1 and sum(PIPELINE in result.command for _, result in self.commands) == 1:
            metrics = read_json(pipelines[0] / METRICS_FILE)
            record.add_metrics(metrics)
            record.cv_micro_f1 = metrics.get("cv_micro_f1")
        record.add_figures(figures)
        if failure is not None:
            return record.fail(failure)
        failed = [name for name, result in self.commands if result.returncode != 0]
        return record.finish(status, f"failed: {', '.join(failed)}" if status and failed else None)

    def keep(self, settings: Mapping[str, Any], status: int, failure: BaseException | None,
             figures: Callable[[], Mapping[str, Any]], own: StageUsage, report: Mapping[str, bytes]) -> int:
        """Log the record to MLflow with the files ``report`` (by name), then add it to the history; the harness's
        exit status: ``status``, or 1 when the record could not be kept (said on stderr: a scheduled run is never
        left unrecorded in silence). MLflow first, so that the history's record holds the final exit status: a run
        MLflow could not log is recorded with exit status 1 and the error, as a pipeline run is.
        """
        try:
            record = self.record(settings, status, failure, figures(), own)
        except Exception as error:  # the benchmark's own results are written: say what is missing, and fail
            return self._missing("recorded", error, status)
        if self.track is not None:
            from sparktc.tracking import mlflow_run  # MLflow only when asked for: an optional extra

            try:
                logged = mlflow_run.log(self.track, record, report)
            except Exception as error:
                status = self._missing(f"logged to MLflow at {self.track.mlflow_uri}", error, status)
                if record.exit_status == 0:
                    record.fail(error)
            else:
                print(f"{self.module}: run {self.run_id} logged to MLflow at {self.track.mlflow_uri} (experiment "
                      f"{self.track.experiment!r}, run {logged})", flush=True)
        if self.history is not None:
            try:
                written = history_table.append(self.history, record)
            except Exception as error:
                status = self._missing(f"recorded in the history {self.history}", error, status)
            else:
                print(f"{self.module}: run {self.run_id} recorded in {written}", flush=True)
        return status

    def _missing(self, what: str, error: Exception, status: int) -> int:
        print(f"{self.module}: error: run {self.run_id} could not be {what}: {type(error).__name__}: {error}",
              file=sys.stderr, flush=True)
        return status or INPUT_EXIT


def record_driver(module: str, argv: Sequence[str], output: Path, cwd: Path, settings: Mapping[str, Any],
                  body: Callable[[], tuple[int, Mapping[str, Any], Mapping[str, bytes]]]) -> int:
    """Run ``body``, a benchmark's work in this Spark driver, which returns its exit status, its headline figures
    and its report files (by name); with ``--history`` or ``--track`` in ``argv``, record the run (module
    docstring) however it ends. The exit status: ``body``'s, or 1 when the record could not be kept.
    """
    recorder = Recorder.of(module, argv, output, cwd)
    if recorder is None:
        return body()[0]
    recorder.driver = True
    began = time.monotonic()
    status, figures, report, failure = 1, {}, {}, None
    try:
        status, figures, report = body()
    except BaseException as error:  # recorded as what ended the run, then raised on
        failure = error
        raise
    finally:
        status = recorder.keep(settings, status, failure, lambda: figures, own_usage(time.monotonic() - began),
                               report)
    return status


def report_files(output: Path, stem: str, record: Mapping[str, Any], text: str) -> dict[str, bytes]:
    """A driver benchmark's report, ``STEM.json`` (its record) and ``STEM.md`` (``text``), written under ``output``
    and printed; the files by name, which :func:`record_driver` keeps with the run's record.
    """
    report = {f"{stem}.json": (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode(),
              f"{stem}.md": text.encode("utf-8")}
    for name, content in report.items():
        (output / name).write_bytes(content)
    print(text)
    return report


#: The recorder of the harness running in this context (None: no harness, or no --history).
_ACTIVE: ContextVar[Recorder | None] = ContextVar("benchmark_recorder", default=None)


@contextmanager
def active(recorder: Recorder | None) -> Iterator[None]:
    """Make ``recorder`` the one that :func:`as_run` and :func:`measured` tell, while the harness's body runs."""
    token = _ACTIVE.set(recorder)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def as_run(command: Sequence[str]) -> list[str]:
    """``command`` as the running harness runs it (:meth:`Recorder.command`); as it is without ``--history``."""
    recorder = _ACTIVE.get()
    return list(command) if recorder is None else recorder.command(command)


def measured(log: Path, result: Measured) -> None:
    """Tell the running harness's recorder, if any, of a command measured (:meth:`Recorder.measured`)."""
    recorder = _ACTIVE.get()
    if recorder is not None:
        recorder.measured(log, result)
