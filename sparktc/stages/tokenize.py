"""Tokenize: ``documents`` -> ``tokens`` (doc_id, split, labels, tokens) by the LYRL2004 recipe or scikit-learn's
default analyzer (``tokenize.analyzer``).

``tokens`` is one string per document, tokens separated by single spaces (see
:data:`sparktc.corpora.records.RECORD_SCHEMA`); :func:`token_array` is the same list in Spark.

Documents that arrive tokenized (LYRL2004 token files: already stop-listed and stemmed) pass
through unchanged; raw texts go through :class:`sparktc.features.text.Analyzer` on the executors, one task
per ``documents`` file (:mod:`sparktc.runtime.parts`: pyarrow reads the texts and writes the tokens, and the
task counts what it wrote), so the texts never pass through the JVM: measured on 200,000 JSON Lines documents
(docs/benchmarks/text-scale.md), Spark's reading, Arrow transfers and writing cost more CPU than the analysis itself.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.records import token_counts
from sparktc.corpora.registry import FORMATS
from sparktc.experiment.config import Config
from sparktc.features.text import STEMS, Analyzer, TermFeatures, stop_words_of, token_strings
from sparktc.filesystem import arrow_filesystem
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import count_rows, map_parts, parquet_files, read_batches, write_parts
from sparktc.runtime.runner import Stage, Tables, read_manifest
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import TOKENS_SCHEMA

#: Documents analyzed at a time: raw texts are big (a batch of 8,192 is some 10 MB of Python strings).
BATCH_ROWS = 8192


def token_array(tokens: Column) -> Column:
    """A stored token string as an array of tokens ("" is no token at all)."""
    return F.when(tokens == "", F.array().cast("array<string>")).otherwise(F.split(tokens, " "))


def count_tokens(index: int, path: str) -> tuple[int, int, int]:
    """Documents, tokens and documents without tokens in one ``tokens`` file (a count of separators:
    the strings are never split).
    """
    counted = [token_counts(batch.column("tokens")) for batch in read_batches(path, ["tokens"])]
    return tuple(sum(column) for column in zip(*counted)) if counted else (0, 0, 0)


@functools.lru_cache(maxsize=1)
def worker_analyzer(stop_words: frozenset[str], stemmer: str, analyzer: str) -> Analyzer:
    """One :class:`Analyzer` per Python worker, kept across its tasks, so its table of stems stays warm (a cold
    table costs some 25% more per document).
    """
    return Analyzer(stop_words, stemmer, analyzer)


def tokenize_file(index: int, path: str, output: str, analyzer: Analyzer,
                  features: TermFeatures = STEMS) -> tuple[int, int, int]:
    """The tokens of one ``documents`` file into ``output/part-<index>-*``: a document's tokens as given, else its
    text (and title) analyzed into the terms ``features`` makes; the documents read, and the documents, tokens and
    documents without tokens written.
    """
    inject("tokenize")  # once per task, whether or not its file has rows
    read, counted = 0, [(0, 0, 0)]

    def tokenized() -> Iterator[pa.RecordBatch]:
        nonlocal read
        for batch in read_batches(path, ["doc_id", "split", "labels", "text", "title", "tokens"], BATCH_ROWS):
            read += len(batch)
            given = batch.column("tokens")
            raw = batch.column("text") if given.null_count == len(batch) else \
                pc.if_else(pc.is_null(given), batch.column("text"), pa.scalar(None, pa.string()))
            tokens = pc.coalesce(given, token_strings(analyzer, raw, batch.column("title"), features))
            counted.append(token_counts(tokens))
            yield pa.RecordBatch.from_arrays([batch.column("doc_id"), batch.column("split"), batch.column("labels"),
                                              tokens], schema=TOKENS_SCHEMA)

    write_parts(tokenized(), TOKENS_SCHEMA, output, index)
    return read, *(sum(column) for column in zip(*counted))


def tokenize(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """The tokenize stage (module docstring): ``tokens`` of the ``documents``, linked as they are when the corpus comes
    tokenized.
    """
    settings = config.tokenize
    stop_words = stop_words_of(settings.stop_list, lambda path: storage.read_text(spark, path))
    stemmer, analyzer, features = settings.stemmer, settings.analyzer, settings.features()

    with stage(spark, "tokenize") as report:
        if FORMATS[config.corpus.format].comes_tokenized(config.corpus):
            # A corpus that comes tokenized (LYRL2004): its documents are the tokens table, file for file, whose
            # tokens ingest counted as it parsed them when nothing was set aside.
            storage.link_or_copy(spark, tables.input("documents"), tables.output("tokens"))
            ingested = (read_manifest(spark, tables.root, "ingest") or {}).get("details") or {}
            if "tokens" in ingested:
                rows = sum(pq.ParquetFile(file, filesystem=arrow_filesystem(file)[0]).metadata.num_rows
                           for file in parquet_files(tables.output("tokens")))
                counted = [(rows, ingested["tokens"]["tokens"], ingested["tokens"]["documents_without_tokens"])]
            else:
                counted = map_parts(spark, parquet_files(tables.output("tokens")), count_tokens)
            rows_in = count_rows(tables.input("documents"))
        else:
            output = tables.output("tokens")

            def analyze(index: int, path: str) -> tuple[int, int, int, int]:
                return tokenize_file(index, path, output, worker_analyzer(stop_words, stemmer, analyzer), features)

            analyzed = map_parts(spark, parquet_files(tables.input("documents")), analyze, [output])
            rows_in = sum(read for read, *_ in analyzed)
            counted = [written for _, *written in analyzed]
        report.rows_in = rows_in
        report.rows_out = sum(documents for documents, _, _ in counted)
        report.details = {
            "tokens": sum(tokens for _, tokens, _ in counted),
            "documents_without_tokens": sum(empty for _, _, empty in counted),
            "analyzer": analyzer,
            "stop_words": len(stop_words),
            "stemmer": stemmer,
            "ngrams": features.ngrams,
            "title_weight": features.title_weight,
            "title_terms": features.title_terms,
        }
    return report


STAGE = Stage("tokenize", tokenize, reads=("documents",), writes=("tokens",), sections=("tokenize",),
              files=lambda config: [config.tokenize.stop_list])
