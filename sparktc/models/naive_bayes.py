"""Multinomial naive Bayes (McCallum & Nigam 1998; Yang & Liu 1999 section 3.5): the mixture over all
categories that Yang & Liu ran from the Bow library, or one category against the rest.

**The mixture** (``mixture_nb``, :class:`NaiveBayesMixture`): one multinomial per category c over the raw
term frequencies of the selected terms V, a document counted once in each of its categories, with
Laplace smoothing alpha:

    theta(t | c) = (alpha + sum_{d in c} tf(t, d)) / (alpha |V| + sum_{d in c} sum_{t in V} tf(t, d))
    P(c) = (alpha + |c|) / (alpha |C| + sum_c' |c'|)

and a document is scored by its posterior over the categories C, which competes them against each other:

    s(d, c) = P(c | d) = exp(a(d, c) - ln sum_{c'} exp a(d, c')),
    a(d, c) = ln P(c) + sum_t tf(t, d) ln theta(t | c)

which is scikit-learn's ``MultinomialNB(alpha, class_prior=P)`` posterior (``predict_proba``) when each
document is repeated once per category it has. The posterior, not its log, so that a category's thresholds
learned on different folds lie on one bounded scale and their mean transfers (:func:`posterior`).
Its sufficient statistics, X'Y (each category's term frequencies summed) and the documents per category, are
sums over documents.

**One against the rest** (``multinomial_nb``): the same model for c and its complement c' only, over the
raw term frequencies tf(t, d) of the selected terms V (not ltc weights: the model counts word
occurrences), with Laplace smoothing alpha:

    theta(t | c) = (alpha + sum_{d in c} tf(t, d)) / (alpha |V| + sum_{d in c} sum_{t in V} tf(t, d))
    P(c) = (alpha + |c|) / (2 alpha + N)

and a document is scored by the log-odds of c, linear in tf:

    s(d, c) = ln P(c) / P(c') + sum_t tf(t, d) (ln theta(t | c) - ln theta(t | c'))
            = b + w'tf(d)

which is scikit-learn's ``MultinomialNB(alpha, class_prior=[P(c'), P(c)])`` joint log-likelihood of class 1
minus class 0. The prior is smoothed with the same alpha (scikit-learn's default prior is |c| / N):
a class without training documents, as a rare category has in some cross-validation folds, then gets
a small finite prior instead of ln 0, whose -inf would drag the fold's SCut threshold, and so the
category's mean threshold, to -inf.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.special import logsumexp

from sparktc.models.method import (
    LINEAR,
    POSTERIOR,
    Fit,
    FromSums,
    Method,
    Parameters,
    PerCategory,
    ScoreRange,
    Scoring,
    SearchLists,
    shown,
)
from sparktc.validation import allowed, meaning, rule

__all__ = ["METHOD", "NaiveBayesMixture", "NaiveBayesParameters", "NaiveBayesSearch", "log_posterior", "mixture_nb",
           "multinomial_nb"]


def multinomial_nb(X: sparse.csr_matrix, y: NDArray[np.bool_], alpha: float) -> tuple[NDArray[np.float64], float]:
    """(w, b) of the log-odds of ``y`` over the term-frequency rows of ``X`` (documents x terms)."""
    if not alpha > 0:
        raise ValueError(f"alpha = {alpha}: Laplace smoothing needs alpha > 0")
    y = np.asarray(y, dtype=np.bool_)
    total = np.asarray(X.sum(axis=0)).ravel()
    positive = np.asarray(X[y].sum(axis=0)).ravel() if y.any() else np.zeros(X.shape[1])
    negative = total - positive
    n_terms = X.shape[1]
    log_theta_c = np.log(alpha + positive) - np.log(alpha * n_terms + positive.sum())
    log_theta_other = np.log(alpha + negative) - np.log(alpha * n_terms + negative.sum())
    n_c = int(y.sum())
    prior = np.log(alpha + n_c) - np.log(alpha + len(y) - n_c)
    return log_theta_c - log_theta_other, float(prior)


def mixture_nb(XY: NDArray[np.float64], documents: NDArray[np.float64],
               alpha: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(ln theta, ln P(c)) of the mixture from its sufficient statistics: ``XY`` = X'Y (terms x categories:
    each category's summed term frequencies) and ``documents`` = each category's training documents.
    """
    if not alpha > 0:
        raise ValueError(f"alpha = {alpha}: Laplace smoothing needs alpha > 0")
    XY = np.asarray(XY, dtype=np.float64)
    documents = np.asarray(documents, dtype=np.float64)
    log_theta = np.log(alpha + XY) - np.log(alpha * XY.shape[0] + XY.sum(axis=0))
    log_prior = np.log(alpha + documents) - np.log(alpha * len(documents) + documents.sum())
    return log_theta, log_prior


