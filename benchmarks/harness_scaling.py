r"""Part of the benchmark harness (:mod:`benchmarks.harness`): a run's Spark event log replayed on N task slots,
the model ``benchmarks/scaling.py`` prints and ``benchmarks/rcv1_scale.py --event-logs`` records (its docstring says
the model: Sparklens's).
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparktc.errors import InputError

CORES = (1, 2, 4, 16, 64)
GROUP_PREFIX = "sparktc-"
NO_STAGE = "(no stage)"
OUTSIDE = "outside stages"
ROLLING_PART = re.compile(r"events_(\d+)_")
UNREADABLE_CODECS = (".lz4", ".lzf", ".snappy")


@dataclass(frozen=True)
class StageRun:
    """One Spark stage of a job: its id, its parents' ids and its tasks' slot seconds, in launch order."""

    stage_id: int
    parents: tuple[int, ...] = ()
    tasks: tuple[float, ...] = ()


@dataclass(frozen=True)
class JobRun:
    """One Spark job (or jobs that overlapped in time, merged): the sparktc stage it belongs to, its submission and
    completion (seconds from the application's start), its stages and the seconds inside it where no task ran.
    """

    label: str
    submitted: float
    completed: float
    stages: tuple[StageRun, ...]
    idle: float = 0.0


@dataclass(frozen=True)
class Application:
    """A run as the event log tells it: its wall (seconds), its executors' cores and its jobs in submission order."""

    wall: float
    cores: int
    jobs: tuple[JobRun, ...]


@dataclass(frozen=True)
class StageLine:
    """One line of the projection: a sparktc stage's tasks, task-seconds, serial driver seconds and projected walls."""

    label: str
    tasks: int
    task_seconds: float
    driver_seconds: float
    walls: dict[int, float]


# --- reading the log ---------------------------------------------------------------------------------------------

def event_files(path: Path) -> list[Path]:
    """The event-log files of one application at ``path`` (a file, a rolling ``eventlog_v2_*`` directory, or an
    ``spark.event_log`` directory holding one application), in the order Spark wrote them.
    """
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: no such event log; give the directory of --set spark.event_log=DIR or a file in it")
    rolling = sorted(path.glob("events_*"), key=lambda part: int(m.group(1)) if (m := ROLLING_PART.match(part.name))
                     else 0)
    if rolling:
        return rolling
    applications = sorted(entry for entry in path.iterdir() if not entry.name.startswith(".")
                          and not entry.name.endswith(".crc"))
    if len(applications) != 1:
        names = ", ".join(entry.name for entry in applications) or "nothing"
        raise InputError(f"{path}: expected one application's event log, found {names}; give one of them")
    return event_files(applications[0])


def read_lines(path: Path) -> Iterator[str]:
    """The JSON lines of one event-log file: plain, or zstd-compressed (Spark's default codec)."""
    name = path.name.removesuffix(".inprogress")
    if name.endswith(UNREADABLE_CODECS):
        raise InputError(f"{path}: an event log in Spark's {name.rsplit('.', 1)[1]} framing, which this cannot read; "
                         "rerun with --set spark.conf.spark.eventLog.compression.codec=zstd (the default)")
    if name.endswith((".zstd", ".zst")):
        import pyarrow as pa

        with pa.CompressedInputStream(pa.OSFile(str(path)), "zstd") as stream:
            data = stream.read()
    else:
        data = path.read_bytes()
    yield from data.decode("utf-8").splitlines()


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """The events of the application logged at ``path``, each line parsed (blank lines skipped)."""
    for file in event_files(path):
        for number, line in enumerate(read_lines(file), 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as error:
                    raise InputError(f"{file}, line {number}: not a JSON event ({error.msg}); "
                                     "give a Spark event log") from None


def _label(properties: dict[str, Any] | None) -> str:
    group = (properties or {}).get("spark.jobGroup.id") or ""
    return group.removeprefix(GROUP_PREFIX) if group.startswith(GROUP_PREFIX) else NO_STAGE


def _covered(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end] that at least one of ``intervals`` covers."""
    total, reached = 0.0, start
    for begin, finish in sorted(intervals):
        begin, finish = max(begin, reached), min(finish, end)
        if finish > begin:
            total += finish - begin
            reached = finish
    return total


def parse_events(events: Iterable[dict[str, Any]]) -> Application:
    """The application's jobs from its listener events (``SparkListenerApplicationStart``/``End``,
    ``ExecutorAdded``, ``JobStart``/``End``, ``TaskEnd``); times in seconds from the application's start.
    """
    start = end = None
    cores = 0
    jobs: dict[int, dict[str, Any]] = {}
    owner: dict[int, int] = {}  # stage id -> the first job that lists it
    tasks: dict[int, list[tuple[int, int, int]]] = {}  # stage id -> (launch, task id, finish), milliseconds
    for event in events:
        kind = event.get("Event")
        try:
            if kind == "SparkListenerApplicationStart":
                start = event["Timestamp"]
            elif kind == "SparkListenerApplicationEnd":
                end = event["Timestamp"]
            elif kind == "SparkListenerExecutorAdded":
                cores += event["Executor Info"]["Total Cores"]
            elif kind == "SparkListenerJobStart":
                parents = {info["Stage ID"]: tuple(info.get("Parent IDs", ())) for info in event["Stage Infos"]}
                jobs[event["Job ID"]] = {"label": _label(event.get("Properties")), "parents": parents,
                                         "submitted": event["Submission Time"], "completed": None}
                for stage in parents:
                    owner.setdefault(stage, event["Job ID"])
            elif kind == "SparkListenerJobEnd":
                jobs[event["Job ID"]]["completed"] = event["Completion Time"]
            elif kind == "SparkListenerTaskEnd":
                info = event["Task Info"]
                launch, finish = info["Launch Time"], info["Finish Time"]
                tasks.setdefault(event["Stage ID"], []).append((launch, info["Task ID"], finish))
        except (KeyError, TypeError) as error:
            raise InputError(f"a {kind} event without its field {error}: give an event log Spark wrote") from None
    if start is None or end is None:
        missing = "SparkListenerApplicationStart" if start is None else "SparkListenerApplicationEnd"
        raise InputError(f"the event log has no {missing}: give the log of a run that finished")
    unfinished = sorted(job for job, record in jobs.items() if record["completed"] is None)
    if unfinished:
        raise InputError(f"the event log has no SparkListenerJobEnd for job {unfinished[0]}: "
                         "give the log of a run that finished")
    runs: list[dict[str, Any]] = []  # jobs that overlap in time (driver threads) merged into one, as the first
    for job_id, record in sorted(jobs.items(), key=lambda item: (item[1]["submitted"], item[0])):
        stages, intervals = [], []
        for stage, parents in sorted(record["parents"].items()):
            ran = sorted(tasks.get(stage, [])) if owner[stage] == job_id else []
            intervals += [((launch - start) / 1000, (finish - start) / 1000) for launch, _, finish in ran]
            stages.append(StageRun(stage, parents, tuple((finish - launch) / 1000 for launch, _, finish in ran)))
        submitted, completed = (record["submitted"] - start) / 1000, (record["completed"] - start) / 1000
        if runs and submitted < runs[-1]["completed"]:
            last = runs[-1]
            last["completed"] = max(last["completed"], completed)
            last["stages"] += stages
            last["intervals"] += intervals
        else:
            runs.append({"label": record["label"], "submitted": submitted, "completed": completed, "stages": stages,
                         "intervals": intervals})
    return Application((end - start) / 1000, cores, tuple(
        JobRun(run["label"], run["submitted"], run["completed"], tuple(run["stages"]),
               run["completed"] - run["submitted"] - _covered(run["intervals"], run["submitted"], run["completed"]))
        for run in runs))


# --- the replay --------------------------------------------------------------------------------------------------

def replay(stages: Sequence[StageRun], slots: int) -> float:
    """Seconds a job's ``stages`` take on ``slots`` task slots: each stage starts when its parents among ``stages``
    have finished, stages in the order they become ready (then by id), and each task, in launch order, takes the slot
    that frees first (list scheduling, Graham 1966).
    """
    if slots < 1:
        raise ValueError(f"slots must be at least 1, got {slots}")
    known = {stage.stage_id for stage in stages}
    pending = {stage.stage_id: stage for stage in stages}
    finished: dict[int, float] = {}
    free = [0.0] * slots
    while pending:
        ready = [stage for stage in pending.values()
                 if all(parent in finished or parent not in known for parent in stage.parents)]
        if not ready:
            raise InputError(f"stages {sorted(pending)} wait on each other; the event log is inconsistent")

        def ready_at(stage: StageRun) -> float:
            return max((finished[parent] for parent in stage.parents if parent in known), default=0.0)

        stage = min(ready, key=lambda stage: (ready_at(stage), stage.stage_id))
        begins = ends = ready_at(stage)
        for task in stage.tasks:
            started = max(heapq.heappop(free), begins)
            heapq.heappush(free, started + task)
            ends = max(ends, started + task)
        finished[stage.stage_id] = ends
        del pending[stage.stage_id]
    return max(finished.values(), default=0.0)


def project(application: Application, cores: Sequence[int]) -> list[StageLine]:
    """Per sparktc stage (in the order they first ran), then ``outside stages`` and ``total``: tasks, task-seconds,
    serial driver seconds and the wall projected at each of ``cores`` (driver seconds + each job replayed).
    """
    lines: dict[str, dict[str, Any]] = {}

    def line(label: str) -> dict[str, Any]:
        return lines.setdefault(label, {"tasks": 0, "task_seconds": 0.0, "driver": 0.0,
                                        "walls": dict.fromkeys(cores, 0.0)})

    previous: JobRun | None = None
    for job in application.jobs:
        gap = job.submitted - (previous.completed if previous else 0.0)
        line(job.label if previous and previous.label == job.label else OUTSIDE)["driver"] += gap
        own = line(job.label)
        own["driver"] += job.idle
        own["tasks"] += sum(len(stage.tasks) for stage in job.stages)
        own["task_seconds"] += sum(sum(stage.tasks) for stage in job.stages)
        for n in own["walls"]:  # each core count once, however often ``cores`` names it
            own["walls"][n] += replay(job.stages, n)
        previous = job
    line(OUTSIDE)["driver"] += application.wall - (previous.completed if previous else 0.0)
    order = [label for label in lines if label != OUTSIDE] + [OUTSIDE]
    result = [StageLine(label, lines[label]["tasks"], lines[label]["task_seconds"], lines[label]["driver"],
                        {n: lines[label]["driver"] + wall for n, wall in lines[label]["walls"].items()})
              for label in order]
    result.append(StageLine("total", sum(r.tasks for r in result), sum(r.task_seconds for r in result),
                            sum(r.driver_seconds for r in result),
                            {n: sum(r.walls[n] for r in result) for n in cores}))
    return result
