"""ltc term weighting (REFERENCE.md section 3; Lewis et al. 2004 section 7; Debole & Sebastiani).

    w(t, d) = (1 + ln tf(t, d)) * ln(N / df(t)),   then  w(., d) / ||w(., d)||_2

N and df(t) come from the training documents only; terms absent from training have no weight.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sparktc.validation import check_integer


def idf(df: ArrayLike, n_documents: int) -> NDArray[np.float64]:
    """ln(N / df(t)) for every term; df must be in 1..N (every vocabulary term occurs in training)."""
    check_integer("n_documents", n_documents, 1)
    df = np.asarray(df, dtype=np.float64)
    if df.size and (df.min() < 1 or df.max() > n_documents):
        raise ValueError(f"df must lie in 1..n_documents={n_documents}, got values in {df.min()}..{df.max()}")
    return np.log(n_documents / df)


def term_frequencies(
    rows: NDArray[np.int64], term_ids: NDArray[np.int64], n_rows: int, n_terms: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Given one (row, term id) pair per token occurrence (``term_ids`` of -1, tokens outside the
    vocabulary of ``n_terms`` terms, are dropped): the (document, term, tf) triples, documents and then
    terms ascending."""
    rows = np.asarray(rows, dtype=np.int64)
    term_ids = np.asarray(term_ids, dtype=np.int64)
    known = term_ids >= 0
    width = max(n_terms, 1)
    keys, tf = np.unique(rows[known] * width + term_ids[known], return_counts=True)
    doc, term = np.divmod(keys, width)
    return doc, term, tf


def ltc_rows(
    rows: NDArray[np.int64], term_ids: NDArray[np.int64], n_rows: int, idf_values: NDArray[np.float64]
) -> tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.float32], NDArray[np.int32]]:
    """ltc vectors for a batch of documents given one (row, term id) pair per token occurrence.

    ``term_ids`` of -1 mark tokens outside the vocabulary, which are dropped. Returns CSR parts
    ``(offsets, indices, values, counts)``: document ``r`` has terms ``indices[offsets[r]:offsets[r+1]]``
    (sorted ascending) with unit-L2-norm weights ``values[...]`` and raw term frequencies tf(t, d)
    ``counts[...]`` (what multinomial naive Bayes counts). A document with no vocabulary term gets an
    empty vector.
    """
    doc, term, tf = term_frequencies(rows, term_ids, n_rows, len(idf_values))
    weights = (1.0 + np.log(tf)) * idf_values[term]
    norms = np.sqrt(np.bincount(doc, weights=weights * weights, minlength=n_rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        # A term in every training document has idf 0; a document made only of such terms has norm 0.
        weights = np.where(norms[doc] > 0, weights / norms[doc], 0.0)
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_rows), out=offsets[1:])
    return offsets, term.astype(np.int32), weights.astype(np.float32), tf.astype(np.int32)
