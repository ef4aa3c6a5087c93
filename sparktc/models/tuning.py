"""One category's classifier, chosen and thresholded by k-fold cross-validation on training data only.

For a search space of candidates (solver, C, positive weight, number of chi-square-ranked terms)
each candidate gets out-of-fold decision values over folds balanced for positives; its
per-fold thresholds come from SCut, LYRL2004's SCutFBR or proportional thresholding (Debole &
Sebastiani 2005) on that fold's validation scores, and its cross-validated F1 scores every fold's
documents with the mean threshold of the *other* folds, so no decision is thresholded on its own
label. The best candidate (first on ties) is retrained on all training documents and gets the mean
of its fold thresholds (REFERENCE.md section 5; Lewis et al. 2004 section 7; LibMultiLabel's
per-label search). With a validation set Va instead (``train.validation``; Debole & Sebastiani 2005),
every candidate learns from the training documents minus Va, is chosen and thresholded on Va's
scores, and keeps that model: no retraining on Va. The method, the thresholding and the values not
searched come from the run's :class:`~sparktc.models.decision.DecisionRule`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.evaluation.metrics import EMPTY_F1, f1_score
from sparktc.features.term_selection import top_terms
from sparktc.models.decision import DecisionRule
from sparktc.models.fold_file import load_fold_file
from sparktc.models.knn import knn_scores_from_neighbours
from sparktc.models.method import Fit, SearchLists
from sparktc.models.thresholds import balanced_folds


@dataclass(frozen=True)
class Candidate:
    """One point of the search space; ``terms`` = 0 keeps every term. ``solver``, ``C`` and ``positive_weight``
    are None for a method that has none of them (its ``searched``).
    """

    solver: str | None
    C: float | None
    positive_weight: float | None
    terms: int
    fbr: float

    @property
    def model(self) -> tuple:
        """What the trained model depends on (fbr only moves the threshold)."""
        return self.solver, self.C, self.positive_weight, self.terms


@dataclass
class CategoryModel:
    """One category's trained model: its weights over the whole vocabulary, bias and threshold, the candidate chosen,
    its cross-validated F1 and every candidate searched.
    """

    weights: NDArray[np.float64]  # over the whole vocabulary
    bias: float
    threshold: float
    choice: Candidate
    cv_f1: float | None  # None when nothing was cross-validated
    searched: list[dict]  # every candidate with its cross-validated F1
    cv_counts: dict[str, int] | None = None  # the chosen candidate's cross-validated TP, FP, FN

    def choices(self) -> dict:
        """What the category's record states of the choice: the chosen candidate's settings, its cross-validated F1 and
        counts, and every candidate searched.
        """
        return {**asdict(self.choice), "cv_f1": self.cv_f1, "cv_counts": self.cv_counts, "searched": self.searched}


def candidates(rule: DecisionRule, tune: SearchLists, terms: int) -> list[Candidate]:
    """The search space: every combination of the [tune] lists, the rule's value where a list is empty
    (``terms`` for the number of terms); solver, C and positive weight only for a method that searches them
    (:attr:`sparktc.models.method.Method.searched`; LIBLINEAR).
    """
    def values(name: str, kind: type) -> list:
        if name not in rule.spec.searched:
            return [None]
        return [kind(value) for value in getattr(tune, name) or [getattr(rule.parameters, name)]]

    return [Candidate(*point) for point in itertools.product(
        values("solver", str), values("C", float), values("positive_weight", float), tune.terms or [terms],
        [float(f) for f in tune.fbr or [rule.fbr]])]


def needs_cross_validation(rule: DecisionRule, space: Sequence[Candidate]) -> bool:
    """Whether a category is cross-validated: for its thresholds (SCut, SCutFBR, proportional) or to choose from
    ``space``.
    """
    return rule.cross_validated or len(space) > 1


#: Cross-validated F1 when TP = FP = FN = 0 (no positive, none assigned): perfect, as LYRL2004 counts it.
ZERO_DIVISION = EMPTY_F1


def _trainer(rule: DecisionRule, X: sparse.csr_matrix, columns: NDArray[np.int64] | None,
             rows: NDArray[np.bool_] | None = None) -> Fit:
    """A function (y, candidate) -> (w, b) over ``X[rows][:, columns]`` for the rule's method (its
    :class:`~sparktc.models.method.PerCategory` trainer; the whole matrix ``X`` keyed for reuse).
    """
    Xc = X if columns is None else X[:, columns]
    if rows is not None:
        Xc = Xc[rows]
    reuse = None if rows is not None else (X, None if columns is None else columns.tobytes())
    return rule.spec.fitting(rule.parameters, 0).trainer(rule.parameters, Xc, reuse)


def category_folds(rule: DecisionRule, category: str, y: NDArray[np.bool_],
                   doc_ids: Sequence[str]) -> NDArray[np.int64]:
    """Each training document's fold for ``category`` (labels ``y``, documents ``doc_ids``): the rule's fold file's
    (:mod:`sparktc.models.fold_file`), else folds balanced for positives drawn with the rule's seed.
    """
    given = load_fold_file(rule.fold_file, rule.folds).folds(category, doc_ids, int(np.count_nonzero(y))) \
        if rule.fold_file else None
    return balanced_folds(y, rule.folds, rule.seed) if given is None else given


def out_of_fold_scores(X: sparse.csr_matrix, y: NDArray[np.bool_], term_order: NDArray[np.int64],
                       space: Sequence[Candidate], rule: DecisionRule,
                       folds: NDArray[np.int64]) -> dict[tuple, NDArray[np.float64]]:
    """Each candidate model's out-of-fold scores of the training documents: fold f's from the model trained on
    the documents of the other folds (``folds``: each document's fold, 0..rule.folds-1).
    """
    return _held_out_scores(X, y, term_order, space, rule, [folds == fold for fold in range(rule.folds)])[0]


def _held_out_scores(X: sparse.csr_matrix, y: NDArray[np.bool_], term_order: NDArray[np.int64],
                     space: Sequence[Candidate], rule: DecisionRule, held_out: Sequence[NDArray[np.bool_]],
                     ) -> tuple[dict[tuple, NDArray[np.float64]], dict[tuple, tuple]]:
    """Each candidate model's scores of every held-out set of rows (``held_out``: masks) from its model of the other
    rows, and the (w, b) of each candidate's model of the last set's other rows.
    """
    scores = {candidate.model: np.empty(len(y)) for candidate in space}
    fitted: dict[tuple, tuple] = {}
    for terms, group in itertools.groupby(sorted({c.model: c for c in space}.values(), key=lambda c: c.terms),
                                          key=lambda c: c.terms):
        group = list(group)
        columns = top_terms(term_order, terms)
        Xc = X if columns is None else X[:, columns]
        for held in held_out:
            fit = _trainer(rule, X, columns, rows=~held)
            for candidate in group:
                w, b = fitted[candidate.model] = fit(y[~held], candidate)
                scores[candidate.model][held] = Xc[held] @ w + b
    return scores, fitted


def validation_scores(X: sparse.csr_matrix, y: NDArray[np.bool_], term_order: NDArray[np.int64],
                      space: Sequence[Candidate], rule: DecisionRule,
                      validation: NDArray[np.bool_]) -> tuple[dict[tuple, NDArray[np.float64]], dict[tuple, tuple]]:
    """Each candidate model's scores of the validation set Va (``validation``: True for its rows; the other rows'
    entries are unset), from its model of Tr - Va, and those models ((w, b) by candidate model).
    """
    return _held_out_scores(X, y, term_order, space, rule, [validation])


def fit_category(
    X: sparse.csr_matrix, y: NDArray[np.bool_], term_order: NDArray[np.int64], space: Sequence[Candidate],
    rule: DecisionRule, validation: NDArray[np.bool_] | None = None, folds: NDArray[np.int64] | None = None,
    decided: tuple[float, dict[str, int]] | None = None,
) -> CategoryModel:
    """Choose among ``space`` by cross-validation (when needed), then train on all of ``X``; the threshold
    is the rule's (:meth:`~sparktc.models.decision.DecisionRule.learned_threshold`). ``folds``: the documents'
    folds when given (``train.fold_file``), else balanced for positives. ``decided``: the threshold and
    cross-validated counts set across categories (micromacro), for the one candidate of ``space``. With
    ``validation`` (True for the rows of the validation set Va, :func:`sparktc.models.thresholds.validation_split`),
    instead, every candidate learns from the other rows only, is chosen and thresholded on Va's scores
    (:meth:`~sparktc.models.decision.DecisionRule.validation_threshold`), and the chosen one's model is kept
    (Debole & Sebastiani 2005).
    """
    best, threshold, cv_f1, searched, cv_counts = space[0], rule.threshold, None, [], None
    learnt = np.ones(len(y), dtype=np.bool_) if validation is None else ~validation
    fitted: dict[tuple, tuple] = {}  # with Va: each candidate's model, already the one to keep
    if decided is not None:
        threshold, cv_counts = decided
        cv_f1 = f1_score(**cv_counts, zero_division=ZERO_DIVISION)
    elif needs_cross_validation(rule, space):
        if validation is None:
            folds = balanced_folds(y, rule.folds, rule.seed) if folds is None else folds
            out_of_fold = out_of_fold_scores(X, y, term_order, space, rule, folds)
        else:
            out_of_fold, fitted = validation_scores(X, y, term_order, space, rule, validation)
        best_f1 = -1.0
        for candidate in space:
            scores = out_of_fold[candidate.model]
            candidate_threshold, counts = (
                rule.learned_threshold(scores, y, folds, candidate.fbr) if folds is not None else
                rule.validation_threshold(scores[validation], y[validation], float(np.mean(y[learnt])), candidate.fbr))
            score = f1_score(**counts, zero_division=ZERO_DIVISION)
            searched.append({**asdict(candidate), "cv_f1": score, **counts})
            if score > best_f1:
                best, threshold, cv_f1, best_f1, cv_counts = candidate, candidate_threshold, score, score, counts
    columns = top_terms(term_order, best.terms)
    w, b = fitted[best.model] if best.model in fitted else _trainer(
        rule, X, columns, rows=None if validation is None else learnt)(y[learnt], best)
    weights = w if columns is None else np.zeros(X.shape[1])
    if columns is not None:
        weights[columns] = w
    return CategoryModel(weights, b, threshold, best, cv_f1, searched, cv_counts)


def knn_threshold(scores: NDArray[np.float64], y: NDArray[np.bool_], rule: DecisionRule,
                  fbr: float | None = None) -> tuple[float, dict[str, int]]:
    """A kNN category's threshold and the TP/FP/FN of its decisions from leave-one-out training scores: the
    rule's fixed threshold (its decisions on those scores), or SCut, SCutFBR (with ``fbr``, the rule's by default)
    or proportional over balanced folds (their cross-validated decisions).
    """
    folds = balanced_folds(y, rule.folds, rule.seed) if rule.cross_validated else np.zeros(len(y), dtype=np.int64)
    return rule.learned_threshold(scores, y, folds, rule.fbr if fbr is None else fbr)


def knn_category(neighbourhoods: Sequence[tuple[NDArray[np.int64], NDArray[np.float64]]], y: NDArray[np.bool_],
                 space: Sequence[Candidate], rule: DecisionRule,
                 validation: NDArray[np.bool_] | None = None) -> CategoryModel:
    """A kNN category from each candidate's leave-one-out neighbours of the training documents (one per
    candidate of ``space``, over its terms): the threshold of :func:`knn_threshold`, and the candidate of
    best F1 over those decisions (the first on ties; kNN's term count and fbr are chosen for all categories
    at once by the train stage, from every category's ``searched`` counts). kNN has no weights. With
    ``validation`` (True for the rows of Va), the neighbourhoods are Va's documents' among the other rows
    (row numbers among those), and the threshold is set on Va's scores
    (:meth:`~sparktc.models.decision.DecisionRule.validation_threshold`; Debole & Sebastiani 2005).
    """
    searched, best = [], None
    learnt = None if validation is None else y[~validation]
    for candidate, (neighbours, similarities) in zip(space, neighbourhoods):
        if learnt is None:
            scores = knn_scores_from_neighbours(neighbours, similarities, y[:, None])[:, 0]
            threshold, counts = knn_threshold(scores, y, rule, candidate.fbr)
        else:
            scores = knn_scores_from_neighbours(neighbours, similarities, learnt[:, None])[:, 0]
            threshold, counts = rule.validation_threshold(scores, y[validation], float(np.mean(learnt)),
                                                          candidate.fbr)
        f1 = f1_score(**counts, zero_division=ZERO_DIVISION)
        searched.append({**asdict(candidate), "cv_f1": f1, **counts})
        if best is None or f1 > best[0]:
            best = (f1, threshold, candidate, counts)
    validated = needs_cross_validation(rule, space)
    return CategoryModel(np.zeros(0), 0.0, best[1], best[2], best[0] if validated else None,
                         searched if len(space) > 1 else [], best[3] if validated else None)


def pooled_micro_f1(choices: Sequence[dict]) -> float | None:
    """Micro-F1 of the categories' cross-validated decisions (each category's chosen candidate's TP, FP, FN summed
    over categories, REFERENCE.md section 6): the run's one figure on the training documents, None when nothing
    was cross-validated.
    """
    counted = [choice["cv_counts"] for choice in choices if choice.get("cv_counts")]
    return averaged_f1(counted) if counted else None


#: What a setting chosen for all categories maximises over their cross-validated decisions (``tune.objective``).
OBJECTIVES = ("micro_f1", "macro_f1")


def averaged_f1(counted: Sequence[Mapping[str, int]], objective: str = "micro_f1") -> float:
    """Micro-F1 (the categories' TP, FP, FN summed, then F1) or macro-F1 (the mean of their F1s) of categories'
    cross-validated counts (REFERENCE.md section 6; F1 of 0/0 is :data:`ZERO_DIVISION`).
    """
    if objective == "macro_f1":
        return float(np.mean([f1_score(c["tp"], c["fp"], c["fn"], ZERO_DIVISION) for c in counted]))
    return f1_score(*(sum(c[count] for c in counted) for count in ("tp", "fp", "fn")), ZERO_DIVISION)


def shared_value(searched_per_category: list[list[dict]], key: str | tuple[str, ...],
                 objective: str = "micro_f1") -> tuple[Any, dict[Any, float]]:
    """The one value of the searched setting ``key`` (``positive_weight``, ``fbr``), or the one tuple of values of
    several (kNN's ``("terms", "fbr")``), for all categories with the best cross-validated ``objective`` (micro-F1
    or macro-F1; first on ties), and that figure of every value.

    Each category's ``searched`` list holds its candidates' cross-validated TP, FP, FN (:func:`averaged_f1`).
    """
    def value_of(row: dict) -> Any:
        return tuple(row[k] for k in key) if isinstance(key, tuple) else row[key]

    counted: dict[Any, list[dict]] = {}
    for searched in searched_per_category:
        for row in searched:
            counted.setdefault(value_of(row), []).append(row)
    figure = {value: averaged_f1(rows, objective) for value, rows in counted.items()}
    best = max(figure, key=lambda value: (figure[value], -list(figure).index(value)))
    return best, figure
