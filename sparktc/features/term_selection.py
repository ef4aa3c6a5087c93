"""Term-selection scores from 2x2 term/category contingency tables (REFERENCE.md section 4).

For a term t and a category c over the training documents (Debole & Sebastiani 2003; Yang &
Pedersen 1997):

* ``A`` = #docs that contain t and are in c,
* ``B`` = #docs that contain t and are not in c,
* ``C`` = #docs that do not contain t and are in c,
* ``D`` = #docs that do not contain t and are not in c,

with ``N = A + B + C + D``. Every function (:func:`chi2`, :func:`information_gain`, :func:`gain_ratio`:
Debole & Sebastiani 2005, Table 2) broadcasts like numpy, so one call scores a whole terms x categories
matrix. Per-category scores are turned into one global score per term by :func:`global_max` (LYRL2004,
Debole), :func:`global_avg` (Yang & Pedersen) or :func:`global_mean`; :func:`global_scores` computes every
function under every globalization (the columns of the ``term_ranks`` table, :func:`score_column`),
:func:`rank_order` orders the terms by one of them, :func:`top_k_from_reduction_factor` turns Debole's
reduction factor into a number of terms to keep and :func:`top_terms` picks them.

Beside them, the unsupervised cut of the vocabulary itself (:func:`vocabulary_terms`): the terms of at least
``min_df`` training documents, and of those the most frequent (:data:`FREQUENCY`), scikit-learn's ``min_df`` and
``max_features``. It needs no category, so the weight stage applies it before weighting, and the weights are
normalised over the terms it keeps, as scikit-learn's are.

These are pure numpy functions; the Spark stages compute the counts and call them.
"""

from __future__ import annotations

import math
import numbers
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from sparktc.validation import check_integer, check_unit_interval

__all__ = [
    "SCORES",
    "FREQUENCY",
    "GLOBAL_SCORES",
    "SCORE_COLUMNS",
    "term_scores",
    "contingency_2x2",
    "chi2",
    "information_gain",
    "gain_ratio",
    "global_max",
    "global_avg",
    "global_mean",
    "global_scores",
    "score_column",
    "ranking_column",
    "rank_order",
    "top_k_from_reduction_factor",
    "top_terms",
    "vocabulary_terms",
]

#: The term-selection functions, by their [rank] score names, and the globalizations ([rank] global_score).
SCORES = ("chi2", "ig", "gr")
GLOBAL_SCORES = ("max", "avg", "mean")
#: The unsupervised ranking ([rank] score): a term's occurrences over the training documents, scikit-learn's
#: ``X.sum(axis=0)`` that ``max_features`` keeps the top of; also the ``term_ranks`` column holding them.
FREQUENCY = "frequency"
BLOCK_TERMS = 2048  # terms scored at a time (term_scores): the 2x2 tables of a block stay in the cache


