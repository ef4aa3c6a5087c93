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

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.validation import check_labels, check_matrix, check_number

__all__ = ["rocchio"]

_CONTROL_NOTE = " (Debole & Sebastiani: beta=16, gamma=4)"


def rocchio(
    X: sparse.spmatrix | sparse.sparray,
    y: NDArray[np.bool_],
    beta: float = 16.0,
    gamma: float = 4.0,
) -> tuple[NDArray[np.float64], float]:
    """The Rocchio classifier (w, b) for one category: w = beta mean(positives) - gamma mean(negatives).

    Parameters
    ----------
    X : scipy sparse matrix, shape (n_docs, n_features)
        Training documents, one row each (e.g. the L2-normalised ltc rows of
        :class:`sparktc.features.matrix.TrainingSet`); values must be finite.
    y : bool array, shape (n_docs,)
        True for the documents in the category (``TrainingSet.positives(category)``).
    beta, gamma : float
        Rocchio's control parameters, finite and >= 0 (defaults 16 and 4, Debole & Sebastiani 2005).

    Returns
    -------
    w : float64 array, shape (n_features,)
    b : float
        0.0, except for the degenerate categories described in the module docstring
        (no positives: w = 0, b = -1.0; no negatives: w = 0, b = +1.0).
        Scores are ``X @ w + b``.
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

