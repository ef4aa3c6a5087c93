"""Multinomial naive Bayes against scikit-learn's MultinomialNB, per category (c against the rest).

Pure: :func:`sparktc.models.naive_bayes.multinomial_nb` and the per-category fit over the selected terms.
Spark: ``test_methods``' JSON Lines corpus through ingest -> rank once (shared with ``test_nnet``), then
naive Bayes with SCut over the 60 best terms through train and evaluate: the weight stage's ``counts``
against a Counter of the stored tokens, the stored weights and bias against MultinomialNB fitted on the
training counts read with pyarrow, and evaluate's predictions against the scores and thresholds redone here.
"""

from collections import Counter

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest
from scipy import sparse
from sklearn.naive_bayes import MultinomialNB
from test_methods import CATEGORIES, N_TEST, N_TRAIN
from test_nnet import read_split, trained

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


# --- through Spark ---------------------------------------------------------------------------------

ALPHA, TERMS = 0.5, 60
NB = ["train.method=nb", f"train.nb_alpha={ALPHA}", "train.thresholding=scut", f"select.top_k={TERMS}"]


@pytest.fixture(scope="module")
def nb(spark, tmp_path_factory):
    return trained(spark, tmp_path_factory, "nb", NB)


def test_counts_are_the_token_counts_over_the_vocabulary(nb):
    terms = pd.read_parquet(nb.output / "vocabulary").sort_values("term_id")["term"].tolist()
    term_id = {term: i for i, term in enumerate(terms)}
    tokens = ds.dataset(nb.output / "tokens", format="parquet").to_table(columns=["doc_id", "tokens"]).to_pylist()
    tokens = {row["doc_id"]: row["tokens"] for row in tokens}
    checked = 0
    for split in ("train", "test"):
        ids, X = read_split(str(nb.output), split, "counts")
        assert len(ids) == {"train": N_TRAIN, "test": N_TEST}[split]
        for row in range(0, len(ids), 7):
            expected = Counter(term_id[t] for t in tokens[ids[row]].split() if t in term_id)
            found = X.getrow(row)
            assert dict(zip(found.indices.tolist(), found.data.tolist())) == expected, ids[row]
            checked += 1
    assert checked >= 25


def test_nb_models_are_multinomialnb_over_the_selected_training_counts(nb):
    order = pd.read_parquet(nb.output / "term_ranks").sort_values("rank")["term_id"].to_numpy()
    kept = np.sort(order[:TERMS])
    ids, X = read_split(str(nb.output), "train", "counts")
    labels = pd.read_parquet(nb.output / "vectors" / "split=train").set_index("doc_id").loc[ids, "labels"]
    for c in CATEGORIES:
        y = np.array([c in document for document in labels])
        n_c = int(y.sum())
        prior = np.array([ALPHA + len(y) - n_c, ALPHA + n_c]) / (2 * ALPHA + len(y))
        reference = MultinomialNB(alpha=ALPHA, class_prior=prior).fit(X[:, kept], y)
        model = nb.models.loc[c]
        weights = np.asarray(model["weights"], dtype=np.float64)
        assert model["method"] == "nb" and model["features"] == TERMS and model["train_positives"] == n_c
        np.testing.assert_allclose(weights[kept], reference.feature_log_prob_[1] - reference.feature_log_prob_[0],
                                   rtol=1e-10, atol=1e-12, err_msg=c)
        assert not weights[np.setdiff1d(np.arange(len(weights)), kept)].any()
        assert model["bias"] == pytest.approx(reference.class_log_prior_[1] - reference.class_log_prior_[0],
                                              rel=1e-12)
        np.testing.assert_allclose(X @ weights + model["bias"], _reference(X[:, kept], y, ALPHA), rtol=1e-9,
                                   atol=1e-9)


def test_nb_predictions_are_the_count_scores_above_the_stored_thresholds(nb):
    ids, X = read_split(str(nb.output), "test", "counts")
    assert ids == nb.predictions.index.tolist()
    W = np.column_stack([np.asarray(nb.models.loc[c, "weights"], dtype=np.float64) for c in CATEGORIES])
    scores = np.asarray(X @ W) + nb.models.loc[CATEGORIES, "bias"].to_numpy()
    np.testing.assert_array_equal(nb.assigned, scores > nb.thresholds)
    assert nb.assigned.any() and not nb.assigned.all()
    top = np.vstack(nb.predictions["top_scores"])
    np.testing.assert_allclose(top, -np.sort(-scores, axis=1)[:, :top.shape[1]], rtol=0, atol=1e-9)
    # Scored over the counts, not the ltc weights: the same weights over the ltc values give other scores.
    _, ltc = read_split(str(nb.output), "test")
    assert not np.allclose(np.asarray(ltc @ W) + nb.models.loc[CATEGORIES, "bias"].to_numpy(), scores)
