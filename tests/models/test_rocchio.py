"""Rocchio classifiers against the formula computed densely and by hand (REFERENCE.md section 5)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparktc.models.linear import BinaryProblems
from sparktc.models.rocchio import rocchio


def _random_unit_rows(rng: np.random.Generator, n: int, m: int) -> sp.csr_matrix:
    X = sp.random(n, m, density=0.1, format="csr", random_state=rng)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(1 / np.where(norms > 0, norms, 1)) @ X)


def test_matches_dense_formula_on_random_data():
    rng = np.random.default_rng(1)
    X = _random_unit_rows(rng, 200, 50)
    y = rng.random(200) < 0.2
    dense = X.toarray()
    for beta, gamma in [(16.0, 4.0), (1.0, 0.0), (0.5, 2.5)]:
        w, b = rocchio(X, y, beta, gamma)
        expected = beta * dense[y].mean(axis=0) - gamma * dense[~y].mean(axis=0)
        np.testing.assert_allclose(w, expected, rtol=1e-12, atol=1e-15)
        assert b == 0.0 and w.dtype == np.float64 and w.shape == (50,)


def test_hand_worked_four_documents():
    # Docs 0, 1 positive; 2, 3 negative.  mean(pos) = (0.5, 0.5, 0), mean(neg) = (0, 0.5, 0.5).
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0]]))
    y = np.array([True, True, False, False])
    w, b = rocchio(X, y)
    np.testing.assert_allclose(w, [16 * 0.5, 16 * 0.5 - 4 * 0.5, -4 * 0.5])  # (8, 6, -2)
    assert b == 0.0
    # Negative weights are kept.
    np.testing.assert_allclose(X @ w + b, [8.0, 6.0, -2.0, 6.0])


def test_defaults_are_debole_sebastiani():
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 1]]))
    y = np.array([True, False])
    np.testing.assert_allclose(rocchio(X, y)[0], [16.0, -4.0])


def test_degenerate_categories_match_liblinear_convention():
    X = sp.csr_matrix(np.eye(3))
    for y in (np.zeros(3, dtype=bool), np.ones(3, dtype=bool)):
        w, b = rocchio(X, y)
        w_lin, b_lin = BinaryProblems(X, bias=1.0).train(y, "l2r_l2loss_svc_dual", 1.0, 0.1)
        np.testing.assert_array_equal(w, w_lin)
        assert b == b_lin == (1.0 if y.all() else -1.0)


@pytest.mark.parametrize("name, value", [("beta", -1.0), ("gamma", float("nan")), ("beta", True), ("gamma", "4")])
def test_rejects_bad_controls(name, value):
    X, y = sp.csr_matrix(np.eye(2)), np.array([True, False])
    with pytest.raises(ValueError, match=f"{name} must be a finite number >= 0.*{value!r}"):
        rocchio(X, y, **{name: value})


def test_rejects_bad_inputs():
    X = sp.csr_matrix(np.eye(2))
    with pytest.raises(ValueError, match="y must be a bool array of shape \\(2,\\)"):
        rocchio(X, np.array([1, 0]))
    with pytest.raises(ValueError, match="y must be a bool array"):
        rocchio(X, np.array([True, False, True]))
    with pytest.raises(ValueError, match="X must be a scipy sparse matrix"):
        rocchio(np.eye(2), np.array([True, False]))
    with pytest.raises(ValueError, match="finite"):
        rocchio(sp.csr_matrix(np.array([[np.nan, 0], [0, 1]])), np.array([True, False]))
