r"""Per-category contingency tables in the layout of LYRL2004's online appendix 15, so a run can be diffed
category by category against the published ones: the file ``contingency_tables.txt`` of every evaluate run.

What is known, and from where:

* LYRL2004 (Lewis, Yang, Rose & Li 2004, with its benchmark results; REFERENCE.md sections 6-7) publishes the
  full test set contingency table of each category for its classifiers (SVM.1, SVM.2 on the topics only, k-NN,
  Rocchio) in online appendix 15, "contingency tables, experimental results", distributed as
  ``a15-contingency-tables/a15-contingency-tables.tar.gz`` beside the other appendices, so that other
  averages (for instance over the leaf categories only) can be computed from them;
* a category's contingency table is TP, FP, FN, TN over the n test documents (Lewis 1991), and from it
  P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN), a ratio with denominator 0 being the run's
  ``zero_division`` (LYRL2004: F1 = 1 when TP = FP = FN = 0; REFERENCE.md section 6).

What is not known: the archive's contents (its file names, column order, separators and number formats, and
whether it holds measures beside the counts) were not available to us, neither on this machine nor in the
public material searched, so the layout below is sparktc's choice, made to diff easily against any
whitespace-separated table:

* one file per run, ``contingency_tables.txt``, UTF-8, lines ended by ``\n``;
* comment lines first, each starting ``# ``: what the file is, the corpus, method, thresholding and number of
  test documents, the 0/0 convention, the averaged set and the categories outside it;
* a header line ``category TP FP FN TN P R F1`` and one line per category, sorted by category code (as
  ``per_category.csv``), columns aligned by spaces (at least two between columns): the code left-aligned,
  the numbers right-aligned, counts as integers, P, R and F1 with 4 decimals (the values of
  ``per_category.csv``, the same convention);
* a category code that is empty, holds white space or a double quote, or starts with ``#`` is written in double
  quotes with inner quotes doubled, as CSV quotes it, so every line splits into the same columns
  (``pandas.read_csv(path, sep=r"\s+", comment="#")`` reads the file);
* comment lines last: the micro-averaged table (summed TP, FP, FN, TN and its P, R, F1) and the macro-averaged
  P, R, F1 over the averaged set, as ``metrics.json`` holds them.

Pure: no Spark and no file system; the evaluate stage writes the text through Hadoop file systems.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = ["CONTINGENCY_TABLES_TXT", "HEADER", "contingency_tables_text"]

#: The file's name in a run's output directory.
CONTINGENCY_TABLES_TXT = "contingency_tables.txt"
#: The header line's columns.
HEADER = ("category", "TP", "FP", "FN", "TN", "P", "R", "F1")
_COUNTS = ("tp", "fp", "fn", "tn")
_MEASURES = ("precision", "recall", "f1")
_METRICS = ("zero_division", "zero_division_convention", "averaged_over", "n_categories",
            *(f"{kind}_{measure}" for kind in ("micro", "macro") for measure in _MEASURES))
_GAP = "  "
_NEEDS_QUOTES = re.compile(r'\s|"|^#|^$')


def _code(category: Any) -> str:
    """A category code as one whitespace-separated field: quoted as CSV quotes when it must be."""
    text = str(category)
    return '"' + text.replace('"', '""') + '"' if _NEEDS_QUOTES.search(text) else text


def _measure(value: Any) -> str:
    number = float(value)
    if math.isnan(number):
        raise ValueError("the per-category table has a missing measure; P, R and F1 are defined for every "
                         "category under the run's zero_division")
    return f"{number:.4f}"


def _check(table: pd.DataFrame, metrics: Mapping[str, Any]) -> pd.DataFrame:
    """``table`` sorted by category code, or ValueError naming what it or ``metrics`` lacks."""
    absent = [c for c in ("category", *_COUNTS, *_MEASURES, "averaged") if c not in table.columns]
    if absent:
        raise ValueError(f"the per-category table lacks columns {absent}; it has {list(table.columns)}")
    missing = [key for key in _METRICS if metrics.get(key) is None]
    if missing:
        raise ValueError(f"the metrics lack {missing}")
    if table[list(_COUNTS)].isna().any().any() or (table[list(_COUNTS)] < 0).any().any():
        raise ValueError("the per-category table's TP, FP, FN and TN must be counts (non-negative integers)")
    return table.sort_values("category", kind="stable", key=lambda s: s.astype(str)).reset_index(drop=True)


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of fields as lines: the first field left-aligned, the others right-aligned, each column as wide
    as its widest field, columns :data:`_GAP` apart.
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [_GAP.join([row[0].ljust(widths[0]), *(f.rjust(w) for f, w in zip(row[1:], widths[1:]))]) for row in rows]


def contingency_tables_text(metrics: Mapping[str, Any], table: pd.DataFrame) -> str:
    """The text of ``contingency_tables.txt`` (layout: the module docstring) for one run.

    ``table``: one row per category with ``category``, ``tp``, ``fp``, ``fn``, ``tn``, ``precision``,
    ``recall``, ``f1`` (under the run's ``zero_division``) and ``averaged`` (in the headline's set), as
    :func:`sparktc.evaluation.summary.category_table` makes it. ``metrics``: the run's record with
    ``zero_division``, ``zero_division_convention``, ``averaged_over``, ``n_categories`` and the micro and macro
    P, R, F1; ``corpus``, ``method``, ``thresholding`` and ``test_documents`` are stated when present.
    Raises ValueError naming a missing column or key, a count that is not one, or a missing measure.
    """
    rows = _check(table, metrics)
    averaged = rows["averaged"].fillna(False).astype(bool)
    outside = [_code(c) for c in rows.loc[~averaged, "category"]]
    method = (metrics.get("method") or {}).get("name", "?")
    thresholding = (metrics.get("thresholding") or {}).get("name", "?")
    documents = metrics.get("test_documents")
    lines = [
        "# sparktc per-category contingency tables, in the layout of LYRL2004's online appendix 15 "
        "(contingency tables, experimental results); the column layout is sparktc's",
        f"# corpus {metrics.get('corpus', '?')}; method {method}; thresholding {thresholding}; "
        f"{'?' if documents is None else int(documents)} test documents",
        f"# zero_division = {float(metrics['zero_division'])}: {metrics['zero_division_convention']}",
        f"# averaged over {metrics['averaged_over']}: {int(metrics['n_categories'])} of {len(rows)} categories; "
        + (f"not averaged: {' '.join(outside)}" if outside else "every category averaged"),
    ]
    body = [list(HEADER)]
    for r in rows.itertuples(index=False):
        body.append([_code(r.category), *(str(int(getattr(r, c))) for c in _COUNTS),
                     *(_measure(getattr(r, m)) for m in _MEASURES)])
    lines += _aligned(body)
    sums = [int(rows.loc[averaged, c].sum()) for c in _COUNTS]
    micro = " ".join(f"{name} {_measure(metrics[f'micro_{m}'])}" for name, m in zip(HEADER[5:], _MEASURES))
    macro = " ".join(f"{name} {_measure(metrics[f'macro_{m}'])}" for name, m in zip(HEADER[5:], _MEASURES))
    lines += [
        f"# micro-average over {metrics['averaged_over']}: "
        + " ".join(f"{name} {value}" for name, value in zip(HEADER[1:5], sums)) + f" {micro}",
        f"# macro-average over {metrics['averaged_over']}: {macro}",
    ]
    return "\n".join(lines) + "\n"
