"""Memory per Python task: an optional instrument that logs each task's peak, and a cap that shapes the tasks.

Set ``spark.sparktc.task_memory_log = "<dir>"`` (``--conf`` on spark-submit, ``[spark] conf`` in a run's
configuration, or ``spark.conf.set`` in a session: Spark SQL hands session settings to its jobs' tasks, as for
:mod:`sparktc.runtime.faults`) and every task that :func:`python_task` wraps appends one JSON line to
``<dir>/tasks-<host>-<pid>.jsonl`` on the machine it runs on (a local directory, made when missing): the sparktc stage
(from the job's group or Connect tag), what ran (``work``), Spark's stage id, partition and attempt, the task's
seconds, ``peak_bytes``, the most resident memory the Python worker held while the task ran, and ``start_bytes``,
what it held as the task started (what earlier tasks left in a reused worker).

Python workers are reused across tasks, so the process's own peak says little of one task: the peak is reset when
the task starts (Linux's ``/proc/self/clear_refs``, which sets ``VmHWM`` back to the current resident size) and read
when it ends (``VmHWM`` in ``/proc/self/status``). It includes the worker's interpreter and libraries, as a
platform's cap on a UDF's memory does. Off Linux the peak is the process's since it started (``ru_maxrss``). Unset, a
task pays two lookups of task properties.

**The cap.** ``spark.sparktc.task_memory = "1g"`` (set as the log is; Databricks serverless caps a UDF's memory at
about 1 GB) shapes the tasks whose peak grows with a setting rather than with the data they must hold: a token or
qrels file is parsed in pieces of decompressed bytes (``PIECE_BYTES`` at most), each costing about
:data:`PIECE_FACTOR` times its size while it is parsed, so a task cuts its pieces to what is left under the cap
once the file is in memory (:func:`piece_bytes`); and before a task, a worker gives back what earlier tasks freed
and drops what an earlier stage's tasks kept in it (:func:`_leave_earlier_tasks`). What the cap cannot shape (the
training set each training task holds) is checked against it before training starts
(:func:`sparktc.runtime.resources.check_training_memory`).

**Garbage collection.** A reused Python worker runs a full ``gc.collect()`` after every task (pyspark's daemon),
which walks every object the worker holds: about 100,000 once a stage's modules are imported (numpy, scipy, pyarrow,
pandas), 40 ms each time, 1.8 CPU-s of a 200,000-document run's workers. So a task first freezes (``gc.freeze``)
what its worker holds whenever the worker has imported modules since it last did (:func:`_freeze_imports`): those
collections then walk only what later tasks create. Freezing only when the imports grew bounds what it keeps from
the collector to a few tasks' closures per worker, should one hold a reference cycle.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import resource
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pyarrow as pa

from sparktc.filesystem import forget_kept
from sparktc.runtime.resources import TASK_MEMORY, parse_memory

if TYPE_CHECKING:
    from pyspark import TaskContext

SETTING = "spark.sparktc.task_memory_log"
CAP_SETTING = TASK_MEMORY
#: Resident bytes a parsing task needs per decompressed byte of the piece it parses at once (the piece, its words'
#: positions and classes, the Arrow arrays of its tokens): 18 measured on the 804,414-document corpus (pieces of 2
#: to 16 MiB of a 164 MB token file), 20 with a margin.
PIECE_FACTOR = 20
#: What a parsing task holds beside its piece and the file: its writers' row groups (25,000 documents' tokens and
#: vectors) and the Parquet encoder's buffers, 100 to 130 MiB at 804,414 documents; 160 with a margin.
TASK_RESERVE = 160 << 20
#: The smallest piece: below it the per-piece costs of the columnar reader show (1 MiB is about 1,300 documents).
MIN_PIECE_BYTES = 1 << 20
#: Where a task finds its sparktc stage's name: a classic session's job group, a Connect session's operation tags.
_LABELS = ("spark.jobGroup.id", "spark.job.tags")
_STAGE = re.compile(r"sparktc-([\w-]+)")


def _reset_peak() -> bool:
    """Set the process's peak resident size back to its current one; False where the system cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _status_bytes(field: str) -> int | None:
    """A size the kernel gives in ``/proc/self/status`` (``VmHWM``, ``VmRSS``), in bytes; None off Linux."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_bytes() -> int:
    """The process's peak resident size since the last reset (``VmHWM``), or since it started off Linux."""
    found = _status_bytes("VmHWM")
    if found is not None:
        return found
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def resident_bytes() -> int:
    """The process's resident size now (``VmRSS``); 0 where the system does not say."""
    return _status_bytes("VmRSS") or 0


