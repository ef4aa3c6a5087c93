"""Measure a command's whole process tree from /proc: CPU time, resident memory by role, stage segments.

Part of the benchmark harness (:mod:`benchmarks.harness`); only the Linux ``/proc`` file system and the standard
library (no psutil), so the harness runs wherever the jobs run.

* ``/proc`` is read by :mod:`sparktc.runtime.usage`, the one reader the pipeline's own measures use too:
  :func:`~sparktc.runtime.usage.read_processes` reads ``/proc/*/stat`` once (pid, parent, name, CPU ticks), and
  :func:`~sparktc.runtime.usage.descendants` walks it from a root by parent pid.
* :func:`classify` names each process's role from its name and command line: ``jvm`` (the Spark
  JVM: driver, and the executor too in local mode), ``python_driver`` (the Python process running
  the job's script), ``python_workers`` (pyspark's daemon and the workers it forks), ``other``
  (the shell wrappers, the launcher JVM that builds the command line, helpers).
* :class:`TreeSampler` samples the tree every ``interval`` seconds in a thread: the CPU time the
  tree has used (utime + stime of its processes and cutime + cstime, the time of the children they
  have reaped; see :func:`sparktc.runtime.usage.cpu_ticks_between`) and the resident set size (``/proc/PID/statm``)
  summed per role.
* :func:`segment_bounds` cuts a run into segments at its ``sparktc: <stage> ...`` lines: ``startup``
  until the first stage begins, one segment per stage ending at the stage's own line, ``shutdown``
  after the last line; :func:`summarize_segments` gives each its wall time, CPU time and peak RSS.
* :func:`run_measured` runs a command under the sampler, reading its output line by line; where the machine lets a
  process make a cgroup v1 ``cpuacct`` group (:class:`CpuGroup`), the command runs in one of its own and every CPU
  figure is the group's exact count, processes that escape the tree included.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sparktc.runtime.usage import (
    CLOCK_TICKS,
    ProcessStat,
    cpu_ticks_between,
    descendants,
    read_cmdline,
    read_processes,
    read_rss_bytes,
)

MB = 1024 * 1024
ROLES = ("jvm", "python_driver", "python_workers", "other")
_GROUPS = itertools.count()  # one group name per command measured by this process
STAGE_LINE = re.compile(r"^sparktc: (?P<stage>\S+)\s+in\s+(?P<rows_in>[\d,]+)\s+out\s+(?P<rows_out>[\d,]+).*"
                        r"\[(?P<seconds>[\d.]+) s\]\s*$")


def classify(comm: str, cmdline: str, driver_script: str | None) -> str:
    """The role of a process in a sparktc run (one of :data:`ROLES`).

    * ``jvm``: a ``java`` process other than Spark's launcher (``org.apache.spark.launcher.Main``
      runs briefly at start-up to build the real command line; it is ``other``).
    * ``python_workers``: pyspark's daemon and the workers it forks; all of them show the
      daemon's command line ``python -m pyspark.daemon pyspark.worker`` (or ``pyspark.worker``
      alone when the daemon is off).
    * ``python_driver``: a Python process whose command line holds ``driver_script``.
    """
    program = os.path.basename(cmdline.split(" ", 1)[0]) if cmdline else comm
    if comm == "java" or program == "java":
        return "other" if "org.apache.spark.launcher.Main" in cmdline else "jvm"
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline:
        return "python_workers"
    is_python = comm.startswith("python") or program.startswith("python")
    if is_python and driver_script and driver_script in cmdline:
        return "python_driver"
    return "other"


class CpuGroup:
    """A cgroup v1 ``cpuacct`` group made for one command: the kernel counts the CPU of every process in it, and of
    every process they start, exactly, wherever in the process tree they end up (pyspark's workers re-parented when the
    JVM exits, children nobody waits for) and however short they live, which sampling ``/proc`` cannot promise.
    """

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, name: str, root: Path | None = None) -> CpuGroup | None:
        """A new empty group ``name`` under ``root`` (the cpuacct hierarchy), or None where none can be made here
        (no cgroup v1 cpuacct, or not writable): the caller then counts CPU from ``/proc``.
        """
        path = (root or cls.ROOT) / name
        try:
            path.mkdir()
        except OSError:
            return None
        return cls(path)

    def command(self, command: Sequence[str]) -> list[str]:
        """``command`` started inside the group: a shell moves itself into it, then becomes the command."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *command]

    def seconds(self) -> float:
        """CPU seconds used so far by every process that has been in the group."""
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self, timeout: float = 30.0) -> float:
        """Wait until no process is left in the group (at most ``timeout`` seconds), remove it, and return its CPU
        seconds, the stragglers' last moments included.
        """
        deadline = time.monotonic() + timeout
        while (self.path / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)
        used = self.seconds()
        try:
            self.path.rmdir()
        except OSError:  # a process outlived the timeout; the group is left for it, empty groups are cheap
            pass
        return used


