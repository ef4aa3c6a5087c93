"""Train: one classifier per category -> ``models``, via ``groupBy("category").applyInPandas``.

LIBLINEAR or Rocchio models, chosen and thresholded by cross-validation on the training data when
the configuration asks for it (:mod:`sparktc.models.tuning`), or kNN thresholds from leave-one-out scores,
each by the run's decision rule (:mod:`sparktc.models.decision`).

The grouped DataFrame holds one small row per category (its name and training positives), not
the training data: each Python worker loads the training split of ``vectors`` once
(:func:`sparktc.features.matrix.load_training_set`) and trains every category Spark sends it, so the
matrix is never replicated per category and nothing proportional to the corpus reaches the driver.
Weights are stored over the whole vocabulary (zero for terms outside the selection), so scoring
needs no term mapping. Beside ``models``, train writes the model bundle ``model`` that classifies new
documents on its own (:mod:`sparktc.runtime.bundle`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.records import TRAIN
from sparktc.features.matrix import load_training_set
from sparktc.features.term_selection import top_k_from_reduction_factor
from sparktc.filesystem import per_worker
from sparktc.models.decision import DecisionRule
from sparktc.models.knn import knn_scores_from_neighbours, knn_topk
from sparktc.models.tuning import (
    Candidate,
    candidates,
    fit_category,
    knn_threshold,
    needs_cross_validation,
    shared_weight,
)
from sparktc.runtime import storage
from sparktc.runtime.bundle import MODEL, MODEL_SETTINGS, write_bundle
from sparktc.runtime.config import Config
from sparktc.runtime.faults import inject
from sparktc.runtime.resources import check_training_memory, explained_failures, out_of_memory
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage

MODELS_DDL = (
    "category string, method string, weights array<double>, bias double, threshold double, train_positives long, "
    "solver string, C double, positive_weight double, epsilon double, B double, features int, cv_f1 double, "
    "choices string, seconds double"
)


@per_worker
def _training_neighbours(path: str, n_features: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every training document's k nearest other training documents (leave-one-out), once per worker."""
    X = load_training_set(path, n_features).X
    return knn_topk(X, X, k, exclude_self=np.arange(X.shape[0]))


def term_order(spark: SparkSession, tables: Tables) -> np.ndarray:
    """Term ids from the best chi-square rank down (vocabulary-sized)."""
    ranks = spark.read.parquet(tables.input("term_ranks")).select("term_id", "rank").toPandas()
    return ranks.sort_values("rank")["term_id"].to_numpy(dtype=np.int64)


def default_terms(config: Config, n_terms: int) -> int:
    """Terms training keeps without a search: select.top_k, or the reduction factor's count, or 0 (all)."""
    select = config.select
    return select.top_k or (top_k_from_reduction_factor(n_terms, select.reduction_factor)
                            if select.reduction_factor else 0)


def fit_models(spark: SparkSession, tables: Tables, rule: DecisionRule, space: list[Candidate], n_terms: int,
               order) -> DataFrame:
    """The grouped UDF over one row per category: each group fits that category on the worker's training set."""
    train_path = storage.join(tables.input("vectors"), "split=train")

    def fit(group: pd.DataFrame) -> pd.DataFrame:
        started = time.perf_counter()
        category = group["category"].iloc[0]
        try:
            inject("train")
            training = load_training_set(train_path, n_terms)
            y = training.positives(category)
            if rule.method == "knn":
                neighbours, similarities = _training_neighbours(train_path, n_terms, rule.knn_k)
                scores = knn_scores_from_neighbours(neighbours, similarities, y[:, None])[:, 0]
                threshold, cv_f1 = knn_threshold(scores, y, rule)
                weights, bias, choice, choices = np.zeros(0), 0.0, space[0], {"k": rule.knn_k, "cv_f1": cv_f1}
            else:
                model = fit_category(training.X, y, order.value, space, rule)
                weights, bias, threshold, cv_f1, choice = (model.weights, model.bias, model.threshold, model.cv_f1,
                                                           model.choice)
                choices = model.choices()
        except MemoryError:
            raise out_of_memory("train", f"category {category}, training set {train_path}") from None
        return pd.DataFrame({
            "category": [category], "method": [rule.method], "weights": [weights], "bias": [bias],
            "threshold": [threshold], "train_positives": [int(y.sum())], "solver": [choice.solver], "C": [choice.C],
            "positive_weight": [choice.positive_weight], "epsilon": [rule.epsilon], "B": [rule.bias],
            "features": [choice.terms or n_terms], "cv_f1": [cv_f1], "choices": [json.dumps(choices)],
            "seconds": [time.perf_counter() - started],
        })

    categories = spark.read.parquet(tables.input("categories")).select("category", "train_positives")
    return categories.groupBy("category").applyInPandas(fit, MODELS_DDL)


