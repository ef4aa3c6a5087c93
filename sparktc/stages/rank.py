"""Rank terms: ``vectors`` (training split) -> ``term_ranks`` by global chi-square (REFERENCE.md section 4).

Spark counts A(t, c), the training documents holding term t in category c, by exploding each
document's term ids against its labels; df(t) comes from ``vocabulary`` and |c| from
``categories``. The executors turn each block of terms into 2x2 tables and chi2 scores with
:mod:`sparktc.term_selection`, and reduce them to f_max and f_avg; a window over the (vocabulary
sized) result gives the rank.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from sparktc.config import Config
from sparktc.faults import inject
from sparktc.records import TRAIN
from sparktc.stages.report import StageReport, stage
from sparktc.stages.runner import Stage, Tables
from sparktc.term_selection import chi2, contingency_2x2, global_avg, global_max

SCORES_DDL = "term_id int, chi2_max double, chi2_avg double"


def rank(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    with stage(spark, "rank") as report:
        vectors = spark.read.parquet(tables.input("vectors")).filter(F.col("split") == TRAIN)
        vocabulary = spark.read.parquet(tables.input("vocabulary"))
        categories = spark.read.parquet(tables.input("categories")).orderBy("category").toPandas()
        codes = categories["category"].tolist()
        n_positive = categories["train_positives"].to_numpy(dtype=np.int64)
        n_train = vectors.count()
        p_c = n_positive / n_train
        column = {code: j for j, code in enumerate(codes)}

        a_counts = (
            vectors.select(F.explode("indices").alias("term_id"), "labels")
            .select("term_id", F.explode("labels").alias("category"))
            .groupBy("term_id", "category").count()
            .groupBy("term_id").agg(F.collect_list(F.struct("category", "count")).alias("a"))
        )
        per_term = vocabulary.select("term_id", "df").join(a_counts, "term_id", "left")

        def score(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for frame in frames:
                inject("rank")
                A = np.zeros((len(frame), len(codes)), dtype=np.int64)
                for i, pairs in enumerate(frame["a"]):
                    if pairs is not None:
                        for pair in pairs:
                            A[i, column[pair["category"]]] = pair["count"]
                df = frame["df"].to_numpy(dtype=np.int64)[:, None]
                scores = chi2(*contingency_2x2(A, df, n_positive, n_train))
                yield pd.DataFrame({
                    "term_id": frame["term_id"].to_numpy(dtype=np.int32),
                    "chi2_max": global_max(scores),
                    "chi2_avg": global_avg(scores, p_c),
                })

        order = F.col(f"chi2_{config.rank.global_score}")
        ranked = (
            per_term.mapInPandas(score, SCORES_DDL)
            .join(vocabulary.select("term_id", "term", "df"), "term_id")
            .withColumn("rank", F.row_number().over(Window.orderBy(order.desc(), F.col("term_id"))).cast("int"))
            .select("term_id", "term", "df", "chi2_max", "chi2_avg", "rank")
        )
        ranked.coalesce(1).write.mode("overwrite").parquet(tables.output("term_ranks"))
        report.rows_in = vocabulary.count()
        report.rows_out = spark.read.parquet(tables.output("term_ranks")).count()
        report.details = {"global_score": config.rank.global_score, "categories": len(codes), "train_documents": n_train}
    return report


STAGE = Stage("rank", rank, reads=("vectors", "vocabulary", "categories"), writes=("term_ranks",), sections=("rank",))
