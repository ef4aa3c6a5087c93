"""Counting a test set's predictions in one pass: per category the documents labelled, assigned and both, and
the sums of the ranking measures, from Arrow batches of ``predictions`` (doc_id, labels, predicted,
top_categories), added up over batches in any order; and the contingency table they give.

Pure pyarrow and numpy: the evaluate stage calls :func:`count_batch` on its executors, one batch at a time,
and adds the :class:`Counts` on the driver, whose size is the category set's, not the corpus's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sparktc.errors import InputError
from sparktc.evaluation.metrics import ancestor_table
from sparktc.evaluation.ranking import ranking_measures
from sparktc.integer_sets import intersect, isin, unique

__all__ = ["FIXED_POINT", "RANKING_MEASURES", "Counts", "closure_of", "contingency_table", "count_batch",
           "ranking_names"]

RANKING_MEASURES = ("P", "R", "RP", "nDCG")
#: Per-document ranking measures are summed as integers in units of 2^-40, so the averages do
#: not depend on the order Spark adds them in (floating-point addition is not associative).
FIXED_POINT = float(2**40)


def ranking_names(ks: Sequence[int]) -> list[str]:
    """The ranking measures evaluate reports for the cut-offs ``ks``: P@K, R@K, RP@K, nDCG@K."""
    return [f"{measure}@{k}" for measure in RANKING_MEASURES for k in ks]


@dataclass(frozen=True)
class Counts:
    """What evaluate needs of a set of predictions, summed over its documents: per category (in the
    order counted) the documents labelled with it (``positives``), assigned it (``assigned``) and both
    (``tp``); the documents; and per ranking measure (:func:`ranking_names`) the sum of its
    per-document values, each rounded to an integer in units of 2^-40, so that sums do not depend on
    the order they are added in (floating-point addition is not associative). When predictions are
    closed under a hierarchy (``evaluate.close_predictions``), ``closed_assigned`` and ``closed_tp`` are
    ``assigned`` and ``tp`` over each document's closed predicted set (:meth:`closed`); None otherwise.
    """

    documents: int
    positives: np.ndarray
    assigned: np.ndarray
    tp: np.ndarray
    ranking: np.ndarray
    closed_assigned: np.ndarray | None = None
    closed_tp: np.ndarray | None = None

    @staticmethod
    def zero(n_categories: int, n_measures: int, closed: bool = False) -> Counts:
        """No document counted; with ``closed``, closed predictions counted too (none)."""
        empty = np.zeros(n_categories, dtype=np.int64)
        return Counts(0, empty, empty, empty, np.zeros(n_measures, dtype=np.int64),
                      empty if closed else None, empty if closed else None)

    def __add__(self, other: Counts) -> Counts:
        if (self.closed_assigned is None) != (other.closed_assigned is None):
            raise ValueError("cannot add counts of closed predictions to counts without them")
        closed = self.closed_assigned is not None
        return Counts(self.documents + other.documents, self.positives + other.positives,
                      self.assigned + other.assigned, self.tp + other.tp, self.ranking + other.ranking,
                      self.closed_assigned + other.closed_assigned if closed else None,
                      self.closed_tp + other.closed_tp if closed else None)

    def closed(self) -> Counts:
        """The counts of the same documents with their predictions closed under the hierarchy: the labels
        (``positives``) and the ranking measures (of the top-scoring categories) are the same, ``assigned``
        and ``tp`` are the closed ones. ValueError if closed predictions were not counted.
        """
        if self.closed_assigned is None or self.closed_tp is None:
            raise ValueError("closed predictions were not counted (count_batch without an ancestor table)")
        return Counts(self.documents, self.positives, self.closed_assigned, self.closed_tp, self.ranking)

    def ranking_averages(self, ks: Sequence[int]) -> dict[str, float]:
        """The ranking measures averaged over the documents (0 without documents)."""
        return {name: (int(total) / FIXED_POINT / self.documents if self.documents else 0.0)
                for name, total in zip(ranking_names(ks), self.ranking)}


def _positions(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Each value's position in ``value_set`` (int64), -1 where it is not there."""
    return pc.index_in(values, value_set=value_set).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _per_category(positions: np.ndarray, n_categories: int) -> np.ndarray:
    return np.bincount(positions[positions >= 0], minlength=n_categories).astype(np.int64)


