"""Tokenize: ``documents`` -> ``tokens`` (doc_id, split, labels, tokens) by the LYRL2004 recipe.

``tokens`` is one string per document, tokens separated by single spaces (see
:data:`sparktc.records.RECORD_SCHEMA`); :func:`token_array` is the same list in Spark.

Documents that arrive tokenized (LYRL2004 token files: already stop-listed and stemmed) pass
through unchanged; raw texts go through :class:`sparktc.text.Analyzer` on the executors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from sparktc import storage
from sparktc.config import Config, TokenizeConfig
from sparktc.faults import inject
from sparktc.records import join_tokens
from sparktc.stages.report import StageReport, stage
from sparktc.stages.runner import Stage, Tables
from sparktc.text import Analyzer, parse_stop_list

TOKENS_DDL = "doc_id string, split string, labels array<string>, tokens string"


def token_array(tokens: Column) -> Column:
    """A stored token string as an array of tokens ("" is no token at all)."""
    return F.when(tokens == "", F.array().cast("array<string>")).otherwise(F.split(tokens, " "))


def stop_words_of(spark: SparkSession, settings: TokenizeConfig) -> frozenset[str]:
    """The words of ``tokenize.stop_list`` (none when it is not set)."""
    return parse_stop_list(storage.read_text(spark, settings.stop_list)) if settings.stop_list else frozenset()


def token_strings(analyzer: Analyzer, texts: pa.Array | pa.ChunkedArray) -> pa.StringArray:
    """Raw texts analyzed into stored token strings (a null text has no tokens): the tokenize stage's
    recipe, shared with the classification of new documents."""
    tokens = analyzer.analyze([text or "" for text in texts.to_pylist()])
    return pa.array([join_tokens(t) for t in tokens], type=pa.string())


def tokenize(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    settings = config.tokenize
    stop_words = stop_words_of(spark, settings)
    stemmer = settings.stemmer

    def analyze(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        analyzer = Analyzer(stop_words, stemmer)
        for batch in batches:
            inject("tokenize")
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), batch.column("split"), batch.column("labels"),
                 token_strings(analyzer, batch.column("text"))],
                names=["doc_id", "split", "labels", "tokens"],
            )

    with stage(spark, "tokenize") as report:
        documents = spark.read.parquet(tables.input("documents"))
        if "text" not in documents.columns:
            # A corpus that comes tokenized (LYRL2004): its documents are the tokens table, file for file.
            storage.copy(spark, tables.input("documents"), tables.output("tokens"))
        else:
            # Documents with tokens given are copied by Spark alone; only raw texts visit the analyzer.
            given = documents.filter(F.col("tokens").isNotNull()).select("doc_id", "split", "labels", "tokens")
            analyzed = documents.filter(F.col("tokens").isNull()).mapInArrow(analyze, TOKENS_DDL)
            given.unionByName(analyzed).write.mode("overwrite").parquet(tables.output("tokens"))
        written = spark.read.parquet(tables.output("tokens"))
        report.rows_in = documents.count()
        report.rows_out = written.count()
        stats = written.agg(
            F.sum(F.size(token_array(F.col("tokens")))).alias("tokens"),
            F.sum(F.when(F.col("tokens") == "", 1).otherwise(0)).alias("empty"),
        ).first()
        report.details = {
            "tokens": int(stats["tokens"] or 0),
            "documents_without_tokens": int(stats["empty"] or 0),
            "stop_words": len(stop_words),
            "stemmer": stemmer,
        }
    return report


STAGE = Stage("tokenize", tokenize, reads=("documents",), writes=("tokens",), sections=("tokenize",),
              files=lambda config: [config.tokenize.stop_list])
