"""What the two ways of fitting one model for all categories share (:mod:`~sparktc.stages.train.from_sums`,
:mod:`~sparktc.stages.train.in_tasks`): each fold's model scores its held-out documents, and one grouped task per
category sets the thresholds (:func:`joint_thresholds`), which also choose one term count, one setting of the
method's and one fbr for the whole model by cross-validated micro-F1; then the ``models`` rows of the chosen full
model (:func:`joint_models`).
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from sparktc.evaluation.metrics import f1_score
from sparktc.experiment.config import TuneConfig
from sparktc.features.matrix import TrainingSet, load_training_set
from sparktc.filesystem import KeptOne
from sparktc.models.decision import DecisionRule
from sparktc.models.llsf import document_folds
from sparktc.models.tuning import ZERO_DIVISION, averaged_f1
from sparktc.runtime.faults import inject
from sparktc.runtime.shared import Shared
from sparktc.stages.train.context import TrainContext, liblinear_options, one_task_per_category

__all__ = ["JOINT_DDL", "Choice", "FullModel", "Joint", "joint_models", "joint_settings", "joint_thresholds",
           "over_vocabulary"]


@dataclass(frozen=True)
class Choice:
    """What :func:`joint_thresholds` chose: the term count, the method's searched settings (an index into the
    run's :func:`joint_settings`) and fbr (by cross-validated micro-F1 when several were searched; each searched
    candidate's micro-F1 in ``searched``, keyed "terms/fbr" or "terms/setting=value/fbr") and per category its
    threshold, cross-validated F1 (None when nothing was cross-validated) and seconds.
    """

    terms: int
    fbr: float
    rows: dict[str, dict]
    searched: dict[str, float]
    setting: int = 0
    cv_micro_f1: float | None = None  # of the chosen candidate's cross-validated decisions


JOINT_DDL = ("category string, terms int, setting int, fbr double, threshold double, tp long, fp long, fn long, "
             "seconds double")

Joint = tuple[int, int]  # a one-model candidate: (term count, index into the run's joint_settings)


def joint_settings(rule: DecisionRule, tune: TuneConfig) -> list[dict[str, Any]]:
    """The method's own settings a one-model method searches for the whole model (the product of their [tune]
    lists, e.g. the naive Bayes mixture's ``alpha``; :attr:`sparktc.models.method.Method.searched`), [{}]
    when it searches none: each a candidate beside the term counts, chosen by cross-validated micro-F1.
    """
    names = [name for name in rule.spec.searched if hasattr(rule.parameters, name) and getattr(tune, name, None)]
    return [dict(zip(names, values)) for values in itertools.product(*(getattr(tune, name) for name in names))]


def _label(candidate: Joint, fbr: float, settings: list[dict[str, Any]]) -> str:
    shown = "".join(f"/{key}={value}" for key, value in settings[candidate[1]].items())
    return f"{candidate[0]}{shown}/{fbr}"


def joint_thresholds(context: TrainContext, categories: pd.DataFrame, fold_sets: dict[Joint, list],
                     settings: list[dict[str, Any]] | None = None) -> Choice:
    """For a method with one model for all categories (LLSF, NNet, the naive Bayes mixture): the term count, the
    setting, the fbr and the per-category thresholds (``categories``: category, train_positives). The fold models
    reach the tasks as a :class:`sparktc.runtime.shared.Shared` value.

    ``fold_sets`` maps each candidate (term count, index into ``settings``) to its fold models, fitted without each
    fold's documents (objects with ``scores(X)``, X documents x vocabulary; folds by
    :func:`sparktc.models.llsf.document_folds`). One grouped task per category scores the training documents out of
    fold and, for every candidate and every fbr of the context's (fbr moves SCutFBR's thresholds only), takes
    :meth:`DecisionRule.learned_threshold` and the cross-validated counts of its decisions. The pair chosen
    has the best ``tune.objective`` (micro-F1, or macro-F1) of those decisions over all categories (the first on
    ties): one setting for the whole model, as Yang & Liu chose one feature-set size per classifier by its global
    F1, and as a per-category choice of fbr would fit the few positives of rare categories. Without ``fold_sets`` (no
    cross-validation): the first candidate term count, the rule's fbr and its fixed threshold.
    """
    spark, rule, n_terms, train_path, fbrs = context.spark, context.rule, context.n_terms, context.train_path, \
        context.fbrs
    codes = categories["category"].tolist()
    if not fold_sets:
        return Choice(context.term_counts[0], rule.fbr, {
            code: {"threshold": rule.threshold, "cv_f1": None, "seconds": 0.0} for code in codes}, {})
    shared = Shared(list(fold_sets.values()))
    settings = settings or [{}]
    counts_of = list(fold_sets)
    index = {code: j for j, code in enumerate(codes)}

    def threshold(group: pd.DataFrame) -> pd.DataFrame:
        began = time.perf_counter()
        category = group["category"].iloc[0]
        inject("train")
        training = load_training_set(train_path, n_terms, rule.vector_column)
        scores, fold = _out_of_fold(training, shared, rule.folds, rule.seed)
        y = training.positives(category)
        found = []
        for (count, setting), candidate_scores in zip(counts_of, scores):
            for fbr in fbrs:
                value, counted = rule.learned_threshold(candidate_scores[:, index[category]], y, fold, fbr)
                found.append({"category": category, "terms": count, "setting": setting, "fbr": fbr,
                              "threshold": value, **counted})
        return pd.DataFrame(found).assign(seconds=time.perf_counter() - began)

    with one_task_per_category(spark, len(codes)):
        found = spark.createDataFrame(categories).groupBy("category").applyInPandas(threshold, JOINT_DDL).toPandas()
    pairs = [(count, setting, fbr) for count, setting in counts_of for fbr in fbrs]
    counted = {pair: rows.to_dict("records") for pair, rows in found.groupby(["terms", "setting", "fbr"])}
    figure = {pair: averaged_f1(counted[pair], context.tune.objective) for pair in pairs}
    chosen = max(pairs, key=lambda pair: (figure[pair], -pairs.index(pair)))
    kept = found[(found["terms"] == chosen[0]) & (found["setting"] == chosen[1]) & (found["fbr"] == chosen[2])]
    rows = {row.category: {"threshold": row.threshold, "seconds": row.seconds,
                           "cv_f1": float(f1_score(tp=row.tp, fp=row.fp, fn=row.fn, zero_division=ZERO_DIVISION))}
            for row in kept.itertuples()}
    return Choice(int(chosen[0]), float(chosen[2]), rows,
                  {_label((count, setting), fbr, settings): f1 for (count, setting, fbr), f1 in figure.items()},
                  int(chosen[1]), averaged_f1(counted[chosen]))


# One worker's out-of-fold scores, for the shared fold models it was computed with (their key, unique per value).
_out_of_fold_cache: KeptOne[tuple[list[np.ndarray], np.ndarray]] = KeptOne()


def _out_of_fold(training: TrainingSet, models: Shared[list[list]], folds: int,
                 seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Per candidate, the training documents x categories scores, each document's from the model of its
    fold (fitted without it); and the documents' folds. Computed once per worker for the shared ``models`` (each
    candidate's fold models), whichever categories the worker thresholds.
    """

    def compute() -> tuple[list[np.ndarray], np.ndarray]:
        fold_sets = models.value
        fold = document_folds(training.doc_ids, folds, seed)
        held = [np.flatnonzero(fold == f) for f in range(folds)]
        scores = []
        for candidate_models in fold_sets:
            parts = [model.scores(training.X[rows]) for model, rows in zip(candidate_models, held)]
            candidate = np.zeros((training.X.shape[0], parts[0].shape[1]))
            for rows, part in zip(held, parts):
                candidate[rows] = part
            scores.append(candidate)
        return scores, fold

    return _out_of_fold_cache.get((models.key,), compute)


