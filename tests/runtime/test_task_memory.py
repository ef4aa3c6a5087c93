"""Memory per Python task (sparktc.runtime.task_memory): the log of each task's peak, and the cap that shapes the
parsing tasks' pieces and refuses a training set no task shape can hold.
"""

from __future__ import annotations

import gc
import gzip
import json
import sys
import types

import numpy as np
import pytest
from conftest import invented_words

from sparktc.corpora import lyrl2004_columnar
from sparktc.errors import ConfigError
from sparktc.filesystem import KeptOne, per_worker
from sparktc.runtime import faults, task_memory
from sparktc.runtime.parts import map_parts
from sparktc.runtime.resources import ResourceLimitError, check_training_memory
from sparktc.runtime.session import labelled_jobs

MIB = 1 << 20


def expected_piece(largest: int, cap: int | None, resident: int) -> int:
    """The rule written out: the largest of largest, largest/2, largest/4, ... down to 1 MiB whose 20 bytes per byte
    fit beside ``resident`` and the writers' 160 MiB under ``cap``; 1 MiB when none does.
    """
    if cap is None:
        return largest
    candidates = [largest >> shift for shift in range(64) if largest >> shift >= MIB] or [largest]
    fitting = [size for size in candidates if resident + 160 * MIB + 20 * size <= cap]
    return max(fitting) if fitting else min(largest, MIB)


