"""Command line shared by every job: ``--config FILE``, ``--preset NAME`` (:mod:`sparktc.experiment.presets`),
repeatable ``--set section.key=value``, ``--output DIR``, ``--force``.

The configuration and the output directory are checked before Spark starts, so a wrong key, value
or path costs no cluster time. The job then holds the output (:mod:`sparktc.runtime.outputs`: refused
with exit status 75 while another run holds it) and the planned stages run in order in one session
(:mod:`sparktc.runtime.runner`): each prints one line with its counts and time, publishes its
outputs whole and writes its manifest to ``OUTPUT/manifests/``, or is skipped when its manifest is
current. Every job (the stages, classify, compare) runs through :func:`run_job`.

How a job ends:

* a :class:`sparktc.errors.SparktcError` (the user's mistake or the environment's problem) in one
  line, ``sparktc: error: ...`` (``sparktc: configuration error: ...`` for a configuration, arguments
  or output refused before Spark starts), and its exit status: 2 refused before Spark starts (or, for the
  session's own settings, spark-submit's ``--conf``, as soon as it has started, before any work), 1 bad input,
  bundle or resources at run time, 75 output (or an input the job holds, export's RUN) in use by
  another run;
* an ``OSError`` of the operating system (a full disk, a file gone) likewise in one line, exit status 1;
* a failure inside Spark (a Java exception, a Python worker's failure) in one line naming the log
  file that holds Spark's log and the whole trace (``SPARKTC_LOG``, set by ``spark-submit.sh``, else
  a new file in the temporary directory), exit status 1;
* anything else is a bug in sparktc: its traceback is printed as Python prints it (exit status 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from sparktc import packaged
from sparktc.apps.pipeline import OWNERS, run_inputs
from sparktc.apps.recording import execute
from sparktc.errors import INPUT_EXIT, SparktcError
from sparktc.experiment.config import Config, load_config
from sparktc.experiment.presets import PRESETS
from sparktc.filesystem import is_uri
from sparktc.runtime.faults import InjectedFault
from sparktc.runtime.outputs import Claim, check_output, claim
from sparktc.runtime.runner import Stage
from sparktc.runtime.session import check_settings
from sparktc.tracking.store_probe import check_tracking

Plan = Callable[[Config, str], Sequence[tuple[Stage, Config]]]
#: Failures inside Spark (a Java exception, a Python worker's failure, the JVM gone), and the driver faults
#: injected to stand for a failing driver: their trace goes to the log, which the one line names.
SPARK_FAILURES = (Py4JError, PySparkException, InjectedFault)
LOG = "SPARKTC_LOG"
DISK_FULL_CAUSE = "No space left on device"
DISK_FULL = ("the disk is full (No space left on device): free space on the file system of --output and of "
             "spark.local.dir, or give an --output elsewhere, then run the same command again")


def parse_arguments(description: str, argv: Sequence[str] | None = None) -> tuple[Config, str, bool]:
    """The job's command line, checked before Spark starts: the configuration (file, preset, then the ``--set``
    overrides), the ``--output`` directory and ``--force``.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", help="TOML configuration file, or the name of a packaged one (conf/NAME.toml: "
                                         f"{', '.join(packaged.configurations())})")
    parser.add_argument("--preset", default="", choices=["", *PRESETS], metavar="NAME",
                        help="a paper's method as settings, replacing the file's [select], [train] and [tune] "
                             f"(--set applies after it): {', '.join(PRESETS)}")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting; repeatable (e.g. --set train.C=0.5)")
    parser.add_argument("--output", required=True, help="directory for the stage outputs (local path or Hadoop URI)")
    parser.add_argument("--force", action="store_true",
                        help="recompute every stage, even those whose outputs and manifests are current")
    arguments = parser.parse_args(argv)
    config = check_tracking(load_config(arguments.config, arguments.set, arguments.preset))
    return config, check_output(arguments.output, run_inputs(config)), arguments.force


def session_conf(config: Config) -> dict[str, str]:
    """The session settings of ``[spark]``: ``conf`` as given, and the event log when ``event_log`` is set."""
    conf = {key: str(value) for key, value in config.spark.conf.items()}
    if config.spark.event_log:
        conf |= {"spark.eventLog.enabled": "true", "spark.eventLog.dir": config.spark.event_log}
    return conf


