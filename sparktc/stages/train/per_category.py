"""Fitting :class:`~sparktc.models.method.PerCategory`: LIBLINEAR, Rocchio, scikit-learn's logistic regression or
one-against-the-rest naive Bayes (over the raw term frequencies, the ``counts`` of ``vectors``), one model per
category in the grouped tasks of :mod:`~sparktc.stages.train.category_tasks`, chosen and thresholded by
cross-validation on the training data when the configuration asks for it (:mod:`sparktc.models.tuning`), each by
the run's decision rule (:mod:`sparktc.models.decision`); micromacro's thresholds are set across the categories
first (:func:`micromacro_decisions`).
"""

from __future__ import annotations

import io

import numpy as np

from sparktc.errors import InputError
from sparktc.features.matrix import TrainingSet, load_training_set
from sparktc.filesystem import arrow_filesystem
from sparktc.models.decision import cross_validated_counts
from sparktc.models.method import PerCategory
from sparktc.models.micromacro import label_order, micromacro_thresholds, visiting_order
from sparktc.models.tuning import Candidate, CategoryModel, category_folds, fit_category, out_of_fold_scores
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.groups import in_groups
from sparktc.runtime.parts import map_parts
from sparktc.stages.train.category_tasks import CategoryFit, category_tasks, train_categories
from sparktc.stages.train.context import TrainContext, Trained, save_arrays

__all__ = ["category_fit", "micromacro_decisions", "train_per_category"]


def category_fit(context: TrainContext, space: list[Candidate],
                 decided: dict[str, tuple[float, dict]] | None) -> CategoryFit:
    """A category's model (:func:`sparktc.models.tuning.fit_category`) over the candidates ``space``: on the fold
    file's folds when one is given and nothing was ``decided``, else with the category's threshold and
    cross-validated counts already set across categories (:func:`micromacro_decisions`).
    """
    rule, order = context.rule, context.order

    def fit(training: TrainingSet, category: str, y: np.ndarray,
            held: np.ndarray | None) -> tuple[CategoryModel, dict]:
        folds = category_folds(rule, category, y, training.doc_ids) if rule.fold_file and decided is None else None
        model = fit_category(training.X, y, order.value, space, rule, held, folds,
                             None if decided is None else decided[category])
        return model, model.choices()

    return fit


def micromacro_decisions(context: TrainContext, candidate: Candidate,
                         costs: dict[str, float]) -> tuple[dict[str, tuple[float, dict]], list[str]]:
    """Every category's threshold and cross-validated counts by micromacro (:mod:`sparktc.models.micromacro`), and
    the order it visited the categories in.

    The fold fits and out-of-fold scores are per category: grouped tasks of categories balanced by ``costs`` (as
    :func:`~sparktc.stages.train.category_tasks.fit_models`) each save their categories' scores, labels and folds
    beside the stage's outputs. The pass over them is sequential, so one task reads them all (categories x training
    documents numbers: 19 MB for 101 categories and 23,149 training documents) and only the thresholds and counts
    reach the driver. The counts are those of each fold's documents decided at the mean of the other folds'
    thresholds, as for the other cross-validated thresholdings.
    """
    spark, rule, n_terms, order, train_path = context.spark, context.rule, context.n_terms, context.order, \
        context.train_path
    codes = list(costs)
    tasks = category_tasks(context, len(codes), True)
    scratch = context.tables.output("models") + "-scores"

    def scores(index: int, categories: list[str]) -> list[str]:
        inject("train")
        training = load_training_set(train_path, n_terms, rule.vector_column)
        kept: dict[str, list[np.ndarray]] = {"scores": [], "y": [], "folds": []}
        for category in categories:
            y = training.positives(category)
            folds = category_folds(rule, category, y, training.doc_ids)
            kept["scores"].append(out_of_fold_scores(training.X, y, order.value, [candidate], rule,
                                                     folds)[candidate.model])
            kept["y"].append(y)
            kept["folds"].append(folds)
        return [save_arrays(scratch, f"scores-{index}.npz", {
            "categories": np.array(categories, dtype=str), **{key: np.array(value) for key, value in kept.items()}})]

    def visit(index: int, paths: list[str]) -> tuple[dict[str, tuple[float, dict]], list[str]]:
        filesystem, _ = arrow_filesystem(scratch)
        found: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for path in paths:
            with filesystem.open_input_file(path) as handle, np.load(io.BytesIO(handle.read())) as saved:
                for j, category in enumerate(saved["categories"].tolist()):
                    found[category] = (saved["scores"][j], saved["y"][j], saved["folds"][j])
        # LibMultiLabel's classes are the labels of training documents: the others, last, change no other threshold.
        labels = label_order([code for code in found if found[code][1].any()])
        visited = [labels[j] for j in visiting_order([int(found[code][1].sum()) for code in labels])]
        visited += label_order([code for code in found if not found[code][1].any()])
        decided = {}
        for code, (threshold, per_fold) in zip(visited, micromacro_thresholds([found[c] for c in visited],
                                                                                 rule.folds)):
            values, y, folds = found[code]
            decided[code] = (threshold, cross_validated_counts(values, y, folds, per_fold))
        return decided, visited

    try:
        paths = [path for _, saved in in_groups(spark, codes, list(costs.values()), tasks, scores, (InputError,))
                 for path in saved]
        return map_parts(spark, [paths], visit)[0]
    finally:
        storage.delete(spark, scratch)


def train_per_category(context: TrainContext, fitting: PerCategory) -> Trained:
    """One model per category (module docstring); the trainer is ``fitting``'s, which the tuning asks the rule for."""
    return train_categories(context, category_fit, decide=micromacro_decisions)
