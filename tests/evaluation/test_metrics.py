"""Effectiveness measures from contingency tables against scikit-learn and hand-worked tables: precision,
recall, F1, fallout, overlap, error, accuracy, micro/macro averages, Macro*-F1 and frequency bands
(REFERENCE.md section 6).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pytest
from numpy.typing import NDArray
from sklearn.metrics import (
    accuracy_score,
    hamming_loss,
    jaccard_score,
    multilabel_confusion_matrix,
    precision_recall_fscore_support,
    recall_score,
)
from sklearn.preprocessing import MultiLabelBinarizer

from sparktc.evaluation.metrics import (
    CONVENTIONS,
    DEFAULT_BAND_EDGES,
    MEASURES,
    band_order,
    f1_score,
    frequency_band,
    macro_average,
    micro_average,
    per_category,
    summarize,
)

CATEGORIES = [f"c{j}" for j in range(8)]

# Hand-worked tables, n = 10 documents per category:
# c1: TP 3, FP 1, FN 2, TN 4 -> fallout 1/5, overlap 3/6, error 3/10, accuracy 7/10
# c2: TP 0, FP 0, FN 4, TN 6 -> fallout 0/6, overlap 0/4, error 4/10, accuracy 6/10
# c3: TP 0, FP 0, FN 0, TN 10 -> fallout 0/10, overlap 0/0, error 0/10, accuracy 10/10
# c4: TP 7, FP 0, FN 3, TN 0 -> fallout 0/0, overlap 7/10, error 3/10, accuracy 7/10
TP = np.array([3, 0, 0, 7])
FP = np.array([1, 0, 0, 0])
FN = np.array([2, 4, 0, 3])
TN = np.array([4, 6, 10, 0])


def contingency_from_sets(
    true_labels: Sequence[Iterable[str]],
    predicted: Sequence[Iterable[str]],
    categories: Sequence[str],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Per-category TP, FP, FN, TN from the true and predicted label sets of each document.

    A plain-Python reference for tests and checks of the Spark path. Document i contributes to
    category c: TP if c is in both ``true_labels[i]`` and ``predicted[i]``, FP if only
    predicted, FN if only true, TN otherwise. Labels not in ``categories`` are ignored, so the
    tables can be restricted to a subset of categories (e.g. those with a training positive).

    Returns int64 arrays (tp, fp, fn, tn) in the order of ``categories``; tp + fp + fn + tn
    equals the number of documents for every category. Raises ValueError if the two lists
    differ in length or ``categories`` has duplicates.
    """
    if len(true_labels) != len(predicted):
        raise ValueError(
            f"true_labels and predicted must have one entry per document; got "
            f"{len(true_labels)} and {len(predicted)}"
        )
    index = {name: j for j, name in enumerate(categories)}
    if len(index) != len(categories):
        raise ValueError("categories must be distinct; got duplicates")
    n_categories = len(index)
    tp = np.zeros(n_categories, dtype=np.int64)
    fp = np.zeros(n_categories, dtype=np.int64)
    fn = np.zeros(n_categories, dtype=np.int64)
    for truth, guess in zip(true_labels, predicted):
        truth_ids = {index[c] for c in truth if c in index}
        guess_ids = {index[c] for c in guess if c in index}
        for j in truth_ids & guess_ids:
            tp[j] += 1
        for j in guess_ids - truth_ids:
            fp[j] += 1
        for j in truth_ids - guess_ids:
            fn[j] += 1
    tn = len(true_labels) - tp - fp - fn
    return tp, fp, fn, tn


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


def test_f1_score_is_per_category_f1_and_plain_division_of_counts():
    for zero_division in (0.0, 1.0):
        np.testing.assert_array_equal(f1_score(TP, FP, FN, zero_division),
                                      per_category(TP, FP, FN, TN, zero_division)["f1"])
    # Scalar counts: one Python float, bit for bit the quotient 2 TP / (2 TP + FP + FN) of Python ints.
    rng = np.random.default_rng(0)
    for tp, fp, fn in rng.integers(0, 10**9, size=(1000, 3)).tolist():
        got = f1_score(tp, fp, fn, 1.0)
        assert type(got) is float and got == 2 * tp / (2 * tp + fp + fn)
    assert f1_score(0, 0, 0, 1.0) == 1.0 and f1_score(0, 0, 0, 0.0) == 0.0
    with pytest.raises(ValueError, match="zero_division must be 0.0"):
        f1_score(1, 0, 0, 0.5)


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



