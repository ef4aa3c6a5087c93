"""scikit-learn's logistic regression as ``train.method = "sklearn_linear"`` (sparktc.models.sklearn_linear): the
method added through the registry alone.

Spark-free: the fitted (w, b) against the optimality conditions of the L2-regularized logistic loss computed here
in numpy (the gradient vanishes), the degenerate categories, per-category fitting over the top-ranked terms, and
the [train] keys with their rules. Through Spark, on tests/models/test_methods.py's prepared corpus: the models
against :func:`logistic_regression` on the stored training vectors, the SCut thresholds against brute-force SCut
over the same folds' out-of-fold scores, the predictions against "w'x + b > threshold" recomputed here, and what
``metrics.json`` and ``report.md`` state of the method.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, brute_force_scut, chi2_order
from scipy import sparse
from scipy.special import expit
from test_methods import CATEGORIES, corpus_config, prepared_corpus, read_run, vectors

from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import ConfigError, TrainConfig, TuneConfig, load_config
from sparktc.features.term_selection import top_terms
from sparktc.models.decision import decision_record
from sparktc.models.sklearn_linear import SklearnLinearParameters, logistic_regression
from sparktc.models.thresholds import balanced_folds
from sparktc.models.tuning import candidates, fit_category

SYNTHETIC = "corpus.format=synthetic"


def planted(seed: int, n: int = 240, d: int = 40) -> tuple[sparse.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sparse.random(n, d, density=0.3, random_state=rng, format="csr")
    y = np.asarray(X @ rng.normal(size=d)).ravel() + 0.3 * rng.normal(size=n) > 0.2
    return X, y


def gradient(X: sparse.csr_matrix, y: np.ndarray, w: np.ndarray, b: float, C: float) -> np.ndarray:
    """The gradient of 1/2 w'w + C sum_i log(1 + exp(-t_i (w'x_i + b))), t_i = +-1, in (w, b); the bias is not
    penalized.
    """
    residual = expit(np.asarray(X @ w).ravel() + b) - y  # d/ds of the loss, per document
    return np.concatenate([w + C * np.asarray(X.T @ residual).ravel(), [C * residual.sum()]])


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_the_fit_is_the_optimum_of_the_regularized_logistic_loss(C):
    X, y = planted(seed=3)
    w, b = logistic_regression(X, y, C=C, max_iter=10_000)
    # scikit-learn stops at a gradient of its loss averaged over the n documents below 1e-4: ours sums them
    assert np.abs(gradient(X, y, w, b, C)).max() < 1e-4 * C * X.shape[0]
    # a worse point: the optimum's gradient is far smaller than that of w = 0, b = 0
    assert np.abs(gradient(X, y, np.zeros_like(w), 0.0, C)).max() > 100 * np.abs(gradient(X, y, w, b, C)).max()


def test_degenerate_categories_are_never_or_always_assigned():
    X, _ = planted(seed=4)
    for y, bias in ((np.zeros(X.shape[0], dtype=bool), -1.0), (np.ones(X.shape[0], dtype=bool), 1.0)):
        w, b = logistic_regression(X, y, C=1.0, max_iter=100)
        assert not w.any() and b == bias


def test_fit_category_fits_the_top_ranked_terms_only_and_scut_thresholds_it():
    X, y = planted(seed=5)
    order = np.random.default_rng(6).permutation(X.shape[1])
    rule = TrainConfig(method="sklearn_linear", sklearn_linear=SklearnLinearParameters(C=2.0),
                       thresholding="scut").decision_rule()
    [candidate] = candidates(rule, TuneConfig().lists(rule.method), terms=15)
    assert (candidate.solver, candidate.C, candidate.positive_weight) == (None, None, None)  # LIBLINEAR's only
    model = fit_category(X, y, order, [candidate], rule)
    columns = top_terms(order, 15)
    w, b = logistic_regression(X[:, columns], y, C=2.0, max_iter=1000)
    expected = np.zeros(X.shape[1])
    expected[columns] = w
    np.testing.assert_array_equal(model.weights, expected)
    assert model.bias == b
    folds = balanced_folds(y, rule.folds, rule.seed)
    scores = np.empty(len(y))
    for fold in range(rule.folds):
        held = folds == fold
        w_f, b_f = logistic_regression(X[~held][:, columns], y[~held], C=2.0, max_iter=1000)
        scores[held] = np.asarray(X[held][:, columns] @ w_f).ravel() + b_f
    per_fold = [brute_force_scut(scores[folds == f], y[folds == f])[0] for f in range(rule.folds)]
    assert model.threshold == pytest.approx(np.mean(per_fold), abs=1e-12)


def test_its_train_keys_carry_their_rules_and_liblinears_search_is_not_its():
    config = load_config(None, [SYNTHETIC, "train.method=sklearn_linear", "train.sklearn_linear.C=0.5",
                                "train.sklearn_linear.max_iter=50"])
    assert config.train.decision_rule().parameters == SklearnLinearParameters(C=0.5, max_iter=50)
    with pytest.raises(ConfigError, match=r"train.sklearn_linear.C = 0.0 is out of range; expected > 0"):
        load_config(None, [SYNTHETIC, "train.method=sklearn_linear", "train.sklearn_linear.C=0"])
    # [tune.liblinear] is LIBLINEAR's table: kept (one file may hold both methods' settings), searched only when
    # train.method = "liblinear"; sklearn_linear searches nothing of it, and its record says so.
    both = load_config(None, [SYNTHETIC, "train.method=sklearn_linear", "tune.liblinear.C=[1.0, 2.0]"])
    assert both.tune.liblinear.C == [1.0, 2.0] and not hasattr(both.tune.lists("sklearn_linear"), "C")
    assert candidates(both.train.decision_rule(), both.tune.lists("sklearn_linear"), terms=0) == candidates(
        config.train.decision_rule(), config.tune.lists("sklearn_linear"), terms=0)
    assert decision_record(dataclasses.asdict(both.train), dataclasses.asdict(both.tune))["search_space"] == {}
    with pytest.raises(ConfigError, match=r"^train.sklearn_C is now train.sklearn_linear.C: write "
                                          r"\[train.sklearn_linear\] C = 2 or --set train.sklearn_linear.C=2$"):
        load_config(None, [SYNTHETIC, "train.method=sklearn_linear", "train.sklearn_C=2"])
    with pytest.raises(ValueError, match="max_iter = 0 is out of range"):
        SklearnLinearParameters(max_iter=0)
    example = load_config(str(REPO / "conf" / "reuters21578-sklearn-linear.toml"))
    assert (example.train.method, example.train.thresholding) == ("sklearn_linear", "fixed")


# --- through Spark --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sklearn_run(spark, tmp_path_factory):
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    output = tmp_path_factory.mktemp("sklearn_linear") / "run"
    shutil.copytree(prepared, output)
    run_stages(spark, corpus_config(corpus, "train.method=sklearn_linear", "train.sklearn_linear.C=4.0",
                                    "train.thresholding=scut", "select.top_k=60"), str(output), "train", "evaluate")
    _, X_train, Y_train = vectors(str(prepared), "train")
    _, X_test, _ = vectors(str(prepared), "test")
    return output, read_run(str(output)), X_train, Y_train, X_test, chi2_order(prepared)


def test_the_models_are_logistic_regressions_on_the_selected_terms(sklearn_run):
    _, run, X_train, Y_train, _, order = sklearn_run
    columns = top_terms(order, 60)
    for j, category in enumerate(CATEGORIES):
        w, b = logistic_regression(X_train[:, columns], Y_train[:, j], C=4.0, max_iter=1000)
        weights = np.asarray(run.models[category].weights)
        np.testing.assert_allclose(weights[columns], w, rtol=1e-6, atol=1e-9)
        assert not np.delete(weights, columns).any()
        assert run.models[category].bias == pytest.approx(b, rel=1e-6, abs=1e-9)
        assert run.models[category].method == "sklearn_linear" and run.models[category].solver is None


def test_predictions_are_the_log_odds_above_the_scut_thresholds(sklearn_run):
    _, run, _, _, X_test, _ = sklearn_run
    W = np.column_stack([np.asarray(run.models[c].weights) for c in CATEGORIES])
    scores = np.asarray(X_test @ W) + np.array([run.models[c].bias for c in CATEGORIES])
    np.testing.assert_array_equal(run.P, scores > run.thresholds)
    assert run.P.any() and not run.P.all()


def test_metrics_and_report_state_the_method(sklearn_run):
    output = Path(sklearn_run[0])
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["method"] == {"name": "sklearn_linear", "C": 4.0, "max_iter": 1000}
    assert ("- Method: `sklearn_linear`, one-vs-rest logistic regression (scikit-learn, L-BFGS), C `4.0`, at most "
            "`1000` iterations") in (output / "report.md").read_text().splitlines()
