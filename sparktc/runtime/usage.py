"""CPU-seconds and peak memory of the run's process tree, per stage, read from ``/proc`` (Linux).

The tree is the driver's Python process, the JVM that runs Spark's driver and, in local mode, the
executors and their Python workers: under ``spark-submit`` the JVM is the driver's parent, in a notebook
or a test its child, and the workers are the JVM's descendants. A process's CPU counts its own time and
that of the children it has reaped (``utime + stime + cutime + cstime``), so workers that have exited
are still counted by the daemon that forked them. On a cluster the executors run elsewhere: the tree is
the driver's alone, and :attr:`ProcessTree.complete` says so. Where ``/proc`` is missing nothing is
measured (None), never guessed.

The readers of ``/proc`` (:func:`read_processes`, :func:`descendants`, :func:`read_cmdline`, :func:`read_rss_bytes`,
:func:`cpu_ticks_between`) are the one home of that knowledge: the benchmarks' sampler, which follows a command's
tree by role and counts the CPU of processes that vanish unreaped, is built on them (``benchmarks/harness_measure.py``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

PROC = "/proc"
SAMPLE_SECONDS = 1.0  # 1.3 ms of CPU per sample with 100 processes on the machine: 0.13% of a core
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: The JVM spark-submit starts: the driver's parent when a job runs under spark-submit.
SPARK_SUBMIT = "org.apache.spark.deploy.SparkSubmit"


@dataclass(frozen=True)
class ProcessStat:
    """One line of ``/proc/PID/stat``: parent pid, name, CPU ticks, start time, resident bytes."""

    pid: int
    ppid: int
    comm: str
    own_ticks: int  # utime + stime
    children_ticks: int = 0  # cutime + cstime: the children it has waited for, with their own children
    start: int = 0  # clock ticks after boot: tells a process from a later one with the same pid
    rss_bytes: int = 0  # resident set size

    @property
    def ticks(self) -> int:
        """The process's CPU ticks with those of the children it has waited for."""
        return self.own_ticks + self.children_ticks


def parse_stat(text: str) -> ProcessStat:
    """Parse ``/proc/PID/stat``; the name is between the first '(' and the LAST ')' (it may hold either)."""
    pid = int(text[: text.index(" ")])
    comm = text[text.index("(") + 1: text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()  # fields[0] is field 3 (state) of proc(5)
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])  # fields 14..17
    return ProcessStat(pid=pid, ppid=int(fields[1]), comm=comm, own_ticks=utime + stime,
                       children_ticks=cutime + cstime, start=int(fields[19]),  # start time: field 22
                       rss_bytes=int(fields[21]) * PAGE_BYTES)  # rss (pages): field 24


def read_processes(proc: str = PROC) -> dict[int, ProcessStat]:
    """Every process of the machine (those that vanish while being read are left out)."""
    table = {}
    for name in os.listdir(proc):
        if name.isdigit():
            try:
                with open(f"{proc}/{name}/stat") as handle:
                    table[int(name)] = parse_stat(handle.read())
            except (OSError, ValueError, IndexError):
                continue
    return table


def descendants(root: int | Sequence[int], table: dict[int, ProcessStat]) -> list[int]:
    """The live processes among ``root`` (one pid or several) and all their descendants, by parent pid, once each."""
    children: dict[int, list[int]] = {}
    for stat in table.values():
        children.setdefault(stat.ppid, []).append(stat.pid)
    roots = [root] if isinstance(root, int) else list(root)
    found: dict[int, None] = {}
    pending = [pid for pid in reversed(roots) if pid in table]
    while pending:
        pid = pending.pop()
        if pid not in found:
            found[pid] = None
            pending.extend(children.get(pid, ()))
    return list(found)


def read_cmdline(pid: int, proc: str = PROC) -> str:
    """The command line, arguments separated by spaces ('' for a vanished process or a zombie)."""
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def read_rss_bytes(pid: int, proc: str = PROC) -> int:
    """Resident set size from ``/proc/PID/statm`` (pages x page size); 0 for a vanished process."""
    try:
        with open(f"{proc}/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return 0


def cpu_ticks_between(before: dict[int, ProcessStat], after: dict[int, ProcessStat]) -> int:
    """CPU ticks the tree used between two readings of its processes (pid -> stat).

    Summing utime + stime + cutime + cstime over the live processes is not enough: a process whose
    parent never waits for it (pyspark's workers, killed by a daemon that ignores SIGCHLD at
    shutdown; orphans reaped by init) takes its time with it. Instead, increments are added up:

    * a process seen for the first time brings all it has used (it started during the run);
    * a process seen before adds the growth of its own time, and the growth of its children's time
      minus what the processes that vanished under it had already been counted for (their last
      reading, with that of their own vanished children), so a child is never counted twice and
      the last moments of a reaped child, and children too short-lived to be seen, are counted;
    * a process that vanished adds nothing more: it keeps what it had at its last reading.

    When the children's time of a parent grows by less than its vanished children had, some of them
    were not waited for; the growth is then taken as theirs and nothing more is added (at worst the
    last moments of those children, and unseen ones, are missed).
    """
    def same(pid: int) -> bool:
        return pid in after and after[pid].start == before[pid].start

    gone = [pid for pid in before if not same(pid)]
    carried = {pid: before[pid].ticks for pid in gone}  # what a vanished process hands its parent
    for pid in sorted(gone, key=lambda p: depth(p, before), reverse=True):
        parent = before[pid].ppid
        if parent in carried:
            carried[parent] += carried[pid]
    absorbed: dict[int, int] = {}
    for pid in gone:
        parent = before[pid].ppid
        if parent not in carried:
            absorbed[parent] = absorbed.get(parent, 0) + carried[pid]
    ticks = 0
    for pid, stat in after.items():
        if pid not in before or not same(pid):
            ticks += stat.ticks
            continue
        ticks += max(0, stat.own_ticks - before[pid].own_ticks)
        ticks += max(0, stat.children_ticks - before[pid].children_ticks - absorbed.get(pid, 0))
    return ticks


def depth(pid: int, table: dict[int, ProcessStat]) -> int:
    """How many ancestors of ``pid`` are in ``table``."""
    levels, seen = 0, {pid}
    while table[pid].ppid in table and table[pid].ppid not in seen:
        pid = table[pid].ppid
        seen.add(pid)
        levels += 1
    return levels


def tree_root() -> int:
    """The process whose descendants are the run: the spark-submit JVM when it is our parent, else this process."""
    parent = os.getppid()
    return parent if SPARK_SUBMIT in read_cmdline(parent) else os.getpid()


def tree_usage(root: int) -> tuple[float, int] | None:
    """(CPU-seconds, resident bytes) summed over ``root`` and its live descendants; None without ``/proc``."""
    if not os.path.isdir(f"{PROC}/{root}"):
        return None
    table = read_processes()
    tree = [table[pid] for pid in descendants(root, table)]
    return sum(stat.ticks for stat in tree) / CLOCK_TICKS, sum(stat.rss_bytes for stat in tree)


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
