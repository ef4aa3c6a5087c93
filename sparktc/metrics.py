"""Precision, recall and F1 from per-category contingency tables (REFERENCE.md section 6).

For category c over the n test documents, TP, FP, FN and TN count the (true, predicted)
decision pairs (Lewis 1991). Then

* P = TP / (TP + FP),  R = TP / (TP + FN),  F1 = 2 TP / (2 TP + FP + FN);
* micro-average: sum the tables over the categories, then compute P, R, F1;
* macro-average: compute P, R, F1 per category, then take the unweighted mean.

A ratio whose denominator is 0 is set to ``zero_division``, exactly as scikit-learn's
``precision_recall_fscore_support(zero_division=...)`` does: P when TP + FP = 0, R when
TP + FN = 0, F1 when TP + FP + FN = 0. LYRL2004 and Debole & Sebastiani use 1 (a category
with no test positives that is never predicted is handled perfectly); scikit-learn and
LibMultiLabel use 0. Reports must state which (REFERENCE.md section 6), so
:func:`summarize` spells the convention out.

These are pure numpy functions; the Spark evaluation stage computes the tables and calls them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "per_category",
    "micro_average",
    "macro_average",
    "summarize",
    "contingency_from_sets",
    "CONVENTIONS",
]

#: What each allowed ``zero_division`` means, in words, for reports.
CONVENTIONS: dict[float, str] = {
    1.0: (
        "P, R and F1 are 1 when their denominator is 0; F1 = 1 when TP = FP = FN = 0 "
        "(LYRL2004, Debole & Sebastiani)"
    ),
    0.0: (
        "P, R and F1 are 0 when their denominator is 0; F1 = 0 when TP = FP = FN = 0 "
        "(scikit-learn, LibMultiLabel)"
    ),
}

_Table = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


def _check_zero_division(zero_division: float) -> float:
    """``zero_division`` as a float, or ValueError unless it is 0.0 or 1.0."""
    if (
        isinstance(zero_division, bool)
        or not isinstance(zero_division, (int, float, np.integer, np.floating))
        or float(zero_division) not in CONVENTIONS
    ):
        raise ValueError(
            f"zero_division must be 0.0 (scikit-learn, LibMultiLabel) or 1.0 (LYRL2004, "
            f"Debole & Sebastiani); got {zero_division!r}"
        )
    return float(zero_division)


def _check_table(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike) -> _Table:
    """The four count arrays as 1-D int64 arrays of one length, or ValueError naming the culprit."""
    arrays = []
    for name, value in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn)):
        array = np.asarray(value)
        if array.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array (one count per category); got ndim={array.ndim}")
        if array.size and not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"{name} must hold integer counts; got dtype {array.dtype}")
        array = array.astype(np.int64, copy=False)
        if np.any(array < 0):
            raise ValueError(f"{name} must hold non-negative counts; got minimum {array.min()}")
        arrays.append(array)
    lengths = {name: a.shape[0] for name, a in zip(("tp", "fp", "fn", "tn"), arrays)}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"tp, fp, fn and tn must have the same length; got {lengths}")
    tp_, fp_, fn_, tn_ = arrays
    return tp_, fp_, fn_, tn_


def _divide(numerator: NDArray, denominator: NDArray, zero_division: float) -> NDArray[np.float64]:
    """numerator / denominator elementwise, ``zero_division`` where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.divide(
        numerator, denominator, out=np.full(denominator.shape, zero_division),
        where=denominator != 0,
    )


def _prf(tp: NDArray, fp: NDArray, fn: NDArray, zero_division: float) -> dict[str, NDArray[np.float64]]:
    return {
        "precision": _divide(tp, tp + fp, zero_division),
        "recall": _divide(tp, tp + fn, zero_division),
        "f1": _divide(2 * tp, 2 * tp + fp + fn, zero_division),
    }


def per_category(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, zero_division: float
) -> dict[str, NDArray[np.float64]]:
    """Per-category precision, recall and F1 (REFERENCE.md section 6).

    P = TP / (TP + FP), R = TP / (TP + FN), F1 = 2 TP / (2 TP + FP + FN); each is
    ``zero_division`` where its denominator is 0, as in scikit-learn's
    ``precision_recall_fscore_support(average=None, zero_division=...)``.

    Parameters
    ----------
    tp, fp, fn, tn : 1-D integer arrays, one entry per category.
    zero_division : 0.0 or 1.0, the value of a ratio with denominator 0.

    Returns
    -------
    dict with keys ``"precision"``, ``"recall"``, ``"f1"``, each a float64 array.
    """
    zero_division = _check_zero_division(zero_division)
    tp_, fp_, fn_, _ = _check_table(tp, fp, fn, tn)
    return _prf(tp_, fp_, fn_, zero_division)


def micro_average(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, zero_division: float
) -> dict[str, float]:
    """Micro-averaged precision, recall and F1: sum the tables, then compute (REFERENCE.md section 6).

    micro-F1 = 2 sum TP / (2 sum TP + sum FP + sum FN), and likewise P and R; a ratio with
    denominator 0 is ``zero_division``. Matches scikit-learn's ``average="micro"``.
    """
    zero_division = _check_zero_division(zero_division)
    tp_, fp_, fn_, _ = _check_table(tp, fp, fn, tn)
    sums = _prf(tp_.sum(keepdims=True), fp_.sum(keepdims=True), fn_.sum(keepdims=True), zero_division)
    return {key: float(value[0]) for key, value in sums.items()}