def session(config: Config) -> SparkSession:
    """The Spark session of a run under ``config``'s [spark] section, a local event-log directory made first (Spark
    refuses to start without it).
    """
    from sparktc.runtime.session import build_session

    if config.spark.event_log and not is_uri(config.spark.event_log):
        os.makedirs(config.spark.event_log, exist_ok=True)  # Spark refuses to start without it
    return build_session(config.spark.app_name, session_conf(config), config.spark.log_level)


def tell(error: SparktcError | OSError) -> int:
    """Print the one line of a user's or the environment's error (a full disk said with what to do); its exit status."""
    heading, status = (error.heading, error.exit_code) if isinstance(error, SparktcError) else ("error", INPUT_EXIT)
    print(f"sparktc: {heading}: {DISK_FULL if DISK_FULL_CAUSE in str(error) else error}", file=sys.stderr)
    return status


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def summarize(error: BaseException) -> str:
    """One line for an unexpected failure: the innermost Java cause, or the last line of a Python
    worker's trace, with what to do for the failures an operator can fix (a full disk).
    """
    text = str(error)
    if isinstance(error, Py4JJavaError):
        cause = error.java_exception
        while cause.getCause() is not None:
            cause = cause.getCause()
        text = f"{cause.getClass().getName()}: {cause.getMessage()}"
    elif isinstance(error, PySparkException):
        worker = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith(" ")]
        text = worker[-1] if worker else text
    if DISK_FULL_CAUSE in str(error):
        return DISK_FULL
    return _first_line(text)[:500] or type(error).__name__


def log_path() -> str:
    """Where a failure's trace goes: ``SPARKTC_LOG`` (Spark's own log, from spark-submit.sh) or a new file."""
    path = os.environ.get(LOG)
    if path:
        return path
    handle, path = tempfile.mkstemp(prefix="sparktc-", suffix=".log")
    os.close(handle)
    return path


def report_failure(error: BaseException) -> int:
    """Write the trace to the log, print one ``sparktc: error:`` line naming it; exit status 1."""
    path = log_path()
    with open(path, "a", encoding="utf-8") as log:
        log.write("".join(traceback.format_exception(error)))
    print(f"sparktc: error: {summarize(error)} (the trace and Spark's log: {path})", file=sys.stderr)
    return 1


@contextmanager
def _session_of(start: Callable[[], SparkSession]) -> Iterator[SparkSession]:
    spark = start()
    try:
        yield spark
    finally:
        spark.stop()


@dataclass(frozen=True)
class Job:
    """A job whose arguments have been checked: the output it holds (and of what ``kind``, see
    :data:`sparktc.runtime.outputs.KINDS`), how its Spark session starts, and its work in that session.
    ``reads`` names the argument of a directory the job holds only to read it (export's ``RUN``), so that a
    refusal while another job holds it names that input, not ``--output``.
    """

    output: str
    kind: str
    start: Callable[[], SparkSession]
    work: Callable[[SparkSession, Claim], object]
    reads: str = ""


def run_job(prepare: Callable[[], Job]) -> int:
    """Every job's skeleton: ``prepare`` checks the arguments before Spark starts, then the job holds its
    output (a local path before Spark starts, a URI right after) and does its work in its session, which
    is stopped however the work ends; the exit status, each failure told as the module docstring says.
    """
    try:
        job = prepare()
        with ExitStack() as stack:
            held = None if is_uri(job.output) else stack.enter_context(claim(job.output, job.kind, reads=job.reads))
            spark = stack.enter_context(_session_of(job.start))
            check_settings(spark)  # spark-submit's --conf, which the arguments' checks do not see
            held = held or stack.enter_context(claim(job.output, job.kind, spark, job.reads))
            job.work(spark, held)
    except (SparktcError, OSError) as error:
        return tell(error)
    except SPARK_FAILURES as error:
        return report_failure(error)
    return 0


def main(description: str, plan: Plan, argv: Sequence[str] | None = None) -> int:
    """Parse and check, then run the planned stages into the held output (see the module docstring)."""

    def prepare() -> Job:
        config, output, force = parse_arguments(description, argv)
        planned = plan(config, output)
        return Job(output, "run", lambda: session(config),
                   lambda spark, held: execute(spark, config, planned, held, OWNERS, force))

    return run_job(prepare)
