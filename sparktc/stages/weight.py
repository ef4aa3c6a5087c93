"""Weight: ``tokens`` -> ``vocabulary`` (term_id, term, df, frequency, idf) and ``vectors`` (weights and raw tf, by
split).

The weights are [weight] scheme's (:mod:`sparktc.features.weighting`: ltc, tfidf, sklearn, binary or supervised).
df, each term's occurrences and N are counted over the training documents, one task per ``tokens`` file, the driver
adding up vocabulary-sized tables. The vocabulary is the training terms in at least ``select.min_df`` training
documents, and under ``rank.score = "frequency"`` the most frequent of those (``select.top_k``, or
``select.reduction_factor``'s share): :func:`sparktc.features.term_selection.vocabulary_terms`, scikit-learn's
``min_df`` and ``max_features``, applied here because they need no category, so that the weights are normalised
over the terms kept, as scikit-learn's are (the supervised scores select in train, among the columns of vectors
normalised over this vocabulary, LYRL2004's order). The vocabulary (sorted by term, term_id = position) and each
term's global factor are shared with the executors (:class:`~sparktc.runtime.shared.Shared`), which weight the
``tokens`` files one task per file
(:mod:`sparktc.runtime.parts`: pyarrow reads and writes them, no Spark rows), batch by batch with
:func:`sparktc.features.weighting.weighted_rows`. Documents that ingest wrote in integer form (LYRL2004's token
files: ``term_ids`` and ``term_counts`` over its ``terms``) are never split or looked up: df and the occurrences are
counted from the training documents' ids (:func:`term_id_vocabulary`), and each task maps the ids to the vocabulary's
(:func:`sparktc.features.weighting.id_vectors`), the same vectors bit for bit. Under an unsupervised scheme
ingest's parsing tasks have already weighted those documents (:func:`planned_weights`, from the training file's
counts): this stage adopts their vectors by a rename when its own vocabulary map, factors and the documents' files
are exactly those they were computed from (:func:`adopt_weighted`), and weights the documents itself otherwise.

The vocabulary's ``idf`` column is that global factor (:func:`sparktc.features.weighting.term_factors`), what the
classification of new documents weights them with: ln(N / df) for ltc and tfidf, ln((1 + N) / (1 + df)) + 1 for
sklearn, 1 for binary, and for supervised the term's [rank] score (``rank.score`` under ``rank.global_score``).
This stage runs before rank, so supervised weighting counts that score itself, from the training documents only:
A(t, c) over their tokens and labels, one task per ``tokens`` file summed by a tree reduction, as the rank stage
counts it over their vectors (:func:`sparktc.runtime.parts.sum_over_files`), with |c| from ``categories``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from scipy import sparse

from sparktc.corpora.records import TEST, TRAIN
from sparktc.errors import InputError
from sparktc.experiment.config import Config, ConfigError
from sparktc.features.matrix import term_category_counts
from sparktc.features.term_selection import FREQUENCY, score_column, term_scores, vocabulary_terms
from sparktc.features.weighting import (
    GIVEN,
    id_vectors,
    summed_counts,
    term_factors,
    term_frequencies,
    term_vectors,
    token_counts,
    token_term_ids,
    vocabulary_ids,
    vocabulary_of,
    vocabulary_terms_of,
)
from sparktc.filesystem import arrow_filesystem
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import (
    PartWriter,
    map_parts,
    parquet_files,
    read_batches,
    read_small,
    sum_over_files,
    write_parts,
)
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.shared import Shared
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import VECTORS_SCHEMA, VOCABULARY_SCHEMA

#: The ``vectors`` files (:data:`~sparktc.schemas.VECTORS_SCHEMA`): one directory per split
#: (``split=train``, ``split=test``), as Spark's partitioned tables have them, so a reader of one split
#: never opens the other's files.
SPLITS = (TRAIN, TEST)
BATCH_ROWS = 8192  # documents weighted at a time: big enough for numpy, small enough for the cache


class VectorParts:
    """A task's part of ``vectors``: batches of documents (``doc_id``, ``split``, ``labels`` and ``tokens``, or in
    integer form ``term_ids`` and ``term_counts``; a batch with a ``reason`` column gives only its accepted rows,
    those whose reason is null) weighted under ``scheme`` (:func:`term_vectors`, or with ``to_vocabulary``
    :func:`~sparktc.features.weighting.id_vectors`) into ``output/split=<split>/part-<index>-*``; :meth:`close` gives
    the counts of rows read, written per split and without a vocabulary term. A split other than train or test is a
    bug upstream (ingest writes only those) and stops the task.
    """

    def __init__(self, output: str, index: int, factors: np.ndarray, scheme: str, terms: pa.StringArray | None = None,
                 to_vocabulary: np.ndarray | None = None) -> None:
        self.writers = {split: PartWriter(VECTORS_SCHEMA, f"{output}/split={split}", index) for split in SPLITS}
        self.factors, self.scheme, self.terms, self.to_vocabulary = factors, scheme, terms, to_vocabulary
        self.read, self.without_terms = 0, 0

    def add(self, batch: pa.RecordBatch, source: str) -> None:
        """Weight and write one batch of documents read from ``source`` (named in the error for a bad split)."""
        if "reason" in batch.schema.names:
            batch = batch.filter(pc.is_null(batch.column("reason")))
        self.read += len(batch)
        other = batch.filter(pc.invert(pc.is_in(batch.column("split"), pa.array(SPLITS))))
        if len(other):
            raise ValueError(f"{source}: document {other.column('doc_id')[0]} has split {other.column('split')[0]}, "
                             f"not {' or '.join(SPLITS)}; please report this as a bug")
        if self.to_vocabulary is None:
            indices, values, counts = term_vectors(batch.column("tokens"), self.terms, self.factors, self.scheme)
        else:
            indices, values, counts = id_vectors(batch.column("term_ids"), batch.column("term_counts"),
                                                 self.to_vocabulary, self.factors, self.scheme)
        self.without_terms += int(pc.sum(pc.equal(pc.list_value_length(indices), 0)).as_py() or 0)
        vectors = pa.RecordBatch.from_arrays([batch.column("doc_id"), batch.column("labels"), indices, values, counts],
                                             schema=VECTORS_SCHEMA)
        for split, writer in self.writers.items():
            writer.write(vectors.filter(pc.equal(batch.column("split"), split)))

    def close(self) -> dict:
        """Finish the part's files; the counts of rows read, written per split and without a vocabulary term."""
        for writer in self.writers.values():
            writer.close()
        return {"read": self.read, "written": {split: writer.rows for split, writer in self.writers.items()},
                "without_terms": self.without_terms}


