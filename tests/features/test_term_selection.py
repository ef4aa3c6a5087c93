"""Term-selection scores against scipy/scikit-learn and a hand-worked example (REFERENCE.md section 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2_contingency, entropy
from sklearn.metrics import mutual_info_score

from sparktc.features.term_selection import (
    chi2,
    contingency_2x2,
    gain_ratio,
    global_avg,
    global_max,
    global_mean,
    information_gain,
    top_k_from_reduction_factor,
)


def _random_tables(n: int, seed: int = 0) -> np.ndarray:
    """The n random 2x2 tables [[A, B], [C, D]] (rows: t, not t; columns: c, not c), some with a zero line."""
    rng = np.random.default_rng(seed)
    tables = rng.integers(0, 60, size=(n, 2, 2))
    tables[::7, 0, :] = 0  # term in no document
    tables[1::7, :, 1] = 0  # every document in c
    tables[2::11, 1, :] = 0  # term in every document
    tables[3::11, :, 0] = 0  # category empty
    tables[4::13] = 0  # no documents at all
    return tables


def _cells(tables: np.ndarray) -> tuple[np.ndarray, ...]:
    return tables[:, 0, 0], tables[:, 0, 1], tables[:, 1, 0], tables[:, 1, 1]


def test_chi2_matches_scipy_without_correction():
    tables = _random_tables(400)
    got = chi2(*_cells(tables))
    for table, value in zip(tables, got):
        if (table.sum(axis=0) == 0).any() or (table.sum(axis=1) == 0).any():
            assert value == 0.0  # scipy refuses tables with a zero marginal
        else:
            expected = chi2_contingency(table, correction=False)[0]
            assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert got.dtype == np.float64


def test_chi2_is_float64_for_large_counts():
    # N (AD - CB)^2 would overflow int64 here.
    n = 800_000
    value = chi2(n // 4, n // 4, n // 4 - 1, n // 4 + 1)
    expected = chi2_contingency(np.array([[n // 4, n // 4], [n // 4 - 1, n // 4 + 1]]), correction=False)[0]
    assert value == pytest.approx(expected, rel=1e-9)


def _ig_reference(table: np.ndarray) -> tuple[float, float]:
    """IG in bits two ways: sklearn's mutual information (nats) and H(C) - H(C|T) via scipy."""
    if table.sum() == 0:
        return 0.0, 0.0
    via_sklearn = mutual_info_score(None, None, contingency=table) / math.log(2)
    n = table.sum()
    h_c = entropy(table.sum(axis=0), base=2)
    h_c_given_t = sum(
        row.sum() / n * entropy(row, base=2) for row in table if row.sum() > 0
    )
    return via_sklearn, h_c - h_c_given_t


def test_information_gain_matches_mutual_information():
    tables = _random_tables(300, seed=1)
    got = information_gain(*_cells(tables))
    for table, value in zip(tables, got):
        via_sklearn, via_entropy = _ig_reference(table)
        assert value == pytest.approx(via_sklearn, abs=1e-12)
        assert value == pytest.approx(via_entropy, abs=1e-12)
        assert value >= -1e-15


def test_gain_ratio_divides_by_category_entropy():
    tables = _random_tables(300, seed=2)
    got = gain_ratio(*_cells(tables))
    for table, value in zip(tables, got):
        h_c = entropy(table.sum(axis=0), base=2) if table.sum() else 0.0
        expected = _ig_reference(table)[1] / h_c if h_c > 0 else 0.0
        assert value == pytest.approx(expected, abs=1e-12)


def test_perfect_predictor_has_ig_equal_to_category_entropy():
    # t occurs exactly in the documents of c: IG = H(c), GR = 1, chi2 = N.
    A, B, C, D = 10, 0, 0, 30
    h_c = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    assert information_gain(A, B, C, D) == pytest.approx(h_c)
    assert gain_ratio(A, B, C, D) == pytest.approx(1.0)
    assert chi2(A, B, C, D) == pytest.approx(40.0)


def test_contingency_2x2_broadcasts_terms_by_categories():
    # 10 docs; 2 terms x 3 categories.
    A = np.array([[2, 0, 1], [3, 1, 0]])
    df = np.array([[3], [5]])
    n_positive = np.array([4, 2, 1])
    a, b, c, d = contingency_2x2(A, df, n_positive, 10)
    np.testing.assert_array_equal(a, A)
    np.testing.assert_array_equal(b, [[1, 3, 2], [2, 4, 5]])
    np.testing.assert_array_equal(c, [[2, 2, 0], [1, 1, 1]])
    np.testing.assert_array_equal(d, [[5, 5, 7], [4, 4, 4]])
    assert a.dtype == b.dtype == c.dtype == d.dtype == np.int64
    np.testing.assert_array_equal(a + b + c + d, 10)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((4, 3, 5, 10), "cell B would be negative; need A <= df"),
        ((4, 5, 3, 10), "cell C would be negative; need A <= n_positive"),
        ((0, 6, 6, 10), "cell D would be negative"),
        ((-1, 3, 5, 10), "A must be non-negative counts"),
        ((1.5, 3, 5, 10), "A must be integral counts"),
    ],
)
def test_contingency_2x2_rejects_bad_counts(args, message):
    with pytest.raises(ValueError, match=message):
        contingency_2x2(*args)


def test_scores_reject_negative_or_nan_counts():
    with pytest.raises(ValueError, match="C must be non-negative counts; got minimum -2.0"):
        chi2(1, 2, -2, 3)
    with pytest.raises(ValueError, match="D must be finite counts"):
        information_gain(1, 2, 3, np.nan)


