"""The scaling replay (benchmarks/scaling.py) on hand-made task lists and a hand-written event log, against walls
computed by hand. No Spark: the log is written here in Spark's JSON-lines format, with the field names a Spark 4.3
run writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from benchmarks.harness_scaling import (
    OUTSIDE,
    Application,
    JobRun,
    StageRun,
    parse_events,
    project,
    read_events,
    replay,
)
from benchmarks.rcv1_scale import scaling_record
from benchmarks.scaling import main
from sparktc.errors import InputError

START = 1_795_804_268_000  # the application's start, milliseconds since the epoch as Spark logs them


def test_four_tasks_on_two_slots() -> None:
    assert replay([StageRun(0, (), (3.0, 3.0, 2.0, 2.0))], 2) == 5.0
    assert replay([StageRun(0, (), (3.0, 3.0, 2.0, 2.0))], 1) == 10.0
    assert replay([StageRun(0, (), (3.0, 3.0, 2.0, 2.0))], 64) == 3.0  # the longest task


def test_tasks_replay_in_launch_order_not_longest_first() -> None:
    # Launched 1, 1, 2: the 2 s task starts when a 1 s one ends (3 s); longest-first would give 2 s.
    assert replay([StageRun(0, (), (1.0, 1.0, 2.0))], 2) == 3.0


def test_a_stage_waits_for_its_parents() -> None:
    first = StageRun(0, (), (2.0, 2.0, 2.0))  # 4 s on 2 slots
    assert replay([first, StageRun(1, (0,), (1.0,))], 2) == 5.0  # after stage 0
    # Without the dependency the 1 s task takes the slot stage 0 frees at 2 s, done by 3 s: 4 s in all.
    assert replay([first, StageRun(1, (), (1.0,))], 2) == 4.0
    # A parent the log lists but never ran (its shuffle output reused) takes no time.
    assert replay([StageRun(5, (), ()), StageRun(6, (5,), (1.5,))], 2) == 1.5
    assert replay([], 4) == 0.0


def test_the_driver_time_is_serial_and_jobs_add() -> None:
    # Wall 20 s: ingest's two jobs (1-6 s with 1 s of it idle, 7-9 s with 1 s idle), weight's (10-13 s).
    application = Application(20.0, 1, (
        JobRun("ingest", 1.0, 6.0, (StageRun(0, (), (2.0, 2.0)),), idle=1.0),
        JobRun("ingest", 7.0, 9.0, (StageRun(1, (), (1.0,)),), idle=1.0),
        JobRun("weight", 10.0, 13.0, (StageRun(2, (), (3.0,)),), idle=0.0),
    ))
    lines = {line.label: line for line in project(application, [1, 2])}
    assert list(lines) == ["ingest", "weight", OUTSIDE, "total"]
    # ingest: 1 + 1 s idle in its jobs and the 1 s between them; before, between the stages and after: 1 + 1 + 7.
    assert lines["ingest"].driver_seconds == 3.0 and lines[OUTSIDE].driver_seconds == 9.0
    assert (lines["ingest"].tasks, lines["ingest"].task_seconds) == (3, 5.0)
    assert lines["ingest"].walls == {1: 3.0 + 4.0 + 1.0, 2: 3.0 + 2.0 + 1.0}
    assert lines["weight"].walls == {1: 3.0, 2: 3.0}
    assert lines[OUTSIDE].walls == {1: 9.0, 2: 9.0}
    assert lines["total"].walls == {1: 20.0, 2: 18.0}  # at its own 1 core the replay is the measured wall
    assert (lines["total"].tasks, lines["total"].task_seconds, lines["total"].driver_seconds) == (4, 8.0, 12.0)


def _task_end(stage: int, task: int, launch: int, finish: int) -> dict:
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Stage Attempt ID": 0, "Task Type": "ResultTask",
            "Task End Reason": {"Reason": "Success"},
            "Task Info": {"Task ID": task, "Index": task, "Attempt": 0, "Partition ID": task,
                          "Launch Time": START + launch, "Executor ID": "driver", "Host": "localhost",
                          "Locality": "PROCESS_LOCAL", "Speculative": False, "Getting Result Time": 0,
                          "Finish Time": START + finish, "Failed": False, "Killed": False},
            "Task Metrics": {"Executor Deserialize Time": 4, "Executor Run Time": finish - launch - 10,
                             "Executor CPU Time": 1_000_000}}


def _job_start(job: int, submitted: int, stages: dict[int, list[int]], group: str | None) -> dict:
    properties = {"spark.rdd.scope": "{\"id\":\"1\",\"name\":\"collect\"}"}
    if group:
        properties |= {"spark.jobGroup.id": group, "spark.job.description": group.replace("-", ": ")}
    return {"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": START + submitted,
            "Stage Infos": [{"Stage ID": stage, "Stage Attempt ID": 0, "Stage Name": "collect at parts.py:62",
                             "Number of Tasks": 1, "Parent IDs": parents} for stage, parents in stages.items()],
            "Stage IDs": list(stages), "Properties": properties}


def _stage_submitted(stage: int, submitted: int) -> dict:
    return {"Event": "SparkListenerStageSubmitted",
            "Stage Info": {"Stage ID": stage, "Stage Attempt ID": 0, "Submission Time": START + submitted},
            "Properties": {}}


def _job_end(job: int, completed: int) -> dict:
    return {"Event": "SparkListenerJobEnd", "Job ID": job, "Completion Time": START + completed,
            "Job Result": {"Result": "JobSucceeded"}}


EVENTS = [
    {"Event": "SparkListenerLogStart", "Spark Version": "4.3.0"},
    {"Event": "SparkListenerExecutorAdded", "Timestamp": START + 50, "Executor ID": "driver",
     "Executor Info": {"Host": "localhost", "Total Cores": 2, "Log Urls": {}, "Attributes": {}, "Resources": {},
                       "Resource Profile Id": 0}},
    {"Event": "SparkListenerApplicationStart", "App Name": "sparktc-rcv1", "App ID": "local-1",
     "Timestamp": START, "User": "root"},
    # ingest: 3 tasks on 2 cores, 0.6-2.6 s, in a job of 0.5-2.8 s.
    _job_start(0, 500, {0: []}, "sparktc-ingest"), _stage_submitted(0, 510),
    _task_end(0, 1, 600, 1600), _task_end(0, 0, 600, 2600), _task_end(0, 2, 1600, 2100), _job_end(0, 2800),
    # weight: stage 1 listed but skipped, stage 2 after it: one task 3.1-4.1 s in a job of 3.0-4.2 s.
    _job_start(1, 3000, {1: [], 2: [1]}, "sparktc-weight"), _stage_submitted(2, 3010),
    _task_end(2, 3, 3100, 4100), _job_end(1, 4200),
    # a job outside any stage's group: 4.6-4.7 s in 4.5-4.8 s.
    _job_start(2, 4500, {3: []}, None), _stage_submitted(3, 4510), _task_end(3, 4, 4600, 4700), _job_end(2, 4800),
    {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd", "executionId": 0,
     "time": START + 4900},
    {"Event": "SparkListenerApplicationEnd", "Timestamp": START + 5000, "ExitCode": 0},
]


def _write(directory: Path, events: list[dict], compressed: bool = False) -> Path:
    """``events`` as Spark 4 writes them under spark.eventLog.dir: a rolling log directory of events_* files."""
    application = directory / "eventlog_v2_local-1"
    application.mkdir(parents=True)
    (application / "appstatus_local-1").write_text("")
    lines = "".join(json.dumps(event) + "\n" for event in events).encode()
    if compressed:
        with pa.CompressedOutputStream(str(application / "events_1_local-1.zstd"), "zstd") as stream:
            stream.write(lines)
    else:
        (application / "events_1_local-1").write_bytes(lines)
    return directory


def test_the_event_log_parsed_into_jobs(tmp_path: Path) -> None:
    application = parse_events(read_events(_write(tmp_path, EVENTS)))
    assert (application.wall, application.cores) == (5.0, 2)
    ingest, weight, other = application.jobs
    assert (ingest.label, ingest.submitted, ingest.completed) == ("ingest", 0.5, 2.8)
    assert ingest.stages == (StageRun(0, (), (2.0, 1.0, 0.5)),)  # in launch order (ties by task id)
    assert ingest.idle == pytest.approx(2.3 - 2.0)
    assert weight.label == "weight" and weight.stages == (StageRun(1, (), ()), StageRun(2, (1,), (1.0,)))
    assert weight.idle == pytest.approx(1.2 - 1.0)
    assert other.label == "(no stage)" and other.idle == pytest.approx(0.3 - 0.1)
    lines = {line.label: line for line in project(application, [1, 2])}
    # At the 2 cores it ran on, the replay gives back the measured wall: 2.0 s of tasks + 0.3 s idle in ingest...
    assert lines["ingest"].walls[2] == pytest.approx(2.3) and lines["ingest"].walls[1] == pytest.approx(3.8)
    assert lines["total"].walls[2] == pytest.approx(5.0) and lines["total"].walls[1] == pytest.approx(6.5)
    # ... and the driver's time outside the jobs: 0.5 s before, 0.2 + 0.3 s between, 0.2 s after.
    assert lines[OUTSIDE].driver_seconds == pytest.approx(1.2)


def test_a_zstd_log_and_its_file_read_alike(tmp_path: Path) -> None:
    plain = parse_events(read_events(_write(tmp_path / "plain", EVENTS)))
    directory = _write(tmp_path / "zstd", EVENTS, compressed=True)
    assert parse_events(read_events(directory)) == plain
    assert parse_events(read_events(directory / "eventlog_v2_local-1" / "events_1_local-1.zstd")) == plain


def test_the_command_prints_the_projection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(_write(tmp_path, EVENTS)), "--cores", "1,2", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| stage | tasks | task-s | driver s | 1 core | 2 cores |" in out
    assert "| total | 5 | 4.6 | 1.9 | 6.5 | 5.0 |" in out
    assert "measured: the application ran 5.0 s on 2 cores; replayed at 2 cores: 5.0 s" in out


def test_a_core_count_named_twice_is_projected_once() -> None:
    application = parse_events(EVENTS)
    assert project(application, [2, 1, 2])[-1].walls == project(application, [2, 1])[-1].walls


@pytest.mark.parametrize(("events", "message"), [
    (EVENTS[:-1], "the event log has no SparkListenerApplicationEnd: give the log of a run that finished"),
    ([event for event in EVENTS if event["Event"] != "SparkListenerJobEnd"],
     "the event log has no SparkListenerJobEnd for job 0: give the log of a run that finished"),
])
def test_an_unfinished_log_is_refused_in_one_line(tmp_path: Path, events: list[dict], message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match=message):
        parse_events(read_events(_write(tmp_path, events)))
    assert main([str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"scaling: error: {message}\n"


def test_a_log_it_cannot_read_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main([str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"scaling: error: {tmp_path}: expected one application's event log, " \
                                      "found a, b; give one of them\n"
    lz4 = tmp_path / "a" / "events_1_local-1.lz4"
    lz4.write_bytes(b"\x00")
    with pytest.raises(InputError, match="Spark's lz4 framing.*compression.codec=zstd"):
        list(read_events(lz4))
    (tmp_path / "b" / "events_1_local-1").write_text('{"Event": "SparkListenerLogStart"}\nnot json\n')
    with pytest.raises(InputError, match=r"events_1_local-1, line 2: not a JSON event"):
        list(read_events(tmp_path / "b"))
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--cores", "0,2"])
    broken = [*EVENTS[:4], {"Event": "SparkListenerTaskEnd", "Stage ID": 0}]
    with pytest.raises(InputError, match="a SparkListenerTaskEnd event without its field 'Task Info': give an event"):
        parse_events(broken)


def test_the_harness_keeps_a_runs_projection_with_its_measured_wall(tmp_path: Path) -> None:
    record = scaling_record(_write(tmp_path, EVENTS))
    assert (record["application_seconds"], record["cores"]) == (5.0, 2)
    total = record["lines"][-1]
    assert total["stage"] == "total" and sorted(total["walls"], key=int) == ["1", "2", "4", "16", "64"]
    assert (total["walls"]["1"], total["walls"]["2"]) == (6.5, 5.0)
    assert [line["stage"] for line in record["lines"]] == ["ingest", "weight", "(no stage)", OUTSIDE, "total"]
