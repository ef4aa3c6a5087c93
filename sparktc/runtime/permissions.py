"""A Spark job refused an input file by its file system: which file, and what the user can do.

Spark reports such a failure as a chain of Java exceptions (``[FAILED_READ_FILE.*]`` naming the file, a
local "Permission denied" reported as "File does not exist", HDFS's ``AccessControlException``);
:func:`permission_errors` turns one into the stage's own error naming the file and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from py4j.protocol import Py4JJavaError

__all__ = ["java_causes", "permission_denied", "permission_errors"]

# How Spark names a file it failed to read ([FAILED_READ_FILE.*]; a local "Permission denied" it calls
# "File does not exist"), and the Java exceptions by which a file system refuses a user a file.
_READING_FILE = re.compile(r"while reading file (\S+?)\.(?:\s|$)")
_DENIED = ("java.nio.file.AccessDeniedException", "org.apache.hadoop.security.AccessControlException")


def permission_denied(causes: Sequence[tuple[str, str | None]]) -> str | None:
    """``"cannot read FILE: permission denied"`` when a failed Spark job's Java exceptions ((class name,
    message), outermost first) say Spark could not read FILE because the file system denied it; else None.
    """
    named = next((found[1] for _, message in causes if (found := _READING_FILE.search(message or ""))), None)
    denied = any(name in _DENIED or "Permission denied" in (message or "") for name, message in causes)
    return f"cannot read {named}: permission denied" if named and denied else None


def java_causes(error: Py4JJavaError) -> list[tuple[str, str | None]]:
    """(class name, message) of a Java exception and each of its causes, outermost first."""
    causes, cause = [], error.java_exception
    while cause is not None:
        causes.append((cause.getClass().getName(), cause.getMessage()))
        cause = cause.getCause()
    return causes


@contextmanager
def permission_errors(error: type[ValueError], elsewhere: str) -> Iterator[None]:
    """Run a Spark job that reads input files, raising ``error`` with what to do for a file it may not read."""
    try:
        yield
    except Py4JJavaError as failure:
        denied = permission_denied(java_causes(failure))
        if denied is None:
            raise
        raise error(f"{denied}; give the user that runs Spark (on a cluster, the executors' user) read access "
                    f"to it, or {elsewhere}") from None
