"""Command line shared by every job: ``--config FILE``, repeatable ``--set section.key=value``, ``--output DIR``, ``--force``.

The configuration and the output directory are checked before Spark starts, so a wrong key, value
or path costs no cluster time. The job then holds the output (:mod:`sparktc.runtime.outputs`: refused
with exit status 75 while another run holds it) and the planned stages run in order in one session
(:mod:`sparktc.runtime.runner`): each prints one line with its counts and time, publishes its
outputs whole and writes its manifest to ``OUTPUT/manifests/``, or is skipped when its manifest is
current.

Every failure ends in one line, ``sparktc: error: ...`` (or ``sparktc: configuration error: ...``),
that says what went wrong and where; for a failure inside Spark the line names the log file that
holds Spark's log and the whole trace (``SPARKTC_LOG``, set by ``spark-submit.sh``, else a new file
in the temporary directory). Exit status: 2 bad configuration or output path, 1 bad input or a
failed run, 75 output in use by another run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from sparktc.runtime.config import Config, ConfigError, is_uri, load_config
from sparktc.runtime.outputs import BUSY_EXIT, Claim, OutputBusyError, check_output, claim
from sparktc.apps.pipeline import OWNERS, run_inputs
from sparktc.runtime.resources import ResourceLimitError
from sparktc.runtime.runner import Stage, run_stages

Plan = Callable[[Config, str], Sequence[tuple[Stage, Config]]]
#: Errors that are the input's or the environment's, whose message says all: no trace is needed.
INPUT_ERRORS = (ValueError, OSError, ResourceLimitError)
LOG = "SPARKTC_LOG"
DISK_FULL_CAUSE = "No space left on device"
DISK_FULL = ("the disk is full (No space left on device): free space on the file system of --output and of "
             "spark.local.dir, or give an --output elsewhere, then run the same command again")


def parse_arguments(description: str, argv: Sequence[str] | None = None) -> tuple[Config, str, bool]:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", help="TOML configuration file (see conf/)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting; repeatable (e.g. --set train.C=0.5)")
    parser.add_argument("--output", required=True, help="directory for the stage outputs (local path or Hadoop URI)")
    parser.add_argument("--force", action="store_true",
                        help="recompute every stage, even those whose outputs and manifests are current")
    arguments = parser.parse_args(argv)
    config = load_config(arguments.config, arguments.set)
    return config, check_output(arguments.output, run_inputs(config)), arguments.force


def session_conf(config: Config) -> dict[str, str]:
    """The session settings of ``[spark]``: ``conf`` as given, and the event log when ``event_log`` is set."""
    conf = {key: str(value) for key, value in config.spark.conf.items()}
    if config.spark.event_log:
        conf |= {"spark.eventLog.enabled": "true", "spark.eventLog.dir": config.spark.event_log}
    return conf


def session(config: Config) -> SparkSession:
    from sparktc.runtime.session import build_session

    if config.spark.event_log and not is_uri(config.spark.event_log):
        os.makedirs(config.spark.event_log, exist_ok=True)  # Spark refuses to start without it
    return build_session(config.spark.app_name, session_conf(config), config.spark.log_level)


def fail(error: Exception) -> int:
    """Tell the user what went wrong, as every job does; the exit code: 2 for bad configuration, 1 for bad input."""
    if isinstance(error, ConfigError):
        print(f"sparktc: configuration error: {error}", file=sys.stderr)
        return 2
    print(f"sparktc: error: {DISK_FULL if DISK_FULL_CAUSE in str(error) else error}", file=sys.stderr)
    return 1


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def summarize(error: BaseException) -> str:
    """One line for an unexpected failure: the innermost Java cause, or the last line of a Python
    worker's trace, with what to do for the failures an operator can fix (a full disk)."""
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


def run_job(output: str, kind: str, start: Callable[[], SparkSession], work: Callable[[SparkSession, Claim], object]) -> int:
    """Hold ``output`` (a local path before Spark starts, a URI right after), run ``work`` in the session
    ``start`` gives, and turn every failure into one line and an exit status (see the module docstring)."""
    try:
        with ExitStack() as stack:
            held = None if is_uri(output) else stack.enter_context(claim(output, kind))
            spark = stack.enter_context(_session_of(start))
            held = held or stack.enter_context(claim(output, kind, spark))
            work(spark, held)
    except OutputBusyError as error:
        print(f"sparktc: error: {error}", file=sys.stderr)
        return BUSY_EXIT
    except INPUT_ERRORS as error:
        return fail(error)
    except Exception as error:  # a bug, or a failure inside Spark: the trace goes to the log
        return report_failure(error)
    return 0


def main(description: str, plan: Plan, argv: Sequence[str] | None = None) -> int:
    """Parse and check, then run the planned stages into the held output (see the module docstring)."""
    try:
        config, output, force = parse_arguments(description, argv)
        planned = plan(config, output)
    except ConfigError as error:
        return fail(error)
    return run_job(output, "run", lambda: session(config),
                   lambda spark, held: run_stages(spark, planned, held, OWNERS, force))

