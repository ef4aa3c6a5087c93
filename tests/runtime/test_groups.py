"""Grouped tasks balanced by cost (sparktc.runtime.groups): the packing against a brute-force optimum, and on Spark
each group alone in its own task and a task's user error raised again with its message.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from pyspark import TaskContext

from sparktc.errors import InputError
from sparktc.runtime.groups import balanced_groups, in_groups


def loads(costs: list[float], groups: list[list[int]]) -> list[float]:
    return [sum(costs[i] for i in group) for group in groups]


def optimum(costs: list[float], count: int) -> float:
    """The least possible cost of the costliest group, by trying every assignment."""
    return min(max(loads(costs, [[i for i, g in enumerate(assigned) if g == k] for k in range(count)]))
               for assigned in itertools.product(range(count), repeat=len(costs)))


def test_groups_are_balanced_by_cost_not_dealt_round_robin() -> None:
    # Categories in name order alternate costly and cheap: every other one (round-robin into 2 tasks) puts all the
    # costly ones together, 36 against 4.
    costs = [9.0, 1.0] * 4
    groups = balanced_groups(costs, 2)
    assert loads(costs, groups) == [20.0, 20.0]
    assert sorted(itertools.chain(*groups)) == list(range(8))


@pytest.mark.parametrize("seed", range(20))
def test_the_costliest_group_is_within_grahams_bound_of_the_optimum(seed) -> None:
    rng = np.random.default_rng(seed)
    count, items = int(rng.integers(2, 4)), int(rng.integers(1, 9))
    costs = [float(c) for c in rng.integers(1, 100, items)]
    groups = balanced_groups(costs, count)
    assert len(groups) == min(count, items)
    assert sorted(itertools.chain(*groups)) == list(range(items))  # each item once
    assert all(group == sorted(group) for group in groups)
    best = optimum(costs, len(groups))
    assert max(loads(costs, groups)) <= (4 / 3 - 1 / (3 * len(groups))) * best + 1e-9


def test_no_items_make_no_groups() -> None:
    assert balanced_groups([], 4) == []


@pytest.mark.spark
def test_each_group_runs_alone_in_its_own_task(spark) -> None:
    codes = [f"c{i:02d}" for i in range(11)]
    costs = [float(i % 3 + 1) for i in range(11)]

    def work(index: int, categories: list[str]) -> list[str]:
        return [f"{index}:{TaskContext.get().partitionId()}:{category}" for category in categories]

    found = in_groups(spark, codes, costs, 4, work)
    assert [members for members, _ in found] == [[codes[i] for i in group] for group in balanced_groups(costs, 4)]
    assert [results for _, results in found] == [[f"{g}:{g}:{c}" for c in members]
                                                 for g, (members, _) in enumerate(found)]


@pytest.mark.spark
def test_a_user_error_in_a_group_is_raised_with_its_message(spark) -> None:
    def work(index: int, categories: list[str]) -> list[str]:
        if "b" in categories:
            raise InputError("train.fold_file has no column for category 'b'")
        return categories

    with pytest.raises(InputError, match="^train.fold_file has no column for category 'b'$"):
        in_groups(spark, ["a", "b", "c"], [1.0, 1.0, 1.0], 2, work, (InputError,))
