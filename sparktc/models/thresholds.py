"""Per-category thresholds on decision values: SCut, SCutFBR, proportional, PCut and RCut (REFERENCE.md section 5).

A scoring model gives document d a score s(d, c) for category c (a decision value w'x + b for
the linear models); a thresholding strategy turns the scores into assignments. Throughout the
project the rule is strict:

    d is assigned to c  <=>  s(d, c) > t_c.

* SCut (Yang 2001; LYRL2004, supervised threshold setting): t_c maximises
  F1 = 2 TP / (2 TP + FP + FN) of the rule on validation documents (:func:`scut`).
* SCutFBR (LYRL2004, "SCutFBR.1"): k-fold cross-validation; per fold the SCut threshold on that
  fold's validation scores, replaced by the score of the top-ranked validation document when
  the fold's best F1 is below ``fbr``; t_c = mean over the folds
  (:func:`fold_thresholds`). The folds balance positives and negatives
  (:func:`balanced_folds`).
* Proportional (Lewis 1992a; Yang 2001; Debole & Sebastiani 2005): per fold, the threshold under
  which the number of the fold's validation documents assigned is closest to share_c * n, share_c
  being c's share of the training documents; t_c = mean over the folds (:func:`proportional`,
  :func:`proportional_fold_thresholds`).
* PCut (Yang 2001): assign to c the round(share_c * n) top-ranked test documents, share_c being
  c's share of the training documents (:func:`pcut_thresholds`).
* RCut (Yang 2001): assign each document its k top-scoring categories (:func:`rcut`).

F1 of a threshold is computed from counts; its denominator 2 TP + FP + FN is 0 only when there
is no positive document and nothing is assigned, and F1 is then 0 (scikit-learn, LibMultiLabel).
SCut never has to break that tie: with no positive it returns the "assign nothing" threshold.

Pure numpy; the Spark stages call these functions per category.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sparktc.validation import check_array, check_finite, check_integer, check_labels, check_number

__all__ = [
    "scut", "fold_thresholds", "proportional", "proportional_fold_thresholds", "balanced_folds", "validation_split",
    "validation_size", "pcut_counts", "pcut_thresholds", "rcut", "best_columns",
]

#: Distances to p * n closer than this are a tie (:func:`proportional`).
SHARE_TIE = 1e-9


def _check_scores(scores: ArrayLike, ndim: int, name: str = "scores") -> NDArray[np.float64]:
    """``scores`` as a non-empty float64 array of ``ndim`` dimensions with finite values."""
    scores = check_array(name, scores, ndim, "of decision values")
    check_finite(name, scores)
    return scores


def _below(value: float) -> float:
    """The largest float below ``value``: a threshold that every score >= ``value`` exceeds."""
    return float(np.nextafter(value, -np.inf))


def _cuts(scores: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Every distinct set of "score > t" decisions on ``scores``, from nothing assigned to everything:
    the documents in decreasing score order, and per cut the number it assigns (the first so many of
    that order; increasing) and its threshold (:func:`scut`'s candidates).
    """
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    # Index of the last document of each run of equal scores, in decreasing score order.
    run_ends = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True))
    distinct = ranked[run_ends]
    upper, lower = distinct[:-1], distinct[1:]
    midpoints = lower / 2 + upper / 2  # halves first: no overflow
    midpoints = np.where((midpoints >= lower) & (midpoints < upper), midpoints, lower)
    thresholds = np.concatenate(([distinct[0]], midpoints, [_below(distinct[-1])]))
    return order, np.concatenate(([0], run_ends + 1)), thresholds