@dataclass(frozen=True)
class Sample:
    """The tree at one moment: CPU seconds so far, RSS in MB per role, number of processes."""

    t: float
    cpu_seconds: float
    rss_mb: dict[str, float]
    processes: int


class TreeSampler(threading.Thread):
    """Sample the process tree under ``root`` every ``interval`` seconds until :meth:`stop`.

    :meth:`sample` may also be called from another thread (e.g. when a stage line arrives); the
    samples stay in time order.
    """

    def __init__(self, root: int, driver_script: str | None, interval: float = 0.2,
                 clock: Callable[[], float] = time.monotonic, proc: str = "/proc", group: CpuGroup | None = None
                 ) -> None:
        super().__init__(name=f"tree-sampler-{root}", daemon=True)
        self.root, self.driver_script, self.interval, self.clock, self.proc = root, driver_script, interval, clock, proc
        self.group = group  # when given, CPU is the group's exact count
        self.samples: list[Sample] = []
        self.commands: dict[int, tuple[str, str]] = {}  # pid -> (role, command line) as last seen
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._ticks = 0
        self._seen: dict[int, ProcessStat] = {}  # the tree's processes at the last sample

    def sample(self) -> Sample:
        """Read the tree now, record and return the sample.

        * A process stays in the tree once seen there, until it dies, even when its parent exits
          first and it is re-parented outside the tree (pyspark's daemon when the JVM exits).
        * A ``java`` child of the JVM is the JVM spawning a helper (Hadoop's local file system runs
          ``chmod`` that way): until it execs, it shares the JVM's memory (vfork), so its RSS is not
          added a second time.
        * CPU time is accumulated by :func:`cpu_ticks_between`, so processes that end without
          their parent collecting their time (pyspark's workers) keep what they used; with a
          :class:`CpuGroup`, CPU time is the group's count instead.
        """
        with self._lock:
            table = read_processes(self.proc)
            members = [pid for pid, seen in self._seen.items() if pid in table and table[pid].start == seen.start]
            pids = descendants([self.root, *members], table)
            current = {pid: table[pid] for pid in pids}
            self._ticks += cpu_ticks_between(self._seen, current)
            self._seen = current
            roles = {}
            for pid in pids:
                cmdline = read_cmdline(pid, self.proc)
                roles[pid] = classify(table[pid].comm, cmdline, self.driver_script)
                if cmdline:
                    self.commands[pid] = (roles[pid], cmdline[:300])
            rss = dict.fromkeys(ROLES, 0.0)
            for pid in pids:
                if roles[pid] == "jvm" and roles.get(table[pid].ppid) == "jvm":
                    continue  # a vfork-ed child of the JVM: the JVM's own pages
                rss[roles[pid]] += read_rss_bytes(pid, self.proc) / MB
            cpu = self.group.seconds() if self.group is not None else self._ticks / CLOCK_TICKS
            sample = Sample(t=self.clock(), cpu_seconds=cpu, rss_mb=rss, processes=len(pids))
            self.samples.append(sample)
            return sample

    def run(self) -> None:
        """Sample the tree every ``interval`` seconds until :meth:`stop`."""
        while not self._stopped.is_set():
            self.sample()
            self._stopped.wait(self.interval)

    def stop(self) -> None:
        """Stop sampling and wait for the thread to end."""
        self._stopped.set()
        if self.is_alive():
            self.join()


