"""Per-category model choice and thresholds by cross-validation (sparktc.models.tuning; REFERENCE.md section 5).

Pure numpy/scipy, no Spark. Everything is recomputed here independently of sparktc:

* the search space of ``candidates`` as the product of the [tune] lists written out by hand;
* ``fit_category`` with SCut on a random sparse problem with a planted linear signal, against
  scikit-learn's LinearSVC (the same LIBLINEAR dual solver) trained per fold on the same balanced
  folds, with per-fold SCut thresholds found by an O(n^2) search over the midpoints; the chosen
  candidate, its threshold, its cross-validated F1 and its final weights;
* SCutFBR with Rocchio (exact, so the out-of-fold scores are known to the last bit): a fold whose
  best F1 is below fbr falls back to its top validation score;
* Rocchio through ``fit_category`` against beta * mean(positives) - gamma * mean(negatives);
* tune.terms: the weights live on the top-k terms of the given order only;
* ``knn_threshold`` with fixed thresholding;
* the decision rule's dispatch (stored thresholds, RCut, PCut) and the record reports state of it.

The method, thresholding and [train] values come as the run's decision rule (:mod:`sparktc.models.decision`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import brute_force_scut, f1_of
from scipy import sparse
from sklearn.svm import LinearSVC

from sparktc.evaluation.metrics import f1_score
from sparktc.experiment.config import TrainConfig, TuneConfig
from sparktc.models.decision import DecisionRule, decision_record
from sparktc.models.knn import KnnParameters
from sparktc.models.linear import LinearSearch
from sparktc.models.method import SearchLists
from sparktc.models.registry import METHODS
from sparktc.models.rocchio import RocchioParameters
from sparktc.models.thresholds import balanced_folds
from sparktc.models.tuning import Candidate, candidates, fit_category, knn_threshold, needs_cross_validation

SOLVER = "l2r_l2loss_svc_dual"
#: Each method's own [train.METHOD] settings, by name.
PARAMETERS = {name: {f.name for f in dataclasses.fields(method.parameters)} for name, method in METHODS.items()}
N_DOCS, N_FEATURES = 300, 200


# --- independent helpers ------------------------------------------------------------------------


def rule(method: str = "liblinear", **train) -> DecisionRule:
    """The decision rule of a [train] section with these settings: the shared ones by name, the method's own
    (``C``, ``k``) in its table, [train.METHOD].
    """
    own = {key: train.pop(key) for key in list(train) if key in PARAMETERS[method]}
    return TrainConfig(method=method, **train, **{method: METHODS[method].parameters(**own)}).decision_rule()


def search(method: str = "liblinear", **tune) -> SearchLists:
    """What a run of ``method`` searches with these [tune] lists: the shared ones by name, the method's own in its
    table, [tune.METHOD].
    """
    spec = METHODS[method].search
    own = {key: tune.pop(key) for key in list(tune) if spec and key in {f.name for f in dataclasses.fields(spec)}}
    return TuneConfig(**tune, **({method: spec(**own)} if spec else {})).lists(method)


def cv_threshold_and_f1(scores: np.ndarray, y: np.ndarray, folds: np.ndarray, k: int, fbr: float = 0.0):
    """Mean of the per-fold (SCut or fallback) thresholds; F1 with each fold at the mean of the others."""
    return cv_details(scores, y, folds, k, fbr)[:3]


def cv_details(scores: np.ndarray, y: np.ndarray, folds: np.ndarray, k: int, fbr: float = 0.0):
    """cv_threshold_and_f1 plus the cross-validated counts {tp, fp, fn}."""
    per_fold = []
    for f in range(k):
        held = folds == f
        t, best = brute_force_scut(scores[held], y[held])
        per_fold.append(t if best >= fbr else scores[held].max())
    per_fold = np.array(per_fold)
    others = np.array([np.mean(np.delete(per_fold, f)) for f in range(k)])
    assigned = scores > others[folds]
    tp = int(np.count_nonzero(assigned & y))
    counts = {"tp": tp, "fp": int(np.count_nonzero(assigned)) - tp, "fn": int(np.count_nonzero(y)) - tp}
    return per_fold.mean(), f1_of(scores, y, others[folds]), per_fold, counts


CANDIDATE_FIELDS = ("solver", "C", "positive_weight", "terms", "fbr")


def candidate_of(searched: dict) -> dict:
    """The candidate's fields of one ``searched`` entry (it may record more, e.g. its CV counts)."""
    return {key: searched[key] for key in CANDIDATE_FIELDS}