def summed_parts(counts: list[dict]) -> dict:
    """The counts of several :class:`VectorParts` (:meth:`VectorParts.close`) as one."""
    return {"read": sum(c["read"] for c in counts), "without_terms": sum(c["without_terms"] for c in counts),
            "written": {split: sum(c["written"][split] for c in counts) for split in SPLITS}}


def vectorize_file(index: int, path: str, output: str, terms: pa.StringArray, factors: np.ndarray,
                   scheme: str, to_vocabulary: np.ndarray | None = None) -> dict:
    """``scheme``'s vectors of one ``tokens`` file into ``output/split=<split>/part-<index>-*`` (:class:`VectorParts`;
    with ``to_vocabulary``, from documents in integer form); the counts of rows read, written per split and without a
    vocabulary term.
    """
    parts = VectorParts(output, index, factors, scheme, terms, to_vocabulary)
    terms_in = ["tokens"] if to_vocabulary is None else ["term_ids", "term_counts"]
    inject("weight")  # once per task, whether or not its file has rows
    for batch in read_batches(path, ["doc_id", "split", "labels", *terms_in], BATCH_ROWS):
        parts.add(batch, path)
    return parts.close()


def document_frequencies(path: str, given: bool) -> tuple[int, pa.Table]:
    """(training documents, counts) of one ``tokens`` file: ``term``, ``df``, the number of its training documents
    holding the term (for a vector corpus, ``given``, the feature index of its ``index:value`` tokens), and
    ``frequency``, its occurrences in them (:func:`sparktc.features.weighting.token_counts`). Sized by the file's
    vocabulary, not its documents.
    """
    documents, found = 0, []
    for batch in read_batches(path, ["split", "tokens"], BATCH_ROWS, where=("split", TRAIN)):
        train = batch.filter(pc.equal(batch.column("split"), TRAIN))
        found.append(token_counts(train.column("tokens"), given))
        documents += len(train)
    return documents, summed_counts(found)


