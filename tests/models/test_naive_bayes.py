"""Multinomial naive Bayes against scikit-learn's MultinomialNB: the mixture over all categories (each
document repeated once per category it has) and one category against the rest.

Pure: :func:`sparktc.models.naive_bayes.mixture_nb` and :class:`NaiveBayesMixture` against MultinomialNB's
posteriors; :func:`multinomial_nb` and the per-category fit over the selected terms.
Spark: ``test_methods``' JSON Lines corpus through ingest -> rank once (shared with ``test_nnet``), then
naive Bayes over the 60 best terms through train and evaluate, binary with SCut and the mixture with SCutFBR
(fbr and terms chosen by cross-validation): the weight stage's ``counts`` against a Counter of the stored
tokens, the stored weights and bias against MultinomialNB fitted on the training counts read with pyarrow,
the mixture's fold models and thresholds against a direct computation, and evaluate's predictions against
the scores and thresholds redone here.
"""

import json
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest
from conftest import chi2_order
from scipy import sparse
from sklearn.naive_bayes import MultinomialNB
from test_methods import CATEGORIES, N_TEST, N_TRAIN
from test_nnet import read_split, trained

from sparktc.experiment.config import TrainConfig
from sparktc.models.llsf import document_folds
from sparktc.models.naive_bayes import (
    NaiveBayesMixture,
    NaiveBayesParameters,
    log_posterior,
    mixture_nb,
    multinomial_nb,
)
from sparktc.models.tuning import Candidate, fit_category


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
    rule = TrainConfig(method="nb", nb=NaiveBayesParameters(model="binary", alpha=0.5)).decision_rule()
    model = fit_category(X, y, order, [Candidate("l2r_l2loss_svc_dual", 1.0, 1.0, 10, 0.1)], rule)
    kept = np.sort(order[:10])
    np.testing.assert_allclose(X @ model.weights + model.bias, _reference(X[:, kept], y, 0.5), rtol=1e-10,
                               atol=1e-10)
    assert not model.weights[np.setdiff1d(np.arange(30), kept)].any()


