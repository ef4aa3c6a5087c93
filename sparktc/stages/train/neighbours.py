"""Fitting :class:`~sparktc.models.method.Neighbours`: kNN's thresholds from leave-one-out scores, per category in
the grouped tasks of :mod:`~sparktc.stages.train.category_tasks` (:func:`sparktc.models.tuning.knn_category`). Each
worker finds every training document's k nearest other training documents once per candidate term selection
(:func:`training_neighbours`); the term count and fbr, when searched, are chosen for all categories at once.
"""

from __future__ import annotations

import numpy as np

from sparktc.features.matrix import TrainingSet, load_training_set
from sparktc.filesystem import per_worker
from sparktc.models.knn import columns_of, knn_topk, selected_space, selection_key
from sparktc.models.method import Neighbours
from sparktc.models.scoring import validation_rows
from sparktc.models.tuning import Candidate, CategoryModel, knn_category
from sparktc.stages.train.category_tasks import CategoryFit, train_categories
from sparktc.stages.train.context import TrainContext, Trained

__all__ = ["neighbours_fit", "train_neighbours", "training_neighbours"]


@per_worker
def training_neighbours(path: str, n_features: int, k: int, selections: tuple[bytes, ...], validation: float,
                        seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every training document's k nearest other training documents (leave-one-out), over each of the
    ``selections`` (selected term ids as int64 bytes; empty: every term), once per worker. With ``validation``
    > 0, those of each document of the validation set Va among Tr - Va instead (row numbers among Tr - Va).
    """
    X = load_training_set(path, n_features).X
    held = validation_rows(path, n_features, validation, seed)
    found = []
    for selection in selections:
        space = selected_space(X, columns_of(selection))
        found.append(knn_topk(space[held], space[~held], k) if validation
                     else knn_topk(space, space, k, exclude_self=np.arange(X.shape[0])))
    return found


def neighbours_fit(context: TrainContext, space: list[Candidate],
                   decided: dict[str, tuple[float, dict]] | None) -> CategoryFit:
    """A category's kNN model over the candidates ``space``, from the worker's neighbours of each candidate's term
    selection (an fbr searched shares its terms' neighbours); its ``choices`` name k. kNN sets no threshold across
    categories (``decided`` is None).
    """
    rule, n_terms, order, train_path = context.rule, context.n_terms, context.order, context.train_path
    k = rule.spec.fitting(rule.parameters, n_terms).k

    def fit(training: TrainingSet, category: str, y: np.ndarray,
            held: np.ndarray | None) -> tuple[CategoryModel, dict]:
        selections = [selection_key(order.value, candidate.terms) for candidate in space]
        distinct = tuple(dict.fromkeys(selections))
        found = dict(zip(distinct, training_neighbours(train_path, n_terms, k, distinct, rule.validation, rule.seed)))
        model = knn_category([found[key] for key in selections], y, space, rule, held)
        return model, {**model.choices(), "k": k}

    return fit


def train_neighbours(context: TrainContext, fitting: Neighbours) -> Trained:
    """The categories of kNN (module docstring), its term count and fbr shared by all of them when searched."""
    return train_categories(context, neighbours_fit, always_shared=("terms", "fbr"))