@pytest.mark.parametrize("zero_division", [0.0, 1.0])
def test_hand_worked_new_measures(zero_division):
    z = zero_division
    got = per_category(TP, FP, FN, TN, zero_division)
    assert list(got) == list(MEASURES)
    np.testing.assert_allclose(got["fallout"], [1 / 5, 0, 0, z])
    np.testing.assert_allclose(got["overlap"], [3 / 6, 0, z, 7 / 10])
    np.testing.assert_allclose(got["error"], [3 / 10, 4 / 10, 0, 3 / 10])
    np.testing.assert_allclose(got["accuracy"], [7 / 10, 6 / 10, 1, 7 / 10])

    micro = micro_average(TP, FP, FN, TN, zero_division)
    assert list(micro) == list(MEASURES)
    assert micro["fallout"] == pytest.approx(1 / 21)  # sum FP 1 / sum (FP + TN) 21
    assert micro["overlap"] == pytest.approx(10 / 20)  # sum TP 10 / (10 + 1 + 9)
    assert micro["error"] == pytest.approx(10 / 40)
    assert micro["accuracy"] == pytest.approx(30 / 40)

    macro = macro_average(TP, FP, FN, TN, zero_division)
    assert list(macro) == list(MEASURES)
    assert macro["fallout"] == pytest.approx((1 / 5 + z) / 4)
    assert macro["overlap"] == pytest.approx((3 / 6 + z + 7 / 10) / 4)
    assert macro["error"] == pytest.approx(10 / 40)
    assert macro["accuracy"] == pytest.approx(30 / 40)


def test_no_documents_gives_zero_division_for_error_and_accuracy():
    empty = np.zeros(2, dtype=np.int64)
    for z in (0.0, 1.0):
        got = per_category(empty, empty, empty, empty, z)
        assert all(np.all(got[m] == z) for m in MEASURES)


def _random_indicators(seed: int, n_docs: int = 50):
    """Random label sets with c6 predicted but never true, c7 never true nor predicted, and
    c4 true for every document (FP + TN = 0, fallout 0/0).
    """
    rng = np.random.default_rng(seed)
    truth = [{c for c in CATEGORIES[:6] if rng.random() < 0.3} | {"c4"} for _ in range(n_docs)]
    guess = [{c for c in CATEGORIES[:5] + ["c6"] if rng.random() < 0.3} for _ in range(n_docs)]
    binarizer = MultiLabelBinarizer(classes=CATEGORIES)
    y_true, y_pred = binarizer.fit_transform(truth), binarizer.transform(guess)
    return contingency_from_sets(truth, guess, CATEGORIES), y_true, y_pred


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(4))
def test_new_measures_match_sklearn(seed, zero_division):
    table, y_true, y_pred = _random_indicators(seed)
    z = zero_division
    got = per_category(*table, zero_division=z)

    # The tables agree with scikit-learn's per-label confusion matrices [[TN, FP], [FN, TP]].
    mcm = multilabel_confusion_matrix(y_true, y_pred)
    np.testing.assert_array_equal(np.stack(table, axis=1), mcm[:, [1, 0, 1, 0], [1, 1, 0, 0]])

    accuracy = [accuracy_score(y_true[:, j], y_pred[:, j]) for j in range(len(CATEGORIES))]
    np.testing.assert_allclose(got["accuracy"], accuracy, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["error"], 1 - np.array(accuracy), rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        got["overlap"], jaccard_score(y_true, y_pred, average=None, zero_division=z), atol=1e-15
    )
    # fallout = FP / (FP + TN) is the recall of "predicted" among the true negatives.
    fallout = recall_score(1 - y_true, y_pred, average=None, zero_division=z)
    np.testing.assert_allclose(got["fallout"], fallout, rtol=0, atol=1e-15)
    assert got["fallout"][4] == z and got["overlap"][7] == z

    micro = micro_average(*table, zero_division=z)
    assert micro["error"] == pytest.approx(hamming_loss(y_true, y_pred), abs=1e-15)
    assert micro["accuracy"] == pytest.approx(1 - hamming_loss(y_true, y_pred), abs=1e-15)
    assert micro["overlap"] == pytest.approx(jaccard_score(y_true, y_pred, average="micro"))
    assert micro["fallout"] == pytest.approx(recall_score(1 - y_true, y_pred, average="micro"))

    macro = macro_average(*table, zero_division=z)
    assert macro["overlap"] == pytest.approx(
        jaccard_score(y_true, y_pred, average="macro", zero_division=z), abs=1e-15
    )
    assert macro["fallout"] == pytest.approx(fallout.mean(), abs=1e-15)
    assert macro["accuracy"] == pytest.approx(np.mean(accuracy), abs=1e-15)


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
def test_summarize_has_all_measures_and_macro_star_f1(zero_division):
    report = summarize(["c1", "c2", "c3", "c4"], TP, FP, FN, TN, zero_division)
    micro = micro_average(TP, FP, FN, TN, zero_division)
    macro = macro_average(TP, FP, FN, TN, zero_division)
    for m in MEASURES:
        assert report[f"micro_{m}"] == micro[m]
        assert report[f"macro_{m}"] == macro[m]
    # Per-category P: 3/4, 0/0, 0/0, 7/7; R: 3/5, 0/4, 0/0, 7/10.
    z = zero_division
    macro_p = (3 / 4 + z + z + 1) / 4
    macro_r = (3 / 5 + 0 + z + 7 / 10) / 4
    assert report["macro_precision"] == pytest.approx(macro_p)
    assert report["macro_recall"] == pytest.approx(macro_r)
    assert report["macro_star_f1"] == pytest.approx(2 * macro_p * macro_r / (macro_p + macro_r))
    assert report["macro_star_f1"] != pytest.approx(report["macro_f1"])
    row = report["per_category"][3]
    assert row == {
        "category": "c4", "tp": 7, "fp": 0, "fn": 3, "tn": 0,
        "precision": 1.0, "recall": 0.7, "f1": pytest.approx(14 / 17),
        "fallout": z, "overlap": 0.7, "error": pytest.approx(0.3), "accuracy": 0.7,
    }
    assert report["zero_division_convention"] == CONVENTIONS[zero_division]


