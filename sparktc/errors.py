"""The errors sparktc raises for its users: a mistake of theirs or a problem of their environment.

Every such error derives from :class:`SparktcError`, whose message says what went wrong, where,
and what to do, and which carries the job's exit status; the command line
(:mod:`sparktc.apps.cli`) prints ``sparktc: <heading>: <message>`` and exits with it, without a
trace. Any other exception is a bug in sparktc (or a failure inside Spark) and keeps its trace.

Each concern keeps its own subclass where it lives (``IngestError`` in :mod:`sparktc.experiment.corpus_files`, ...);
:class:`ConfigError` is here, as the configuration and the output checks below it both raise it. The classes that
callers have always been able to catch as ``ValueError`` or ``RuntimeError`` still derive from that too.
"""

from __future__ import annotations

from typing import ClassVar

#: Exit statuses (docs/trusted-runs.md, "Exit statuses"): bad input or resources at run time (or a Spark Connect
#: server lost during a run), a configuration, arguments, output or Spark Connect server that does not answer refused
#: before Spark starts (or a setting only the data can refuse, as soon as a stage has counted them:
#: :func:`sparktc.experiment.config.check_against_data`), a regression found by jobs/history.py, the output held by
#: another run (EX_TEMPFAIL), and a run interrupted (Ctrl-C: 128 + SIGINT, as a shell reports it).
INPUT_EXIT = 1
CONFIG_EXIT = 2
REGRESSION_EXIT = 3
BUSY_EXIT = 75
INTERRUPTED_EXIT = 130


class SparktcError(Exception):
    """A user's mistake or an environment problem, told in one clear message with its exit status."""

    exit_code: ClassVar[int] = INPUT_EXIT
    heading: ClassVar[str] = "error"  # printed as "sparktc: <heading>: <message>"


class InputError(SparktcError, ValueError):
    """Input found wrong at run time (a file, a table, a setting's value as the data sees it); exit 1."""


class ConfigError(SparktcError, ValueError):
    """A configuration problem found before any Spark work starts, or a setting only the data can refuse, found as
    soon as a stage has counted them, before the heavy work (``train.folds`` above the training documents, ...).
    """

    exit_code = CONFIG_EXIT
    heading = "configuration error"


def exit_status(error: BaseException) -> int:
    """The exit status a run ends with after ``error``: its own for a :class:`SparktcError`, 130 when interrupted,
    else 1 (Python's own for an uncaught exception).
    """
    if isinstance(error, SparktcError):
        return error.exit_code
    return INTERRUPTED_EXIT if isinstance(error, KeyboardInterrupt) else INPUT_EXIT