def training_vocabulary(spark: SparkSession, files: list[str], given: bool) -> tuple[int, pa.Table]:
    """The training documents and every training term of the ``tokens`` ``files`` (``term_id``, ``term``, ``df``,
    ``frequency``; :func:`sparktc.features.weighting.vocabulary_of`). One task per file counts its terms
    (:func:`document_frequencies`); the driver adds up vocabulary-sized tables, never documents.
    """
    counted = map_parts(spark, files, lambda index, path: document_frequencies(path, given))
    return sum(n for n, _ in counted), vocabulary_of([table for _, table in counted if len(table)], given)


def term_id_frequencies(path: str, n_terms: int) -> tuple[int, np.ndarray | None, np.ndarray | None]:
    """(training documents, df, frequency) of one ``tokens`` file in integer form: for each of the ``n_terms``
    training terms of ``terms``, the file's training documents holding it and its occurrences in them, as
    :func:`document_frequencies` counts them from token strings (None for both when the file has no training
    document).
    """
    documents, df, frequency = 0, np.zeros(n_terms, np.int64), np.zeros(n_terms, np.int64)
    for batch in read_batches(path, ["split", "term_ids", "term_counts"], BATCH_ROWS, where=("split", TRAIN)):
        train = batch.filter(pc.equal(batch.column("split"), TRAIN))
        ids = pc.list_flatten(train.column("term_ids")).to_numpy(zero_copy_only=False)
        df += np.bincount(ids, minlength=n_terms)  # each term once per document: df
        np.add.at(frequency, ids, pc.list_flatten(train.column("term_counts")).to_numpy(zero_copy_only=False))
        documents += len(train)
    return (documents, df, frequency) if documents else (0, None, None)


def term_id_vocabulary(spark: SparkSession, files: list[str], terms: pa.Table) -> tuple[int, pa.Table]:
    """:func:`training_vocabulary` of ``tokens`` files in integer form over ingest's training terms ``terms``
    (term_id, term): those of the training documents kept (df > 0; a document ingest set aside may have held a
    term no other has), renumbered in their order, which is the order of their names.
    """
    counted = [found for found in map_parts(spark, files, lambda index, path: term_id_frequencies(path, len(terms)))
               if found[0]]
    df = sum((found[1] for found in counted), np.zeros(len(terms), np.int64))
    frequency = sum((found[2] for found in counted), np.zeros(len(terms), np.int64))
    present = np.flatnonzero(df)
    return sum(found[0] for found in counted), pa.table({
        "term_id": pa.array(np.arange(len(present), dtype=np.int32)), "term": terms["term"].take(pa.array(present)),
        "df": pa.array(df[present]), "frequency": pa.array(frequency[present])})


def in_term_ids(files: list[str]) -> bool:
    """Whether the ``tokens`` files hold documents in integer form (ingest's ``term_ids``), not token strings."""
    if not files:
        return False
    filesystem, file = arrow_filesystem(files[0])
    return "term_ids" in pq.read_schema(file, filesystem=filesystem).names


def kept_vocabulary(config: Config, training: pa.Table) -> pa.Table:
    """The training terms the vocabulary keeps (``select.min_df``; the most frequent under ``rank.score =
    "frequency"``), renumbered in their order (:func:`vocabulary_kept`).
    """
    select = config.select
    ranked = config.rank.score == FREQUENCY
    return vocabulary_kept(training, select.min_df, select.top_k if ranked else 0,
                           select.reduction_factor if ranked else 0.0)


