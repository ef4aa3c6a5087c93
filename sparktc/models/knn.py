"""k-nearest-neighbour category scores (Yang & Liu 1999; Debole & Sebastiani 2005).

A document d is scored for category c by the similarities of its k most similar training
documents that are in c (Debole & Sebastiani 2005, JASIST, equation 3; Yang & Liu 1999, SIGIR,
section 3.2, without the per-category bias, which thresholding supplies):

    score(d, c) = sum_{d_z in Tr_k(d)} (d . d_z) [d_z in c]

where Tr_k(d) holds the k training documents with the largest dot product d . d_z. The rows
are L2-normalised ltc vectors (:class:`sparktc.features.matrix.TrainingSet`), so the dot product *is*
the cosine similarity; with term selection, :func:`selected_space` keeps the selected terms and
renormalises, and nothing else here does (a row that is not unit length simply contributes its dot
products). k = 30 by default (Debole & Sebastiani; Yang & Liu used 45).
Scores are thresholded per category elsewhere (REFERENCE.md section 5).

Neighbours are ordered by decreasing similarity, ties by increasing training row, so the
result is deterministic and the first k' < k columns of :func:`knn_topk` are exactly the k'
nearest neighbours: one call serves every k' <= k and every category.

Queries are processed in blocks of rows whose dense float64 similarity block (rows x n_train)
fits in ``block_bytes``; every block is computed as sparse (query block) @ sparse (X_train')
and densified, and the top k of each row found with ``np.argpartition``. The peak working
memory per block is about three times ``block_bytes`` (the sparse product before densifying,
argpartition's int64 index array). The default block is small on purpose: its arrays stay below
glibc's mmap threshold and are reused, where blocks of 256 MiB were fresh pages every time (on
804,414 synthetic RCV1-v2 documents, 0.72 ms per query against 23,149 training rows; 4 MiB: 0.55 ms,
the same neighbours and similarities bit for bit). Pure numpy/scipy; the Spark stages call these on
executors, one Arrow batch of documents at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.features.term_selection import top_terms
from sparktc.models.method import NEIGHBOURS, Floor, Method, Neighbours, Parameters, ScoreRange, Scoring, shown
from sparktc.validation import between, check_integer, check_matrix, meaning

#: Spark's int, the type of term ids and counts: no k is meant beyond it.
MAX_K = 2**31 - 1

__all__ = ["DEFAULT_BLOCK_BYTES", "DEFAULT_K", "METHOD", "KnnParameters", "columns_of", "knn_scores_from_neighbours",
           "knn_topk", "selected_space", "selection_key"]

#: Debole & Sebastiani's k (Yang & Liu 1999 used 45).
DEFAULT_K = 30
#: Default budget for one dense float64 block of query-training similarities: 4 MiB (module docstring).
DEFAULT_BLOCK_BYTES = 4 * 2**20


def _membership(Y_train: sparse.spmatrix | sparse.sparray | NDArray[np.bool_]) -> sparse.csr_matrix:
    """Category membership (n_train x n_categories) as a CSR float64 0/1 matrix, or ValueError."""
    if sparse.issparse(Y_train):
        if Y_train.ndim != 2:
            raise ValueError(f"Y_train must be 2-D (n_train x n_categories); got shape {Y_train.shape}")
        return sparse.csr_matrix(Y_train).astype(np.bool_).astype(np.float64)
    Y_train = np.asarray(Y_train)
    if Y_train.dtype != np.bool_ or Y_train.ndim != 2:
        raise ValueError(
            "Y_train must be a scipy sparse matrix or a 2-D bool array (n_train x n_categories); "
            f"got dtype {Y_train.dtype} and shape {Y_train.shape}"
        )
    return sparse.csr_matrix(Y_train, dtype=np.float64)


def selected_space(X: sparse.spmatrix | sparse.sparray, columns: NDArray[np.int64] | None) -> sparse.csr_matrix:
    """The rows of ``X`` over the selected terms ``columns`` (None: every term), each renormalized to unit
    length: Yang & Liu's kNN compares documents by the cosine over the selected features (2,415 of them), and
    dropping terms shortens the ltc rows. A row without a selected term stays zero (no neighbour similarity).
    """
    X = sparse.csr_matrix(X, dtype=np.float64)
    if columns is None:
        return X
    X = X[:, columns]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sparse.csr_matrix(sparse.diags(np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)) @ X)


def selection_key(order: NDArray[np.int64], terms: int) -> bytes:
    """The ``terms`` best-ranked term ids of ``order`` as int64 bytes (a per-worker cache key; empty bytes: every
    term), read back by :func:`columns_of` for :func:`selected_space`: the training and the scoring of kNN select
    alike.
    """
    selected = top_terms(order, terms)
    return b"" if selected is None else selected.tobytes()


def columns_of(selection: bytes) -> NDArray[np.int64] | None:
    """The term ids a :func:`selection_key` holds (None: every term)."""
    return np.frombuffer(selection, dtype=np.int64) if selection else None


def _smallest_k(D: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Columns of the k smallest entries of each row of D, by increasing value, ties by column.

    Called on negated similarities: np.argpartition for a small k-th position is fast even when
    most of a row is one tied value (the zero similarities of documents sharing no term),
    whereas selecting the largest entries of the similarities themselves is several times slower.
    """
    top = np.argpartition(D, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(D, top, axis=1).max(axis=1)[:, None]
    # argpartition picks arbitrarily among entries equal to the k-th smallest value when not all
    # of them fit; in those rows take the lowest columns instead.
    n_below = np.count_nonzero(D < kth, axis=1)
    tied = np.flatnonzero(np.count_nonzero(D == kth, axis=1) > k - n_below)
    if tied.size:
        rows, kth_tied = D[tied], kth[tied]
        equal = rows == kth_tied
        first_equal = np.cumsum(equal, axis=1, dtype=np.int64) <= (k - n_below[tied])[:, None]
        top[tied] = np.nonzero((rows < kth_tied) | (equal & first_equal))[1].reshape(tied.size, k)
    order = np.lexsort((top, np.take_along_axis(D, top, axis=1)), axis=1)  # value, then column
    return np.take_along_axis(top, order, axis=1)


def knn_topk(
    X_query: sparse.spmatrix | sparse.sparray,
    X_train: sparse.spmatrix | sparse.sparray,
    k: int = DEFAULT_K,
    exclude_self: NDArray[np.integer] | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The k training documents most similar to each query, and their similarities.

    Args:
        X_query: scipy sparse matrix, shape (n_query, n_features). Documents to score, one
            L2-normalised row each (not renormalised here).
        X_train: scipy sparse matrix, shape (n_train, n_features). Training documents, one
            L2-normalised row each; at least one.
        k: Neighbours per query, >= 1. More than are available means all of them: k is capped at
            n_train, or at n_train - 1 when ``exclude_self`` excludes any row.
        exclude_self: optional int array, shape (n_query,). ``exclude_self[i]`` is a training row that
            query i may not have as a neighbour (its own row, for leave-one-out scores of the training
            documents), or -1 for none.
        block_bytes: Budget, >= 1, for one dense float64 block of similarities (rows x n_train); a block
            holds at least one query (see the module docstring for the peak memory).

    Returns:
        (indices, similarities): indices an int64 array of shape (n_query, k_used), the training rows
        of the neighbours, by decreasing similarity, ties by increasing row; similarities a float64
        array of the same shape, their dot products with the query (cosine similarities for unit rows).
    """
    X_query = check_matrix("X_query", X_query)
    X_train = check_matrix("X_train", X_train)
    n_query, n_train = X_query.shape[0], X_train.shape[0]
    if n_train == 0:
        raise ValueError(f"X_train must have at least one document; got shape {X_train.shape}")
    if X_query.shape[1] != X_train.shape[1]:
        raise ValueError(
            f"X_query must have X_train's {X_train.shape[1]} features; got shape {X_query.shape}"
        )
    k = check_integer("k", k, 1)
    block_bytes = check_integer("block_bytes", block_bytes, 1)
    excluded = np.full(n_query, -1, dtype=np.int64)
    if exclude_self is not None:
        exclude_self = np.asarray(exclude_self)
        if not np.issubdtype(exclude_self.dtype, np.integer) or exclude_self.shape != (n_query,):
            raise ValueError(
                f"exclude_self must be an integer array of shape ({n_query},), one training row "
                f"(or -1) per query; got dtype {exclude_self.dtype} and shape {exclude_self.shape}"
            )
        if n_query and (exclude_self.min() < -1 or exclude_self.max() >= n_train):
            raise ValueError(
                f"exclude_self must hold training rows 0..{n_train - 1} or -1 for none; got values "
                f"from {exclude_self.min()} to {exclude_self.max()}"
            )
        excluded[:] = exclude_self
    k = min(k, n_train - 1 if np.any(excluded >= 0) else n_train)

    indices = np.empty((n_query, k), dtype=np.int64)
    similarities = np.empty((n_query, k), dtype=np.float64)
    if k == 0:  # a single training document, excluded
        return indices, similarities
    X_train_t = X_train.T.tocsr()  # once, not per block (csr @ csc would convert it every time)
    block_rows = max(1, block_bytes // (8 * n_train))
    for start in range(0, n_query, block_rows):
        stop = min(start + block_rows, n_query)
        D = (X_query[start:stop] @ X_train_t).toarray()
        np.negative(D, out=D)  # -similarity: see _smallest_k
        rows = np.flatnonzero(excluded[start:stop] >= 0)
        D[rows, excluded[start:stop][rows]] = np.inf
        top = _smallest_k(D, k)
        indices[start:stop] = top
        similarities[start:stop] = -np.take_along_axis(D, top, axis=1)
    return indices, similarities


def knn_scores_from_neighbours(
    indices: NDArray[np.integer],
    similarities: NDArray[np.float64],
    Y_train: sparse.spmatrix | sparse.sparray | NDArray[np.bool_],
) -> NDArray[np.float64]:
    """score(d, c) = sum of the similarities of d's neighbours that are in c (module docstring).

    ``indices`` and ``similarities`` are :func:`knn_topk`'s (or their first k' columns);
    ``Y_train`` (n_train x n_categories) is True/non-zero where a training document is in a
    category. Returns a float64 array of shape (n_query, n_categories).
    """
    indices, similarities = np.asarray(indices), np.asarray(similarities, dtype=np.float64)
    if indices.ndim != 2 or indices.shape != similarities.shape or not np.issubdtype(indices.dtype, np.integer):
        raise ValueError(
            "indices and similarities must be 2-D arrays of one shape (n_query, k), indices integer; "
            f"got shapes {indices.shape} and {similarities.shape}, dtype {indices.dtype}"
        )
    Y = _membership(Y_train)
    if indices.size and (indices.min() < 0 or indices.max() >= Y.shape[0]):
        raise ValueError(
            f"indices must be rows of Y_train, 0..{Y.shape[0] - 1}; got values from "
            f"{indices.min()} to {indices.max()}"
        )
    n_query, k = indices.shape
    # W[i, indices[i, j]] = similarities[i, j]; then scores = W Y.
    W = sparse.csr_matrix(
        (similarities.ravel(), indices.ravel(), np.arange(n_query + 1) * k),
        shape=(n_query, Y.shape[0]),
    )
    return (W @ Y).toarray()



@dataclass(frozen=True)
class KnnParameters(Parameters):
    """kNN's settings, ``[train.knn]``."""

    k: int = field(default=DEFAULT_K, metadata=meaning(
        "the nearest training documents whose similarities are summed; beyond the training documents means all of "
        "them (knn_topk caps it)", between(1, MAX_K)))


def _score_range(parameters: KnnParameters, nonnegative_features: bool) -> ScoreRange:
    """The sum of k cosines, each in [-1, 1] ([0, 1] for non-negative features): s in [0, k] (or [-k, k]); no
    natural threshold (Yang & Liu use SCut). A category none of the k neighbours has scores exactly 0, whatever the
    features: a threshold below 0 assigns every such category, and one of 0, with k > 1, every category of any one
    neighbour, which is no vote of k (``train.method = "knn"`` alone was that); with k = 1 it is the 1-NN rule.
    """
    k = parameters.k
    low = 0.0 if nonnegative_features else -float(k)
    neighbours = f"its k = {k} nearest neighbours"
    floor = Floor(0.0, f"each document every category none of {neighbours} has (its score is 0)",
                  f"each document every category of any one of {neighbours} (a category no neighbour has scores 0, "
                  "one a neighbour has more)" if k > 1 else "")
    return ScoreRange(low, float(k), None, "",
                      f"kNN's scores are sums of the similarities of k = {k} neighbours, between {low:g} and {k}",
                      floor=floor)


def _fitting(parameters: KnnParameters, terms: int) -> Neighbours:
    """The stored training set, scored by its ``k`` nearest neighbours."""
    return Neighbours(parameters.k)


def _scoring(parameters: KnnParameters) -> Scoring:
    """The summed similarities of the ``k`` nearest training documents."""
    return Scoring(NEIGHBOURS, parameters.k)


def _describe(record: Mapping[str, Any]) -> list[str]:
    return [f"- Method: `knn`, the summed similarities of the k = {shown(record, 'k')} nearest training "
            "documents"]


#: kNN (Yang & Liu 1999; Debole & Sebastiani 2005 equation 3).
METHOD = Method(
    name="knn", title="kNN", parameters=KnnParameters,
    fitting=_fitting, scoring=_scoring, score_range=_score_range, describe=_describe,
    unused=("tune.shared_fbr",),
    unused_reason="kNN's term count and fbr are always chosen for all categories at once",
)
