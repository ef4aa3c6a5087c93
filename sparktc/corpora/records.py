"""What every corpus reader yields: an accepted document or a rejected record.

Readers are plain generators over a file's lines, run on the executors; they never raise on
bad input. A record they cannot use becomes a :class:`Reject` naming the file, the line and
the reason, so the ingest stage can either stop with that message or set the record aside
in the ``rejects`` table, and the counts of records in and out always add up.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparktc.schemas import RECORD_SCHEMA

T = TypeVar("T")

TRAIN = "train"
TEST = "test"
#: A finite decimal number as C's strtod reads it (what LIBSVM and LYRL2004's tools read), without hexadecimal,
#: inf, nan and Python's digit underscores.
DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_FEATURE = re.compile(rf"([0-9]+):({DECIMAL})")
_WHOLE = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class FeatureSyntax:
    """The ``index:value`` fields of the vector formats, and the words each format's messages use for them.

    :meth:`parse` reads a field as (index, value), the index a whole number from 1 to ``maximum`` and the value a
    finite :data:`DECIMAL`, or says why it cannot: ``index`` and ``value`` name the two parts, ``form`` the field
    (``'index:value'``), ``hint`` what a feature looks like, ``below_one`` what to do about an index of 0, and
    ``over_maximum`` what follows "over MAXIMUM" (its punctuation included).
    """

    index: str
    value: str
    form: str
    maximum: int
    hint: str
    below_one: str
    over_maximum: str

    def parse(self, field: str) -> tuple[int, float] | str:
        """``field``'s index and value, or why it is not a feature (naming the field)."""
        match = _FEATURE.fullmatch(field)
        if match is None:
            return self._malformed(field)
        digits = match[1].lstrip("0")
        if not digits:
            return f"field {reprlib.repr(field)}: {self.index} 0 is below 1; {self.below_one}"
        # Compared by length first: int() refuses numbers of over 4,300 digits.
        if len(digits) > len(str(self.maximum)) or int(digits) > self.maximum:
            return f"field {reprlib.repr(field)}: {self.index} over {self.maximum:,}{self.over_maximum}"
        value = float(match[2])
        if not math.isfinite(value):
            return f"field {reprlib.repr(field)}: {self.value} {reprlib.repr(match[2])} overflows a float; {self.hint}"
        return int(digits), value

    def _malformed(self, field: str) -> str:
        """Why ``field``, which is not ``digits:decimal``, is not a feature."""
        shown = reprlib.repr(field)
        index, colon, value = field.partition(":")
        if not colon or not index or not value:
            return f"field {shown} is not {self.form}; {self.hint}"
        if not _WHOLE.fullmatch(index):
            return f"field {shown}: {self.index} {reprlib.repr(index)} is not a whole number (digits only); {self.hint}"
        return f"field {shown}: {self.value} {reprlib.repr(value)} is not a finite decimal number; {self.hint}"


@dataclass(frozen=True, slots=True)
class Document:
    """One document as read from the corpus, before any category set is applied.

    ``split`` is ``"train"``, ``"test"`` or ``None`` when the corpus split leaves the document
    unused (Reuters-21578 ModApte drops LEWISSPLIT NOT-USED and TOPICS NO). Exactly one of
    ``text`` (raw text, to be tokenized) and ``tokens`` (already tokenized and stemmed) is set; ``title`` is the
    title alone, part of ``text`` too, when the format has one.
    ``source`` and ``line`` locate the record for error messages (line is 1-based).
    """

    doc_id: str
    split: str | None
    labels: tuple[str, ...]
    text: str | None
    tokens: tuple[str, ...] | None
    source: str
    line: int
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Reject:
    """A record the reader could not accept; ``line`` is 1-based, 0 when the whole file failed."""

    source: str
    line: int
    doc_id: str | None
    reason: str

    def message(self) -> str:
        """The reject in one line, ``source:line (doc DOC_ID): reason``, without the line when the whole file failed and
        without the doc id when none was read.
        """
        where = f"{self.source}:{self.line}" if self.line else self.source
        who = f" (doc {self.doc_id})" if self.doc_id is not None else ""
        return f"{where}{who}: {self.reason}"


#: Why a line that is not UTF-8 is rejected, in every line-oriented format.
NOT_UTF8 = "not valid UTF-8; re-encode the file as UTF-8"


def decoded_line(raw: bytes, source: str, number: int) -> str | Reject:
    """Line ``number`` of ``source`` as text, or the Reject saying it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return Reject(source, number, None, f"line is {NOT_UTF8}")


BATCH_ROWS = 4096


def record_batch(records: Sequence[Document | Reject]) -> pa.RecordBatch:
    """``records`` as one Arrow batch of :data:`~sparktc.schemas.RECORD_SCHEMA`."""
    columns: dict[str, list] = {name: [] for name in RECORD_SCHEMA.names}
    for record in records:
        is_document = isinstance(record, Document)
        columns["doc_id"].append(record.doc_id)
        columns["split"].append(record.split if is_document else None)
        columns["labels"].append(list(record.labels) if is_document else None)
        columns["text"].append(record.text if is_document else None)
        columns["title"].append(record.title if is_document else None)
        columns["tokens"].append(join_tokens(record.tokens) if is_document and record.tokens is not None else None)
        columns["source"].append(record.source)
        columns["line"].append(record.line)
        columns["reason"].append(None if is_document else record.reason)
    return pa.RecordBatch.from_pydict(columns, schema=RECORD_SCHEMA)


def join_tokens(tokens: Sequence[str]) -> str:
    """A document's tokens as stored: one string, single spaces between tokens."""
    return " ".join(tokens)


