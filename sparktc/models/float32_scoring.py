"""Linear scores X W + b in float32, with every decision and every stored score exactly float64's (issue 39).

A linear model's scores are ``X @ W + b`` in float64 (:meth:`Scorer.scores <sparktc.models.scoring.Scorer.scores>`:
scipy's ``csr_matvecs``, each row's entries accumulated in order), the values every decision of the evaluate stage
and of classify must match. The product is memory-bound (every non-zero x_t reads row t of W), and float32 halves
what it reads. :func:`decide`
computes the scores in float32, bounds each one's distance from the float64 score, and recomputes in float64,
by the same scipy call on those rows, every document whose decisions or ranking the bound cannot settle; the
stored top scores are then summed in float64 in the same order as the float64 product, so they are its values
bit for bit (:func:`top_scores`).

**The bound.** Let document d have n non-zero values x_i (exact in float64: float32 weights or integer counts),
category c weights w_i = W[t_i, c] and bias b; s = sum x_i w_i + b, A = sum |x_i| |w_i|, u_32 = 2^-24,
u_64 = 2^-53 and gamma_k = k u / (1 - k u). Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed.,
eq. 3.4 and 3.5): a dot product summed in any order is sum x_i y_i (1 + theta_n^(i)), |theta_n| <= gamma_n, so
|fl(x'y) - x'y| <= gamma_n |x|'|y|. The float32 score rounds x_i and w_i to float32 (two more factors), sums, and
adds fl32(b) (two more: b's rounding and the addition), so |s32 - s| <= gamma32_{n+3} A + gamma32_2 |b|; the
float64 one (x_i exact) |s64 - s| <= gamma64_{n+1} A + u_64 |b|. Underflow adds at most 2^-150 to each float32
product and to each rounding of w_i or b, carried through fewer than n + 3 roundings (a factor below 2), and
float64's is smaller still: (n + ||x||_1 + 1) 2^-148 covers both. By Cauchy-Schwarz A <= ||x||_2 ||w_c||_2 and
||x||_1 <= sqrt(n) ||x||_2, so

    |s32 - s64| <= e(d) = (gamma32_{n+3} + gamma64_{n+1}) ||x||_2 max_c ||w_c||_2
                          + max_c (gamma32_2 + u_64) |b_c| + (n + sqrt(n) ||x||_2 + 1) 2^-148,

one bound per document, for every category. A float32 score that is not finite (an overflow) is never trusted.

**The decisions.** A threshold decision s > t is certain when |s32 - t| > e (then s64 - t has the sign of
s32 - t). The best K categories, in order, are certain when each of the K gaps between the K + 1 best float32
scores exceeds 2e: the float64 scores then keep that order, strictly, and every other category stays below the
K-th (no tie, so the ties to the category first in order fall as they do in float64). K is the number of top
scores kept, or RCut's k when larger (with K = every category, the K - 1 gaps between them). A document these
tests leave in doubt is tried again with each category's own bound e(d, c) (||w_c||_2 and |b_c| for the maxima):
a threshold decision is certain when |s32 - t| > e(d, c); two neighbours in the ranking when their intervals
s32 +- e(d, c) are apart, or when they are twins (the same weights and bias, as every category without a training
positive has: the same float64 score, tied to the first column in both orders); the K-th when its interval is
above every other category's but its twins'. A document still in doubt is recomputed in float64.

**Rounding in the tests themselves.** e is computed in float64 from sums of fewer than 2^30 terms (relative
error below 2^-21). The threshold test is made in float32: t rounded to float32 moves it by at most
u_32 |t| + 2^-150 (the 2^-150 within the underflow term's factor 2), so |s32 - t| is compared with
e + u_32 max_c |t_c| rounded to float32, and the float32 difference is off by a relative u_32. The gaps are
float64 differences of float32 scores (relative u_64). :data:`SAFETY` = 1 + 2^-10 covers every relative rounding.
A bound that is NaN (0 times infinite weights) or infinite settles nothing: its document is recomputed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.models.decision import Cut
from sparktc.models.thresholds import best_columns

__all__ = ["Decisions", "Float32Weights", "category_bounds", "decide", "row_terms", "score_bounds",
           "top_scores"]

#: The unit roundoffs of float32 and float64 (Higham's u: half the gap between 1 and the next float).
U32, U64 = 2.0 ** -24, 2.0 ** -53
#: The bound's margin for the roundings of computing it and testing against it (module docstring).
SAFETY = 1 + 2.0 ** -10
#: The absolute error an underflowing float32 product or rounding adds, twice (module docstring).
UNDERFLOW = 2.0 ** -148


def gamma(k: NDArray[np.int64], u: float) -> NDArray[np.float64]:
    """Higham's gamma_k = k u / (1 - k u), infinite where k u >= 1/2 (no bound: recompute)."""
    ku = k * u
    return np.where(ku < 0.5, ku / (1 - np.minimum(ku, 0.5)), np.inf)