def check_recorded_counts(searched: dict, y: np.ndarray) -> None:
    """When a ``searched`` entry records cross-validated TP/FP/FN, they must give its cv_f1 and the positives."""
    if "tp" in searched:
        tp, fp, fn = searched["tp"], searched["fp"], searched["fn"]
        assert tp + fn == np.count_nonzero(y) and min(tp, fp, fn) >= 0
        assert searched["cv_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-12)


def sklearn_svm(X, y, C: float, positive_weight: float) -> LinearSVC:
    return LinearSVC(loss="squared_hinge", dual=True, C=C, tol=1e-4, intercept_scaling=1,
                     class_weight={1: positive_weight, 0: 1}, max_iter=100_000).fit(X, y.astype(int))


def rocchio_formula(X, y, beta: float, gamma: float) -> np.ndarray:
    dense = X.toarray()
    return beta * dense[y].mean(axis=0) - gamma * dense[~y].mean(axis=0)


def planted_problem(seed: int = 5, noise: float = 0.3, positives: float = 0.25):
    """300 x 200 sparse documents (5% density), labels from a hidden linear model plus noise."""
    rng = np.random.default_rng(seed)
    X = sparse.random(N_DOCS, N_FEATURES, density=0.05, random_state=rng, format="csr")
    X.data = rng.uniform(0.1, 1.0, size=X.nnz)
    w_true = rng.normal(size=N_FEATURES)
    s = X @ w_true + rng.normal(scale=noise, size=N_DOCS)
    y = s > np.quantile(s, 1 - positives)
    return X, y


@pytest.fixture(scope="module")
def problem():
    return planted_problem()


# --- candidates -----------------------------------------------------------------------------------


def test_candidates_are_the_product_of_the_tune_lists_in_order():
    train = rule(C=3.0, positive_weight=2.0, fbr=0.3)
    tune = search(C=[1, 0.5], solver=["l2r_lr", SOLVER], terms=[10, 0])
    expected = [Candidate(solver, C, 2.0, terms, 0.3)
                for solver in ("l2r_lr", SOLVER) for C in (1.0, 0.5) for terms in (10, 0)]
    got = candidates(train, tune, terms=99)
    assert got == expected
    assert all(isinstance(c.C, float) and isinstance(c.positive_weight, float) for c in got)
    assert needs_cross_validation(rule(thresholding="fixed"), got)


def test_candidates_default_to_the_train_values_when_the_lists_are_empty():
    train = rule(solver="l2r_lr", C=0.25, positive_weight=4.0, fbr=0.6)
    assert candidates(train, search(), terms=17) == [Candidate("l2r_lr", 0.25, 4.0, 17, 0.6)]
    assert candidates(train, search(positive_weight=[1, 8], fbr=[0.1, 0.2]), terms=0) == [
        Candidate("l2r_lr", 0.25, w, 0, f) for w in (1.0, 8.0) for f in (0.1, 0.2)]
    assert not needs_cross_validation(rule(thresholding="fixed"), candidates(train, search(), 0))
    assert needs_cross_validation(rule(thresholding="scut"), candidates(train, search(), 0))


# --- fit_category with SCut against scikit-learn ----------------------------------------------------


def sklearn_cross_validation(X, y, folds, C, positive_weight, k=5):
    out_of_fold = np.empty(len(y))
    for f in range(k):
        held = folds == f
        out_of_fold[held] = sklearn_svm(X[~held], y[~held], C, positive_weight).decision_function(X[held])
    return out_of_fold


def test_fit_category_scut_threshold_and_cv_f1_equal_sklearn_folds_and_brute_force_scut(problem):
    X, y = problem
    train = rule(thresholding="scut")
    model = fit_category(X, y, np.arange(N_FEATURES), candidates(train, search(), 0), train)
    folds = balanced_folds(y, train.folds, train.seed)
    scores = sklearn_cross_validation(X, y, folds, 1.0, 1.0)
    threshold, cv_f1, per_fold = cv_threshold_and_f1(scores, y, folds, train.folds)
    assert np.ptp(per_fold) > 0  # the folds disagree, so "mean of the others" is not the plain mean
    # Both solvers stop at tolerance 1e-4 on O(1) decision values: thresholds agree to ~1e-4.
    assert model.threshold == pytest.approx(threshold, abs=5e-3)
    assert model.cv_f1 == pytest.approx(cv_f1, abs=0.02)
    assert model.choice == Candidate(SOLVER, 1.0, 1.0, 0, 0.1)
    assert len(model.searched) == 1
    assert candidate_of(model.searched[0]) == {"solver": SOLVER, "C": 1.0, "positive_weight": 1.0, "terms": 0,
                                               "fbr": 0.1}
    assert model.searched[0]["cv_f1"] == model.cv_f1
    check_recorded_counts(model.searched[0], y)
    assert f1_of(scores, y, threshold) > 0.5  # the planted signal is learnt: the comparison means something
    final = sklearn_svm(X, y, 1.0, 1.0).decision_function(X)
    np.testing.assert_allclose(X @ model.weights + model.bias, final, rtol=0, atol=1e-3)


def test_fit_category_search_chooses_the_best_cv_f1_and_retrains_it_on_everything(problem):
    X, y = problem
    train = rule(thresholding="scut")
    tune = search(C=[0.1, 1, 10], positive_weight=[1, 3])
    space = candidates(train, tune, 0)
    model = fit_category(X, y, np.arange(N_FEATURES), space, train)
    assert [candidate_of(s) for s in model.searched] == [
        {"solver": c.solver, "C": c.C, "positive_weight": c.positive_weight, "terms": c.terms, "fbr": c.fbr}
        for c in space]
    for searched in model.searched:
        check_recorded_counts(searched, y)
    cv_f1s = [s["cv_f1"] for s in model.searched]
    best = int(np.argmax(cv_f1s))  # the first of equal maxima
    assert model.choice == space[best]
    assert model.cv_f1 == cv_f1s[best]
    assert model.choices()["cv_counts"] == {k: model.searched[best][k] for k in ("tp", "fp", "fn")}
    folds = balanced_folds(y, train.folds, train.seed)
    expected = {}
    for candidate, searched in zip(space, model.searched):
        scores = sklearn_cross_validation(X, y, folds, candidate.C, candidate.positive_weight)
        threshold, cv_f1, _ = cv_threshold_and_f1(scores, y, folds, train.folds)
        expected[candidate] = threshold
        assert searched["cv_f1"] == pytest.approx(cv_f1, abs=0.02), candidate
    assert model.threshold == pytest.approx(expected[model.choice], abs=5e-3)
    final = sklearn_svm(X, y, model.choice.C, model.choice.positive_weight).decision_function(X)
    np.testing.assert_allclose(X @ model.weights + model.bias, final, rtol=0, atol=1e-3)


# --- SCutFBR (Rocchio: exact out-of-fold scores) -------------------------------------------------------


def test_scutfbr_a_fold_below_fbr_falls_back_to_its_top_score():
    # Few positives and much noise: the folds' best F1 differ widely.
    X, y = planted_problem(seed=11, noise=3.0, positives=0.08)
    train = rule(method="rocchio", thresholding="scutfbr")
    folds = balanced_folds(y, train.folds, train.seed)
    scores = np.empty(N_DOCS)
    for f in range(train.folds):
        held = folds == f
        scores[held] = X[held] @ rocchio_formula(X[~held], y[~held], train.parameters.beta,
                                                   train.parameters.gamma)
    best_f1 = np.array([brute_force_scut(scores[folds == f], y[folds == f])[1] for f in range(train.folds)])
    fbr = float(np.median(best_f1))
    assert (best_f1 < fbr).any() and (best_f1 >= fbr).any(), best_f1  # the case is constructed: both happen
    tune = search(fbr=[0.0, fbr])
    model = fit_category(X, y, np.arange(N_FEATURES), candidates(train, tune, 0), train)
    for searched, value in zip(model.searched, (0.0, fbr)):
        threshold, cv_f1, per_fold, counts = cv_details(scores, y, folds, train.folds, fbr=value)
        assert searched["fbr"] == value
        assert searched["cv_f1"] == pytest.approx(cv_f1, abs=1e-12)
        if "tp" in searched:  # exact scores: the recorded counts are exactly these
            assert {key: searched[key] for key in counts} == counts
        if model.choice.fbr == value:
            assert model.threshold == pytest.approx(threshold, abs=1e-12)
    _, _, fallback = cv_threshold_and_f1(scores, y, folds, train.folds, fbr=fbr)
    for f in np.flatnonzero(best_f1 < fbr):
        assert fallback[f] == scores[folds == f].max()
    # The choice between fbr = 0 (plain SCut) and the fallback is by cross-validated F1, first on ties.
    f1s = [s["cv_f1"] for s in model.searched]
    assert model.choice.fbr == (0.0, fbr)[int(np.argmax(f1s))]


def test_scutfbr_constructed_fold_with_no_separable_positive_uses_its_top_score():
    """Hand-made scores through fit_category's thresholding (Rocchio on one-hot documents = exact scores)."""
    # Document i is the unit vector e_i, so Rocchio scores a held-out document by
    # beta*mean(pos)-gamma*mean(neg) restricted to its own feature: 0 for every held-out document
    # (no training document shares its feature). Add a shared feature whose value is the score we want.
    n = 20
    y = np.zeros(n, dtype=bool)
    y[[0, 1, 2, 3, 4]] = True
    rng = np.random.default_rng(3)
    value = rng.uniform(0.1, 1.0, size=n)
    X = sparse.csr_matrix(np.column_stack([np.eye(n), value]))
    train = rule(method="rocchio", thresholding="scutfbr", folds=5, fbr=1.0)
    folds = balanced_folds(y, 5, 0)
    scores = np.empty(n)
    for f in range(5):
        held = folds == f
        scores[held] = X[held] @ rocchio_formula(X[~held], y[~held], 16.0, 4.0)
    # fbr = 1: every fold whose best F1 is below 1 falls back to its top score.
    expected_per_fold = []
    for f in range(5):
        held = folds == f
        t, best = brute_force_scut(scores[held], y[held])
        expected_per_fold.append(t if best >= 1.0 else scores[held].max())
    assert any(brute_force_scut(scores[folds == f], y[folds == f])[1] < 1.0 for f in range(5))
    model = fit_category(X, y, np.arange(n + 1), candidates(train, search(), 0), train)
    assert model.threshold == pytest.approx(np.mean(expected_per_fold), abs=1e-12)


# --- Rocchio, terms, kNN ----------------------------------------------------------------------------


def test_rocchio_through_fit_category_is_the_centroid_formula(problem):
    X, y = problem
    train = rule(method="rocchio", beta=16.0, gamma=4.0, threshold=0.25)
    model = fit_category(X, y, np.arange(N_FEATURES), candidates(train, search(), 0), train)
    np.testing.assert_allclose(model.weights, rocchio_formula(X, y, 16.0, 4.0), rtol=1e-12, atol=1e-12)
    assert model.bias == 0.0
    assert model.threshold == 0.25 and model.cv_f1 is None and model.searched == []
    other = rule(method="rocchio", beta=2.0, gamma=0.5)
    model = fit_category(X, y, np.arange(N_FEATURES), candidates(other, search(), 0), other)
    np.testing.assert_allclose(model.weights, rocchio_formula(X, y, 2.0, 0.5), rtol=1e-12, atol=1e-12)


def test_terms_keep_the_weights_on_the_top_k_terms_of_the_order(problem):
    X, y = problem
    k = 30
    order = np.random.default_rng(2).permutation(N_FEATURES)
    top = np.sort(order[:k])
    outside = np.setdiff1d(np.arange(N_FEATURES), top)
    train = rule()
    model = fit_category(X, y, order, candidates(train, search(terms=[k]), 0), train)
    assert model.choice.terms == k
    assert len(model.weights) == N_FEATURES
    assert not np.any(model.weights[outside])
    assert np.count_nonzero(model.weights[top]) > k // 2
    final = sklearn_svm(X[:, top], y, 1.0, 1.0).decision_function(X[:, top])
    np.testing.assert_allclose(X @ model.weights + model.bias, final, rtol=0, atol=1e-3)
    rocchio_train = rule(method="rocchio")
    model = fit_category(X, y, order, candidates(rocchio_train, search("rocchio", terms=[k]), 0), rocchio_train)
    expected = np.zeros(N_FEATURES)
    expected[top] = rocchio_formula(X[:, top], y, 16.0, 4.0)
    np.testing.assert_allclose(model.weights, expected, rtol=1e-12, atol=1e-12)


def test_terms_searched_by_cross_validation_use_the_chosen_terms_only(problem):
    X, y = problem
    order = np.random.default_rng(4).permutation(N_FEATURES)
    train = rule(thresholding="scut")
    model = fit_category(X, y, order, candidates(train, search(terms=[20, 0]), 0), train)
    assert [s["terms"] for s in model.searched] == [20, 0]
    assert model.choice.terms == (20, 0)[int(np.argmax([s["cv_f1"] for s in model.searched]))]
    if model.choice.terms:
        assert not np.any(model.weights[np.setdiff1d(np.arange(N_FEATURES), order[:20])])


def test_knn_threshold_fixed_returns_the_train_threshold_and_its_counts():
    scores = np.array([0.0, 0.4, 1.2, 0.9, 0.1, 2.0])
    y = np.array([False, True, True, False, False, True])
    assert knn_threshold(scores, y, rule(method="knn", thresholding="fixed", threshold=0.7)) == (
        0.7, {"tp": 2, "fp": 1, "fn": 1})  # scores 1.2, 0.9, 2.0 above 0.7
    for thresholding in ("pcut", "rcut"):
        assert knn_threshold(scores, y, rule(method="knn", thresholding=thresholding)) == (
            0.0, {"tp": 3, "fp": 2, "fn": 0})


def test_knn_threshold_scut_is_the_mean_of_brute_force_fold_thresholds():
    rng = np.random.default_rng(9)
    scores = np.round(rng.uniform(0, 3, size=60), 2)
    y = scores + rng.normal(scale=0.8, size=60) > 2.0
    train = rule(method="knn", thresholding="scut", folds=4, seed=3)
    threshold, counts = knn_threshold(scores, y, train)
    expected, expected_f1, _ = cv_threshold_and_f1(scores, y, balanced_folds(y, 4, 3), 4)
    assert threshold == pytest.approx(expected, abs=1e-12)
    assert f1_score(**counts, zero_division=1.0) == pytest.approx(expected_f1, abs=1e-12)


# --- the decision rule's dispatch and record ----------------------------------------------------------


def test_the_decision_rule_is_the_train_section():
    train = TrainConfig(method="rocchio", thresholding="rcut", rcut_k=3, rocchio=RocchioParameters(gamma=1.5))
    rule = train.decision_rule()
    assert rule.parameters == RocchioParameters(beta=16.0, gamma=1.5)
    common = {key: value for key, value in dataclasses.asdict(rule).items() if key != "parameters"}
    assert common == {key: getattr(train, key) for key in common}


def test_cut_thresholds_or_rcut_and_pcut_only_when_asked():
    scores = np.array([[0.5, -1.0, 2.0], [0.1, 0.3, -0.2]])
    stored, pcut = np.array([0.2, 0.0, 1.0]), np.array([0.0, 0.2, -1.0])

    def never() -> np.ndarray:
        raise AssertionError("PCut's thresholds computed for another thresholding")

    for thresholding in ("fixed", "scut", "scutfbr"):
        cut = rule(thresholding=thresholding).cut(stored, never)
        np.testing.assert_array_equal(cut.assign(scores), scores > stored)
    cut = rule(thresholding="rcut", rcut_k=2).cut(stored, never)
    np.testing.assert_array_equal(cut.assign(scores), [[True, False, True], [True, True, False]])
    np.testing.assert_array_equal(rule(thresholding="pcut").cut(stored, lambda: pcut).assign(scores), scores > pcut)


def test_learned_threshold_fixed_keeps_the_threshold_and_counts_its_decisions():
    scores = np.array([0.0, 0.4, 1.2, 0.9, 0.1, 2.0])
    y = np.array([False, True, True, False, False, True])
    folds = balanced_folds(y, 2, 0)
    for thresholding in ("fixed", "pcut", "rcut"):
        assert rule(thresholding=thresholding, threshold=0.5).learned_threshold(scores, y, folds, 0.1) == (
            0.5, {"tp": 2, "fp": 1, "fn": 1})


def test_decision_record_states_method_thresholding_and_search_space():
    train, tune = TrainConfig(method="rocchio", thresholding="scut"), TuneConfig()
    assert decision_record(dataclasses.asdict(train), dataclasses.asdict(tune)) == {
        "method": {"name": "rocchio", "beta": 16.0, "gamma": 4.0},
        "thresholding": {"name": "scut", "folds": 5, "seed": 0},
        "search_space": {},
    }
    train = TrainConfig(thresholding="scutfbr", folds=3)
    tune = TuneConfig(terms=[10, 0], liblinear=LinearSearch(C=[0.5, 2.0]))
    assert decision_record(dataclasses.asdict(train), dataclasses.asdict(tune)) == {
        "method": {"name": "liblinear", "solver": SOLVER, "C": [0.5, 2.0], "positive_weight": 1.0, "epsilon": 0.0001,
                   "bias": 1.0, "one_class": "constant"},
        "thresholding": {"name": "scutfbr", "fbr": 0.1, "folds": 3, "seed": 0},
        "search_space": {"C": [0.5, 2.0], "terms": [10, 0], "folds": 3, "seed": 0},
    }
    train = TrainConfig(method="knn", knn=KnnParameters(k=7), thresholding="rcut", rcut_k=2)
    assert decision_record(dataclasses.asdict(train), {}) == {
        "method": {"name": "knn", "k": 7}, "thresholding": {"name": "rcut", "rcut_k": 2}, "search_space": {}}
