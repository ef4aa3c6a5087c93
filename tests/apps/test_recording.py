"""Runs recorded whatever their end: a failed run's record says which stage failed and how; records written at the
same moment by separate processes all land.
"""

from __future__ import annotations

import multiprocessing

import pytest

from sparktc.apps.api import run_pipeline
from sparktc.runtime.faults import DRIVER_SETTING
from sparktc.runtime.usage import StageUsage
from sparktc.tracking import history
from sparktc.tracking.record import RunRecord

SMALL = {"corpus": {"format": "synthetic"},
         "synthesize": {"documents": 1500, "train_documents": 500, "vocabulary_size": 2000},
         "tokenize": {"stemmer": "none"}}


def test_a_failed_run_is_recorded_with_its_failed_stage_and_exit_status(spark, tmp_path) -> None:
    spark.conf.set(DRIVER_SETTING, "train:start:raise")
    try:
        with pytest.raises(Exception, match="injected"):
            run_pipeline(spark, SMALL, str(tmp_path / "run"), overrides=[f"history.path={tmp_path / 'history'}"])
    finally:
        spark.conf.unset(DRIVER_SETTING)
    [record] = history.read(str(tmp_path / "history")).to_pylist()
    assert record["exit_status"] == 1 and "injected" in record["error"]
    statuses = {stage["stage"]: stage["status"] for stage in record["stages"]}
    assert statuses == {"synthesize": "run", "ingest": "run", "tokenize": "run", "weight": "run", "rank": "run",
                        "train": "failed"}
    assert record["micro_f1"] is None and record["corpus_digest"]
    # The same run again: the stages done are skipped as current, and the record says so.
    result = run_pipeline(spark, SMALL, str(tmp_path / "run"), overrides=[f"history.path={tmp_path / 'history'}"])
    records = history.read(str(tmp_path / "history")).to_pylist()
    assert [r["exit_status"] for r in records] == [1, 0] and records[1]["run_id"] == result.record.run_id
    assert [s["status"] for s in records[1]["stages"]] == ["skipped"] * 5 + ["run", "run"]
    assert records[0]["config_digest"] == records[1]["config_digest"]
    assert records[0]["corpus_digest"] == records[1]["corpus_digest"]


def _append(path: str, run_id: str, start, count: int) -> None:
    start.wait()
    for index in range(count):
        record = RunRecord.start(f"{run_id}-{index}", "pipeline", {"train": {"C": 1.0}})
        record.add_stage(StageUsage("train", 1.0, 2.0, 3), "run")
        history.append(path, record.finish(0))


def test_records_written_at_the_same_moment_by_separate_processes_all_land(tmp_path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [context.Process(target=_append, args=(str(tmp_path / "history"), f"w{n}", start, 20)) for n in range(4)]
    for writer in writers:
        writer.start()
    start.set()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    records = history.read(str(tmp_path / "history"))
    assert sorted(records["run_id"].to_pylist()) == sorted(f"w{n}-{i}" for n in range(4) for i in range(20))
    assert not [p for p in (tmp_path / "history").iterdir() if not p.name.startswith("run-")]


def test_a_record_is_never_replaced(tmp_path) -> None:
    record = RunRecord.start("same", "pipeline", {}).finish(0)
    history.append(str(tmp_path), record)
    with pytest.raises(history.HistoryError, match="never replaced"):
        history.append(str(tmp_path), record)
