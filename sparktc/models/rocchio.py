"""Rocchio linear classifiers: the positive centroid pushed away from the negative one.

For category c_i with positive training documents POS_i and negative ones NEG_i, the weight
of term t_k is (Debole & Sebastiani 2005, JASIST, equation 2; after Hull 1994)

    w_ki = beta * sum_{d_j in POS_i} w_kj / |POS_i|  -  gamma * sum_{d_j in NEG_i} w_kj / |NEG_i|

with beta = 16 and gamma = 4 by default ("conforming to common practice"; REFERENCE.md
section 5). Negative weights are kept (no clipping to zero). A document d is scored by the
dot product w'd + b with b = 0: Debole & Sebastiani threshold the score per category, and the
threshold is tuned separately (sparktc's thresholding code), not learnt here.

Degenerate categories follow :meth:`sparktc.models.linear.BinaryProblems.train`: with no positive
training document the model is w = 0, b = -1.0 (every score -1, never assigned); with no
negative one it is w = 0, b = +1.0 (every score +1, always assigned).

Pure numpy/scipy; the Spark stages call these on executors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.models.method import LINEAR, Fit, Method, Parameters, PerCategory, ScoreRange, Scoring, shown
from sparktc.validation import check_labels, check_matrix, check_number, meaning, rule

__all__ = ["METHOD", "RocchioParameters", "rocchio"]

_CONTROL_NOTE = " (Debole & Sebastiani: beta=16, gamma=4)"


def rocchio(
    X: sparse.spmatrix | sparse.sparray,
    y: NDArray[np.bool_],
    beta: float = 16.0,
    gamma: float = 4.0,
) -> tuple[NDArray[np.float64], float]:
    """The Rocchio classifier (w, b) for one category: w = beta mean(positives) - gamma mean(negatives).

    Args:
        X: scipy sparse matrix, shape (n_docs, n_features). Training documents, one row each (e.g. the
            L2-normalised ltc rows of :class:`sparktc.features.matrix.TrainingSet`); values must be finite.
        y: bool array, shape (n_docs,). True for the documents in the category
            (``TrainingSet.positives(category)``).
        beta: Rocchio's control parameter on the positives' mean, finite and >= 0 (default 16, Debole &
            Sebastiani 2005).
        gamma: Rocchio's control parameter on the negatives' mean, finite and >= 0 (default 4, Debole &
            Sebastiani 2005).

    Returns:
        (w, b): w a float64 array of shape (n_features,); b a float, 0.0 except for the degenerate
        categories described in the module docstring (no positives: w = 0, b = -1.0; no negatives:
        w = 0, b = +1.0). Scores are ``X @ w + b``.
    """
    X = check_matrix("X", X, nonempty=True)
    n_docs, n_features = X.shape
    y = check_labels("y", y, n_docs)
    beta = check_number("beta", beta, 0, note=_CONTROL_NOTE)
    gamma = check_number("gamma", gamma, 0, note=_CONTROL_NOTE)

    n_positive = int(np.count_nonzero(y))
    if n_positive == 0 or n_positive == n_docs:
        return np.zeros(n_features), -1.0 if n_positive == 0 else 1.0
    # Both centroids in one sparse product: w = X' a, a_j = beta/|POS| or -gamma/|NEG|.
    coefficients = np.where(y, beta / n_positive, -gamma / (n_docs - n_positive))
    return np.asarray(X.T @ coefficients, dtype=np.float64).ravel(), 0.0



@dataclass(frozen=True)
class RocchioParameters(Parameters):
    """w = beta * mean(positives) - gamma * mean(negatives): beta = 0 would ignore the category's own documents;
    gamma = 0 is the plain centroid classifier; negative values would invert the pull.
    """

    beta: float = field(default=16.0, metadata=meaning(
        "the weight of the category's own documents' centroid, > 0", rule(lambda v: v > 0, "> 0")))
    gamma: float = field(default=4.0, metadata=meaning(
        "the weight of the other documents' centroid, subtracted; 0 is the plain centroid classifier",
        rule(lambda v: v >= 0, ">= 0")))


def _score_range(parameters: RocchioParameters, nonnegative_features: bool) -> ScoreRange:
    """w'x, unbounded; with gamma = 0 and non-negative features w >= 0, so s >= 0. Natural t = 0."""
    low = 0.0 if parameters.gamma == 0 and nonnegative_features else -math.inf
    bound = " >= 0 (gamma = 0 and no negative feature)" if low == 0 else ""
    return ScoreRange(low, math.inf, 0.0, "w'x > 0", f"Rocchio's scores are w'x{bound}")


def _trainer(parameters: RocchioParameters, X: sparse.csr_matrix, reuse: tuple | None) -> Fit:
    """The :data:`~sparktc.models.method.Fit` of the Rocchio vector over ``X``: :func:`rocchio` with the
    parameters' beta and gamma (nothing to reuse across categories; the candidate has no setting of Rocchio's).
    """

    def fit(y: NDArray[np.bool_], candidate: Any) -> tuple[NDArray[np.float64], float]:
        return rocchio(X, y, parameters.beta, parameters.gamma)

    return fit


def _fitting(parameters: RocchioParameters, terms: int) -> PerCategory:
    """One Rocchio vector per category (:func:`_trainer`), over any number of terms."""
    return PerCategory(_trainer)


def _scoring(parameters: RocchioParameters) -> Scoring:
    """A linear score, s = w'x."""
    return Scoring(LINEAR)


def _describe(record: Mapping[str, Any]) -> list[str]:
    return [f"- Method: `rocchio`, w = beta * mean(positives) - gamma * mean(negatives), beta "
            f"{shown(record, 'beta')}, gamma {shown(record, 'gamma')}"]


#: Rocchio per category (Debole & Sebastiani 2005, equation 2).
METHOD = Method(
    name="rocchio", title="Rocchio", parameters=RocchioParameters,
    fitting=_fitting, scoring=_scoring, score_range=_score_range, describe=_describe,
)
