"""From per-category contingency tables to the full evaluation record (REFERENCE.md section 6).

Pure pandas/numpy: the Spark layer reduces the corpus to one (TP, FP, FN, TN) row per category
and to summed ranking measures; this module computes every average over every category set,
the frequency bands and the per-category table that reports and comparisons read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparktc.errors import InputError
from sparktc.evaluation.metrics import frequency_band, per_category, summarize

# The averages reported for each category set beside the headline ones.
SET_MEASURES = ("micro_precision", "micro_recall", "micro_f1", "macro_precision", "macro_recall", "macro_f1")


def category_table(contingency: pd.DataFrame, zero_division: float, bands: Sequence[int],
                   averaged: Sequence[str]) -> pd.DataFrame:
    """The per-category table: counts, P, R, F1 (and the other measures), frequency band, averaged or not."""
    table = contingency.sort_values("category").reset_index(drop=True)
    values = per_category(table["tp"].to_numpy(), table["fp"].to_numpy(), table["fn"].to_numpy(),
                          table["tn"].to_numpy(), zero_division)
    for name, column in values.items():
        table[name] = column
    table["band"] = frequency_band(table["train_positives"].to_numpy(), tuple(bands))
    table["averaged"] = table["category"].isin(set(averaged))
    return table


def _summary(table: pd.DataFrame, zero_division: float) -> dict[str, Any]:
    return summarize(table["category"].tolist(), table["tp"].to_numpy(), table["fp"].to_numpy(),
                     table["fn"].to_numpy(), table["tn"].to_numpy(), zero_division)


def assemble(
    contingency: pd.DataFrame,
    subsets: Mapping[str, Sequence[str]],
    average_over: str,
    zero_division: float,
    bands: Sequence[int],
    ranking: Mapping[str, float],
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The metrics record and the per-category table of one run.

    Headline measures are over ``subsets[average_over]``; ``averages`` repeats micro/macro P, R, F1
    for every non-empty set; ``bands`` gives micro- and macro-F1 per training-frequency band of the
    averaged categories.
    """
    if average_over not in subsets:
        raise InputError(f"evaluate.average_over = {average_over!r} is not a category set of this run; "
                         f"sets: {', '.join(subsets)}")
    averaged = subsets[average_over]
    if not averaged:
        raise InputError(f"evaluate.average_over = {average_over!r} selects no category in this run")
    table = category_table(contingency, zero_division, bands, averaged)
    headline = _summary(table[table["averaged"]], zero_division)
    per_category_rows = headline.pop("per_category")
    averages = {}
    for name, members in subsets.items():
        if members:
            summary = _summary(table[table["category"].isin(set(members))], zero_division)
            averages[name] = {"n_categories": summary["n_categories"], **{m: summary[m] for m in SET_MEASURES}}
    band_rows = []
    in_average = table[table["averaged"]]
    for band in pd.unique(in_average.sort_values("train_positives")["band"]):
        summary = _summary(in_average[in_average["band"] == band], zero_division)
        band_rows.append({"band": str(band), "n_categories": summary["n_categories"],
                          "micro_f1": summary["micro_f1"], "macro_f1": summary["macro_f1"]})
    metrics = {
        **headline,
        "averaged_over": average_over,
        "categories_listed": int(len(table)),
        "averages": averages,
        "bands": band_rows,
        "ranking": dict(ranking),
        "per_category": per_category_rows,
    }
    return metrics, table


def to_builtin(value: Any) -> Any:
    """The value with numpy scalars made plain Python and NaN made None, for JSON."""
    if isinstance(value, dict):
        return {key: to_builtin(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_builtin(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None  # JSON has no NaN (a degenerate test statistic)
    return value
