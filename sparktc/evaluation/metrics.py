"""Effectiveness measures from per-category contingency tables (REFERENCE.md section 6).

For category c over the n test documents, TP, FP, FN and TN count the (true, predicted)
decision pairs (Lewis 1991), and n = TP + FP + FN + TN. Then

* precision P = TP / (TP + FP),  recall R = TP / (TP + FN),  F1 = 2 TP / (2 TP + FP + FN);
* fallout = FP / (FP + TN),  overlap = TP / (TP + FP + FN)  (Lewis 1991, equations 3-4);
* error = (FP + FN) / n,  accuracy = (TP + TN) / n  (Yang & Liu 1999, section 2);
* micro-average: sum the tables over the categories, then compute the measure;
* macro-average: compute the measure per category, then take the unweighted mean;
* Macro*-F1 (LibMultiLabel): the harmonic mean of macro-P and macro-R.

A ratio whose denominator is 0 is set to ``zero_division``, exactly as scikit-learn's
``precision_recall_fscore_support(zero_division=...)`` does: P when TP + FP = 0, R when
TP + FN = 0, F1 and overlap when TP + FP + FN = 0, fallout when FP + TN = 0 (every test
document is a positive), error and accuracy when n = 0 (no test documents). LYRL2004 and
Debole & Sebastiani use 1 (a category with no test positives that is never predicted is
handled perfectly); scikit-learn and LibMultiLabel use 0. Reports must state which
(REFERENCE.md section 6), so :func:`summarize` spells the convention out.

Categories can also be grouped by their number of training positives
(:func:`frequency_band`), as Lewis 1991 recommends and Yang & Liu 1999 (Figs 4-5) do.

For a hierarchy, :func:`ancestor_table` lists what a predicted category implies when a document's
predictions are closed under the hierarchy (the category and all its ancestors, as RCV1-v2's topic
assignments are; REFERENCE.md section 1), so the same tables can be counted over closed predictions.

These are pure numpy functions; the Spark evaluation stage computes the tables and calls them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sparktc.validation import check_counts

__all__ = [
    "ancestor_table",
    "f1_score",
    "per_category",
    "micro_average",
    "macro_average",
    "summarize",
    "frequency_band",
    "band_order",
    "CONVENTIONS",
    "EMPTY_F1",
    "MEASURES",
    "MEASURE_LABELS",
    "DEFAULT_BAND_EDGES",
]

#: The measures computed per category and averaged (:func:`_measures` holds their formulas), with their labels in
#: ``report.md``, in report order.
MEASURE_LABELS: dict[str, str] = {"precision": "Precision", "recall": "Recall", "f1": "F1", "fallout": "Fallout",
                                  "overlap": "Overlap", "error": "Error", "accuracy": "Accuracy"}
MEASURES: tuple[str, ...] = tuple(MEASURE_LABELS)

#: Training-frequency band edges of Lewis 1991 / Yang & Liu 1999 Figs 4-5: 0, 1-10, 11-100, ...
DEFAULT_BAND_EDGES: tuple[int, ...] = (10, 100, 1000)

#: F1 when TP = FP = FN = 0 (no positive, none assigned) wherever sparktc decides it, not the user (cross-validated
#: choices, the significance tests' micro-F1): perfect, as LYRL2004 counts it.
EMPTY_F1 = 1.0

#: What each allowed ``zero_division`` means, in words, for reports.
CONVENTIONS: dict[float, str] = {
    1.0: (
        "P, R and F1 are 1 when their denominator is 0; F1 = 1 when TP = FP = FN = 0 "
        "(LYRL2004, Debole & Sebastiani); likewise overlap, fallout, error and accuracy "
        "are 1 when their denominator is 0"
    ),
    0.0: (
        "P, R and F1 are 0 when their denominator is 0; F1 = 0 when TP = FP = FN = 0 "
        "(scikit-learn, LibMultiLabel); likewise overlap, fallout, error and accuracy "
        "are 0 when their denominator is 0"
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
    arrays = [check_counts(name, value) for name, value in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn))]
    lengths = {name: a.shape[0] for name, a in zip(("tp", "fp", "fn", "tn"), arrays)}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"tp, fp, fn and tn must have the same length; got {lengths}")
    tp_, fp_, fn_, tn_ = arrays
    return tp_, fp_, fn_, tn_


def _divide(numerator: NDArray, denominator: NDArray, zero_division: float) -> NDArray[np.float64]:
    """The ratio numerator / denominator elementwise, ``zero_division`` where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.divide(
        numerator, denominator, out=np.full(denominator.shape, zero_division),
        where=denominator != 0,
    )


def f1_score(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, zero_division: float) -> NDArray[np.float64] | float:
    """F1 = 2 TP / (2 TP + FP + FN), ``zero_division`` when TP = FP = FN = 0 (REFERENCE.md section 6).

    Elementwise over count arrays (one F1 per category, as :func:`per_category`), or one Python
    float for scalar counts; micro-F1 is the F1 of the counts summed over the categories
    (:func:`micro_average`). ``zero_division`` is 0.0 or 1.0; the counts are taken as given.
    """
    zero_division = _check_zero_division(zero_division)
    f1 = _divide(2 * np.asarray(tp), 2 * np.asarray(tp) + fp + fn, zero_division)
    return f1 if f1.ndim else float(f1)


