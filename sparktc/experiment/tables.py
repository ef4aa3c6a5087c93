"""What the stages and the apps share over a run's tables, so that no stage imports another and classify imports
none: files parsed into records by a format's reader (:func:`parse_files`), repeated doc ids rejected
(:func:`mark_duplicates`), the term order of ``term_ranks`` (:func:`term_order`), and how scored documents are
cut, PCut's thresholds ranked in Spark (:func:`cut_of`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.files import Reader
from sparktc.corpora.records import RECORD_SCHEMA
from sparktc.experiment.config import Config
from sparktc.features.term_selection import rank_order, ranking_column
from sparktc.models.decision import Cut, DecisionRule
from sparktc.models.thresholds import pcut_counts
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import read_small

__all__ = ["cut_of", "mark_duplicates", "parse_files", "pcut_thresholds_of_documents", "source_line", "term_order"]


# Spark globs every path it loads: unescaped, a file named "a[1].jsonl" would read "a1.jsonl".
_GLOB_CHARACTERS = re.compile(r"([\\{}\[\]*?])")


def parse_files(spark: SparkSession, paths: list[str], reader: Reader) -> DataFrame:
    """One row per record of every file (a document, ``reason`` null, or a rejected record);
    ``paths`` name files or directories, never patterns.
    """

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            inject("parse")
            for source, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
                yield from reader(content, source)

    literal = [_GLOB_CHARACTERS.sub(r"\\\1", path) for path in paths]
    files = spark.read.format("binaryFile").load(literal).select("path", "content")
    return files.mapInArrow(parse, from_arrow_schema(RECORD_SCHEMA))


def source_line(first: Column) -> Column:
    """Where a record is, ``source:line``, from its (source, line) struct."""
    return F.concat(first["source"], F.lit(":"), first["line"].cast("string"))


def mark_duplicates(records: DataFrame, where: Callable[[Column], Column] = source_line) -> DataFrame:
    """Reject every repeat of a doc id after its first occurrence (by source, then line), the reason naming the
    first occurrence as ``where`` words its (source, line) struct.

    Only the (doc_id, source, line) keys are shuffled to find repeated ids; the few repeats are
    broadcast back, so the documents themselves are not moved.
    """
    first = F.min(F.struct("source", "line"))
    repeated = (
        records.filter(F.col("reason").isNull()).groupBy("doc_id")
        .agg(F.count("*").alias("_n"), first.alias("_first")).filter(F.col("_n") > 1).drop("_n")
    )
    marked = records.join(F.broadcast(repeated), "doc_id", "left")
    is_repeat = F.col("reason").isNull() & F.col("_first").isNotNull() & (
        (F.col("source") != F.col("_first.source")) | (F.col("line") != F.col("_first.line"))
    )
    duplicate = F.concat(F.lit("duplicate doc id (first at "), where(F.col("_first")),
                         F.lit("); doc ids must be unique"))
    return marked.withColumn("reason", F.when(is_repeat, duplicate).otherwise(F.col("reason"))).drop("_first")


def pcut_thresholds_of_documents(test: DataFrame, shared, train_share: np.ndarray) -> np.ndarray:
    """PCut (REFERENCE.md section 5) over a DataFrame of vectors, scored by the shared scorer ``shared`` (its ``value``)
    and ranked in Spark: per category, the score of the document ranked just below the training share of
    the documents, so that share of documents scores above it (in memory:
    :func:`sparktc.models.thresholds.pcut_thresholds`).
    """

    def long(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        scorer = shared.value
        for batch in batches:
            scores = scorer.scores(scorer.matrix(batch))
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


def cut_of(rule: DecisionRule, models: pd.DataFrame, documents: DataFrame, shared, n_train: Callable[[], int]) -> Cut:
    """How ``documents`` are decided (:meth:`sparktc.models.decision.DecisionRule.cut`): the models' own
    thresholds, RCut's k, or PCut's thresholds over ``documents``, each category's share being its training
    positives out of ``n_train()`` training documents (counted for PCut only).
    """
    return rule.cut(models["threshold"].to_numpy(), lambda: pcut_thresholds_of_documents(
        documents, shared, models["train_positives"].to_numpy() / max(n_train(), 1)))


def term_order(term_ranks: str, config: Config) -> np.ndarray:
    """Term ids from the best [rank] score (``rank.score`` under ``rank.global_score``, or the most frequent first)
    down, vocabulary-sized.
    """
    column = ranking_column(config.rank.score, config.rank.global_score)
    ranks = read_small(term_ranks, ["term_id", column])
    return rank_order(ranks["term_id"].to_numpy(), ranks[column].to_numpy())
