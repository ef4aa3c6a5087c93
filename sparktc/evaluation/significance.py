"""Significance tests comparing two systems A and B (Yang & Liu 1999, section 4; REFERENCE.md section 6).

* s-test (micro sign test, section 4.1) on the document/category decisions where A and B differ;
* S-test (macro sign test, section 4.2) on paired per-category F1 values;
* T-test (macro t-test, section 4.3) on the per-category F1 differences;
* T'-test (section 4.4): the T-test after replacing the pooled F1 values by their ranks;
* p-test (section 4.5): difference of two proportions (recall, precision, error, accuracy).

Every test is one-sided in both directions: ``p_value_a_better`` is the P-value against the null
hypothesis for the alternative "A is better than B", ``p_value_b_better`` for "B is better than
A". The ``symbol`` is that of Yang & Liu's Tables 2-3: "≫" when A is better with P <= 0.01, ">"
when 0.01 < P <= 0.05, "<" and "≪" likewise when B is better, and "~" (their ".") otherwise.

Reference distributions follow the paper: the sign tests use the exact binomial tail for
n <= 12 and the normal approximation z = (k - 0.5 n) / (0.5 sqrt(n)), without continuity
correction, for n > 12; the T-, T'- and p-tests use Student's t with n - 1 degrees of freedom
for n <= 40 and the standard normal for n > 40 (the paper's "If n <= 40").

Degenerate comparisons, where the statistic is undefined (no differing pair, a single differing
pair or differences of zero variance in the T-tests, a side with no trials or a pooled proportion
of 0 or 1 in the p-test), give ``statistic = nan`` and both P-values nan (no test was made: a P-value
of 1 would read as one computed), symbol "~" (the data cannot show either system better) and a
``reason`` that says why in words, for the reports: two runs that
agree on everything (a run and its rerun) make every sign and t-test degenerate, which is a finding
to show, not a failure. A defined test has ``reason = ""``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from sparktc.validation import check_array, check_flag, check_integer, check_number, check_unit_interval

__all__ = [
    "TestResult",
    "s_test",
    "S_test",
    "T_test",
    "T_prime_test",
    "p_test",
    "significance_symbol",
    "EXACT_SIGN_TEST_MAX_N",
    "T_DISTRIBUTION_MAX_N",
    "STRONG_LEVEL",
    "LEVEL",
]

#: Sign tests with at most this many differing pairs use the exact binomial tail (section 4.1).
EXACT_SIGN_TEST_MAX_N = 12
#: T-, T'- and p-tests with at most this many pairs or trials use Student's t (sections 4.3-4.5).
T_DISTRIBUTION_MAX_N = 40
#: Yang & Liu's two significance levels: "≫"/"≪" at or below the first, ">"/"<" at the second.
STRONG_LEVEL, LEVEL = 0.01, 0.05


@dataclass(frozen=True)
class TestResult:
    """The outcome of one comparison of systems A and B.

    Attributes:
        name: the test, e.g. "s-test" or "p-test (recall)".
        n: the sample size the test used: differing decisions (s-test), differing categories (S-,
            T-, T'-tests) or n_a + n_b trials (p-test).
        statistic: z (sign tests, standardised k), t (T-, T'-tests) or Z (p-test); nan when
            degenerate.
        p_value_a_better: one-sided P-value for "A better"; nan when degenerate.
        p_value_b_better: one-sided P-value for "B better"; nan when degenerate.
        symbol: "≫", ">", "~", "<" or "≪" (:func:`significance_symbol`).
        reason: why the statistic and P-values are undefined (nan), e.g. "no difference to test (...)"; "" when it
            is defined.
    """

    __test__ = False  # not a pytest test class, despite its name

    name: str
    n: int
    statistic: float
    p_value_a_better: float
    p_value_b_better: float
    symbol: str
    reason: str = ""


def significance_symbol(p_value_a_better: float, p_value_b_better: float) -> str:
    """Yang & Liu 1999 Table 2's symbol for a pair of one-sided P-values.

    "≫" if p_value_a_better <= 0.01, ">" if 0.01 < p_value_a_better <= 0.05, "≪" and "<"
    likewise for p_value_b_better, "~" if neither is <= 0.05. Raises ValueError unless both are
    in [0, 1] and at most one is <= 0.05 (one-sided P-values of the two directions sum to at
    least 1).
    """
    check_number("p_value_a_better", p_value_a_better, 0, 1, kind="probability")
    check_number("p_value_b_better", p_value_b_better, 0, 1, kind="probability")
    if p_value_a_better <= LEVEL and p_value_b_better <= LEVEL:
        raise ValueError(
            f"p_value_a_better and p_value_b_better cannot both be <= {LEVEL}; got "
            f"{p_value_a_better!r} and {p_value_b_better!r}"
        )
    if p_value_a_better <= LEVEL:
        return "≫" if p_value_a_better <= STRONG_LEVEL else ">"
    if p_value_b_better <= LEVEL:
        return "≪" if p_value_b_better <= STRONG_LEVEL else "<"
    return "~"


def _result(name: str, n: int, statistic: float, p_a: float, p_b: float) -> TestResult:
    p_a, p_b = float(p_a), float(p_b)
    return TestResult(name, int(n), float(statistic), p_a, p_b, significance_symbol(p_a, p_b))


def _degenerate(name: str, n: int, reason: str) -> TestResult:
    """An undefined statistic: nan, both P-values nan, "~" (nothing shows either system better), and why."""
    return TestResult(name, int(n), math.nan, math.nan, math.nan, "~", reason)


def _check_scores(f1_a: ArrayLike, f1_b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The paired per-category scores as float arrays, or ValueError naming the culprit."""
    arrays = []
    for name, value in (("f1_a", f1_a), ("f1_b", f1_b)):
        array = check_array(name, value, 1, "(one score per category)")
        check_unit_interval(name, array, "scores")
        arrays.append(array)
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(
            f"f1_a and f1_b must pair the same categories (equal lengths); got {arrays[0].size} "
            f"and {arrays[1].size}"
        )
    return arrays[0], arrays[1]


def _sign_test(name: str, k: int, n: int, agreement: str) -> TestResult:
    """Sign test of k successes of A in n differing pairs: Bin(n, 0.5) tails (section 4.1); with no
    differing pair the test is undefined, ``agreement`` saying what the systems agree on.
    """
    if n == 0:
        return _degenerate(name, n, f"no difference to test ({agreement})")
    z = (k - 0.5 * n) / (0.5 * math.sqrt(n))
    if n <= EXACT_SIGN_TEST_MAX_N:
        p_a = stats.binomtest(k, n, 0.5, alternative="greater").pvalue  # P(Z >= k)
        p_b = stats.binomtest(k, n, 0.5, alternative="less").pvalue  # P(Z <= k)
    else:
        p_a, p_b = stats.norm.sf(z), stats.norm.cdf(z)
    return _result(name, n, z, p_a, p_b)


def _t_or_normal(name: str, statistic: float, n: int) -> TestResult:
    """One-sided P-values of ``statistic``: Student's t, n - 1 d.f., for n <= 40, else normal."""
    if n <= T_DISTRIBUTION_MAX_N:
        p_a, p_b = stats.t.sf(statistic, n - 1), stats.t.cdf(statistic, n - 1)
    else:
        p_a, p_b = stats.norm.sf(statistic), stats.norm.cdf(statistic)
    return _result(name, n, statistic, p_a, p_b)


def _paired_t(name: str, a: NDArray[np.float64], b: NDArray[np.float64], values: str) -> TestResult:
    """The paired t statistic, t = mean(d) / (sd(d) / sqrt(n)) over the n pairs with d = a - b != 0 (sections 4.3-4.4);
    ``values`` names what is paired ("F1", "F1 ranks") in the reason of an undefined t.
    """
    d = (a - b)[a != b]
    n = d.size
    if n < 2:  # sd(d) needs two differences
        tied = "every category's F1 is equal" if n == 0 else "only 1 does"
        return _degenerate(name, n, f"fewer than 2 categories whose F1 differ ({tied})")
    sd = d.std(ddof=1)
    if sd == 0.0:
        return _degenerate(name, n, f"the {values} differences have zero variance (every differing category "
                                    "differs by the same amount)")
    return _t_or_normal(name, d.mean() / (sd / math.sqrt(n)), n)


def s_test(k: int, n: int) -> TestResult:
    """Micro sign test (s-test, Yang & Liu 1999 section 4.1).

    Over all document/category decisions, n counts those where A and B differ (one right, one
    wrong) and k those where A is right and B wrong. Under the null hypothesis k ~ Bin(n, 0.5);
    ``p_value_a_better`` = P(Z >= k) and ``p_value_b_better`` = P(Z <= k), exact binomial tails
    (``scipy.stats.binomtest``) for n <= 12 and, for n > 12, the standard normal tails of
    z = (k - 0.5 n) / (0.5 sqrt(n)), the reported statistic. n = 0 is degenerate ("~").

    Raises ValueError unless k and n are integers with 0 <= k <= n.
    """
    n = check_integer("n", n, 0)
    k = check_integer("k", k, 0)
    if k > n:
        raise ValueError(f"k must be at most n = {n} (A wins only among differing decisions); got {k}")
    return _sign_test("s-test", k, n, "the runs' decisions agree on every document and category")


def S_test(f1_a: ArrayLike, f1_b: ArrayLike) -> TestResult:
    """Macro sign test (S-test, Yang & Liu 1999 section 4.2) on paired per-category F1 values.

    n = number of categories where ``f1_a`` and ``f1_b`` differ (exact float comparison, so
    compute both from contingency tables the same way), k = number where ``f1_a`` is higher;
    P-values and statistic as in :func:`s_test`. Raises ValueError unless both are non-empty 1-D
    arrays of equal length with values in [0, 1].
    """
    a, b = _check_scores(f1_a, f1_b)
    return _sign_test("S-test", int(np.count_nonzero(a > b)), int(np.count_nonzero(a != b)),
                      "every category's F1 is equal")


def T_test(f1_a: ArrayLike, f1_b: ArrayLike) -> TestResult:
    """Macro paired t-test (T-test, Yang & Liu 1999 section 4.3) on per-category F1 values.

    With d_i = a_i - b_i over the n categories where the F1 values differ (the paper keeps the
    S-test's n, so tied categories are left out), t = mean(d) / (sd(d) / sqrt(n)) with the
    sample standard deviation (ddof = 1). P-values from Student's t with n - 1 d.f. for
    n <= 40, else the standard normal. Fewer than 2 differing categories or sd(d) = 0 is
    degenerate ("~"). Validation as in :func:`S_test`.
    """
    a, b = _check_scores(f1_a, f1_b)
    return _paired_t("T-test", a, b, "F1")


def T_prime_test(f1_a: ArrayLike, f1_b: ArrayLike) -> TestResult:
    """Macro t-test after rank transformation (T'-test, Yang & Liu 1999 section 4.4).

    The 2M F1 values of both systems on all M categories are pooled and replaced by their ranks
    (``scipy.stats.rankdata``, ties get their average rank); then :func:`T_test`'s statistic is
    computed on the rank differences d'_i = a'_i - b'_i over the n categories where the ranks
    differ (the same categories where the F1 values differ). Validation as in :func:`S_test`.
    """
    a, b = _check_scores(f1_a, f1_b)
    ranks = stats.rankdata(np.concatenate([a, b]), method="average")
    return _paired_t("T'-test", ranks[: a.size], ranks[a.size :], "F1 ranks'")


def p_test(
    p_a: float,
    p_b: float,
    n_a: int,
    n_b: int,
    name: str = "p-test",
    higher_is_better: bool = True,
    no_trials: str = "",
) -> TestResult:
    """Difference of two proportions (p-test, Yang & Liu 1999 section 4.5).

    With pooled p = (n_a p_a + n_b p_b) / (n_a + n_b),
    Z = (p_a - p_b) / sqrt(p (1 - p) (1 / n_a + 1 / n_b)). The trials n_a, n_b are the true
    positives' count for recall, the assigned positives' count for precision, and the number
    of document/category decisions for error or accuracy. When ``higher_is_better`` (recall,
    precision, accuracy) ``p_value_a_better`` is the upper tail of Z; set it False for error,
    where A is better when p_a is lower, and ``p_value_a_better`` is the lower tail. Tails of
    Student's t with n - 1 d.f. for n = n_a + n_b <= 40, else of the standard normal. A pooled
    p of 0 or 1, or a side with no trials (a run that assigns nothing has no precision to test),
    is degenerate ("~"); ``no_trials`` says in words what a side without trials means for this
    measure (e.g. "that run assigned nothing"), for the reason.

    Raises ValueError unless p_a and p_b are in [0, 1] and n_a, n_b are integers >= 0.
    """
    # Checked, not converted: the statistic is computed from the proportions as given.
    check_number("p_a", p_a, 0, 1, kind="proportion")
    check_number("p_b", p_b, 0, 1, kind="proportion")
    n_a = check_integer("n_a", n_a, 0)
    n_b = check_integer("n_b", n_b, 0)
    check_flag("higher_is_better", higher_is_better)
    n = n_a + n_b
    if n_a == 0 or n_b == 0:
        sides = "n_a = n_b = 0" if n == 0 else "n_a = 0" if n_a == 0 else "n_b = 0"
        which = "either side" if n == 0 else "one side"
        return _degenerate(name, n, f"no trials on {which} ({sides}{': ' + no_trials if no_trials else ''})")
    pooled = (n_a * p_a + n_b * p_b) / n
    variance = pooled * (1.0 - pooled) * (1.0 / n_a + 1.0 / n_b)
    if variance <= 0.0:  # p_a = p_b = 0 or 1: every trial of both runs came out the same
        both = round(pooled)
        return _degenerate(name, n, f"pooled proportion is {both} (both runs' proportions are {both}: no variance)")
    z = (p_a - p_b) / math.sqrt(variance)
    result = _t_or_normal(name, z, n)
    if higher_is_better:
        return result
    return _result(name, n, z, result.p_value_b_better, result.p_value_a_better)
