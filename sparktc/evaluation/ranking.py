"""Per-document ranking measures of LibMultiLabel: P@K, R@K, RP@K, nDCG@K (REFERENCE.md section 6).

Each test document i has its categories ranked by score; ``hits[i, r]`` says whether the
category at rank r + 1 is one of the document's n_i relevant (true) categories. With
h_i(K) = sum_{r=1..K} hits[i, r - 1] the hits in the top K:

* P@K = h_i(K) / K;
* R@K = h_i(K) / n_i, and 0 when n_i = 0 (LibMultiLabel's convention);
* RP@K = h_i(K) / min(K, n_i), and 0 when n_i = 0;
* nDCG@K = DCG@K / IDCG@K with DCG@K = sum_{r=1..K} hit_r / log2(r + 1) and IDCG@K the DCG of
  min(K, n_i) hits at the top ranks, and 0 when n_i = 0.

Dataset values are the means over documents, so the functions return one value per document and
leave the averaging (and summation over batches) to the caller. Pure numpy, vectorised over
documents.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sparktc.validation import check_counts

__all__ = ["ranking_measures", "DEFAULT_KS"]

#: The cut-offs LibMultiLabel reports by default.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5)


def _check_ks(ks: Sequence[int], k_max: int) -> tuple[int, ...]:
    """``ks`` as a tuple of ints, or ValueError unless non-empty, distinct and in 1..k_max."""
    values = tuple(ks)
    if (
        not values
        or any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) for k in values)
        or len(set(values)) != len(values)
        or any(not 1 <= k <= k_max for k in values)
    ):
        raise ValueError(
            f"ks must be a non-empty sequence of distinct integers in 1..K_max = {k_max} "
            f"(the number of ranked categories per document, hits.shape[1]); got {ks!r}"
        )
    return tuple(int(k) for k in values)


def ranking_measures(
    hits: ArrayLike, n_relevant: ArrayLike, ks: Sequence[int] = DEFAULT_KS
) -> dict[str, NDArray[np.float64]]:
    """P@K, R@K, RP@K and nDCG@K of every document (LibMultiLabel; REFERENCE.md section 6).

    The formulas are in the module docstring; a document with no relevant category gets 0 for
    R@K, RP@K and nDCG@K (and P@K = 0, since it has no hits). Rankings shorter than K are
    padded with misses, so P@K still divides by K.

    Args:
        hits: boolean array of shape (n_docs, K_max); ``hits[i, r]`` is True when the category
            ranked r + 1 for document i is relevant to it.
        n_relevant: integer array of shape (n_docs,), the number of relevant categories of each
            document (counting those ranked below K_max); at least the number of hits in its row.
        ks: distinct cut-offs, each in 1..K_max.

    Returns:
        dict with keys ``"P@K"``, ``"R@K"``, ``"RP@K"``, ``"nDCG@K"`` for each K in ``ks``
        (in that order), each a float64 array of shape (n_docs,).
    """
    hits_ = np.asarray(hits)
    if hits_.ndim != 2:
        raise ValueError(
            f"hits must be a 2-D array of shape (n_docs, K_max); got ndim={hits_.ndim}"
        )
    if hits_.dtype != np.bool_:
        raise ValueError(f"hits must be a boolean array; got dtype {hits_.dtype}")
    n_docs, k_max = hits_.shape
    relevant = np.asarray(n_relevant)
    if relevant.shape != (n_docs,):
        raise ValueError(
            f"n_relevant must have shape (n_docs,) = ({n_docs},); got shape {relevant.shape}"
        )
    relevant = check_counts("n_relevant", relevant)
    ks_ = _check_ks(ks, k_max)

    cumulative_hits = np.cumsum(hits_, axis=1, dtype=np.int64)
    if n_docs and np.any(cumulative_hits[:, -1] > relevant):
        bad = int(np.flatnonzero(cumulative_hits[:, -1] > relevant)[0])
        raise ValueError(
            f"n_relevant must be at least the number of hits of each document; document {bad} "
            f"has {cumulative_hits[bad, -1]} hits but n_relevant = {relevant[bad]}"
        )
    discounts = 1.0 / np.log2(np.arange(2, k_max + 2, dtype=np.float64))
    cumulative_dcg = np.cumsum(hits_ * discounts, axis=1)
    # ideal_dcg[m] = DCG of m hits at the top ranks, m = 0..K_max.
    ideal_dcg = np.concatenate(([0.0], np.cumsum(discounts)))
    has_relevant = relevant > 0

    measures: dict[str, NDArray[np.float64]] = {}
    for k in ks_:
        top_k = cumulative_hits[:, k - 1].astype(np.float64)
        best = np.minimum(relevant, k)
        measures[f"P@{k}"] = top_k / k
        measures[f"R@{k}"] = np.divide(
            top_k, relevant, out=np.zeros(n_docs), where=has_relevant
        )
        measures[f"RP@{k}"] = np.divide(top_k, best, out=np.zeros(n_docs), where=has_relevant)
        measures[f"nDCG@{k}"] = np.divide(
            cumulative_dcg[:, k - 1], ideal_dcg[best], out=np.zeros(n_docs), where=has_relevant
        )
    return measures