@dataclass(frozen=True)
class StageLine:
    """A parsed ``sparktc: <stage> in N out N ... [x.x s]`` line and the time it arrived."""

    t: float
    stage: str
    rows_in: int
    rows_out: int
    seconds: float


def parse_stage_line(t: float, line: str) -> StageLine | None:
    """The stage line in ``line``, or None for any other output."""
    match = STAGE_LINE.match(line.strip())
    if not match:
        return None
    return StageLine(t=t, stage=match["stage"], rows_in=int(match["rows_in"].replace(",", "")),
                     rows_out=int(match["rows_out"].replace(",", "")), seconds=float(match["seconds"]))


def segment_bounds(events: Iterable[tuple[float, str]], start: float, end: float) -> list[tuple[str, float, float]]:
    """Cut ``[start, end]`` into named segments at the stage lines among ``events`` (time, line).

    ``startup`` runs from ``start`` until the first stage began (its line's time minus the seconds
    it reports); each stage runs from the previous stage line (the first one from its beginning)
    to its own line; ``shutdown`` runs from the last stage line to ``end``. Without a stage line
    the whole run is one segment, ``run``.
    """
    stages = [s for s in (parse_stage_line(t, line) for t, line in events) if s is not None]
    if not stages:
        return [("run", start, end)]
    first_start = min(max(start, stages[0].t - stages[0].seconds), stages[0].t)
    bounds = [("startup", start, first_start)]
    previous = first_start
    for stage in stages:
        bounds.append((stage.stage, previous, stage.t))
        previous = stage.t
    bounds.append(("shutdown", previous, max(previous, end)))
    return bounds


@dataclass
class Segment:
    """One segment of a run: its wall and CPU seconds and the peak RSS (MB) of each role in it."""

    name: str
    start: float
    end: float
    cpu_seconds: float
    peak_rss_mb: dict[str, float]
    samples: int

    @property
    def wall_seconds(self) -> float:
        """The segment's wall-clock length in seconds."""
        return self.end - self.start


def cpu_at(samples: Sequence[Sample], t: float) -> float:
    """CPU seconds of the tree at time ``t``: the last sample at or before ``t`` (0 before the first)."""
    value = 0.0
    for sample in samples:
        if sample.t > t:
            break
        value = sample.cpu_seconds
    return value


def summarize_segments(bounds: Sequence[tuple[str, float, float]], samples: Sequence[Sample],
                       final_cpu_seconds: float | None = None) -> list[Segment]:
    """Wall, CPU and peak RSS per segment from time-ordered ``samples``.

    A segment's peak RSS is the largest sample taken inside it, ends included; a segment too
    short to hold a sample takes the last sample before it. CPU is the difference of the tree's
    CPU time at the segment's ends; ``final_cpu_seconds`` (the whole tree's CPU time once it has
    exited, e.g. from ``wait4``) replaces the sampled value at the end of the last segment.
    """
    segments = []
    for index, (name, start, end) in enumerate(bounds):
        inside = [s for s in samples if start <= s.t <= end]
        if not inside:
            before = [s for s in samples if s.t < start]
            inside = before[-1:]
        peak = {role: max((s.rss_mb.get(role, 0.0) for s in inside), default=0.0) for role in ROLES}
        peak["total"] = max((sum(s.rss_mb.values()) for s in inside), default=0.0)
        last = index == len(bounds) - 1
        cpu_end = final_cpu_seconds if last and final_cpu_seconds is not None else cpu_at(samples, end)
        segments.append(Segment(name=name, start=start, end=end, cpu_seconds=max(0.0, cpu_end - cpu_at(samples, start)),
                                peak_rss_mb=peak, samples=sum(1 for s in samples if start <= s.t <= end)))
    return segments


