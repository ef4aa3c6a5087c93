"""SCut, SCutFBR, balanced folds, PCut and RCut (REFERENCE.md section 5; LYRL2004, supervised threshold setting)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from conftest import brute_force_scut, f1_of
from numpy.typing import ArrayLike

from sparktc.models.thresholds import (
    balanced_folds,
    best_columns,
    fold_thresholds,
    pcut_thresholds,
    rcut,
    scut,
)


def scut_fbr(fold_scores: Sequence[ArrayLike], fold_y: Sequence[ArrayLike], fbr: float) -> float:
    """SCutFBR.1 (LYRL2004): the mean over the folds of :func:`fold_thresholds`.

    t = (1/k) sum_f t_f, with t_f the fold's SCut threshold, or max(s_f) when the fold's best
    F1 < ``fbr``. With ``fbr = 0`` this is the mean of the per-fold SCut thresholds.
    """
    return float(np.mean(fold_thresholds(fold_scores, fold_y, fbr)))


@pytest.mark.parametrize("seed", range(80))
def test_scut_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    if seed % 2:
        # Rounded scores: ties between documents.
        n = int(rng.integers(1, 60))
        scores = np.round(rng.normal(size=n) * 2, int(rng.integers(0, 3)))
    else:
        # Few documents on a few integer scores: ties in F1 between thresholds.
        n = int(rng.integers(2, 9))
        scores = rng.integers(-3, 4, size=n).astype(float)
    y = rng.random(n) < rng.uniform(0.05, 0.9)
    if not y.any():
        y[int(rng.integers(n))] = True
    threshold, f1 = scut(scores, y)
    expected_threshold, expected_f1 = brute_force_scut(scores, y)
    assert threshold == expected_threshold
    assert f1 == pytest.approx(expected_f1, abs=1e-12)
    assert f1 == pytest.approx(f1_of(scores, y, threshold), abs=1e-12)


def test_scut_matches_brute_force_on_ties_in_f1():
    rng = np.random.default_rng(7)
    ties = 0
    for _ in range(1500):
        n = int(rng.integers(2, 9))
        scores = rng.integers(-4, 5, size=n) / 2
        y = rng.random(n) < 0.4
        y[0] = True
        candidates = np.unique(scores)
        f1s = [f1_of(scores, y, t) for t in np.concatenate(([candidates[0] - 1], candidates))]
        ties += sum(f == max(f1s) for f in f1s) > 1
        assert scut(scores, y) == brute_force_scut(scores, y)
    assert ties > 30  # 49 of the 1500 cases have several best thresholds


def test_scut_hand_worked():
    scores = np.array([0.9, -0.2, 0.5, 0.1, -1.0])
    y = np.array([True, False, True, False, True])
    # Top 2 (0.9, 0.5): TP 2, FP 0, FN 1 -> 0.8; top 5: TP 3, FP 2 -> 0.75.
    assert scut(scores, y) == (pytest.approx(0.3), pytest.approx(0.8))
    # Everything assigned: the candidate just below the minimum.
    assert scut(np.array([2.0, 1.0]), np.array([True, True])) == (np.nextafter(1.0, -np.inf), 1.0)


def test_scut_tie_in_f1_goes_to_the_threshold_closest_to_zero():
    # P = 2; top 1: TP 1, FN 1 -> 2/3; top 2: 1/2; top 3: 2/5; all: TP 2, FP 2 -> 2/3.
    y = np.array([True, False, False, True])
    assert scut(np.array([1.5, 0.5, -0.5, -1.5]), y) == (1.0, pytest.approx(2 / 3))
    # The same tie, now "assign everything" (just below -0.1) is closer to 0 than 2.5.
    assert scut(np.array([3.0, 2.0, 1.0, -0.1]), y) == (np.nextafter(-0.1, -np.inf), pytest.approx(2 / 3))


def test_scut_equally_close_tie_goes_to_the_higher_threshold():
    # Top 1 (t = 1.0) and top 4 (t = -1.0, TP 2, FP 2) both give F1 2/3; top 2 1/2, top 3 2/5,
    # all 4/7.
    scores = np.array([1.5, 0.5, 0.0, -0.5, -1.5])
    y = np.array([True, False, False, True, False])
    assert scut(scores, y) == (1.0, pytest.approx(2 / 3))


def test_scut_without_positives_assigns_nothing():
    scores = np.array([0.3, -1.0, 2.5])
    assert scut(scores, np.zeros(3, dtype=bool)) == (2.5, 0.0)
    assert not (scores > 2.5).any()


def test_scut_midpoint_between_adjacent_floats_still_separates_them():
    low = np.nextafter(1.0, np.inf)  # odd last bit: the halfway point rounds (to even) up
    high = np.nextafter(low, np.inf)
    assert low / 2 + high / 2 == high
    scores = np.array([high, low])
    threshold, f1 = scut(scores, np.array([True, False]))
    assert f1 == 1.0 and high > threshold >= low


@pytest.mark.parametrize(
    ("scores", "y", "message"),
    [
        (np.array([]), np.array([], dtype=bool), r"scores must be a non-empty 1-D array .*got shape \(0,\)"),
        (np.ones((2, 2)), np.ones(2, dtype=bool), r"non-empty 1-D array.*shape \(2, 2\)"),
        (np.array([np.nan, 1.0]), np.ones(2, dtype=bool), "scores must hold finite values"),
        (np.ones(3), np.ones(3, dtype=int), r"y must be a bool array of shape \(3,\).*got dtype int64"),
        (np.ones(3), np.ones(2, dtype=bool), r"y must be a bool array of shape \(3,\).*shape \(2,\)"),
    ],
)
def test_scut_validates(scores, y, message):
    with pytest.raises(ValueError, match=message):
        scut(scores, y)


def test_scut_fbr_falls_back_to_the_top_score_below_fbr():
    # Fold 0: SCut assigns the top document, F1 1.0, t = 0.5.
    # Fold 1: the positive ranks last; best F1 is 2/5 (assign everything): below fbr = 0.5,
    # so the threshold is the top validation score 0.8.
    fold_scores = [np.array([1.0, 0.0, -1.0]), np.array([0.8, 0.2, -0.4, -0.6])]
    fold_y = [np.array([True, False, False]), np.array([False, False, False, True])]
    assert scut(fold_scores[1], fold_y[1])[1] == pytest.approx(0.4)
    np.testing.assert_array_equal(fold_thresholds(fold_scores, fold_y, 0.5), [0.5, 0.8])
    assert scut_fbr(fold_scores, fold_y, 0.5) == pytest.approx(0.65)
    # fbr 0.4 is not above F1 0.4: no fallback; fbr 0: plain SCut averaged.
    below_minimum = np.nextafter(-0.6, -np.inf)
    np.testing.assert_array_equal(fold_thresholds(fold_scores, fold_y, 0.4), [0.5, below_minimum])
    assert scut_fbr(fold_scores, fold_y, 0.0) == pytest.approx((0.5 + below_minimum) / 2)
    # fbr 1: every fold without a perfect threshold falls back.
    np.testing.assert_array_equal(fold_thresholds(fold_scores, fold_y, 1.0), [0.5, 0.8])


def test_scut_fbr_validates():
    scores, y = [np.ones(2)], [np.ones(2, dtype=bool)]
    with pytest.raises(ValueError, match=r"fbr must be a number in \[0, 1\]; got 1.5"):
        scut_fbr(scores, y, 1.5)
    with pytest.raises(ValueError, match="one array per fold, at least one fold; got 1 and 0"):
        scut_fbr(scores, [], 0.1)
    with pytest.raises(ValueError, match="one array per fold, at least one fold; got 0 and 0"):
        scut_fbr([], [], 0.1)
    with pytest.raises(ValueError, match=r"fold_y\[1\] must be a bool array of shape \(2,\)"):
        scut_fbr(scores * 2, [y[0], np.ones(3, dtype=bool)], 0.1)


def test_balanced_folds_spread_positives_and_negatives():
    rng = np.random.default_rng(3)
    for n, k in [(103, 5), (10, 3), (7, 7), (50, 2)]:
        y = rng.random(n) < 0.15
        folds = balanced_folds(y, k, seed=11)
        assert folds.dtype == np.int64 and set(folds) == set(range(k))
        for labels in (y, ~y, np.ones(n, dtype=bool)):
            counts = np.bincount(folds[labels], minlength=k)
            assert counts.max() - counts.min() <= 1
        np.testing.assert_array_equal(folds, balanced_folds(y, k, seed=11))
        if n > k:
            assert not np.array_equal(folds, balanced_folds(y, k, seed=12))


def test_balanced_folds_randomises_which_documents_share_a_fold():
    y = np.zeros(40, dtype=bool)
    y[:8] = True
    assert len({tuple(balanced_folds(y, 4, seed)) for seed in range(5)}) == 5


@pytest.mark.parametrize(
    ("y", "k", "seed", "message"),
    [
        (np.ones(5, dtype=bool), 1, 0, r"k must be an integer in \[2, 5\]; got 1"),
        (np.ones(5, dtype=bool), 6, 0, r"k must be an integer in \[2, 5\]; got 6"),
        (np.ones(5, dtype=bool), 2.0, 0, r"k must be an integer in \[2, 5\]; got 2.0"),
        (np.ones(5, dtype=bool), 2, -1, "seed must be a non-negative integer; got -1"),
        (np.ones(5), 2, 0, r"y must be a 1-D bool array; got dtype float64 and shape \(5,\)"),
    ],
)
def test_balanced_folds_validates(y, k, seed, message):
    with pytest.raises(ValueError, match=message):
        balanced_folds(y, k, seed)


def test_pcut_hand_worked():
    scores = np.array([
        [0.9, -1.0, 0.0],
        [0.1, -2.0, 0.0],
        [0.5, -3.0, 0.0],
        [-0.3, -4.0, 0.0],
    ])
    # Shares -> m: 0.5 * 4 = 2; 0 -> 0; 1 -> 4.
    thresholds = pcut_thresholds(scores, np.array([0.5, 0.0, 1.0]))
    np.testing.assert_array_equal(thresholds, [0.1, -1.0, np.nextafter(0.0, -np.inf)])
    assigned = scores > thresholds
    np.testing.assert_array_equal(assigned.sum(axis=0), [2, 0, 4])
    np.testing.assert_array_equal(assigned[:, 0], [True, False, True, False])
    # round half up: 0.375 * 4 = 1.5 -> 2; 0.3 * 4 = 1.2 -> 1; ties with the next one are left out.
    tied = np.array([[1.0], [1.0], [0.0], [-1.0]])
    np.testing.assert_array_equal(pcut_thresholds(scores[:, :1], np.array([0.375])), [0.1])
    np.testing.assert_array_equal(pcut_thresholds(scores[:, :1], np.array([0.3])), [0.5])
    np.testing.assert_array_equal(pcut_thresholds(tied, np.array([0.25])), [1.0])


def test_pcut_validates():
    with pytest.raises(ValueError, match=r"train_share must be an array of shape \(2,\).*got shape \(3,\)"):
        pcut_thresholds(np.zeros((4, 2)), np.zeros(3))
    with pytest.raises(ValueError, match=r"one share in \[0, 1\].*values in \[0.0, 1.5\]"):
        pcut_thresholds(np.zeros((4, 2)), np.array([0.0, 1.5]))
    with pytest.raises(ValueError, match=r"scores must be a non-empty 2-D array.*shape \(4,\)"):
        pcut_thresholds(np.zeros(4), np.zeros(4))


def test_rcut_hand_worked():
    scores = np.array([
        [0.1, 0.7, -0.2, 0.7],
        [-1.0, -2.0, -0.5, -3.0],
    ])
    np.testing.assert_array_equal(rcut(scores, 1), [[False, True, False, False], [False, False, True, False]])
    np.testing.assert_array_equal(rcut(scores, 2), [[False, True, False, True], [True, False, True, False]])
    assert rcut(scores, 4).all()
    # Ties: the lower column first.
    np.testing.assert_array_equal(rcut(np.zeros((1, 3)), 2), [[True, True, False]])


def test_rcut_validates():
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 4\]; got 0"):
        rcut(np.zeros((2, 4)), 0)
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 4\]; got 5"):
        rcut(np.zeros((2, 4)), 5)
    with pytest.raises(ValueError, match="scores must hold finite values"):
        rcut(np.array([[np.inf, 0.0]]), 1)


def test_best_columns_are_a_stable_full_sort_cut_at_k():
    rng = np.random.default_rng(11)
    for trial in range(300):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 25))
        # small integers: many ties, also at the k-th score; normals: none; and a row with a NaN or an infinity
        scores = rng.integers(-3, 3, size=(n, m)).astype(float) if trial % 2 else rng.normal(size=(n, m))
        if trial % 7 == 0:
            scores[0, 0] = (np.nan, np.inf, -np.inf)[trial % 3]
        for k in range(1, m + 3):
            expected = np.argsort(-scores, axis=1, kind="stable")[:, :min(k, m)]
            np.testing.assert_array_equal(best_columns(scores, k), expected, err_msg=f"trial {trial}, k {k}")
