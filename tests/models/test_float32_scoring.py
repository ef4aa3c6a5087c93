"""Float32 scoring decides as float64 does (issue 39), Spark-free.

The reference is the plain float64 product, computed here from the batch's arrays: ``S = X @ W + b`` by scipy,
``S > t`` or each row's best k by a stable argsort, and the kept scores read from S. :func:`predict_batch` must
give the same predicted categories, top categories and top scores, bit for bit, on random batches and on
adversarial ones: thresholds at a float64 score and one float64 ulp either side of it, categories with equal
weights (ties, broken by column order) or weights one float32 ulp apart, scores that float32 alone gets wrong
(so that the float64 recheck is what makes them right), float32 overflow, empty documents and counts beyond 2^24.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy import sparse

from sparktc.models.decision import Cut
from sparktc.models.float32_scoring import Float32Weights, decide, row_terms, score_bounds, top_scores
from sparktc.models.method import LINEAR
from sparktc.models.scoring import Scorer, predict_batch


def batch_of(X: sparse.csr_matrix, column: str = "values") -> pa.RecordBatch:
    """A ``vectors`` batch holding the rows of ``X`` (float32 values, or int32 counts with ``column="counts"``)."""
    offsets = pa.array(X.indptr.astype(np.int32))
    indices = pa.ListArray.from_arrays(offsets, pa.array(X.indices.astype(np.int32)))
    values = pa.ListArray.from_arrays(offsets, pa.array(X.data.astype(np.float32)))
    counts = pa.ListArray.from_arrays(offsets, pa.array(X.data.astype(np.int32) if column == "counts"
                                                        else np.ones(X.nnz, dtype=np.int32)))
    n = X.shape[0]
    return pa.RecordBatch.from_arrays(
        [pa.array([f"d{i}" for i in range(n)]), pa.array([[] for _ in range(n)], type=pa.list_(pa.string())),
         indices, values, counts], names=["doc_id", "labels", "indices", "values", "counts"])


def scorer_of(W: np.ndarray, b: np.ndarray, column: str = "values") -> Scorer:
    return Scorer(codes=np.array([f"c{j:03d}" for j in range(W.shape[1])], dtype=object), n_terms=W.shape[0],
                  kind=LINEAR, W=W, b=b, column=column)


def reference(X: sparse.csr_matrix, W: np.ndarray, b: np.ndarray, cut: Cut, k: int):
    """The plain float64 product's predictions: (predicted, top categories, top scores), per document."""
    S = np.asarray(sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape) @ W) + b
    order = np.argsort(-S, axis=1, kind="stable")
    if cut.rcut_k:
        assigned = np.zeros(S.shape, dtype=bool)
        np.put_along_axis(assigned, order[:, :cut.rcut_k], True, axis=1)
    else:
        assigned = S > cut.thresholds
    top = order[:, :k]
    return ([[f"c{j:03d}" for j in np.flatnonzero(row)] for row in assigned],
            [[f"c{j:03d}" for j in row] for row in top], np.take_along_axis(S, top, axis=1))


def assert_as_float64(X: sparse.csr_matrix, W: np.ndarray, b: np.ndarray, cut: Cut, k: int,
                      column: str = "values") -> None:
    got = predict_batch(batch_of(X, column), scorer_of(W, b, column), cut, k)
    predicted, top, scores = reference(X, W, b, cut, k)
    assert got.column("predicted").to_pylist() == predicted
    assert got.column("top_categories").to_pylist() == top
    stored = np.array(got.column("top_scores").to_pylist(), dtype=np.float64).reshape(scores.shape)
    assert np.array_equal(stored.view(np.int64), scores.view(np.int64))  # bit for bit, -0.0 apart from 0.0


