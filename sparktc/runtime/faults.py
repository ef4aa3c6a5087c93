"""Fault injection, so that recovery is tested on the real code path: in Python workers and in the driver.

**Workers.** Set ``spark.sparktc.fault = "<point>:<partition>:<mode>"`` (several, separated by
commas; ``--conf`` on spark-submit, or ``spark.conf.set`` in a session: Spark SQL hands session
settings to the tasks of its jobs, and every sparktc job is one) and the first
attempt of task ``<partition>`` at ``<point>`` fails:

* ``exit``: the Python worker dies (``os._exit``), as when it is killed or runs out of memory;
* ``raise``: the task raises an exception;
* ``memory``: the task raises ``MemoryError``, on every attempt, as a worker over its memory limit does.

Points (:data:`WORKER_POINTS`), one in every stage that runs Python on the executors: ``synthesize``
(writing a chunk of the corpus), ``parse`` (reading a corpus file, in ingest and classify),
``tokenize`` (analyzing raw text), ``weight`` (weighted vectors), ``rank`` (chi-square per term),
``train`` (the grouped training UDF, once per category) and ``score`` (scoring test documents).
Retried attempts run normally, except under ``memory``. Unset, a point costs one lookup of a task property.

**Driver.** Set ``spark.sparktc.driver_fault = "<stage>:<point>:<mode>"`` and the driver fails in
``<stage>`` at ``<point>`` (:data:`DRIVER_POINTS`): ``start`` (before the stage computes anything),
``publish`` (after its first output was moved into place, before the others) or ``manifest``
(after publishing, before its manifest is written). Modes: ``kill`` (SIGKILL to the driver
process, as a lost machine or an operator's ``kill -9``), ``raise`` (an exception, for tests in
one process) and ``disk-full`` (the ``OSError`` a full disk gives).
"""

from __future__ import annotations

import errno
import os
import re
import signal
from collections.abc import Mapping
from typing import Any

from pyspark import TaskContext

from sparktc.errors import ConfigError
from sparktc.runtime import task_memory
from sparktc.runtime.resources import check_worker_memory, task_memory_problem

SETTING = "spark.sparktc.fault"
MODES = ("exit", "raise", "memory")
WORKER_POINTS = ("synthesize", "parse", "tokenize", "weight", "rank", "train", "score")
DRIVER_SETTING = "spark.sparktc.driver_fault"
DRIVER_POINTS = ("start", "publish", "manifest")
DRIVER_MODES = ("kill", "raise", "disk-full")
#: sparktc's own Spark settings (with the per-task memory log of :mod:`sparktc.runtime.task_memory`); any other
#: ``spark.*`` key goes to Spark as it is.
SETTINGS = (SETTING, DRIVER_SETTING, task_memory.SETTING, task_memory.CAP_SETTING)

_WORKER_SPEC = re.compile(rf"({'|'.join(WORKER_POINTS)}):\d+:({'|'.join(MODES)})")
_DRIVER_SPEC = re.compile(rf"\w+:({'|'.join(DRIVER_POINTS)}):({'|'.join(DRIVER_MODES)})")


class InjectedFault(RuntimeError):
    """A failure injected on purpose (``raise`` modes)."""


def problem(conf: Mapping[str, Any]) -> str | None:
    """What is wrong with the sparktc settings among Spark settings ``conf`` (None when nothing is)."""
    for key in conf:
        if key.startswith("spark.sparktc.") and key not in SETTINGS:
            return f"unknown key {key!r} in spark.conf; sparktc's own keys: {', '.join(SETTINGS)}"
    log, cap = conf.get(task_memory.SETTING), conf.get(task_memory.CAP_SETTING)
    if log is not None and not (isinstance(log, str) and log.strip()):
        return f"spark.conf {task_memory.SETTING!r} = {log!r} is not allowed; expected a directory on the executors"
    if cap is not None and task_memory_problem(cap):
        return task_memory_problem(cap)
    worker, driver = conf.get(SETTING), conf.get(DRIVER_SETTING)
    if worker is not None and not (isinstance(worker, str) and all(map(_WORKER_SPEC.fullmatch, worker.split(",")))):
        return (f"spark.conf {SETTING!r} = {worker!r} is not allowed; expected '<point>:<partition>:<mode>' (several "
                f"separated by commas) with point {', '.join(WORKER_POINTS)} and mode {', '.join(MODES)}")
    if driver is not None and not (isinstance(driver, str) and _DRIVER_SPEC.fullmatch(driver)):
        return (f"spark.conf {DRIVER_SETTING!r} = {driver!r} is not allowed; expected '<stage>:<point>:<mode>' with "
                f"point {', '.join(DRIVER_POINTS)} and mode {', '.join(DRIVER_MODES)}")
    return None


def check(conf: Mapping[str, Any]) -> None:
    """ConfigError for a Spark setting among ``conf`` that no run can work under: sparktc's own (:func:`problem`: an
    unknown ``spark.sparktc.*`` key, ``spark.sparktc.task_memory`` under a worker's own ...), or a worker memory no
    Python worker starts under (:func:`sparktc.runtime.resources.check_worker_memory`).
    """
    found = problem(conf)
    if found:
        raise ConfigError(found)
    check_worker_memory(conf)


def inject(point: str) -> None:
    """Fail here if ``spark.sparktc.fault`` names this point and this task (see the module docstring)."""
    context = TaskContext.get()
    specs = context.getLocalProperty(SETTING) if context is not None else None
    if not specs:
        return
    for spec in specs.split(","):
        name, partition, mode = spec.split(":")
        if name != point or context.partitionId() != int(partition):
            continue
        if mode == "memory":
            raise MemoryError(f"injected by {SETTING} = {spec}")
        if context.attemptNumber() > 0:
            return
        if mode == "exit":
            os._exit(3)
        raise InjectedFault(f"injected by {SETTING} = {spec} (attempt {context.attemptNumber()})")


def inject_driver(conf: Any, stage: str, point: str) -> None:
    """Fail here if ``spark.sparktc.driver_fault`` names this stage and point (``conf``: the session's
    ``spark.conf``).
    """
    spec = conf.get(DRIVER_SETTING, None)
    if not spec or spec.split(":")[:2] != [stage, point]:
        return
    mode = spec.split(":")[2]
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "disk-full":
        raise OSError(errno.ENOSPC, f"No space left on device (injected by {DRIVER_SETTING} = {spec})")
    raise InjectedFault(f"injected by {DRIVER_SETTING} = {spec}")