class FullModel(NamedTuple):
    """The chosen model of all the training documents as ``models`` holds it: per category its ``weights`` over the
    vocabulary (empty for a network), its ``bias`` (per category, or one number) and the terms it has.
    """

    weights: list | np.ndarray
    bias: list | float
    features: int


def joint_models(rule: DecisionRule, categories: pd.DataFrame, chosen: Choice, full: FullModel,
                 extra: dict) -> pd.DataFrame:
    """The ``models`` rows of a method with one model for all categories: per category its threshold and what
    cross-validation ``chosen``, the ``full`` model's weights and bias, and ``extra`` in its ``choices``.
    """
    codes = categories["category"].tolist()
    rows = chosen.rows
    return pd.DataFrame({
        "category": codes, "method": rule.method, "weights": full.weights, "bias": full.bias,
        "threshold": [rows[code]["threshold"] for code in codes],
        "train_positives": categories["train_positives"].astype("int64"), "solver": None, "C": None,
        "positive_weight": None, **liblinear_options(rule), "features": full.features,
        "cv_f1": [rows[code]["cv_f1"] for code in codes],
        "choices": [json.dumps({**extra, "terms": chosen.terms, "fbr": chosen.fbr, "cv_f1": rows[code]["cv_f1"]})
                    for code in codes],
        "seconds": [rows[code]["seconds"] for code in codes],
    })


def over_vocabulary(values: np.ndarray, columns: np.ndarray, n_terms: int) -> list[list[float]]:
    """Per category, its column of ``values`` (selected terms x categories) over the whole vocabulary
    (zero outside ``columns``).
    """
    weights = np.zeros((n_terms, values.shape[1]))
    weights[columns] = values
    return [weights[:, j].tolist() for j in range(values.shape[1])]
