"""The rank stage and term selection as a Spark ML Estimator: :class:`TermSelector` ranks the terms of the rows it
fits on by a term-selection score and its :class:`TermSelectorModel` keeps the best ``topK`` of each vector.

The fit is the rank stage's (:mod:`sparktc.stages.rank`): A(t, c), df(t) and N counted in Spark tasks over the
vectors' term ids and the labels (:func:`sparktc.ml.counts.labelled_counts`), |c| from the labels, the scores
:func:`~sparktc.features.term_selection.term_scores`' and the order
:func:`~sparktc.features.term_selection.rank_order`'s, as :func:`sparktc.experiment.tables.term_order` reads the
run's ``term_ranks``; the terms kept, :func:`~sparktc.features.term_selection.top_terms`, as train selects them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.ml.linalg import VectorUDT
from pyspark.sql import DataFrame
from pyspark.sql.types import StructField

from sparktc.errors import InputError
from sparktc.features.term_selection import (
    rank_order,
    score_column,
    term_scores,
    top_k_from_reduction_factor,
    top_terms,
)
from sparktc.ml.counts import labelled_counts
from sparktc.ml.params import (
    LABELS,
    HasFeaturesCol,
    HasLabelsCol,
    HasOutputCol,
    HasRankScore,
    SetsRanking,
    check_column,
    check_output_column,
    label_codes,
    label_lists,
    setting_default,
    setting_param,
)
from sparktc.ml.persistence import Persistent, PersistentModel
from sparktc.ml.vectors import appended, is_vector, vector_array, vector_lists

__all__ = ["TermSelector", "TermSelectorModel"]


class _SelectorParams(HasFeaturesCol, HasLabelsCol, HasOutputCol, HasRankScore):
    """The Params of :class:`TermSelector` and its model."""

    topK = setting_param("select", "top_k", "topK", "the best-ranked terms kept (0: all)")
    reductionFactor = setting_param("select", "reduction_factor", "reductionFactor",
                                    "the share of the terms dropped when topK is 0 (0: none)")

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(featuresCol="features", labelsCol="labels", outputCol="selected",
                         score=setting_default("rank", "score"), globalScore=setting_default("rank", "global_score"),
                         topK=setting_default("select", "top_k"),
                         reductionFactor=setting_default("select", "reduction_factor"))

    def getTopK(self) -> int:
        """The terms kept (0: all, or the reduction factor's count)."""
        return self.getOrDefault(self.topK)

    def getReductionFactor(self) -> float:
        """The share of the terms dropped when topK is 0."""
        return self.getOrDefault(self.reductionFactor)

    def setTopK(self, value: int) -> Any:
        """Set ``topK`` (a Model keeps that many of its order)."""
        return self._set(topK=value)

    def setReductionFactor(self, value: float) -> Any:
        """Set ``reductionFactor``."""
        return self._set(reductionFactor=value)


class TermSelector(Estimator, _SelectorParams, SetsRanking, Persistent):
    """Vectors (``featuresCol``, Spark ML vectors: :class:`~sparktc.ml.weighting.TermWeighting`'s, or any) and
    labels (``labelsCol``: category codes, array<string>, or indices, array<double>) -> ``outputCol``, the same
    vectors with only the ``topK`` best-ranked terms (0: all, or ``reductionFactor``'s share dropped) by ``score``
    (chi2 | ig | gr, [rank] score) under ``globalScore`` (max | avg | mean). A row holds a term when its vector has
    an entry for it (a sparse vector's indices, a dense vector's nonzero values). Fit it on the training documents
    only. Its Model sets the columns, ``topK`` and ``reductionFactor`` (how many of its order it keeps), not what
    ranked the terms.

    Example::

        selector = TermSelector(featuresCol="features", labelsCol="labels", topK=2000, score="chi2")
        model = selector.fit(train)
        model.order[:10]                  # the ten best term ids
        model.transform(test).select("selected")
    """

    @keyword_only
    def __init__(self, *, featuresCol: str = "features", labelsCol: str = "labels", outputCol: str = "selected",
                 score: str | None = None, globalScore: str | None = None, topK: int | None = None,
                 reductionFactor: float | None = None) -> None:
        super().__init__()
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, featuresCol: str | None = None, labelsCol: str | None = None, outputCol: str | None = None,
                  score: str | None = None, globalScore: str | None = None, topK: int | None = None,
                  reductionFactor: float | None = None) -> TermSelector:
        """Set the Params given."""
        return self._set(**self._input_kwargs)

    def _fit(self, dataset: DataFrame) -> TermSelectorModel:
        self.checked()
        check_column(self, dataset, "featuresCol", is_vector, "Spark ML vectors (VectorUDT)")
        check_column(self, dataset, "labelsCol", label_lists, LABELS)
        features, labels = self.getFeaturesCol(), self.getLabelsCol()
        n_train, df, codes, n_positive, counts = labelled_counts(
            dataset.select(features, label_codes(dataset, labels).alias(labels)), [features, labels], _held)
        if not n_train:
            raise InputError("TermSelector: no rows to fit on: ranking needs the training documents' vectors")
        if not codes:
            raise InputError(f"TermSelector: no label in {self.getLabelsCol()!r}: the scores compare the terms' "
                             "documents with each category's; give the training documents' category codes")
        column = score_column(self.getScore(), self.getGlobalScore())
        scores = term_scores(counts, df, n_positive, n_train, (column,))[column]
        model = TermSelectorModel._of(rank_order(np.arange(len(df)), scores), scores)
        return self._copyValues(model)