def tokens_or_null(tokens: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Stored token strings as one array, a document without tokens ("") null: split, it gives no token, where ""
    would give one empty token.
    """
    if isinstance(tokens, pa.ChunkedArray):
        tokens = tokens.combine_chunks()
    return pc.if_else(pc.equal(tokens, ""), pa.scalar(None, pa.string()), tokens)


def split_tokens(tokens: pa.Array | pa.ChunkedArray) -> pa.ListArray:
    """Stored token strings back to one list of tokens per document (null and "" give an empty list)."""
    lists = pc.split_pattern(tokens_or_null(tokens), " ")
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pc.list_flatten(lists))


def listed_tokens(tokens: pa.Array | pa.ChunkedArray) -> pa.ListArray:
    """Documents' tokens as one list per document: a list column (:data:`TOKEN_LIST_RECORD_SCHEMA`) as it is,
    stored token strings split (:func:`split_tokens`).
    """
    if isinstance(tokens, pa.ChunkedArray):
        tokens = tokens.combine_chunks()
    return tokens if pa.types.is_list(tokens.type) else split_tokens(tokens)


def token_counts(tokens: pa.Array | pa.ChunkedArray) -> tuple[int, int, int]:
    """Documents, tokens and documents without tokens among stored token strings (a count of separators: the
    strings are never split; a null has no tokens).
    """
    chunks = tokens.chunks if isinstance(tokens, pa.ChunkedArray) else [tokens]
    counted = [_chunk_token_counts(chunk) for chunk in chunks]
    return len(tokens), sum(n for n, _ in counted), sum(empty for _, empty in counted)


def term_id_token_counts(batch: pa.RecordBatch | pa.Table) -> tuple[int, int, int]:
    """Tokens, documents without tokens and tokens outside the training terms of documents in integer form
    (:data:`~sparktc.schemas.TERM_ID_RECORD_SCHEMA`), as :func:`token_counts` counts their token strings: a
    document's tokens are its terms' counts (each at least 1) and its tokens outside the training terms.
    """
    outside = pc.fill_null(batch.column("tokens_outside"), 0).to_numpy(zero_copy_only=False)
    lengths = pc.list_value_length(batch.column("term_counts")).fill_null(0).to_numpy(zero_copy_only=False)
    counted = int(pc.sum(pc.list_flatten(batch.column("term_counts"))).as_py() or 0)
    outside_total = int(outside.sum(dtype=np.int64))
    return counted + outside_total, int(np.count_nonzero((lengths == 0) & (outside == 0))), outside_total


def _chunk_token_counts(tokens: pa.Array) -> tuple[int, int]:
    """(tokens, documents without tokens) of one string array: its separators counted in its data buffer with numpy
    (a byte scan; pyarrow's count_substring is several times slower), plus one token per non-empty string.
    """
    if tokens.null_count:  # a null slot may span bytes of the buffer: count over "" in its place
        tokens = pc.fill_null(tokens, "")
    non_empty = int(pc.sum(pc.greater(pc.binary_length(tokens), 0)).as_py() or 0)
    offset_type = np.int64 if pa.types.is_large_string(tokens.type) else np.int32
    offsets = np.frombuffer(tokens.buffers()[1], dtype=offset_type)[tokens.offset:tokens.offset + len(tokens) + 1]
    data = tokens.buffers()[2]
    values = np.frombuffer(data, dtype=np.uint8) if data is not None and len(tokens) else np.zeros(0, np.uint8)
    spaces = int(np.count_nonzero(values[offsets[0]:offsets[-1]] == 0x20)) if len(tokens) else 0
    return spaces + non_empty, len(tokens) - non_empty


def batches_of(
    items: Iterable[T], to_batch: Callable[[list[T]], pa.RecordBatch], rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """``items`` converted ``rows`` at a time by ``to_batch``."""
    pending: list[T] = []
    for item in items:
        pending.append(item)
        if len(pending) == rows:
            yield to_batch(pending)
            pending = []
    if pending:
        yield to_batch(pending)


def record_batches(records: Iterable[Document | Reject], rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """``records`` as Arrow batches of at most ``rows`` rows each."""
    return batches_of(records, record_batch, rows)


#: Records as a reader hands them to ingest's integer form (issue 39): :data:`~sparktc.schemas.RECORD_SCHEMA` with
#: each document's tokens kept as the list it was read as, so they are neither joined into a string nor split again
#: before they become term ids. Never written.
TOKEN_LIST_RECORD_SCHEMA = RECORD_SCHEMA.set(RECORD_SCHEMA.get_field_index("tokens"),
                                             pa.field("tokens", pa.list_(pa.string())))


def tokenized_documents(
    doc_ids: pa.Array, split: str, tokens: pa.ListArray, source: str, lines: np.ndarray, lists: bool = False
) -> pa.Table:
    """Documents read in columnar form (a token list each, no labels yet) as a
    :data:`~sparktc.schemas.RECORD_SCHEMA` table, or with ``lists`` a :data:`TOKEN_LIST_RECORD_SCHEMA` one.
    """
    n = len(doc_ids)
    no_labels = pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, dtype=np.int32)), pa.array([], pa.string()))
    return pa.Table.from_arrays(
        [
            doc_ids,
            pa.repeat(pa.scalar(split, pa.string()), n),
            no_labels,
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
            tokens if lists else pc.binary_join(tokens, " "),
            pa.repeat(pa.scalar(source, pa.string()), n),
            pa.array(lines, pa.int32()),
            pa.nulls(n, pa.string()),
        ],
        schema=TOKEN_LIST_RECORD_SCHEMA if lists else RECORD_SCHEMA,
    )