def _measures(
    tp: NDArray, fp: NDArray, fn: NDArray, tn: NDArray, zero_division: float
) -> dict[str, NDArray[np.float64]]:
    """All of :data:`MEASURES` elementwise, ``zero_division`` wherever a denominator is 0."""
    n = tp + fp + fn + tn
    return {
        "precision": _divide(tp, tp + fp, zero_division),
        "recall": _divide(tp, tp + fn, zero_division),
        "f1": f1_score(tp, fp, fn, zero_division),
        "fallout": _divide(fp, fp + tn, zero_division),
        "overlap": _divide(tp, tp + fp + fn, zero_division),
        "error": _divide(fp + fn, n, zero_division),
        "accuracy": _divide(tp + tn, n, zero_division),
    }


def per_category(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, zero_division: float
) -> dict[str, NDArray[np.float64]]:
    """Per-category effectiveness measures (Lewis 1991; REFERENCE.md section 6).

    With n = TP + FP + FN + TN, and each ratio ``zero_division`` where its denominator is 0:

    * precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2 TP / (2 TP + FP + FN), as in
      scikit-learn's ``precision_recall_fscore_support(average=None, zero_division=...)``;
    * fallout = FP / (FP + TN) (0/0 only when every test document is a positive);
    * overlap = TP / (TP + FP + FN) (scikit-learn's ``jaccard_score``; 0/0 exactly when F1's is);
    * error = (FP + FN) / n and accuracy = (TP + TN) / n (0/0 only when n = 0).

    Args:
        tp: 1-D integer array of true positives, one entry per category.
        fp: 1-D integer array of false positives, one entry per category.
        fn: 1-D integer array of false negatives, one entry per category.
        tn: 1-D integer array of true negatives, one entry per category.
        zero_division: 0.0 or 1.0, the value of a ratio with denominator 0.

    Returns:
        dict with one float64 array per name in :data:`MEASURES` (``"precision"``, ``"recall"``,
        ``"f1"``, ``"fallout"``, ``"overlap"``, ``"error"``, ``"accuracy"``).
    """
    zero_division = _check_zero_division(zero_division)
    return _measures(*_check_table(tp, fp, fn, tn), zero_division)


def micro_average(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, zero_division: float
) -> dict[str, float]:
    """Micro-averaged measures: sum the tables, then compute (Lewis 1991; REFERENCE.md section 6).

    micro-F1 = 2 sum TP / (2 sum TP + sum FP + sum FN), micro-fallout = sum FP / sum (FP + TN),
    micro-error = sum (FP + FN) / sum n, and likewise for every name in :data:`MEASURES`; a ratio
    with denominator 0 is ``zero_division``. P, R and F1 match scikit-learn's
    ``average="micro"``, overlap its ``jaccard_score(average="micro")`` and error its
    ``hamming_loss``.
    """
    zero_division = _check_zero_division(zero_division)
    sums = [array.sum(keepdims=True) for array in _check_table(tp, fp, fn, tn)]
    return {key: float(value[0]) for key, value in _measures(*sums, zero_division).items()}


def macro_average(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, zero_division: float
) -> dict[str, float]:
    """Macro-averaged measures: the unweighted means of the per-category values.

    Per-category values follow :func:`per_category`, one mean per name in :data:`MEASURES`;
    macro-F1 is the mean of the per-category F1 values (not the harmonic mean of macro-P and
    macro-R, which is :func:`summarize`'s ``macro_star_f1``). P, R and F1 match scikit-learn's
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
    """Micro and macro averages with the per-category table, as plain Python values for a report.

    Returns a dict with ``micro_<m>`` and ``macro_<m>`` for every ``m`` in :data:`MEASURES`
    (:func:`micro_average`, :func:`macro_average`); ``macro_star_f1``, LibMultiLabel's Macro*-F1
    = 2 macro_P macro_R / (macro_P + macro_R), which is 0 when macro_P = macro_R = 0 (under
    ``zero_division=1`` that happens only when every category has genuine P = R = 0, under
    ``zero_division=0`` also when every category is 0/0 and macro-F1 is 0 too, so the value agrees
    with the convention either way); ``n_categories``; ``zero_division``;
    ``zero_division_convention`` (in words, see :data:`CONVENTIONS`); and ``per_category``: a
    list, in the order of ``categories``, of dicts with ``category``, ``tp``, ``fp``, ``fn``,
    ``tn`` and every measure, so any other average can be recomputed (REFERENCE.md section 6).

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
    values = _measures(tp_, fp_, fn_, tn_, zero_division)
    macro_p, macro_r = macro["precision"], macro["recall"]
    report: dict = {f"micro_{m}": micro[m] for m in MEASURES}
    report.update({f"macro_{m}": macro[m] for m in MEASURES})
    report.update({
        "macro_star_f1": 2 * macro_p * macro_r / (macro_p + macro_r) if macro_p + macro_r else 0.0,
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
                **{m: float(values[m][j]) for m in MEASURES},
            }
            for j, name in enumerate(names)
        ],
    })
    return report


