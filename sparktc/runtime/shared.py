"""Values the driver hands to every task of a stage, on any session: what ``SparkContext.broadcast`` did.

Spark Connect has no broadcast variables, and a value captured in a task's closure travels inside every task (and,
on Connect, inside the plan the client sends, whose messages the server caps at 128 MB by default). A
:class:`Shared` value is pickled once, by the driver, into a file under the stage's private staging directory, and
each Python worker reads it once and keeps it: the same traffic as a broadcast variable, through the file system the
tasks already write their parts to. The file goes with the staging directory when the stage is published.
"""

from __future__ import annotations

import functools
import pickle
import uuid
from typing import Any, Generic, TypeVar

from sparktc.filesystem import read_file, write_file

__all__ = ["Shared"]

Value = TypeVar("Value")

#: How many shared values a Python worker keeps at once (a stage's tasks use one or two; each is model sized).
KEPT = 4


class Shared(Generic[Value]):
    """``value`` written once under ``directory`` (a stage's staging directory) for the tasks to read.

    Example::

        shared = Shared(scorer, storage.join(tables.staging, "_shared"))
        def score(index, path):
            scorer = shared.value  # read once per Python worker, then kept
    """

    def __init__(self, value: Value, directory: str):
        self.directory, self.name = directory, f"{uuid.uuid4().hex}.pickle"
        write_file(directory, self.name, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        self._value: Value | None = value  # the driver's own copy; never pickled with the object

    @property
    def value(self) -> Value:
        """The value: the driver's own, or in a task, read from its file once per worker."""
        return self._value if self._value is not None else _read(self.directory, self.name)

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": self.directory, "name": self.name, "_value": None}


@functools.lru_cache(maxsize=KEPT)
def _read(directory: str, name: str) -> Any:
    return pickle.loads(read_file(directory, name))  # noqa: S301 (written by this run's driver)
