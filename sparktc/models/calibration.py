"""Calibrated blends of two methods' scores for one category: Platt's sigmoid on each, then a convex mixture.

Two methods' scores (an SVM's decision values w'x + b, kNN's summed similarities in [0, k]) are on unrelated
scales, so a mixture of the raw scores would weigh them by their ranges, not by what they say. Each member's
out-of-fold training scores s are first mapped to P(c | s) = 1 / (1 + exp(A s + B)), the sigmoid of Platt (1999,
"Probabilistic outputs for support vector machines", section 2.1), fitted by maximum likelihood on held-out
scores with his smoothed targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2), which keep a separable category's
sigmoid finite; the Newton iteration with backtracking is that of Lin, Lin & Weng (2007, "A note on Platt's
probabilistic outputs for support vector machines", Algorithm 1), which converges where Platt's own may not.
The blend mixes the members' log-odds -(A s + B), alpha l_1 + (1 - alpha) l_2 (a weighted geometric mean of their
odds), or their probabilities alpha p_1 + (1 - alpha) p_2: either way one scale, nats or [0, 1], whatever the
members, for the per-fold SCut/SCutFBR thresholds averaged into a category's threshold
(:meth:`sparktc.models.decision.DecisionRule.learned_threshold`).

Pure numpy; :func:`blend_candidates` gives each mixing weight's cross-validated counts, so one alpha for all
categories is chosen by pooled micro-F1 (:func:`sparktc.models.tuning.shared_value`) as the shared settings are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sparktc.models.decision import DecisionRule

__all__ = ["LOG_ODDS", "PROBABILITY", "SCALES", "BlendedCategory", "Sigmoid", "blend", "blend_candidates", "platt_fit",
           "platt_loss"]

#: The scales a blend mixes its members on: P(c | s), or its log-odds, an affine map of each member's scores.
PROBABILITY, LOG_ODDS = "probability", "log_odds"
SCALES = (PROBABILITY, LOG_ODDS)
MAX_ITERATIONS = 100
MIN_STEP = 1e-10
GRADIENT_TOLERANCE = 1e-5
RIDGE = 1e-12  # Lin, Lin & Weng's sigma: keeps the Hessian invertible when every score is the same


@dataclass(frozen=True)
class Sigmoid:
    """Platt's P(c | s) = 1 / (1 + exp(A s + B)); A < 0 when higher scores mean c."""

    A: float
    B: float

    def probabilities(self, scores: ArrayLike) -> NDArray[np.float64]:
        """P(c | s) of each score, without overflow (1 / (1 + e^f) = e^-logaddexp(0, f))."""
        return np.exp(-np.logaddexp(0.0, self.A * np.asarray(scores, dtype=np.float64) + self.B))

    def log_odds(self, scores: ArrayLike) -> NDArray[np.float64]:
        """The log-odds log P(c | s) / (1 - P(c | s)) = -(A s + B): an increasing affine map of the scores (A <= 0)."""
        return -(self.A * np.asarray(scores, dtype=np.float64) + self.B)

    def calibrated(self, scores: ArrayLike, scale: str) -> NDArray[np.float64]:
        """The scores on the blend's ``scale`` (:data:`SCALES`)."""
        return self.probabilities(scores) if scale == PROBABILITY else self.log_odds(scores)