def piece_bytes(largest: int, cap: int | None, resident: int) -> int:
    """The decompressed bytes to parse at a time, at most ``largest``, so that a task holding ``resident`` bytes stays
    under ``cap`` (None: no cap): the largest power-of-two fraction of ``largest`` whose :data:`PIECE_FACTOR` times
    fits in what is left beside :data:`TASK_RESERVE`, and never below :data:`MIN_PIECE_BYTES` (the smallest shape;
    whatever is over the cap then is the file itself, which only a smaller file or a larger cap changes).
    """
    if cap is None:
        return largest
    size = largest
    while size > MIN_PIECE_BYTES and resident + TASK_RESERVE + PIECE_FACTOR * size > cap:
        size //= 2
    return max(size, min(largest, MIN_PIECE_BYTES))


#: The bytes ``spark.sparktc.task_memory`` allows the task this worker runs (set by :func:`python_task` for the
#: task's length; None outside a capped task), read where the task shapes its work: the readers, which need no Spark.
_cap: int | None = None


def shaped_piece_bytes(largest: int) -> int:
    """:func:`piece_bytes` for the task running here, from its cap and its resident size now."""
    return largest if _cap is None else piece_bytes(largest, _cap, resident_bytes())


def stage_of(context: TaskContext) -> str:
    """The sparktc stage whose job runs this task, from its job group or operation tags ("" outside a stage)."""
    for key in _LABELS:
        found = _STAGE.search(context.getLocalProperty(key) or "")
        if found:
            return found.group(1)
    return ""


#: The sparktc stage of the last task this worker ran under a cap (:func:`python_task`).
_last_stage: str | None = None


def _trim_function() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim`` (glibc), which gives the heap's free pages back to the system; None elsewhere."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_trim = _trim_function() if sys.platform.startswith("linux") else None


def _leave_earlier_tasks(stage: str) -> None:
    """Under a cap, before a task: when this worker's previous task was another stage's, drop what that stage's tasks
    kept in the worker (a training set, a label index: :func:`sparktc.filesystem.forget_kept`; the scoring tasks after
    training peaked at 618 MiB against 513 in workers that had not trained); and give back to the system what earlier
    tasks freed but the allocators kept (Arrow's pool, the C heap: after ingest's qrels task a worker stayed at 492 MiB
    resident, 145 once released), which this task would otherwise carry on top of its own.
    """
    global _last_stage
    if _last_stage is not None and stage != _last_stage:
        forget_kept()
    _last_stage = stage
    gc.collect()
    pa.default_memory_pool().release_unused()
    if _trim is not None:
        _trim(0)


def _freeze_imports() -> None:
    """Before a task in a worker: freeze what the worker holds when it has imported modules since it last did (module
    docstring, "Garbage collection").
    """
    global _modules_frozen
    if len(sys.modules) > _modules_frozen:
        gc.freeze()
        _modules_frozen = len(sys.modules)


#: How many modules this worker had imported when it last froze what it held (:func:`_freeze_imports`).
_modules_frozen = 0


@contextmanager
def python_task(work: str) -> Iterator[None]:
    """Run a Python task's work (``work`` names it): under ``spark.sparktc.task_memory``, first let go of what an
    earlier stage's tasks kept in this worker; freeze what the worker imported since its last task (module docstring,
    "Garbage collection"); with ``spark.sparktc.task_memory_log``, log its peak memory (module docstring).
    """
    global _cap
    from pyspark import TaskContext  # here, in the worker: the readers that import this module need no Spark

    context = TaskContext.get()
    if context is None:
        yield
        return
    cap = context.getLocalProperty(CAP_SETTING)
    if cap:
        _leave_earlier_tasks(stage_of(context))
    _freeze_imports()
    directory = context.getLocalProperty(SETTING)
    reset = bool(directory) and _reset_peak()
    resident, started = resident_bytes() if directory else 0, time.perf_counter()
    _cap = parse_memory(cap) if cap else None
    try:
        yield
    finally:
        _cap = None
        if directory:
            _log(directory, context, work, time.perf_counter() - started, reset, resident)


def _log(directory: str, context: TaskContext, work: str, seconds: float, reset: bool, resident: int) -> None:
    """Append the task's line to this worker's file under ``directory`` (``resident``: the worker's resident bytes as
    the task started, what earlier tasks left in it).
    """
    line = {"stage": stage_of(context), "work": work, "stage_id": context.stageId(),
            "partition": context.partitionId(), "attempt": context.attemptNumber(), "seconds": round(seconds, 3),
            "peak_bytes": peak_bytes(), "start_bytes": resident, "reset": reset}
    os.makedirs(directory, exist_ok=True)
    # One file per worker process, appended line by line: no two processes write to one file.
    with open(os.path.join(directory, f"tasks-{socket.gethostname()}-{os.getpid()}.jsonl"), "a") as handle:
        handle.write(json.dumps(line) + "\n")


def work_name(function: object) -> str:
    """A short name for a task's function: its qualified name without the ``<locals>`` steps."""
    function = getattr(function, "func", function)  # a functools.partial: the function it calls
    name = getattr(function, "__qualname__", None) or type(function).__name__
    return ".".join(part for part in name.split(".") if part != "<locals>")
