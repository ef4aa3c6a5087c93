"""Spark MLlib peer of sparktc: one ``pyspark.ml.classification.LinearSVC`` per category, on sparktc's own vectors.

MLlib has no multi-label linear classifier; its only route to the LYRL2004 task is one binary LinearSVC per
category (one Spark job sequence per category). Fitting all of them takes too long to measure, so this times
K categories (default 8) spread over training frequency and extrapolates to every category with >= 1
training positive:

    ./spark-submit.sh [--master local[2]] benchmarks/mllib_linearsvc.py --run RUN_DIR --output FILE.json [--categories 8]

RUN_DIR is the output of a sparktc pipeline run (``jobs/pipeline.py``): its ``vectors`` (ltc, Parquet
partitioned by split), ``vocabulary``, ``categories`` and ``contingency`` tables are read, so MLlib sees exactly
the documents, weights and labels sparktc trained on, and each sampled category's MLlib F1 is shown beside
sparktc's. Nothing proportional to the corpus reaches the driver: TP/FP/FN are aggregated in Spark.
"""  # noqa: E501 (the usage line is printed verbatim by --help)

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pyspark.ml.classification import LinearSVC, LinearSVCModel
from pyspark.ml.linalg import SparseVector, VectorUDT
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.evaluation.metrics import f1_score

TOOL = "Spark MLlib LinearSVC, one per category"
C = 1.0  # LIBLINEAR's -c of sparktc's default run
MAX_ITER = 100
TOL = 1e-6


def to_features(n_features: int) -> Any:
    """A Python UDF (indices, values) -> SparseVector of size ``n_features``: MLlib's ``features`` column."""
    return F.udf(lambda indices, values: SparseVector(n_features, indices, values), VectorUDT())


def vectors(spark: SparkSession, run: str, split: str, n_features: int) -> DataFrame:
    """One split of sparktc's ltc vectors as (labels, features)."""
    table = spark.read.parquet(f"{run}/vectors").filter(F.col("split") == split)
    return table.select("labels", to_features(n_features)("indices", "values").alias("features"))


def sample_categories(categories: pd.DataFrame, k: int) -> pd.DataFrame:
    """K categories evenly spaced over training frequency (least to most frequent, both ends included)."""
    ordered = categories.sort_values(["train_positives", "category"]).reset_index(drop=True)
    picks = np.unique(np.linspace(0, len(ordered) - 1, min(k, len(ordered))).round().astype(int))
    return ordered.iloc[picks].reset_index(drop=True)


def is_positive(category: str) -> Column:
    """The Spark column that is True for the documents labelled ``category``."""
    return F.array_contains("labels", category)


def fit(train: DataFrame, category: str, reg_param: float) -> tuple[LinearSVCModel, float]:
    """Fit one category's LinearSVC on the cached training vectors; (model, wall seconds)."""
    svc = LinearSVC(maxIter=MAX_ITER, regParam=reg_param, fitIntercept=True, standardization=False, tol=TOL)
    labelled = train.withColumn("label", is_positive(category).cast("double"))
    started = time.perf_counter()
    model = svc.fit(labelled)
    return model, time.perf_counter() - started


def total_iterations(model: LinearSVCModel) -> int:
    """The fit's iteration count (pyspark 4.x's LinearSVCModel.summary lost its @property: call it then)."""
    summary = model.summary
    return int((summary() if callable(summary) else summary).totalIterations)


def test_counts(test: DataFrame, models: dict[str, LinearSVCModel]) -> dict[str, dict[str, int]]:
    """TP, FP, FN of every model on the test vectors, in one Spark pass (only K x 3 numbers come back)."""
    scored = test
    for j, (_category, model) in enumerate(models.items()):
        model = model.copy().setPredictionCol(f"p{j}").setRawPredictionCol(f"raw{j}")
        scored = model.transform(scored).drop(f"raw{j}")
    sums = []
    for j, category in enumerate(models):
        assigned, true = F.col(f"p{j}") == 1.0, is_positive(category)
        for name, condition in (("tp", assigned & true), ("fp", assigned & ~true), ("fn", ~assigned & true)):
            sums.append(F.sum(F.when(condition, 1).otherwise(0)).alias(f"{name}{j}"))
    row = scored.agg(*sums).first()
    return {category: {name: int(row[f"{name}{j}"] or 0) for name in ("tp", "fp", "fn")}
            for j, category in enumerate(models)}


def f1(counts: pd.Series | dict) -> float:
    """The F1 of TP, FP, FN as sparktc computes it, 1 when TP = FP = FN = 0 (sparktc's evaluate.zero_division = 1)."""
    return f1_score(counts["tp"], counts["fp"], counts["fn"], zero_division=1.0)


