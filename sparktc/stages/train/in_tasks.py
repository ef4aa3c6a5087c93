"""Fitting :class:`~sparktc.models.method.InTasks`: NNet (:mod:`sparktc.models.nnet`) and LLSF over more than
:data:`~sparktc.models.llsf.MAX_GRAM_TERMS` terms (by the truncated SVD of X), one model for all categories
trained on the whole training matrix: the full one and one per fold, in parallel Spark tasks that each load the
training set (:func:`fit_in_tasks`), whose fold models' out-of-fold scores set the thresholds
(:func:`~sparktc.stages.train.joint.joint_thresholds`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sparktc.errors import InputError
from sparktc.experiment.bundle import MODEL, NETWORK
from sparktc.features.matrix import TrainingSet, load_training_set
from sparktc.models.llsf import document_folds
from sparktc.models.method import InTasks
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import map_parts
from sparktc.runtime.resources import out_of_memory
from sparktc.stages.train.context import MODELS_TYPE, TrainContext, Trained, categories_table, selected_columns
from sparktc.stages.train.joint import Choice, FullModel, joint_models, joint_thresholds, over_vocabulary

__all__ = ["Unit", "fit_in_tasks", "train_in_tasks"]


def _fold_rows(training: TrainingSet, folds: int, seed: int, fold: int) -> np.ndarray:
    """The training rows a model of unit ``fold`` is fitted on: all but the fold's (fold < folds), or all;
    an empty fold is refused as in :func:`sparktc.stages.train.from_sums.summed_training`.
    """
    if fold == folds:
        return np.ones(training.X.shape[0], dtype=np.bool_)
    rows = document_folds(training.doc_ids, folds, seed) != fold
    if rows.all():
        raise InputError(f"train.folds = {folds}: fold {fold} of the {len(rows)} training documents is empty; "
                         "lower train.folds")
    return rows


Unit = tuple[int, int]  # (candidate term count, fold); fold = folds: the model of all training documents


def fit_in_tasks(context: TrainContext, categories: pd.DataFrame, fitting: InTasks,
                 keep: Callable[[str], Any]) -> tuple[Choice, int, dict[Unit, dict], Any]:
    """A one-model method that trains on the whole training matrix, one Spark task per unit: per candidate term
    count, one model per cross-validation fold (when the thresholds are cross-validated or several counts are
    searched) and the full one. Each task loads the training set on its worker and calls
    ``fitting.fit_one(X, Y, columns, directory, seed)`` on its rows (X documents x vocabulary, Y documents x
    categories 0/1, the selected term ids), which saves the model in ``directory`` (a file, not through the JVM) and
    returns what to report. ``fitting.saved(directory)`` is a fold model that scores from there
    (:func:`~sparktc.stages.train.joint.joint_thresholds` chooses with them); ``keep(directory)`` takes the chosen
    full model out before the scratch directory ``models-<method>`` is deleted.

    Returns the choice, the folds, what each task reported (with its terms, documents and seconds) and
    what ``keep`` returned.
    """
    spark, rule, n_terms, terms, train_path = context.spark, context.rule, context.n_terms, context.term_counts, \
        context.train_path
    name, order, fit_one, saved = rule.method, context.order.value, fitting.fit_one, fitting.saved
    codes = categories["category"].tolist()
    folds = rule.folds if rule.cross_validated or len(terms) > 1 else 0
    scratch = context.tables.output("models") + f"-{name}"
    units = [(count, f) for count in terms for f in range(folds + 1)]
    directory = {unit: storage.join(scratch, f"terms-{unit[0]}", f"fold-{unit[1]}") for unit in units}

    def fit(index: int, unit: Unit) -> dict:
        began = time.perf_counter()
        inject("train")
        count, f = unit
        training = load_training_set(train_path, n_terms)
        rows = _fold_rows(training, folds, rule.seed, f)
        columns = selected_columns(order, count, n_terms)
        Y = np.column_stack([training.positives(code)[rows] for code in codes]) if codes else \
            np.zeros((int(rows.sum()), 0), dtype=np.bool_)
        try:
            reported = fit_one(training.X[rows], Y, columns, directory[unit], rule.seed)
        except MemoryError:
            raise out_of_memory("train", f"the {name} model over {len(columns):_} terms, training set {train_path}") \
                from None
        return {**reported, "terms": len(columns), "documents": int(rows.sum()),
                "seconds": round(time.perf_counter() - began, 3)}

    try:
        fitted = dict(zip(units, map_parts(spark, units, fit, errors=(InputError,))))
        fold_sets = {(count, 0): [saved(directory[(count, f)]) for f in range(folds)] for count in terms} if folds \
            else {}
        chosen = joint_thresholds(context, categories, fold_sets)
        kept = keep(directory[(chosen.terms, folds)])
    finally:
        storage.delete(spark, scratch)
    return chosen, folds, fitted, kept


def _unit_seconds(fitted: dict[Unit, dict], folds: int) -> dict[str, float]:
    return {f"{count}/{'all' if f == folds else f}": result["seconds"] for (count, f), result in fitted.items()}


def train_in_tasks(context: TrainContext, fitting: InTasks) -> Trained:
    """The models of a method fitted on the whole training matrix (one row per category, as the per-category tasks
    write them) and what the stage reports: per candidate term count, the full model and, with cross-validated
    thresholds or several candidates, ``rule.folds`` more, each without one fold's documents, all in parallel tasks
    (:func:`fit_in_tasks`), whose out-of-fold scores choose the term count and set the thresholds. The chosen full
    model either moves into the bundle as its network (no weights in ``models``) or gives its weights.
    Cost per model: that of ``fitting.fit_one`` on one worker holding the training set.
    """
    spark, rule, n_terms = context.spark, context.rule, context.n_terms
    name = rule.method
    categories = categories_table(context)
    network = storage.join(context.tables.output(MODEL), NETWORK)

    def keep_network(directory: str) -> None:
        storage.rename(spark, directory, network)

    keep = keep_network if fitting.keep_as_network else fitting.weights
    chosen, folds, fitted, kept = fit_in_tasks(context, categories, fitting, keep)
    full = fitted[(chosen.terms, folds)]
    reported = {key: value for key, value in full.items() if key not in ("terms", "documents", "seconds")}
    weights = [[] for _ in range(len(categories))] if fitting.keep_as_network else over_vocabulary(
        kept[1], kept[0], n_terms)
    models = joint_models(rule, categories, chosen, FullModel(weights, 0.0, full["terms"]),
                          {**rule.parameters.record(), **reported})
    details = {**rule.parameters.record(), f"{name}_fitting": "tasks", f"{name}_terms": full["terms"],
               **{f"{name}_{key}": value for key, value in reported.items()},
               f"{name}_train_documents": full["documents"], f"{name}_folds": folds,
               f"{name}_seconds": full["seconds"], f"{name}_model_seconds": _unit_seconds(fitted, folds),
               "searched": chosen.searched, "chosen_fbr": chosen.fbr, "cv_micro_f1": chosen.cv_micro_f1}
    spark.createDataFrame(models, MODELS_TYPE).write.mode("overwrite").parquet(context.tables.output("models"))
    return Trained(rule, len(context.candidates()), details)