def random_case(rng: np.random.Generator, n: int = 400, n_terms: int = 300, m: int = 24):
    """Documents of 0 to 150 terms (a few empty), float32 values over six decades, and weights of several
    scales, with exact duplicates of some categories (ties) and near-duplicates one float32 ulp apart.
    """
    lengths = rng.integers(0, 150, n)
    lengths[rng.choice(n, 5, replace=False)] = 0
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = np.concatenate([np.sort(rng.choice(n_terms, size, replace=False)) for size in lengths])
    data = (rng.standard_normal(indptr[-1]) * 10.0 ** rng.uniform(-3, 3, indptr[-1])).astype(np.float32)
    X = sparse.csr_matrix((data, indices, indptr), shape=(n, n_terms))
    W = rng.standard_normal((n_terms, m)) * 10.0 ** rng.uniform(-2, 1, m)
    b = rng.standard_normal(m)
    W[:, 5], b[5] = W[:, 2], b[2]
    W[:, 9], b[9] = W[:, 4], b[4]
    W[:, 11] = np.nextafter(W[:, 3].astype(np.float32), np.float32(np.inf)).astype(np.float64)
    W[:, 12] = W[:, 3].astype(np.float32)
    W[:, 13] = W[:, 3].astype(np.float32) * (1 + 2.0 ** -40)  # the same in float32, not in float64
    b[11] = b[12] = b[13] = b[3]
    return X, W, b


def float64_scores(X: sparse.csr_matrix, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape) @ W) + b


@pytest.mark.parametrize("seed", range(6))
def test_thresholds_at_and_one_ulp_around_float64_scores_decide_as_float64(seed):
    rng = np.random.default_rng(seed)
    X, W, b = random_case(rng)
    S = float64_scores(X, W, b)
    docs = rng.integers(0, X.shape[0], W.shape[1])
    at = S[docs, np.arange(W.shape[1])]
    for thresholds in (at, np.nextafter(at, np.inf), np.nextafter(at, -np.inf), np.median(S, axis=0)):
        assert_as_float64(X, W, b, Cut(thresholds), k=5)


@pytest.mark.parametrize("rcut_k, k", [(1, 5), (3, 3), (7, 2), (24, 24), (2, 24)])
def test_rcut_and_the_kept_ranking_decide_as_float64_with_ties_and_near_ties(rcut_k, k):
    rng = np.random.default_rng(100 + rcut_k)
    X, W, b = random_case(rng)
    assert_as_float64(X, W, b, Cut(np.zeros(W.shape[1]), rcut_k), k)


def test_scores_float32_alone_gets_wrong_are_rechecked_in_float64():
    # Document 0 scores 1 + 2^-30 on c000, whose threshold is 1: float64 assigns it; float32 rounds the score
    # to 1, which does not exceed 1. c001 and c002 score 1 + 2^-29 and 1 + 2^-28 on document 1: float32 ties
    # them at 1 (column order would put c001 first), float64 ranks c002 first.
    W = np.zeros((4, 3))
    W[0] = 1.0
    W[1] = [2.0 ** -30, 2.0 ** -29, 2.0 ** -28]
    b = np.zeros(3)
    X = sparse.csr_matrix(np.array([[1, 1, 0, 0], [1, 1, 0, 0]], dtype=np.float32))
    thresholds = np.array([1.0, 5.0, 5.0])
    float32_alone = np.float32(1) + np.float32(2.0 ** -30)
    assert float32_alone == 1 and not float32_alone > thresholds[0]  # the case really needs the recheck
    assert_as_float64(X, W, b, Cut(thresholds), k=3)
    assert_as_float64(X, W, b, Cut(thresholds, rcut_k=1), k=3)
    got = predict_batch(batch_of(X), scorer_of(W, b), Cut(thresholds), 3)
    assert got.column("predicted").to_pylist() == [["c000"], ["c000"]]
    assert got.column("top_categories").to_pylist()[1] == ["c002", "c001", "c000"]
    assert got.column("top_scores").to_pylist()[0] == [1 + 2.0 ** -28, 1 + 2.0 ** -29, 1 + 2.0 ** -30]


def test_float32_overflow_empty_documents_and_infinite_thresholds_decide_as_float64():
    rng = np.random.default_rng(7)
    X, W, b = random_case(rng, n=120, m=16)
    W[:, 1] *= 1e36  # float32 products overflow on many documents; float64 ones do not
    W[3, 6] = 3.5e38  # beyond float32's range: infinite once cast
    S = float64_scores(X, W, b)
    thresholds = np.concatenate(([-np.inf, 0.0, np.inf, S[0, 3], 1e300, -3.5e38, 3.5e38], np.median(S[:, 7:], axis=0)))
    assert_as_float64(X, W, b, Cut(thresholds), k=4)
    assert_as_float64(X, W, b, Cut(thresholds, rcut_k=3), k=4)