@dataclass
class Measured:
    """A finished command: exit code, times, output events (time, line), samples and the output's tail."""

    command: list[str]
    returncode: int
    start: float
    end: float
    events: list[tuple[float, str]]
    samples: list[Sample]
    tail: list[str]
    cpu_seconds: float  # the whole tree: its cgroup's count, else wait4's rusage of the root or the last sample
    commands: dict[int, tuple[str, str]] = field(default_factory=dict)
    cpu_source: str = "proc"  # "cgroup": every CPU figure is the command's own cpuacct group's exact count

    @property
    def seconds(self) -> float:
        """The command's wall-clock time in seconds."""
        return self.end - self.start

    def segments(self) -> list[Segment]:
        """The command's segments, cut at its stage lines, each with its wall and CPU seconds and peak RSS by role."""
        return summarize_segments(segment_bounds(self.events, self.start, self.end), self.samples, self.cpu_seconds)

    def peak_rss_mb(self) -> dict[str, float]:
        """Peak RSS per role (and of the sum of all roles) over the whole run."""
        peak = {role: max((s.rss_mb.get(role, 0.0) for s in self.samples), default=0.0) for role in ROLES}
        peak["total"] = max((sum(s.rss_mb.values()) for s in self.samples), default=0.0)
        return peak


def run_measured(command: Sequence[str], cwd: str | Path, log: Path, driver_script: str | None,
                 interval: float = 0.2, echo: Callable[[str], None] | None = None,
                 tail_lines: int = 40, clock: Callable[[], float] = time.monotonic) -> Measured:
    """Run ``command`` (stderr merged into stdout) under a :class:`TreeSampler`, reading its output line by line.

    Every line goes to ``log``; stage lines also trigger a sample (so stage boundaries have exact
    CPU figures) and, with ``echo``, every stage line is passed to it as it arrives. Where a
    :class:`CpuGroup` can be made, the command runs in its own and CPU is the group's count, read
    once every process of the group has ended. Elsewhere the root is reaped with ``os.wait4``: its
    rusage holds the CPU time of every process reaped inside the tree up to its exit. Raises nothing
    on a non-zero exit: the caller decides (see :attr:`Measured.returncode` and :attr:`Measured.tail`).
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    events: list[tuple[float, str]] = []
    tail: deque[str] = deque(maxlen=tail_lines)
    group = CpuGroup.create(f"sparktc-benchmark-{os.getpid()}-{next(_GROUPS)}")
    with open(log, "w") as out:
        start = clock()
        process = subprocess.Popen(group.command(command) if group else list(command), cwd=cwd, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
        sampler = TreeSampler(process.pid, driver_script, interval=interval, clock=clock, group=group)
        sampler.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                out.write(line)
                tail.append(line.rstrip("\n"))
                if line.startswith("sparktc:"):
                    events.append((sampler.sample().t, line.rstrip("\n")))
                    if echo is not None:
                        echo(line.rstrip("\n"))
            _, status, usage = os.wait4(process.pid, 0)
            end = clock()
            process.returncode = os.waitstatus_to_exitcode(status)
        except BaseException:
            process.kill()
            process.wait()
            if group is not None:
                group.close(timeout=5.0)
            raise
        finally:
            sampler.stop()
            if process.stdout is not None:
                process.stdout.close()
    if group is not None:
        cpu = group.close()
    else:  # wait4 counts every process reaped inside the tree; the samples also count those that were not.
        cpu = max(usage.ru_utime + usage.ru_stime, sampler.samples[-1].cpu_seconds if sampler.samples else 0.0)
    return Measured(command=list(command), returncode=process.returncode, start=start, end=end, events=events,
                    samples=sampler.samples, tail=list(tail), cpu_seconds=cpu, commands=dict(sampler.commands),
                    cpu_source="proc" if group is None else "cgroup")