def _held(vectors: pa.Array) -> tuple[pa.ListArray, int]:
    """Each vector's term ids (:func:`~sparktc.ml.vectors.vector_lists`) and their number, the vectors' size; a
    ValueError for vectors of several sizes.
    """
    found = pc.coalesce(pc.struct_field(vectors, "size"), pc.list_value_length(pc.struct_field(vectors, "values")))
    sizes = pc.unique(pc.drop_null(found)).to_pylist()
    if len(sizes) > 1:
        raise ValueError(f"TermSelector: vectors of sizes {sizes}: give vectors over one vocabulary")
    return vector_lists(vectors)[0], sizes[0] if sizes else 0


class TermSelectorModel(Model, _SelectorParams, PersistentModel):
    """A fitted :class:`TermSelector`: ``order``, every term id from the best score down (ties by term id), as
    :func:`sparktc.experiment.tables.term_order` reads a run's ``term_ranks``, and each term's ``scores``; its
    transform keeps each vector's entries of the ``selected`` terms.
    """

    _columns = ("term_id", "score")

    def __init__(self) -> None:
        super().__init__()
        self.order = np.zeros(0, dtype=np.int64)
        self.scores = np.zeros(0)

    @classmethod
    def _of(cls, order: np.ndarray, scores: np.ndarray) -> TermSelectorModel:
        model = cls()
        model.order, model.scores = np.asarray(order, dtype=np.int64), np.asarray(scores, dtype=np.float64)
        return model

    @property
    def selected(self) -> np.ndarray:
        """The term ids kept, ascending (:func:`~sparktc.features.term_selection.top_terms`)."""
        n_terms = len(self.order)
        keep = self.getTopK() or (top_k_from_reduction_factor(n_terms, self.getReductionFactor())
                                  if self.getReductionFactor() else 0)
        chosen = top_terms(self.order, keep)
        return np.arange(n_terms, dtype=np.int64) if chosen is None else chosen

    def _data(self) -> tuple[pa.Table, None]:
        return pa.table({"term_id": pa.array(np.arange(len(self.scores), dtype=np.int32)),
                         "score": pa.array(self.scores)}), None

    @classmethod
    def _from_data(cls, table: pa.Table, extra: None) -> TermSelectorModel:
        table = table.sort_by("term_id")
        scores = table["score"].to_numpy()
        return cls._of(rank_order(table["term_id"].to_numpy(), scores), scores)

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        check_column(self, dataset, "featuresCol", is_vector, "Spark ML vectors (VectorUDT)")
        output = check_output_column(self, dataset)
        n_terms = len(self.order)
        kept = np.zeros(n_terms, dtype=bool)
        kept[self.selected] = True

        column = self.getFeaturesCol()

        def select(batch: pa.RecordBatch) -> list[pa.Array]:
            indices, values = vector_lists(batch.column(column))
            ids = pc.list_flatten(indices).to_numpy(zero_copy_only=False)
            if len(ids) and ids.max() >= n_terms:
                raise ValueError(f"TermSelector: a vector of more than the {n_terms} terms fitted on: give vectors "
                                 "over the vocabulary it was fitted on")
            keep = kept[ids]
            rows = pc.list_parent_indices(indices).to_numpy(zero_copy_only=False)[keep]
            offsets = np.zeros(len(batch) + 1, dtype=np.int32)
            np.cumsum(np.bincount(rows, minlength=len(batch)), out=offsets[1:])
            flat = pc.list_flatten(values).to_numpy(zero_copy_only=False)
            return [vector_array(pa.ListArray.from_arrays(pa.array(offsets), pa.array(ids[keep].astype(np.int32))),
                                 pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat[keep])), n_terms)]

        return appended(dataset, [StructField(output, VectorUDT())], select)
