"""Averaging sets on hand-made tables and on the real RCV1 hierarchy."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import shared_data

from sparktc.corpora.lyrl2004 import ROOT, parse_hierarchy
from sparktc.evaluation.category_sets import category_subsets


def test_flat_reuters_like_table() -> None:
    table = pd.DataFrame({
        "category": [f"c{i:02d}" for i in range(12)],
        "train_positives": [50, 40, 30, 20, 10, 9, 8, 7, 6, 5, 4, 0],
        "test_positives": [5, 4, 3, 2, 1, 1, 1, 1, 1, 0, 0, 2],
    })
    subsets = category_subsets(table, "reuters21578", {"mine": ["c03", "c01"]})
    assert subsets["all"] == [f"c{i:02d}" for i in range(12)]
    assert subsets["train_positive"] == [f"c{i:02d}" for i in range(11)]
    assert subsets["test_positive"] == [f"c{i:02d}" for i in range(9)] + ["c11"]
    assert subsets["R(10)"] == [f"c{i:02d}" for i in range(10)]
    assert subsets["R(90)"] == [f"c{i:02d}" for i in range(9)]
    assert subsets["R(115)"] == subsets["train_positive"]
    assert subsets["mine"] == ["c01", "c03"]
    assert "leaves" not in subsets
    with pytest.raises(ValueError, match="evaluate.subsets.bad lists categories this run does not have: zz"):
        category_subsets(table, "jsonl", {"bad": ["c01", "zz"]})


def test_rcv1_hierarchy_sets() -> None:
    path = shared_data("rcv1", "rcv1.topics.hier.orig")
    hierarchy = parse_hierarchy(path.read_text().splitlines(), str(path))
    codes = list(hierarchy.categories)
    table = pd.DataFrame({
        "category": codes, "train_positives": [1] * len(codes), "test_positives": [1] * len(codes),
        "parent": [None if hierarchy.parent[c] == ROOT else hierarchy.parent[c] for c in codes],
    })
    subsets = category_subsets(table, "lyrl2004")
    assert len(subsets["leaves"]) == 82 and len(subsets["internal"]) == 21
    assert subsets["leaves"] == list(hierarchy.leaves)
    branches = {name: members for name, members in subsets.items() if name.startswith("branch:")}
    assert sorted(branches) == ["branch:CCAT", "branch:ECAT", "branch:GCAT", "branch:MCAT"]
    assert sum(len(m) for m in branches.values()) == 103
    assert "C1511" in branches["branch:CCAT"] and "CCAT" in branches["branch:CCAT"]
    assert all(hierarchy.ancestors(c)[-1:] in ((), ("MCAT",)) for c in branches["branch:MCAT"])
    depths = {name: members for name, members in subsets.items() if name.startswith("depth:")}
    assert subsets["depth:1"] == ["CCAT", "ECAT", "GCAT", "MCAT"]
    assert sum(len(m) for m in depths.values()) == 103
    for name, members in depths.items():  # depth d: the categories with d - 1 ancestors below Root
        assert all(len(hierarchy.ancestors(c)) == int(name.split(":")[1]) - 1 for c in members), name
