"""Tokenize: ``documents`` -> ``tokens`` (doc_id, split, labels, tokens) by the LYRL2004 recipe.

Documents that arrive tokenized (LYRL2004 token files: already stop-listed and stemmed) pass
through unchanged; raw texts go through :class:`sparktc.text.Analyzer` on the executors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sparktc import storage
from sparktc.config import Config
from sparktc.stages.report import StageReport, stage
from sparktc.text import Analyzer, parse_stop_list

TOKENS_DDL = "doc_id string, split string, labels array<string>, tokens array<string>"


def tokenize(spark: SparkSession, config: Config, output: str) -> StageReport:
    settings = config.tokenize
    stop_words = parse_stop_list(storage.read_text(spark, settings.stop_list)) if settings.stop_list else frozenset()
    stemmer = settings.stemmer

    def analyze(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        analyzer = Analyzer(stop_words, stemmer)
        for batch in batches:
            tokens = analyzer.analyze([text or "" for text in batch.column("text").to_pylist()])
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), batch.column("split"), batch.column("labels"),
                 pa.array(tokens, type=pa.list_(pa.string()))],
                names=["doc_id", "split", "labels", "tokens"],
            )

    with stage(spark, "tokenize") as report:
        documents = spark.read.parquet(storage.join(output, "documents"))
        # Tokenized documents are copied by Spark alone; only raw texts visit the Python analyzer.
        given = documents.filter(F.col("tokens").isNotNull()).select("doc_id", "split", "labels", "tokens")
        analyzed = documents.filter(F.col("tokens").isNull()).mapInArrow(analyze, TOKENS_DDL)
        given.unionByName(analyzed).write.mode("overwrite").parquet(storage.join(output, "tokens"))
        written = spark.read.parquet(storage.join(output, "tokens"))
        report.rows_in = documents.count()
        report.rows_out = written.count()
        stats = written.agg(
            F.sum(F.size("tokens")).alias("tokens"),
            F.sum(F.when(F.size("tokens") == 0, 1).otherwise(0)).alias("empty"),
        ).first()
        report.details = {
            "tokens": int(stats["tokens"] or 0),
            "documents_without_tokens": int(stats["empty"] or 0),
            "stop_words": len(stop_words),
            "stemmer": stemmer,
        }
    return report
