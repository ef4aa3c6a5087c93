"""What every way of fitting shares: the :class:`TrainContext` the stage's functions take instead of the same
long argument lists, what a way of fitting reports back (:class:`Trained`), the ``models`` table's schema and the
small helpers over the term ranking, scratch files and Spark's shuffle settings.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.records import TRAIN
from sparktc.experiment.config import Config, TuneConfig
from sparktc.features.term_selection import FREQUENCY, top_k_from_reduction_factor, top_terms
from sparktc.filesystem import arrow_filesystem
from sparktc.models.decision import DecisionRule
from sparktc.models.method import Fitting
from sparktc.models.tuning import Candidate, candidates
from sparktc.runtime import session, storage
from sparktc.runtime.runner import Tables
from sparktc.runtime.shared import Shared

__all__ = ["MODELS_SCHEMA", "MODELS_TYPE", "TrainContext", "Trained", "categories_table", "default_terms",
           "liblinear_options", "one_task_per_category", "save_arrays", "selected_columns"]


@dataclass(frozen=True)
class TrainContext:
    """What the train stage's functions share, on the driver: the Spark session, the run's tables, its decision
    rule (with the settings chosen for all categories so far) and [tune] lists, the vocabulary's size ``n_terms``,
    the training ``documents``, the term ranking ``order`` (shared with the tasks) and ``terms``, the term count
    training keeps without a search (:func:`default_terms`). A function a Spark task runs takes the plain values it
    needs, never the context: a Spark session does not travel to the workers.
    """

    spark: SparkSession
    tables: Tables
    rule: DecisionRule
    tune: TuneConfig
    n_terms: int
    documents: int
    order: Shared[np.ndarray]
    terms: int

    @property
    def train_path(self) -> str:
        """The training split of ``vectors``."""
        return storage.join(self.tables.input("vectors"), f"split={TRAIN}")

    @property
    def term_counts(self) -> list[int]:
        """The candidate term counts: ``tune.terms``, or the one kept without a search."""
        return list(self.tune.terms) or [self.terms]

    @property
    def fbrs(self) -> list[float]:
        """The candidate fbr values: ``tune.fbr``, or the rule's."""
        return list(self.tune.fbr) or [self.rule.fbr]

    def candidates(self) -> list[Candidate]:
        """The search space of the rule and the [tune] lists (:func:`sparktc.models.tuning.candidates`)."""
        return candidates(self.rule, self.tune, self.terms)

    def fitting(self) -> Fitting:
        """How the method is fitted (:attr:`sparktc.models.method.Method.fitting`) over at most the largest
        candidate term count's terms (LLSF fits from sums or in tasks by it).
        """
        most = max(len(selected_columns(self.order.value, count, self.n_terms)) for count in self.term_counts)
        return self.rule.spec.fitting(self.rule.parameters, most)

    def with_search(self, rule: DecisionRule, tune: TuneConfig) -> TrainContext:
        """The context with a setting chosen for all categories: its ``rule`` and the [tune] lists left to search."""
        return dataclasses.replace(self, rule=rule, tune=tune)


@dataclass(frozen=True)
class Trained:
    """What a way of fitting reports to the stage once it has written ``models``: the rule with the settings it
    chose for all categories, the size of the search space and its details for the stage's report.
    """

    rule: DecisionRule
    search_space: int
    details: dict[str, Any]


def default_terms(config: Config, n_terms: int) -> int:
    """Terms training keeps without a search: select.top_k, or the reduction factor's count, or 0 (all); 0 under the
    frequency ranking, whose top terms the weight stage kept as the vocabulary.
    """
    select = config.select
    if config.rank.score == FREQUENCY:
        return 0
    return select.top_k or (top_k_from_reduction_factor(n_terms, select.reduction_factor)
                            if select.reduction_factor else 0)


def selected_columns(order: np.ndarray, terms: int, n_terms: int) -> np.ndarray:
    """The term ids of the ``terms`` best-ranked terms, ascending (0, or more than there are: every term)."""
    selected = top_terms(order, terms)
    return np.arange(n_terms, dtype=np.int64) if selected is None else selected


#: ``models``: the per-category methods' tasks write it with pyarrow, the joint methods through Spark
#: (:data:`MODELS_TYPE`, the same schema).
MODELS_SCHEMA = pa.schema([
    ("category", pa.string()), ("method", pa.string()), ("weights", pa.list_(pa.field("element", pa.float64()))),
    ("bias", pa.float64()), ("threshold", pa.float64()), ("train_positives", pa.int64()), ("solver", pa.string()),
    ("C", pa.float64()), ("positive_weight", pa.float64()), ("epsilon", pa.float64()), ("B", pa.float64()),
    ("features", pa.int32()), ("cv_f1", pa.float64()), ("choices", pa.string()), ("seconds", pa.float64()),
])
MODELS_TYPE = from_arrow_schema(MODELS_SCHEMA)


def liblinear_options(rule: DecisionRule) -> dict[str, float | None]:
    """The ``models`` columns ``epsilon`` and ``B``: LIBLINEAR's -e and -B when the method has them, else null
    (like ``solver``, ``C`` and ``positive_weight``, a candidate's).
    """
    record = rule.parameters.record()
    return {"epsilon": record.get("epsilon"), "B": record.get("bias")}


def categories_table(context: TrainContext) -> pd.DataFrame:
    """The categories and their training positives, in name order."""
    return context.spark.read.parquet(context.tables.input("categories")).select("category", "train_positives") \
        .orderBy("category").toPandas()


def save_arrays(directory: str, name: str, arrays: dict[str, np.ndarray]) -> str:
    """``arrays`` saved as ``directory/name`` (npz), through pyarrow's file system; the file's path."""
    filesystem, root = arrow_filesystem(directory)
    filesystem.create_dir(root, recursive=True)
    target = f"{root}/{name}"
    with filesystem.open_output_stream(target) as stream:  # a retried attempt writes the same numbers again
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        stream.write(buffer.getvalue())
    return target


@contextmanager
def one_task_per_category(spark: SparkSession, n_categories: int) -> Iterator[None]:
    """One task per category up to :data:`~sparktc.runtime.session.TASKS_PER_CORE` per core; AQE must not merge the
    tiny groups into one task.
    """
    tasks = max(1, min(n_categories, session.TASKS_PER_CORE * session.cores(spark)))
    keys = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.enabled")
    previous = {key: spark.conf.get(key) for key in keys}
    spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        yield
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)
