"""Yang & Liu 1999 section 4 significance tests against scipy and hand-worked values."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from sparktc.evaluation.significance import (
    T_DISTRIBUTION_MAX_N,
    S_test,
    T_prime_test,
    T_test,
    TestResult,
    p_test,
    s_test,
    significance_symbol,
)


@pytest.mark.parametrize("n", range(1, 13))
def test_s_test_exact_binomial_for_small_n(n):
    for k in range(n + 1):
        got = s_test(k, n)
        assert got.name == "s-test" and got.n == n
        assert got.p_value_a_better == stats.binomtest(k, n, 0.5, alternative="greater").pvalue
        assert got.p_value_b_better == stats.binomtest(k, n, 0.5, alternative="less").pvalue
        assert got.statistic == pytest.approx((k - 0.5 * n) / (0.5 * math.sqrt(n)))


@pytest.mark.parametrize("n", [13, 14, 40, 101, 1000, 25_000])
def test_s_test_normal_approximation_for_large_n(n):
    for k in sorted({0, n // 3, n // 2, n // 2 + int(math.sqrt(n)), n - 1, n}):
        got = s_test(k, n)
        z = (k - 0.5 * n) / (0.5 * math.sqrt(n))  # the paper's formula, no continuity correction
        assert got.statistic == pytest.approx(z, rel=1e-12)
        assert got.p_value_a_better == pytest.approx(stats.norm.sf(z), rel=1e-12, abs=1e-300)
        assert got.p_value_b_better == pytest.approx(stats.norm.cdf(z), rel=1e-12, abs=1e-300)
        # Berry-Esseen for Bin(n, 1/2): the normal tail is within 0.4748 / sqrt(n) of the exact.
        exact = stats.binomtest(k, n, 0.5, alternative="greater").pvalue
        assert abs(got.p_value_a_better - exact) <= 0.4748 / math.sqrt(n)


def test_s_test_hand_worked_normal():
    # n = 100 differing decisions, A right in 60: z = 10 / 5 = 2, one-sided P = 0.02275 -> ">".
    got = s_test(60, 100)
    assert got.statistic == 2.0
    assert got.p_value_a_better == pytest.approx(0.022750131948179, rel=1e-12)
    assert got.symbol == ">"
    assert s_test(40, 100).symbol == "<" and s_test(65, 100).symbol == "≫"


@pytest.mark.parametrize("k, n, symbol", [
    (7, 7, "≫"),  # P = 1/128 = 0.0078
    (6, 6, ">"),  # P = 1/64 = 0.0156
    (5, 5, ">"),  # P = 1/32 = 0.03125
    (4, 4, "~"),  # P = 1/16 = 0.0625
    (2, 4, "~"),
    (0, 4, "~"),
    (0, 5, "<"),
    (0, 7, "≪"),
])
def test_s_test_symbols(k, n, symbol):
    assert s_test(k, n).symbol == symbol


def test_symbols_at_the_thresholds():
    assert significance_symbol(0.01, 0.99) == "≫"
    assert significance_symbol(np.nextafter(0.01, 1), 0.99) == ">"
    assert significance_symbol(0.05, 0.95) == ">"
    assert significance_symbol(np.nextafter(0.05, 1), 0.95) == "~"
    assert significance_symbol(0.5, 0.5) == "~"
    assert significance_symbol(1.0, 1.0) == "~"
    assert significance_symbol(0.95, 0.05) == "<"
    assert significance_symbol(0.99, np.nextafter(0.01, 1)) == "<"
    assert significance_symbol(0.99, 0.01) == "≪"
    with pytest.raises(ValueError, match="p_value_a_better must be a probability in"):
        significance_symbol(1.5, 0.5)
    with pytest.raises(ValueError, match="cannot both be <= 0.05"):
        significance_symbol(0.01, 0.04)


def _differing_pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, np.clip(a - rng.normal(0.03, 0.1, n), 0, 1)


@pytest.mark.parametrize("n", [2, 5, 17, 39, 40])
def test_T_test_matches_ttest_rel_up_to_40(n):
    a, b = _differing_pairs(n, seed=n)
    assert np.all(a != b)
    got = T_test(a, b)
    greater = stats.ttest_rel(a, b, alternative="greater")
    assert got.name == "T-test" and got.n == n
    assert got.statistic == pytest.approx(greater.statistic, rel=1e-12)
    assert got.p_value_a_better == pytest.approx(greater.pvalue, rel=1e-10)
    assert got.p_value_b_better == pytest.approx(
        stats.ttest_rel(a, b, alternative="less").pvalue, rel=1e-10
    )


@pytest.mark.parametrize("n", [41, 90, 500])
def test_T_test_uses_the_normal_above_40(n):
    a, b = _differing_pairs(n, seed=n)
    got = T_test(a, b)
    d = a - b
    t = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    assert n > T_DISTRIBUTION_MAX_N
    assert got.statistic == pytest.approx(t, rel=1e-12)
    assert got.p_value_a_better == pytest.approx(stats.norm.sf(t), rel=1e-10)
    assert got.p_value_b_better == pytest.approx(stats.norm.cdf(t), rel=1e-10)
    assert got.statistic == pytest.approx(stats.ttest_rel(a, b).statistic, rel=1e-12)


def test_T_tests_leave_out_tied_categories():
    # The paper's n is the number of categories where the F1 values differ.
    a, b = _differing_pairs(30, seed=3)
    tied = np.array([0.0, 1.0, 0.5, 0.25])
    got = T_test(np.concatenate([a, tied]), np.concatenate([b, tied]))
    assert got.n == 30
    assert got.statistic == pytest.approx(stats.ttest_rel(a, b).statistic, rel=1e-12)
    assert got.p_value_a_better == pytest.approx(
        stats.ttest_rel(a, b, alternative="greater").pvalue, rel=1e-10
    )


@pytest.mark.parametrize("n", [6, 33, 120])
def test_T_prime_test_is_ttest_rel_on_pooled_ranks(n):
    a, b = _differing_pairs(n, seed=100 + n)
    a[:3] = b[:3] = [0.0, 1.0, 0.5]  # tied pairs, left out after ranking
    a[3], b[4] = 0.0, 1.0  # ties across systems get average ranks
    ranks = stats.rankdata(np.concatenate([a, b]))
    ra, rb = ranks[:n], ranks[n:]
    keep = ra != rb
    got = T_prime_test(a, b)
    assert got.name == "T'-test" and got.n == keep.sum() == n - 3
    expected = stats.ttest_rel(ra[keep], rb[keep], alternative="greater")
    assert got.statistic == pytest.approx(expected.statistic, rel=1e-12)
    if got.n <= T_DISTRIBUTION_MAX_N:
        assert got.p_value_a_better == pytest.approx(expected.pvalue, rel=1e-10)
    else:
        assert got.p_value_a_better == pytest.approx(stats.norm.sf(expected.statistic), rel=1e-10)


def test_hand_worked_yang_liu_style_macro_tests():
    # Five categories; A and B differ on c0 (+.1), c2 (+.2), c3 (-.1), c4 (+.1), tie on c1.
    f1_a = [0.9, 0.8, 0.5, 0.0, 1.0]
    f1_b = [0.8, 0.8, 0.3, 0.1, 0.9]

    sign = S_test(f1_a, f1_b)  # n = 4, k = 3: P(Bin(4, 1/2) >= 3) = 5/16
    assert (sign.name, sign.n, sign.statistic) == ("S-test", 4, 1.0)
    assert sign.p_value_a_better == 5 / 16 and sign.p_value_b_better == 15 / 16
    assert sign.symbol == "~"

    # d = (.1, .2, -.1, .1): mean .075, sd sqrt(.0475 / 3), t = .075 / (sd / 2) = 1.19208.
    t = T_test(f1_a, f1_b)
    assert t.n == 4
    assert t.statistic == pytest.approx(0.075 / (math.sqrt(0.0475 / 3) / 2), rel=1e-9)
    assert t.statistic == pytest.approx(1.19208, abs=1e-5)
    assert t.p_value_a_better == pytest.approx(stats.t.sf(t.statistic, 3), rel=1e-12)
    assert t.symbol == "~"

    # Pooled ranks: 0 -> 1, .1 -> 2, .3 -> 3, .5 -> 4, .8 x3 -> 6, .9 x2 -> 8.5, 1 -> 10.
    # a' = (8.5, 6, 4, 1, 10), b' = (6, 6, 3, 2, 8.5), d' = (2.5, 1, -1, 1.5) without the tie:
    # mean 1, sd sqrt(6.5 / 3), t = 1 / (sd / 2) = 1.35873.
    t_prime = T_prime_test(f1_a, f1_b)
    assert t_prime.n == 4
    assert t_prime.statistic == pytest.approx(2 / math.sqrt(6.5 / 3), rel=1e-12)
    assert t_prime.statistic == pytest.approx(1.35873, abs=1e-5)

    # Swapping the systems mirrors everything.
    swapped = T_test(f1_b, f1_a)
    assert swapped.statistic == -t.statistic
    assert swapped.p_value_a_better == pytest.approx(t.p_value_b_better, rel=1e-12)


def test_p_test_hand_worked():
    # p_a = .8, p_b = .7 on 100 trials each: pooled .75, Z = .1 / sqrt(.75 * .25 * .02) = 1.63299.
    got = p_test(0.8, 0.7, 100, 100, name="p-test (recall)")
    assert got.name == "p-test (recall)" and got.n == 200
    assert got.statistic == pytest.approx(0.1 / math.sqrt(0.75 * 0.25 * 0.02), rel=1e-12)
    assert got.statistic == pytest.approx(1.63299, abs=1e-5)
    assert got.p_value_a_better == pytest.approx(stats.norm.sf(1.632993161855452), rel=1e-10)
    assert got.p_value_a_better == pytest.approx(0.05124, abs=1e-5)
    assert got.symbol == "~"
    # Unequal samples: p_a = 30/40, p_b = 20/60, pooled 50/100 = .5.
    got = p_test(0.75, 20 / 60, 40, 60)
    z = (0.75 - 1 / 3) / math.sqrt(0.25 * (1 / 40 + 1 / 60))
    assert got.statistic == pytest.approx(z, rel=1e-12)
    assert got.p_value_a_better == pytest.approx(stats.norm.sf(z), rel=1e-10)
    assert got.symbol == "≫"


def test_p_test_on_yang_liu_table1_error():
    # Reuters-21578 R(90): 3019 test documents x 90 categories decisions per system.
    n = 3019 * 90
    # SVM error .00365 vs kNN .00385: Z = -1.2061, not significant (Yang & Liu group them).
    svm_knn = p_test(0.00365, 0.00385, n, n, name="p-test (error)", higher_is_better=False)
    pooled = 0.00375
    z = (0.00365 - 0.00385) / math.sqrt(pooled * (1 - pooled) * 2 / n)
    assert svm_knn.statistic == pytest.approx(z, rel=1e-12)
    assert svm_knn.statistic == pytest.approx(-1.2061, abs=1e-4)
    assert svm_knn.p_value_a_better == pytest.approx(stats.norm.cdf(z), rel=1e-10)
    assert svm_knn.symbol == "~"
    # SVM error .00365 vs NB .00544: SVM much better (lower error).
    assert p_test(0.00365, 0.00544, n, n, higher_is_better=False).symbol == "≫"
    assert p_test(0.00544, 0.00365, n, n, higher_is_better=False).symbol == "≪"
    # The same numbers read as "higher is better" flip the direction.
    assert p_test(0.00365, 0.00544, n, n).symbol == "≪"


def test_p_test_uses_t_up_to_40_trials():
    got = p_test(0.8, 0.4, 10, 10)  # 20 trials: t, 19 d.f.
    z = 0.4 / math.sqrt(0.6 * 0.4 * 0.2)
    assert got.p_value_a_better == pytest.approx(stats.t.sf(z, 19), rel=1e-10)
    got = p_test(0.8, 0.4, 21, 20)  # 41 trials: the normal
    pooled = (21 * 0.8 + 20 * 0.4) / 41
    z = 0.4 / math.sqrt(pooled * (1 - pooled) * (1 / 21 + 1 / 20))
    assert got.p_value_a_better == pytest.approx(stats.norm.sf(z), rel=1e-10)


def assert_undefined(got) -> None:
    """An undefined test: no statistic and no P-value (nan: a P-value of 1 would read as a computed one, "no
    evidence at all"), and Yang & Liu's "~".
    """
    assert math.isnan(got.statistic) and math.isnan(got.p_value_a_better) and math.isnan(got.p_value_b_better)
    assert got.symbol == "~"


def test_degenerate_cases():
    for got in [
        s_test(0, 0),
        S_test([0.5, 0.2], [0.5, 0.2]),
        T_test([0.5, 0.2], [0.5, 0.2]),
        T_test([0.5, 0.2], [0.4, 0.2]),  # one differing category
        T_test([0.5, 0.3, 0.9], [0.4, 0.2, 0.8]),  # constant differences, sd = 0
        T_prime_test([0.5], [0.5]),
        p_test(0.0, 0.0, 10, 20),
        p_test(1.0, 1.0, 10, 20),
    ]:
        assert_undefined(got)
        assert got.reason  # why, for the reports


AGREE = "no difference to test (the runs' decisions agree on every document and category)"


@pytest.mark.parametrize("test, reason", [
    (lambda: s_test(0, 0), AGREE),
    (lambda: S_test([0.5, 0.2], [0.5, 0.2]), "no difference to test (every category's F1 is equal)"),
    (lambda: T_test([0.5, 0.2], [0.5, 0.2]), "fewer than 2 categories whose F1 differ (every category's F1 is equal)"),
    (lambda: T_test([0.5, 0.2], [0.4, 0.2]), "fewer than 2 categories whose F1 differ (only 1 does)"),
    (lambda: T_prime_test([0.5, 0.2], [0.5, 0.2]),
     "fewer than 2 categories whose F1 differ (every category's F1 is equal)"),
    (lambda: T_prime_test([0.5, 0.2], [0.4, 0.2]), "fewer than 2 categories whose F1 differ (only 1 does)"),
    (lambda: T_test([0.5, 0.3, 0.9], [0.4, 0.2, 0.8]),
     "the F1 differences have zero variance (every differing category differs by the same amount)"),
    # pooled ranks 1..6 of (0.1, 0.3, 0.5 | 0.2, 0.4, 0.6): every rank difference is -1
    (lambda: T_prime_test([0.1, 0.3, 0.5], [0.2, 0.4, 0.6]),
     "the F1 ranks' differences have zero variance (every differing category differs by the same amount)"),
    (lambda: p_test(0.2, 0.0, 10, 0, "p-test (precision)", no_trials="a run that assigns nothing has no precision"),
     "no trials on one side (n_b = 0: a run that assigns nothing has no precision)"),
    (lambda: p_test(0.0, 0.2, 0, 10), "no trials on one side (n_a = 0)"),
    (lambda: p_test(0.0, 0.0, 0, 0, no_trials="no test decision"),
     "no trials on either side (n_a = n_b = 0: no test decision)"),
    (lambda: p_test(0.0, 0.0, 10, 20), "pooled proportion is 0 (both runs' proportions are 0: no variance)"),
    (lambda: p_test(1.0, 1.0, 10, 20, higher_is_better=False),
     "pooled proportion is 1 (both runs' proportions are 1: no variance)"),
], ids=["s_agree", "S_equal", "T_none", "T_one", "T_prime_none", "T_prime_one", "T_zero_variance",
        "T_prime_zero_variance", "p_no_trials_b", "p_no_trials_a", "p_no_trials", "p_pooled_0", "p_pooled_1"])
def test_each_degenerate_path_says_why(test, reason):
    got = test()
    assert got.reason == reason
    assert_undefined(got)


def test_a_defined_statistic_has_no_reason():
    for got in [s_test(3, 5), S_test([0.5, 0.2], [0.4, 0.3]), T_test([0.5, 0.2, 0.9], [0.4, 0.3, 0.1]),
                T_prime_test([0.5, 0.2, 0.9], [0.4, 0.3, 0.1]), p_test(0.5, 0.5, 10, 10), p_test(0.8, 0.4, 21, 20)]:
        assert math.isfinite(got.statistic) and got.reason == "", got


def test_result_is_frozen():
    got = s_test(3, 5)
    assert isinstance(got, TestResult)
    assert [f.name for f in dataclasses.fields(got)] == [
        "name", "n", "statistic", "p_value_a_better", "p_value_b_better", "symbol", "reason",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.symbol = ">"


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="k must be at most n = 3"):
        s_test(4, 3)
    with pytest.raises(ValueError, match=r"n must be an integer >= 0; got -1"):
        s_test(0, -1)
    with pytest.raises(ValueError, match=r"k must be an integer >= 0; got 1.5"):
        s_test(1.5, 3)
    with pytest.raises(ValueError, match="f1_a and f1_b must pair the same categories"):
        S_test([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="f1_b must be a non-empty 1-D array"):
        T_test([0.1], [])
    with pytest.raises(ValueError, match=r"f1_a must hold scores in \[0, 1\]; got 85.99 at index 1"):
        T_prime_test([0.5, 85.99], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"f1_b must hold scores in \[0, 1\]; got nan"):
        T_test([0.5], [np.nan])
    with pytest.raises(ValueError, match=r"p_a must be a proportion in \[0, 1\]; got 1.2"):
        p_test(1.2, 0.5, 10, 10)
    with pytest.raises(ValueError, match="n_b must be an integer >= 0; got -1"):
        p_test(0.2, 0.5, 10, -1)
    # A run that assigns nothing has no precision: the test is degenerate, not an error.
    nothing = p_test(0.2, 0.0, 10, 0, "p-test (precision)")
    assert nothing.n == 10
    assert_undefined(nothing)
    with pytest.raises(ValueError, match="higher_is_better must be True or False"):
        p_test(0.2, 0.5, 10, 10, "p-test", "no")
