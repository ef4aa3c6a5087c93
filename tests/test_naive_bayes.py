"""Multinomial naive Bayes against scikit-learn's MultinomialNB, per category (c against the rest)."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.naive_bayes import MultinomialNB

from sparktc.models.naive_bayes import multinomial_nb
from sparktc.models.tuning import Candidate, fit_category
from sparktc.runtime.config import TrainConfig


def _reference(X, y, alpha: float) -> np.ndarray:
    """MultinomialNB's log-odds of class 1, with the alpha-smoothed prior sparktc uses."""
    n_c = int(np.sum(y))
    prior = np.array([alpha + len(y) - n_c, alpha + n_c]) / (2 * alpha + len(y))
    joint = MultinomialNB(alpha=alpha, class_prior=prior).fit(X, y).predict_joint_log_proba(X)
    return joint[:, 1] - joint[:, 0]


def _counts(seed: int, documents: int = 60, terms: int = 25) -> sparse.csr_matrix:
    rng = np.random.default_rng(seed)
    dense = rng.poisson(0.6, size=(documents, terms)).astype(np.float64)
    return sparse.csr_matrix(dense)


@pytest.mark.parametrize("alpha", [1.0, 0.1, 2.5])
def test_log_odds_are_multinomialnb_joint_log_likelihood_difference(alpha):
    X = _counts(0)
    y = np.random.default_rng(1).random(X.shape[0]) < 0.3
    w, b = multinomial_nb(X, y, alpha)
    np.testing.assert_allclose(X @ w + b, _reference(X, y, alpha), rtol=1e-10, atol=1e-10)


def test_with_scikit_learns_own_prior_only_the_bias_differs():
    X = _counts(5)
    y = np.arange(X.shape[0]) % 3 == 0
    w, b = multinomial_nb(X, y, 1.0)
    joint = MultinomialNB(alpha=1.0).fit(X, y).predict_joint_log_proba(X)
    n_c = int(y.sum())
    ml_prior = np.log(n_c / (len(y) - n_c))
    np.testing.assert_allclose(X @ w + ml_prior, joint[:, 1] - joint[:, 0], rtol=1e-10, atol=1e-10)
    assert b == pytest.approx(np.log((1 + n_c) / (1 + len(y) - n_c)))


def test_a_class_without_documents_gets_a_finite_smoothed_prior():
    X = _counts(2)
    w, b = multinomial_nb(X, np.zeros(X.shape[0], dtype=bool), 1.0)
    assert b == pytest.approx(np.log(1 / 61))
    assert np.isfinite(X @ w).all() and ((X @ w + b) < 0).all()


def test_alpha_must_be_positive():
    with pytest.raises(ValueError, match="alpha = 0"):
        multinomial_nb(_counts(3), np.ones(60, dtype=bool), 0.0)


def test_selected_terms_are_the_vocabulary_and_the_rest_weigh_nothing():
    """With terms selected, |V| is the selection: MultinomialNB on those columns alone."""
    X = _counts(4, terms=30)
    y = np.arange(X.shape[0]) % 4 == 0
    order = np.arange(30)[::-1]  # ranked: the last terms first
    rule = TrainConfig(method="nb", nb_alpha=0.5).decision_rule()
    model = fit_category(X, y, order, [Candidate("l2r_l2loss_svc_dual", 1.0, 1.0, 10, 0.1)], rule)
    kept = np.sort(order[:10])
    np.testing.assert_allclose(X @ model.weights + model.bias, _reference(X[:, kept], y, 0.5), rtol=1e-10,
                               atol=1e-10)
    assert not model.weights[np.setdiff1d(np.arange(30), kept)].any()
