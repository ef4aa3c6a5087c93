"""Each document's labels, as a parsing task attaches them: the qrels files read into an index, closed under the
category hierarchy as the run's policy says, and the documents' id digests that show every qrels document was read
exactly once. The index is built once per run by the qrels' own parsing task and staged in columnar form
(:meth:`LabelIndex.table`, read back by :meth:`LabelIndex.from_table`), or once per Python worker from the qrels files
(:meth:`LabelIndex.load`) where no job runs before the documents' (LYRL2004's vector files).

Pure pyarrow and numpy: the ingest stage gives the index its qrels files and how a task reads a file, and stores the
staged index.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparktc.corpora import lyrl2004_columnar
from sparktc.corpora.decimals import canonical_decimal_mask, canonical_decimals
from sparktc.filesystem import per_worker

__all__ = ["NOT_CLOSED", "DocRows", "LabelIndex", "QrelsFiles", "by_document", "closed_labels", "decimal_values",
           "id_digest", "id_hashes", "short_decimal_mask", "short_decimals", "unclosed_rows"]

#: The reason a document whose labels miss an ancestor is set aside (``corpus.hierarchy_policy = "set_aside"``).
NOT_CLOSED = "set aside: labels not closed under the hierarchy (a parent category missing)"
#: Canonical decimals (no sign, no leading zero: LYRL2004's ids) of at most 18 digits: each fits an int64, and two
#: are the same id exactly when their values are equal.
SHORT_DIGITS = 18
#: The columns of a qrels line the index is built from (``reason`` null: an accepted line).
_LINES_SCHEMA = pa.schema([("doc_id", pa.string()), ("category", pa.string()), ("reason", pa.string())])


@dataclass(frozen=True)
class DocRows:
    """The row of each of a collection of distinct doc ids, found for a batch of ids at once: by value in a sorted
    int64 array (``np.searchsorted``) when every id is a canonical decimal that fits one, as LYRL2004's are (804,414
    ids: 0.05 CPU-s to build against 0.33 for a dict); otherwise by a dict of the ids.
    """

    keys: np.ndarray  # the ids' values, ascending (empty when ``row_of`` is used)
    rows: np.ndarray  # the row of each of ``keys``
    row_of: dict[str, int] | None = None

    @staticmethod
    def of(ids: pa.StringArray) -> DocRows:
        """The rows of ``ids`` (distinct), numbered in their order."""
        values = decimal_values(ids)
        if values is not None:
            order = np.argsort(values, kind="stable")  # ascending already (by_document), at no cost
            return DocRows(values[order], order)
        return DocRows(np.zeros(0, np.int64), np.zeros(0, np.int64),
                       {doc_id: row for row, doc_id in enumerate(ids.to_pylist())})

    def find(self, doc_ids: pa.Array) -> np.ndarray:
        """The row of each of ``doc_ids``; -1 for an id not among them, or null."""
        if self.row_of is not None:
            return np.array([self.row_of.get(doc_id, -1) for doc_id in doc_ids.to_pylist()], np.int64)
        decimal = pa.array(short_decimal_mask(doc_ids))
        values = pc.cast(pc.if_else(decimal, doc_ids, "-1"), pa.int64()).to_numpy()  # -1: no id's value
        at = np.minimum(np.searchsorted(self.keys, values), len(self.keys) - 1)
        return np.where(self.keys[at] == values, self.rows[at], -1)


@dataclass(frozen=True)
class LabelIndex:
    """Each document's sorted, distinct label codes, from the accepted qrels lines (``reason`` null), so
    documents get their labels while they are parsed instead of being shuffled with their tokens to meet them.
    The qrels hold only ids and codes; each Python worker loads the index once (like the training matrix in the
    train stage).
    """

    ids: pa.StringArray  # the qrels documents in :func:`by_document`'s order: row r is ids[r]
    labels: pa.ListArray  # one extra empty list at the end, for documents without labels
    set_aside: frozenset[str] = frozenset()  # documents set aside: their labels are not closed under the hierarchy
    not_closed: int = 0  # qrels documents whose labels miss an ancestor, whatever the policy did with them
    ids_digest: int = 0  # the sum of the qrels documents' id hashes, mod 2^64 (:func:`id_digest`)

    @staticmethod
    def load(qrels: QrelsFiles, read: Callable[[str], bytes], parents: tuple[tuple[str, str], ...] = (),
             policy: str = "expand") -> LabelIndex:
        """The accepted lines of the ``qrels`` files, read (``read``: a file's stored bytes, as a task reads them)
        and checked as their own parsing task reads them, once per worker; with the hierarchy's ``parents``
        (code, parent) pairs, a document whose labels miss an ancestor gets the missing ones (``policy =
        "expand"``, LYRL2004's for topics), is set aside (``"set_aside"``) or keeps its labels as read
        (``"keep"``).
        """
        return _load_labels(qrels.paths[0], qrels, read, parents, policy)

    @staticmethod
    def of(assignments: pa.Table, parents: tuple[tuple[str, str], ...] = (), policy: str = "expand") -> LabelIndex:
        """The index of qrels lines (``doc_id``, ``category``, ``reason``: null for an accepted line), as
        :meth:`load` builds it.
        """
        accepted = assignments.filter(pc.is_null(assignments.column("reason")))
        return _label_index(accepted.select(["doc_id", "category"]), parents, policy)

    @staticmethod
    def of_lines(batches: Iterable[pa.RecordBatch], parents: tuple[tuple[str, str], ...] = (),
                 policy: str = "expand") -> LabelIndex:
        """The index of the qrels lines ``batches`` (:meth:`QrelsFiles.read`), as :meth:`of` builds it."""
        lines = [batch.select(_LINES_SCHEMA.names) for batch in batches]
        return LabelIndex.of(pa.Table.from_batches(lines, _LINES_SCHEMA), parents, policy)

    @staticmethod
    def passing(batches: Iterator[pa.RecordBatch], parents: tuple[tuple[str, str], ...], policy: str,
                then: Callable[[LabelIndex], None]) -> Iterator[pa.RecordBatch]:
        """The qrels lines ``batches`` passed on as they are, and once they are all read, their index (as
        :meth:`of_lines` builds it) given to ``then``: the qrels' own parsing task builds the index as it reads them.
        """
        lines = []
        for batch in batches:
            lines.append(batch.select(_LINES_SCHEMA.names))  # only what the index needs is kept
            yield batch
        then(LabelIndex.of_lines(lines, parents, policy))

    def table(self) -> pa.Table:
        """The index in columnar form, to be staged once and read by every worker (:meth:`from_table`): a row per
        qrels document, in :func:`by_document`'s order, with its labels and whether it is set aside; the counts in the
        schema's metadata.
        """
        set_aside = pc.is_in(self.ids, pa.array(sorted(self.set_aside), pa.string()))
        columns = {"doc_id": self.ids, "labels": self.labels[:-1], "set_aside": set_aside}
        return pa.table(columns).replace_schema_metadata({"not_closed": str(self.not_closed),
                                                          "ids_digest": str(self.ids_digest)})

    @staticmethod
    def from_table(table: pa.Table) -> LabelIndex:
        """The index whose columnar form (:meth:`table`) is ``table``."""
        ids, labels = table.column("doc_id").combine_chunks(), table.column("labels").combine_chunks()
        metadata = table.schema.metadata
        return LabelIndex(ids, pa.concat_arrays([labels, pa.array([[]], labels.type)]),
                          frozenset(ids.filter(table.column("set_aside").combine_chunks()).to_pylist()),
                          int(metadata[b"not_closed"]), int(metadata[b"ids_digest"]))

    @functools.cached_property
    def rows(self) -> DocRows:
        """The row of each of :attr:`ids`, found when a worker first attaches labels (the qrels' task that stages the
        index never does).
        """
        return DocRows.of(self.ids)

    def attach(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` (RECORD_SCHEMA) with the labels of its documents; rejected records keep null labels, and a
        document set aside gets the reason :data:`NOT_CLOSED`.
        """
        rows = self.rows.find(batch.column("doc_id"))
        rows[rows < 0] = len(self.labels) - 1
        labels = self.labels.take(pa.array(rows, mask=pc.is_valid(batch.column("reason")).to_numpy(
            zero_copy_only=False)))
        batch = batch.set_column(batch.schema.get_field_index("labels"), "labels", labels)
        if not self.set_aside:
            return batch
        reasons = batch.column("reason").to_pylist()
        doc_ids = batch.column("doc_id").to_pylist()
        marked = [NOT_CLOSED if reason is None and doc_id in self.set_aside else reason
                  for doc_id, reason in zip(doc_ids, reasons)]
        return batch.set_column(batch.schema.get_field_index("reason"), "reason", pa.array(marked, pa.string()))


@dataclass(frozen=True)
class QrelsFiles:
    """The qrels files of a LYRL2004 corpus and how they are checked: an assignment of a category outside
    ``known`` (the codes of the hierarchy at ``tree_path``; None: any code) is rejected.
    """

    paths: tuple[str, ...]
    known: tuple[str, ...] | None = None
    tree_path: str = ""

    def read(self, content: bytes, source: str) -> Iterator[pa.RecordBatch]:
        """The lines of one qrels file (:data:`~sparktc.corpora.lyrl2004_columnar.ASSIGNMENT_SCHEMA`)."""
        if self.known is None:
            yield from lyrl2004_columnar.read_qrels_file(content, source)
            return
        known = pa.array(self.known, pa.string())
        for batch in lyrl2004_columnar.read_qrels_file(content, source):
            category = batch.column("category")
            is_known = pc.is_in(category, known)
            if pc.all(is_known).as_py():  # as good qrels are: no reason is built for every line only to be dropped
                yield batch
                continue
            unknown = pc.if_else(is_known, pa.scalar(None, pa.string()), pc.binary_join_element_wise(
                "unknown category ", category, f" (not in {self.tree_path})", ""))
            yield batch.set_column(4, "reason", pc.coalesce(batch.column("reason"), unknown))


@per_worker
def _load_labels(path: str, qrels: QrelsFiles, read: Callable[[str], bytes], parents: tuple[tuple[str, str], ...],
                 policy: str) -> LabelIndex:
    """A parsing worker's :class:`LabelIndex`, from the qrels files themselves (2.1 to 2.8 CPU-s for RCV1-v2's 2.6M
    lines, gzipped), so the documents' files need not wait for the qrels' own parsing task.
    """
    return LabelIndex.of_lines((batch for source in qrels.paths for batch in qrels.read(read(source), source)),
                               parents, policy)


def decimal_values(doc_ids: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The int64 value of each of ``doc_ids`` when there is one and every one is a short canonical decimal (then two
    ids are the same exactly when their values are), else None.
    """
    if not len(doc_ids) or doc_ids.null_count or not short_decimals(doc_ids):
        return None
    return pc.cast(doc_ids, pa.int64()).to_numpy()


def short_decimals(strings: pa.Array | pa.ChunkedArray) -> bool:
    """Whether every one of ``strings`` is a short canonical decimal (no sign, no leading zero, at most
    :data:`SHORT_DIGITS` digits, so it fits an int64), checked over their bytes (:mod:`sparktc.corpora.decimals`).
    """
    return canonical_decimals(strings, SHORT_DIGITS)


def short_decimal_mask(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per one of ``strings``, whether it is a short canonical decimal (a null is not)."""
    return canonical_decimal_mask(strings, SHORT_DIGITS)


def by_document(assignments: pa.Table) -> tuple[pa.StringArray, pa.StringArray]:
    """The ``doc_id`` and ``category`` columns of qrels lines ordered by document, then category: documents by their
    ids' values when every id is a short canonical decimal (:class:`DocRows`), as LYRL2004's are, else as strings.
    LYRL2004's qrels come in that order, which is checked in one pass instead of sorted (a sort of RCV1-v2's 2.6M
    lines by two strings: 0.6 CPU-s on the qrels' task, which the token files' tasks wait for).
    """
    doc_ids, categories = assignments.column("doc_id").combine_chunks(), assignments.column("category").combine_chunks()
    values = decimal_values(doc_ids)
    if values is None:
        ordered = assignments.sort_by([("doc_id", "ascending"), ("category", "ascending")])
        return ordered.column("doc_id").combine_chunks(), ordered.column("category").combine_chunks()
    step = np.diff(values)
    if (step >= 0).all():
        same = step == 0
        if pc.less_equal(categories[:-1], categories[1:]).to_numpy(zero_copy_only=False)[same].all():
            return doc_ids, categories
    order = pc.sort_indices(pa.table({"value": values, "category": categories}),
                            [("value", "ascending"), ("category", "ascending")])
    return doc_ids.take(order), categories.take(order)


def _label_index(assignments: pa.Table, parents: tuple[tuple[str, str], ...], policy: str) -> LabelIndex:
    """The index of accepted (``doc_id``, ``category``) assignments."""
    doc_ids, categories = by_document(assignments)
    new_doc = np.ones(len(doc_ids), dtype=bool)
    new_doc[1:] = pc.not_equal(doc_ids[1:], doc_ids[:-1]).to_numpy(zero_copy_only=False)
    keep = new_doc.copy()  # a repeated (doc, category) line counts once
    keep[1:] |= pc.not_equal(categories[1:], categories[:-1]).to_numpy(zero_copy_only=False)
    first = new_doc[keep]
    offsets = np.append(np.flatnonzero(first), first.size).astype(np.int32)
    labels = pa.ListArray.from_arrays(pa.array(offsets), categories.filter(pa.array(keep)))
    ids = doc_ids.filter(pa.array(new_doc))
    no_labels = pa.array([[]], labels.type)
    set_aside: frozenset[str] = frozenset()
    open_rows = unclosed_rows(labels, dict(parents)) if parents else np.zeros(0, dtype=np.int64)
    if len(open_rows) and policy != "keep":
        labels, set_aside = closed_labels(ids.to_pylist(), labels, dict(parents), policy, open_rows)
    return LabelIndex(ids, pa.concat_arrays([labels, no_labels]), set_aside, len(open_rows), id_digest(ids))


def id_hashes(doc_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash (uint64) of each of ``doc_ids``: of a short canonical decimal (:func:`short_decimal_mask`), its
    value through splitmix64's finalizer (Steele, Lea & Flood 2014), a bijection of 64-bit integers, so distinct
    decimal ids never share a hash; of any other id, SipHash of its string (pandas' ``hash_array``). The ids of
    3,217,656 LYRL2004 documents: 0.05 CPU-s, against 0.97 for SipHash of each id as a Python string.
    """
    if isinstance(doc_ids, pa.ChunkedArray):
        doc_ids = doc_ids.combine_chunks()
    decimal = short_decimal_mask(doc_ids)
    hashes = np.empty(len(doc_ids), dtype=np.uint64)
    if decimal.any():
        values = pc.cast(doc_ids.filter(pa.array(decimal)), pa.int64()).to_numpy()
        hashes[decimal] = _mixed(values.astype(np.uint64))
    if not decimal.all():
        import pandas as pd  # a worker's dependency like pyarrow; imported where used, as the tasks need it

        # hash_array's default factorizes the values first (a saving for repeated values): doc ids are distinct,
        # and the factorizing cost 0.4 of 0.5 CPU-s for 804,414 of them.
        others = doc_ids.filter(pa.array(~decimal)).to_numpy(zero_copy_only=False)
        hashes[~decimal] = pd.util.hash_array(np.asarray(others, dtype=object), categorize=False)
    return hashes


def _mixed(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer of uint64 ``values``: each step (an addition, a shift xor, an odd multiplication,
    all mod 2^64) is invertible, so the whole is a bijection.
    """
    z = values + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def id_digest(doc_ids: pa.Array) -> int:
    """The sum, mod 2^64, of the hashes of ``doc_ids`` (:func:`id_hashes`): two collections of ids with equal counts
    and equal digests are the same multiset, but for a chance of 2^-64.
    """
    return int(id_hashes(doc_ids).sum(dtype=np.uint64))


def unclosed_rows(labels: pa.ListArray, parent: Mapping[str, str]) -> np.ndarray:
    """The rows of ``labels`` that are not closed under ``parent``: a label's parent is missing among them, ascending.
    Found with numpy over all documents at once: each row's labels, and the parents they need, as sets of bits over
    the hierarchy's codes (64 codes a word); a row is closed when it has every bit it needs (RCV1-v2's 10.4M
    qrels lines of 3,217,656 documents: 0.4 CPU-s, against 1.9 by matching (row, code) keys).
    """
    codes = sorted(set(parent) | set(parent.values()))
    flat = pc.list_flatten(labels)
    if not len(flat):
        return np.zeros(0, dtype=np.int64)
    category = pc.index_in(flat, value_set=pa.array(codes, pa.string())).fill_null(-1).to_numpy(zero_copy_only=False)
    parent_of = np.array([codes.index(parent[code]) if code in parent else -1 for code in codes] + [-1])
    wanted = parent_of[category]  # -1 (the last entry) for a top-level label or one outside the hierarchy
    lengths = pc.list_value_length(labels).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(lengths)
    starts = (np.cumsum(lengths) - lengths)[rows]  # an empty row between two adds nothing to the first's segment
    # Code c's bit in word c // 64, by word; the last column, for code -1 (none), is 0 in every word.
    position = np.arange(len(codes))
    bits = np.zeros(((len(codes) + 63) // 64, len(codes) + 1), dtype=np.uint64)
    bits[position // 64, position] = np.left_shift(np.uint64(1), (position % 64).astype(np.uint64))
    unclosed = np.zeros(len(rows), dtype=bool)
    for word in bits:
        has, needs = (np.bitwise_or.reduceat(word[code], starts) for code in (category, wanted))
        unclosed |= (needs & ~has) != 0
    return rows[unclosed].astype(np.int64)


def closed_labels(ids: list[str], labels: pa.ListArray, parent: Mapping[str, str], policy: str, open_rows: np.ndarray
            ) -> tuple[pa.ListArray, frozenset[str]]:
    """Each document's labels closed under ``parent`` (sorted, every ancestor added) when ``policy`` is
    "expand", and the documents whose labels were not closed (``open_rows``, :func:`unclosed_rows`) when it is
    "set_aside" (their labels as read); only the documents that are not closed are visited one by one.
    """
    if policy != "expand":
        return labels, frozenset(ids[r] for r in open_rows)
    found = labels.to_pylist()
    for r in open_rows:
        closed = set(found[r])
        for code in found[r]:
            while code in parent:
                code = parent[code]
                closed.add(code)
        found[r] = sorted(closed)
    return pa.array(found, labels.type), frozenset()
