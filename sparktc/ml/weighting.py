"""The weight stage as a Spark ML Estimator: :class:`TermWeighting` fits the vocabulary and each term's global
factor on the rows given (the training documents), :class:`TermWeightingModel` weights terms into Spark ML vectors.

The fit is the weight stage's (:mod:`sparktc.stages.weight`): each term's df and occurrences counted in Spark tasks
(:func:`sparktc.ml.counts.term_counts`, the stage's :func:`~sparktc.features.weighting.token_counts`), the
vocabulary the terms in order of their names (:func:`~sparktc.features.weighting.vocabulary_of`) cut by ``minDf``
and ``maxFeatures`` (:func:`~sparktc.stages.weight.vocabulary_kept`), the factors
:func:`~sparktc.features.weighting.term_factors`'s (for ``supervised``, the [rank] score counted over the rows'
labels as the stage counts it). The transform is the stage's too
(:func:`~sparktc.features.weighting.term_vectors`, an Arrow batch at a time, :func:`sparktc.ml.vectors.appended`):
the same rows give the job's term ids, in the job's order, and the job's weights (stored float32 by the job, widened
to the vectors' doubles here).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.ml.linalg import VectorUDT
from pyspark.sql import DataFrame
from pyspark.sql.types import StructField

from sparktc.errors import InputError
from sparktc.features.term_selection import score_column, term_scores
from sparktc.features.weighting import GIVEN, term_factors, term_vectors, vocabulary_of
from sparktc.ml.counts import labelled_counts, stored_lists, term_counts
from sparktc.ml.params import (
    LABELS,
    HasInputCol,
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
    string_lists,
)
from sparktc.ml.persistence import Persistent, PersistentModel
from sparktc.ml.vectors import appended, vector_array
from sparktc.stages.weight import held_terms, vocabulary_kept

__all__ = ["TermWeighting", "TermWeightingModel"]


#: What TermWeighting cannot take of [weight], and why ([rank]'s: params.NOT_A_SCORE).
NOT_WEIGHTS = {GIVEN: "is a vector corpus's features as read: TermWeighting weights terms; give vectors to the next "
                      "stage instead (ArraysToVector)"}


class _WeightingParams(HasInputCol, HasOutputCol, HasLabelsCol, HasRankScore):
    """The Params of :class:`TermWeighting` and its model."""

    scheme = setting_param("weight", "scheme", "scheme", "the weighting scheme: ltc, tfidf, sklearn, binary or "
                           "supervised", refused=NOT_WEIGHTS)
    minDf = setting_param("select", "min_df", "minDf", "the vocabulary's terms are in at least this many rows")
    maxFeatures = setting_param("select", "top_k", "maxFeatures", "of those, the most frequent this many (0: all; "
                                "rank.score = \"frequency\" with select.top_k)")

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(inputCol="terms", outputCol="features", labelsCol="labels",
                         scheme=setting_default("weight", "scheme"), minDf=setting_default("select", "min_df"),
                         maxFeatures=0, score=setting_default("rank", "score"),
                         globalScore=setting_default("rank", "global_score"))

    def getScheme(self) -> str:
        """The weighting scheme."""
        return self.getOrDefault(self.scheme)

    def getMinDf(self) -> int:
        """The least df of a vocabulary term."""
        return self.getOrDefault(self.minDf)

    def getMaxFeatures(self) -> int:
        """The vocabulary's most frequent terms kept (0: all)."""
        return self.getOrDefault(self.maxFeatures)