def _closed_counts(rows: np.ndarray, positions: np.ndarray, labelled: np.ndarray, ancestors: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per category, the documents whose predicted set closed under the hierarchy holds it, and those of them
    labelled with it: each predicted category (``positions``, of documents ``rows``) is replaced by its row of
    ``ancestors`` (itself and its ancestors; :func:`sparktc.evaluation.metrics.ancestor_table`) and each
    (document, category) pair counted once. ``labelled``: the distinct (document, category) labels, as
    document * n_categories + position.
    """
    n_categories = len(ancestors)
    kept = positions >= 0
    implied = ancestors[positions[kept]]  # one row per predicted category: it, then its ancestors, then -1s
    documents = np.broadcast_to(rows[kept, None], implied.shape)
    present = implied >= 0
    closed = unique(documents[present] * n_categories + implied[present])
    both = intersect(closed, labelled)
    return _per_category(closed % n_categories, n_categories), _per_category(both % n_categories, n_categories)


def count_batch(predictions: pa.RecordBatch, categories: pa.Array, ks: Sequence[int],
                ancestors: np.ndarray | None = None) -> Counts:
    """The counts of a batch of predictions (labels, predicted, top_categories) over ``categories``.

    As Spark's ``explode`` and ``array_intersect`` count: a label listed twice in a document is a
    positive twice, a category both labelled and predicted is one TP per document, and a label
    outside ``categories`` is not counted. Ranking measures as :func:`sparktc.evaluation.ranking.ranking_measures`
    rate each document: its relevant categories are its distinct labels, a hit is a top category among them.
    With ``ancestors`` (:func:`sparktc.evaluation.metrics.ancestor_table` over ``categories``), the predicted
    sets are also counted closed under the hierarchy (``closed_assigned``, ``closed_tp``): a document is
    assigned each category it is predicted and each ancestor of one, once, and a TP wherever it is labelled so.
    """
    n, n_categories, k_max = len(predictions), len(categories), max(ks)
    labels = predictions.column("labels")
    encoded = pc.dictionary_encode(pc.list_flatten(labels), null_encoding="encode")
    seen = encoded.dictionary  # the batch's distinct labels, numbered
    width = max(len(seen), 1)
    category_of_seen = _positions(seen, categories)

    def elements(column: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]:
        """A list column's elements, the document of each, its place in the document's list, and its
        (document, label) key: -1 when it is none of its document's labels.
        """
        lengths = pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False)
        rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
        places = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        values = pc.list_flatten(column)
        label = _positions(values, seen)
        return values, rows, places, np.where(label >= 0, rows * width + label, -1)

    *_, label_keys = elements(labels)
    pairs = unique(label_keys)  # each (document, distinct label) once
    predicted, predicted_rows, _, predicted_keys = elements(predictions.column("predicted"))
    predicted_positions = _positions(predicted, categories)
    both = intersect(pairs, predicted_keys)
    _, rows, rank, top_keys = elements(predictions.column("top_categories"))
    kept = rank < k_max
    hits = np.zeros((n, k_max), dtype=np.bool_)  # a ranking shorter than k_max is padded with misses
    hits[rows[kept], rank[kept]] = isin(top_keys[kept], pairs)
    values = ranking_measures(hits, np.bincount(pairs // width, minlength=n), ks)
    closed_assigned = closed_tp = None
    if ancestors is not None:
        if len(ancestors) != n_categories:
            raise ValueError(f"ancestors must have one row per category; got {len(ancestors)} rows for "
                             f"{n_categories} categories")
        labelled = category_of_seen[pairs % width]
        closed_assigned, closed_tp = _closed_counts(
            predicted_rows, predicted_positions, (pairs // width * n_categories + labelled)[labelled >= 0], ancestors)
    return Counts(
        documents=n,
        positives=_per_category(category_of_seen[encoded.indices.to_numpy(zero_copy_only=False)], n_categories),
        assigned=_per_category(predicted_positions, n_categories),
        tp=_per_category(category_of_seen[both % width], n_categories),
        ranking=np.array([np.rint(values[name] * FIXED_POINT).astype(np.int64).sum() for name in ranking_names(ks)],
                         dtype=np.int64),
        closed_assigned=closed_assigned,
        closed_tp=closed_tp,
    )


def closure_of(categories: pd.DataFrame) -> np.ndarray:
    """The ancestor table ``evaluate.close_predictions`` closes predictions with, over the run's categories
    (category, parent; :func:`sparktc.evaluation.metrics.ancestor_table`); InputError naming the setting when
    no category has a parent among them (a flat category set: there is no hierarchy to close under).
    """
    ancestors = ancestor_table(categories["category"].tolist(), categories["parent"].tolist())
    if ancestors.shape[1] == 1:
        raise InputError(
            f"evaluate.close_predictions = true, but none of the {len(categories)} categories of this run has a "
            "parent among them: the category set has no hierarchy to close predictions under. Set "
            "evaluate.close_predictions = false, or evaluate a hierarchical category set (LYRL2004's topics or "
            "industries read with their hierarchy file, corpus.hierarchy)")
    return ancestors


def contingency_table(categories: pd.DataFrame, counts: Counts) -> pd.DataFrame:
    """Per category (``categories``: category, name, parent, train_positives): training and test
    positives, and TP, FP, FN, TN over the documents ``counts`` counted.
    """
    table = categories.copy()
    table["test_positives"] = counts.positives
    table["tp"] = counts.tp
    table["fp"] = counts.assigned - counts.tp
    table["fn"] = counts.positives - counts.tp
    table["tn"] = counts.documents - counts.positives - counts.assigned + counts.tp
    return table
