"""One-vs-rest L2-regularized logistic regression by scikit-learn, one binary problem per category.

For category c, with y_i = +1 for the training documents in c and -1 for the others, scikit-learn's
``LogisticRegression`` (solver L-BFGS, the bias b not regularized) solves

    min_{w, b} 1/2 w'w + C sum_i log(1 + exp(-y_i (w'x_i + b)))

and a document is scored by the log odds s(d, c) = w'x_d + b = ln P(c | d) / (1 - P(c | d)), so the natural
fixed threshold is 0, P(c | d) > 1/2 (scikit-learn's ``LogisticRegression``; the model of LIBLINEAR's
``l2r_lr`` solver, there with a regularized bias feature). It is the proof of sparktc's method registry: this
module and one line in :mod:`sparktc.models.registry` add it (``train.method = "sklearn_linear"``).

Degenerate categories follow :meth:`sparktc.models.linear.BinaryProblems.train`: with no positive training
document the model is w = 0, b = -1 (never assigned); with no negative one, w = 0, b = +1 (always assigned).

Example:
    >>> import numpy as np
    >>> from scipy import sparse
    >>> X = sparse.csr_matrix(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.8]]))
    >>> w, b = logistic_regression(X, np.array([True, True, False, False]), C=10.0, max_iter=100)
    >>> bool(w[0] > 0 > w[1])
    True
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.models.method import LINEAR, Fit, Method, Parameters, PerCategory, ScoreRange, Scoring, shown
from sparktc.validation import between, check_labels, check_matrix, meaning, rule

__all__ = ["METHOD", "SklearnLinearParameters", "logistic_regression"]


def logistic_regression(X: sparse.spmatrix | sparse.sparray, y: NDArray[np.bool_], C: float,
                        max_iter: int) -> tuple[NDArray[np.float64], float]:
    """(w, b) of the L2-regularized logistic regression of the 0/1 labels ``y`` on the rows of ``X`` (module
    docstring), at most ``max_iter`` L-BFGS iterations (a budget: scikit-learn's convergence warning is not raised).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    X = check_matrix("X", X)
    y = check_labels("y", y, X.shape[0])
    positives = int(np.count_nonzero(y))
    if positives in (0, len(y)):
        return np.zeros(X.shape[1]), -1.0 if positives == 0 else 1.0
    model = LogisticRegression(C=C, solver="lbfgs", max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


@dataclass(frozen=True)
class SklearnLinearParameters(Parameters):
    """scikit-learn's logistic regression's settings, ``[train.sklearn_linear]``."""

    C: float = field(default=1.0, metadata=meaning(
        "the inverse of the L2 regularization strength (scikit-learn's C and its default)",
        rule(lambda v: v > 0, "> 0")))
    max_iter: int = field(default=1000, metadata=meaning("the L-BFGS iterations at most", between(1, 1_000_000)))


def _trainer(parameters: SklearnLinearParameters, X: sparse.csr_matrix, reuse: tuple | None) -> Fit:
    """The :data:`~sparktc.models.method.Fit` of a logistic regression over ``X``: :func:`logistic_regression`
    with the parameters' C and iteration budget (the candidate's LIBLINEAR settings do not apply).
    """

    def fit(y: NDArray[np.bool_], candidate: Any) -> tuple[NDArray[np.float64], float]:
        return logistic_regression(X, y, parameters.C, parameters.max_iter)

    return fit


def _fitting(parameters: SklearnLinearParameters, terms: int) -> PerCategory:
    """One logistic regression per category (:func:`_trainer`)."""
    return PerCategory(_trainer)


def _scoring(parameters: SklearnLinearParameters) -> Scoring:
    """A linear score, s = w'x + b, the log odds."""
    return Scoring(LINEAR)


def _score_range(parameters: SklearnLinearParameters, nonnegative_features: bool) -> ScoreRange:
    """The log odds, unbounded; natural t = 0 (P(c|d) > 1/2)."""
    return ScoreRange.unbounded(0.0, "the log odds of c > 0", "logistic regression's log odds")


def _describe(record: Mapping[str, Any]) -> list[str]:
    return [f"- Method: `sklearn_linear`, one-vs-rest logistic regression (scikit-learn, L-BFGS), C "
            f"{shown(record, 'C')}, at most {shown(record, 'max_iter')} iterations"]


#: One-vs-rest logistic regression by scikit-learn: s(d, c) = the log odds of c, natural threshold 0.
METHOD = Method(
    name="sklearn_linear", title="scikit-learn's logistic regression", parameters=SklearnLinearParameters,
    fitting=_fitting, scoring=_scoring, score_range=_score_range, describe=_describe,
)