def macro_average(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, zero_division: float
) -> dict[str, float]:
    """Macro-averaged precision, recall and F1: the unweighted means of the per-category values.

    Per-category values follow :func:`per_category`; macro-F1 is the mean of the per-category
    F1 values (not the harmonic mean of macro-P and macro-R). Matches scikit-learn's
    ``average="macro"``. Raises ValueError when there are no categories.
    """
    values = per_category(tp, fp, fn, tn, zero_division)
    if values["f1"].size == 0:
        raise ValueError("macro averages need at least one category; got 0 categories")
    return {key: float(value.mean()) for key, value in values.items()}


def summarize(
    categories: Sequence[str],
    tp: ArrayLike,
    fp: ArrayLike,
    fn: ArrayLike,
    tn: ArrayLike,
    zero_division: float,
) -> dict:
    """Micro and macro P, R, F1 with the per-category table, as plain Python values for a report.

    Returns a dict with ``micro_precision``, ``micro_recall``, ``micro_f1``,
    ``macro_precision``, ``macro_recall``, ``macro_f1``, ``n_categories``, ``zero_division``,
    ``zero_division_convention`` (in words, see :data:`CONVENTIONS`) and ``per_category``: a
    list, in the order of ``categories``, of dicts with ``category``, ``tp``, ``fp``, ``fn``,
    ``tn``, ``precision``, ``recall``, ``f1``, so any other average can be recomputed
    (REFERENCE.md section 6).

    Raises ValueError if ``categories`` is empty, has duplicates or does not match the tables.
    """
    zero_division = _check_zero_division(zero_division)
    tp_, fp_, fn_, tn_ = _check_table(tp, fp, fn, tn)
    names = list(categories)
    if len(names) != tp_.shape[0]:
        raise ValueError(
            f"categories must name one category per table entry; got {len(names)} categories "
            f"for {tp_.shape[0]} table entries"
        )
    if len(set(names)) != len(names):
        raise ValueError("categories must be distinct; got duplicates "
                         f"{sorted({c for c in names if names.count(c) > 1})}")
    micro = micro_average(tp_, fp_, fn_, tn_, zero_division)
    macro = macro_average(tp_, fp_, fn_, tn_, zero_division)
    values = _prf(tp_, fp_, fn_, zero_division)
    return {
        "micro_precision": micro["precision"],
        "micro_recall": micro["recall"],
        "micro_f1": micro["f1"],
        "macro_precision": macro["precision"],
        "macro_recall": macro["recall"],
        "macro_f1": macro["f1"],
        "n_categories": len(names),
        "zero_division": zero_division,
        "zero_division_convention": CONVENTIONS[zero_division],
        "per_category": [
            {
                "category": name,
                "tp": int(tp_[j]),
                "fp": int(fp_[j]),
                "fn": int(fn_[j]),
                "tn": int(tn_[j]),
                "precision": float(values["precision"][j]),
                "recall": float(values["recall"][j]),
                "f1": float(values["f1"][j]),
            }
            for j, name in enumerate(names)
        ],
    }


def contingency_from_sets(
    true_labels: Sequence[Iterable[str]],
    predicted: Sequence[Iterable[str]],
    categories: Sequence[str],
) -> _Table:
    """Per-category TP, FP, FN, TN from the true and predicted label sets of each document.

    A plain-Python reference for tests and checks of the Spark path. Document i contributes to
    category c: TP if c is in both ``true_labels[i]`` and ``predicted[i]``, FP if only
    predicted, FN if only true, TN otherwise. Labels not in ``categories`` are ignored, so the
    tables can be restricted to a subset of categories (e.g. those with a training positive).

    Returns int64 arrays (tp, fp, fn, tn) in the order of ``categories``; tp + fp + fn + tn
    equals the number of documents for every category. Raises ValueError if the two lists
    differ in length or ``categories`` has duplicates.
    """
    if len(true_labels) != len(predicted):
        raise ValueError(
            f"true_labels and predicted must have one entry per document; got "
            f"{len(true_labels)} and {len(predicted)}"
        )
    index = {name: j for j, name in enumerate(categories)}
    if len(index) != len(categories):
        raise ValueError("categories must be distinct; got duplicates")
    n_categories = len(index)
    tp = np.zeros(n_categories, dtype=np.int64)
    fp = np.zeros(n_categories, dtype=np.int64)
    fn = np.zeros(n_categories, dtype=np.int64)
    for truth, guess in zip(true_labels, predicted):
        truth_ids = {index[c] for c in truth if c in index}
        guess_ids = {index[c] for c in guess if c in index}
        for j in truth_ids & guess_ids:
            tp[j] += 1
        for j in guess_ids - truth_ids:
            fp[j] += 1
        for j in truth_ids - guess_ids:
            fn[j] += 1
    tn = len(true_labels) - tp - fp - fn
    return tp, fp, fn, tn