def _counts(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """``value`` as a float64 array of finite, non-negative counts, or ValueError naming ``name``."""
    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite counts; got non-finite values in {name}")
    if np.any(array < 0):
        raise ValueError(f"{name} must be non-negative counts; got minimum {float(array.min())!r}")
    return array


def contingency_2x2(
    A: ArrayLike, df: ArrayLike, n_positive: ArrayLike, N: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The four cells (A, B, C, D) of each term/category table from the counts Spark computes.

    ``A`` = #training docs containing t in c, ``df`` = #training docs containing t (document
    frequency), ``n_positive`` = #training docs in c, ``N`` = #training docs. Then
    ``B = df - A``, ``C = n_positive - A``, ``D = N - df - n_positive + A`` (REFERENCE.md
    section 4). The arguments broadcast: for a terms x categories ``A`` pass ``df`` with
    shape ``(n_terms, 1)`` and ``n_positive`` with shape ``(n_categories,)``.

    Returns int64 arrays of the broadcast shape. Raises ValueError if a count is negative,
    not integral, or if the counts are inconsistent (some cell would be negative).
    """
    arrays = []
    for name, value in (("A", A), ("df", df), ("n_positive", n_positive), ("N", N)):
        array = _counts(name, value)
        if np.any(array != np.floor(array)):
            raise ValueError(f"{name} must be integral counts; got non-integral values in {name}")
        arrays.append(array.astype(np.int64))
    a, df_, n_pos, n = np.broadcast_arrays(*arrays)
    b = df_ - a
    c = n_pos - a
    d = n - df_ - n_pos + a
    for name, cell, rule in (
        ("B", b, "A <= df"),
        ("C", c, "A <= n_positive"),
        ("D", d, "df + n_positive - A <= N"),
    ):
        if np.any(cell < 0):
            raise ValueError(f"inconsistent counts: cell {name} would be negative; need {rule}")
    return a.copy(), b, c, d


def chi2(A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike) -> NDArray[np.float64]:
    """Chi-square statistic of each 2x2 table (REFERENCE.md section 4; Yang & Pedersen 1997).

    chi2(t, c) = N (AD - CB)^2 / ((A+C)(B+D)(A+B)(C+D)),  N = A + B + C + D,

    the Pearson statistic without continuity correction (``scipy.stats.chi2_contingency(...,
    correction=False)``). It is 0 where the denominator is 0, i.e. where the term occurs in
    every document or in none, or the category holds every document or none. Computed in
    float64, so large corpora do not overflow.
    """
    a, b, c, d = (_counts(name, v) for name, v in (("A", A), ("B", B), ("C", C), ("D", D)))
    n = a + b + c + d
    numerator = n * (a * d - c * b) ** 2
    denominator = (a + c) * (b + d) * (a + b) * (c + d)
    return np.divide(
        numerator, denominator, out=np.zeros(np.broadcast(numerator, denominator).shape),
        where=denominator > 0,
    )


def _plogp_ratio(count: NDArray[np.float64], row: NDArray[np.float64],
                 col: NDArray[np.float64], n: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(t', c') log2(P(t', c') / (P(t') P(c'))) from counts, with 0 log 0 = 0."""
    shape = np.broadcast(count, row, col, n).shape
    positive = np.broadcast_to(count > 0, shape)
    # Every operation over the whole block, masked by ``where`` (the same operations on the same values as on the
    # positive cells alone, so the same results, bit for bit), instead of gathering the positive cells first: the
    # gathers cost more than the arithmetic.
    ratio = np.divide(count * n, row * col, out=np.ones(shape), where=positive)
    out = np.log2(ratio, out=np.zeros(shape), where=positive)
    share = np.divide(count, n, out=np.zeros(shape), where=positive)
    return np.multiply(share, out, out=out, where=positive)


def information_gain(A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike) -> NDArray[np.float64]:
    """Information gain (mutual information, in bits) of each 2x2 table (REFERENCE.md section 4).

    IG(t, c) = sum over c' in {c, not c}, t' in {t, not t} of P(t', c') log2(P(t', c') / (P(t') P(c'))),

    with probabilities estimated by counts over N = A + B + C + D and 0 log 0 = 0 (Yang &
    Pedersen 1997; Debole & Sebastiani 2003). It is 0 where N = 0.
    """
    a, b, c, d = (_counts(name, v) for name, v in (("A", A), ("B", B), ("C", C), ("D", D)))
    n = a + b + c + d
    with_t, without_t = a + b, c + d
    in_c, not_in_c = a + c, b + d
    return (
        _plogp_ratio(a, with_t, in_c, n)
        + _plogp_ratio(b, with_t, not_in_c, n)
        + _plogp_ratio(c, without_t, in_c, n)
        + _plogp_ratio(d, without_t, not_in_c, n)
    )


def gain_ratio(A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike,
               ig: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Gain ratio of each 2x2 table (REFERENCE.md section 4; Debole & Sebastiani 2003).

    GR(t, c) = IG(t, c) / H(c),  H(c) = -sum over c' in {c, not c} of P(c') log2 P(c'),

    with 0 log 0 = 0. It is 0 where H(c) = 0 (the category holds every document or none),
    where IG is 0 too. ``ig``, when given, is :func:`information_gain` of the same tables, not computed again.
    """
    ig = information_gain(A, B, C, D) if ig is None else ig
    a, b, c, d = (_counts(name, v) for name, v in (("A", A), ("B", B), ("C", C), ("D", D)))
    n = a + b + c + d
    in_c, not_in_c = a + c, b + d
    entropy = np.zeros(np.broadcast(in_c, not_in_c).shape)
    for count in (in_c, not_in_c):
        count = np.broadcast_to(count, entropy.shape)
        total = np.broadcast_to(n, entropy.shape)
        positive = count > 0
        p = count[positive] / total[positive]
        entropy[positive] -= p * np.log2(p)
    return np.divide(ig, entropy, out=np.zeros(np.broadcast(ig, entropy).shape), where=entropy > 0)


def _scores_matrix(scores: ArrayLike) -> NDArray[np.float64]:
    """``scores`` as a float64 terms x categories matrix with at least one category, or ValueError."""
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(
            f"scores must be a 2-D (terms x categories) array; got ndim={matrix.ndim}"
        )
    if matrix.shape[1] == 0:
        raise ValueError("scores must have at least one category column; got shape "
                         f"{matrix.shape}")
    return matrix


def global_max(scores: ArrayLike) -> NDArray[np.float64]:
    """f_max(t) = max over c of f(t, c) (LYRL2004, Debole & Sebastiani; REFERENCE.md section 4).

    ``scores`` is a terms x categories matrix; returns one score per term.
    """
    return _scores_matrix(scores).max(axis=1)


def global_avg(scores: ArrayLike, p_c: ArrayLike) -> NDArray[np.float64]:
    """f_avg(t) = sum over c of P(c) f(t, c) (Yang & Pedersen 1997; REFERENCE.md section 4).

    ``scores`` is a terms x categories matrix and ``p_c[j]`` the share of training documents in
    category j. The shares need not sum to 1 (multi-label corpora), but each must be in [0, 1].
    """
    matrix = _scores_matrix(scores)
    weights = np.asarray(p_c, dtype=np.float64)
    if weights.shape != (matrix.shape[1],):
        raise ValueError(
            f"p_c must have shape ({matrix.shape[1]},), one probability per category column "
            f"of scores; got shape {weights.shape}"
        )
    check_unit_interval("p_c", weights, "probabilities")
    # A row-by-row sum, not BLAS's matrix @ weights: that result depends on how many terms are scored
    # together, and the ranking must not depend on how Spark splits the vocabulary into batches.
    return (matrix * weights).sum(axis=1)


def global_mean(scores: ArrayLike) -> NDArray[np.float64]:
    """f_mean(t) = (1/|C|) sum over c of f(t, c), the plain mean (REFERENCE.md section 4)."""
    return _scores_matrix(scores).mean(axis=1)


def score_column(score: str, global_score: str) -> str:
    """The ``term_ranks`` column of one function under one globalization, e.g. ``chi2_max``."""
    if score not in SCORES or global_score not in GLOBAL_SCORES:
        raise ValueError(f"score must be one of {SCORES} and global_score one of {GLOBAL_SCORES}; "
                         f"got {score!r}, {global_score!r}")
    return f"{score}_{global_score}"


def ranking_column(score: str, global_score: str) -> str:
    """The ``term_ranks`` column ordering the terms for ``score`` ([rank] score): :data:`FREQUENCY` itself, which has
    no globalization, or the function's column under ``global_score`` (:func:`score_column`).
    """
    return FREQUENCY if score == FREQUENCY else score_column(score, global_score)


def global_scores(A: ArrayLike, df: ArrayLike, n_positive: ArrayLike, N: int,
                  columns: tuple[str, ...] | None = None) -> dict[str, NDArray[np.float64]]:
    """Every function of :data:`SCORES` under every globalization of :data:`GLOBAL_SCORES` (or only
    ``columns``, named as :func:`score_column` names them), one score per term, from the terms x
    categories counts ``A`` (see :func:`contingency_2x2` for ``df``, ``n_positive`` and ``N``).

    f_avg weights category c by P(c) = n_positive[c] / N (Yang & Pedersen 1997); with N = 0 every score is 0.
    """
    functions = {"chi2": chi2, "ig": information_gain, "gr": gain_ratio}
    wanted = columns or tuple(score_column(s, g) for s in SCORES for g in GLOBAL_SCORES)
    table = contingency_2x2(A, df, n_positive, N)
    n_positive = np.asarray(n_positive, dtype=np.float64)
    p_c = n_positive / N if N else np.zeros_like(n_positive)
    per_category: dict[str, NDArray[np.float64]] = {}
    for score in SCORES:  # ig before gr, which divides it
        if any(column.split("_")[0] == score for column in wanted):
            per_category[score] = gain_ratio(*table, ig=per_category.get("ig")) if score == "gr" \
                else functions[score](*table)
    globalize = {"max": global_max, "avg": lambda m: global_avg(m, p_c), "mean": global_mean}
    return {column: globalize[column.split("_")[1]](per_category[column.split("_")[0]]) for column in wanted}


def rank_order(term_ids: ArrayLike, scores: ArrayLike) -> NDArray[np.int64]:
    """The term ids from the best score down, ties by ascending term id: the ranking term selection keeps the
    top of (:func:`top_terms`).
    """
    term_ids = np.asarray(term_ids, dtype=np.int64)
    return term_ids[np.lexsort((term_ids, -np.asarray(scores, dtype=np.float64)))]


def top_k_from_reduction_factor(n_terms: int, xi: float) -> int:
    """Number of terms to keep for Debole & Sebastiani's reduction factor xi (REFERENCE.md section 4).

    xi = (|T| - |T'|) / |T|, so |T'| = round((1 - xi) |T|), rounding halves up (after
    discarding float noise below 1e-6, so xi = 0.9 of 15 terms keeps 2, not 1). Debole uses
    xi in {0.9, 0.5, 0}. Since xi < 1 asks to keep something, at least one term is kept
    when ``n_terms > 0``.

    Raises ValueError unless ``n_terms`` is a non-negative integer and ``0 <= xi < 1``.
    """
    check_integer("n_terms", n_terms, 0, kind="non-negative integer")
    if isinstance(xi, bool) or not isinstance(xi, numbers.Real) or not 0 <= xi < 1:
        raise ValueError(f"xi must be a reduction factor with 0 <= xi < 1; got {xi!r}")
    if n_terms == 0:
        return 0
    return max(1, math.floor(round((1 - xi) * n_terms, 6) + 0.5))


def top_terms(order: ArrayLike, k: int) -> NDArray[np.int64] | None:
    """The term ids of the ``k`` best-ranked terms of ``order`` (every term id, best first), ascending; None
    when that is every term (``k`` = 0 or at least the number of terms), so callers can skip the selection.
    """
    order = np.asarray(order, dtype=np.int64)
    return None if k == 0 or k >= len(order) else np.sort(order[:k])


def vocabulary_terms(df: ArrayLike, frequency: ArrayLike, min_df: int = 1, top_k: int = 0,
                     reduction_factor: float = 0.0) -> NDArray[np.int64]:
    """The term ids (ascending) the vocabulary keeps of the training terms with document frequencies ``df`` and
    occurrences ``frequency`` (term id = position): those in at least ``min_df`` training documents, then, when
    ``top_k`` (or a ``reduction_factor`` of those, :func:`top_k_from_reduction_factor`) is given, the ``top_k`` most
    frequent of them (:func:`rank_order` over ``frequency``). This is scikit-learn's ``CountVectorizer._limit_features``
    for an integer ``min_df`` and ``max_features = top_k``, in its order (min_df first).

    Ties at the cut go to the smaller term id, the term first in the vocabulary's order. scikit-learn ranks by
    ``(-tfs[mask]).argsort()``, numpy's default quicksort, which is not stable: which of several terms tied at the
    cut it keeps is not defined, and may differ from this choice.
    """
    check_integer("min_df", min_df, 1)
    check_integer("top_k", top_k, 0, kind="non-negative integer")
    df, frequency = np.asarray(df, dtype=np.int64), np.asarray(frequency, dtype=np.int64)
    if df.shape != frequency.shape:
        raise ValueError(f"df and frequency must have one value per term; got shapes {df.shape}, {frequency.shape}")
    frequent = np.flatnonzero(df >= min_df)
    keep = top_k or (top_k_from_reduction_factor(len(frequent), reduction_factor) if reduction_factor else 0)
    chosen = top_terms(rank_order(frequent, frequency[frequent]), keep)
    return frequent if chosen is None else chosen


#: Every score column of ``term_ranks``: each function of SCORES under each globalization of GLOBAL_SCORES.
SCORE_COLUMNS = tuple(score_column(score, global_score) for score in SCORES for global_score in GLOBAL_SCORES)


def term_scores(counts: sparse.csr_matrix, df: np.ndarray, n_positive: np.ndarray, n_train: int,
                columns: tuple[str, ...] = SCORE_COLUMNS) -> dict[str, np.ndarray]:
    """The score ``columns`` of every term (a row of the terms x categories ``counts`` A, :func:`global_scores`), a
    block of :data:`BLOCK_TERMS` terms at a time, the blocks spread over the machine's cores (numpy releases the GIL in
    its loops; the rank stage scores on the driver, while no task runs: 0.86 s on one core for 46,327 terms x 103
    categories).
    """
    n_terms = counts.shape[0]
    result = {column: np.empty(n_terms) for column in columns}
    blocks = [slice(start, start + BLOCK_TERMS) for start in range(0, n_terms, BLOCK_TERMS)]

    def scored(block: slice) -> tuple[slice, dict[str, np.ndarray]]:
        return block, global_scores(counts[block].toarray(), df[block, None], n_positive, n_train, columns)

    with ThreadPoolExecutor(max_workers=max(1, min(len(blocks), os.cpu_count() or 1))) as pool:
        for block, scores in pool.map(scored, blocks):
            for column, values in scores.items():
                result[column][block] = values
    return result