def test_macro_star_f1_hand_worked_and_zero():
    # Two categories: P 1/2 and 1, R 1/4 and 1/2 -> macro P 3/4, macro R 3/8, Macro*-F1 1/2.
    report = summarize(["a", "b"], [1, 1], [1, 0], [3, 1], [5, 8], zero_division=0.0)
    assert report["macro_star_f1"] == pytest.approx(2 * (3 / 4) * (3 / 8) / (3 / 4 + 3 / 8))
    assert report["macro_star_f1"] == pytest.approx(1 / 2)
    # Macro P = macro R = 0: every category wrong (any convention), or all 0/0 under 0.
    assert summarize(["a"], [0], [2], [3], [5], zero_division=1.0)["macro_star_f1"] == 0.0
    assert summarize(["a"], [0], [0], [0], [5], zero_division=0.0)["macro_star_f1"] == 0.0
    assert summarize(["a"], [0], [0], [0], [5], zero_division=1.0)["macro_star_f1"] == 1.0


def test_frequency_band_edges():
    counts = np.array([0, 1, 10, 11, 100, 101, 1000, 1001, 250_000])
    np.testing.assert_array_equal(
        frequency_band(counts),
        ["0", "1-10", "1-10", "11-100", "11-100", "101-1000", "101-1000", ">1000", ">1000"],
    )
    assert band_order() == ("0", "1-10", "11-100", "101-1000", ">1000")
    assert DEFAULT_BAND_EDGES == (10, 100, 1000)
    assert set(frequency_band(counts)) <= set(band_order())
    assert band_order((1, 10)) == ("0", "1", "2-10", ">10")
    np.testing.assert_array_equal(frequency_band([0, 1, 2, 10, 11], edges=(1, 10)),
                                  ["0", "1", "2-10", "2-10", ">10"])
    assert frequency_band(np.array([], dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize("edges", [(), (0, 10), (10, 10), (100, 10), (1.5, 10), (True, 10), (-1,)])
def test_band_edges_are_validated(edges):
    with pytest.raises(ValueError, match="edges must be a non-empty sequence of strictly increasing"):
        band_order(edges)
    with pytest.raises(ValueError, match="edges must be"):
        frequency_band([1, 2], edges=edges)


def test_train_positives_are_validated():
    with pytest.raises(ValueError, match="train_positives must be a 1-D array"):
        frequency_band(np.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match="train_positives must hold integer counts; got dtype float64"):
        frequency_band([1.0, 2.0])
    with pytest.raises(ValueError, match="train_positives must hold non-negative counts; got minimum -3"):
        frequency_band([1, -3])
