"""Platt's sigmoid and the calibrated blend (sparktc.models.calibration), against computations done here.

The fitted (A, B) against scipy's BFGS on the cross-entropy written out in this file with Platt's smoothed targets;
the probabilities against 1 / (1 + exp(A s + B)); the degenerate cases (separable scores, one score for all);
the blend's searched rows against "alpha p1 + (1 - alpha) p2 > t" counted here.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from sparktc.models.calibration import LOG_ODDS, PROBABILITY, Sigmoid, blend, blend_candidates, platt_fit
from sparktc.models.decision import DecisionRule
from sparktc.models.linear import LinearParameters
from sparktc.models.thresholds import balanced_folds


def scipy_platt(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt's (A, B) by BFGS on -sum t log p + (1 - t) log(1 - p), p = 1 / (1 + exp(A s + B))."""
    positives, negatives = y.sum(), (~y).sum()
    t = np.where(y, (positives + 1) / (positives + 2), 1 / (negatives + 2))

    def loss(ab: np.ndarray) -> float:
        p = 1 / (1 + np.exp(ab[0] * scores + ab[1]))
        return float(-(t * np.log(p) + (1 - t) * np.log(1 - p)).sum())

    return tuple(minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-9}).x)


def noisy_category(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(seed)
    y = generator.random(n) < 0.2
    return np.where(y, 1.0, -1.0) * 0.8 + generator.normal(0, 1, n), y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_platt_fit_matches_scipy_minimum(seed: int) -> None:
    scores, y = noisy_category(400, seed)
    fitted = platt_fit(scores, y)
    A, B = scipy_platt(scores, y)
    assert fitted.A < 0
    assert fitted.A == pytest.approx(A, abs=1e-4)
    assert fitted.B == pytest.approx(B, abs=1e-4)


def test_probabilities_are_the_sigmoid_and_never_overflow() -> None:
    sigmoid = Sigmoid(-2.0, 0.5)
    scores = np.array([-3.0, -0.1, 0.0, 0.25, 4.0])
    assert np.allclose(sigmoid.probabilities(scores), 1 / (1 + np.exp(-2.0 * scores + 0.5)))
    extreme = sigmoid.probabilities(np.array([-1e6, 1e6]))
    assert extreme.tolist() == [0.0, 1.0]


def test_separable_scores_keep_a_finite_sigmoid() -> None:
    scores = np.array([-2.0, -1.5, -1.0, 1.0, 1.5, 2.0])
    y = scores > 0
    fitted = platt_fit(scores, y)
    A, B = scipy_platt(scores, y)
    assert np.isfinite([fitted.A, fitted.B]).all()
    assert fitted.A == pytest.approx(A, abs=1e-3)
    # The smoothed targets 4/5 and 1/5 bound the fitted probabilities away from 0 and 1.
    assert 0.05 < fitted.probabilities(np.array([-2.0]))[0] < 0.2
    assert 0.8 < fitted.probabilities(np.array([2.0]))[0] < 0.95


def test_one_score_for_all_documents_gives_the_mean_target() -> None:
    y = np.array([True, False, False, False, False, True, False, False])
    fitted = platt_fit(np.zeros(len(y)), y)
    # With no score to go by, the maximum-likelihood probability is the mean smoothed target.
    mean_target = (2 * 3 / 4 + 6 * 1 / 8) / 8
    assert fitted.probabilities(np.zeros(1))[0] == pytest.approx(mean_target, abs=1e-6)


def test_scores_ranking_the_positives_last_give_the_flat_sigmoid() -> None:
    # kNN's leave-one-out score of a lone positive none of its neighbours shares is 0, below some negatives'.
    scores = np.array([0.0, 0.0, 0.3, 0.5, 0.0, 0.8])
    y = np.array([True, False, False, False, False, False])
    assert scipy_platt(scores, y)[0] > 0  # the unconstrained maximum turns the ranking over
    fitted = platt_fit(scores, y)
    mean_target = (2 / 3 + 5 / 7) / 6
    assert fitted.A == 0.0
    assert fitted.probabilities(scores) == pytest.approx(np.full(6, mean_target))


def test_blend_is_the_convex_mixture() -> None:
    assert blend([0.2, 0.9], [0.6, 0.1], 0.25).tolist() == pytest.approx([0.5, 0.3])
    assert blend([0.2, 0.9], [0.6, 0.1], 1.0).tolist() == [0.2, 0.9]
    with pytest.raises(ValueError, match="alpha"):
        blend([0.2], [0.6], 1.5)


def test_blend_candidates_count_the_blended_decisions() -> None:
    first, y = noisy_category(300, 3)
    second = np.where(y, 2.0, 0.0) + np.random.default_rng(4).exponential(1.5, len(y))  # kNN-like: nonnegative
    folds = balanced_folds(y, 5, 0)
    fixed = DecisionRule("liblinear", LinearParameters(), thresholding="fixed", threshold=0.5)
    blended = blend_candidates(first, second, y, folds, [0.0, 0.4, 1.0], fixed, 0.1, PROBABILITY)
    A1, B1 = scipy_platt(first, y)
    A2, B2 = scipy_platt(second, y)
    p_first = 1 / (1 + np.exp(A1 * first + B1))
    p_second = 1 / (1 + np.exp(A2 * second + B2))
    for row in blended.searched:
        assigned = row["alpha"] * p_first + (1 - row["alpha"]) * p_second > 0.5
        assert row["threshold"] == 0.5
        assert (row["tp"], row["fp"], row["fn"]) == ((assigned & y).sum(), (assigned & ~y).sum(), (~assigned & y).sum())
    assert blended.row(0.4) is blended.searched[1]
    assert np.allclose(blended.scores(first, second, 0.4), 0.4 * p_first + 0.6 * p_second, atol=1e-6)


def test_log_odds_blend_counts_the_mixed_log_odds() -> None:
    first, y = noisy_category(300, 7)
    second = np.where(y, 2.0, 0.0) + np.random.default_rng(8).exponential(1.5, len(y))
    fixed = DecisionRule("liblinear", LinearParameters(), thresholding="fixed", threshold=0.0)
    blended = blend_candidates(first, second, y, balanced_folds(y, 5, 0), [0.3], fixed, 0.1, LOG_ODDS)
    (A1, B1), (A2, B2) = scipy_platt(first, y), scipy_platt(second, y)
    assigned = -0.3 * (A1 * first + B1) - 0.7 * (A2 * second + B2) > 0  # odds_1^0.3 odds_2^0.7 > 1
    row = blended.row(0.3)
    assert (row["tp"], row["fp"], row["fn"]) == ((assigned & y).sum(), (assigned & ~y).sum(), (~assigned & y).sum())


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_log_odds_of_one_member_keep_its_own_decisions(alpha: float) -> None:
    first, y = noisy_category(300, 9)
    second = np.where(y, 1.0, 0.0) + np.random.default_rng(10).exponential(1.0, len(y))
    folds = balanced_folds(y, 5, 0)
    scut = DecisionRule("liblinear", LinearParameters(), thresholding="scutfbr", fbr=0.1)
    row = blend_candidates(first, second, y, folds, [alpha], scut, 0.1, LOG_ODDS).row(alpha)
    _, own = scut.learned_threshold(first if alpha == 1.0 else second, y, folds, 0.1)
    assert {key: row[key] for key in ("tp", "fp", "fn")} == own


def test_an_unknown_scale_is_refused() -> None:
    first, y = noisy_category(50, 11)
    scut = DecisionRule("liblinear", LinearParameters(), thresholding="scut")
    with pytest.raises(ValueError, match="scale"):
        blend_candidates(first, first, y, balanced_folds(y, 5, 0), [0.5], scut, 0.1, "rank")


def test_probability_blend_scut_thresholds_lie_in_the_unit_interval() -> None:
    first, y = noisy_category(300, 5)
    second = np.where(y, 1.0, 0.0) + np.random.default_rng(6).exponential(1.0, len(y))
    scut = DecisionRule("liblinear", LinearParameters(), thresholding="scutfbr", fbr=0.1)
    blended = blend_candidates(first, second, y, balanced_folds(y, 5, 0), [0.0, 0.5, 1.0], scut, 0.1, PROBABILITY)
    assert all(0.0 <= row["threshold"] <= 1.0 for row in blended.searched)
    assert all(row["tp"] + row["fn"] == y.sum() for row in blended.searched)
