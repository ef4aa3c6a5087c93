"""LLSF (Yang & Chute; Yang & Liu section 3.3): the truncated-SVD least-squares weights from Gram sums, and the
train stage's one-pass Spark accumulation.

Pure: :func:`sparktc.models.llsf.llsf_weights` of G = X'X and X'Y against numpy's ``lstsq`` / ``pinv``
when k >= rank(X) and against the truncated SVD of X itself for smaller k; each fold's model from
subtracted Grams against a fit on the fold's complement. Spark: the JSON Lines corpus of
``test_methods`` through ingest -> rank once, then LLSF with SCut (top 60 terms, k = 20, through the SVD
path), with a fixed threshold 0.5 (every term) and with terms and fbr chosen by cross-validation, through
train and evaluate; the stored weights against the truncated
SVD of the same training matrix, the SCut thresholds against brute-force SCut on out-of-fold scores.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import brute_force_scut, chi2_order
from test_methods import CATEGORIES, corpus_config, prepared_corpus, table_rows, vectors

from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import ConfigError, load_config
from sparktc.models import llsf
from sparktc.models.llsf import document_folds, fold_models, gram_sums, llsf_weights, llsf_weights_svd

FOLDS, SEED = 5, 0


def truncated_svd_solution(X: np.ndarray, Y: np.ndarray, k: int) -> np.ndarray:
    """W_k = V_k diag(1/sigma_k) U_k' Y from numpy's SVD of X (zero singular values dropped)."""
    U, sigma, Vt = np.linalg.svd(X, full_matrices=False)
    k = min(k, int(np.count_nonzero(sigma > sigma[0] * 1e-10)))
    return Vt[:k].T @ ((U[:, :k].T @ Y) / sigma[:k, None])


def problem(n_docs: int, n_terms: int, n_categories: int = 3, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = rng.random((n_docs, n_terms)) * (rng.random((n_docs, n_terms)) < 0.5)
    Y = (rng.random((n_docs, n_categories)) < 0.4).astype(np.float64)
    return X, Y


# --- pure ------------------------------------------------------------------------------------------


def test_full_rank_weights_are_the_least_squares_solution():
    X, Y = problem(40, 8)
    W = llsf_weights(X.T @ X, X.T @ Y, k=8)
    np.testing.assert_allclose(W, np.linalg.lstsq(X, Y, rcond=None)[0], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(llsf_weights(X.T @ X, X.T @ Y, k=500), W, rtol=1e-12, atol=1e-12)  # k > terms


def test_rank_deficient_weights_are_the_pseudo_inverse_solution():
    X, Y = problem(12, 20)  # more terms than documents: rank 12
    np.testing.assert_allclose(llsf_weights(X.T @ X, X.T @ Y, k=12), np.linalg.pinv(X) @ Y, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(llsf_weights(X.T @ X, X.T @ Y, k=20), np.linalg.pinv(X) @ Y, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("k", [1, 3, 6])
def test_smaller_k_is_the_truncated_svd_of_x(k):
    X, Y = problem(30, 10)
    np.testing.assert_allclose(llsf_weights(X.T @ X, X.T @ Y, k), truncated_svd_solution(X, Y, k),
                               rtol=1e-8, atol=1e-8)


def test_zero_gram_gives_zero_weights():
    assert not llsf_weights(np.zeros((4, 4)), np.zeros((4, 2)), 3).any()
    with pytest.raises(ValueError):
        llsf_weights(np.eye(3), np.zeros((2, 1)), 1)


@pytest.mark.parametrize("k", [4, 100])
def test_fold_models_from_subtracted_grams_equal_fits_on_the_complement(k):
    X, Y = problem(50, 9, seed=3)
    fold = document_folds([f"d{i}" for i in range(50)], 4, SEED)
    G, XY, sizes = gram_sums(X, Y, fold, 4)
    assert sizes.tolist() == np.bincount(fold, minlength=4).tolist() and sizes.all()
    np.testing.assert_allclose(G.sum(axis=0), X.T @ X, rtol=1e-12)
    np.testing.assert_allclose(XY.sum(axis=0), X.T @ Y, rtol=1e-12)
    for f, W in enumerate(fold_models(G, XY, k)):
        rest = fold != f
        np.testing.assert_allclose(W, truncated_svd_solution(X[rest], Y[rest], k), rtol=1e-8, atol=1e-8)


def test_document_folds_depend_on_the_id_and_seed_only():
    ids = [f"doc{i}" for i in range(200)]
    folds = document_folds(ids, 5, 7)
    assert folds.min() == 0 and folds.max() == 4
    assert document_folds(ids[::-1], 5, 7).tolist() == folds[::-1].tolist()
    assert document_folds(ids, 5, 8).tolist() != folds.tolist()


def test_config_takes_llsf_k_and_refuses_what_llsf_does_not_use():
    synthetic = "corpus.format=synthetic"
    config = load_config(None, [synthetic, "train.method=llsf", "train.llsf.k=20"])
    assert config.train.decision_rule().parameters.k == 20
    assert load_config(None, [synthetic, "train.method=llsf"]).train.llsf.k == 500
    for bad, message in ((["train.llsf.k=0"], "train.llsf.k = 0 is out of range"),
                         (["train.llsf.k=100001"], "train.llsf.k = 100001 is out of range"),
                         (["train.method=llsf", "tune.fbr=[0.1, 0.2]", "tune.shared_fbr=true",
                           "train.thresholding=scutfbr"], "tune.shared_fbr = True: not used by train.method = 'llsf'"),
                         (["train.llsf_k=20"], "train.llsf_k is now train.llsf.k")):
        with pytest.raises(ConfigError, match=message):
            load_config(None, [synthetic, *bad])
    # LIBLINEAR's search is LIBLINEAR's table: kept under LLSF (one file may hold both), and searching nothing.
    kept = load_config(None, [synthetic, "train.method=llsf", "tune.liblinear.C=[1.0, 2.0]"])
    assert kept.tune.liblinear.C == [1.0, 2.0] and not hasattr(kept.tune.lists("llsf"), "C")


# --- through Spark ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("llsf")
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    settings = {
        "scut": ["train.method=llsf", "train.thresholding=scut", "select.top_k=60", "train.llsf.k=20"],
        "fixed": ["train.method=llsf", "train.threshold=0.5"],
        "tuned": ["train.method=llsf", "train.thresholding=scutfbr", "tune.terms=[30, 60]", "tune.fbr=[0.0, 0.5]",
                  "train.llsf.k=20"],
    }
    outputs = {}
    for name, overrides in settings.items():
        outputs[name] = str(base / name)
        shutil.copytree(prepared, outputs[name])
        with pytest.MonkeyPatch.context() as patch:
            if name == "scut":  # the SVD path: the Gram path's limit below the 60 selected terms
                patch.setattr(llsf, "MAX_GRAM_TERMS", 50)
            run_stages(spark, corpus_config(corpus, *overrides), outputs[name], "train", "evaluate")
    ids, X, Y = vectors(str(prepared), "train")
    models = {name: {r.category: r for r in table_rows(f"{output}/models")}
              for name, output in outputs.items()}
    return SimpleNamespace(ids=ids, X=X, Y=Y.astype(np.float64), order=chi2_order(prepared),
                           models=models, outputs=outputs)


def stored(models) -> np.ndarray:
    return np.column_stack([np.asarray(models[c].weights, dtype=np.float64) for c in CATEGORIES])


def test_fixed_llsf_models_are_the_least_squares_fit_over_every_term(runs):
    models = runs.models["fixed"]
    assert sorted(models) == CATEGORIES
    expected = truncated_svd_solution(runs.X.toarray(), runs.Y, 500)
    np.testing.assert_allclose(stored(models), expected, rtol=1e-7, atol=1e-8)
    for c in CATEGORIES:
        assert models[c].method == "llsf" and models[c].bias == 0.0 and models[c].threshold == 0.5
        assert models[c].features == runs.X.shape[1]


def test_scut_llsf_models_are_the_truncated_fit_over_the_selected_terms_with_cv_thresholds(runs):
    """Through the SVD path (each model the truncated SVD of its training rows, one task each), which must
    give the truncated-SVD solution and SCut thresholds the Gram path gives.
    """
    models = runs.models["scut"]
    columns = np.sort(runs.order[:60])
    X = runs.X[:, columns].toarray()
    W = np.zeros((runs.X.shape[1], len(CATEGORIES)))
    W[columns] = truncated_svd_solution(X, runs.Y, 20)
    np.testing.assert_allclose(stored(models), W, rtol=1e-7, atol=1e-8)
    fold = document_folds(runs.ids, FOLDS, SEED)
    scores = np.zeros(runs.Y.shape)
    for f in range(FOLDS):
        held = fold == f
        scores[held] = X[held] @ truncated_svd_solution(X[~held], runs.Y[~held], 20)
    for j, c in enumerate(CATEGORIES):
        y = runs.Y[:, j] > 0
        per_fold = [brute_force_scut(scores[fold == f, j], y[fold == f])[0] for f in range(FOLDS)]
        assert models[c].threshold == pytest.approx(np.mean(per_fold), rel=1e-6, abs=1e-9), c
        assert models[c].features == 60 and models[c].cv_f1 is not None


def cross_validated_counts(scores: np.ndarray, y: np.ndarray, fold: np.ndarray, fbr: float) -> tuple[float, dict]:
    """SCutFBR by hand: per fold the brute-force SCut threshold, or the fold's top score when its best F1
    is below fbr; the threshold is their mean, and each fold's documents are decided at the mean of the
    other folds' thresholds.
    """
    per_fold = []
    for f in range(FOLDS):
        threshold, best = brute_force_scut(scores[fold == f], y[fold == f])
        per_fold.append(threshold if best >= fbr else scores[fold == f].max())
    per_fold = np.array(per_fold)
    others = (per_fold.sum() - per_fold) / (FOLDS - 1)
    decided = scores > others[fold]
    return per_fold.mean(), {"tp": int((decided & y).sum()), "fp": int((decided & ~y).sum()),
                             "fn": int((~decided & y).sum())}


def test_tuned_llsf_chooses_terms_and_fbr_for_the_whole_model_by_cross_validated_micro_f1(runs):
    fold = document_folds(runs.ids, FOLDS, SEED)
    results = {}
    for terms in (30, 60):
        columns = np.sort(runs.order[:terms])
        X = runs.X[:, columns].toarray()
        scores = np.zeros(runs.Y.shape)
        for f in range(FOLDS):
            held = fold == f
            scores[held] = X[held] @ truncated_svd_solution(X[~held], runs.Y[~held], 20)
        for fbr in (0.0, 0.5):
            per_category = [cross_validated_counts(scores[:, j], runs.Y[:, j] > 0, fold, fbr)
                            for j in range(len(CATEGORIES))]
            total = {key: sum(counts[key] for _, counts in per_category) for key in ("tp", "fp", "fn")}
            micro = 2 * total["tp"] / (2 * total["tp"] + total["fp"] + total["fn"])
            results[(terms, fbr)] = (micro, [threshold for threshold, _ in per_category], columns)
    best = max(results, key=lambda pair: results[pair][0])
    models = runs.models["tuned"]
    _, thresholds, columns = results[best]
    W = np.zeros((runs.X.shape[1], len(CATEGORIES)))
    W[columns] = truncated_svd_solution(runs.X[:, columns].toarray(), runs.Y, 20)
    np.testing.assert_allclose(stored(models), W, rtol=1e-7, atol=1e-8)
    for j, c in enumerate(CATEGORIES):
        choices = json.loads(models[c].choices)
        assert (choices["terms"], choices["fbr"]) == best and models[c].features == best[0]
        assert models[c].threshold == pytest.approx(thresholds[j], rel=1e-6, abs=1e-9), c
    details = json.loads(Path(runs.outputs["tuned"], "manifests", "train.json").read_text())["details"]
    assert {key: pytest.approx(value) for key, value in details["searched"].items()} == {
        f"{terms}/{fbr}": result[0] for (terms, fbr), result in results.items()}


def test_llsf_k_above_the_selected_terms_is_refused_before_spark_starts():
    synthetic = "corpus.format=synthetic"
    for overrides, key in ((["select.top_k=100"], "select.top_k = 100"),
                           (["tune.terms=[1000, 50]"], "tune.terms = 50")):
        with pytest.raises(ConfigError, match=f"train.llsf.k = 500 .*{key}"):
            load_config(None, [synthetic, "train.method=llsf", *overrides])


def test_evaluate_runs_through_and_records_llsf(runs):
    for name, output in runs.outputs.items():
        metrics = json.loads(Path(output, "metrics.json").read_text())
        assert metrics["method"] == {"name": "llsf", "k": 500 if name == "fixed" else 20}
        assert "`llsf`" in Path(output, "report.md").read_text()
        assert Path(output, "predictions").is_dir()


def test_the_scut_run_took_the_svd_path_one_task_per_model(runs):
    details = json.loads(Path(runs.outputs["scut"], "manifests", "train.json").read_text())["details"]
    assert details["llsf_fitting"] == "tasks" and sorted(details["llsf_model_seconds"]) == [
        "60/0", "60/1", "60/2", "60/3", "60/4", "60/all"]
    for name in ("fixed", "tuned"):
        assert json.loads(Path(runs.outputs[name], "manifests", "train.json").read_text())["details"][
            "llsf_fitting"] == "sums"


@pytest.mark.parametrize("k", [3, 8, 12])
def test_svd_weights_are_the_truncated_svd_solution(k):
    X, Y = problem(30, 10)
    np.testing.assert_allclose(llsf_weights_svd(X, Y, k), truncated_svd_solution(X, Y, k), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(llsf_weights_svd(X, Y, k), llsf_weights(X.T @ X, X.T @ Y, k), rtol=1e-7, atol=1e-9)
