"""kNN neighbours and scores against brute force and scikit-learn (REFERENCE.md section 5)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.neighbors import NearestNeighbors

from sparktc.models.knn import DEFAULT_BLOCK_BYTES, DEFAULT_K, knn_scores_from_neighbours, knn_topk, selected_space
from sparktc.validation import check_matrix


def knn_scores(
    X_query: sp.spmatrix | sp.sparray,
    X_train: sp.spmatrix | sp.sparray,
    Y_train: sp.spmatrix | sp.sparray | NDArray[np.bool_],
    k: int = DEFAULT_K,
    exclude_self: NDArray[np.integer] | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> NDArray[np.float64]:
    """The kNN scores, shape (n_query, n_categories): :func:`knn_topk` then :func:`knn_scores_from_neighbours`.

    ``Y_train`` (n_train x n_categories, scipy sparse or bool array) marks each training
    document's categories; the other parameters are :func:`knn_topk`'s.
    """
    n_train = check_matrix("X_train", X_train).shape[0]
    if np.shape(Y_train)[0] != n_train:
        raise ValueError(
            f"Y_train must have one row per training document ({n_train}); got shape {np.shape(Y_train)}"
        )
    indices, similarities = knn_topk(X_query, X_train, k, exclude_self, block_bytes)
    return knn_scores_from_neighbours(indices, similarities, Y_train)


def _unit_rows(X: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(1 / np.where(norms > 0, norms, 1)) @ X)


def _brute_force(Xq, Xt, k, exclude=None):
    """Full dense similarity matrix, each row sorted by (-similarity, training row)."""
    S = Xq.toarray() @ Xt.toarray().T
    if exclude is not None:
        rows = np.flatnonzero(exclude >= 0)
        S[rows, exclude[rows]] = -np.inf
    columns = np.broadcast_to(np.arange(S.shape[1]), S.shape)
    order = np.lexsort((columns, -S), axis=1)[:, :k]
    return order, np.take_along_axis(S, order, axis=1)


@pytest.fixture(scope="module")
def sparse_data():
    """Sparse unit rows: queries overlap few training docs, so zero similarities tie at rank k."""
    rng = np.random.default_rng(0)
    Xt = _unit_rows(sp.random(120, 200, density=0.05, format="csr", random_state=rng))
    Xq = _unit_rows(sp.random(40, 200, density=0.05, format="csr", random_state=rng))
    Xq = sp.vstack([Xq, sp.csr_matrix((1, 200))], format="csr")  # an empty query: all ties
    return Xq, Xt


@pytest.fixture(scope="module")
def quantised_data():
    """Rows of four 0.5 entries (unit length) over 12 features, some training rows duplicated:
    every similarity is a multiple of 1/4, exact in any summation order, so ties abound.
    """
    rng = np.random.default_rng(3)

    def rows(n):
        X = np.zeros((n, 12))
        for i in range(n):
            X[i, rng.choice(12, size=4, replace=False)] = 0.5
        return X

    train = rows(50)
    train = np.vstack([train, train[[3, 7, 7, 20]]])
    return sp.csr_matrix(rows(30)), sp.csr_matrix(train)


def test_matches_brute_force_on_sparse_data(sparse_data):
    Xq, Xt = sparse_data
    for k in (1, 5, DEFAULT_K, 60):
        indices, sims = knn_topk(Xq, Xt, k)
        expected_indices, expected_sims = _brute_force(Xq, Xt, k)
        np.testing.assert_array_equal(indices, expected_indices)
        np.testing.assert_allclose(sims, expected_sims, rtol=1e-12, atol=1e-15)
        assert indices.dtype == np.int64 and sims.dtype == np.float64 and indices.shape == (41, k)
    # The empty query ties everywhere at 0: the lowest training rows win.
    np.testing.assert_array_equal(knn_topk(Xq[40], Xt, 10)[0], [np.arange(10)])
    assert np.any(knn_topk(Xq, Xt, 30)[1][:, -1] == 0.0)  # ties at zero at the boundary happened


def test_ties_are_broken_by_training_row(quantised_data):
    Xq, Xt = quantised_data
    for k in (1, 3, 10, 25):
        indices, sims = knn_topk(Xq, Xt, k)
        expected_indices, expected_sims = _brute_force(Xq, Xt, k)
        np.testing.assert_array_equal(indices, expected_indices)
        np.testing.assert_array_equal(sims, expected_sims)
        # Within equal similarities the rows ascend.
        same = sims[:, 1:] == sims[:, :-1]
        assert np.all(indices[:, 1:][same] > indices[:, :-1][same])
    # A duplicated training row and its copy are adjacent, original first.
    indices, _ = knn_topk(Xt[7], Xt, 3)
    np.testing.assert_array_equal(indices, [[7, 51, 52]])


def test_first_columns_are_the_smaller_k(quantised_data):
    Xq, Xt = quantised_data
    indices, sims = knn_topk(Xq, Xt, 20)
    small_indices, small_sims = knn_topk(Xq, Xt, 7)
    np.testing.assert_array_equal(indices[:, :7], small_indices)
    np.testing.assert_array_equal(sims[:, :7], small_sims)


def test_neighbour_sets_match_sklearn_cosine_brute_force():
    rng = np.random.default_rng(5)
    Xt = _unit_rows(sp.random(150, 40, density=0.4, format="csr", random_state=rng))
    Xq = _unit_rows(sp.random(30, 40, density=0.4, format="csr", random_state=rng))
    S = Xq.toarray() @ Xt.toarray().T
    assert np.all(np.diff(np.sort(S, axis=1), axis=1) > 1e-9)  # no ties
    k = 15
    indices, sims = knn_topk(Xq, Xt, k)
    distances, theirs = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(Xt).kneighbors(Xq)
    for ours_row, theirs_row in zip(indices, theirs):
        assert set(ours_row) == set(theirs_row)
    np.testing.assert_allclose(sims, 1 - distances, atol=1e-12)


def test_exclude_self_gives_leave_one_out_neighbours(quantised_data):
    _, Xt = quantised_data
    n = Xt.shape[0]
    indices, sims = knn_topk(Xt, Xt, 5)
    assert np.all(sims[:, 0] == pytest.approx(1.0))  # without exclusion a document finds itself
    loo, loo_sims = knn_topk(Xt, Xt, 5, exclude_self=np.arange(n))
    assert not np.any(loo == np.arange(n)[:, None])
    expected_indices, expected_sims = _brute_force(Xt, Xt, 5, exclude=np.arange(n))
    np.testing.assert_array_equal(loo, expected_indices)
    np.testing.assert_array_equal(loo_sims, expected_sims)
    # The duplicates of row 7 still find each other.
    assert set(loo[7, :2]) == {51, 52} and loo_sims[7, 0] == 1.0
    # -1 means no exclusion for that query.
    partial = np.where(np.arange(n) % 2 == 0, np.arange(n), -1)
    mixed, _ = knn_topk(Xt, Xt, 5, exclude_self=partial)
    np.testing.assert_array_equal(mixed[0::2], loo[0::2])
    np.testing.assert_array_equal(mixed[1::2], indices[1::2])


def test_k_is_capped_at_the_available_training_documents(quantised_data):
    Xq, Xt = quantised_data
    n = Xt.shape[0]
    indices, _ = knn_topk(Xq, Xt, n + 10)
    assert indices.shape == (Xq.shape[0], n)
    assert np.all(np.sort(indices, axis=1) == np.arange(n))
    loo, _ = knn_topk(Xt, Xt, n + 10, exclude_self=np.arange(n))
    assert loo.shape == (n, n - 1) and not np.any(loo == np.arange(n)[:, None])
    one = sp.csr_matrix(np.array([[1.0, 0.0]]))
    empty_indices, _ = knn_topk(one, one, 3, exclude_self=np.array([0]))
    assert empty_indices.shape == (1, 0)
    np.testing.assert_array_equal(knn_scores(one, one, np.array([[True]]), 3, exclude_self=np.array([0])), [[0.0]])


@pytest.mark.parametrize("data", ["sparse_data", "quantised_data"])
def test_blocks_give_identical_results(data, request):
    Xq, Xt = request.getfixturevalue(data)
    n_train = Xt.shape[0]
    exclude = np.where(np.arange(Xq.shape[0]) % 3 == 0, np.arange(Xq.shape[0]) % n_train, -1)
    whole = knn_topk(Xq, Xt, 10, exclude_self=exclude)
    for block_bytes in (1, 8 * n_train, 8 * n_train * 7, 8 * n_train * 7 + 5):  # 1, 1, 7, 7 rows
        blocked = knn_topk(Xq, Xt, 10, exclude_self=exclude, block_bytes=block_bytes)
        np.testing.assert_array_equal(blocked[0], whole[0])
        np.testing.assert_array_equal(blocked[1], whole[1])


def test_scores_sum_similarities_of_neighbours_in_the_category(sparse_data):
    Xq, Xt = sparse_data
    rng = np.random.default_rng(7)
    Y = rng.random((Xt.shape[0], 6)) < 0.2
    Y[:, 5] = False  # a category with no training document
    k = 12
    expected_indices, expected_sims = _brute_force(Xq, Xt, k)
    expected = np.einsum("qk,qkc->qc", expected_sims, Y[expected_indices].astype(float))
    for labels in (Y, sp.csr_matrix(Y), sp.csc_matrix(Y.astype(np.int8))):
        scores = knn_scores(Xq, Xt, labels, k, block_bytes=8 * Xt.shape[0] * 4)
        np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-15)
        assert scores.shape == (Xq.shape[0], 6) and scores.dtype == np.float64
    assert np.all(scores[:, 5] == 0)
    indices, sims = knn_topk(Xq, Xt, k)
    np.testing.assert_array_equal(knn_scores_from_neighbours(indices, sims, Y), knn_scores(Xq, Xt, Y, k))


def test_scores_hand_worked():
    # Training docs e1, e2, (e1+e2)/sqrt2; query e1: similarities 1, 0, 1/sqrt2.
    r = 1 / np.sqrt(2)
    Xt = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [r, r]]))
    Y = np.array([[True, False], [True, True], [False, True]])
    scores = knn_scores(sp.csr_matrix(np.array([[1.0, 0]])), Xt, Y, k=2)  # neighbours 0 and 2
    np.testing.assert_allclose(scores, [[1.0, r]])
    loo = knn_scores(Xt, Xt, Y, k=1, exclude_self=np.arange(3))  # 0 -> 2, 1 -> 2, 2 -> 0 (tie with 1)
    np.testing.assert_allclose(loo, [[0, r], [0, r], [r, 0]])


def test_rejects_bad_parameters(quantised_data):
    Xq, Xt = quantised_data
    for k in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match=f"k must be an integer >= 1; got {k!r}"):
            knn_topk(Xq, Xt, k)
    with pytest.raises(ValueError, match="block_bytes must be an integer >= 1; got 0"):
        knn_topk(Xq, Xt, 3, block_bytes=0)
    with pytest.raises(ValueError, match="exclude_self must be an integer array of shape \\(30,\\)"):
        knn_topk(Xq, Xt, 3, exclude_self=np.zeros(29, dtype=int))
    with pytest.raises(ValueError, match="exclude_self must hold training rows 0..53 or -1"):
        knn_topk(Xq, Xt, 3, exclude_self=np.full(30, 54))
    with pytest.raises(ValueError, match="X_query must have X_train's 12 features"):
        knn_topk(sp.csr_matrix((2, 11)), Xt, 3)
    with pytest.raises(ValueError, match="X_train must have at least one document"):
        knn_topk(Xq, sp.csr_matrix((0, 12)), 3)
    with pytest.raises(ValueError, match="X_query must be a 2-D scipy sparse matrix"):
        knn_topk(Xq.toarray(), Xt, 3)
    with pytest.raises(ValueError, match="Y_train must have one row per training document \\(54\\)"):
        knn_scores(Xq, Xt, np.zeros((53, 2), dtype=bool), 3)
    with pytest.raises(ValueError, match="Y_train must be a scipy sparse matrix or a 2-D bool array"):
        knn_scores(Xq, Xt, np.zeros((54, 2)), 3)


def test_selected_space_keeps_the_selected_terms_and_renormalizes_each_row():
    rng = np.random.default_rng(11)
    dense = rng.random((6, 8)) * (rng.random((6, 8)) < 0.5)
    dense[2, [1, 3]] = 0.0  # row 2 may lose every selected term
    columns = np.array([1, 3, 6])
    got = selected_space(sp.csr_matrix(dense), columns).toarray()
    kept = dense[:, columns]
    norms = np.linalg.norm(kept, axis=1, keepdims=True)
    np.testing.assert_allclose(got, np.divide(kept, norms, out=np.zeros_like(kept), where=norms > 0), rtol=1e-12)
    assert selected_space(sp.csr_matrix(dense), None).toarray().tolist() == dense.tolist()