@contextmanager
def one_task_per_category(spark: SparkSession, n_categories: int) -> Iterator[None]:
    """One task per category up to twice the cores; AQE must not merge the tiny groups into one task."""
    tasks = max(1, min(n_categories, 2 * spark.sparkContext.defaultParallelism))
    keys = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.enabled")
    previous = {key: spark.conf.get(key) for key in keys}
    spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        yield
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)


def train(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    rule, tune = config.train.decision_rule(), config.tune
    with stage(spark, "train") as report:
        n_terms = spark.read.parquet(tables.input("vocabulary")).count()
        n_categories = spark.read.parquet(tables.input("categories")).count()
        training = spark.read.parquet(tables.input("vectors")).filter(F.col("split") == TRAIN) \
            .agg(F.count("*").alias("documents"), F.sum(F.size("indices")).alias("nonzeros")).first()
        check_training_memory(dict(spark.sparkContext.getConf().getAll()), training["documents"],
                              int(training["nonzeros"] or 0),
                              needs_cross_validation(rule, candidates(rule, tune, default_terms(config, n_terms))))
        order = spark.sparkContext.broadcast(term_order(spark, tables))
        details: dict = {}
        with one_task_per_category(spark, n_categories), explained_failures("train"):
            if tune.shared_positive_weight:
                # First pass: every category's cross-validated counts for every weight; one row per category back.
                space = candidates(rule, tune, default_terms(config, n_terms))
                searched = [json.loads(row.choices)["searched"] for row in
                            fit_models(spark, tables, rule, space, n_terms, order).select("choices").collect()]
                weight, micro = shared_weight(searched)
                rule = dataclasses.replace(rule, positive_weight=weight)
                tune = dataclasses.replace(tune, positive_weight=[])
                details["shared_positive_weight"] = {"chosen": weight, "cv_micro_f1": micro}
            space = candidates(rule, tune, default_terms(config, n_terms))
            fit_models(spark, tables, rule, space, n_terms, order).write.mode("overwrite").parquet(
                tables.output("models"))
        order.unpersist()
        write_bundle(spark, config, tables, training["documents"])
        written = spark.read.parquet(tables.output("models"))
        report.rows_in = n_categories
        report.rows_out = written.count()
        totals = written.agg(F.sum("seconds").alias("s"), F.max("seconds").alias("m")).first()
        report.details = {
            "method": rule.method, "thresholding": rule.thresholding, "search_space": len(space),
            "features": default_terms(config, n_terms) or n_terms, "vocabulary": n_terms, "epsilon": rule.epsilon,
            "B": rule.bias, **details,
            "category_seconds_total": round(float(totals["s"] or 0), 3),
            "category_seconds_max": round(float(totals["m"] or 0), 3),
        }
    return report


STAGE = Stage("train", train, reads=("vocabulary", "categories", "term_ranks", "vectors"), writes=("models", MODEL),
              sections=MODEL_SETTINGS, files=lambda config: [config.tokenize.stop_list])
