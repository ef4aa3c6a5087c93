"""The comparison of k runs as the files a person reads: Yang & Liu 1999's Tables 1-3 and Figures 4-5.

Pure functions, no Spark and no file-system access, like :mod:`sparktc.evaluation.report`. Inputs:

``pairs``
    one dict per pair of runs, in the order compared: ``a`` and ``b`` (the runs' names) and
    ``result`` (:func:`sparktc.apps.compare.compare`'s record: ``micro_f1``/``macro_f1`` with ``a``
    and ``b``, and ``tests``, each with ``name``, ``n``, ``statistic``, the two one-sided P-values,
    ``symbol``, one of ≫ > ~ < ≪, read "A symbol B", and ``undefined``: null, or why the statistic is
    undefined (then it and both P-values are null, and the symbol ~: Yang & Liu's tests need differences to
    test, and two runs that agree, a run and its rerun, have none).
``tables``
    per run (name -> pandas DataFrame), one row per category with ``train_positives`` and ``f1``.

Table 2 (:func:`significance_table`) has one row per pair with the symbols of the s-, S-, T- and
T'-tests; Table 3 (:func:`p_test_table`) those of the p-tests on micro recall (miR), micro
precision (miP) and error. A degenerate test keeps Yang & Liu's "~" in the tables;
:func:`undefined_notes` lists the undefined ones with their reasons, to print below them.
:func:`plot_f1_curves` draws Figures 4-5 on one plot, one curve per run, as PNG, SVG and PDF; deterministic
in the house style of :mod:`sparktc.evaluation.figures` (fixed size and dpi, default style, the Agg canvas, no dates
or software in the files, SVG ids from a fixed salt).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparktc.evaluation.figures import new_figure, rendered, scatter_stacks, style, title
from sparktc.runtime.markdown import markdown_table

__all__ = [
    "COMPARISON_PNG",
    "SIGNIFICANCE_TESTS",
    "P_TESTS",
    "INTERVALS",
    "LEGEND",
    "significance_table",
    "p_test_table",
    "undefined_tests",
    "undefined_notes",
    "f1_curves",
    "plot_f1_curves",
]

#: The plot's name in the comparison's output, as the run's own plot is named (its PNG; the SVG and PDF beside it:
#: :func:`sparktc.evaluation.figures.figure_file`).
COMPARISON_PNG = "f1_by_training_frequency.png"
#: Table 2's columns (header, test name) and Table 3's, in the paper's order.
SIGNIFICANCE_TESTS = (("s-test", "s-test"), ("S-test", "S-test"), ("T-test", "T-test"), ("T'-test", "T'-test"))
P_TESTS = (("miR", "p-test (recall)"), ("miP", "p-test (precision)"), ("error", "p-test (error)"))
#: Equal-sized intervals of log10(training-set frequency) the curves average F1 over.
INTERVALS = 10
LEGEND = ("≫ or ≪: P-value <= 0.01; > or <: 0.01 < P-value <= 0.05; ~: P-value > 0.05 (Yang & Liu 1999 "
          "Tables 2 and 3). A ≫ B reads \"A significantly better than B\" for every measure, error too, where "
          "better is smaller; Yang & Liu's Table 3 prints the error column by the error rates themselves, so "
          "there A ≪ B means A's error is significantly smaller")


def _symbols_table(pairs: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    rows = []
    for pair in pairs:
        tests = {test["name"]: test for test in pair["result"]["tests"]}
        rows.append([f"{pair['a']} vs {pair['b']}", *(tests[name]["symbol"] for _, name in columns)])
    return markdown_table(["sysA vs sysB", *(label for label, _ in columns)], rows, "l" + "c" * len(columns))


def significance_table(pairs: Sequence[Mapping[str, Any]]) -> str:
    """Yang & Liu Table 2: one row per pair, the s-, S-, T- and T'-tests' symbols (A against B)."""
    return _symbols_table(pairs, SIGNIFICANCE_TESTS)


def p_test_table(pairs: Sequence[Mapping[str, Any]]) -> str:
    """Yang & Liu Table 3: one row per pair, the p-tests' symbols on micro recall, precision and error."""
    return _symbols_table(pairs, P_TESTS)


