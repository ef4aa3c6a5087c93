"""Predict and evaluate: ``models`` x test ``vectors`` -> ``predictions``, ``contingency``, metrics and reports.

The weight matrix W (vocabulary x categories, dense) is broadcast; executors score each Arrow
batch of test documents as sparse X times dense W plus b, assign the categories whose score
exceeds their threshold, and keep the top-scoring categories. Spark then reduces the predictions
to one contingency table (TP, FP, FN, TN) per category, and the ranking measures to sums over
documents; only those, one row per category and one row in all, come back to the driver, where
:mod:`sparktc.evaluation` averages them over every category set (REFERENCE.md section 6) and
:mod:`sparktc.reports` renders ``report.md``, ``per_category.csv`` and the plots.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from sparktc import reports, storage
from sparktc.category_sets import category_subsets
from sparktc.config import Config, TrainConfig
from sparktc.evaluation import assemble, to_builtin
from sparktc.faults import inject
from sparktc.knn import knn_scores_from_neighbours, knn_topk
from sparktc.matrix import csr_from_lists, fingerprint, load_training_set
from sparktc.ranking import hits_from_rankings, ranking_measures
from sparktc.records import TEST, TRAIN
from sparktc.thresholds import pcut_counts, rcut
from sparktc.stages.report import StageReport, stage
from sparktc.stages.resources import explained_failures, out_of_memory
from sparktc.stages.runner import Stage, Tables

RANKING_MEASURES = ("P", "R", "RP", "nDCG")
#: Per-document ranking measures are summed as integers in units of 2^-40, so the averages do
#: not depend on the order Spark adds them in (floating-point addition is not associative).
FIXED_POINT = float(2**40)
#: The configuration sections ``metrics.json`` records, and so the ones evaluate's outputs depend on
#: (all but [synthesize], recorded by the corpus it wrote, and [spark], which does not change results).
SETTINGS = ("corpus", "tokenize", "weight", "rank", "select", "train", "tune", "evaluate")

PREDICTIONS_DDL = (
    "doc_id string, labels array<string>, predicted array<string>, "
    "top_categories array<string>, top_scores array<double>"
)


def _lists(offsets: np.ndarray, values: pa.Array) -> pa.ListArray:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)


@dataclass(frozen=True)
class Scorer:
    """What executors need to score test documents: linear weights, or the kNN training set."""

    codes: np.ndarray
    n_terms: int
    W: np.ndarray | None  # vocabulary x categories; None for kNN
    b: np.ndarray
    knn_k: int
    train_path: str

    @staticmethod
    def of(models: pd.DataFrame, n_terms: int, knn_k: int, train_path: str) -> Scorer:
        """The scorer of ``models`` (one row per category, ordered by category: a ``models`` table or a
        model bundle's categories), the kNN training set at ``train_path`` when their method is kNN."""
        knn = bool(len(models)) and models["method"].iloc[0] == "knn"
        W = np.column_stack(models["weights"].to_list()) if len(models) else np.zeros((n_terms, 0))
        return Scorer(codes=models["category"].to_numpy(dtype=object), n_terms=n_terms, W=None if knn else W,
                      b=models["bias"].to_numpy(), knn_k=knn_k, train_path=train_path)

    def scores(self, X) -> np.ndarray:
        if self.W is not None:
            return np.asarray(X @ self.W) + self.b
        neighbours, similarities = knn_topk(X, load_training_set(self.train_path, self.n_terms).X, self.knn_k)
        labels = _knn_labels(self.train_path, self.n_terms, tuple(self.codes), fingerprint(self.train_path))
        return knn_scores_from_neighbours(neighbours, similarities, labels)


@lru_cache(maxsize=1)
def _knn_labels(path: str, n_terms: int, codes: tuple[str, ...], files: tuple) -> np.ndarray:
    """Training labels as a documents x categories matrix, once per worker and training set ``files``."""
    training = load_training_set(path, n_terms)
    return np.column_stack([training.positives(code) for code in codes])


def predict_batch(batch: pa.RecordBatch, scorer: Scorer, threshold: np.ndarray, rcut_k: int, top_k: int) -> pa.RecordBatch:
    """A batch of vectors (doc_id, labels, indices, values) to predictions: the categories above their
    threshold (or the ``rcut_k`` best), and the ``top_k`` best categories with their scores."""
    codes = scorer.codes
    X = csr_from_lists(batch.column("indices"), batch.column("values"), scorer.n_terms)
    scores = scorer.scores(X)
    n = scores.shape[0]
    rows, cols = np.nonzero(rcut(scores, rcut_k) if rcut_k else scores > threshold)
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


def pcut_thresholds(test: DataFrame, shared, train_share: np.ndarray) -> np.ndarray:
    """PCut (REFERENCE.md section 5): per category, the score of the test document ranked just below
    the training share of the test set, so that share of documents scores above it."""

    def long(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        scorer = shared.value
        for batch in batches:
            scores = scorer.scores(csr_from_lists(batch.column("indices"), batch.column("values"), scorer.n_terms))
            yield pa.RecordBatch.from_pydict({
                "c": np.tile(np.arange(scores.shape[1], dtype=np.int32), scores.shape[0]), "score": scores.ravel()})

    n_documents = test.count()
    assigned = pcut_counts(train_share, n_documents)
    wanted = test.sparkSession.createDataFrame(
        [(int(c), int(m) + 1) for c, m in enumerate(assigned) if m < n_documents], "c int, r long")
    ranked = test.mapInArrow(long, "c int, score double").withColumn(
        "r", F.row_number().over(Window.partitionBy("c").orderBy(F.col("score").desc())))
    thresholds = np.full(len(train_share), -np.inf)
    for row in ranked.join(wanted, ["c", "r"]).select("c", "score").collect():
        thresholds[row.c] = row.score
    return thresholds


def decision_rule(settings: TrainConfig, models: pd.DataFrame, n_train: int, documents: DataFrame,
                  shared) -> tuple[np.ndarray, int]:
    """Per-category thresholds and RCut's k (0 when thresholds decide) for ``documents``: the models'
    own thresholds, or PCut's over ``documents`` (``n_train`` training documents give each category's share)."""
    threshold = models["threshold"].to_numpy()
    if settings.thresholding == "pcut":
        threshold = pcut_thresholds(documents, shared, models["train_positives"].to_numpy() / max(n_train, 1))
    return threshold, settings.rcut_k if settings.thresholding == "rcut" else 0


def predict(spark: SparkSession, config: Config, tables: Tables) -> DataFrame:
    """Score the test vectors with the models and write ``predictions``; return the test vectors read."""
    settings = config.train
    models = spark.read.parquet(tables.input("models")).orderBy("category").toPandas()
    n_terms = spark.read.parquet(tables.input("vocabulary")).count()
    scorer = Scorer.of(models, n_terms, settings.knn_k, storage.join(tables.input("vectors"), "split=train"))
    shared = spark.sparkContext.broadcast(scorer)
    test = spark.read.parquet(tables.input("vectors")).filter(F.col("split") == TEST) \
        .select("doc_id", "labels", "indices", "values")
    n_train = spark.read.parquet(tables.input("vectors")).filter(F.col("split") == TRAIN).count()
    threshold, rcut_k = decision_rule(settings, models, n_train, test, shared)
    top_k = config.evaluate.top_scores

    def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            try:
                inject("score")
                predicted = predict_batch(batch, shared.value, threshold, rcut_k, top_k)
            except MemoryError:
                raise out_of_memory("evaluate", f"scoring {len(batch)} test documents") from None
            yield predicted

    with explained_failures("evaluate"):
        test.mapInArrow(score, PREDICTIONS_DDL).write.mode("overwrite").parquet(tables.output("predictions"))
    shared.unpersist()
    return test


def contingency_tables(predictions: DataFrame, categories: DataFrame) -> DataFrame:
    """Per category: TP, FP, FN, TN over the predicted documents, with training and test positives."""
    n_documents = predictions.count()

    def per_category(column, name: str) -> DataFrame:
        return predictions.select(F.explode(column).alias("category")).groupBy("category").agg(F.count("*").alias(name))

    true = per_category(F.col("labels"), "positives")
    assigned = per_category(F.col("predicted"), "assigned")
    hits = per_category(F.array_intersect("labels", "predicted"), "tp")
    table = (
        categories.select("category", "name", "parent", "train_positives")
        .join(true, "category", "left").join(assigned, "category", "left").join(hits, "category", "left")
        .fillna(0, ["positives", "assigned", "tp"])
    )
    return table.select(
        "category", "name", "parent", "train_positives", F.col("positives").alias("test_positives"),
        F.col("tp").cast("long").alias("tp"),
        (F.col("assigned") - F.col("tp")).cast("long").alias("fp"),
        (F.col("positives") - F.col("tp")).cast("long").alias("fn"),
        (F.lit(n_documents) - F.col("positives") - F.col("assigned") + F.col("tp")).cast("long").alias("tn"),
    )


def ranking_averages(predictions: DataFrame, ks: list[int]) -> dict[str, float]:
    """P@K, R@K, RP@K, nDCG@K per document on the executors (from each document's top-K), averaged by Spark sums."""
    names = [f"{measure}@{k}" for measure in RANKING_MEASURES for k in ks]
    schema = StructType([StructField(name, LongType()) for name in [*names, "documents"]])
    k_max = max(ks)

    def measure(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            hits, n_relevant = hits_from_rankings(
                batch.column("top_categories").to_pylist(), batch.column("labels").to_pylist(), k_max)
            values = ranking_measures(hits, n_relevant, ks)
            yield pa.RecordBatch.from_pydict(
                {**{name: [int(np.rint(values[name] * FIXED_POINT).astype(np.int64).sum())] for name in names},
                 "documents": [len(batch)]})

    sums = predictions.select("top_categories", "labels").mapInArrow(measure, schema) \
        .agg(*[F.sum(F.col(f"`{name}`")).alias(name) for name in [*names, "documents"]]).first()
    documents = sums["documents"] or 0
    return {name: (sums[name] / FIXED_POINT / documents if documents else 0.0) for name in names}


def write_reports(spark: SparkSession, tables: Tables, metrics: dict, table) -> None:
    """metrics.json, report.md, per_category.csv and the two plots, through the Hadoop file system."""
    storage.write_text(spark, tables.output("metrics.json"), json.dumps(to_builtin(metrics), indent=2) + "\n")
    storage.write_text(spark, tables.output("report.md"), reports.report_markdown(metrics, table))
    storage.write_text(spark, tables.output("per_category.csv"), reports.per_category_csv(table))
    storage.write_bytes(spark, tables.output("f1_by_training_frequency.png"), reports.plot_f1_by_training_frequency(table))
    storage.write_bytes(spark, tables.output("f1_by_band.png"), reports.plot_f1_by_band(metrics["bands"]))


def format_table(metrics: dict, table) -> str:
    lines = [f"{'category':<12} {'train+':>7} {'test+':>7} {'TP':>6} {'FP':>6} {'FN':>6} {'P':>6} {'R':>6} {'F1':>6}"]
    for row in table.itertuples():
        scores = f"{row.precision:6.3f} {row.recall:6.3f} {row.f1:6.3f}" + ("" if row.averaged else "  (not averaged)")
        lines.append(f"{row.category:<12} {row.train_positives:>7} {row.test_positives:>7} "
                     f"{row.tp:>6} {row.fp:>6} {row.fn:>6} {scores}")
    lines.append(
        f"micro P {metrics['micro_precision']:.4f}  R {metrics['micro_recall']:.4f}  F1 {metrics['micro_f1']:.4f}   "
        f"macro P {metrics['macro_precision']:.4f}  R {metrics['macro_recall']:.4f}  F1 {metrics['macro_f1']:.4f}   "
        f"over {metrics['n_categories']} categories ({metrics['averaged_over']}); {metrics['zero_division_convention']}"
    )
    return "\n".join(lines)


def evaluate(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    settings = config.evaluate
    with stage(spark, "evaluate") as report:
        test = predict(spark, config, tables)
        predictions = spark.read.parquet(tables.output("predictions"))
        categories = spark.read.parquet(tables.input("categories"))
        contingency_tables(predictions, categories).orderBy("category").coalesce(1) \
            .write.mode("overwrite").parquet(tables.output("contingency"))
        contingency = spark.read.parquet(tables.output("contingency")).toPandas()
        subsets = category_subsets(contingency, config.corpus.format, settings.subsets)
        metrics, table = assemble(contingency, subsets, settings.average_over, settings.zero_division,
                                  settings.bands, ranking_averages(predictions, settings.ranks))
        per_category_rows = metrics.pop("per_category")
        metrics.update({
            "corpus": config.corpus.format,
            "test_documents": int(predictions.count()),
            "settings": {section: config.as_dict()[section] for section in SETTINGS},
            "per_category": per_category_rows,
        })
        write_reports(spark, tables, metrics, table)
        print(format_table(metrics, table), flush=True)
        report.rows_in = test.count()
        report.rows_out = metrics["test_documents"]
        report.details = {k: metrics[k] for k in ("micro_f1", "macro_f1", "n_categories")}
    return report


STAGE = Stage(
    "evaluate", evaluate, reads=("models", "vocabulary", "vectors", "categories"),
    writes=("predictions", "contingency", "metrics.json", "report.md", "per_category.csv",
            "f1_by_training_frequency.png", "f1_by_band.png"),
    sections=SETTINGS,
)
