"""The decision rule: how a run scores documents and turns the scores into assignments (REFERENCE.md section 5).

A method scores document d for category c, s(d, c): each method's module says how, and declares its
parameters (:mod:`sparktc.models.registry` lists them: LIBLINEAR, Rocchio, kNN, LLSF, naive Bayes, NNet).

A thresholding turns the scores into assignments, strictly: d gets c <=> s(d, c) > t_c
(:mod:`sparktc.models.thresholds`). The thresholds are set either

* when training, one per category, stored with its model (:meth:`DecisionRule.learned_threshold`):
  ``fixed``, t_c = ``threshold``; ``scut`` and ``scutfbr``, t_c = the mean over ``folds`` folds of the
  training documents, balanced for positives (seed ``seed``) or read from ``fold_file``
  (:mod:`sparktc.models.fold_file`), of each fold's SCut threshold on its
  out-of-fold scores (SCutFBR: the fold's top score when its best F1 is below ``fbr``; LYRL2004);
  ``proportional``, the same mean of each fold's threshold assigning the number of its documents
  closest to c's training share of them (Debole & Sebastiani 2005; Yang 2001); with ``validation`` > 0,
  instead, on one validation set Va of that share of the training documents, held out from training
  (:meth:`DecisionRule.validation_threshold`; Debole & Sebastiani 2005); ``micromacro``, LibMultiLabel's
  thresholding (Lin & Lin 2023): the categories visited from the most frequent, each fold's threshold maximising
  micro-F1 over the categories visited + the category's share of macro-F1, the mean over the folds
  (:mod:`sparktc.models.micromacro`; one pass over every category's out-of-fold scores); or
* when scoring, from the scores of the documents being classified (:meth:`DecisionRule.cut`):
  ``pcut``, t_c = the score ranked just below c's training share of the documents (Yang 2001);
  ``rcut``, no threshold: each document gets its ``rcut_k`` best categories (Yang 2001).

Pure numpy: the train stage, the evaluate stage and the classification of new documents all decide
through :class:`DecisionRule`, built from the [train] section by ``TrainConfig.decision_rule``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sparktc.models.method import POSTERIOR, Method, ScoreRange
from sparktc.models.registry import METHODS, upgraded, upgraded_method
from sparktc.models.thresholds import fold_thresholds, proportional, proportional_fold_thresholds, rcut

__all__ = ["ACROSS_CATEGORIES", "CROSS_VALIDATED", "SEARCHED", "SHARED", "THRESHOLDINGS", "THRESHOLDING_PARAMETERS",
           "THRESHOLDING_TITLES", "Cut", "DecisionRule", "counts", "cross_validated_counts", "decision_record",
           "rule_title", "score_range"]

#: The thresholdings, the first the default.
THRESHOLDINGS = ("fixed", "scut", "scutfbr", "proportional", "pcut", "rcut", "micromacro")
#: The thresholdings as the papers name them, in figure titles (:func:`rule_title`; Yang 2001's SCut, SCutFBR, PCut,
#: RCut; LibMultiLabel's micromacro-freq).
THRESHOLDING_TITLES = {"fixed": "fixed threshold", "scut": "SCut", "scutfbr": "SCutFBR", "proportional": "proportional",
                       "pcut": "PCut", "rcut": "RCut", "micromacro": "micromacro-freq"}
#: The setting a thresholding's title shows with it, and how.
_TITLE_SETTINGS = {"fixed": ("threshold", "{title} {value:g}"), "scutfbr": ("fbr", "{title} (fbr {value:g})"),
                   "rcut": ("rcut_k", "{title} (k = {value:g})")}
#: Thresholdings whose per-category thresholds are tuned by cross-validation on the training documents.
CROSS_VALIDATED = ("scut", "scutfbr", "proportional", "micromacro")
#: Cross-validated thresholdings that set a category's threshold from the other categories' too, in one pass
#: over every category's out-of-fold scores (:mod:`sparktc.models.micromacro`).
ACROSS_CATEGORIES = ("micromacro",)
#: What each thresholding depends on, by its [train] name: what a run's record states.
THRESHOLDING_PARAMETERS = {
    "fixed": ("threshold",), "scut": ("folds", "seed"), "scutfbr": ("fbr", "folds", "seed"),
    "proportional": ("folds", "seed"), "pcut": (), "rcut": ("rcut_k",), "micromacro": ("folds", "seed"),
}
#: The [tune] lists a category chooses from by cross-validation (an empty one keeps the [train] value).
SEARCHED = ("solver", "C", "positive_weight", "terms", "fbr")
#: The searched settings [tune] can choose once for all categories by cross-validated micro-F1 instead
#: (``tune.shared_<name>``), in the order a run looks for them; at most one is shared.
SHARED = ("positive_weight", "fbr", "C", "terms")


def score_range(rule: DecisionRule, nonnegative_features: bool) -> ScoreRange:
    """The range of ``rule``'s scores and its natural fixed threshold (its method's ``score_range``);
    ``nonnegative_features``: the document vectors have no negative value (every weighting scheme; given vectors
    may have some).
    """
    return rule.spec.score_range(rule.parameters, nonnegative_features)


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
    """A run's [train] section as the models use it: the method with its own parameters (an instance of its
    :class:`~sparktc.models.method.Method`'s ``parameters``) and the thresholding with what it depends on.
    """

    method: str
    parameters: Any
    thresholding: str = THRESHOLDINGS[0]
    threshold: float = 0.0
    fbr: float = 0.1
    rcut_k: int = 1
    folds: int = 5
    seed: int = 0
    validation: float = 0.0  # Va's share of the training documents; 0: cross-validation over ``folds``
    fold_file: str = ""

    @staticmethod
    def of(train: Mapping[str, Any]) -> DecisionRule:
        """The rule of a [train] section's settings: its method's table (``train[method]``, its parameters; the
        other methods' tables are not its) and the thresholding's settings.
        """
        spec = METHODS[train["method"]]
        parameters = spec.parameters(**train.get(train["method"], {}))
        common = {field.name: train[field.name] for field in dataclasses.fields(DecisionRule)
                  if field.name not in ("method", "parameters") and field.name in train}
        return DecisionRule(train["method"], parameters, **common)

    def with_setting(self, key: str, value: Any) -> DecisionRule:
        """The rule with [train] setting ``key`` set to ``value``: one of the thresholding's, or of the method's
        parameters (a value chosen for all categories by cross-validation: ``tune.shared_positive_weight``).
        """
        if key in {field.name for field in dataclasses.fields(self.parameters)}:
            return dataclasses.replace(self, parameters=dataclasses.replace(self.parameters, **{key: value}))
        return dataclasses.replace(self, **{key: value})

    @property
    def spec(self) -> Method:
        """The method's declaration (:mod:`sparktc.models.registry`)."""
        return METHODS[self.method]

    @property
    def joint(self) -> bool:
        """Whether the method fits one model for all categories (LLSF, NNet, the naive Bayes mixture), not one
        per category: its term count and fbr are then chosen for the whole model.
        """
        return self.spec.joint(self.parameters)

    @property
    def posterior_scores(self) -> bool:
        """Whether scores are posteriors P(c|d), normalized over the categories (the naive Bayes mixture)."""
        return self.spec.scoring(self.parameters).kind == POSTERIOR

    @property
    def vector_column(self) -> str:
        """The ``vectors`` column the method scores: ``counts`` (raw tf) or ``values`` (the scheme's weights)."""
        return self.spec.vector_column

    @property
    def cross_validated(self) -> bool:
        """Whether the thresholds are tuned by cross-validation on the training documents (SCut, SCutFBR,
        proportional).
        """
        return self.thresholding in CROSS_VALIDATED

    @property
    def across_categories(self) -> bool:
        """Whether a category's threshold depends on the other categories' out-of-fold scores (micromacro): set in
        one pass over all of them (:func:`sparktc.models.micromacro.micromacro_thresholds`), not category by category.
        """
        return self.thresholding in ACROSS_CATEGORIES

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
        if self.across_categories:
            raise ValueError(f"train.thresholding = {self.thresholding!r} sets thresholds across categories "
                             "(sparktc.models.micromacro), not one category at a time")
        fold_scores = [scores[folds == f] for f in range(self.folds)]
        if self.thresholding == "proportional":
            per_fold = proportional_fold_thresholds(fold_scores, np.count_nonzero(y) / len(y))
        else:
            per_fold = fold_thresholds(fold_scores, [y[folds == f] for f in range(self.folds)],
                                       fbr if self.thresholding == "scutfbr" else 0.0)
        return float(per_fold.mean()), cross_validated_counts(scores, y, folds, per_fold)

    def validation_threshold(self, scores: NDArray[np.float64], y: NDArray[np.bool_], share: float,
                             fbr: float) -> tuple[float, dict[str, int]]:
        """A category's threshold set on a validation set Va held out from training, and the TP/FP/FN of its
        decisions on Va (Debole & Sebastiani 2005: classifiers learnt on Tr - Va, each threshold optimized on Va):
        ``scores`` and ``y`` are Va's, ``share`` the category's share of the documents the model learnt from
        (Tr - Va; proportional's "proportion of training examples"). SCut and SCutFBR (with ``fbr``): Va's SCut
        threshold, Va's top score when its F1 is below ``fbr``; proportional: the threshold assigning the number of
        Va's documents closest to share * |Va|; fixed keeps ``threshold``. Unlike the cross-validated counts, Va's
        are decided at a threshold set on Va's own labels (optimistic for SCut and SCutFBR).
        """
        if not self.cross_validated:
            return self.threshold, counts(scores > self.threshold, y)
        if self.thresholding == "proportional":
            threshold = proportional(scores, share)
        else:
            threshold = float(fold_thresholds([scores], [y], fbr if self.thresholding == "scutfbr" else 0.0)[0])
        return threshold, counts(scores > threshold, y)

    def cut(self, learned: NDArray[np.float64], pcut_thresholds: Callable[[], NDArray[np.float64]]) -> Cut:
        """The cut scoring applies: the ``learned`` (stored) thresholds, PCut's over the documents being
        classified (``pcut_thresholds``, called only for PCut: it scores them all), or RCut's k.
        """
        if self.thresholding == "pcut":
            return Cut(pcut_thresholds())
        return Cut(learned, self.rcut_k if self.thresholding == "rcut" else 0)


def counts(decisions: NDArray[np.bool_], y: NDArray[np.bool_]) -> dict[str, int]:
    """The contingency counts TP, FP, FN of one category's decisions against its labels ``y``."""
    tp = int(np.count_nonzero(decisions & y))
    return {"tp": tp, "fp": int(np.count_nonzero(decisions)) - tp, "fn": int(np.count_nonzero(y)) - tp}


def cross_validated_counts(scores: NDArray[np.float64], y: NDArray[np.bool_], folds: NDArray[np.int64],
                           per_fold: NDArray[np.float64]) -> dict[str, int]:
    """TP, FP, FN of out-of-fold ``scores`` with each fold f's documents decided at the mean of the *other* folds'
    thresholds ``per_fold`` (t_f per fold), so that no decision is thresholded on its own label.
    """
    others = (per_fold.sum() - per_fold) / (len(per_fold) - 1)
    return counts(scores > others[folds], y)


def decision_record(train: Mapping[str, Any], tune: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``metrics.json`` and ``report.md`` state of a run's decision rule, from its [train] and [tune]
    settings: ``method`` and ``thresholding``, each its name and the settings it depends on
    (its method's parameters, :data:`THRESHOLDING_PARAMETERS`; a searched one as its [tune] list), and
    ``search_space``, the non-empty [tune] lists (and ``shared_<setting>`` of :data:`SHARED` when set) with
    the folds and seed of the cross-validation choosing from them (empty: nothing searched); ``validation``, in
    both the thresholding's (a tuned one) and the search space's, when a validation set is held out instead.

    A setting the mappings lack is None, except the method and thresholding, which default as
    [train] does (:data:`sparktc.models.registry.METHODS`, :data:`THRESHOLDINGS`).
    """
    train, tune = upgraded("train", train), upgraded("tune", tune)  # a bundle written before read as one now
    method, thresholding = train.get("method", next(iter(METHODS))), train.get("thresholding", THRESHOLDINGS[0])
    own = train.get(method) or {}
    tune = {**{key: value for key, value in tune.items() if not isinstance(value, Mapping)}, **(tune.get(method) or {})}
    searched = {key: tune[key] for key in SEARCHED if tune.get(key)}

    def parameters(keys: tuple[str, ...]) -> dict[str, Any]:
        return {key: searched.get(key, own.get(key)) for key in keys}

    def setting(key: str) -> Any:
        return searched.get(key, train.get(key))

    # A validation set replaces the folds where one is held out (train.validation > 0): recorded only then.
    validation = {"validation": train["validation"]} if train.get("validation") else {}
    space = dict(searched)
    given_folds = {"fold_file": train["fold_file"]} if train.get("fold_file") else {}
    for shared in SHARED:
        if tune.get(f"shared_{shared}"):
            space[f"shared_{shared}"] = True
    if space:  # chosen from by cross-validation over the rule's folds (or on its validation set), whatever thresholding
        space.update(folds=train.get("folds"), seed=train.get("seed"), **validation, **given_folds)
    return {
        "method": {"name": method, **parameters(tuple(
            field.name for field in dataclasses.fields(METHODS[method].parameters)) if method in METHODS else ())},
        "thresholding": {"name": thresholding,
                         **{key: setting(key) for key in THRESHOLDING_PARAMETERS.get(thresholding, ())},
                         **(validation if thresholding in CROSS_VALIDATED else {}),
                         **(given_folds if thresholding in CROSS_VALIDATED else {})},
        "search_space": space,
    }


def rule_title(record: Mapping[str, Any]) -> str:
    """A run's decision rule as a figure's title names it, from ``method`` and ``thresholding`` as
    :func:`decision_record` writes them: the method's label (:meth:`sparktc.models.method.Method.label`) and the
    thresholding's title (:data:`THRESHOLDING_TITLES`) with the one setting that tells its variants apart, when it
    is a single value: "SVM (LIBLINEAR -s 1), SCut"; "kNN, fixed threshold 0.1"; "Rocchio, RCut (k = 1)".
    """
    method = upgraded_method(record.get("method") or {"name": next(iter(METHODS))})
    thresholding = record.get("thresholding") or {"name": THRESHOLDINGS[0]}
    spec = METHODS.get(method["name"])
    name = thresholding["name"]
    title = THRESHOLDING_TITLES.get(name, name)
    key, form = _TITLE_SETTINGS.get(name, ("", ""))
    value = thresholding.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):  # not a searched list
        title = form.format(title=title, value=value)
    return f"{spec.label(method) if spec else method['name']}, {title}"