def vocabulary_kept(training: pa.Table, min_df: int, top_k: int = 0, reduction_factor: float = 0.0,
                    setting: str = "select.min_df") -> pa.Table:
    """The training terms (:func:`training_vocabulary`) in at least ``min_df`` training documents, and of those the
    ``top_k`` most frequent (or a ``reduction_factor`` of them; 0: all), renumbered in their order; a ConfigError
    naming ``setting`` when ``min_df`` keeps no term.
    """
    df = training["df"].to_numpy()
    kept = vocabulary_terms(df, training["frequency"].to_numpy(), min_df, top_k, reduction_factor)
    if len(training) and not len(kept):  # every model would have no feature: say so here, not deep in training
        raise ConfigError(f"{setting} = {min_df:,} keeps no term: the most common of the {len(training):,} "
                          f"training terms is in {int(df.max()):,} training documents; set {setting} to at most "
                          "that")
    if len(kept) == len(training):
        return training
    vocabulary = training.take(pa.array(kept))
    return vocabulary.set_column(0, "term_id", pa.array(np.arange(len(kept), dtype=np.int32)))


def count_training_file(path: str, terms: pa.StringArray, categories: list[str],
                        to_vocabulary: np.ndarray | None = None) -> tuple[int, sparse.csr_matrix]:
    """(training documents, their A counts) of one ``tokens`` file: A(t, c) = the training documents holding
    vocabulary term t labelled c, a ``len(terms) x len(categories)`` int64 matrix; with ``to_vocabulary``, from
    documents in integer form, as :func:`vectorize_file`. Test documents are not read past their split, so their
    labels never reach supervised weights.
    """
    n_terms = len(terms)
    documents = 0
    counts = sparse.csr_matrix((n_terms, len(categories)), dtype=np.int64)
    terms_in = "tokens" if to_vocabulary is None else "term_ids"
    for batch in read_batches(path, ["split", "labels", terms_in], BATCH_ROWS, where=("split", TRAIN)):
        train = batch.filter(pc.equal(batch.column("split"), TRAIN))
        counts = counts + labelled_counts(train.column(terms_in), train.column("labels"), terms, categories,
                                          to_vocabulary)
        documents += len(train)
    return documents, counts


def labelled_counts(tokens: pa.Array | pa.ChunkedArray, labels: pa.Array | pa.ChunkedArray, terms: pa.StringArray,
                    categories: list[str], to_vocabulary: np.ndarray | None = None) -> sparse.csr_matrix:
    """A(t, c) of a batch of documents (their ``tokens``, or with ``to_vocabulary`` their ``term_ids``, and their
    ``labels``): the documents holding vocabulary term t labelled c, a ``len(terms) x len(categories)`` int64 matrix
    (:func:`~sparktc.features.matrix.term_category_counts` of :func:`held_terms`).
    """
    return term_category_counts(held_terms(tokens, terms, to_vocabulary), labels, categories, len(terms))


def held_terms(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray,
               to_vocabulary: np.ndarray | None = None) -> pa.ListArray:
    """Each document's vocabulary term ids, ascending, each once: from its ``tokens`` (stored token strings or token
    lists) looked up in ``terms``, or with ``to_vocabulary`` from its ``term_ids`` (documents in integer form).
    """
    n_documents = len(tokens)
    if to_vocabulary is None:
        rows, term_ids = token_term_ids(tokens, terms)
        doc, term, _ = term_frequencies(rows, term_ids, n_documents, len(terms))  # each term once per document
    else:
        doc, term, _ = vocabulary_terms_of(tokens, to_vocabulary)
    offsets = np.zeros(n_documents + 1, dtype=np.int32)
    np.cumsum(np.bincount(doc, minlength=n_documents), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(term.astype(np.int32)))


@dataclass(frozen=True)
class IdWeights:
    """How documents in integer form are weighted: the ``scheme``, each training term's vocabulary id
    (``to_vocabulary``, :func:`~sparktc.features.weighting.vocabulary_ids`) and each vocabulary term's global factor
    (``factors``, :func:`~sparktc.features.weighting.term_factors`): all :class:`VectorParts` needs besides the
    documents.
    """

    scheme: str
    to_vocabulary: np.ndarray
    factors: np.ndarray

    def digest(self) -> str:
        """SHA-256 of the scheme and both arrays' bytes: equal digests, the same vectors of the same documents."""
        found = hashlib.sha256(self.scheme.encode())
        for array in (self.to_vocabulary.astype(np.int64), self.factors.astype(np.float64)):
            found.update(len(array).to_bytes(8, "little"))
            found.update(array.tobytes())
        return found.hexdigest()


