"""Progress lines: how far a long stage's Spark jobs, or a long loop on the driver, have got.

Two sources, one kind of line, both written to one stream (stderr unless :func:`configure` names another):

- :func:`stages` watches each stage of a run (the runner's ``watch``): a daemon thread polls Spark's status
  tracker every :data:`POLL_SECONDS` for the jobs of the stage's job group (``sparktc-<stage>``, set by
  :func:`sparktc.runtime.stage_report.stage` and the runner), and prints the tasks done / total of the jobs seen
  so far in the stage and of the current job (the latest one running), the stage's elapsed time and the time
  the current job has left, estimated at its rate so far (its seconds since first seen / its tasks done x its
  tasks left). Jobs to come are unknown to Spark until submitted, so no estimate covers the whole stage. A job's
  total counts every task of its stages, also of a stage Spark then skips (its shuffle output kept from an
  earlier job): such a job ends below its total, and a finished job counts the tasks it ran. A line is printed
  only while one of the stage's jobs runs (driver work between jobs shows the loop lines below, if any).
- :func:`loop` counts a driver-side loop's steps (NNet's epochs, LLSF's fold models, the summing of the training
  files' sums): steps done / total, elapsed time and the time left at the mean time per step so far.

Modes: ``tty`` rewrites one line in place (a carriage return, erased at the end, and before a stage's summary line:
:func:`cleared`); ``log`` appends a line at most once every ``interval`` seconds; ``auto`` is ``tty`` when the
stream is a terminal or the process is a notebook's kernel (IPython's, as Jupyter and Databricks run) and ``log``
otherwise; ``off`` prints nothing and starts no thread. In a notebook's kernel the line in place is one widget per
cell when ipywidgets imports (the notebook extra has it): a bar of the current job's (or loop's) fraction done and
the line beside it, shown in the cell where its first line comes and updated in place, hidden where the line would be
erased. Without ipywidgets it is text: a notebook's output renders the carriage return but no terminal escape, so
there the line is padded with spaces over the longer one it replaces, and erased with spaces. Spark's own console bar
(``[Stage N:==>]``, which a kernel's session shows: pyspark starts it as a shell) writes into the same cell; a
notebook's session turns it off with ``spark.ui.showConsoleProgress=false`` (docs/notebooks.md).
Under spark-submit the driver's stderr is never a terminal: Spark's PythonRunner pipes it, merged with stdout, to
spark-submit's stdout. So ``spark-submit.sh`` sets :data:`TERMINAL_ENV` to 1 when its own stdout is a terminal, and
``auto`` takes that as the stream being one. In every mode nothing is printed before ``interval`` seconds have
passed, so a short stage or loop prints nothing.

Before :func:`configure` the mode is ``off``: only the driver configures (the pipeline, from ``[progress]``), so
the models' loops running inside Spark tasks (NNet's epochs, LLSF's SVDs in tasks, the per-category threshold
searches) print nothing into the executors' logs; the stage's line counts those tasks. Nothing here imports
pyspark: the models use :func:`loop` and must import without it.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

__all__ = ["MODES", "POLL_SECONDS", "TERMINAL_ENV", "JobTasks", "ProgressLine", "StageWatch", "Widget", "configure",
           "cleared", "current_job", "duration", "loop", "loop_line", "stage_line", "stages", "time_left"]

MODES = ("auto", "tty", "log", "off")
#: Set to 1 by spark-submit.sh when the terminal it runs on gets the driver's output (through the JVM's pipe).
TERMINAL_ENV = "SPARKTC_TERMINAL"
#: Seconds between two polls of Spark's status tracker (at most; never more than the interval).
POLL_SECONDS = 1.0
#: Erase the terminal line from the cursor to its end (ANSI EL).
_ERASE = "\x1b[K"


@dataclass
class _Settings:
    in_place: bool | None = None  # None: off
    interval: float = 10.0
    stream: TextIO | None = None
    padded: bool = False  # in place with spaces, not escapes: a notebook's output
    widget: Widget | None = None  # in place as a widget: a notebook's output, ipywidgets importable


_settings = _Settings()
#: One writer at a time: a stage's polling thread and the driver's loops share the stream (and its in-place line).
_lock = threading.Lock()
#: The length of the in-place line on the terminal now, 0 for none (to erase before anything else is printed).
_drawn = 0
#: The clock lines are timed by (tests replace it).
clock: Callable[[], float] = time.monotonic


def configure(mode: str, interval: float, stream: TextIO | None = None) -> None:
    """Set the process's progress lines from ``[progress] mode, interval``: ``mode`` auto|tty|log|off, ``interval``
    seconds before the first line and between two appended lines; ``stream`` defaults to stderr.
    """
    if mode not in MODES:
        raise ValueError(f"progress mode {mode!r}: one of {', '.join(MODES)}")
    if interval <= 0:
        raise ValueError(f"progress interval {interval}: a number of seconds > 0")
    target = sys.stderr if stream is None else stream
    terminal, kernel = _is_terminal(target), _in_kernel()
    in_place = None if mode == "off" else mode == "tty" or (mode == "auto" and (terminal or kernel))
    _settings.in_place, _settings.interval, _settings.stream = in_place, float(interval), target
    _settings.padded = kernel and not terminal
    _settings.widget = Widget.made() if in_place and _settings.padded else None


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or os.environ.get(TERMINAL_ENV) == "1"


def _shell() -> Any:
    """IPython's shell, when IPython is imported (never imported here: it is no dependency); else None."""
    return getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()