def _replicated(X: sparse.csr_matrix, Y: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Each document once per category it has, labelled with that category (single-label rows)."""
    rows, categories = np.nonzero(Y)
    return X[rows], categories


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_mixture_is_multinomialnb_over_documents_repeated_per_category(alpha):
    X = _counts(6, documents=80, terms=20)
    rng = np.random.default_rng(7)
    Y = rng.random((80, 4)) < 0.35
    Y[np.arange(80), rng.integers(0, 4, 80)] = True  # every category has documents
    log_theta, log_prior = mixture_nb(X.T @ Y.astype(np.float64), Y.sum(axis=0), alpha)
    prior = (alpha + Y.sum(axis=0)) / (alpha * 4 + Y.sum())
    reference = MultinomialNB(alpha=alpha, class_prior=prior).fit(*_replicated(X, Y))
    np.testing.assert_allclose(log_theta, reference.feature_log_prob_.T, rtol=1e-12)
    np.testing.assert_allclose(log_prior, np.log(prior), rtol=1e-12)
    model = NaiveBayesMixture(np.arange(20), log_theta, log_prior)
    np.testing.assert_allclose(model.scores(X), reference.predict_proba(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.scores(X).sum(axis=1), 1.0, rtol=1e-12)


def test_mixture_scores_only_the_selected_columns_and_a_category_without_documents_stays_finite():
    X = _counts(8, documents=30, terms=12)
    Y = np.zeros((30, 3), dtype=bool)
    Y[:15, 0] = Y[15:, 1] = True  # category 2 has no document
    columns = np.array([1, 4, 5, 9])
    log_theta, log_prior = mixture_nb(X[:, columns].T @ Y.astype(np.float64), Y.sum(axis=0), 1.0)
    scores = NaiveBayesMixture(columns, log_theta, log_prior).scores(X)
    np.testing.assert_allclose(scores, np.exp(log_posterior(np.asarray(X[:, columns] @ log_theta) + log_prior)))
    assert np.isfinite(scores).all() and (scores[:, 2] < np.maximum(scores[:, 0], scores[:, 1])).all()
    with pytest.raises(ValueError, match="alpha = -1"):
        mixture_nb(np.ones((2, 2)), np.ones(2), -1.0)


# --- through Spark ---------------------------------------------------------------------------------

ALPHA, TERMS = 0.5, 60
NB = ["train.method=nb", "train.nb.model=binary", f"train.nb.alpha={ALPHA}", "train.thresholding=scut",
      f"select.top_k={TERMS}"]
FBRS = (0.0, 0.5)
ALPHAS = (ALPHA, 0.02)
MIXTURE = ["train.method=nb", f"tune.nb.alpha={list(ALPHAS)}", "train.thresholding=scutfbr",
           f"tune.terms=[30, {TERMS}]", f"tune.fbr={list(FBRS)}"]


@pytest.fixture(scope="module")
def nb(spark, tmp_path_factory):
    return trained(spark, tmp_path_factory, "nb", NB)


@pytest.fixture(scope="module")
def mixture(spark, tmp_path_factory):
    return trained(spark, tmp_path_factory, "nb-mixture", MIXTURE)


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
    order = chi2_order(nb.output)
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


def _labels(output, split: str, ids: list[str]) -> np.ndarray:
    labels = pd.read_parquet(output / "vectors" / f"split={split}").set_index("doc_id").loc[ids, "labels"]
    return np.array([[c in document for c in CATEGORIES] for document in labels])


def test_mixture_chooses_terms_alpha_and_fbr_by_cross_validated_micro_f1_and_scores_posteriors(mixture):
    """The fold models are MultinomialNB without each fold; the choice of (terms, alpha, fbr) and the thresholds
    are the cross-validated SCutFBR redone here from those out-of-fold posteriors P(c|d).
    """
    from test_llsf import cross_validated_counts

    order = chi2_order(mixture.output)
    ids, X = read_split(str(mixture.output), "train", "counts")
    Y = _labels(mixture.output, "train", ids)
    fold = document_folds(ids, 5, 0)

    def posteriors(kept: np.ndarray, rows: np.ndarray, scored: sparse.csr_matrix, alpha: float) -> np.ndarray:
        prior = (alpha + Y[rows].sum(axis=0)) / (alpha * len(CATEGORIES) + Y[rows].sum())
        reference = MultinomialNB(alpha=alpha, class_prior=prior).fit(*_replicated(X[rows][:, kept], Y[rows]))
        return reference.predict_proba(scored[:, kept])

    results = {}
    for terms in (30, TERMS):
        kept = np.sort(order[:terms])
        for alpha in ALPHAS:
            scores = np.zeros(Y.shape)
            for f in range(5):
                scores[fold == f] = posteriors(kept, fold != f, X[fold == f], alpha)
            for fbr in FBRS:
                per_category = [cross_validated_counts(scores[:, j], Y[:, j], fold, fbr)
                                for j in range(len(CATEGORIES))]
                total = {key: sum(counts[key] for _, counts in per_category) for key in ("tp", "fp", "fn")}
                results[(terms, alpha, fbr)] = (2 * total["tp"] / (2 * total["tp"] + total["fp"] + total["fn"]),
                                                [threshold for threshold, _ in per_category])
    best = max(results, key=lambda key: results[key][0])  # the first of equal maxima, as train chooses
    kept = np.sort(order[:best[0]])
    for j, c in enumerate(CATEGORIES):
        model = mixture.models.loc[c]
        assert model["method"] == "nb" and model["features"] == best[0]
        assert json.loads(model["choices"])["alpha"] == best[1]
        assert model["threshold"] == pytest.approx(results[best][1][j], rel=1e-6, abs=1e-9), c
    details = json.loads((mixture.output / "manifests" / "train.json").read_text())["details"]
    assert details["alpha"] == best[1] and details["cv_micro_f1"] == pytest.approx(results[best][0])
    assert len(details["searched"]) == len(results)
    test_ids, X_test = read_split(str(mixture.output), "test", "counts")
    expected = posteriors(kept, np.ones(len(ids), dtype=bool), X_test, best[1])
    top = np.vstack(mixture.predictions.loc[test_ids, "top_scores"])
    np.testing.assert_allclose(top, -np.sort(-expected, axis=1)[:, :top.shape[1]], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(mixture.assigned, expected > mixture.thresholds)


# --- what the configuration refuses -------------------------------------------------------------------


def test_scut_over_every_term_is_refused_naming_what_works():
    from conftest import REPO

    from sparktc.experiment.config import ConfigError, load_config

    base = ["corpus.format=reuters21578", f"corpus.path={REPO}", "train.method=nb", "train.thresholding=scut"]
    with pytest.raises(ConfigError, match=r"over every term.*select.top_k = 2000.*tune.nb.alpha.*scutfbr"):
        load_config(None, base)
    for works in (["select.top_k=2000"], ["select.reduction_factor=0.9"], ["tune.terms=[1000, 0]"],
                  ["train.nb.model=binary"]):
        assert load_config(None, [*base, *works]).train.method == "nb"
    assert load_config(None, [*base[:3], "train.thresholding=scutfbr"]).train.thresholding == "scutfbr"
    with pytest.raises(ConfigError, match="tune.nb.alpha = \\[0.1\\] with train.nb.model = 'binary'"):
        load_config(None, [*base, "select.top_k=2000", "train.nb.model=binary", "tune.nb.alpha=[0.1]"])
    # [tune.nb] is naive Bayes's table: under another method it is kept (one file may hold both methods'
    # settings) and searches nothing.
    other = load_config(None, [*base[:2], "tune.nb.alpha=[0.1]"])
    assert other.tune.nb.alpha == [0.1] and not hasattr(other.tune.lists("liblinear"), "alpha")
    with pytest.raises(ConfigError, match=r"^tune.nb_alpha is now tune.nb.alpha: write \[tune.nb\] alpha = \[0.1\] "
                                          r"or --set tune.nb.alpha=\[0.1\]$"):
        load_config(None, [*base, "tune.nb_alpha=[0.1]"])
