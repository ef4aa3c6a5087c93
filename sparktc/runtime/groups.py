"""Work over items (a stage's categories) in a few grouped pandas UDF tasks, each a group of items balanced by an
estimated cost: ``groupBy("id").applyInPandas`` over a range of group numbers, a DataFrame job that a classic and a
Spark Connect session run alike.

The groups are made on the driver by longest-processing-time-first packing (:func:`balanced_groups`); a task finds
its items in the function's closure (names: small), and what it does with them (train: load the training matrix
once per Python worker and fit each category) is the caller's; only strings come back. The DataFrame grouped is
``spark.range(groups)`` in as many partitions: a range's partitions are ordered by its ids, so grouping by them
takes no shuffle and no sort, and group ``g`` runs alone in task ``g``. Rows of (group, item, cost) would need a
shuffle from a local relation (one more stage, and hash partitioning can put two groups in one task: 0.3-0.4 CPU-s
more per fit job on Reuters-21578 R(90)) or an array literal in the plan (seconds to plan for thousands of items).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Sequence

import pandas as pd
from pyspark.sql import SparkSession

from sparktc.runtime import written
from sparktc.runtime.task_memory import python_task, work_name

__all__ = ["balanced_groups", "in_groups"]

#: What a grouped task gives back: its results in order, or the user error (kind and message) it stopped on.
RESULTS_DDL = "group int, position int, result string, error_kind string, error string"
#: The position of a group's row that carries the files its task wrote, not a result.
_WRITTEN_AT = -1


def balanced_groups(costs: Sequence[float], groups: int) -> list[list[int]]:
    """The item indexes ``0..len(costs) - 1`` in ``min(groups, len(costs))`` groups balanced by cost: longest
    processing time first (each item, costliest first, goes to the group with the least cost so far), whose costliest
    group is at most 4/3 of the best possible (Graham, 1969). Ties go to the lower index; each group is in index order.
    """
    count = min(groups, len(costs))
    loads = [(0.0, g) for g in range(count)]
    members: list[list[int]] = [[] for _ in range(count)]
    for item in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        load, g = heapq.heappop(loads)
        members[g].append(item)
        heapq.heappush(loads, (load + costs[item], g))
    return [sorted(group) for group in members]


def in_groups(spark: SparkSession, items: Sequence[str], costs: Sequence[float], groups: int,
              work: Callable[[int, list[str]], list[str]],
              errors: tuple[type[Exception], ...] = ()) -> list[tuple[list[str], list[str]]]:
    """``work(g, group_items)`` for each group ``g`` of :func:`balanced_groups` (``items`` by ``costs``), one grouped
    pandas UDF task each, task ``g`` (``TaskContext.partitionId()`` is ``g``): per group, its items and the strings
    ``work`` returned, in group order. A task that raises one of ``errors`` (the user's input is at fault: not
    retried, as it would fail again) returns it instead, and it is raised here with the task's message.
    """
    members = [[items[i] for i in group] for group in balanced_groups(costs, groups)]
    if not members:
        return []
    columns, name = ["group", "position", "result", "error_kind", "error"], work_name(work)

    def task(frame: pd.DataFrame) -> pd.DataFrame:
        g = int(frame["id"].iloc[0])
        with python_task(name):  # logged and capped as map_parts' tasks are (spark.sparktc.task_memory*)
            written.drained()  # an earlier task's files, of this worker
            try:
                rows = [(g, position, result, None, None) for position, result in enumerate(work(g, members[g]))]
            except errors as failure:
                rows = [(g, 0, None, type(failure).__name__, str(failure))]
            # The files the group wrote, with their digests (sparktc.runtime.written), at position -1.
            rows.append((g, _WRITTEN_AT, json.dumps(written.drained()), None, None))
        return pd.DataFrame(rows, columns=columns)

    # A range's partitions are ordered by its id column: grouped by it (not by a renamed copy), no shuffle and no
    # sort, and partition g holds group g alone.
    found = spark.range(0, len(members), 1, len(members)).groupBy("id").applyInPandas(task, RESULTS_DDL).collect()
    for row in found:
        if row.error_kind is not None:
            raise next(kind for kind in errors if kind.__name__ == row.error_kind)(row.error)
    results: list[list[str]] = [[] for _ in members]
    for row in sorted(found, key=lambda row: (row.group, row.position)):
        if row.position == _WRITTEN_AT:
            written.merge({path: tuple(file) for path, file in json.loads(row.result).items()})
        else:
            results[row.group].append(row.result)
    return list(zip(members, results))