def test_counts_beyond_float32_integers_score_as_float64():
    rng = np.random.default_rng(11)
    X, W, b = random_case(rng, n=80, m=16)
    X.data = np.round(np.abs(X.data) * 1e4) + 2 ** 24 + 1  # odd integers above 2^24: float32 rounds them
    S = float64_scores(X, W, b)
    assert_as_float64(X, W, b, Cut(S[np.arange(16), np.arange(16)]), k=3, column="counts")


@pytest.mark.parametrize("seed", range(4))
def test_the_bound_holds_for_every_score(seed):
    rng = np.random.default_rng(200 + seed)
    X, W, b = random_case(rng, n=300, n_terms=2000, m=16)
    weights = Float32Weights.of(W, b)
    X32 = sparse.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)
    s32 = (X32 @ W.astype(np.float32) + b.astype(np.float32)).astype(np.float64)
    error = np.abs(s32 - float64_scores(X, W, b))
    bound = score_bounds(*row_terms(sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr),
                                                   shape=X.shape)), weights)
    assert (error <= bound[:, None]).all()


def test_only_documents_near_a_threshold_or_a_tie_are_recomputed():
    rng = np.random.default_rng(3)
    X, W, b = random_case(rng, n=2000, m=24)
    W, b = W[:, :5], b[:5]  # no ties
    S = float64_scores(X, W, b)
    thresholds = S[17].copy()  # document 17 sits on every threshold
    X64 = sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape)
    rows: list[np.ndarray] = []

    def exact(part: sparse.csr_matrix) -> np.ndarray:
        rows.append(part.shape[0])
        return np.asarray(part @ W) + b

    decided = decide(X64, Float32Weights.of(W, b), b, Cut(thresholds), 3, exact)
    assert 17 in decided.rechecked and rows == [len(decided.rechecked)]
    assert len(decided.rechecked) < X.shape[0] // 20  # float32 settles the rest
    assert np.array_equal(decided.assigned, S > thresholds)


def test_top_scores_are_the_float64_product_bit_for_bit():
    rng = np.random.default_rng(5)
    X, W, b = random_case(rng, n=500, m=20)
    b[3] = -0.0  # an empty document's score: 0.0 + -0.0 is 0.0
    X64 = sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape)
    S = np.asarray(X64 @ W) + b
    top = rng.integers(0, 20, (500, 6))
    got = top_scores(X64, Float32Weights.of(W, b), b, top)
    assert np.array_equal(got.view(np.int64), np.take_along_axis(S, top, axis=1).view(np.int64))


def test_categories_of_the_same_weights_tie_in_both_orders_without_a_recheck():
    # Categories without a training positive get the same model (w = 0, b = -1): their scores tie exactly in
    # float32 and in float64, ranked by column in both; documents whose best categories include them are not
    # recomputed for that tie, and rank them as float64 does.
    rng = np.random.default_rng(9)
    X, W, b = random_case(rng, n=600, m=16)
    W, b = W[:, :8].copy(), b[:8].copy()
    W[:, [1, 4, 6]], b[[1, 4, 6]] = 0.0, -1.0
    W[:, [0, 2, 3, 5, 7]] *= 1e-9
    b[[0, 2, 3, 5, 7]] = -50.0  # far below: the three twins rank first in every document
    X64 = sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape)
    thresholds = np.zeros(8)
    decided = decide(X64, Float32Weights.of(W, b), b, Cut(thresholds, rcut_k=2), 3,
                     lambda part: np.asarray(part @ W) + b)
    assert len(decided.rechecked) == 0
    assert (decided.top == [1, 4, 6]).all()
    assert_as_float64(X, W, b, Cut(thresholds, rcut_k=2), k=3)
    assert_as_float64(X, W, b, Cut(thresholds), k=4)