@dataclass(frozen=True)
class Float32Weights:
    """A linear scorer's weights as :func:`decide` uses them: W and b in float32 (W C-ordered, the layout scipy's
    product reads without a copy), the float64 W by category (a category's weights contiguous, for
    :func:`top_scores`), and the per-category facts of the bound: a worker holds 2.5 times W's float64 size.
    """

    W: NDArray[np.float32]  # vocabulary x categories
    b: NDArray[np.float32]
    by_category: NDArray[np.float64]  # categories x vocabulary, flattened
    norms: NDArray[np.float64]  # ||w_c||_2
    bias_terms: NDArray[np.float64]  # (gamma32_2 + u_64) |b_c|
    twins: NDArray[np.int64]  # per category, the first category of the same weights and bias (itself if none)

    @staticmethod
    def of(W: NDArray[np.float64], b: NDArray[np.float64]) -> Float32Weights:
        """The float32 form of float64 weights ``W`` (vocabulary x categories) and biases ``b``."""
        with np.errstate(over="ignore"):  # a weight beyond float32's range is infinite: its documents recomputed
            W32, b32 = np.ascontiguousarray(W, dtype=np.float32), np.asarray(b, dtype=np.float32)
        by_category = np.ascontiguousarray(W.T)
        first: dict[bytes, int] = {}
        twins = np.array([first.setdefault(by_category[c].tobytes() + np.float64(b[c]).tobytes(), c)
                          for c in range(W.shape[1])], dtype=np.int64)
        return Float32Weights(W=W32, b=b32, by_category=by_category.ravel(),
                              norms=np.sqrt(np.square(W).sum(axis=0)),
                              bias_terms=(gamma(np.int64(2), U32) + U64) * np.abs(np.asarray(b, dtype=np.float64)),
                              twins=twins)


@dataclass(frozen=True)
class Decisions:
    """A batch's assignments (documents x categories), its best ``k`` categories best first and their float64
    scores, and the rows :func:`decide` recomputed in float64.
    """

    assigned: NDArray[np.bool_]
    top: NDArray[np.int64]
    top_scores: NDArray[np.float64]
    rechecked: NDArray[np.int64]


def row_terms(X: sparse.csr_matrix) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per row of ``X`` (exact float64 values), the bound's factor of ||w_c||_2, (gamma32_{n+3} + gamma64_{n+1})
    ||x||_2, and its underflow term (n + sqrt(n) ||x||_2 + 1) 2^-148 (||x||_1 <= sqrt(n) ||x||_2).
    """
    n = np.diff(X.indptr).astype(np.int64)
    # Each row's sum of squares; the 0 appended lets an empty last row start at the end, and empty rows are 0.
    squares = np.add.reduceat(np.append(np.square(X.data), 0.0), X.indptr[:-1])
    l2 = np.sqrt(np.where(n > 0, squares, 0.0))
    return (gamma(n + 3, U32) + gamma(n + 1, U64)) * l2, (n + np.sqrt(n) * l2 + 1) * UNDERFLOW


def score_bounds(factor: NDArray[np.float64], underflow: NDArray[np.float64],
                 weights: Float32Weights) -> NDArray[np.float64]:
    """Per row, from its :func:`row_terms`, e(d) of the module docstring times :data:`SAFETY`: no category's
    float32 score is further than this from its float64 score.
    """
    return (factor * weights.norms.max(initial=0.0) + weights.bias_terms.max(initial=0.0) + underflow) * SAFETY


def category_bounds(factor: NDArray[np.float64], underflow: NDArray[np.float64],
                    weights: Float32Weights) -> NDArray[np.float64]:
    """Rows x categories e(d, c) times :data:`SAFETY`, from the rows' :func:`row_terms`."""
    return (np.multiply.outer(factor, weights.norms) + weights.bias_terms + underflow[:, None]) * SAFETY


def top_scores(X: sparse.csr_matrix, weights: Float32Weights, b: NDArray[np.float64],
               top: NDArray[np.int64]) -> NDArray[np.float64]:
    """The float64 scores ``(X @ W + b)[d, top[d, j]]`` of float64 ``X``, bit for bit: for each rank j one CSR
    matrix whose row d holds d's entries, in order, at columns shifted into category top[d, j]'s block of the
    weights by category, times that flat vector: scipy's ``csr_matvec`` sums each row's products from 0 in entry
    order, as ``csr_matvecs`` does for every category of ``X @ W``, and the bias is added as ``X @ W + b`` adds it.
    """
    n, k = top.shape
    n_terms = X.shape[1]
    size = weights.by_category.size
    index = np.int32 if size < 2 ** 31 else np.int64
    lengths = np.diff(X.indptr)
    shifts = (top.T * n_terms).astype(index)
    columns = X.indices.astype(index)
    sums = np.empty((k, n))
    for j in range(k):
        shifted = np.repeat(shifts[j], lengths)
        shifted += columns
        sums[j] = sparse.csr_matrix((X.data, shifted, X.indptr), shape=(n, size)) @ weights.by_category
    return sums.T + b[top]