@pytest.mark.parametrize(("largest", "cap", "resident"), [
    (16 * MIB, None, 900 * MIB),        # no cap: the reader's own piece
    (16 * MIB, 2048 * MIB, 560 * MIB),  # 560 + 160 + 20 x 16 = 1,040 MiB: fits whole
    (16 * MIB, 700 * MIB, 480 * MIB),   # 60 MiB left: 2 MiB pieces (40 MiB), 4 would take 80
    (16 * MIB, 730 * MIB, 480 * MIB),   # 90 MiB left: 4 MiB pieces (80 MiB)
    (16 * MIB, 800 * MIB, 480 * MIB),   # 160 MiB left: 8 MiB pieces (160 MiB)
    (16 * MIB, 600 * MIB, 558 * MIB),   # nothing left: the smallest shape, 1 MiB
    (3 * MIB, 600 * MIB, 599 * MIB),    # a piece that halves below 1 MiB: 1 MiB all the same
    (MIB // 2, 600 * MIB, 599 * MIB),   # a reader's piece under 1 MiB is never made larger
])
def test_pieces_are_cut_to_what_the_cap_leaves(largest, cap, resident):
    assert task_memory.piece_bytes(largest, cap, resident) == expected_piece(largest, cap, resident)
    assert task_memory.piece_bytes(16 * MIB, 700 * MIB, 480 * MIB) == 2 * MIB


def test_a_capped_task_parses_a_token_file_in_smaller_pieces_with_the_same_records(monkeypatch):
    words = invented_words(np.random.default_rng(3), 400)
    text = "".join(f".I {100 + i}\n.W\n{' '.join(words[(i * 7 + j) % 400] for j in range(120))}\n\n"
                   for i in range(4000)).encode()  # about 3.3 MB: four 1 MiB pieces
    content = gzip.compress(text)
    cut: list[int] = []
    pieces = lyrl2004_columnar._pieces
    monkeypatch.setattr(lyrl2004_columnar, "_pieces", lambda text, size, *rest: cut.append(size) or pieces(
        text, size, *rest))
    whole = list(lyrl2004_columnar.read_corpus_lists(content, "lyrl2004_tokens_test_pt0.dat.gz"))
    monkeypatch.setattr(task_memory, "_cap", 400 * MIB)  # as python_task sets it for a task under a 400m cap
    monkeypatch.setattr(task_memory, "resident_bytes", lambda: 390 * MIB)
    capped = list(lyrl2004_columnar.read_corpus_lists(content, "lyrl2004_tokens_test_pt0.dat.gz"))
    assert cut == [lyrl2004_columnar.PIECE_BYTES, MIB]
    assert len(capped) > len(whole) and sum(map(len, capped)) == sum(map(len, whole)) == 4000
    assert [row for batch in capped for row in batch.to_pylist()] == [
        row for batch in whole for row in batch.to_pylist()]


def test_a_capped_worker_drops_what_an_earlier_stage_kept_when_another_stage_starts(monkeypatch, tmp_path):
    loads: list[str] = []

    @per_worker
    def load(path: str) -> bytearray:
        loads.append(path)
        return bytearray(10)

    kept = KeptOne()
    kept.get(("matrix",), lambda: "made")
    (tmp_path / "f").write_bytes(b"x")
    monkeypatch.setattr(task_memory, "_last_stage", None)
    for stage in ("train", "train", "evaluate", "evaluate"):
        task_memory._leave_earlier_tasks(stage)
        load(str(tmp_path / "f"))
    assert len(loads) == 2  # loaded in train, kept for train's next task, loaded afresh once in evaluate
    assert kept.get(("matrix",), lambda: "made again") == "made again"


def test_training_no_task_shape_can_hold_is_refused_naming_the_cap():
    # 23,149 training documents, 1.9 M nonzeros: 40 x 1.9 M + 48 x 23,149 bytes = 73.5 MiB, + 320 MiB of worker
    # + 64 MiB of a category's own work.
    needed_mib = (40 * 1_900_000 + 48 * 23_149) / MIB + 320 + 64
    assert round(needed_mib) == 458
    with pytest.raises(ResourceLimitError) as caught:
        check_training_memory({"spark.sparktc.task_memory": "450m"}, 23_149, 1_900_000, cross_validation=False)
    assert str(caught.value).startswith(
        "training needs about 458 MiB in each Python task (320 for Python and its libraries, 74 for 23,149 training "
        "documents with 1,900,000 nonzero weights, which every training task holds whole, 64 for a category's own "
        "work), over spark.sparktc.task_memory = 450m; raise spark.sparktc.task_memory")
    check_training_memory({"spark.sparktc.task_memory": "460m"}, 23_149, 1_900_000, cross_validation=False)


@pytest.mark.parametrize(("conf", "message"), [
    ({"spark.sparktc.task_memory": "lots"}, "spark.conf 'spark.sparktc.task_memory' = 'lots' is not allowed; "
                                            "expected a memory size such as '1g' or '600m', at least the 320 MiB"),
    ({"spark.sparktc.task_memory": "200m"}, "spark.conf 'spark.sparktc.task_memory' = '200m' is not allowed"),
    ({"spark.sparktc.task_memory_log": " "}, "spark.conf 'spark.sparktc.task_memory_log' = ' ' is not allowed; "
                                             "expected a directory on the executors"),
])
def test_bad_memory_settings_are_refused(conf, message):
    assert faults.problem(conf).startswith(message)
    assert faults.problem({"spark.sparktc.task_memory": "1g", "spark.sparktc.task_memory_log": "/tmp/x"}) is None


def test_a_bad_cap_given_to_spark_submit_is_refused_before_any_stage():
    # spark-submit's --conf reaches the session's settings, not the configuration's check: the session's check
    # (sparktc.runtime.session.check_settings) refuses it, as the configuration would (exit status 2).
    with pytest.raises(ConfigError, match=r"^spark\.conf 'spark\.sparktc\.task_memory' = '1 gig' is not allowed"):
        faults.check({"spark.sparktc.task_memory": "1 gig"})
    faults.check({"spark.sparktc.task_memory": "320m"})


def test_work_names_drop_the_locals_steps():
    def outer():
        def vectorize(index, unit):
            return unit
        return vectorize

    assert task_memory.work_name(outer()) == "test_work_names_drop_the_locals_steps.outer.vectorize"


def test_a_worker_freezes_what_it_holds_only_when_its_imports_grew(monkeypatch):
    frozen = []
    monkeypatch.setattr(task_memory.gc, "freeze", lambda: frozen.append(len(sys.modules)))
    monkeypatch.setattr(task_memory, "_modules_frozen", 0)
    task_memory._freeze_imports()
    task_memory._freeze_imports()  # nothing imported since: nothing more frozen
    assert frozen == [len(sys.modules)]
    monkeypatch.setitem(sys.modules, "sparktc_imported_since", types.ModuleType("sparktc_imported_since"))
    task_memory._freeze_imports()
    assert frozen == [len(sys.modules) - 1, len(sys.modules)]


@pytest.mark.spark
def test_a_workers_imports_are_frozen_and_what_its_tasks_leave_is_still_collected(spark):
    def work(index: int, unit: int) -> tuple[int, int]:
        cycle: list = []
        cycle.append(cycle)  # garbage only the collector can free
        del cycle
        return gc.get_freeze_count(), gc.collect()

    [(frozen, collected)] = map_parts(spark, [0], work)
    assert frozen > 10_000  # the worker's modules (pyspark, pyarrow, numpy...), out of the collections' walk
    assert collected >= 1  # the cycle made after the freeze


@pytest.mark.spark
def test_the_log_has_one_line_per_task_with_its_stage_and_peak(spark, tmp_path):
    log = tmp_path / "log"
    spark.conf.set(task_memory.SETTING, str(log))
    try:
        with labelled_jobs(spark, "demo", "sparktc: demo"):
            held = map_parts(spark, [1, 2, 3], lambda index, megabytes: len(bytearray(megabytes * 40 * MIB)))
    finally:
        spark.conf.unset(task_memory.SETTING)
    map_parts(spark, [1], lambda index, unit: unit)  # unset: nothing more is logged
    assert held == [40 * MIB, 80 * MIB, 120 * MIB]
    lines = [json.loads(line) for path in log.iterdir() for line in path.read_text().splitlines()]
    assert sorted(line["partition"] for line in lines) == [0, 1, 2]
    assert {line["stage"] for line in lines} == {"demo"} and {line["attempt"] for line in lines} == {0}
    assert {line["work"] for line in lines} == {"test_the_log_has_one_line_per_task_with_its_stage_and_peak.<lambda>"}
    peaks = {line["partition"]: line["peak_bytes"] for line in lines}
    added = {line["partition"]: line["peak_bytes"] - line["start_bytes"] for line in lines}
    # Each task's peak holds its own buffer (40, 80, 120 MiB) above a worker of at least 40 MiB; a worker's peak is
    # reset when a task starts, so what the 40 MiB task added stays well under what the 120 MiB one did, whichever ran
    # first (what a reused worker already held differs from worker to worker: the suite's workers keep caches).
    for partition, buffer in ((0, 40 * MIB), (1, 80 * MIB), (2, 120 * MIB)):
        assert peaks[partition] >= buffer + 40 * MIB and added[partition] >= buffer * 0.9
    assert added[2] - added[0] > 40 * MIB