def main() -> int:
    """Time MLlib's LinearSVC on a spread of categories of a sparktc run, extrapolate to all, and write the result
    (module docstring); the exit code.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="output directory of a sparktc pipeline run")
    parser.add_argument("--output", required=True, help="result JSON file")
    parser.add_argument("--categories", type=int, default=8, help="number of categories to time (default 8)")
    arguments = parser.parse_args()
    if arguments.categories < 1:
        parser.error("--categories must be >= 1")
    run = arguments.run.rstrip("/")
    spark = SparkSession.builder.appName("sparktc-peer-mllib-linearsvc").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")

    n_features = spark.read.parquet(f"{run}/vocabulary").count()
    categories = spark.read.parquet(f"{run}/categories").select("category", "train_positives").toPandas()
    trainable = categories[categories["train_positives"] > 0]
    sparktc = spark.read.parquet(f"{run}/contingency").select("category", "tp", "fp", "fn").toPandas() \
        .set_index("category")
    sample = sample_categories(trainable, arguments.categories)

    # Setup: sparktc's vectors -> MLlib's VectorUDT column, cached once for every fit.
    started = time.perf_counter()
    train = vectors(spark, run, "train", n_features)
    cores = spark.sparkContext.defaultParallelism
    if train.rdd.getNumPartitions() < cores:
        train = train.repartition(cores)  # one Parquet file would otherwise leave the other cores idle
    train = train.cache()
    n_train = train.count()
    setup_seconds = time.perf_counter() - started
    reg_param = 1.0 / (C * n_train)  # mean hinge + regParam/2 |w|^2  ==  (1/2 |w|^2 + C sum hinge) / (C n)
    print(f"setup: {n_train:,} training vectors of {n_features:,} features converted and cached in "
          f"{setup_seconds:.1f} s; regParam = 1/(C n) = {reg_param:.3g}", flush=True)

    models, seconds, iterations = {}, {}, {}
    for category in sample["category"]:
        models[category], seconds[category] = fit(train, category, reg_param)
        iterations[category] = total_iterations(models[category])
        print(f"  fit {category:<8} {seconds[category]:7.2f} s  ({iterations[category]} iterations)", flush=True)

    started = time.perf_counter()
    counts = test_counts(vectors(spark, run, "test", n_features), models)
    predict_seconds = time.perf_counter() - started

    rows = []
    for row in sample.itertuples():
        rows.append({
            "category": row.category, "train_positives": int(row.train_positives),
            "seconds": round(seconds[row.category], 3), "iterations": iterations[row.category],
            "f1_mllib": f1(counts[row.category]),
            "f1_sparktc": f1(sparktc.loc[row.category]) if row.category in sparktc.index else None,
            **{f"{name}_mllib": counts[row.category][name] for name in ("tp", "fp", "fn")},
        })
    timed_total = sum(seconds.values())
    mean = timed_total / len(seconds)
    extrapolated = mean * len(trainable)

    print(f"\n{'category':<10} {'train+':>7} {'seconds':>8} {'iters':>6} {'F1 MLlib':>9} {'F1 sparktc':>11}")
    for r in rows:
        theirs = "-" if r["f1_sparktc"] is None else f"{r['f1_sparktc']:.4f}"
        print(f"{r['category']:<10} {r['train_positives']:>7} {r['seconds']:>8.2f} {r['iterations']:>6} "
              f"{r['f1_mllib']:>9.4f} {theirs:>11}")
    print(f"\nmean {mean:.2f} s per category over {len(seconds)} timed categories; EXTRAPOLATED to all "
          f"{len(trainable)} categories with >= 1 training positive: {extrapolated:.1f} s "
          f"(+ {setup_seconds:.1f} s setup); master {spark.sparkContext.master}", flush=True)

    result = {
        "tool": TOOL,
        "master": spark.sparkContext.master,
        "categories_timed": len(seconds),
        "categories_total": len(trainable),
        "seconds_per_category_mean": round(mean, 3),
        "seconds_timed_total": round(timed_total, 3),
        "extrapolated_train_seconds": round(extrapolated, 3),
        "setup_seconds": round(setup_seconds, 3),
        "predict_seconds_all_timed_models": round(predict_seconds, 3),
        "documents": {"train": n_train},
        "features": n_features,
        "reg_param": reg_param,
        "per_category": rows,
        "notes": [
            (f"extrapolated_train_seconds is an EXTRAPOLATION: mean wall seconds of the {len(seconds)} timed fits "
             f"x {len(trainable)} categories with >= 1 training positive; only {len(seconds)} categories were fitted."),
            ("Timed categories are evenly spaced over training frequency (sorted by train_positives, "
             "both ends included)."),
            ("setup_seconds: sparktc's ltc vectors (indices, values) -> MLlib SparseVector column by a Python UDF, "
             "cached and counted once; not included in extrapolated_train_seconds."),
            ("MLlib's LinearSVC minimises the mean HINGE (L1) loss + regParam/2 |w|^2 with OWL-QN; sparktc's default "
             "is LIBLINEAR's SQUARED hinge (L2-loss SVM dual, -s 1). regParam = 1/(C n) with C = 1 matches the "
             "scale of LIBLINEAR's 1/2 |w|^2 + C sum loss, not the loss itself, so F1 values differ."),
            "MLlib does not regularise the intercept (fitIntercept=True); LIBLINEAR's -B 1 bias weight is regularised.",
            (f"LinearSVC(maxIter={MAX_ITER}, tol={TOL}, standardization=False): a fit that reaches maxIter stops "
             "before convergence (see iterations)."),
            "F1 = 1 when TP = FP = FN = 0 for both columns; f1_sparktc is from RUN_DIR/contingency.",
        ],
    }
    Path(arguments.output).write_text(json.dumps(result, indent=2) + "\n")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