def _in_kernel() -> bool:
    """Whether this process is a notebook's IPython kernel: IPython, already imported by the kernel, has a shell with a
    kernel.
    """
    return getattr(_shell(), "kernel", None) is not None


def _display(widget: Any) -> None:
    """Show ``widget`` in the output of the cell running now."""
    from IPython.display import display

    display(widget)


class Widget:
    """A notebook's progress (module docstring): one ipywidgets bar and line per cell, made and shown (:func:`_display`)
    when the cell's first line comes, then updated in place; hidden (not removed) where a line would be erased.
    """

    def __init__(self, widgets: Any):
        self.widgets, self.cell, self.box = widgets, None, None

    @staticmethod
    def made() -> Widget | None:
        """A widget when ipywidgets imports, else None (the text line)."""
        try:
            import ipywidgets
        except ImportError:
            return None
        return Widget(ipywidgets)

    def show(self, text: str, fraction: float | None) -> None:
        """Show ``text`` and the bar at ``fraction`` (None: unknown, left empty) in the running cell's widget."""
        cell = getattr(_shell(), "execution_count", None)
        if self.box is None or cell != self.cell:
            bar = self.widgets.FloatProgress(min=0.0, max=1.0)
            self.box = self.widgets.HBox([bar, self.widgets.Label()])
            self.cell = cell
            _display(self.box)
        bar, label = self.box.children
        bar.value, label.value = min(1.0, max(0.0, fraction or 0.0)), text
        self.box.layout.display = None  # shown again after a hide

    def hide(self) -> None:
        """Hide the cell's widget (drawn again at its next line)."""
        if self.box is not None:
            self.box.layout.display = "none"


def duration(seconds: float) -> str:
    """``seconds`` as 45s, 3m05s or 2h07m."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def time_left(done: float, total: float, elapsed: float) -> float | None:
    """The time ``total - done`` more units take at the mean rate so far (``elapsed`` / ``done``); None before the
    first unit is done.
    """
    if done <= 0:
        return None
    return elapsed / done * max(0.0, total - done)


def _left(done: float, total: float, elapsed: float) -> str:
    left = time_left(done, total, elapsed)
    return "time left unknown" if left is None else f"~{duration(left)} left"


def loop_line(label: str, done: int, total: int, elapsed: float) -> str:
    """A driver loop's line: its steps done / total, elapsed time, time left at the mean time per step so far."""
    return f"sparktc: {label} {done:,}/{total:,}  {duration(elapsed)} elapsed, {_left(done, total, elapsed)}"