@np.errstate(over="ignore", invalid="ignore")  # an overflow is a non-finite score, or a threshold's: recomputed
def decide(X: sparse.csr_matrix, weights: Float32Weights, b: NDArray[np.float64], cut: Cut, k: int,
           exact: Callable[[sparse.csr_matrix], NDArray[np.float64]]) -> Decisions:
    """The decisions of ``cut`` and the best ``k`` categories with their scores, for the documents of float64
    ``X`` (at least one row; at least ``cut.rcut_k`` categories), as ``exact`` (today's float64 ``X @ W + b``,
    called on the rows recomputed) would give them: from float32 scores, each document whose decisions or
    ranking lie within its bound (:func:`score_bounds`) recomputed by ``exact``.
    """
    n, m = X.shape[0], weights.W.shape[1]
    scores = sparse.csr_matrix((X.data.astype(np.float32), X.indices, X.indptr), shape=X.shape) @ weights.W
    scores += weights.b
    factor, underflow = row_terms(X)
    bound = score_bounds(factor, underflow, weights)
    doubtful = ~np.isfinite(scores.sum(axis=1))
    if cut.rcut_k:
        assigned = np.zeros((n, m), dtype=bool)
    else:
        thresholds = cut.thresholds.astype(np.float32)
        finite = np.abs(thresholds[np.isfinite(thresholds)])
        if np.isfinite(cut.thresholds).sum() > len(finite):  # one beyond float32's range: no bound on its rounding
            doubtful[:] = True
        slack = (bound + U32 * finite.max(initial=0.0)) * SAFETY
        margin = scores - thresholds
        assigned = margin > 0
        np.abs(margin, out=margin)
        doubtful |= ~(margin > slack.astype(np.float32)[:, None]).all(axis=1)
    ranked = max(k, cut.rcut_k)
    best = best_columns(scores, min(ranked + 1, m))
    ordered = np.take_along_axis(scores, best, axis=1).astype(np.float64)
    doubtful |= ~((ordered[:, :-1] - ordered[:, 1:]) > 2 * bound[:, None]).all(axis=1)
    rechecked = np.flatnonzero(doubtful)
    if len(rechecked):  # the documents one bound for every category leaves in doubt, tried with each category's
        near = scores[rechecked].astype(np.float64)
        if not cut.rcut_k:  # decided against the float64 thresholds (a bound's margin is then the exact distance's)
            assigned[rechecked] = near > cut.thresholds
        rechecked = rechecked[_doubtful(near, category_bounds(factor[rechecked], underflow[rechecked], weights),
                                        best[rechecked], cut, ranked, weights.twins)]
    if cut.rcut_k:
        np.put_along_axis(assigned, best[:, :cut.rcut_k], True, axis=1)
    top = best[:, :k]
    if len(rechecked):
        recomputed = exact(X[rechecked])
        assigned[rechecked] = cut.assign(recomputed)
        top[rechecked] = best_columns(recomputed, k)
    return Decisions(assigned, top, top_scores(X, weights, b, top), rechecked)


def _doubtful(scores: NDArray[np.float64], bounds: NDArray[np.float64], best: NDArray[np.int64], cut: Cut,
              ranked: int, twins: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per row of float32 ``scores`` (as float64) with their per-category ``bounds``, whether a decision of ``cut``
    or the order of its ``ranked`` best categories (``best``, the float32 order, with the next one when there is one)
    could differ in float64: a threshold within a score's bound; two neighbours in the ranking whose bounds
    overlap, unless they are twins (the same weights and bias: the same float64 score, ties to the first column
    in both orders); the last ranked one not above every category outside the ranking (bar its twins).
    """
    doubt = ~np.isfinite(scores).all(axis=1)
    if not cut.rcut_k:
        doubt |= ~(np.abs(scores - cut.thresholds) > bounds).all(axis=1)
    ranked = min(ranked, scores.shape[1])
    top = best[:, :ranked]
    value, bound = np.take_along_axis(scores, top, axis=1), np.take_along_axis(bounds, top, axis=1)
    apart = (value[:, :-1] - bound[:, :-1]) > (value[:, 1:] + bound[:, 1:])
    doubt |= ~(apart | (twins[top[:, :-1]] == twins[top[:, 1:]])).all(axis=1)
    if ranked < scores.shape[1]:
        above = scores + bounds
        np.put_along_axis(above, top, -np.inf, axis=1)
        above[twins[None, :] == twins[top[:, -1]][:, None]] = -np.inf
        doubt |= ~((value[:, -1] - bound[:, -1]) > above.max(axis=1))
    return doubt
