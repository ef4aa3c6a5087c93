"""Term weighting schemes (REFERENCE.md section 3), one chosen by ``[weight] scheme``.

* ``ltc`` (Lewis et al. 2004 section 7, the default):  w(t, d) = (1 + ln tf(t, d)) * ln(N / df(t));
* ``tfidf`` (Debole & Sebastiani 2005, eq. 4-5):  w(t, d) = (1 + log #(t, d)) * log(|Tr| / #Tr(t)). The paper
  does not name the logarithm's base; with natural logarithms, taken here, this is ltc, value for value (a
  scheme of its own so that a run names the recipe it follows; the base of idf would cancel in the
  normalization, that of tf would not);
* ``sklearn`` (scikit-learn's ``TfidfVectorizer()`` defaults: ``smooth_idf=True``, ``sublinear_tf=False``,
  ``norm="l2"``; LibMultiLabel's):  w(t, d) = tf(t, d) * (ln((1 + N) / (1 + df(t))) + 1);
* ``binary`` (SMART ``bnc``):  w(t, d) = 1 for every term of d, no idf;
* ``supervised`` (Debole & Sebastiani 2003, as used in 2005):  w(t, d) = (1 + ln tf(t, d)) * f(t), the idf
  replaced by the globalized term-selection score f(t) ([rank] score and global_score) of the same run;

each vector then divided by its Euclidean norm (cosine normalization) over the vocabulary's terms. N, df(t) and
f(t) come from the training documents only (N counts every one of them, also those left without a vocabulary
term); terms absent from training, or cut from the vocabulary, have no weight.

The vocabulary (:func:`token_counts`, :func:`vocabulary_of`) is the training terms in order of their names, each
with its df and its occurrences (``frequency``), from which ``select.min_df`` and the frequency ranking cut it
(:func:`sparktc.features.term_selection.vocabulary_terms`) before any weight is computed. So ``sklearn`` with
``tokenize.analyzer = "sklearn"`` (no stemmer, no stop list) gives ``TfidfVectorizer(min_df=..., max_features=...,
ngram_range=...)``'s vocabulary, same terms in the same order, and its vectors (:func:`term_weights`, float64;
stored as float32).

A scheme is a tf component applied to each raw frequency (:func:`weighted_rows`) times one global factor
per term (:func:`term_factors`): the factor is what the ``vocabulary`` table stores as ``idf``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import ArrayLike, NDArray

from sparktc.corpora.records import listed_tokens, tokens_or_null
from sparktc.features.text import stored_tokens, term_names
from sparktc.validation import check_integer

__all__ = ["SCHEMES", "GIVEN", "idf", "term_factors", "term_frequencies", "term_weights", "weighted_rows",
           "token_counts", "summed_counts", "vocabulary_of", "training_term_ids", "vocabulary_ids", "id_vectors"]

#: The weighting schemes of texts ([weight] scheme), the first the default.
SCHEMES = ("ltc", "tfidf", "sklearn", "binary", "supervised")
#: The scheme of corpora that arrive as vectors (LIBSVM files): their values are used as given, unnormalized.
GIVEN = "given"


def _log_tf(tf: NDArray[np.int64]) -> NDArray[np.float64]:
    """1 + ln tf (SMART ``l``; Debole & Sebastiani's tf of eq. 4)."""
    return 1.0 + np.log(tf)


def _raw_tf(tf: NDArray[np.int64]) -> NDArray[np.float64]:
    """The raw tf itself (SMART ``n``, scikit-learn's ``sublinear_tf=False``)."""
    return tf.astype(np.float64)


def _binary_tf(tf: NDArray[np.int64]) -> NDArray[np.float64]:
    """1 for a term present (SMART ``b``)."""
    return np.ones(len(tf))


#: Each scheme's tf component.
_TF: dict[str, Callable[[NDArray[np.int64]], NDArray[np.float64]]] = {
    "ltc": _log_tf, "tfidf": _log_tf, "sklearn": _raw_tf, "binary": _binary_tf, "supervised": _log_tf,
}


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {scheme!r}")


def idf(df: ArrayLike, n_documents: int) -> NDArray[np.float64]:
    """ln(N / df(t)) for every term (ltc's idf, Lewis et al. 2004; Debole & Sebastiani's log(|Tr| / #Tr(t))); df
    must be in 1..N (every vocabulary term occurs in training).
    """
    check_integer("n_documents", n_documents, 1)
    df = np.asarray(df, dtype=np.float64)
    if df.size and (df.min() < 1 or df.max() > n_documents):
        raise ValueError(f"df must lie in 1..n_documents={n_documents}, got values in {df.min()}..{df.max()}")
    return np.log(n_documents / df)


def term_factors(scheme: str, df: ArrayLike, n_documents: int,
                 scores: ArrayLike | None = None) -> NDArray[np.float64]:
    """Each term's global factor under ``scheme``, from its training document frequency ``df`` over
    ``n_documents`` = N training documents (REFERENCE.md section 3).

    * ``ltc``: idf = ln(N / df(t)) (Lewis et al. 2004);
    * ``tfidf``: idf = log(|Tr| / #Tr(t)) (Debole & Sebastiani 2005, eq. 4), natural logarithms: the same
      value as ltc's;
    * ``sklearn``: ln((1 + N) / (1 + df(t))) + 1 (scikit-learn's smoothed idf);
    * ``binary``: 1 (no idf);
    * ``supervised``: ``scores``, the term's globalized term-selection score counted on the training documents
      (Debole & Sebastiani 2003), one finite value per term of ``df``.

    ``scores`` is required by ``supervised`` and refused by every other scheme.
    """
    _check_scheme(scheme)
    if (scheme == "supervised") != (scores is not None):
        raise ValueError(f"scores must be given for scheme 'supervised' and only for it; got scheme {scheme!r} "
                         f"with scores {'given' if scores is not None else 'None'}")
    if scheme == "supervised":
        factors = np.asarray(scores, dtype=np.float64)
        if factors.shape != np.shape(df):
            raise ValueError(f"scores must have one value per term of df, shape {np.shape(df)}; got {factors.shape}")
        if not np.all(np.isfinite(factors)):
            raise ValueError("scores must be finite; got non-finite values in scores")
        return factors
    log_idf = idf(df, n_documents)  # also checks df in 1..N and N >= 1 for every unsupervised scheme
    if scheme in ("ltc", "tfidf"):  # Debole & Sebastiani's log(|Tr| / #Tr(t)) is ltc's ln(N / df(t))
        return log_idf
    if scheme == "sklearn":
        return np.log((1.0 + n_documents) / (1.0 + np.asarray(df, dtype=np.float64))) + 1.0
    return np.ones_like(log_idf)


def term_frequencies(
    rows: NDArray[np.int64], term_ids: NDArray[np.int64], n_rows: int, n_terms: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Given one (row, term id) pair per token occurrence (``term_ids`` of -1, tokens outside the
    vocabulary of ``n_terms`` terms, are dropped): the (document, term, tf) triples, documents and then
    terms ascending.
    """
    rows = np.asarray(rows, dtype=np.int64)
    term_ids = np.asarray(term_ids, dtype=np.int64)
    known = term_ids >= 0
    width = max(n_terms, 1)
    # One key per occurrence, row-major. 32-bit keys when they fit (8,192 documents of 300k terms do) and a stable
    # sort (timsort, merging the runs the rows already form: they come in row order) take a third of np.unique's
    # int64 quicksort time; the result is the same, exactly.
    key_type = np.uint32 if max(n_rows, 1) * width <= 2**32 else np.int64
    keys = rows[known].astype(key_type) * key_type(width) + term_ids[known].astype(key_type)
    keys.sort(kind="stable")
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    tf = np.diff(starts, append=len(keys))
    doc, term = np.divmod(keys[starts].astype(np.int64), width)
    return doc, term, tf


def term_weights(
    rows: NDArray[np.int64], term_ids: NDArray[np.int64], n_rows: int, factors: NDArray[np.float64], scheme: str
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Cosine-normalized vectors under ``scheme`` for a batch of documents, given one (row, term id) pair per
    token occurrence: w(t, d) = tf component of ``scheme`` (1 + ln tf; raw tf for sklearn; 1 for binary)
    times ``factors[t]`` (:func:`term_factors`), divided by the document's Euclidean norm, in float64.

    ``term_ids`` of -1 mark tokens outside the vocabulary, which are dropped. Returns CSR parts
    ``(offsets, indices, values, counts)``: document ``r`` has terms ``indices[offsets[r]:offsets[r+1]]``
    (sorted ascending) with unit-L2-norm weights ``values[...]`` and raw term frequencies tf(t, d)
    ``counts[...]`` (what multinomial naive Bayes counts). A term whose factor is 0 keeps its entry, with
    weight 0; a document whose weights are all 0 keeps them at 0; one with no vocabulary term gets an
    empty vector.
    """
    _check_scheme(scheme)
    return _weighted(*term_frequencies(rows, term_ids, n_rows, len(factors)), n_rows, factors, scheme)


def _weighted(doc: NDArray[np.int64], term: NDArray[np.int64], tf: NDArray[np.int64], n_rows: int,
              factors: NDArray[np.float64], scheme: str
              ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """:func:`term_weights` from the (document, term, tf) triples, documents and then terms ascending; one home for
    the float64 operations and their order, so that every input form gives the same bits.
    """
    weights = _TF[scheme](tf) * factors[term]
    norms = np.sqrt(np.bincount(doc, weights=weights * weights, minlength=n_rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        # A factor can be 0 (idf of a term in every training document, a score of 0), and so can a norm.
        weights = np.where(norms[doc] > 0, weights / norms[doc], 0.0)
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_rows), out=offsets[1:])
    return offsets, term, weights, tf


def weighted_rows(
    rows: NDArray[np.int64], term_ids: NDArray[np.int64], n_rows: int, factors: NDArray[np.float64], scheme: str
) -> tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.float32], NDArray[np.int32]]:
    """:func:`term_weights` as ``vectors`` stores them: term ids and counts int32, weights float32."""
    offsets, term, weights, tf = term_weights(rows, term_ids, n_rows, factors, scheme)
    return offsets, term.astype(np.int32), weights.astype(np.float32), tf.astype(np.int32)


#: What :func:`token_counts` and :func:`summed_counts` return: each term with its df and its occurrences.
TERM_COUNTS_SCHEMA = pa.schema([("term", pa.string()), ("df", pa.int64()), ("frequency", pa.int64())])


def token_counts(tokens: pa.Array | pa.ChunkedArray, given: bool = False) -> pa.Table:
    """Each stored token of ``tokens``, token strings or token lists (:func:`~sparktc.corpora.records.listed_tokens`;
    for a vector corpus, ``given``, the feature index of its ``index:value`` tokens) with ``df``, the documents
    holding it, and ``frequency``, its occurrences: one table per batch of documents, sized by their vocabulary;
    :func:`vocabulary_of` adds them up.
    """
    if given:
        return _given_counts(tokens)
    token_lists = listed_tokens(tokens)
    pairs = pa.table({"doc": pc.list_parent_indices(token_lists), "term": pc.list_flatten(token_lists)})
    counted = pairs.group_by("term").aggregate([("doc", "count_distinct"), ("doc", "count")])
    return pa.table({"term": counted["term"], "df": pc.cast(counted["doc_count_distinct"], pa.int64()),
                     "frequency": pc.cast(counted["doc_count"], pa.int64())})


def summed_counts(counted: list[pa.Table]) -> pa.Table:
    """The :func:`token_counts` tables of several batches (or of the sums of several) as one: term, df, frequency."""
    if not counted:
        return TERM_COUNTS_SCHEMA.empty_table()
    summed = pa.concat_tables(counted).group_by("term").aggregate([("df", "sum"), ("frequency", "sum")])
    # One chunk: group_by's chunks are slices of whole buffers, and pickling (a task's result sent to the driver)
    # copies each slice's buffers whole: 1.5 GB for the 41 MB of Reuters-21578's 1.17 million 1- to 3-grams.
    return pa.table({"term": summed["term"], "df": summed["df_sum"],
                     "frequency": summed["frequency_sum"]}).combine_chunks()


def vocabulary_of(counted: list[pa.Table], given: bool = False) -> pa.Table:
    """The training vocabulary from the :func:`token_counts` of the training documents: ``term_id``, ``term``,
    ``df``, ``frequency``, the terms named as the vocabulary names them (:func:`sparktc.features.text.term_names`)
    and sorted by name (scikit-learn's order; a vector corpus's feature indices numerically), term_id = position.
    """
    summed = summed_counts(counted)
    terms = term_names(summed["term"])
    order = pc.sort_indices(pc.cast(terms, pa.int64()) if given else terms)
    return pa.table({"term_id": pa.array(np.arange(len(order), dtype=np.int32)), "term": terms.take(order),
                     "df": summed["df"].take(order), "frequency": summed["frequency"].take(order)})


def token_term_ids(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """Stored token strings, or token lists (:func:`~sparktc.corpora.records.listed_tokens`), as one (row, term id)
    pair per token occurrence, the term id the token's position in the vocabulary ``terms`` (in term_id order) or -1
    outside it.
    """
    token_lists = listed_tokens(tokens)
    lengths = pc.list_value_length(token_lists).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
    term_ids = pc.index_in(pc.list_flatten(token_lists),
                           options=pc.SetLookupOptions(value_set=stored_tokens(terms))).fill_null(-1)
    return rows, term_ids.to_numpy(zero_copy_only=False)


def given_vectors(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray) -> tuple[pa.ListArray, ...]:
    """A vector corpus's stored features (``index:value`` tokens) to vectors over the vocabulary ``terms`` (the
    training feature indices, in term_id order): the ``indices`` and ``values`` list columns, values as given and
    not normalized, features outside the vocabulary dropped (no linear model trained on the training documents
    weights them), and ``counts`` null (given vectors have no term counts).

    The vector readers store an index as its whole number in decimal and a value as the repr of its float
    (:mod:`sparktc.corpora.libsvm`, :mod:`sparktc.corpora.lyrl2004_vectors`), so both are read as numbers in one
    pass: each ``:`` made a separator like the spaces, every document's fields split once and cast to float64
    together (an index of at most 15 digits is exact there, and a value cast from its repr is the float written),
    and an index looked up by its number among the vocabulary's (:func:`_positions`). Only an odd number of fields
    in a document is refused (a ValueError naming it): tokens the readers never write, as ``1:2:3 4``, would be read
    field by field, not refused as a second split refused them. Splitting twice (the tokens,
    then each index from its value) and looking up the index strings took 0.69-0.77 CPU-s per 60,173 RCV1-shaped
    LIBSVM lines (4.5 million features); this takes 0.57-0.62 (issue 50).
    """
    rows, indices, values = _given_features(tokens)
    term_ids = _positions(indices, pc.cast(terms, pa.int64()).to_numpy(zero_copy_only=False))
    known = term_ids >= 0
    rows, term_ids, values = rows[known], term_ids[known], values[known]
    if not _ascending_in_rows(rows, term_ids):
        order = np.lexsort((term_ids, rows))
        rows, term_ids, values = rows[order], term_ids[order], values[order]
    offsets = np.zeros(len(tokens) + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=len(tokens)), out=offsets[1:])
    offsets32 = pa.array(offsets)
    return (pa.ListArray.from_arrays(offsets32, pa.array(term_ids.astype(np.int32))),
            pa.ListArray.from_arrays(offsets32, pa.array(values.astype(np.float32))),
            pa.nulls(len(tokens), pa.list_(pa.int32())))


def _given_features(tokens: pa.Array | pa.ChunkedArray) -> tuple[NDArray[np.int64], NDArray[np.float64],
                                                                  NDArray[np.float64]]:
    """A vector corpus's stored features (``index:value`` tokens) as numbers (:func:`given_vectors`): each feature's
    row, index and value, in the order stored; a ValueError naming the first document of an odd number of fields.
    """
    present = tokens_or_null(tokens)
    # As bytes: the same buffers, split and cast without UTF-8 checks (for those lines 0.41 -> 0.32 CPU-s).
    fields = pc.split_pattern(pc.replace_substring(present.cast(pa.binary()), ":", " "), " ")
    lengths = pc.list_value_length(fields).fill_null(0).to_numpy(zero_copy_only=False)
    odd = np.flatnonzero(lengths % 2)
    if len(odd):
        raise ValueError(f"stored features are not index:value tokens (document {odd[0]} of the batch: "
                         f"{present[int(odd[0])].as_py()[:80]!r})")
    numbers = pc.cast(pc.list_flatten(fields), pa.float64()).to_numpy(zero_copy_only=False)
    return np.repeat(np.arange(len(present), dtype=np.int64), lengths // 2), numbers[0::2], numbers[1::2]


def _given_counts(tokens: pa.Array | pa.ChunkedArray) -> pa.Table:
    """:func:`token_counts` of a vector corpus's stored features: each feature index (as its number in decimal, the
    vocabulary's term) with the documents holding it and its occurrences, from the features read as numbers
    (:func:`_given_features`). Splitting the index strings out and grouping them took 0.52-0.57 CPU-s for the 23,149
    training lines of an RCV1-shaped LIBSVM corpus; this takes 0.30-0.35, the same table (issue 50).
    """
    rows, indices, _ = _given_features(tokens)
    whole = indices.astype(np.int64)
    if len(whole) and not np.array_equal(whole, indices):
        bad = int(np.flatnonzero(whole != indices)[0])
        raise ValueError(f"stored feature index {float(indices[bad])!r} (document {rows[bad]} of the batch) is not "
                         "a whole number")
    numbers, frequency = np.unique(whole, return_counts=True)
    if _ascending_in_rows(rows, whole):  # each index once per document, as the readers store them
        df = frequency
    else:
        pairs = np.unique(np.stack([rows, whole], axis=1), axis=0)
        df = np.unique(pairs[:, 1], return_counts=True)[1]
    return pa.table({"term": pc.cast(pa.array(numbers), pa.string()), "df": pa.array(df, pa.int64()),
                     "frequency": pa.array(frequency, pa.int64())})


#: A vocabulary whose largest feature index is below this (or below 8 times its size) is looked up in a table
#: indexed by the feature index (at most 8 MB of int64), else by a binary search.
TABLE_INDICES = 1 << 20


def _positions(keys: NDArray[np.float64], numbers: NDArray[np.int64]) -> NDArray[np.int64]:
    """Each of ``keys``' position among ``numbers`` (distinct feature indices), -1 where it is none of them (a
    key that is not a whole number is none).
    """
    if not len(numbers):
        return np.full(len(keys), -1, dtype=np.int64)
    top = int(numbers.max())
    with np.errstate(invalid="ignore"):  # a key beyond int64 (none is: an index has at most 10 digits) is outside
        whole = keys.astype(np.int64)
    if top < max(TABLE_INDICES, 8 * len(numbers)):
        table = np.full(top + 2, -1, dtype=np.int64)  # the last entry, top + 1, for the keys outside
        table[numbers] = np.arange(len(numbers))
        slots = np.minimum(whole.view(np.uint64), top + 1)  # a negative key wraps beyond top
        slots[whole != keys] = top + 1
        return table[slots]
    order = np.argsort(numbers)
    found = np.minimum(np.searchsorted(numbers[order], whole), len(numbers) - 1)
    return np.where((whole == keys) & (numbers[order][found] == whole), order[found], -1)


def _ascending_in_rows(rows: NDArray[np.int64], term_ids: NDArray[np.int64]) -> bool:
    """Whether ``term_ids`` ascend strictly within each row of ``rows`` (non-decreasing): then sorting the pairs by
    row and term changes nothing. The vector readers store a document's features by ascending index and a vector
    corpus's vocabulary is its feature indices in numeric order, so their ids come so: the sort was half of
    :func:`given_vectors`' CPU (0.35 of 0.7 CPU-s for 30,000 RCV1-shaped LIBSVM lines, 2.2 million features).
    """
    return bool(np.all((np.diff(term_ids) > 0) | (np.diff(rows) != 0)))


def term_vectors(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray, factors: np.ndarray,
                 scheme: str) -> tuple[pa.ListArray, pa.ListArray, pa.ListArray]:
    """Stored token strings to ``scheme``'s vectors over the vocabulary ``terms`` (in term_id order) with each
    term's global factor ``factors``: the ``indices``, ``values`` and ``counts`` (raw tf) list columns; for the
    ``given`` scheme, the stored features as they are (:func:`given_vectors`). Shared with the classification of
    new documents.
    """
    if scheme == GIVEN:
        return given_vectors(tokens, terms)
    rows, term_ids = token_term_ids(tokens, terms)
    return _vector_columns(*weighted_rows(rows, term_ids, len(tokens), factors, scheme))


def _vector_columns(offsets: np.ndarray, *columns: np.ndarray) -> tuple[pa.ListArray, ...]:
    """:func:`weighted_rows`'s CSR parts as the ``indices``, ``values`` and ``counts`` list columns."""
    offsets32 = pa.array(offsets.astype(np.int32))
    return tuple(pa.ListArray.from_arrays(offsets32, pa.array(column)) for column in columns)


def training_term_ids(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray
                      ) -> tuple[pa.ListArray, pa.ListArray, NDArray[np.int32]]:
    """Stored token strings, or token lists as a reader read them (a list column used as it is, never joined and
    split; :func:`~sparktc.corpora.records.listed_tokens`), in integer form against the training terms ``terms``
    (:func:`vocabulary_of`, in term_id order): per document its terms' ids, ascending, each once (``term_ids``), and
    their tf (``term_counts``), both int32 lists, null where the tokens are; and each document's tokens outside
    ``terms`` (dropped: no vocabulary can keep them).
    """
    if isinstance(tokens, pa.ChunkedArray):
        tokens = tokens.combine_chunks()
    rows, ids = token_term_ids(tokens, terms)
    doc, term, tf = term_frequencies(rows, ids, len(tokens), len(terms))
    offsets = np.zeros(len(tokens) + 1, dtype=np.int32)
    np.cumsum(np.bincount(doc, minlength=len(tokens)), out=offsets[1:])
    offsets32, missing = pa.array(offsets), pc.is_null(tokens) if tokens.null_count else None
    outside = np.bincount(rows[ids < 0], minlength=len(tokens)).astype(np.int32)
    return (pa.ListArray.from_arrays(offsets32, pa.array(term.astype(np.int32)), mask=missing),
            pa.ListArray.from_arrays(offsets32, pa.array(tf.astype(np.int32)), mask=missing), outside)


def vocabulary_ids(training: pa.Table, vocabulary: pa.Table) -> NDArray[np.int64]:
    """Each training term's vocabulary id, -1 for a term the vocabulary cut: both tables sorted by term
    (:func:`vocabulary_of`), so the map is monotonic and keeps every document's ids ascending.
    """
    kept = pc.index_in(vocabulary["term"], value_set=training["term"].combine_chunks()).to_numpy()
    ids = np.full(len(training), -1, dtype=np.int64)
    ids[kept] = np.arange(len(kept))
    return ids


def vocabulary_terms_of(term_ids: pa.ListArray | pa.ChunkedArray, to_vocabulary: NDArray[np.int64]
                        ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Documents' training term ids (:func:`training_term_ids`) over the vocabulary ``to_vocabulary``
    (:func:`vocabulary_ids`): one (document, vocabulary id) pair per training term of a document and whether the
    vocabulary keeps it, documents and then terms ascending among those kept (no sort: the map is monotonic).
    """
    if isinstance(term_ids, pa.ChunkedArray):
        term_ids = term_ids.combine_chunks()
    lengths = pc.list_value_length(term_ids).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(term_ids), dtype=np.int64), lengths)
    term = to_vocabulary[pc.list_flatten(term_ids).to_numpy(zero_copy_only=False)]
    kept = term >= 0
    return rows[kept], term[kept], kept


def id_vectors(term_ids: pa.ListArray | pa.ChunkedArray, term_counts: pa.ListArray | pa.ChunkedArray,
               to_vocabulary: NDArray[np.int64], factors: np.ndarray, scheme: str
               ) -> tuple[pa.ListArray, pa.ListArray, pa.ListArray]:
    """:func:`term_vectors` of documents in integer form (:func:`training_term_ids`), over the vocabulary
    ``to_vocabulary`` maps the training terms to (:func:`vocabulary_ids`): the same columns, bit for bit, with no
    token string split or looked up and no sort.
    """
    _check_scheme(scheme)
    if isinstance(term_counts, pa.ChunkedArray):
        term_counts = term_counts.combine_chunks()
    doc, term, kept = vocabulary_terms_of(term_ids, to_vocabulary)
    tf = pc.list_flatten(term_counts).to_numpy(zero_copy_only=False).astype(np.int64)[kept]
    offsets, term, weights, tf = _weighted(doc, term, tf, len(term_ids), factors, scheme)
    return _vector_columns(offsets, term.astype(np.int32), weights.astype(np.float32), tf.astype(np.int32))
