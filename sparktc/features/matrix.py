"""Sparse document-term matrices from Arrow list columns (and the term x category counts A = X'Y of the
chi-square family), and the training set as executors load it.

The training matrix reaches each Python worker once: the worker reads the training split of
``vectors`` straight from storage (pyarrow, any file system it supports) and keeps it for every
category it trains, instead of Spark shipping a copy of the matrix with each category.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray
from scipy import sparse

from sparktc.filesystem import arrow_filesystem, per_worker

__all__ = ["TrainingSet", "csr_from_lists", "list_offsets", "load_training_set", "term_category_counts"]


def csr_from_lists(indices: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray,
                   n_features: int) -> sparse.csr_matrix:
    """CSR rows from list<int> term ids and list<float> weights, one list per document (float64)."""
    if isinstance(indices, pa.ChunkedArray):
        indices, values = indices.combine_chunks(), values.combine_chunks()
    indptr = list_offsets(indices)
    columns = pc.list_flatten(indices).to_numpy(zero_copy_only=False).astype(np.int64)
    data = pc.list_flatten(values).to_numpy(zero_copy_only=False).astype(np.float64)
    return sparse.csr_matrix((data, columns, indptr), shape=(len(indptr) - 1, n_features))


def term_category_counts(indices: pa.Array, labels: pa.Array, categories: Sequence[str],
                         n_terms: int) -> sparse.csr_matrix:
    """A = X^T Y for one chunk of documents: ``A[t, j]`` = the documents holding term t whose labels
    include ``categories[j]``, an int64 ``n_terms x len(categories)`` CSR matrix. ``indices`` and
    ``labels`` are list columns, one list per document (null lists are empty); a term repeated in a
    document counts once. A term id outside ``[0, n_terms)`` or a label outside ``categories`` is
    an error.
    """
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
    X = sparse.csr_matrix((np.ones(len(columns), dtype=np.int64), columns, list_offsets(indices)),
                          shape=(n_documents, n_terms))
    X.sum_duplicates()
    X.data[:] = 1
    codes = label_codes.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    Y = sparse.csr_matrix((np.ones(len(codes), dtype=np.int64), codes, list_offsets(labels)),
                          shape=(n_documents, len(categories)))
    Y.sum_duplicates()
    Y.data[:] = 1
    return sparse.csr_matrix(X.T @ Y, dtype=np.int64)


def list_offsets(lists: pa.Array) -> np.ndarray:
    """CSR row pointers of a list column (null lists are empty)."""
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


@dataclass(frozen=True)
class TrainingSet:
    """Training documents sorted by doc id (so results do not depend on how Spark wrote them)."""

    X: sparse.csr_matrix
    rows_of: dict[str, NDArray[np.int64]]  # category -> rows of its positive documents
    doc_ids: NDArray[np.object_] | None = None  # the rows' doc ids, in order

    def positives(self, category: str) -> NDArray[np.bool_]:
        """The training rows' labels for ``category``: True for its positive documents (all False for a category with
        none).
        """
        y = np.zeros(self.X.shape[0], dtype=np.bool_)
        y[self.rows_of.get(category, np.empty(0, dtype=np.int64))] = True
        return y


@per_worker
def load_training_set(path: str, n_features: int, column: str = "values") -> TrainingSet:
    """The training split of ``vectors`` at ``path`` (a ``split=train`` directory), its matrix of ``column``
    (``values``: the ltc weights; ``counts``: raw tf), read once per worker and kept while its files are
    unchanged (:func:`sparktc.filesystem.per_worker`).
    """
    filesystem, root = arrow_filesystem(path)
    import pyarrow.dataset as ds  # here: the workers that import this module for its other functions need not

    dataset = ds.dataset(root, format="parquet", filesystem=filesystem)
    if not dataset.files:
        raise FileNotFoundError(f"no training vectors under {path}; run the weight stage first")
    table = dataset.to_table(columns=["doc_id", "labels", "indices", column])
    table = table.sort_by("doc_id")  # LIBLINEAR's result depends on row order; make it the corpus's, not Spark's
    X = csr_from_lists(table.column("indices"), table.column(column), n_features)
    labels = table.column("labels").combine_chunks()
    lengths = pc.list_value_length(labels).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    flat = pc.list_flatten(labels).to_numpy(zero_copy_only=False)
    rows_of: dict[str, NDArray[np.int64]] = {}
    if len(flat):
        order = np.argsort(flat, kind="stable")
        categories, starts = np.unique(flat[order], return_index=True)
        for category, chunk in zip(categories, np.split(rows[order], starts[1:])):
            rows_of[str(category)] = chunk
    return TrainingSet(X, rows_of, table.column("doc_id").to_numpy())