class TermWeighting(Estimator, _WeightingParams, SetsRanking, Persistent):
    """Terms (``inputCol``, array<string>: an :class:`~sparktc.ml.text.Analyzer`'s, or any) -> ``outputCol``,
    sparse Spark ML vectors over the vocabulary fitted on the rows given, as the weight stage makes them.

    Params: ``scheme`` (ltc | tfidf | sklearn | binary | supervised, [weight] scheme), ``minDf`` (select.min_df),
    ``maxFeatures`` (the most frequent terms, 0 for all: rank.score = "frequency" with select.top_k), and for
    ``supervised`` the ``labelsCol`` (category codes, array<string>, or indices, array<double>), ``score`` and
    ``globalScore`` ([rank]). Fit it on the training documents only. Its Model sets only the columns: the rest made
    the vocabulary and factors it holds.

    Example::

        weighting = TermWeighting(inputCol="terms", outputCol="features", scheme="ltc")
        model = weighting.fit(train)          # the vocabulary and idf of the training rows
        model.vocabulary[:3], model.idf[:3]
        model.transform(test).select("features")
    """

    @keyword_only
    def __init__(self, *, inputCol: str = "terms", outputCol: str = "features", scheme: str | None = None,
                 minDf: int | None = None, maxFeatures: int | None = None, labelsCol: str = "labels",
                 score: str | None = None, globalScore: str | None = None) -> None:
        super().__init__()
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, inputCol: str | None = None, outputCol: str | None = None, scheme: str | None = None,
                  minDf: int | None = None, maxFeatures: int | None = None, labelsCol: str | None = None,
                  score: str | None = None, globalScore: str | None = None) -> TermWeighting:
        """Set the Params given."""
        return self._set(**self._input_kwargs)

    def setScheme(self, value: str) -> TermWeighting:
        """Set ``scheme``."""
        return self._set(scheme=value)

    def setMinDf(self, value: int) -> TermWeighting:
        """Set ``minDf``."""
        return self._set(minDf=value)

    def setMaxFeatures(self, value: int) -> TermWeighting:
        """Set ``maxFeatures``."""
        return self._set(maxFeatures=value)

    def _fit(self, dataset: DataFrame) -> TermWeightingModel:
        self.checked()
        supervised = self.getScheme() == "supervised"
        check_column(self, dataset, "inputCol", string_lists, "terms (array<string>)")
        if supervised:
            check_column(self, dataset, "labelsCol", label_lists, LABELS)
        n_train, counted = term_counts(dataset, self.getInputCol())
        if n_train == 0:
            raise InputError(f"TermWeighting: no rows to fit on: weighting ({self.getScheme()}) needs N and df from "
                             "the training documents")
        vocabulary = vocabulary_kept(vocabulary_of([counted]), self.getMinDf(), self.getMaxFeatures(),
                                     setting="minDf (select.min_df)")
        df = vocabulary["df"].to_numpy().astype(np.int64)
        scores = self._scores(dataset, vocabulary["term"].combine_chunks(), df, n_train) if supervised else None
        model = TermWeightingModel._of(vocabulary.select(["term", "df", "frequency"]),
                                       term_factors(self.getScheme(), df, n_train, scores), n_train)
        return self._copyValues(model)

    def _scores(self, dataset: DataFrame, terms: pa.StringArray, df: np.ndarray, n_train: int) -> np.ndarray:
        """Each vocabulary term's [rank] score over the rows' labels, as the weight stage counts it."""
        terms_column, labels = self.getInputCol(), self.getLabelsCol()
        _, _, _, n_positive, counts = labelled_counts(
            dataset.select(terms_column, label_codes(dataset, labels).alias(labels)), [terms_column, labels],
            lambda lists: (held_terms(stored_lists(lists), terms), len(terms)))
        column = score_column(self.getScore(), self.getGlobalScore())
        return term_scores(counts, df, n_positive, n_train, (column,))[column]


class TermWeightingModel(Model, _WeightingParams, PersistentModel):
    """A fitted :class:`TermWeighting`: the vocabulary (``vocabulary``, its terms in term id order; ``df``;
    ``frequency``), each term's global factor (``idf``: what the weight stage's ``vocabulary.idf`` holds) and the
    number of rows fitted on (``documents``); its transform weights ``inputCol``'s terms into ``outputCol``'s
    vectors of ``len(vocabulary)``, terms outside the vocabulary dropped.
    """

    _columns = ("term", "df", "frequency", "idf")

    def __init__(self) -> None:
        super().__init__()
        self._table = pa.table({"term": pa.array([], pa.string()), "df": pa.array([], pa.int64()),
                                "frequency": pa.array([], pa.int64()), "idf": pa.array([], pa.float64())})
        self.documents = 0

    @classmethod
    def _of(cls, vocabulary: pa.Table, factors: np.ndarray, documents: int) -> TermWeightingModel:
        model = cls()
        model._table = vocabulary.append_column("idf", pa.array(factors, pa.float64())).combine_chunks()
        model.documents = documents
        return model

    @property
    def vocabulary(self) -> list[str]:
        """The vocabulary's terms, in term id order (a term's id is its position)."""
        return self._table["term"].to_pylist()

    @property
    def df(self) -> np.ndarray:
        """Each term's df over the rows fitted on."""
        return self._table["df"].to_numpy()

    @property
    def frequency(self) -> np.ndarray:
        """Each term's occurrences over the rows fitted on."""
        return self._table["frequency"].to_numpy()

    @property
    def idf(self) -> np.ndarray:
        """Each term's global factor (ln(N / df) for ltc; the score for supervised)."""
        return self._table["idf"].to_numpy()

    def _data(self) -> tuple[pa.Table, int]:
        return self._table, self.documents

    @classmethod
    def _from_data(cls, table: pa.Table, extra: int) -> TermWeightingModel:
        return cls._of(table.select(["term", "df", "frequency"]), table["idf"].to_numpy(), int(extra))

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        check_column(self, dataset, "inputCol", string_lists, "terms (array<string>)")
        output = check_output_column(self, dataset)
        terms, factors, scheme = self._table["term"].combine_chunks(), self.idf, self.getScheme()
        column = self.getInputCol()

        def weighted(batch: pa.RecordBatch) -> list[pa.Array]:
            indices, values, _ = term_vectors(stored_lists(batch.column(column)), terms, factors, scheme)
            return [vector_array(indices, values, len(terms))]

        return appended(dataset, [StructField(output, VectorUDT())], weighted)
