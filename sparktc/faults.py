"""Fault injection, so that recovery from failed tasks is tested on the real code path.

Set ``spark.sparktc.fault = "<point>:<partition>:<mode>"`` (``--conf`` on spark-submit, or
``spark.conf.set`` in a session; Spark SQL hands session settings to its tasks) and the first
attempt of task ``<partition>`` at ``<point>`` fails:

* ``exit``: the Python worker dies (``os._exit``), as when it is killed or runs out of memory;
* ``raise``: the task raises an exception;
* ``hang``: the task sleeps for an hour (for tests that kill the whole run while a stage is half done);
* ``memory``: the task raises ``MemoryError``, on every attempt, as a worker over its memory limit does.

Points: ``train`` (the grouped training UDF, once per category) and ``score`` (scoring test
documents, once per Arrow batch). Retried attempts run normally, except under ``memory``.
Unset, a point costs one lookup of a task property.
"""

from __future__ import annotations

import os
import time

from pyspark import TaskContext

SETTING = "spark.sparktc.fault"
MODES = ("exit", "raise", "hang", "memory")


def inject(point: str) -> None:
    """Fail here if ``spark.sparktc.fault`` names this point and this task (see the module docstring)."""
    context = TaskContext.get()
    spec = context.getLocalProperty(SETTING) if context is not None else None
    if not spec:
        return
    name, partition, mode = spec.split(":")
    if mode not in MODES:
        raise ValueError(f"{SETTING} = {spec!r}: the mode must be one of {', '.join(MODES)}")
    if name != point or context.partitionId() != int(partition):
        return
    if mode == "memory":
        raise MemoryError(f"injected by {SETTING} = {spec}")
    if context.attemptNumber() > 0:
        return
    if mode == "exit":
        os._exit(3)
    if mode == "raise":
        raise RuntimeError(f"injected by {SETTING} = {spec} (attempt {context.attemptNumber()})")
    time.sleep(3600)