def test_global_scores_hand_worked():
    scores = np.array([[1.0, 4.0, 0.0], [2.0, 2.0, 2.0], [0.0, 0.0, 9.0]])
    p_c = np.array([0.5, 0.25, 0.1])
    np.testing.assert_allclose(global_max(scores), [4.0, 2.0, 9.0])
    # 0.5*1 + 0.25*4 + 0.1*0 = 1.5; 0.5*2 + 0.25*2 + 0.1*2 = 1.7; 0.1*9 = 0.9
    np.testing.assert_allclose(global_avg(scores, p_c), [1.5, 1.7, 0.9])
    np.testing.assert_allclose(global_mean(scores), [5 / 3, 2.0, 3.0])


def test_global_scores_validate():
    with pytest.raises(ValueError, match="scores must be a 2-D"):
        global_max(np.ones(3))
    with pytest.raises(ValueError, match="at least one category"):
        global_mean(np.ones((3, 0)))
    with pytest.raises(ValueError, match=r"p_c must have shape \(2,\)"):
        global_avg(np.ones((3, 2)), [0.5, 0.2, 0.1])
    with pytest.raises(ValueError, match=r"p_c must hold probabilities in \[0, 1\]; got 1.5"):
        global_avg(np.ones((3, 2)), [0.5, 1.5])


@pytest.mark.parametrize(
    ("n_terms", "xi", "expected"),
    [(1000, 0.9, 100), (1000, 0.5, 500), (1000, 0.0, 1000), (15, 0.9, 2), (5, 0.5, 3),
     (3, 0.99, 1), (0, 0.5, 0)],
)
def test_top_k_from_reduction_factor(n_terms, xi, expected):
    assert top_k_from_reduction_factor(n_terms, xi) == expected


@pytest.mark.parametrize(
    ("n_terms", "xi", "message"),
    [
        (100, 1.0, "xi must be a reduction factor with 0 <= xi < 1; got 1.0"),
        (100, -0.1, "xi must be a reduction factor with 0 <= xi < 1; got -0.1"),
        (-1, 0.5, "n_terms must be a non-negative integer; got -1"),
        (10.0, 0.5, "n_terms must be a non-negative integer; got 10.0"),
    ],
)
def test_top_k_from_reduction_factor_validates(n_terms, xi, message):
    with pytest.raises(ValueError, match=message):
        top_k_from_reduction_factor(n_terms, xi)


def test_top_terms_are_the_best_ranked_ids_ascending_or_none_for_every_term():
    from sparktc.features.term_selection import top_terms

    order = np.array([7, 2, 9, 0, 4])
    assert top_terms(order, 3).tolist() == [2, 7, 9]
    assert top_terms(order, 0) is None and top_terms(order, 5) is None and top_terms(order, 9) is None


def test_gain_ratio_hand_worked():
    # A = 2, B = 1, C = 1, D = 4 (N = 8): P(t) = P(c) = 3/8, each cell's P(t', c') log2(P(t', c') / (P(t') P(c'))).
    ig = (2 / 8 * math.log2((2 / 8) / (3 / 8 * 3 / 8)) + 1 / 8 * math.log2((1 / 8) / (3 / 8 * 5 / 8))
          + 1 / 8 * math.log2((1 / 8) / (5 / 8 * 3 / 8)) + 4 / 8 * math.log2((4 / 8) / (5 / 8 * 5 / 8)))
    h_c = -(3 / 8 * math.log2(3 / 8) + 5 / 8 * math.log2(5 / 8))
    assert information_gain(2, 1, 1, 4) == pytest.approx(ig, abs=1e-15)
    assert gain_ratio(2, 1, 1, 4) == pytest.approx(ig / h_c, abs=1e-15)
    assert gain_ratio(2, 1, 1, 4) == pytest.approx(0.1665, abs=5e-5)  # .2075 - .1134 - .1134 + .1781 = .1589 / .9544


def test_global_scores_are_every_function_under_every_globalization():
    from sparktc.features.term_selection import GLOBAL_SCORES, SCORES, global_scores, score_column

    A = np.array([[3, 0, 1], [0, 2, 2], [1, 1, 0]])  # terms x categories
    df, n_positive, N = np.array([4, 3, 2]), np.array([4, 3, 5]), 10
    cells = contingency_2x2(A, df[:, None], n_positive, N)
    p_c = n_positive / N
    found = global_scores(A, df[:, None], n_positive, N)
    assert list(found) == [score_column(s, g) for s in SCORES for g in GLOBAL_SCORES]
    for name, function in (("chi2", chi2), ("ig", information_gain), ("gr", gain_ratio)):
        per_category = function(*cells)
        assert found[f"{name}_max"] == pytest.approx(per_category.max(axis=1))
        assert found[f"{name}_avg"] == pytest.approx((per_category * p_c).sum(axis=1))
        assert found[f"{name}_mean"] == pytest.approx(per_category.mean(axis=1))
    only = global_scores(A, df[:, None], n_positive, N, ("ig_avg",))
    assert list(only) == ["ig_avg"] and only["ig_avg"] == pytest.approx(found["ig_avg"])
    with pytest.raises(ValueError, match="score must be one of"):
        score_column("mi", "max")


def test_rank_order_is_best_score_first_ties_by_term_id():
    from sparktc.features.term_selection import rank_order

    assert rank_order([5, 1, 3, 0], [0.2, 0.9, 0.2, 0.5]).tolist() == [1, 0, 3, 5]
