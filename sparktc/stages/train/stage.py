"""The train stage's entry (:func:`train`): it checks the settings and memory against the training data, fits the
method the way it declares (:data:`FITTERS`, by the type of its :attr:`sparktc.models.method.Method.fitting`),
writes the model bundle and applies the written models' rule to the training documents
(:func:`decisions_on_training`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.records import TRAIN
from sparktc.evaluation.training_decisions import training_decisions, training_decisions_lines
from sparktc.experiment.bundle import MODEL, MODEL_SETTINGS, NETWORK, write_bundle
from sparktc.experiment.config import Config, check_against_data
from sparktc.experiment.tables import term_order
from sparktc.models.method import FromSums, InTasks, Neighbours, PerCategory
from sparktc.models.scoring import Scorer
from sparktc.models.thresholds import validation_size
from sparktc.models.tuning import candidates, needs_cross_validation
from sparktc.runtime import session, storage
from sparktc.runtime.parts import count_rows, map_parts, parquet_files, read_batches, read_small, rows_and_list_lengths
from sparktc.runtime.resources import check_training_memory, explained_failures
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.shared import Shared
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.stages.train.context import (
    TrainContext,
    Trained,
    default_terms,
    liblinear_options,
    one_task_per_category,
)
from sparktc.stages.train.from_sums import train_from_sums
from sparktc.stages.train.in_tasks import train_in_tasks
from sparktc.stages.train.neighbours import train_neighbours
from sparktc.stages.train.per_category import train_per_category

__all__ = ["FITTERS", "STAGE", "WRITTEN_COLUMNS", "decisions_on_training", "train"]

#: How the stage fits each way of fitting a method declares (:mod:`sparktc.models.method`): the fitting's type ->
#: the function that writes ``models`` from it.
FITTERS: dict[type, Callable[[TrainContext, Any], Trained]] = {
    PerCategory: train_per_category, Neighbours: train_neighbours, FromSums: train_from_sums, InTasks: train_in_tasks,
}

#: The ``models`` columns the driver reads back: the bundle's, the scorer's, and the fits' seconds.
WRITTEN_COLUMNS = ("category", "method", "weights", "bias", "threshold", "train_positives", "features", "seconds")


def decisions_on_training(context: TrainContext, models: pd.DataFrame) -> dict[str, Any] | None:
    """The written models' rule applied to the training documents (:func:`sparktc.models.decision.training_decisions`):
    one task per training ``vectors`` file scores it as evaluate scores the test documents and counts, per
    category, the documents assigned; only those counts reach the driver. None for PCut and RCut, which decide by
    the documents being scored, never by a stored threshold. ``models``: the written ones, sorted by category.
    """
    rule = context.rule
    if rule.thresholding in ("pcut", "rcut"):
        return None
    spark, train_path = context.spark, context.train_path
    shared = Shared(Scorer.of(models, context.n_terms, rule, train_path,
                              storage.join(context.tables.output(MODEL), NETWORK), context.order.value))
    thresholds = models["threshold"].to_numpy(dtype=np.float64)

    def count(index: int, path: str) -> np.ndarray:
        scorer, assigned = shared.value, np.zeros(len(thresholds), dtype=np.int64)
        for batch in read_batches(path, ["indices", scorer.column]):
            assigned += np.count_nonzero(scorer.scores(scorer.matrix(batch)) > thresholds, axis=0)
        return assigned

    files = parquet_files(train_path) if storage.exists(spark, train_path) else []
    assigned = sum(map_parts(spark, files, count), np.zeros(len(thresholds), dtype=np.int64))
    return training_decisions(models["category"].to_numpy(dtype=object), assigned,
                              models["train_positives"].to_numpy(), context.documents)


def training_size(spark: SparkSession, vectors: str) -> dict[str, int]:
    """The training documents of ``vectors`` and their nonzeros, from the Parquet footers of its training split (no
    Spark job: one of a second on the driver's serial path), else, for files without null counts, by Spark.
    """
    split = storage.join(vectors, f"split={TRAIN}")
    if not storage.exists(spark, split):
        return {"documents": 0, "nonzeros": 0}
    counted = rows_and_list_lengths(split, "indices")
    if counted is not None:
        return {"documents": counted[0], "nonzeros": counted[1]}
    row = spark.read.parquet(vectors).filter(F.col("split") == TRAIN) \
        .agg(F.count("*").alias("documents"), F.sum(F.size("indices")).alias("nonzeros")).first()
    return {"documents": row["documents"], "nonzeros": int(row["nonzeros"] or 0)}


def train(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """The train stage (:mod:`sparktc.stages.train`): the ``models`` of every category and the decisions tuning
    made, after checking the settings and memory against the training data.
    """
    rule, tune = config.train.decision_rule(), config.tune.lists(config.train.method)
    with stage(spark, "train") as report:
        n_terms, n_categories = count_rows(tables.input("vocabulary")), count_rows(tables.input("categories"))
        training = training_size(spark, tables.input("vectors"))
        check_against_data(config, {"train_documents": training["documents"], "categories": n_categories},
                           f"counted by train in {tables.root}")
        terms = default_terms(config, n_terms)
        check_training_memory(session.settings(spark), training["documents"], int(training["nonzeros"] or 0),
                              needs_cross_validation(rule, candidates(rule, tune, terms)))
        context = TrainContext(spark, tables, rule, tune, n_terms, training["documents"],
                               Shared(term_order(tables.input("term_ranks"), config)), terms)
        with one_task_per_category(spark, n_categories), explained_failures("train"):
            fitting = context.fitting()
            trained = FITTERS[type(fitting)](context, fitting)
        rule = trained.rule
        # Categories x vocabulary, read back once with pyarrow: no Spark jobs (its sort alone took three).
        written = read_small(tables.output("models"), list(WRITTEN_COLUMNS)).sort_by("category")
        write_bundle(spark, config, tables, training["documents"], context.order.value, written)
        began = time.perf_counter()
        with explained_failures("train"):
            checked = decisions_on_training(context.with_search(rule, context.tune), written.to_pandas())
        details = dict(trained.details)
        if checked is not None:
            details["training_decisions"] = checked
            details["training_decisions_seconds"] = round(time.perf_counter() - began, 3)
            for line in training_decisions_lines(checked):
                print(f"sparktc: warning: train: {line}", file=sys.stderr, flush=True)
        report.rows_in = n_categories
        report.rows_out = written.num_rows
        report.details = {
            "method": rule.method, "thresholding": rule.thresholding, "search_space": trained.search_space,
            "features": terms or n_terms, "vocabulary": n_terms, **liblinear_options(rule),
            **({"validation_documents": validation_size(training["documents"], rule.validation)}
               if rule.validation else {}),
            **details,
            "category_seconds_total": round(float(pc.sum(written["seconds"]).as_py() or 0), 3),
            "category_seconds_max": round(float(pc.max(written["seconds"]).as_py() or 0), 3),
        }
    return report


STAGE = Stage("train", train, reads=("vocabulary", "categories", "term_ranks", "vectors"), writes=("models", MODEL),
              sections=MODEL_SETTINGS, files=lambda config: [config.tokenize.stop_list])