@dataclass(frozen=True)
class JobTasks:
    """One Spark job's tasks: its id, tasks done and total, whether it still runs, and the seconds since it was
    first seen.
    """

    job: int
    done: int
    total: int
    running: bool
    seconds: float


def current_job(jobs: list[JobTasks]) -> JobTasks:
    """The job a stage's line follows: the latest running one, or else the latest."""
    return max([job for job in jobs if job.running] or jobs, key=lambda job: job.job)


def stage_line(stage: str, jobs: list[JobTasks], elapsed: float) -> str:
    """A stage's line: the tasks done / total of its ``jobs`` so far and of the current one (:func:`current_job`),
    the stage's elapsed time, and the current job's time left at its rate so far.
    """
    current = current_job(jobs)
    done, total = sum(job.done for job in jobs), sum(job.total for job in jobs)
    plural = "job" if len(jobs) == 1 else "jobs"
    return (f"sparktc: {stage:<9} {duration(elapsed)}  tasks {done:,}/{total:,} ({len(jobs)} {plural} so far)  "
            f"job {current.job}: {current.done:,}/{current.total:,}, "
            f"{_left(current.done, current.total, current.seconds)}")


class ProgressLine:
    """One stage's or loop's line on ``stream``: nothing before ``interval`` seconds from ``started``; then in place
    (``in_place``: every :meth:`show` rewrites the terminal line) or appended, at most once every ``interval``.
    """

    def __init__(self, in_place: bool, interval: float, stream: TextIO, started: float):
        self.in_place, self.interval, self.stream = in_place, interval, stream
        self.started, self.last = started, None

    def show(self, text: str, now: float, fraction: float | None = None) -> None:
        """Print ``text`` (timed ``now``; ``fraction`` done, for a notebook's bar) unless it is too early."""
        global _drawn
        if now - self.started < self.interval:
            return
        if not self.in_place and self.last is not None and now - self.last < self.interval:
            return
        with _lock:
            if self.in_place and _settings.widget is not None:
                _settings.widget.show(text, fraction)
                self.last = now
                return
            if self.in_place:
                if _settings.padded:  # a notebook rewrites its text, however it wraps it
                    self.stream.write(f"\r{text.ljust(_drawn)}")
                else:
                    text = text[:shutil.get_terminal_size().columns - 1]  # a wrapped line cannot be rewritten by \r
                    self.stream.write(f"\r{text}{_ERASE}")
                _drawn = len(text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        self.last = now

    def hide(self) -> None:
        """Erase the in-place line, if one is drawn (the end of the stage or loop, or no job running)."""
        if self.in_place:
            with _lock:
                if _settings.widget is not None:
                    _settings.widget.hide()
                _erase(self.stream)


def _erase(stream: TextIO) -> None:
    global _drawn
    if _drawn:
        stream.write(f"\r{' ' * _drawn}\r" if _settings.padded else f"\r{_ERASE}")
        stream.flush()
        _drawn = 0


def _line() -> ProgressLine | None:
    """A line under the process's settings, started now; None when progress is off."""
    if _settings.in_place is None or _settings.stream is None:
        return None
    return ProgressLine(_settings.in_place, _settings.interval, _settings.stream, clock())


@contextmanager
def cleared() -> Iterator[None]:
    """Print something clean while the block runs: the in-place line is erased first (it is drawn again at its
    next update) and held back until the block ends.
    """
    with _lock:
        if _settings.stream is not None:
            _erase(_settings.stream)
        yield


@contextmanager
def loop(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A driver loop of ``total`` steps, named ``label``: yields ``step(n=1)``, to call as steps are done."""
    line, done = _line(), 0

    def step(n: int = 1) -> None:
        nonlocal done
        done += n
        if line is not None:
            now = clock()
            line.show(loop_line(label, done, total, now - line.started), now, done / total if total else None)

    try:
        yield step
    finally:
        if line is not None:
            line.hide()


#: A stage's jobs so far: (running, tasks done, tasks) by job (a classic session's job id, a Connect operation id),
#: None for a job Spark has forgotten.
Jobs = Callable[[], dict[Any, tuple[bool, int, int] | None]]


def _watch(name: str, jobs: Jobs, line: ProgressLine, stop: threading.Event) -> None:
    """Poll stage ``name``'s ``jobs`` until ``stop``."""
    first_seen: dict[Any, float] = {}
    while not stop.wait(min(POLL_SECONDS, line.interval)):
        now = clock()
        found = jobs()
        for job in sorted(found, key=str):
            first_seen.setdefault(job, now)
        tasks = []
        for position, (job, seen) in enumerate(first_seen.items()):
            state = found.get(job)
            if state is not None:
                running, done, total = state
                tasks.append(JobTasks(position, done, total if running else done, running, now - seen))
        if any(job.running for job in tasks):
            current = current_job(tasks)
            line.show(stage_line(name, tasks, now - line.started), now,
                      current.done / current.total if current.total else None)
        else:
            line.hide()


class StageWatch(Protocol):
    """What watches each stage of a run (its usage, its progress; :func:`sparktc.runtime.runner.run_stages`'s
    ``watch``): entered before the stage, left after it.
    """

    def __call__(self, stage: str) -> AbstractContextManager[Any]:
        """The context the stage named ``stage`` runs in."""
        ...


def stages(spark: Any) -> StageWatch:
    """The runner's ``watch`` (:class:`StageWatch`) printing each stage's progress line (module docstring): from
    a classic session's status tracker, polled for the stage's job group, or from a Spark Connect session's
    progress reports (``registerProgressHandler``) of the operations run while the stage runs; no thread when
    progress is off.
    """

    @contextmanager
    def watching(stage: str) -> Iterator[None]:
        line = _line()
        if line is None:
            yield
            return
        with _jobs_of(spark, stage) as jobs:
            stop = threading.Event()
            thread = threading.Thread(target=_polling, args=(stage, jobs, line, stop),
                                      name=f"sparktc-progress-{stage}", daemon=True)
            thread.start()
            try:
                yield
            finally:
                stop.set()
                thread.join()
                line.hide()

    return watching


@contextmanager
def _jobs_of(spark: Any, stage: str) -> Iterator[Jobs]:
    """The :data:`Jobs` of ``stage`` while the block runs (pyspark imported here: the models import this module)."""
    from sparktc.runtime import classic

    if classic.is_classic(spark):
        earlier = classic.job_ids(spark, stage)  # another run's, in the same session
        # A job that has ended keeps its counts: asked once, not at every poll (each ask is a JVM round trip per
        # job and per stage attribute, and a stage's jobs add up).
        ended: dict[Any, tuple[bool, int, int]] = {}

        def tracked() -> dict[Any, tuple[bool, int, int] | None]:
            found: dict[Any, tuple[bool, int, int] | None] = {}
            for job in classic.job_ids(spark, stage) - earlier:
                tasks = ended.get(job) or classic.stage_tasks(spark, job)
                if tasks is not None and not tasks[0]:
                    ended[job] = tasks
                found[job] = tasks
            return found

        yield tracked
        return
    reported: dict[Any, tuple[bool, int, int]] = {}

    def handler(stages: Any, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        stages = list(stages or [])
        reported[operation_id] = (not done, sum(found.num_completed_tasks for found in stages),
                                  sum(found.num_tasks for found in stages))

    spark.registerProgressHandler(handler)
    try:
        yield lambda: dict(reported)
    finally:
        spark.removeProgressHandler(handler)


def _polling(stage: str, jobs: Jobs, line: ProgressLine, stop: threading.Event) -> None:
    try:
        _watch(stage, jobs, line, stop)
    except Exception:  # a progress line never fails a run: a tracker gone (Spark stopped) ends it
        return