def posterior(joint: NDArray[np.float64]) -> NDArray[np.float64]:
    """Documents x categories P(c | d) in [0, 1] from the joint log-likelihoods a(d, c): exp of
    :func:`log_posterior`. The mixture scores by it, not by its log: a category's thresholds set on different
    folds then lie on one bounded scale, so their mean transfers (SCut's mean of the folds' log thresholds fell to
    the log posteriors of rare categories' negatives, hundreds below 0, and assigned them to most documents).
    """
    return np.exp(log_posterior(joint))


def log_posterior(joint: NDArray[np.float64]) -> NDArray[np.float64]:
    """Documents x categories ln P(c | d) from the joint log-likelihoods a(d, c), normalized per document."""
    if joint.shape[1] == 0:
        return joint
    return joint - logsumexp(joint, axis=1, keepdims=True)


@dataclass(frozen=True)
class NaiveBayesMixture:
    """A mixture over the selected terms ``columns``: s(d, c) = P(c | d) (:func:`posterior`)."""

    columns: NDArray[np.int64]
    log_theta: NDArray[np.float64]  # selected terms x categories
    log_prior: NDArray[np.float64]

    def scores(self, X: sparse.csr_matrix) -> NDArray[np.float64]:
        """Documents x categories scores of the term-frequency rows of ``X`` (documents x vocabulary)."""
        return posterior(np.asarray(X[:, self.columns] @ self.log_theta) + self.log_prior)


@dataclass(frozen=True)
class NaiveBayesParameters(Parameters):
    """Naive Bayes's settings, ``[train.nb]``."""

    alpha: float = field(default=1.0, metadata=meaning(
        "Laplace smoothing alpha, > 0 (0 would give unseen terms probability 0, log -inf)",
        rule(lambda v: v > 0, "> 0")))
    model: str = field(default="mixture", metadata=meaning(
        "mixture: one multinomial per category scored by the posterior over all categories (Yang & Liu's, from the "
        "Bow library); binary: each category against the rest", allowed("mixture", "binary")))


@dataclass(frozen=True)
class NaiveBayesSearch:
    """What cross-validation may choose for naive Bayes, ``[tune.nb]`` (an empty list keeps the [train.nb] value)."""

    alpha: list[float] = field(default_factory=list, metadata=meaning(
        "the mixture's Laplace smoothing values to try, one for the whole model by the cross-validated objective",
        rule(lambda v: all(x > 0 for x in v), "numbers > 0")))


def _binary_trainer(parameters: NaiveBayesParameters, X: sparse.csr_matrix, reuse: tuple | None) -> Fit:
    """The :data:`~sparktc.models.method.Fit` of binary naive Bayes over ``X``: :func:`multinomial_nb`, the
    category against the rest, with the parameters' smoothing.
    """

    def fit(y: NDArray[np.bool_], candidate: Any) -> tuple[NDArray[np.float64], float]:
        return multinomial_nb(X, y, parameters.alpha)

    return fit


