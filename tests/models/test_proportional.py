"""Proportional thresholding on validation data (Debole & Sebastiani 2005; Yang 2001; REFERENCE.md section 5, "PCut").

Each fold's threshold makes the number of its validation documents scoring above it as close as possible
to p * n, p the category's share of the training documents; the stored threshold is the mean over the
folds, and each fold is decided at the mean of the other folds' thresholds. Recomputed here independently
of sparktc:

* :func:`proportional` against a brute force over every cut of the ranked scores, the distances to
  p * n in exact fractions (so ties are ties, whatever the rounding of p * n);
* ``DecisionRule.learned_threshold`` and ``fit_category`` (Rocchio, exact out-of-fold scores) against
  the per-fold brute force, the mean and the cross-validated counts;
* the rule's record, dispatch and report line; and one Rocchio run through the train and evaluate
  stages, its stored thresholds against the brute force on numpy's out-of-fold Rocchio scores.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import sparse

from sparktc.evaluation.metrics import f1_score
from sparktc.evaluation.report import decision_lines
from sparktc.experiment.config import ConfigError, TrainConfig, TuneConfig, load_config
from sparktc.models.decision import CROSS_VALIDATED, THRESHOLDINGS, decision_record
from sparktc.models.thresholds import balanced_folds, proportional, proportional_fold_thresholds
from sparktc.models.tuning import candidates, fit_category

# --- independent helpers ------------------------------------------------------------------------


def rule(**train):
    return TrainConfig(**train).decision_rule()


def reachable(scores: np.ndarray) -> list[int]:
    """Every number of documents some "score > t" assigns: c, when the c-th and (c+1)-th ranked scores differ."""
    ranked = np.sort(scores)[::-1]
    return [c for c in range(len(ranked) + 1) if c in (0, len(ranked)) or ranked[c - 1] > ranked[c]]


def brute_force_proportional(scores: np.ndarray, positives: int, documents: int) -> tuple[float, int]:
    """The threshold and count of the reachable count closest to p * n, p = positives / documents, in exact
    arithmetic; the smaller count on ties. The threshold: the top score (none), the midpoint of the lowest
    assigned and highest unassigned score (that lower score when the midpoint rounds up to the higher), or
    the float just below the minimum (all).
    """
    target = Fraction(positives, documents) * len(scores)
    count = min(reachable(scores), key=lambda c: (abs(c - target), c))
    ranked = np.sort(scores)[::-1]
    if count == 0:
        return float(ranked[0]), 0
    if count == len(ranked):
        return float(np.nextafter(ranked[-1], -np.inf)), count
    upper, lower = ranked[count - 1], ranked[count]
    middle = (upper + lower) / 2
    return float(middle if lower <= middle < upper else lower), count


def cv_proportional(scores: np.ndarray, y: np.ndarray, folds: np.ndarray, k: int) -> tuple[float, dict[str, int]]:
    """Mean of the per-fold brute-force thresholds (p over all of y); the counts with each fold decided at
    the mean of the other folds' thresholds.
    """
    per_fold = np.array([brute_force_proportional(scores[folds == f], int(y.sum()), len(y))[0] for f in range(k)])
    others = np.array([np.delete(per_fold, f).mean() for f in range(k)])
    assigned = scores > others[folds]
    tp = int(np.count_nonzero(assigned & y))
    return float(per_fold.mean()), {"tp": tp, "fp": int(np.count_nonzero(assigned)) - tp,
                                    "fn": int(np.count_nonzero(y)) - tp}


# --- the threshold --------------------------------------------------------------------------------


def test_proportional_matches_brute_force_over_every_cut():
    rng = np.random.default_rng(11)
    ties = 0
    for case in range(3000):
        n = int(rng.integers(1, 13))
        scores = np.round(rng.normal(size=n) * 2, int(rng.integers(0, 2)))  # rounded: ties between documents
        documents = int(rng.integers(1, 41))
        positives = (0, documents, int(rng.integers(0, documents + 1)))[case % 3]
        threshold = proportional(scores, positives / documents)
        expected, count = brute_force_proportional(scores, positives, documents)
        assert threshold == expected, (scores, positives, documents)
        assigned = int(np.count_nonzero(scores > threshold))
        assert assigned == count
        target = Fraction(positives, documents) * n
        for other in reachable(scores):
            assert abs(other - target) > abs(assigned - target) or (
                abs(other - target) == abs(assigned - target) and other >= assigned)
        ties += sum(abs(c - target) == abs(assigned - target) for c in reachable(scores)) > 1
    assert ties > 30  # 42 of the 3000 cases have two reachable counts equally close


def test_proportional_hand_worked():
    scores = np.array([3.0, 2.0, 2.0, 1.0, 0.0])  # reachable counts 0, 1, 3, 4, 5
    # p * n = 2.5: 3 is closest (midpoint of 2 and 1); 2 = p * n is unreachable: 1 and 3 tie, 1 wins.
    assert proportional(scores, 0.5) == 1.5
    assert proportional(scores, 0.4) == 2.5
    assert proportional(scores, 0.0) == 3.0 and not (scores > 3.0).any()
    assert proportional(scores, 1.0) == np.nextafter(0.0, -np.inf)
    # One document: share below 1/2 assigns nothing, 1/2 ties (nothing), above assigns it.
    assert [proportional(np.array([0.7]), p) for p in (0.49, 0.5, 0.51)] == [0.7, 0.7, np.nextafter(0.7, -np.inf)]


def test_proportional_exact_tie_survives_the_rounding_of_the_share():
    # 21 of 38 training documents, 19 validation documents: p * n = 10.5 exactly, computed 10.500000000000002.
    share = np.mean(np.arange(38) < 21)
    assert share * 19 > 10.5
    scores = np.arange(19.0)
    assert np.count_nonzero(scores > proportional(scores, share)) == 10
    # 15 of 22, 11 documents: 7.5, computed 7.499999999999999.
    assert np.count_nonzero(scores[:11] > proportional(scores[:11], 15 / 22)) == 7


def test_proportional_validates():
    with pytest.raises(ValueError, match=r"share must be a number in \[0, 1\]; got 1.5"):
        proportional(np.ones(3), 1.5)
    with pytest.raises(ValueError, match=r"share must be a number in \[0, 1\]; got nan"):
        proportional(np.ones(3), float("nan"))
    with pytest.raises(ValueError, match="scores must hold finite values"):
        proportional(np.array([np.inf, 0.0]), 0.5)
    with pytest.raises(ValueError, match=r"scores must be a non-empty 1-D array .*got shape \(0,\)"):
        proportional(np.array([]), 0.5)
    with pytest.raises(ValueError, match="one array per fold, at least one fold; got 0 arrays"):
        proportional_fold_thresholds([], 0.5)
    with pytest.raises(ValueError, match=r"fold_scores\[1\] must be a non-empty 1-D array"):
        proportional_fold_thresholds([np.ones(2), np.ones((2, 2))], 0.5)


def test_fold_thresholds_are_each_folds_own():
    folds = [np.array([0.9, 0.5, 0.1, -0.3]), np.array([2.0, 1.0, 1.0, 0.0]), np.array([4.0])]
    np.testing.assert_array_equal(proportional_fold_thresholds(folds, 0.25), [0.7, 1.5, 4.0])


# --- the decision rule ----------------------------------------------------------------------------


def test_learned_threshold_hand_worked():
    # p = 2/8. Fold 0: p * 4 = 1 -> top 1, t_0 = 0.7; fold 1: counts 0, 1, 3, 4 reachable -> 1, t_1 = 1.5.
    scores = np.array([0.9, 0.5, 0.1, -0.3, 2.0, 1.0, 1.0, 0.0])
    y = np.array([True, False, False, False, False, True, False, False])
    folds = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    for fbr in (0.0, 0.9):  # fbr moves SCutFBR only
        threshold, counts = rule(thresholding="proportional", folds=2).learned_threshold(scores, y, folds, fbr)
        # t = 1.1; fold 0 at t_1 = 1.5 assigns nothing (FN 1), fold 1 at t_0 = 0.7 assigns 2.0, 1.0, 1.0 (TP 1, FP 2).
        assert threshold == pytest.approx(1.1, abs=1e-15)
        assert counts == {"tp": 1, "fp": 2, "fn": 1}


@pytest.mark.parametrize("seed", range(20))
def test_learned_threshold_is_the_mean_of_brute_force_fold_thresholds(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(20, 120)), int(rng.integers(2, 6))
    # Drawn from a few values: ties, but no score on a lattice that a mean of midpoints could hit exactly.
    scores = rng.choice(rng.normal(size=int(rng.integers(5, 30))), size=n)
    y = scores + rng.normal(scale=1.0, size=n) > rng.uniform(0.5, 2.0)
    folds = balanced_folds(y, k, seed)
    threshold, counts = rule(thresholding="proportional", folds=k, seed=seed).learned_threshold(scores, y, folds, 0.1)
    expected, expected_counts = cv_proportional(scores, y, folds, k)
    assert threshold == pytest.approx(expected, abs=1e-12)
    assert counts == expected_counts


def test_fit_category_rocchio_proportional_over_exact_out_of_fold_scores():
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(90, 12)) * (rng.random((90, 12)) < 0.4)
    y = X[:, 0] + X[:, 1] > 0.7
    train = rule(method="rocchio", thresholding="proportional", folds=3, seed=2)
    model = fit_category(sparse.csr_matrix(X), y, np.arange(12), candidates(train, TuneConfig(), 0), train)
    folds = balanced_folds(y, 3, 2)
    scores = np.empty(len(y))
    for f in range(3):
        held = folds == f
        scores[held] = X[held] @ (16 * X[~held][y[~held]].mean(axis=0) - 4 * X[~held][~y[~held]].mean(axis=0))
    expected, counts = cv_proportional(scores, y, folds, 3)
    assert model.threshold == pytest.approx(expected, abs=1e-9)
    assert model.cv_f1 == pytest.approx(f1_score(**counts, zero_division=1.0), abs=1e-12)


def test_proportional_is_a_cross_validated_thresholding_with_stored_thresholds():
    assert THRESHOLDINGS[0] == "fixed" and THRESHOLDINGS.index("proportional") == THRESHOLDINGS.index("scutfbr") + 1
    assert "proportional" in CROSS_VALIDATED and rule(thresholding="proportional").cross_validated
    scores, stored = np.array([[0.5, -1.0], [0.1, 0.3]]), np.array([0.2, 0.0])

    def never() -> np.ndarray:
        raise AssertionError("PCut's thresholds computed for proportional thresholding")

    np.testing.assert_array_equal(rule(thresholding="proportional").cut(stored, never).assign(scores), scores > stored)
    record = decision_record({"method": "knn", "knn_k": 30, "thresholding": "proportional", "folds": 4, "seed": 1,
                              "fbr": 0.3}, {})
    assert record["thresholding"] == {"name": "proportional", "folds": 4, "seed": 1}
    assert ("- Thresholding: `proportional`, per-category thresholds assigning each category its training share of "
            "the validation documents over `4`-fold cross-validation on the training documents (seed `1`)"
            ) in decision_lines(record, [])
    for extra in ([], ["tune.shared_fbr=true"]):  # fbr moves SCutFBR's thresholds only: a search would do nothing
        with pytest.raises(ConfigError, match=r"tune.fbr = \[0.1, 0.5\] with train.thresholding = 'proportional'"):
            load_config(None, ["corpus.format=synthetic", "train.thresholding=proportional", "tune.fbr=[0.1, 0.5]",
                               *extra])
