"""The decision rule: how a run scores documents and turns the scores into assignments (REFERENCE.md section 5).

A method scores document d for category c:

* ``liblinear``: s(d, c) = w_c'x_d + b_c, one-vs-rest, w_c and b_c trained by LIBLINEAR (``solver``,
  ``C``, ``positive_weight`` as ``-w1``, ``epsilon`` as ``-e``, bias feature ``bias`` as ``-B``);
* ``rocchio``: s(d, c) = w_c'x_d with w_c = beta * mean(c's training vectors) - gamma * mean(the
  others') (Debole & Sebastiani; beta = ``rocchio_beta``, gamma = ``rocchio_gamma``);
* ``knn``: s(d, c) = the sum of the cosine similarities of d's ``knn_k`` most similar training
  documents that are labelled c (Yang & Liu);
* ``llsf``: s(d, c) = x_d'W_c, W the linear least-squares fit of the training documents to their 0/1
  category vectors, one regression for all categories solved by a truncated SVD keeping ``llsf_k``
  singular values, no bias (Yang & Chute; Yang & Liu; :mod:`sparktc.models.llsf`). Its scores lie
  near [0, 1], so a fixed ``threshold`` of about 0.5 is its natural one (the default stays 0);
* ``nb``: multinomial naive Bayes over the raw term frequencies (the ``counts`` of ``vectors``, not the
  ltc weights) with Laplace smoothing ``nb_alpha`` (McCallum & Nigam; Yang & Liu;
  :mod:`sparktc.models.naive_bayes`): with ``nb_model`` = ``mixture`` (Yang & Liu's, from the Bow
  library) one model for all categories, s(d, c) = ln P(c | d), the log posterior over the categories;
  with ``binary``, c against the rest, s(d, c) = ln P(c)/P(c') + sum_t tf(t, d) ln(theta(t|c) / theta(t|c'));
* ``nnet``: s(d, c) = h(d)'W2_c + b2_c, the input of category c's logistic output unit of one network for
  all categories with ``nnet_hidden`` logistic hidden units h(d) = sigma(x_d'W1 + b1), trained by
  backpropagation (Adam, at most ``nnet_epochs`` epochs, L2 penalty ``nnet_l2``, step ``nnet_learning_rate``;
  Yang & Liu; :mod:`sparktc.models.nnet`). Its output sigma(s) is in (0, 1), so s > 0 is the
  natural fixed threshold.

A thresholding turns the scores into assignments, strictly: d gets c <=> s(d, c) > t_c
(:mod:`sparktc.models.thresholds`). The thresholds are set either

* when training, one per category, stored with its model (:meth:`DecisionRule.learned_threshold`):
  ``fixed``, t_c = ``threshold``; ``scut`` and ``scutfbr``, t_c = the mean over ``folds`` folds of the
  training documents, balanced for positives (seed ``seed``), of each fold's SCut threshold on its
  out-of-fold scores (SCutFBR: the fold's top score when its best F1 is below ``fbr``; LYRL2004);
  ``proportional``, the same mean of each fold's threshold assigning the number of its documents
  closest to c's training share of them (Debole & Sebastiani 2005; Yang 2001); or
* when scoring, from the scores of the documents being classified (:meth:`DecisionRule.cut`):
  ``pcut``, t_c = the score ranked just below c's training share of the documents (Yang 2001);
  ``rcut``, no threshold: each document gets its ``rcut_k`` best categories (Yang 2001).

Pure numpy: the train stage, the evaluate stage and the classification of new documents all decide
through :class:`DecisionRule`, built from the [train] section by ``TrainConfig.decision_rule``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sparktc.models.thresholds import fold_thresholds, proportional_fold_thresholds, rcut

#: The methods and thresholdings, the first of each the default.
METHODS = ("liblinear", "rocchio", "knn", "llsf", "nb", "nnet")
THRESHOLDINGS = ("fixed", "scut", "scutfbr", "proportional", "pcut", "rcut")
#: Thresholdings whose per-category thresholds are tuned by cross-validation on the training documents.
CROSS_VALIDATED = ("scut", "scutfbr", "proportional")
#: What each method and each thresholding depends on, by its [train] name: what a run's record states.
METHOD_PARAMETERS = {
    "liblinear": ("solver", "C", "positive_weight", "epsilon", "bias"),
    "rocchio": ("rocchio_beta", "rocchio_gamma"),
    "knn": ("knn_k",),
    "llsf": ("llsf_k",),
    "nb": ("nb_model", "nb_alpha"),
    "nnet": ("nnet_hidden", "nnet_epochs", "nnet_l2", "nnet_learning_rate"),
}
#: The ``vectors`` column a method's document matrices are made of (``values``, the [weight] scheme's weights,
#: otherwise).
VECTOR_COLUMN = {"nb": "counts"}
THRESHOLDING_PARAMETERS = {
    "fixed": ("threshold",), "scut": ("folds", "seed"), "scutfbr": ("fbr", "folds", "seed"),
    "proportional": ("folds", "seed"), "pcut": (), "rcut": ("rcut_k",),
}
#: The [tune] lists a category chooses from by cross-validation (an empty one keeps the [train] value).
SEARCHED = ("solver", "C", "positive_weight", "terms", "fbr")


@dataclass(frozen=True)
class ScoreRange:
    """The scores s(d, c) a method can give a category with training positives, low <= s <= high, and its
    natural fixed threshold (None: it has none; SCut is its usual thresholding), said in words in ``natural_means``.

    With the strict rule "d gets c <=> s > t", a fixed t >= ``high`` assigns nothing and a t < ``low`` assigns
    everything (:meth:`fixed_threshold_problem`)."""

    low: float
    high: float
    natural: float | None
    natural_means: str
    description: str

    def fixed_threshold_problem(self, threshold: float) -> str | None:
        """Why the fixed ``threshold`` cannot work on these scores ("assigns nothing ..."), or None."""
        if threshold >= self.high:
            return f"assigns nothing: {self.description}, so no score exceeds {threshold:g}"
        if threshold < self.low:
            return f"assigns every category to every document: {self.description}, so every score exceeds {threshold:g}"
        return None


def score_range(rule: DecisionRule, nonnegative_features: bool) -> ScoreRange:
    """The range of ``rule``'s scores and its natural fixed threshold; ``nonnegative_features``: the document
    vectors have no negative value (every weighting scheme; given vectors may have some).

    * LIBLINEAR, w'x + b: unbounded; natural t = 0, the side of the separating hyperplane.
    * Rocchio, w'x with w = beta * mean(POS) - gamma * mean(NEG): unbounded; with gamma = 0 and non-negative
      features w >= 0, so s >= 0; natural t = 0.
    * kNN, the sum of the similarities of d's k nearest neighbours labelled c: each cosine in [-1, 1], in
      [0, 1] for non-negative features, so s in [0, k] (or [-k, k]); no natural threshold (Yang & Liu use SCut).
    * LLSF, x'W_c fit to 0/1 targets: unbounded; natural t = 0.5, midway between the targets.
    * naive Bayes mixture, ln P(c | d) <= 0; natural t = ln 0.5, P(c | d) > 1/2. Binary naive Bayes, the log
      odds of c: unbounded; natural t = 0.
    * NNet, the input of c's logistic output unit: unbounded; natural t = 0, output sigma(s) > 1/2.
    """
    unbounded = (-math.inf, math.inf)
    if rule.method == "rocchio":
        low = 0.0 if rule.rocchio_gamma == 0 and nonnegative_features else -math.inf
        bound = " >= 0 (gamma = 0 and no negative feature)" if low == 0 else ""
        return ScoreRange(low, math.inf, 0.0, "w'x > 0", f"Rocchio's scores are w'x{bound}")
    if rule.method == "knn":
        low = 0.0 if nonnegative_features else -float(rule.knn_k)
        return ScoreRange(low, float(rule.knn_k), None, "",
                          f"kNN's scores are sums of the similarities of k = {rule.knn_k} neighbours, "
                          f"between {low:g} and {rule.knn_k}")
    if rule.method == "llsf":
        return ScoreRange(*unbounded, 0.5, "x'W_c > 0.5, midway between the 0/1 targets", "LLSF's scores")
    if rule.posterior_scores:
        return ScoreRange(-math.inf, 0.0, math.log(0.5), "P(c|d) > 1/2",
                          "the naive Bayes mixture's scores are log posteriors ln P(c|d) <= 0")
    if rule.method == "nb":
        return ScoreRange(*unbounded, 0.0, "the log odds of c > 0", "binary naive Bayes's scores")
    if rule.method == "nnet":
        return ScoreRange(*unbounded, 0.0, "the output unit's sigma(s) > 1/2", "NNet's scores")
    return ScoreRange(*unbounded, 0.0, "w'x + b > 0", "LIBLINEAR's decision values")


@dataclass(frozen=True)
class Cut:
    """What scoring applies to a batch of scores: per-category thresholds, or RCut's k (0: thresholds decide)."""

    thresholds: NDArray[np.float64]
    rcut_k: int = 0

    def assign(self, scores: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Documents x categories assignments: s(d, c) > t_c, or c among d's ``rcut_k`` best."""
        return rcut(scores, self.rcut_k) if self.rcut_k else scores > self.thresholds


@dataclass(frozen=True)
class DecisionRule:
    """A run's [train] section as the models use it: the method with its parameters and the thresholding.

    ``solver``, ``C``, ``positive_weight`` and ``fbr`` are the values a category keeps when [tune]
    searches none of its own (:func:`sparktc.models.tuning.candidates`).
    """

    method: str
    solver: str
    C: float
    epsilon: float
    bias: float
    positive_weight: float
    thresholding: str
    threshold: float
    fbr: float
    rcut_k: int
    folds: int
    seed: int
    rocchio_beta: float
    rocchio_gamma: float
    knn_k: int
    llsf_k: int = 500
    nb_alpha: float = 1.0
    nb_model: str = "mixture"
    nnet_hidden: int = 64
    nnet_epochs: int = 200
    nnet_l2: float = 0.0001
    nnet_learning_rate: float = 0.001

    @property
    def joint(self) -> bool:
        """Whether the method fits one model for all categories (LLSF, NNet, the naive Bayes mixture), not one
        per category: its term count and fbr are then chosen for the whole model."""
        return self.method in ("llsf", "nnet") or self.posterior_scores

    @property
    def posterior_scores(self) -> bool:
        """Whether scores are the naive Bayes mixture's log posteriors, normalized over the categories."""
        return self.method == "nb" and self.nb_model == "mixture"

    @property
    def vector_column(self) -> str:
        """The ``vectors`` column the method scores: ``counts`` (raw tf) for naive Bayes, else ``values`` (the
        scheme's weights)."""
        return VECTOR_COLUMN.get(self.method, "values")

    @property
    def cross_validated(self) -> bool:
        """Whether the thresholds are tuned by cross-validation on the training documents (SCut, SCutFBR,
        proportional)."""
        return self.thresholding in CROSS_VALIDATED

    def learned_threshold(self, scores: NDArray[np.float64], y: NDArray[np.bool_], folds: NDArray[np.int64],
                          fbr: float) -> tuple[float, dict[str, int]]:
        """A category's stored threshold and the cross-validated TP/FP/FN of its decisions, from
        out-of-fold training ``scores`` over ``folds`` (fold index per document, 0..folds-1).

        Fixed (and PCut, RCut, which decide at scoring time) keeps t = ``threshold``. SCut and SCutFBR
        (with ``fbr``; SCut never falls back) tune t_f per fold f on the fold's own scores
        (:func:`sparktc.models.thresholds.fold_thresholds`); proportional sets t_f so that the number of
        fold f's documents scoring above it is closest to p * n_f, p = mean(y) the category's share of all
        the training documents ``y`` covers (:func:`sparktc.models.thresholds.proportional_fold_thresholds`;
        Debole & Sebastiani 2005). The threshold is t = (1/k) sum_f t_f, and the documents of fold f are
        decided at the mean of the *other* folds' t_f, so that no decision is thresholded on its own label
        (REFERENCE.md section 5; LYRL2004 SCutFBR.1).
        """
        if not self.cross_validated:
            return self.threshold, counts(scores > self.threshold, y)
        fold_scores = [scores[folds == f] for f in range(self.folds)]
        if self.thresholding == "proportional":
            per_fold = proportional_fold_thresholds(fold_scores, np.count_nonzero(y) / len(y))
        else:
            per_fold = fold_thresholds(fold_scores, [y[folds == f] for f in range(self.folds)],
                                       fbr if self.thresholding == "scutfbr" else 0.0)
        others = (per_fold.sum() - per_fold) / (self.folds - 1)
        return float(per_fold.mean()), counts(scores > others[folds], y)

    def cut(self, learned: NDArray[np.float64], pcut_thresholds: Callable[[], NDArray[np.float64]]) -> Cut:
        """The cut scoring applies: the ``learned`` (stored) thresholds, PCut's over the documents being
        classified (``pcut_thresholds``, called only for PCut: it scores them all), or RCut's k."""
        if self.thresholding == "pcut":
            return Cut(pcut_thresholds())
        return Cut(learned, self.rcut_k if self.thresholding == "rcut" else 0)


def counts(decisions: NDArray[np.bool_], y: NDArray[np.bool_]) -> dict[str, int]:
    """The contingency counts TP, FP, FN of one category's decisions against its labels ``y``."""
    tp = int(np.count_nonzero(decisions & y))
    return {"tp": tp, "fp": int(np.count_nonzero(decisions)) - tp, "fn": int(np.count_nonzero(y)) - tp}


def decision_record(train: Mapping[str, Any], tune: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``metrics.json`` and ``report.md`` state of a run's decision rule, from its [train] and [tune]
    settings: ``method`` and ``thresholding``, each its name and the settings it depends on
    (:data:`METHOD_PARAMETERS`, :data:`THRESHOLDING_PARAMETERS`; a searched one as its [tune] list), and
    ``search_space``, the non-empty [tune] lists (and ``shared_positive_weight``, ``shared_fbr`` when set) with
    the folds and seed of the cross-validation choosing from them (empty: nothing searched).

    A setting the mappings lack is None, except the method and thresholding, which default as
    [train] does (:data:`METHODS`, :data:`THRESHOLDINGS`).
    """
    method, thresholding = train.get("method", METHODS[0]), train.get("thresholding", THRESHOLDINGS[0])
    searched = {key: tune[key] for key in SEARCHED if tune.get(key)}

    def parameters(keys: tuple[str, ...]) -> dict[str, Any]:
        return {key: searched.get(key, train.get(key)) for key in keys}

    space = dict(searched)
    for shared in ("shared_positive_weight", "shared_fbr"):
        if tune.get(shared):
            space[shared] = True
    if space:  # chosen from by cross-validation over the rule's folds, whatever the thresholding
        space.update(folds=train.get("folds"), seed=train.get("seed"))
    return {
        "method": {"name": method, **parameters(METHOD_PARAMETERS.get(method, ()))},
        "thresholding": {"name": thresholding, **parameters(THRESHOLDING_PARAMETERS.get(thresholding, ()))},
        "search_space": space,
    }

