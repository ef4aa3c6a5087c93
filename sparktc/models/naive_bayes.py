"""Multinomial naive Bayes, one category against the rest (McCallum & Nigam 1998, as Yang & Liu 1999 ran it).

Over the raw term frequencies tf(t, d) of the selected terms V (not ltc weights: the model counts
word occurrences), with Laplace smoothing alpha, for the class c and its complement c':

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

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

__all__ = ["multinomial_nb"]


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
