"""The sets of categories that averages are taken over (REFERENCE.md section 6: which categories are averaged matters).

From the per-category table of a run (category, train_positives, test_positives, and parent for a
hierarchy) this names every set the papers average over: all listed, those with >= 1 training
positive (RCV1's 101 topics), those with >= 1 test positive; Debole & Sebastiani's R(10), R(90),
R(115) for Reuters-21578; and for a hierarchy its leaves, its internal nodes, each top-level
branch (the top node and everything below it) and each depth of the tree (``depth:1``, the top nodes;
``depth:2``, their children; ...), so effectiveness can be read level by level. Named subsets from the
configuration are checked against the run's categories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from sparktc.corpora.registry import FORMATS
from sparktc.errors import InputError

BASIC = ("all", "train_positive", "test_positive")
HIERARCHICAL = ("leaves", "internal")


def category_subsets(
    table: pd.DataFrame, corpus_format: str, named: Mapping[str, Sequence[str]] = {}
) -> dict[str, list[str]]:
    """Every averaging set of the run, each a sorted list of category codes.

    ``table`` needs columns ``category``, ``train_positives``, ``test_positives`` and optionally
    ``parent`` (null for top-level categories). Raises ValueError for a named subset that lists a
    category the run does not have.
    """
    codes = sorted(table["category"])
    train = dict(zip(table["category"], table["train_positives"]))
    test = dict(zip(table["category"], table["test_positives"]))
    subsets = {
        "all": codes,
        "train_positive": [c for c in codes if train[c] > 0],
        "test_positive": [c for c in codes if test[c] > 0],
    }
    if corpus_format in FORMATS:  # the format's own sets (Reuters-21578's R(10), R(90), R(115))
        subsets.update(FORMATS[corpus_format].subsets(train, test))
    parents = table.get("parent")
    if parents is not None and parents.notna().any():
        parent = {c: p for c, p in zip(table["category"], parents) if isinstance(p, str)}
        internal = set(parent.values())
        subsets["leaves"] = [c for c in codes if c not in internal]
        subsets["internal"] = [c for c in codes if c in internal]
        for top in sorted(c for c in codes if c not in parent):
            subsets[f"branch:{top}"] = [c for c in codes if _top(c, parent) == top]
        depth = {c: _depth(c, parent) for c in codes}
        for level in range(1, max(depth.values()) + 1):
            subsets[f"depth:{level}"] = [c for c in codes if depth[c] == level]
    known = set(codes)
    for name, members in named.items():
        unknown = sorted(set(members) - known)
        if unknown:
            raise InputError(f"evaluate.subsets.{name} lists categories this run does not have: {', '.join(unknown)}")
        subsets[name] = sorted(set(members))
    return subsets


def _top(code: str, parent: Mapping[str, str]) -> str:
    while code in parent:
        code = parent[code]
    return code


def _depth(code: str, parent: Mapping[str, str]) -> int:
    """1 for a top-level category, one more for each ancestor."""
    level = 1
    while code in parent:
        code, level = parent[code], level + 1
    return level
