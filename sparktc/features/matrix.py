"""Sparse document-term matrices from Arrow list columns, and the training set as executors load it.

The training matrix reaches each Python worker once: the worker reads the training split of
``vectors`` straight from storage (pyarrow, any file system it supports) and keeps it for every
category it trains, instead of Spark shipping a copy of the matrix with each category.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from numpy.typing import NDArray
from scipy import sparse

from sparktc.filesystem import arrow_filesystem, per_worker


def csr_from_lists(indices: pa.Array | pa.ChunkedArray, values: pa.Array | pa.ChunkedArray,
                   n_features: int) -> sparse.csr_matrix:
    """CSR rows from list<int> term ids and list<float> weights, one list per document (float64)."""
    if isinstance(indices, pa.ChunkedArray):
        indices, values = indices.combine_chunks(), values.combine_chunks()
    lengths = pc.list_value_length(indices).fill_null(0).to_numpy(zero_copy_only=False)
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    columns = pc.list_flatten(indices).to_numpy(zero_copy_only=False).astype(np.int64)
    data = pc.list_flatten(values).to_numpy(zero_copy_only=False).astype(np.float64)
    return sparse.csr_matrix((data, columns, indptr), shape=(len(lengths), n_features))


@dataclass(frozen=True)
class TrainingSet:
    """Training documents sorted by doc id (so results do not depend on how Spark wrote them)."""

    X: sparse.csr_matrix
    rows_of: dict[str, NDArray[np.int64]]  # category -> rows of its positive documents
    doc_ids: NDArray[np.object_] | None = None  # the rows' doc ids, in order

    def positives(self, category: str) -> NDArray[np.bool_]:
        y = np.zeros(self.X.shape[0], dtype=np.bool_)
        y[self.rows_of.get(category, np.empty(0, dtype=np.int64))] = True
        return y


@per_worker
def load_training_set(path: str, n_features: int, column: str = "values") -> TrainingSet:
    """The training split of ``vectors`` at ``path`` (a ``split=train`` directory), its matrix of ``column``
    (``values``: the ltc weights; ``counts``: raw tf), read once per worker and kept while its files are
    unchanged (:func:`sparktc.filesystem.per_worker`)."""
    filesystem, root = arrow_filesystem(path)
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