def _targets(y: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Platt's smoothed targets: (N+ + 1) / (N+ + 2) for the positives, 1 / (N- + 2) for the negatives."""
    positives = int(np.count_nonzero(y))
    return np.where(y, (positives + 1) / (positives + 2), 1 / (len(y) - positives + 2))


def platt_loss(A: float, B: float, scores: ArrayLike, y: ArrayLike) -> float:
    """The cross-entropy Platt's sigmoid minimizes: -sum t log p + (1 - t) log(1 - p), p = P(c | s), t the
    smoothed targets; with f = A s + B it is sum logaddexp(0, f) - (1 - t) f.
    """
    f = A * np.asarray(scores, dtype=np.float64) + B
    t = _targets(np.asarray(y, dtype=np.bool_))
    return float(np.sum(np.logaddexp(0.0, f) - (1.0 - t) * f))


def platt_fit(scores: ArrayLike, y: ArrayLike) -> Sigmoid:
    """The sigmoid of held-out ``scores`` and their 0/1 labels ``y`` (module docstring): Newton steps on (A, B)
    from A = 0, B = log((N- + 1) / (N+ + 1)), halving a step until it decreases the loss enough (Armijo, 1e-4).
    Never decreasing in s: a fitted A > 0 gives way to the flat sigmoid (A = 0) of the mean target, the best
    non-decreasing one, so calibration never reverses a member's ranking.
    """
    s = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(y, dtype=np.bool_)
    if s.shape != labels.shape or s.ndim != 1:
        raise ValueError(f"scores and y must be 1-D of one length; got shapes {s.shape} and {labels.shape}")
    t = _targets(labels)
    positives = int(np.count_nonzero(labels))
    A, B = 0.0, float(np.log((len(labels) - positives + 1) / (positives + 1)))
    value = platt_loss(A, B, s, labels)
    for _ in range(MAX_ITERATIONS):
        p = np.exp(-np.logaddexp(0.0, A * s + B))  # P(c | s)
        weight = p * (1.0 - p)
        h11, h22, h21 = float(s @ (s * weight)) + RIDGE, float(weight.sum()) + RIDGE, float(s @ weight)
        g1, g2 = float(s @ (t - p)), float((t - p).sum())
        if abs(g1) < GRADIENT_TOLERANCE and abs(g2) < GRADIENT_TOLERANCE:
            break
        determinant = h11 * h22 - h21 * h21
        dA, dB = -(h22 * g1 - h21 * g2) / determinant, -(-h21 * g1 + h11 * g2) / determinant
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= MIN_STEP:
            trial = platt_loss(A + step * dA, B + step * dB, s, labels)
            if trial < value + 1e-4 * step * slope:
                A, B, value = A + step * dA, B + step * dB, trial
                break
            step /= 2
        else:  # no step decreases the loss: (A, B) is as good as the line search can tell
            break
    if A > 0:
        # Held-out scores that rank the positives below the negatives (a lone positive no neighbour shares scores
        # kNN's 0) would turn the ranking over: the member says nothing of the category, P(c | s) = the mean target.
        mean = float(t.mean())
        return Sigmoid(0.0, float(np.log((1.0 - mean) / mean)))
    return Sigmoid(A, B)


def blend(first: ArrayLike, second: ArrayLike, alpha: float) -> NDArray[np.float64]:
    """The mixture alpha v_1 + (1 - alpha) v_2 of two members' calibrated values, alpha in [0, 1]."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1]; got {alpha}")
    return alpha * np.asarray(first, dtype=np.float64) + (1.0 - alpha) * np.asarray(second, dtype=np.float64)


@dataclass(frozen=True)
class BlendedCategory:
    """One category's blend: each member's sigmoid, and per mixing weight its threshold and cross-validated
    TP/FP/FN (rows ``{"alpha", "threshold", "tp", "fp", "fn"}``, in the order of the weights searched).
    """

    first: Sigmoid
    second: Sigmoid
    scale: str
    searched: list[dict]

    def row(self, alpha: float) -> dict:
        """The searched row of mixing weight ``alpha``."""
        return next(row for row in self.searched if row["alpha"] == alpha)

    def scores(self, first: ArrayLike, second: ArrayLike, alpha: float) -> NDArray[np.float64]:
        """The blended score of the members' raw scores of new documents."""
        return blend(self.first.calibrated(first, self.scale), self.second.calibrated(second, self.scale), alpha)


def blend_candidates(first: NDArray[np.float64], second: NDArray[np.float64], y: NDArray[np.bool_],
                     folds: NDArray[np.int64], alphas: Sequence[float], rule: DecisionRule, fbr: float,
                     scale: str = LOG_ODDS) -> BlendedCategory:
    """A category's blend from its two members' out-of-fold training scores (``first``, ``second``: each
    document's from a model fitted without it; ``folds``, the thresholding's folds): both sigmoids fitted on all
    of those scores, then per mixing weight the rule's threshold and cross-validated counts of the blended scores
    (:meth:`~sparktc.models.decision.DecisionRule.learned_threshold` with ``fbr``). The sigmoids' two parameters
    each see every fold's labels, a small optimism the thresholds themselves avoid.

    On the ``LOG_ODDS`` scale each member's calibrated value is an increasing affine map of its scores, so at alpha
    0 or 1 the mean of the per-fold thresholds maps to the member's own and its decisions are its own. On the
    ``PROBABILITY`` scale the sigmoid bends the scores: a mean of per-fold thresholds in (0, 1) is not the mean
    mapped, and on R(90) it lost .039 macro-F1 for the SVM alone (docs/benchmarks/yang-liu-1999.md).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
    sigmoids = platt_fit(first, y), platt_fit(second, y)
    p_first, p_second = sigmoids[0].calibrated(first, scale), sigmoids[1].calibrated(second, scale)
    searched = []
    for alpha in alphas:
        threshold, counted = rule.learned_threshold(blend(p_first, p_second, alpha), y, folds, fbr)
        searched.append({"alpha": float(alpha), "threshold": threshold, **counted})
    return BlendedCategory(*sigmoids, scale, searched)