def _fitting(parameters: NaiveBayesParameters, terms: int) -> FromSums | PerCategory:
    """Binary: one model per category (:func:`_binary_trainer`); the mixture: one model for all categories from the
    per-fold sums X'Y and documents per category (:func:`mixture_nb`).
    """
    alpha = parameters.alpha
    if parameters.model == "binary":
        return PerCategory(_binary_trainer)

    def fold_models(G: NDArray, XY: NDArray, labels: NDArray, columns: NDArray[np.int64]) -> list[NaiveBayesMixture]:
        return [NaiveBayesMixture(columns, *mixture_nb(XY.sum(axis=0) - XY[f], labels.sum(axis=0) - labels[f], alpha))
                for f in range(XY.shape[0])]

    def full(G: NDArray, XY: NDArray, labels: NDArray) -> tuple[NDArray[np.float64], list[float]]:
        log_theta, log_prior = mixture_nb(XY, labels, alpha)
        return log_theta, log_prior.tolist()  # ln P(c), the bias of each category's row

    return FromSums(gram=False, fold_models=fold_models, full=full)


def _scoring(parameters: NaiveBayesParameters) -> Scoring:
    """The mixture's posteriors over the categories; binary's log odds, a linear score."""
    return Scoring(POSTERIOR if parameters.model == "mixture" else LINEAR)


def _score_range(parameters: NaiveBayesParameters, nonnegative_features: bool) -> ScoreRange:
    """The mixture's P(c | d), above 0 and at most 1, natural t = 1/2; binary's log odds of c, unbounded,
    natural t = 0.
    """
    if parameters.model == "mixture":
        return ScoreRange(0.0, 1.0, 0.5, "P(c|d) > 1/2",
                          "the naive Bayes mixture's scores are posteriors 0 < P(c|d) <= 1", low_open=True)
    return ScoreRange.unbounded(0.0, "the log odds of c > 0", "binary naive Bayes's scores")


def _check(parameters: NaiveBayesParameters, tune: SearchLists, top_k: int | None, thresholding: str) -> str | None:
    """``tune.nb.alpha`` is searched for the mixture's one model; binary naive Bayes fits each category apart. And
    the mixture's posteriors over every term are so near 0 and 1 that SCut's per-fold thresholds do not transfer
    (R(90) ApteMod: micro-F1 .52; docs/benchmarks/yang-liu-1999.md): refused, naming what works.
    """
    if tune.alpha and parameters.model == "binary":
        return (f"tune.nb.alpha = {list(tune.alpha)} with train.nb.model = 'binary': the smoothing is searched for "
                "the mixture's one model only; set train.nb.alpha, or train.nb.model = 'mixture'")
    if parameters.model == "mixture" and thresholding == "scut" and top_k == 0 and not tune.terms:
        return ("train.method = 'nb' with train.thresholding = 'scut' over every term: the mixture's posteriors are "
                "then so near 0 and 1 that the folds' SCut thresholds do not transfer (Reuters-21578 R(90): micro-F1 "
                ".52); select the terms (Yang & Liu's 2,000: select.top_k = 2000) or search them and the smoothing "
                "(tune.terms = [1000, 2000, 5000, 10000], tune.nb.alpha = [1, 0.1, 0.01]), or use "
                "train.thresholding = 'scutfbr' (--preset yang_liu1999.nb)")
    return None


def _describe(record: Mapping[str, Any]) -> list[str]:
    model = ("the mixture over all categories, scored by the posterior P(c|d)"
             if record.get("model", "mixture") == "mixture" else "each category against the rest")
    return [f"- Method: `nb`, multinomial naive Bayes over raw term frequencies, {model}, "
            f"Laplace smoothing alpha {shown(record, 'alpha')}"]


#: Multinomial naive Bayes over the raw term frequencies (McCallum & Nigam 1998; Yang & Liu 1999).
METHOD = Method(
    name="nb", title="naive Bayes", parameters=NaiveBayesParameters, fitting=_fitting,
    scoring=_scoring,
    score_range=_score_range, describe=_describe, vector_column="counts", variant=("model",),
    search=NaiveBayesSearch, check=_check,
)
