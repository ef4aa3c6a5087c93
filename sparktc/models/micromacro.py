"""LibMultiLabel's thresholding, micromacro-freq (Lin & Lin 2023, "On the thresholding strategy for infrequent labels
in multi-label classification", section 4.3 and supplementary D; the LibMultiLabel paper, ``001_*.txt`` section 3.2),
as LibMultiLabel 0.10.0's ``train_thresholding`` and ``_micromacro_one_label`` compute it.

The labels are visited from the most frequent in the training documents (:func:`visiting_order`). For each label,
each of its ``k`` cross-validation folds gets the threshold that maximises, on that fold's out-of-fold scores,

    micro-F1(TP + TP_<, FP + FP_<, FN + FN_<) + F1(TP, FP, FN) / l,

TP, FP, FN the fold's counts at the threshold, TP_<, FP_<, FN_< the sums of the chosen counts of every fold of the
labels visited before, l the number of labels visited so far, this one included (the other labels' F1 are constants
of macro-F1 and left out); F1 = 0 at 0/0. The candidates are LibMultiLabel's: the validation scores sorted
increasing (stable), the cut after the i-th of them (i = -1: assign all), ties to the later cut; the threshold is
the midpoint of the scores on either side of the cut, or the next float below the lowest (assign all) or above the
highest (assign none). The label's threshold is the mean over its folds, and its folds' chosen counts join the sums.

So the labels depend on each other only through three counts: every label's fits and out-of-fold scores are
independent, and only this pass over the scores is sequential (:func:`micromacro_thresholds`). The rule stays
sparktc's "score > t": LibMultiLabel adds -t to the decision value and assigns when the sum is > 0, which is the same
decision (``a - t > 0 <=> a > t`` in floating point).

Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sparktc.validation import check_labels

__all__ = ["Totals", "fold_cut", "label_order", "micromacro_thresholds", "visiting_order"]


@dataclass(frozen=True)
class Totals:
    """The counts micro-F1 accumulates over the labels visited (each fold's chosen TP, FP, FN) and how many."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    labels: int = 0


def label_order(codes: Sequence[str]) -> list[str]:
    """The categories in LibMultiLabel's label order: its binarizer sorts the labels as its reader typed them, as
    integers when every label is one (LIBSVM files), else as strings.
    """
    numeric = all(code.lstrip("-").isdigit() for code in codes)
    return sorted(codes, key=int) if numeric else sorted(codes)


def visiting_order(positives: ArrayLike) -> NDArray[np.int64]:
    """The labels' positions in the order micromacro-freq visits them: ``train_thresholding``'s
    ``np.flip(np.argsort(num_positives))``, ``positives`` the training positives in :func:`label_order`. numpy's
    default sort is not stable, so labels with equal counts come in the order numpy's sort leaves them, as
    LibMultiLabel's do with the same numpy.
    """
    return np.flip(np.argsort(np.asarray(positives, dtype=np.int64))).astype(np.int64)


def fold_cut(scores: ArrayLike, y: ArrayLike, totals: Totals) -> tuple[float, tuple[int, int, int]]:
    """One fold's threshold and its TP, FP, FN (module docstring), given the counts of the labels visited before
    and ``totals.labels`` counting this one: ``_micromacro_one_label``'s loop over the cuts, computed for all cuts at
    once with the same arithmetic (the same integer counts, the same float divisions).
    """
    scores = np.asarray(scores, dtype=np.float64)
    y = check_labels("y", y, scores.shape[0])
    order = np.argsort(scores, kind="stable")
    ranked = scores[order]
    below = np.concatenate(([0], np.cumsum(y[order])))  # positives at or below each cut, cut -1 first
    n, positives = len(scores), int(np.count_nonzero(y))
    tp = positives - below
    fn = below
    fp = (n - positives) - (np.arange(n + 1) - below)
    with np.errstate(divide="ignore", invalid="ignore"):
        macro = np.nan_to_num((2 * tp) / (2 * tp + fp + fn)) / totals.labels
        micro = np.nan_to_num((2 * (tp + totals.tp)) / (2 * (tp + totals.tp) + fp + fn + totals.fp + totals.fn))
    objective = micro + macro
    best = int(np.flatnonzero(objective == objective.max())[-1])  # ties to the later cut (>=)
    cut = best - 1
    if cut == -1:
        threshold = np.nextafter(ranked[0], -np.inf)
    elif cut == n - 1:
        threshold = np.nextafter(ranked[-1], np.inf)
    else:
        threshold = (ranked[cut] + ranked[cut + 1]) / 2
    return float(threshold), (int(tp[best]), int(fp[best]), int(fn[best]))


def micromacro_thresholds(labels: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike]], folds: int
                          ) -> list[tuple[float, NDArray[np.float64]]]:
    """Every label's threshold and its folds', the labels given in visiting order (:func:`visiting_order`), each as
    (out-of-fold scores of the training documents, their labels, their fold in 0..folds-1).
    """
    totals, found = Totals(), []
    for scores, y, fold in labels:
        scores, fold = np.asarray(scores, dtype=np.float64), np.asarray(fold)
        y = check_labels("y", y, scores.shape[0])
        visiting = Totals(totals.tp, totals.fp, totals.fn, totals.labels + 1)
        per_fold, chosen = np.empty(folds), np.zeros(3, dtype=np.int64)
        for f in range(folds):
            held = fold == f
            per_fold[f], counts = fold_cut(scores[held], y[held], visiting)
            chosen += counts
        totals = Totals(visiting.tp + int(chosen[0]), visiting.fp + int(chosen[1]), visiting.fn + int(chosen[2]),
                        visiting.labels)
        found.append((float(per_fold.mean()), per_fold))
    return found