@dataclass(frozen=True)
class WeightedParts:
    """Each parsing task's :class:`VectorParts` under ``directory`` with ``weights``: ingest's tasks weighting the
    documents in integer form as they parse them (:func:`leave_weighted`).
    """

    directory: str
    weights: IdWeights

    def __call__(self, index: int) -> VectorParts:
        """The part of the task numbered ``index``."""
        weights = self.weights
        return VectorParts(self.directory, index, weights.factors, weights.scheme, to_vocabulary=weights.to_vocabulary)


def planned_weights(config: Config, training: pa.Table, n_train: int) -> IdWeights | None:
    """The weights this stage gives documents in integer form whose training terms ``training`` (ingest's ``terms``:
    ``term_id``, ``term``, ``df``, ``frequency``, each in at least one of the ``n_train`` training documents) it
    counts as ingest counted them: what ingest's parsing tasks weight the documents with as they parse them
    (:func:`leave_weighted`). None when the weights need more than those counts (supervised: the labels) or the
    settings keep no term (this stage says why).
    """
    scheme = config.weight.scheme
    if scheme in ("supervised", GIVEN) or n_train == 0:
        return None
    try:
        vocabulary = kept_vocabulary(config, training)
    except ConfigError:
        return None
    return IdWeights(scheme, vocabulary_ids(training, vocabulary),
                     term_factors(scheme, vocabulary["df"].to_numpy().astype(np.int64), n_train))


#: What ingest's parsing tasks leave for this stage of the same run (:func:`leave_weighted`): the vectors, and beside
#: them what they were computed from.
WEIGHTED, WEIGHTED_STAMP = "weighted", "weighted.json"


def table_listing(path: str) -> list[list]:
    """Each Parquet data file of the table at ``path`` (:func:`~sparktc.runtime.parts.parquet_files`): its path
    under ``path`` and its size.
    """
    filesystem, root = arrow_filesystem(path)
    files = parquet_files(path)
    return [[file[len(root):].lstrip("/"), info.size] for file, info in zip(files, filesystem.get_file_info(files))]


def leave_weighted(spark: SparkSession, handoff: str, weights: IdWeights, documents: str, counts: dict) -> None:
    """Mark the vectors ingest's tasks wrote under ``handoff/weighted`` (:class:`VectorParts` with ``weights``, of the
    documents table at ``documents`` as written, every row of it, ``counts`` their counts) as this stage's to adopt:
    ``handoff/weighted.json`` records the weights' digest, the documents' files and the counts.
    """
    stamp = {"weights": weights.digest(), "documents": table_listing(documents), "counts": counts}
    storage.write_text(spark, storage.join(handoff, WEIGHTED_STAMP), json.dumps(stamp))


def adopt_weighted(spark: SparkSession, handoff: str, weights: IdWeights, tokens: str, output: str) -> dict | None:
    """The vectors ingest's tasks left in ``handoff`` (:func:`leave_weighted`) moved to ``output`` (no byte copied),
    when they are exactly those this stage would write: the same weights of the same files as ``tokens`` (tokenize
    links ingest's documents there); their counts. None, and nothing moved, otherwise.
    """
    stamp_path = storage.join(handoff, WEIGHTED_STAMP)
    if not handoff or not storage.exists(spark, stamp_path):
        return None
    stamp = json.loads(storage.read_text(spark, stamp_path))
    if stamp["weights"] != weights.digest() or stamp["documents"] != table_listing(tokens):
        return None
    storage.rename(spark, storage.join(handoff, WEIGHTED), output)
    storage.delete(spark, stamp_path)
    return stamp["counts"]