def undefined_tests(tests: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(name, reason) of each test whose statistic is undefined: its ``undefined`` reason, or a null/NaN
    ``statistic`` (a record written before reasons were kept says only that).
    """
    found = []
    for test in tests:
        statistic = test.get("statistic")
        missing = statistic is None or not np.isfinite(statistic)
        if test.get("undefined") or missing:
            found.append((test["name"], test.get("undefined") or "statistic undefined"))
    return found


def undefined_notes(pairs: Sequence[Mapping[str, Any]]) -> str:
    """Below Tables 2 and 3: per pair with an undefined statistic, each such test and why (its symbol ~ says
    no more than "not significant"); "" when every statistic is defined.
    """
    lines = []
    for pair in pairs:
        by_reason: dict[str, list[str]] = {}  # the T- and T'-tests are mostly undefined for the same reason
        for name, reason in undefined_tests(pair["result"]["tests"]):
            by_reason.setdefault(reason, []).append(name)
        if by_reason:
            lines.append(f"- {pair['a']} vs {pair['b']}: "
                         + "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items()))
    if not lines:
        return ""
    return "\n".join(["Undefined statistics, shown ~ (Yang & Liu's tests need differences to test):", "", *lines])


def f1_curves(tables: Mapping[str, pd.DataFrame], intervals: int = INTERVALS) -> dict[str, pd.DataFrame]:
    """Yang & Liu's performance curves: per run, the mean per-category F1 in each of ``intervals``
    equal-sized intervals of log10(training-set frequency), the same intervals for every run.

    Categories with no training positive (or no F1) cannot sit on a log axis and are left out.
    Each run's DataFrame has one row per non-empty interval, in increasing frequency: ``low`` and
    ``high`` (the interval's bounds in training positives), ``frequency`` (the geometric mean of
    its categories' training frequencies, where the curve's point is drawn), ``n_categories`` and
    ``f1`` (their mean F1).
    """
    if intervals < 1:
        raise ValueError(f"intervals must be >= 1; got {intervals}")
    kept = {}
    for name, table in tables.items():
        train = pd.to_numeric(table["train_positives"], errors="coerce").to_numpy(dtype=np.float64)
        f1 = pd.to_numeric(table["f1"], errors="coerce").to_numpy(dtype=np.float64)
        keep = ~np.isnan(train) & ~np.isnan(f1) & (train > 0)
        kept[name] = (np.log10(train[keep]), f1[keep])
    every = np.concatenate([logx for logx, _ in kept.values()]) if kept else np.empty(0)
    low, high = (float(every.min()), float(every.max())) if every.size else (0.0, 1.0)
    edges = np.linspace(low, high if high > low else low + 1.0, intervals + 1)
    curves = {}
    for name, (logx, f1) in kept.items():
        # the last interval is closed on the right, so the most frequent category is counted
        index = np.clip(np.searchsorted(edges, logx, side="right") - 1, 0, intervals - 1)
        rows = []
        for i in range(intervals):
            inside = index == i
            if inside.any():
                rows.append({"low": float(10.0 ** edges[i]), "high": float(10.0 ** edges[i + 1]),
                             "frequency": float(10.0 ** logx[inside].mean()), "n_categories": int(inside.sum()),
                             "f1": float(f1[inside].mean())})
        curves[name] = pd.DataFrame(rows, columns=["low", "high", "frequency", "n_categories", "f1"])
    return curves


def plot_f1_curves(tables: Mapping[str, pd.DataFrame], intervals: int = INTERVALS, label: str = "",
                   rules: Mapping[str, str] = {}) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    """Yang & Liu Figures 4-5 on one plot, by format (:data:`sparktc.evaluation.figures.FIGURE_FORMATS`), and the
    curves it draws (:func:`f1_curves`).

    Per run, in the given order: its categories' F1 against training-set frequency as faint dots (those at one
    point as one dot, its area growing with their number) and its curve (mean F1 per interval, the points joined
    by straight lines) in the run's colour, named in the legend with its decision rule from ``rules`` (run name ->
    :func:`sparktc.models.decision.rule_title`) when there; x on a log scale. The title names ``label`` (the corpus
    and categories). Identical bytes for identical input.
    """
    curves = f1_curves(tables, intervals)
    colours = [f"C{i % 10}" for i in range(len(curves))]
    markers = "osD^v<>ph*"
    with style():
        figure = new_figure()
        ax = figure.add_subplot()
        drawn = False
        for i, (name, curve) in enumerate(curves.items()):
            table = tables[name]
            train = pd.to_numeric(table["train_positives"], errors="coerce").to_numpy(dtype=np.float64)
            f1 = pd.to_numeric(table["f1"], errors="coerce").to_numpy(dtype=np.float64)
            keep = ~np.isnan(train) & ~np.isnan(f1) & (train > 0)
            scatter_stacks(ax, train[keep], f1[keep], 8, numbered=False, color=colours[i], alpha=0.25, linewidths=0)
            if len(curve):
                rule = f": {rules[name]}" if rules.get(name) else ""
                ax.plot(curve["frequency"], curve["f1"], color=colours[i], marker=markers[i % len(markers)],
                        markersize=4, linewidth=1.8,
                        label=f"{name}{rule} ({int(curve['n_categories'].sum())} categories)")
                drawn = True
        if not drawn:
            ax.text(0.5, 0.5, "no categories with a training positive and an F1 value", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_xscale("log")
        ax.set_ylim(-0.06, 1.06)  # room for the largest dot at F1 = 0 or 1
        ax.set_xlabel("training-set frequency of category (positive training documents, log scale)")
        ax.set_ylabel(f"F1 per category (mean over {intervals} equal log intervals)")
        heading = title("Per-category F1 against training-set frequency (Yang & Liu 1999, Figures 4-5)", label)
        ax.set_title(heading, fontsize="medium")
        ax.grid(True, which="major", alpha=0.3)
        if drawn:
            ax.legend(loc="lower right", fontsize="x-small")
        return rendered(figure, heading), curves
