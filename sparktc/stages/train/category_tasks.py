"""The grouped Spark tasks that fit one model per category, for both ways of fitting that have one
(:mod:`~sparktc.stages.train.per_category`, :mod:`~sparktc.stages.train.neighbours`): what differs between them is
only the fit of one category on a worker (a :data:`CategoryFit`).

A task is a group of category names (a grouped pandas UDF over a small DataFrame of categories), not the training
data: each Python worker loads the training split of ``vectors`` once
(:func:`sparktc.features.matrix.load_training_set`) and fits every category of the tasks Spark gives it, writing
their rows with pyarrow, so the matrix is never replicated per category and nothing proportional to the corpus
reaches the driver. Weights are stored over the whole vocabulary (zero for terms outside the selection), so scoring
needs no term mapping. A setting searched for all categories at once (kNN's term count,
``tune.shared_positive_weight``, ``tune.shared_fbr``) takes a first pass that returns every category's
cross-validated counts, summed by the driver into micro-F1 per value (:func:`train_categories`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from sparktc.errors import InputError
from sparktc.experiment.config import TuneConfig
from sparktc.features.matrix import TrainingSet, load_training_set
from sparktc.models.decision import SHARED
from sparktc.models.scoring import validation_rows
from sparktc.models.tuning import Candidate, CategoryModel, pooled_micro_f1, shared_value
from sparktc.runtime import session
from sparktc.runtime.faults import inject
from sparktc.runtime.groups import in_groups
from sparktc.runtime.parts import read_small, remove_unfinished, write_parts
from sparktc.runtime.resources import out_of_memory
from sparktc.stages.train.context import MODELS_SCHEMA, TrainContext, Trained, liblinear_options

__all__ = ["SEARCH_TASKS_PER_CORE", "CategoryFit", "CategoryFits", "Decide", "category_costs", "category_tasks",
           "fit_models", "shared_settings", "train_categories"]

#: One category's fit on a worker: (its training set, the category, its 0/1 labels y, the validation rows or None)
#: -> (its model, the ``choices`` its ``models`` row records).
CategoryFit = Callable[[TrainingSet, str, np.ndarray, "np.ndarray | None"], tuple[CategoryModel, dict]]

#: A way of fitting's :data:`CategoryFit` for a context, a search space and the thresholds and counts already
#: decided across categories (None: none). Built on the driver, it takes what its tasks need out of the context.
CategoryFits = Callable[[TrainContext, list[Candidate], "dict[str, tuple[float, dict]] | None"], CategoryFit]

#: Thresholds set across categories before the fit (micromacro): (context, the candidate, the categories' costs)
#: -> (each category's threshold and cross-validated counts, the order the categories were visited in).
Decide = Callable[[TrainContext, Candidate, dict[str, float]], tuple[dict[str, tuple[float, dict]], list[str]]]

#: Tasks per core when a category's fit is many fits (cross-validation folds, a grid, a validation split): each task
#: ending moves the stage's progress line and its estimate (16 tasks of 103 SVM.2 categories on 2 cores, not 4 tasks
#: with no estimate for the first 10 minutes); the training set is read once per worker process whatever the tasks.
SEARCH_TASKS_PER_CORE = 8


def category_tasks(context: TrainContext, categories: int, searched: bool) -> int:
    """How many tasks fit the categories: :data:`~sparktc.runtime.session.TASKS_PER_CORE` per core, or
    :data:`SEARCH_TASKS_PER_CORE` per core when each category's fit is a search (``searched``); at most one per
    category.
    """
    per_core = SEARCH_TASKS_PER_CORE if searched else session.TASKS_PER_CORE
    return max(1, min(categories, per_core * session.cores(context.spark)))


def category_costs(context: TrainContext) -> dict[str, float]:
    """Each category's estimated cost to fit (by name, in name order), known before any fit: the training
    documents, which every fit of every category visits, plus the category's training positives, whose share of the
    solver's work grows with them (the biggest categories go to different tasks).
    """
    categories = read_small(context.tables.input("categories"), ["category", "train_positives"]).sort_by("category")
    return {code: float(context.documents + (positives or 0)) for code, positives in
            zip(categories["category"].to_pylist(), categories["train_positives"].to_pylist())}


def fit_models(context: TrainContext, fit_one: CategoryFit, space: list[Candidate], costs: dict[str, float],
               directory: str | None = None) -> list[str]:
    """Fit every category on the workers' training set with ``fit_one``, in grouped pandas UDF tasks of categories
    balanced by their estimated ``costs`` (:func:`category_costs`; :func:`sparktc.runtime.groups.in_groups`; how
    many tasks: :func:`category_tasks`). Each task writes its ``models`` rows with pyarrow into ``directory`` (the
    JVM never converts the weights: only the categories' ``choices`` come back); without a directory (a shared
    setting's first pass) the rows are not kept. The categories' ``choices`` JSON, in category order.
    """
    rule, n_terms, train_path = context.rule, context.n_terms, context.train_path
    codes = list(costs)
    tasks = category_tasks(context, len(codes), rule.cross_validated or bool(rule.validation) or len(space) > 1)
    liblinear = liblinear_options(rule)

    def fit(category: str) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            inject("train")
            training = load_training_set(train_path, n_terms, rule.vector_column)
            y = training.positives(category)
            held = validation_rows(train_path, n_terms, rule.validation, rule.seed) if rule.validation else None
            model, choices = fit_one(training, category, y, held)
        except MemoryError:
            raise out_of_memory("train", f"category {category}, training set {train_path}") from None
        choice = model.choice
        return {"category": category, "method": rule.method, "weights": model.weights, "bias": model.bias,
                "threshold": model.threshold, "train_positives": int(y.sum()), "solver": choice.solver,
                "C": choice.C, "positive_weight": choice.positive_weight, **liblinear,
                "features": choice.terms or n_terms, "cv_f1": model.cv_f1, "choices": json.dumps(choices),
                "seconds": time.perf_counter() - started}

    def work(index: int, categories: list[str]) -> list[str]:
        rows = pa.Table.from_pylist([fit(category) for category in categories], schema=MODELS_SCHEMA)
        if directory is not None:
            write_parts(rows.to_batches(), MODELS_SCHEMA, directory, index)
        return rows["choices"].to_pylist()

    if directory is not None and not codes:  # the table still has its schema
        write_parts([], MODELS_SCHEMA, directory, 0)
    groups = in_groups(context.spark, codes, list(costs.values()), tasks, work, (InputError,))
    if directory is not None:
        remove_unfinished(directory)
    chosen = {category: choices for categories, found in groups for category, choices in zip(categories, found)}
    return [chosen[category] for category in codes]


def shared_settings(tune: TuneConfig, always: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The searched settings chosen once for all categories by cross-validated micro-F1, () for none: the one
    [tune] shares (:data:`sparktc.models.decision.SHARED`), or those of ``always`` searched (kNN's ``terms``, one
    similarity space, and ``fbr``, as a per-category fbr would fit the few positives of rare categories), together.
    """
    for shared in SHARED:
        if getattr(tune, f"shared_{shared}", False):
            return (shared,)
    return tuple(key for key in always if len(getattr(tune, key)) > 1)


def _choose_shared(context: TrainContext, fits: CategoryFits, keys: tuple[str, ...], costs: dict[str, float],
                   details: dict[str, Any]) -> TrainContext:
    """The first pass of the settings ``keys`` shared by all categories (:func:`shared_settings`): every category's
    cross-validated counts for every value (one row per category back), the values chosen by the summed counts; the
    context with them, their figures in ``details``.
    """
    rule, tune = context.rule, context.tune
    space = context.candidates()
    searched = [json.loads(choices)["searched"] for choices in fit_models(context, fits(context, space, None), space,
                                                                          costs)]
    values, figure = shared_value(searched, keys, tune.objective)
    for key, value in zip(keys, values):
        if key == "terms":
            tune = dataclasses.replace(tune, terms=[int(value)])
        else:
            rule = rule.with_setting(key, value)
            tune = dataclasses.replace(tune, **{key: []})
        details[f"shared_{key}"] = {"chosen": value, f"cv_{tune.objective}": {
            "/".join(map(str, each)): f1 for each, f1 in figure.items()}}
    return context.with_search(rule, tune)


def train_categories(context: TrainContext, fits: CategoryFits, always_shared: tuple[str, ...] = (),
                     decide: Decide | None = None) -> Trained:
    """Fit one model per category into ``models`` with the way of fitting's ``fits``: after the first pass of the
    settings shared by all categories (:func:`shared_settings`, with ``always_shared``), if any, and, when the rule
    sets thresholds across categories, ``decide``'s thresholds (micromacro, which the configuration allows for
    per-category models only; it searches nothing, so never follows a first pass).
    """
    costs, details = category_costs(context), {}
    keys = shared_settings(context.tune, always_shared)
    if keys:
        context = _choose_shared(context, fits, keys, costs, details)
    decided = None
    if decide is not None and context.rule.across_categories:
        decided, visited = decide(context, context.candidates()[0], costs)
        details["visiting_order"] = visited
    space = context.candidates()
    chosen = fit_models(context, fits(context, space, decided), space, costs, context.tables.output("models"))
    details["cv_micro_f1"] = pooled_micro_f1([json.loads(choices) for choices in chosen])
    return Trained(context.rule, len(space), details)
