"""Predict and evaluate: ``models`` x test ``vectors`` -> ``predictions``, ``contingency``, ``metrics.json``.

The weight matrix W (vocabulary x categories, dense) is broadcast; executors score each Arrow
batch of test documents as sparse X times dense W plus b, assign the categories whose score
exceeds their threshold, and keep the top-scoring categories. Spark then reduces the predictions
to one contingency table (TP, FP, FN, TN) per category; only those tables, one row per category,
come back to the driver for the averages (REFERENCE.md section 6).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc import storage
from sparktc.config import Config
from sparktc.matrix import csr_from_lists
from sparktc.metrics import summarize
from sparktc.records import TEST
from sparktc.stages.report import StageReport, stage

PREDICTIONS_DDL = (
    "doc_id string, labels array<string>, predicted array<string>, "
    "top_categories array<string>, top_scores array<double>"
)


def _lists(offsets: np.ndarray, values: pa.Array) -> pa.ListArray:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)


def _predict(batch: pa.RecordBatch, codes: np.ndarray, W: np.ndarray, b: np.ndarray, threshold: np.ndarray,
             top_k: int) -> pa.RecordBatch:
    X = csr_from_lists(batch.column("indices"), batch.column("values"), W.shape[0])
    scores = np.asarray(X @ W) + b
    n = scores.shape[0]
    rows, cols = np.nonzero(scores > threshold)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    k = min(top_k, len(codes))
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    top_offsets = np.arange(n + 1, dtype=np.int64) * k
    return pa.RecordBatch.from_arrays(
        [batch.column("doc_id"), batch.column("labels"),
         _lists(offsets, pa.array(codes[cols], type=pa.string())),
         _lists(top_offsets, pa.array(codes[top].ravel(), type=pa.string())),
         _lists(top_offsets, pa.array(np.take_along_axis(scores, top, axis=1).ravel(), type=pa.float64()))],
        names=["doc_id", "labels", "predicted", "top_categories", "top_scores"],
    )


def contingency_tables(predictions: DataFrame, categories: DataFrame) -> DataFrame:
    """Per category: TP, FP, FN, TN over the predicted documents, with training and test positives."""
    n_documents = predictions.count()

    def per_category(column, name: str) -> DataFrame:
        return predictions.select(F.explode(column).alias("category")).groupBy("category").agg(F.count("*").alias(name))

    true = per_category(F.col("labels"), "positives")
    assigned = per_category(F.col("predicted"), "assigned")
    hits = per_category(F.array_intersect("labels", "predicted"), "tp")
    table = (
        categories.select("category", "name", "train_positives")
        .join(true, "category", "left").join(assigned, "category", "left").join(hits, "category", "left")
        .fillna(0, ["positives", "assigned", "tp"])
    )
    return table.select(
        "category", "name", "train_positives", F.col("positives").alias("test_positives"),
        F.col("tp").cast("long").alias("tp"),
        (F.col("assigned") - F.col("tp")).cast("long").alias("fp"),
        (F.col("positives") - F.col("tp")).cast("long").alias("fn"),
        (F.lit(n_documents) - F.col("positives") - F.col("assigned") + F.col("tp")).cast("long").alias("tn"),
    )


AVERAGED = {
    "train_positive": lambda table: table["train_positives"] > 0,
    "test_positive": lambda table: table["test_positives"] > 0,
    "all": lambda table: table["category"].notna(),
}


def format_table(metrics: dict, table) -> str:
    lines = [
        f"{'category':<12} {'train+':>7} {'test+':>7} {'TP':>6} {'FP':>6} {'FN':>6} {'P':>6} {'R':>6} {'F1':>6}",
    ]
    rows = {row["category"]: row for row in metrics["per_category"]}
    for record in table.itertuples():
        row = rows.get(record.category)
        scores = f"{row['precision']:6.3f} {row['recall']:6.3f} {row['f1']:6.3f}" if row else f"{'(not averaged)':>20}"
        lines.append(
            f"{record.category:<12} {record.train_positives:>7} {record.test_positives:>7} "
            f"{record.tp:>6} {record.fp:>6} {record.fn:>6} {scores}"
        )
    lines.append(
        f"micro P {metrics['micro_precision']:.4f}  R {metrics['micro_recall']:.4f}  F1 {metrics['micro_f1']:.4f}   "
        f"macro P {metrics['macro_precision']:.4f}  R {metrics['macro_recall']:.4f}  F1 {metrics['macro_f1']:.4f}   "
        f"over {metrics['n_categories']} categories ({metrics['averaged_over']}); {metrics['zero_division_convention']}"
    )
    return "\n".join(lines)


def evaluate(spark: SparkSession, config: Config, output: str) -> StageReport:
    settings = config.evaluate
    with stage(spark, "evaluate") as report:
        models = spark.read.parquet(storage.join(output, "models")).orderBy("category").toPandas()
        codes = models["category"].to_numpy(dtype=object)
        W = np.column_stack(models["weights"].to_list()) if len(models) else np.zeros((0, 0))
        shared = spark.sparkContext.broadcast(
            (codes, W, models["bias"].to_numpy(), models["threshold"].to_numpy(), settings.top_scores)
        )

        def predict(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                yield _predict(batch, *shared.value)

        test = spark.read.parquet(storage.join(output, "vectors")).filter(F.col("split") == TEST)
        test.select("doc_id", "labels", "indices", "values").mapInArrow(predict, PREDICTIONS_DDL) \
            .write.mode("overwrite").parquet(storage.join(output, "predictions"))
        shared.unpersist()
        predictions = spark.read.parquet(storage.join(output, "predictions"))
        categories = spark.read.parquet(storage.join(output, "categories"))
        contingency_tables(predictions, categories).orderBy("category").coalesce(1) \
            .write.mode("overwrite").parquet(storage.join(output, "contingency"))
        table = spark.read.parquet(storage.join(output, "contingency")).orderBy("category").toPandas()

        averaged = table[AVERAGED[settings.average_over](table)]
        metrics = summarize(
            averaged["category"].tolist(), averaged["tp"].to_numpy(), averaged["fp"].to_numpy(),
            averaged["fn"].to_numpy(), averaged["tn"].to_numpy(), settings.zero_division,
        )
        metrics = {
            **{key: value for key, value in metrics.items() if key != "per_category"},
            "averaged_over": settings.average_over,
            "categories_listed": len(table),
            "test_documents": int(predictions.count()),
            "settings": config.as_dict(),
            "per_category": metrics["per_category"],
        }
        storage.write_text(spark, storage.join(output, "metrics.json"), json.dumps(metrics, indent=2) + "\n")
        print(format_table(metrics, table), flush=True)
        report.rows_in = test.count()
        report.rows_out = metrics["test_documents"]
        report.details = {k: metrics[k] for k in ("micro_f1", "macro_f1", "n_categories")}
    return report
