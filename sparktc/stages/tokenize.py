"""Tokenize: ``documents`` -> ``tokens`` (doc_id, split, labels, tokens) by the LYRL2004 recipe.

``tokens`` is one string per document, tokens separated by single spaces (see
:data:`sparktc.corpora.records.RECORD_SCHEMA`); :func:`token_array` is the same list in Spark.

Documents that arrive tokenized (LYRL2004 token files: already stop-listed and stemmed) pass
through unchanged; raw texts go through :class:`sparktc.features.text.Analyzer` on the executors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.records import TOKENIZED_FORMATS, token_counts
from sparktc.features.text import Analyzer, stop_words_of
from sparktc.filesystem import arrow_filesystem
from sparktc.runtime import storage
from sparktc.runtime.config import Config
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import map_parts, parquet_files, read_batches
from sparktc.runtime.runner import Stage, Tables, read_manifest
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import TOKENS_SPARK_SCHEMA


def token_array(tokens: Column) -> Column:
    """A stored token string as an array of tokens ("" is no token at all)."""
    return F.when(tokens == "", F.array().cast("array<string>")).otherwise(F.split(tokens, " "))


def token_strings(analyzer: Analyzer, texts: pa.Array | pa.ChunkedArray) -> pa.StringArray:
    """Raw texts analyzed into stored token strings (a null text has no tokens): the tokenize stage's
    recipe, shared with the classification of new documents."""
    return pa.array(analyzer.joined([text or "" for text in texts.to_pylist()]), type=pa.string())


def count_tokens(index: int, path: str) -> tuple[int, int, int]:
    """Documents, tokens and documents without tokens in one ``tokens`` file (a count of separators:
    the strings are never split)."""
    counted = [token_counts(batch.column("tokens")) for batch in read_batches(path, ["tokens"])]
    return tuple(sum(column) for column in zip(*counted)) if counted else (0, 0, 0)


def tokenize(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    settings = config.tokenize
    stop_words = stop_words_of(settings.stop_list, lambda path: storage.read_text(spark, path))
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
        counted = None
        if config.corpus.format in TOKENIZED_FORMATS:
            # A corpus that comes tokenized (LYRL2004): its documents are the tokens table, file for file, whose
            # tokens ingest counted as it parsed them when nothing was set aside.
            storage.link_or_copy(spark, tables.input("documents"), tables.output("tokens"))
            ingested = (read_manifest(spark, tables.root, "ingest") or {}).get("details") or {}
            if "tokens" in ingested:
                rows = sum(pq.ParquetFile(file, filesystem=arrow_filesystem(file)[0]).metadata.num_rows
                           for file in parquet_files(tables.output("tokens")))
                counted = [(rows, ingested["tokens"]["tokens"], ingested["tokens"]["documents_without_tokens"])]
        else:
            # Documents with tokens given are copied by Spark alone; only raw texts visit the analyzer.
            given = documents.filter(F.col("tokens").isNotNull()).select("doc_id", "split", "labels", "tokens")
            analyzed = documents.filter(F.col("tokens").isNull()).mapInArrow(analyze, TOKENS_SPARK_SCHEMA)
            given.unionByName(analyzed).write.mode("overwrite").parquet(tables.output("tokens"))
        counts = counted or map_parts(spark, parquet_files(tables.output("tokens")), count_tokens)
        report.rows_in = documents.count()
        report.rows_out = sum(documents for documents, _, _ in counts)
        report.details = {
            "tokens": sum(tokens for _, tokens, _ in counts),
            "documents_without_tokens": sum(empty for _, _, empty in counts),
            "stop_words": len(stop_words),
            "stemmer": stemmer,
        }
    return report


STAGE = Stage("tokenize", tokenize, reads=("documents",), writes=("tokens",), sections=("tokenize",),
              files=lambda config: [config.tokenize.stop_list])