def supervised_scores(spark: SparkSession, config: Config, tables: Tables, terms: pa.StringArray,
                       df: np.ndarray, to_vocabulary: np.ndarray | None = None) -> tuple[np.ndarray, str]:
    """Each vocabulary term's [rank] score and the ``term_ranks`` column naming it, from the training
    documents' A(t, c), df(t), |c| and N, as the rank stage computes it (Debole & Sebastiani 2003); with
    ``to_vocabulary``, from documents in integer form (:func:`count_training_file`).
    """
    column = score_column(config.rank.score, config.rank.global_score)
    categories = read_small(tables.input("categories"), ["category", "train_positives"]).sort_by("category")
    codes = categories["category"].to_pylist()
    n_positive = categories["train_positives"].to_numpy().astype(np.int64)
    shared = Shared((terms, to_vocabulary))

    def count(path: str) -> tuple[int, sparse.csr_matrix]:
        vocabulary_terms, training_to_vocabulary = shared.value
        return count_training_file(path, vocabulary_terms, codes, training_to_vocabulary)

    n_train, counts = sum_over_files(spark, parquet_files(tables.input("tokens")), count)
    return term_scores(counts, df, n_positive, n_train, (column,))[column], column


def weight(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """The weight stage (module docstring): the ``vocabulary`` with each term's df and global factor, and the
    ``vectors`` of every split.
    """
    scheme = config.weight.scheme
    with stage(spark, "weight") as report:
        files = parquet_files(tables.input("tokens"))
        ingested = read_small(tables.input("terms"), ["term_id", "term"]).sort_by("term_id") \
            if in_term_ids(files) else None
        if ingested is not None:  # documents in integer form: their df from their training terms' ids
            n_train, training = term_id_vocabulary(spark, files, ingested)
        else:  # a vector corpus's terms are its feature indices, in numeric order
            n_train, training = training_vocabulary(spark, files, scheme == GIVEN)
        if n_train == 0:
            raise InputError(f"no training documents: weighting ({scheme}) needs N and df from the training split")
        vocabulary = kept_vocabulary(config, training)
        terms = vocabulary["term"].combine_chunks()
        to_vocabulary = None if ingested is None else vocabulary_ids(ingested, vocabulary)
        df = vocabulary["df"].to_numpy().astype(np.int64)
        details = {"scheme": scheme}
        score = None
        if scheme == "supervised":
            score, details["score"] = supervised_scores(spark, config, tables, terms, df, to_vocabulary)
        factors = np.ones(len(df)) if scheme == GIVEN else term_factors(scheme, df, n_train, score)
        write_parts(pa.table([vocabulary["term_id"], terms, df, vocabulary["frequency"], factors],
                             schema=VOCABULARY_SCHEMA).to_batches(), VOCABULARY_SCHEMA, tables.output("vocabulary"), 0)
        output = tables.output("vectors")
        adopted = None if to_vocabulary is None else adopt_weighted(
            spark, tables.handoff, IdWeights(scheme, to_vocabulary, factors), tables.input("tokens"), output)
        if adopted is not None:  # weighted by ingest's tasks as they parsed the documents: the same vectors
            counts = adopted
            details["weighted_by"] = "ingest"
        else:
            shared = Shared((terms, factors, to_vocabulary))

            def vectorize(index: int, path: str) -> dict:
                vocabulary_terms, global_factors, training_to_vocabulary = shared.value
                return vectorize_file(index, path, output, vocabulary_terms, global_factors, scheme,
                                      training_to_vocabulary)

            counts = summed_parts(map_parts(spark, files, vectorize, [output]))
        report.rows_in = counts["read"]
        report.rows_out = sum(counts["written"].values())
        report.details = {
            **details,
            "vocabulary": len(vocabulary),
            "training_terms": len(training),
            "min_df": config.select.min_df,
            "below_min_df": int(np.count_nonzero(training["df"].to_numpy() < config.select.min_df)),
            "train_documents": n_train,
            "documents_without_terms": counts["without_terms"],
        }
    return report


def sections(config: Config) -> tuple[str, ...]:
    """The settings the weights depend on: [weight] and ``select.min_df``; [rank] when the weights are its score
    (supervised); the frequency ranking's count when it cuts the vocabulary.
    """
    if config.weight.scheme == "supervised":
        return "weight", "select.min_df", "rank"
    if config.rank.score == FREQUENCY:
        return "weight", "select.min_df", "rank.score", "select.top_k", "select.reduction_factor"
    return "weight", "select.min_df"


STAGE = Stage("weight", weight, reads=("tokens", "terms", "categories"), writes=("vocabulary", "vectors"),
              sections=sections)
