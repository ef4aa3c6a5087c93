"""Train: one LIBLINEAR binary problem per category -> ``models``, via ``groupBy("category").applyInPandas``.

The grouped DataFrame holds one small row per category (its name and training positives), not
the training data: each Python worker loads the training split of ``vectors`` once
(:func:`sparktc.matrix.load_training_set`) and trains every category Spark sends it, so the
matrix is never replicated per category and nothing proportional to the corpus reaches the driver.
Weights are stored over the whole vocabulary (zero for terms outside the selection), so scoring
needs no term mapping.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sparktc import storage
from sparktc.config import Config
from sparktc.linear import BinaryProblems
from sparktc.matrix import load_training_set
from sparktc.stages.report import StageReport, stage
from sparktc.term_selection import top_k_from_reduction_factor

MODELS_DDL = (
    "category string, weights array<double>, bias double, threshold double, train_positives long, "
    "solver string, C double, epsilon double, B double, features int, seconds double"
)


@lru_cache(maxsize=1)
def _problems(path: str, n_features: int, selected: tuple[int, ...] | None, bias: float) -> BinaryProblems:
    X = load_training_set(path, n_features).X
    return BinaryProblems(X if selected is None else X[:, list(selected)], bias)


def selected_terms(spark: SparkSession, config: Config, output: str, n_terms: int) -> tuple[int, ...] | None:
    """Term ids kept for training: the top k of ``term_ranks``, or None for all terms."""
    select = config.select
    k = select.top_k or (top_k_from_reduction_factor(n_terms, select.reduction_factor) if select.reduction_factor else 0)
    if not k or k >= n_terms:
        return None
    ranks = spark.read.parquet(storage.join(output, "term_ranks"))
    kept = ranks.filter(F.col("rank") <= k).select("term_id").toPandas()["term_id"].to_numpy()
    return tuple(int(t) for t in np.sort(kept))


def train(spark: SparkSession, config: Config, output: str) -> StageReport:
    settings = config.train
    with stage(spark, "train") as report:
        n_terms = spark.read.parquet(storage.join(output, "vocabulary")).count()
        selected = selected_terms(spark, config, output, n_terms)
        shared = spark.sparkContext.broadcast(selected)
        train_path = storage.join(output, "vectors", "split=train")

        def fit(group: pd.DataFrame) -> pd.DataFrame:
            started = time.perf_counter()
            category = group["category"].iloc[0]
            kept = shared.value
            problems = _problems(train_path, n_terms, kept, settings.bias)
            y = load_training_set(train_path, n_terms).positives(category)
            w, b = problems.train(y, settings.solver, settings.C, settings.epsilon)
            weights = w if kept is None else np.zeros(n_terms)
            if kept is not None:
                weights[list(kept)] = w
            return pd.DataFrame({
                "category": [category], "weights": [weights], "bias": [b], "threshold": [settings.threshold],
                "train_positives": [int(y.sum())], "solver": [settings.solver], "C": [settings.C],
                "epsilon": [settings.epsilon], "B": [settings.bias], "features": [n_terms if kept is None else len(kept)],
                "seconds": [time.perf_counter() - started],
            })

        categories = spark.read.parquet(storage.join(output, "categories")).select("category", "train_positives")
        n_categories = categories.count()
        # One task per category up to twice the cores; AQE must not merge the tiny groups into one task.
        tasks = max(1, min(n_categories, 2 * spark.sparkContext.defaultParallelism))
        previous = {key: spark.conf.get(key) for key in
                    ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.enabled")}
        spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
        try:
            models = categories.groupBy("category").applyInPandas(fit, MODELS_DDL)
            models.write.mode("overwrite").parquet(storage.join(output, "models"))
        finally:
            for key, value in previous.items():
                spark.conf.set(key, value)
        shared.unpersist()
        written = spark.read.parquet(storage.join(output, "models"))
        report.rows_in = n_categories
        report.rows_out = written.count()
        totals = written.agg(F.sum("seconds").alias("s"), F.max("seconds").alias("m")).first()
        report.details = {
            "features": n_terms if selected is None else len(selected),
            "vocabulary": n_terms,
            "solver": settings.solver, "C": settings.C, "epsilon": settings.epsilon, "B": settings.bias,
            "liblinear_seconds_total": round(float(totals["s"] or 0), 3),
            "liblinear_seconds_max": round(float(totals["m"] or 0), 3),
        }
    return report
