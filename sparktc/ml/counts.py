"""What :mod:`sparktc.ml`'s Estimators count over the rows they fit on, in Spark tasks: each Arrow batch counted by
the stages' own functions, the counts summed by a Spark aggregation, and only vocabulary-sized sums collected (as
Arrow) to the driver, never a document.

- :func:`term_counts`: each term's df and occurrences (:func:`sparktc.features.weighting.token_counts`), and N;
- :func:`labelled_counts`: the terms x categories A(t, c) of the chi-square family
  (:func:`sparktc.features.matrix.term_category_counts`, as the rank and weight stages count it), each term's df,
  the categories and their positive rows |c|, and N.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from scipy import sparse

from sparktc.features.matrix import term_category_counts
from sparktc.features.text import stored_tokens
from sparktc.features.weighting import summed_counts, token_counts

__all__ = ["term_counts", "labelled_counts", "stored_lists"]

_TERMS = pa.schema([("term", pa.string()), ("df", pa.int64()), ("frequency", pa.int64())])
_CELLS = pa.schema([("term", pa.int32()), ("label", pa.string()), ("count", pa.int64())])


def stored_lists(terms: pa.Array | pa.ChunkedArray) -> pa.ListArray:
    """Lists of terms as the stored token strings hold them (:func:`sparktc.features.text.stored_tokens`: a
    scikit-learn n-gram's spaces as DEL), what the weight stage's functions look up; a null list is empty.
    """
    if isinstance(terms, pa.ChunkedArray):
        terms = terms.combine_chunks()
    lengths = pc.list_value_length(terms).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), stored_tokens(pc.list_flatten(terms)))


def term_counts(dataset: DataFrame, column: str) -> tuple[int, pa.Table]:
    """(rows, counts) of the term lists of ``column``: ``term``, ``df`` (the rows holding it) and ``frequency`` (its
    occurrences), sized by the vocabulary. Each task counts its batches and adds them up; a row of null term carries
    its number of rows; Spark sums the tasks' tables by term.
    """
    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows, found = 0, []
        for batch in batches:
            rows += len(batch)
            counted = token_counts(stored_lists(batch.column(0)))
            found.append(counted.filter(pc.is_valid(counted["term"])))  # a null entry of a list is no term
        yield from summed_counts(found).to_batches()
        yield pa.RecordBatch.from_pydict({"term": [None], "df": [rows], "frequency": [0]}, schema=_TERMS)

    summed = (dataset.select(column).mapInArrow(count, "term string, df long, frequency long")
              .groupBy("term").agg(F.sum("df").alias("df"), F.sum("frequency").alias("frequency")).toArrow())
    present = pc.is_valid(summed["term"])
    rows = int(pc.sum(summed.filter(pc.invert(present))["df"]).as_py() or 0)
    return rows, summed.filter(present).cast(_TERMS)


def labelled_counts(dataset: DataFrame, columns: list[str],
                    terms_of: Callable[[pa.Array], tuple[pa.ListArray, int]]
                    ) -> tuple[int, np.ndarray, list[str], np.ndarray, sparse.csr_matrix]:
    """(rows N, df, categories, |c|, A) of ``dataset``'s two ``columns``, each row's terms and its labels (category
    codes), in one pass: ``terms_of`` gives a batch's term ids from its terms column (each once per row) and the
    number of terms; A(t, c) counts the rows holding term t labelled c (the categories sorted, as the rank stage has
    them; :func:`~sparktc.features.matrix.term_category_counts`, its count), df the rows holding t and |c| the rows
    labelled c. Each batch gives its nonzero cells (label null: df; term -1: |c|, and N with a null label; term -2:
    the number of terms), Spark sums them by cell.
    """
    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids, n_terms = terms_of(batch.column(0))
            labels = batch.column(1)
            codes = pc.unique(pc.drop_null(pc.list_flatten(labels))).to_pylist()
            counts = term_category_counts(ids, labels, codes, n_terms).tocoo()
            every_row = pa.ListArray.from_arrays(pa.array(np.arange(len(batch) + 1, dtype=np.int32)),
                                                 pa.array(np.zeros(len(batch), np.int32)))  # term 0 in each row
            positives = term_category_counts(every_row, labels, codes, 1).toarray()[0]
            df = np.bincount(pc.list_flatten(ids).to_numpy(zero_copy_only=False), minlength=n_terms)
            present = np.flatnonzero(df)
            yield pa.RecordBatch.from_pydict({
                "term": np.concatenate([counts.row, present, np.full(len(codes) + 1, -1), [-2]]).astype(np.int32),
                "label": [codes[c] for c in counts.col] + [None] * len(present) + codes + [None, None],
                "count": np.concatenate([counts.data, df[present], positives, [len(batch), n_terms]]).astype(np.int64),
            }, schema=_CELLS)

    summed = (dataset.select(*columns).mapInArrow(count, "term int, label string, count long")
              .groupBy("term", "label").agg(F.sum("count").alias("count"), F.max("count").alias("most")).toArrow())
    term, label = summed["term"].to_numpy(), summed["label"]
    count = summed["count"].to_numpy().astype(np.int64)
    labelled = pc.is_valid(label).to_numpy(zero_copy_only=False)
    sizes = summed["most"].to_numpy()[term == -2]
    n_terms = int(sizes.max()) if len(sizes) else 0
    rows = int(count[(term == -1) & ~labelled].sum())
    df = np.zeros(n_terms, dtype=np.int64)
    df[term[(term >= 0) & ~labelled]] = count[(term >= 0) & ~labelled]
    codes = sorted(set(label.filter(pc.is_valid(label)).to_pylist()))
    column = {code: j for j, code in enumerate(codes)}
    positive = (term == -1) & labelled
    n_positive = np.zeros(len(codes), dtype=np.int64)
    n_positive[[column[code] for code in label.filter(pa.array(positive)).to_pylist()]] = count[positive]
    cell = (term >= 0) & labelled
    categories = [column[code] for code in label.filter(pa.array(cell)).to_pylist()]
    A = sparse.csr_matrix((count[cell], (term[cell], categories)), shape=(n_terms, len(codes)), dtype=np.int64)
    return rows, df, codes, n_positive, A