def scut(scores: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """SCut: the threshold t maximising F1 of "score > t" on validation documents.

    F1(t) = 2 TP / (2 TP + FP + FN) with TP = #{y and s > t}, FP = #{not y and s > t},
    FN = #{y and s <= t} (Yang 2001; LYRL2004, supervised threshold setting; REFERENCE.md section 5).

    Candidates, with u_1 > u_2 > ... > u_m the distinct scores:

    * u_1, the maximum score itself: nothing is assigned (no score exceeds it);
    * the midpoints (u_j + u_{j+1}) / 2, j = 1..m-1: the documents scoring >= u_j are assigned
      (when two scores are adjacent floats and the midpoint rounds up to u_j, u_{j+1} is used);
    * the largest float below u_m: everything is assigned.

    Every distinct set of "score > t" decisions is thus tried once. Ties in F1 go to the
    candidate closest to 0 (the models' default threshold), and between t and -t to the higher
    one (fewer assignments). Cost O(n log n): one sort, then cumulative counts of positives and
    negatives at the end of each run of equal scores.

    Args:
        scores: float array, shape (n,). Decision values of the validation documents; finite.
        y: bool array, shape (n,). True for the validation documents in the category.

    Returns:
        (threshold, f1), both floats: f1 is the F1 of "score > threshold" on (scores, y). When y has no
        True entry every threshold has F1 = 0 and the result is (max(scores), 0.0): assign nothing.
    """
    scores = _check_scores(scores, 1)
    y = check_labels("y", y, scores.shape[0])
    n_positive = int(np.count_nonzero(y))
    top = float(scores.max())
    if n_positive == 0:
        return top, 0.0

    order, assigned, candidates = _cuts(scores)
    true_positives = np.concatenate(([0], np.cumsum(y[order])[assigned[1:] - 1]))
    false_positives = assigned - true_positives
    # 2 TP + FP + FN = TP + FP + n_positive > 0.
    f1 = 2 * true_positives / (true_positives + false_positives + n_positive)

    best = np.lexsort((-candidates, np.abs(candidates), -f1))[0]
    return float(candidates[best]), float(f1[best])


def fold_thresholds(
    fold_scores: Sequence[ArrayLike], fold_y: Sequence[ArrayLike], fbr: float
) -> NDArray[np.float64]:
    """The SCutFBR threshold of each fold (LYRL2004, supervised threshold setting, SCutFBR.1).

    For fold f with validation scores s_f and labels y_f: (t_f, F1_f) = :func:`scut`(s_f, y_f);
    if F1_f < fbr, t_f = max(s_f), the score of the top-ranked validation document.

    LYRL2004 assigns the top-ranked document at that fallback. Here the rule stays
    "score > t" everywhere, so t_f = max(s_f) assigns none of fold f's documents; on new
    documents it assigns those scoring above every validation document of the fold. The
    fallback is the conservative "assign almost nothing" threshold either way; the two readings
    differ only for documents scoring exactly max(s_f).

    ``fbr = 0`` never falls back: the per-fold SCut thresholds.

    Args:
        fold_scores: sequence of float arrays, one per fold: each fold's validation decision values
            (from the model trained without that fold).
        fold_y: sequence of bool arrays, one per fold: each fold's validation labels.
        fbr: The F1 below which the fold falls back, in [0, 1]; LYRL2004 chose it by CV from 0.1..0.8.

    Returns:
        float array, shape (n_folds,).
    """
    fbr = check_number("fbr", fbr, 0, 1, kind="number")
    if len(fold_scores) == 0 or len(fold_scores) != len(fold_y):
        raise ValueError(
            f"fold_scores and fold_y must hold one array per fold, at least one fold; got "
            f"{len(fold_scores)} and {len(fold_y)} arrays"
        )
    thresholds = np.empty(len(fold_scores))
    for f, (scores, y) in enumerate(zip(fold_scores, fold_y)):
        scores = _check_scores(scores, 1, f"fold_scores[{f}]")
        threshold, f1 = scut(scores, check_labels(f"fold_y[{f}]", y, scores.shape[0]))
        thresholds[f] = threshold if f1 >= fbr else scores.max()
    return thresholds


def proportional(scores: ArrayLike, share: float) -> float:
    """Proportional thresholding: the threshold t under which the share of validation documents
    assigned is closest to the category's share of the training documents.

    t minimises |#{s > t} - p * n| over the n validation documents, p = (training documents in the
    category) / (training documents) (Lewis 1992a; Yang 2001; Debole & Sebastiani 2005, each
    category's threshold on a validation set; REFERENCE.md section 5, "PCut"). Unlike
    :func:`pcut_thresholds`, which cuts the documents being classified, t is set on validation
    scores and stored.

    The candidates are :func:`scut`'s, one per reachable count: u_1, the maximum score, assigns
    nothing; the midpoint of u_j > u_{j+1} assigns the documents scoring >= u_j; the largest float
    below the minimum assigns all n. Ties in scores leave some counts unreachable; of the reachable
    ones the closest to p * n wins, and of two equally close the smaller (fewer assignments).
    Distances within :data:`SHARE_TIE` of each other are equal: p and p * n are rounded, which can
    split an exact tie (21 of 38 training documents, n = 19: p * n = 10.500000000000002), while
    distances that truly differ, to p * n = positives * n / documents, differ by at least
    1 / documents. Cost O(n log n): one sort.

    Args:
        scores: float array, shape (n,). Decision values of the validation documents; finite.
        share: p, the category's share of the training documents, in [0, 1]: 0 assigns nothing, 1
            everything.

    Returns:
        The threshold, a float.
    """
    scores = _check_scores(scores, 1)
    share = check_number("share", share, 0, 1, kind="number")
    _, assigned, thresholds = _cuts(scores)
    distance = np.abs(assigned - share * scores.shape[0])
    # assigned increases: the first of the closest is the smallest count.
    return float(thresholds[np.flatnonzero(distance <= distance.min() + SHARE_TIE)[0]])


def proportional_fold_thresholds(fold_scores: Sequence[ArrayLike], share: float) -> NDArray[np.float64]:
    """The :func:`proportional` threshold of each fold, t_f = proportional(s_f, p), every fold with
    the same training share p (Debole & Sebastiani 2005, per validation set).

    Args:
        fold_scores: sequence of arrays, one per fold: each fold's validation decision values (from the
            model trained without that fold).
        share: p, the category's share of all the training documents, in [0, 1].

    Returns:
        float array, shape (n_folds,).
    """
    if len(fold_scores) == 0:
        raise ValueError("fold_scores must hold one array per fold, at least one fold; got 0 arrays")
    return np.array([proportional(_check_scores(scores, 1, f"fold_scores[{f}]"), share)
                     for f, scores in enumerate(fold_scores)])


def balanced_folds(y: ArrayLike, k: int, seed: int) -> NDArray[np.int64]:
    """Fold index in 0..k-1 per document, spreading positives and negatives evenly (LYRL2004).

    The positives, in a random order, are dealt round-robin to folds 0, 1, ..., k-1, 0, ...;
    the negatives, in a random order, continue the deal where the positives stopped. So the
    folds' numbers of positives differ by at most 1, likewise their numbers of negatives and
    their sizes, and every fold is non-empty (k <= n). The orders come from
    ``numpy.random.default_rng(seed)``: the same (y, k, seed) gives the same folds.

    Args:
        y: bool array, shape (n,). True for the documents in the category.
        k: Number of folds, 2 <= k <= n.
        seed: Non-negative seed of the random orders.
    """
    y = check_labels("y", y)
    k = check_integer("k", k, 2, y.shape[0])
    seed = check_integer("seed", seed, 0, kind="non-negative integer")
    rng = np.random.default_rng(seed)
    positives = rng.permutation(np.flatnonzero(y))
    negatives = rng.permutation(np.flatnonzero(~y))
    folds = np.empty(y.shape[0], dtype=np.int64)
    folds[np.concatenate((positives, negatives))] = np.arange(y.shape[0]) % k
    return folds


def validation_split(doc_ids: Iterable[str], fraction: float, seed: int) -> NDArray[np.bool_]:
    """Debole & Sebastiani's validation set Va, drawn from the training documents Tr: True for the documents held
    out. The classifiers learn from Tr - Va and their thresholds are set on Va (Debole & Sebastiani 2005,
    section "Text categorization"; they do not give Va's size).

    Va holds the round(fraction * n) documents (at least one, and at least one left to learn from, when
    0 < fraction < 1; none at 0) whose BLAKE2b(seed, doc id) is smallest: a random draw, the same whatever
    order the documents are read in and whichever worker reads them, and one Va for every category (a
    stratified split cannot balance every category of a multi-label corpus at once). Hash ties (none in
    practice among 64-bit digests) go to the earlier document.

    Args:
        doc_ids: The n training documents' ids, distinct.
        fraction: Va's share of the documents, in [0, 1).
        seed: Non-negative seed of the draw.
    """
    fraction = check_number("fraction", fraction, 0, 1, kind="number")
    seed = check_integer("seed", seed, 0, kind="non-negative integer")
    if fraction >= 1:
        raise ValueError(f"fraction must be below 1, so that a training document is left; got {fraction!r}")
    prefix = f"{seed}\x00".encode()
    keys = np.fromiter((int.from_bytes(hashlib.blake2b(prefix + str(doc_id).encode(), digest_size=8).digest(),
                                       "little") for doc_id in doc_ids), dtype=np.uint64)
    held = np.zeros(keys.shape[0], dtype=np.bool_)
    held[np.argsort(keys, kind="stable")[:validation_size(keys.shape[0], fraction)]] = True
    return held


def validation_size(n: int, fraction: float) -> int:
    """|Va| of :func:`validation_split` among ``n`` training documents: round(fraction * n), at least 1 and at
    most n - 1 when fraction > 0 and n >= 2, else 0.
    """
    return 0 if fraction == 0 or n < 2 else min(max(round(fraction * n), 1), n - 1)


def pcut_counts(train_share: NDArray[np.float64], n_docs: int) -> NDArray[np.int64]:
    """PCut's m_c = floor(train_share_c * n + 1/2) (rounded half up), at most n: how many of n
    documents category c is assigned to.
    """
    return np.minimum(np.floor(np.asarray(train_share, dtype=np.float64) * n_docs + 0.5).astype(np.int64), n_docs)


def pcut_thresholds(scores: ArrayLike, train_share: ArrayLike) -> NDArray[np.float64]:
    """PCut (Yang 2001): per category, the threshold assigning round(share * n) top-ranked documents.

    For category c, m_c = floor(train_share_c * n + 1/2) (rounded half up) of the n documents
    are to be assigned; t_c = the score of the (m_c + 1)-th ranked document, so the m_c
    documents above it get "score > t_c". m_c = 0 gives t_c = the maximum score (nothing
    assigned); m_c = n gives the largest float below the minimum score (everything assigned).
    Documents tied with the (m_c + 1)-th are not assigned, so ties can make fewer than m_c
    assignments.

    Args:
        scores: float array, shape (n_docs, n_categories). Decision values of the documents to classify;
            finite.
        train_share: float array, shape (n_categories,). Each category's share of the training documents,
            in [0, 1].

    Returns:
        float array, shape (n_categories,).
    """
    scores = _check_scores(scores, 2)
    n_docs, n_categories = scores.shape
    share = np.asarray(train_share, dtype=np.float64)
    if share.shape != (n_categories,) or not np.all((share >= 0) & (share <= 1)):
        raise ValueError(
            f"train_share must be an array of shape ({n_categories},), one share in [0, 1] per "
            f"column of scores; got shape {share.shape}"
            + (f" and values in [{float(share.min())!r}, {float(share.max())!r}]" if share.size else "")
        )
    counts = pcut_counts(share, n_docs)
    ranked = -np.sort(-scores, axis=0)
    thresholds = np.take_along_axis(ranked, np.minimum(counts, n_docs - 1)[None, :], axis=0)[0]
    everything = np.nextafter(ranked[-1], -np.inf)
    return np.where(counts < n_docs, thresholds, everything)


def rcut(scores: ArrayLike, k: int) -> NDArray[np.bool_]:
    """RCut (Yang 2001): assign each document its k top-scoring categories.

    Ties are broken by column order: of equal scores, the lower column index ranks first.

    Args:
        scores: float array, shape (n_docs, n_categories). Decision values; finite.
        k: Categories per document, 1 <= k <= n_categories.

    Returns:
        bool array, shape (n_docs, n_categories), with exactly k True entries per row.
    """
    scores = _check_scores(scores, 2)
    k = check_integer("k", k, 1, scores.shape[1])
    top = best_columns(scores, k)
    assigned = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(assigned, top, True, axis=1)
    return assigned


def best_columns(scores: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``scores`` (documents x categories), the columns of its ``k`` highest scores, best first, ties to
    the column first in order: ``np.argsort(-scores, axis=1, kind="stable")[:, :k]``, without sorting every row
    whole. ``np.partition`` finds each row's k-th score; the ties at it, rare among real-valued scores, are taken
    in column order, and only the k chosen are sorted (about half of the full sort's time for 5 of 103).
    """
    n, m = scores.shape
    k = min(k, m)
    if k == m or n == 0 or not np.isfinite(scores).all():  # a NaN would compare false either way
        return np.argsort(-scores, axis=1, kind="stable")[:, :k]
    kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1:k]
    chosen = scores >= kth
    tied = np.flatnonzero(np.count_nonzero(chosen, axis=1) != k)
    if len(tied):  # more than k at or above the k-th score: the ties at it go in column order, as a stable sort
        rows = scores[tied]
        greater, equal = rows > kth[tied], rows == kth[tied]
        room = k - np.count_nonzero(greater, axis=1)
        chosen[tied] = greater | (equal & (np.cumsum(equal, axis=1) <= room[:, None]))
    columns = np.nonzero(chosen)[1].reshape(n, k)
    order = np.argsort(-np.take_along_axis(scores, columns, axis=1), axis=1, kind="stable")
    return np.take_along_axis(columns, order, axis=1)
