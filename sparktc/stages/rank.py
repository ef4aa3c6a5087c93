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

The stage depends on no setting: which score ranks the terms is [rank]'s, read by the stages that select
(:func:`term_order`), so changing it re-selects without recounting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import types as T
from scipy import sparse

from sparktc.features.term_selection import GLOBAL_SCORES, SCORES, global_scores, rank_order, score_column
from sparktc.runtime import faults, storage
from sparktc.runtime.config import Config
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import parquet_files, read_batches, read_small
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage

#: Every score column of ``term_ranks``: each function of SCORES under each globalization of GLOBAL_SCORES.
SCORE_COLUMNS = tuple(score_column(score, global_score) for score in SCORES for global_score in GLOBAL_SCORES)
#: The ``term_ranks`` table, in term_id order.
TERM_RANKS_SCHEMA = T.StructType([
    T.StructField("term_id", T.IntegerType()), T.StructField("term", T.StringType()), T.StructField("df", T.LongType()),
    *(T.StructField(column, T.DoubleType()) for column in SCORE_COLUMNS),
])
BATCH_ROWS = 32_768  # training documents counted at a time in a task
BLOCK_TERMS = 2048  # terms scored at a time on the driver: the 2x2 tables of a block stay in the cache


def term_category_counts(indices: pa.Array, labels: pa.Array, categories: Sequence[str],
                         n_terms: int) -> sparse.csr_matrix:
    """A = X^T Y for one chunk of documents: ``A[t, j]`` = the documents holding term t whose labels
    include ``categories[j]``, an int64 ``n_terms x len(categories)`` CSR matrix. ``indices`` and
    ``labels`` are list columns, one list per document (null lists are empty); a term repeated in a
    document counts once. A term id outside ``[0, n_terms)`` or a label outside ``categories`` is
    an error."""
    n_documents = len(indices)
    term_ids = pc.list_flatten(indices)
    label_codes = pc.index_in(pc.list_flatten(labels), value_set=pa.array(list(categories), pa.string()))
    if term_ids.null_count:
        raise ValueError("vectors: a document's indices hold a null term id")
    if label_codes.null_count:
        unknown = pc.filter(pc.list_flatten(labels), pc.is_null(label_codes))[0]
        raise ValueError(f"vectors: label {unknown} is not in the categories table")
    columns = term_ids.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    if len(columns) and (columns.min() < 0 or columns.max() >= n_terms):
        bad = columns[(columns < 0) | (columns >= n_terms)][0]
        raise ValueError(f"vectors: term id {bad} is outside the vocabulary's {n_terms} terms")
    X = sparse.csr_matrix((np.ones(len(columns), dtype=np.int64), columns, _offsets(indices)),
                          shape=(n_documents, n_terms))
    X.sum_duplicates()
    X.data[:] = 1
    codes = label_codes.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    Y = sparse.csr_matrix((np.ones(len(codes), dtype=np.int64), codes, _offsets(labels)),
                          shape=(n_documents, len(categories)))
    Y.sum_duplicates()
    Y.data[:] = 1
    return sparse.csr_matrix(X.T @ Y, dtype=np.int64)


def _offsets(lists: pa.Array) -> np.ndarray:
    """CSR row pointers of a list column (null lists are empty)."""
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def count_file(path: str, categories: Sequence[str], n_terms: int) -> tuple[int, sparse.csr_matrix]:
    """(training documents, their A counts) of one ``vectors`` file, batch by batch."""
    inject("rank")
    documents = 0
    counts = sparse.csr_matrix((n_terms, len(categories)), dtype=np.int64)
    for batch in read_batches(path, ["indices", "labels"], BATCH_ROWS):
        documents += len(batch)
        counts = counts + term_category_counts(batch.column("indices"), batch.column("labels"), categories, n_terms)
    return documents, counts


def add_counts(left: tuple[int, sparse.csr_matrix] | None,
               right: tuple[int, sparse.csr_matrix] | None) -> tuple[int, sparse.csr_matrix] | None:
    """The sum of two (documents, counts) pairs; None is zero."""
    if left is None or right is None:
        return right if left is None else left
    return left[0] + right[0], left[1] + right[1]


def count_training(spark: SparkSession, files: list[str],
                   count: Callable[[str], tuple[int, sparse.csr_matrix]]) -> tuple[int, sparse.csr_matrix] | None:
    """The training documents and their A counts over ``files``, ``count`` (one file's) run one task per file
    and summed by a tree reduction: the driver receives vocabulary x categories sums, never documents. None
    without files."""
    if not files:
        return None
    with faults.to_tasks(spark):
        return spark.sparkContext.parallelize(files, len(files)).map(count).treeAggregate(None, add_counts, add_counts)


def scores(counts: sparse.csr_matrix, df: np.ndarray, n_positive: np.ndarray, n_train: int,
           columns: tuple[str, ...] = SCORE_COLUMNS) -> dict[str, np.ndarray]:
    """The score ``columns`` of every term (a row of ``counts``), a block of terms at a time."""
    n_terms = counts.shape[0]
    result = {column: np.empty(n_terms) for column in columns}
    for start in range(0, n_terms, BLOCK_TERMS):
        block = slice(start, start + BLOCK_TERMS)
        for column, values in global_scores(counts[block].toarray(), df[block, None], n_positive, n_train,
                                            columns).items():
            result[column][block] = values
    return result


def term_order(spark: SparkSession, term_ranks: str, config: Config) -> np.ndarray:
    """Term ids from the best [rank] score (``rank.score`` under ``rank.global_score``) down, vocabulary-sized."""
    column = score_column(config.rank.score, config.rank.global_score)
    ranks = read_small(term_ranks, ["term_id", column])
    return rank_order(ranks["term_id"].to_numpy(), ranks[column].to_numpy())


def rank(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    with stage(spark, "rank") as report:
        vocabulary = read_small(tables.input("vocabulary"), ["term_id", "term", "df"]).sort_by("term_id")
        categories = read_small(tables.input("categories"), ["category", "train_positives"]).sort_by("category")
        codes = categories["category"].to_pylist()
        n_positive = categories["train_positives"].to_numpy().astype(np.int64)
        term_ids = vocabulary["term_id"].to_numpy().astype(np.int64)
        n_terms = int(term_ids.max()) + 1 if len(term_ids) else 0

        train_path = storage.join(tables.input("vectors"), "split=train")
        files = parquet_files(train_path) if storage.exists(spark, train_path) else []
        total = count_training(spark, files, lambda path: count_file(path, codes, n_terms))
        n_train, counts = total or (0, sparse.csr_matrix((n_terms, len(codes)), dtype=np.int64))

        df = vocabulary["df"].to_numpy().astype(np.int64)
        ranked = pa.table({
            "term_id": pa.array(term_ids, pa.int32()), "term": vocabulary["term"], "df": pa.array(df, pa.int64()),
            **{column: pa.array(values, pa.float64())
               for column, values in scores(counts[term_ids], df, n_positive, n_train).items()},
        })
        spark.createDataFrame(ranked, TERM_RANKS_SCHEMA).coalesce(1) \
            .write.mode("overwrite").parquet(tables.output("term_ranks"))
        report.rows_in = vocabulary.num_rows
        report.rows_out = ranked.num_rows
        report.details = {"scores": list(SCORE_COLUMNS), "categories": len(codes), "train_documents": n_train}
    return report


STAGE = Stage("rank", rank, reads=("vectors", "vocabulary", "categories"), writes=("term_ranks",))
