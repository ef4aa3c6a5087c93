"""Rank terms: ``vectors`` (training split) -> ``term_ranks``, every term-selection score of every term (REFERENCE.md
section 4).

A(t, c), the training documents holding term t in category c, is the sparse product X^T Y of the
binary document x term matrix X and the document x category indicator matrix Y. The executors
compute it for the training files one task per file (pyarrow reads the ``indices`` and ``labels``
columns, no Spark rows) and Spark sums the vocabulary x categories counts with a tree reduction,
so the driver receives a few sparse matrices whatever the number of documents. df(t) comes from
``vocabulary`` and |c| from ``categories`` (small tables the driver reads with pyarrow); the driver
turns the counts into 2x2 tables with :mod:`sparktc.features.term_selection`, block of terms by block of terms,
and scores them by chi-square, information gain and gain ratio, each globalized by f_max, f_avg and the plain mean.
Beside them, ``frequency``, each term's occurrences in the training documents as the weight stage counted them
(``vocabulary.frequency``), the ranking of ``rank.score = "frequency"``.

The stage depends on no setting: which score ranks the terms is [rank]'s, read by the stages that select
(:func:`sparktc.experiment.tables.term_order`), so changing it re-selects without recounting. (The frequency ranking
is the exception: it cuts the vocabulary in the weight stage, which depends on it.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from scipy import sparse

from sparktc.experiment.config import Config
from sparktc.features.matrix import term_category_counts
from sparktc.features.term_selection import FREQUENCY, SCORE_COLUMNS, term_scores
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import parquet_files, read_batches, read_small, sum_over_files, write_parts
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage

#: The ``term_ranks`` table, in term_id order: each term's df, occurrences and every score of SCORE_COLUMNS.
TERM_RANKS_SCHEMA = pa.schema([("term_id", pa.int32()), ("term", pa.string()), ("df", pa.int64()),
                               (FREQUENCY, pa.int64()), *((column, pa.float64()) for column in SCORE_COLUMNS)])
BATCH_ROWS = 32_768  # training documents counted at a time in a task


def count_file(path: str, categories: Sequence[str], n_terms: int) -> tuple[int, sparse.csr_matrix]:
    """(training documents, their A counts) of one ``vectors`` file, batch by batch."""
    inject("rank")
    documents = 0
    counts = sparse.csr_matrix((n_terms, len(categories)), dtype=np.int64)
    for batch in read_batches(path, ["indices", "labels"], BATCH_ROWS):
        documents += len(batch)
        counts = counts + term_category_counts(batch.column("indices"), batch.column("labels"), categories, n_terms)
    return documents, counts


def rank(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """The rank stage (module docstring): ``term_ranks``, every term-selection score of every term, counted over the
    training split.
    """
    with stage(spark, "rank") as report:
        vocabulary = read_small(tables.input("vocabulary"), ["term_id", "term", "df", FREQUENCY]).sort_by("term_id")
        categories = read_small(tables.input("categories"), ["category", "train_positives"]).sort_by("category")
        codes = categories["category"].to_pylist()
        n_positive = categories["train_positives"].to_numpy().astype(np.int64)
        term_ids = vocabulary["term_id"].to_numpy().astype(np.int64)
        n_terms = int(term_ids.max()) + 1 if len(term_ids) else 0

        train_path = storage.join(tables.input("vectors"), "split=train")
        files = parquet_files(train_path) if storage.exists(spark, train_path) else []
        total = sum_over_files(spark, files, lambda path: count_file(path, codes, n_terms))
        n_train, counts = total or (0, sparse.csr_matrix((n_terms, len(codes)), dtype=np.int64))

        df = vocabulary["df"].to_numpy().astype(np.int64)
        ranked = pa.table({
            "term_id": pa.array(term_ids, pa.int32()), "term": vocabulary["term"], "df": pa.array(df, pa.int64()),
            FREQUENCY: vocabulary[FREQUENCY],
            **{column: pa.array(values, pa.float64())
               for column, values in term_scores(counts[term_ids], df, n_positive, n_train).items()},
        }, schema=TERM_RANKS_SCHEMA)
        # Vocabulary-sized, so the driver writes it with pyarrow, as weight writes ``vocabulary``: no Spark job.
        write_parts(ranked.to_batches(), TERM_RANKS_SCHEMA, tables.output("term_ranks"), 0)
        report.rows_in = vocabulary.num_rows
        report.rows_out = ranked.num_rows
        report.details = {"scores": list(SCORE_COLUMNS), "categories": len(codes), "train_documents": n_train}
    return report


STAGE = Stage("rank", rank, reads=("vectors", "vocabulary", "categories"), writes=("term_ranks",))