def _check_edges(edges: Sequence[int]) -> tuple[int, ...]:
    """``edges`` as a tuple of ints, or ValueError unless non-empty, positive, strictly increasing."""
    values = tuple(edges)
    if (
        not values
        or any(isinstance(e, bool) or not isinstance(e, (int, np.integer)) for e in values)
        or values[0] < 1
        or any(b <= a for a, b in zip(values, values[1:]))
    ):
        raise ValueError(
            f"edges must be a non-empty sequence of strictly increasing positive integers, "
            f"e.g. (10, 100, 1000); got {edges!r}"
        )
    return tuple(int(e) for e in values)


def band_order(edges: Sequence[int] = DEFAULT_BAND_EDGES) -> tuple[str, ...]:
    """The training-frequency band labels for ``edges``, from rarest to most frequent.

    Edges e_1 < ... < e_k give the bands "0" (no training positive), "1-e_1",
    "(e_1 + 1)-e_2", ..., "(e_{k-1} + 1)-e_k" and ">e_k"; a band holding a single count is
    labelled by that count alone (edges (1, 10) give "0", "1", "2-10", ">10"). The default
    edges give "0", "1-10", "11-100", "101-1000", ">1000" (Lewis 1991 section 3; Yang & Liu
    1999 Figs 4-5). Raises ValueError unless ``edges`` are strictly increasing positive ints.
    """
    values = _check_edges(edges)
    lows = (1,) + tuple(e + 1 for e in values[:-1])
    inner = tuple(str(hi) if lo == hi else f"{lo}-{hi}" for lo, hi in zip(lows, values))
    return ("0",) + inner + (f">{values[-1]}",)


def frequency_band(
    train_positives: ArrayLike, edges: Sequence[int] = DEFAULT_BAND_EDGES
) -> NDArray[np.str_]:
    """The training-frequency band of each category, for averages by category group.

    Category c with m_c training positives falls in band "0" when m_c = 0, in the band whose
    upper edge is the first e_i >= m_c otherwise, and in ">e_k" above the last edge; the labels
    are those of :func:`band_order` (default: "0", "1-10", "11-100", "101-1000", ">1000", so 10
    is in "1-10" and 11 in "11-100"). Lewis 1991 recommends averaging over such groups; Yang &
    Liu 1999 (Figs 4-5) plot F1 against training-set frequency.

    Args:
        train_positives: 1-D array of non-negative integer counts, one per category.
        edges: strictly increasing positive integers, the inclusive upper ends of the non-zero bands.

    Returns:
        1-D array of band labels (numpy str), one per category.
    """
    labels = np.array(band_order(edges))
    counts = check_counts("train_positives", train_positives)
    band = np.where(counts == 0, 0, np.searchsorted(np.array(_check_edges(edges)), counts) + 1)
    return labels[band]


def ancestor_table(categories: Sequence[str], parents: Sequence[str | None]) -> NDArray[np.int64]:
    """What predicting each category implies once predictions are closed under the hierarchy: row j holds
    category j's position in ``categories``, then its parent's, its grandparent's and so on up to a top-level
    category, padded with -1 (REFERENCE.md section 1: RCV1-v2's topic assignments hold every ancestor of a
    category assigned, LYRL2004's hierarchy policy; the closed predicted set of a document is the union of the
    rows of its predicted categories).

    ``parents[j]`` is category j's parent code, or None (or any non-string, such as pandas' NaN) for a
    top-level category. Ancestors are followed within ``categories`` only: the walk up stops at a parent that
    is not among them, whose own parent is not known. The table has 1 + (the most ancestors a category has)
    columns: exactly one when no category has a parent among ``categories``, so that closing changes nothing.

    Raises ValueError if ``categories`` and ``parents`` differ in length, a category is listed twice, or the
    parents form a cycle (a category its own ancestor).
    """
    codes, up_codes = list(categories), list(parents)
    if len(codes) != len(up_codes):
        raise ValueError(f"categories and parents must have one entry per category; got {len(codes)} categories "
                         f"and {len(up_codes)} parents")
    position = {code: j for j, code in enumerate(codes)}
    if len(position) != len(codes):
        raise ValueError("categories must be distinct; got duplicates "
                         f"{sorted({c for c in codes if codes.count(c) > 1})}")
    up = [position.get(parent, -1) if isinstance(parent, str) else -1 for parent in up_codes]
    chains = []
    for j, code in enumerate(codes):
        chain = [j]
        while up[chain[-1]] >= 0:
            parent = up[chain[-1]]
            if parent in chain:
                cycle = chain[chain.index(parent):] + [parent]
                raise ValueError(f"the parents form a cycle: {' -> '.join(codes[k] for k in cycle)} "
                                 f"(reached from {code!r})")
            chain.append(parent)
        chains.append(chain)
    table = np.full((len(codes), max((len(chain) for chain in chains), default=1)), -1, dtype=np.int64)
    for j, chain in enumerate(chains):
        table[j, :len(chain)] = chain
    return table
