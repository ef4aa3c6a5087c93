"""CPU-seconds and peak memory of the run's process tree, per stage, read from ``/proc`` (Linux).

The tree is the driver's Python process, the JVM that runs Spark's driver and, in local mode, the
executors and their Python workers: under ``spark-submit`` the JVM is the driver's parent, in a notebook
or a test its child, and the workers are the JVM's descendants. A process's CPU counts its own time and
that of the children it has reaped (``utime + stime + cutime + cstime``), so workers that have exited
are still counted by the daemon that forked them. On a cluster the executors run elsewhere: the tree is
the driver's alone, and :attr:`ProcessTree.complete` says so. Where ``/proc`` is missing nothing is
measured (None), never guessed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

PROC = "/proc"
SAMPLE_SECONDS = 1.0  # 1.3 ms of CPU per sample with 100 processes on the machine: 0.13% of a core
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: The JVM spark-submit starts: the driver's parent when a job runs under spark-submit.
SPARK_SUBMIT = b"org.apache.spark.deploy.SparkSubmit"


def _stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, CPU-seconds with reaped children, resident bytes) of ``pid``; None when it is gone."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2:].split()  # the command name may hold spaces and parentheses
    # fields[0] is field 3 (state) of proc(5): ppid is 4, utime..cstime 14..17, rss 24
    cpu = sum(int(value) for value in fields[11:15]) / _TICKS
    return int(fields[1]), cpu, int(fields[21]) * _PAGE


def _command(pid: int) -> bytes:
    try:
        with open(f"{PROC}/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def tree_root() -> int:
    """The process whose descendants are the run: the spark-submit JVM when it is our parent, else this process."""
    parent = os.getppid()
    return parent if SPARK_SUBMIT in _command(parent) else os.getpid()


def tree_usage(root: int) -> tuple[float, int] | None:
    """(CPU-seconds, resident bytes) summed over ``root`` and its live descendants; None without ``/proc``."""
    if not os.path.isdir(f"{PROC}/{root}"):
        return None
    stats = {}
    for name in os.listdir(PROC):
        if name.isdigit():
            found = _stat(int(name))
            if found is not None:
                stats[int(name)] = found
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    cpu, rss, stack = 0.0, 0, [root]
    while stack:
        pid = stack.pop()
        if pid in stats:
            cpu, rss = cpu + stats[pid][1], rss + stats[pid][2]
            stack.extend(children.get(pid, ()))
    return cpu, rss


@dataclass
class StageUsage:
    """One stage's wall time, CPU-seconds and peak resident memory of the process tree (None: not measured)."""

    stage: str
    seconds: float = 0.0
    cpu_seconds: float | None = None
    peak_memory_bytes: int | None = None


@dataclass
class ProcessTree:
    """Samples the run's process tree every :data:`SAMPLE_SECONDS` in a daemon thread; :meth:`stage` measures one.

    ``complete`` is False when executors run outside this machine's tree (any master but ``local``): the figures
    are then the driver's only.
    """

    complete: bool = True
    root: int = field(default_factory=tree_root)
    stages: list[StageUsage] = field(default_factory=list)
    _peak: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _sample(self) -> tuple[float, int] | None:
        found = tree_usage(self.root)
        if found is not None:
            with self._lock:
                self._peak = max(self._peak, found[1])
        return found

    def _watch(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    @contextmanager
    def running(self) -> Iterator[ProcessTree]:
        """Sample the tree in the background while the block runs."""
        thread = threading.Thread(target=self._watch, name="sparktc-usage", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()

    @contextmanager
    def stage(self, name: str) -> Iterator[StageUsage]:
        """Measure the block as stage ``name`` (appended to :attr:`stages`, also when the block fails)."""
        usage = StageUsage(name)
        self.stages.append(usage)
        with self._lock:
            self._peak = 0
        before, started = self._sample(), time.perf_counter()
        try:
            yield usage
        finally:
            after = self._sample()
            usage.seconds = round(time.perf_counter() - started, 3)
            if before is not None and after is not None:
                usage.cpu_seconds = round(after[0] - before[0], 2)
                with self._lock:
                    usage.peak_memory_bytes = self._peak
