"""Micro/macro precision, recall, F1 against scikit-learn (REFERENCE.md section 6)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import precision_recall_fscore_support
from sklearn.preprocessing import MultiLabelBinarizer

from sparktc.evaluation.metrics import (
    CONVENTIONS,
    contingency_from_sets,
    macro_average,
    micro_average,
    per_category,
    summarize,
)

CATEGORIES = [f"c{j}" for j in range(8)]


def _random_label_sets(seed: int, n_docs: int = 60) -> tuple[list[set[str]], list[set[str]]]:
    """Random true/predicted label sets with the edge cases REFERENCE.md section 6 warns about.

    c6 has no test positives but is predicted; c7 has no test positives and is never predicted
    (TP = FP = FN = 0); c5 has positives but is never predicted; document 0 has no labels.
    """
    rng = np.random.default_rng(seed)
    truth = [{c for c in CATEGORIES[:6] if rng.random() < 0.3} for _ in range(n_docs)]
    guess = [{c for c in CATEGORIES[:5] + ["c6"] if rng.random() < 0.3} for _ in range(n_docs)]
    truth[0] = set()
    truth[1].add("c5")
    return truth, guess


def _indicators(truth, guess):
    binarizer = MultiLabelBinarizer(classes=CATEGORIES)
    return binarizer.fit_transform(truth), binarizer.transform(guess)


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(5))
def test_matches_sklearn(seed, zero_division):
    truth, guess = _random_label_sets(seed)
    y_true, y_pred = _indicators(truth, guess)
    table = contingency_from_sets(truth, guess, CATEGORIES)

    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=None, zero_division=zero_division)
    mine = per_category(*table, zero_division=zero_division)
    np.testing.assert_allclose(mine["precision"], p, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mine["recall"], r, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mine["f1"], f, rtol=0, atol=1e-15)
    # The edge cases are really there and follow the convention.
    assert mine["f1"][7] == zero_division and mine["recall"][6] == zero_division
    assert mine["precision"][5] == zero_division

    for average, function in (("micro", micro_average), ("macro", macro_average)):
        p, r, f, _ = precision_recall_fscore_support(
            y_true, y_pred, average=average, zero_division=zero_division
        )
        got = function(*table, zero_division=zero_division)
        got_prf = {key: got[key] for key in ("precision", "recall", "f1")}
        assert got_prf == pytest.approx({"precision": p, "recall": r, "f1": f}, abs=1e-15)


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
def test_nothing_true_nothing_predicted(zero_division):
    # Micro-averages of an all-empty table hit 0/0 too.
    tp = fp = fn = np.zeros(3, dtype=np.int64)
    tn = np.full(3, 10, dtype=np.int64)
    y = np.zeros((10, 3), dtype=int)
    expected = precision_recall_fscore_support(y, y, average="micro", zero_division=zero_division)[:3]
    got = micro_average(tp, fp, fn, tn, zero_division)
    assert (got["precision"], got["recall"], got["f1"]) == expected
    assert micro_average(tp, fp, fn, tn, zero_division)["f1"] == zero_division


def test_contingency_from_sets_counts():
    truth = [{"a", "b"}, {"b"}, set(), {"a", "x"}]
    guess = [{"a"}, {"b", "c"}, {"c"}, {"b"}]
    tp, fp, fn, tn = contingency_from_sets(truth, guess, ["a", "b", "c"])
    np.testing.assert_array_equal(tp, [1, 1, 0])
    np.testing.assert_array_equal(fp, [0, 1, 2])
    np.testing.assert_array_equal(fn, [1, 1, 0])
    np.testing.assert_array_equal(tn, [2, 1, 2])
    assert tp.dtype == np.int64 and tn.dtype == np.int64
    with pytest.raises(ValueError, match="one entry per document; got 4 and 3"):
        contingency_from_sets(truth, guess[:3], ["a"])
    with pytest.raises(ValueError, match="categories must be distinct"):
        contingency_from_sets(truth, guess, ["a", "a"])


def test_hand_worked_three_categories():
    # c1: TP 3, FP 1, FN 2 -> P 3/4, R 3/5, F1 6/9
    # c2: TP 0, FP 0, FN 4 -> P 0/0, R 0, F1 0/8 = 0
    # c3: TP 0, FP 0, FN 0 -> P, R, F1 all 0/0 (no test positives, never predicted)
    tp = np.array([3, 0, 0])
    fp = np.array([1, 0, 0])
    fn = np.array([2, 4, 0])
    tn = np.array([4, 6, 10])
    one = summarize(["c1", "c2", "c3"], tp, fp, fn, tn, zero_division=1.0)
    assert one["micro_precision"] == pytest.approx(3 / 4)
    assert one["micro_recall"] == pytest.approx(3 / 9)
    assert one["micro_f1"] == pytest.approx(6 / 13)
    assert one["macro_precision"] == pytest.approx((3 / 4 + 1 + 1) / 3)
    assert one["macro_recall"] == pytest.approx((3 / 5 + 0 + 1) / 3)
    assert one["macro_f1"] == pytest.approx((6 / 9 + 0 + 1) / 3)
    assert one["n_categories"] == 3
    assert one["zero_division"] == 1.0
    assert "F1 = 1 when TP = FP = FN = 0" in one["zero_division_convention"]
    assert one["per_category"][2] == {
        "category": "c3", "tp": 0, "fp": 0, "fn": 0, "tn": 10,
        "precision": 1.0, "recall": 1.0, "f1": 1.0,
        "fallout": 0.0, "overlap": 1.0, "error": 0.0, "accuracy": 1.0,
    }

    zero = summarize(["c1", "c2", "c3"], tp, fp, fn, tn, zero_division=0.0)
    assert zero["micro_f1"] == one["micro_f1"]  # micro never hits 0/0 here
    assert zero["macro_precision"] == pytest.approx(3 / 4 / 3)
    assert zero["macro_recall"] == pytest.approx(3 / 5 / 3)
    assert zero["macro_f1"] == pytest.approx(6 / 9 / 3)
    assert zero["zero_division_convention"] == CONVENTIONS[0.0]
    assert "scikit-learn" in zero["zero_division_convention"]


@pytest.mark.parametrize("bad", [0.5, "warn", np.nan, None, True, 2])
def test_zero_division_is_validated(bad):
    table = [np.array([1]), np.array([0]), np.array([0]), np.array([0])]
    with pytest.raises(ValueError, match=r"zero_division must be 0.0 .* or 1.0 .*; got"):
        per_category(*table, zero_division=bad)


def test_tables_are_validated():
    ok = np.array([1, 2])
    with pytest.raises(ValueError, match="tp, fp, fn and tn must have the same length"):
        per_category(ok, ok, ok, np.array([1]), zero_division=0.0)
    with pytest.raises(ValueError, match="fp must hold integer counts; got dtype float64"):
        micro_average(ok, ok.astype(float), ok, ok, zero_division=0.0)
    with pytest.raises(ValueError, match="fn must hold non-negative counts; got minimum -1"):
        macro_average(ok, ok, np.array([-1, 0]), ok, zero_division=0.0)
    with pytest.raises(ValueError, match="tn must be a 1-D array"):
        per_category(ok, ok, ok, np.ones((2, 2), dtype=int), zero_division=0.0)
    with pytest.raises(ValueError, match="at least one category"):
        macro_average(*[np.array([], dtype=np.int64)] * 4, zero_division=0.0)
    with pytest.raises(ValueError, match="got 3 categories for 2 table entries"):
        summarize(["a", "b", "c"], ok, ok, ok, ok, zero_division=0.0)
    with pytest.raises(ValueError, match=r"categories must be distinct; got duplicates \['a'\]"):
        summarize(["a", "a"], ok, ok, ok, ok, zero_division=0.0)
