"""LYRL2004 token files read in columnar form: numpy over the file's bytes instead of Python per line.

The line reader :func:`sparktc.corpora.lyrl2004.parse_token_file` defines what a token file
means; this module produces exactly its output, as Arrow tables, for the common case of a
well-formed file, about ten times faster. The decompressed file is cut into pieces of about
``piece_bytes`` at lines that start with ``.I``; a piece is read here only when it is plainly
well-formed:

* ASCII only (so Python's ``str.split`` and the byte classes below agree on whitespace);
* no text before the first ``.I``;
* every ``.I`` line is ``.I <id>`` with a canonical decimal id, and the next non-blank line is
  the record's only ``.W`` line;
* every record has at least one token, and no id repeats within the file.

Any other piece goes through the line reader, which then reports the problem with its file and
line; so bad input never takes a different path to a different answer, it only takes longer.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparktc.corpora import lyrl2004
from sparktc.corpora.decimals import canonical_decimals
from sparktc.corpora.files import CORRUPT_GZIP_ERRORS, gunzip, read_records
from sparktc.corpora.formats import QRELS, ByteRanges, CorpusFormat
from sparktc.corpora.line_ranges import count_newlines, file_ranges, range_lines
from sparktc.corpora.records import (
    BATCH_ROWS,
    TEST,
    Document,
    Reject,
    batches_of,
    record_batches,
    tokenized_documents,
)
from sparktc.runtime.task_memory import shaped_piece_bytes

PIECE_BYTES = 16 << 20
#: Where a token file is cut into pieces and byte ranges: before a line that starts a record (``.I <id>``). A
#: record's ``.I`` line written otherwise (indented, a tab after ``.I``) is no cut: its record stays in the piece
#: before it, which the line reader reads as the whole file's reader does.
RECORD_BOUNDARY = b"\n.I "
#: Qrels rows per batch: a line is three short words, so batches of records' size (BATCH_ROWS) would be
#: hundreds of tiny batches, each paying the per-batch costs of the label check, the tally and the writer.
QRELS_BATCH_ROWS = 1 << 16

# Python's str.split() separators among ASCII bytes, and the decimal digits.
_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")] = True
# The ASCII control characters that are not white space: no label holds one (sparktc.corpora.labels).
_CONTROL = bytes(byte for byte in [*range(0x20), 0x7F] if not _SPACE[byte])
_DOT, _I, _W, _NEWLINE = ord("."), ord("I"), ord("W"), ord("\n")


def _words(data: np.ndarray) -> tuple[pa.StringArray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The whitespace-separated words of ASCII bytes as an Arrow array, with each word's start and length, and the
    positions of the newlines (:func:`_line_index` numbers a word's line from them); None when the words do not fit
    32-bit Arrow offsets.
    """
    in_word = ~_SPACE[data]
    # Word starts and the ends after them alternate among the changes of in_word: one scan for both.
    bounds = np.flatnonzero(np.diff(in_word.view(np.int8), prepend=np.int8(0), append=np.int8(0)))
    starts = bounds[0::2]
    lengths = bounds[1::2] - starts
    del bounds
    packed = data[in_word]  # the words back to back, ready to be an Arrow string array's data buffer
    if len(packed) >= 2**31:
        return None
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    words = pa.StringArray.from_buffers(len(starts), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(packed))
    return words, starts, lengths, np.flatnonzero(data == _NEWLINE)


def _line_index(newlines: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The line (0-based) of each byte position, given the positions of the newlines: the newlines before it."""
    return np.searchsorted(newlines, positions)


def _first_on_line(starts: np.ndarray, newlines: np.ndarray) -> np.ndarray:
    """Whether each word (by its start) is the first of its line: the first word, and the first after each newline
    (found per newline, not per word: a few million newlines against tens of millions of words).
    """
    first = np.zeros(len(starts), dtype=bool)
    first[:1] = True
    after = np.searchsorted(starts, newlines)  # no word starts at a newline
    first[after[after < len(starts)]] = True
    return first


def read_clean_piece(piece: bytes, first_line: int) -> tuple[pa.Array, pa.ListArray, np.ndarray] | None:
    """``(doc_ids, tokens, lines)`` of a well-formed piece (module docstring), or None otherwise.

    ``first_line`` is the file line number of the piece's first line; ``lines`` are the numbers
    of the records' ``.I`` lines. Repeated ids within the piece count as not well-formed; the
    caller checks ids against earlier pieces.
    """
    if not piece.isascii():
        return None
    found = _words(np.frombuffer(piece, dtype=np.uint8))
    if found is None:
        return None
    words, starts, lengths, newlines = found
    n_words = len(words)
    if n_words == 0:
        return pa.array([], pa.string()), pa.array([], pa.list_(pa.string())), np.zeros(0, dtype=np.int64)
    packed = np.frombuffer(words.buffers()[2], dtype=np.uint8)
    head = np.frombuffer(words.buffers()[1], dtype=np.int32)[:-1]
    first_on_line = _first_on_line(starts, newlines)
    marker = first_on_line & (lengths == 2) & (packed[head] == _DOT)
    second = packed[np.minimum(head + 1, len(packed) - 1)]
    is_i = marker & (second == _I)
    is_w = marker & (second == _W)

    i_at = np.flatnonzero(is_i)
    id_at, w_at = i_at + 1, i_at + 2
    if len(i_at) == 0 or i_at[0] != 0 or w_at[-1] >= n_words:
        return None  # text before the first .I, or a last record without .W
    i_line = _line_index(newlines, starts[i_at])
    if (_line_index(newlines, starts[id_at]) != i_line).any() or (_line_index(newlines, starts[w_at]) == i_line).any():
        return None  # an .I line without its id, or with more than the id
    if not is_w[w_at].all() or int(is_w.sum()) != len(i_at):
        return None  # text before .W, no .W, or a second .W
    doc_ids = words.take(pa.array(id_at))
    if not canonical_decimals(doc_ids):
        return None
    if pc.count_distinct(doc_ids).as_py() != len(doc_ids):
        return None
    is_token = np.ones(n_words, dtype=bool)
    is_token[i_at] = is_token[id_at] = is_token[w_at] = False
    record_of = np.cumsum(is_i) - 1
    per_record = np.bincount(record_of[is_token], minlength=len(i_at))
    if (per_record == 0).any():
        return None  # an empty document
    record_offsets = np.zeros(len(i_at) + 1, dtype=np.int32)
    np.cumsum(per_record, out=record_offsets[1:])
    tokens = pa.ListArray.from_arrays(pa.array(record_offsets), words.filter(pa.array(is_token)))
    return doc_ids, tokens, i_line + first_line


def _pieces(text: bytes, piece_bytes: int, boundary: bytes, first_line: int = 1) -> Iterator[tuple[bytes, int]]:
    """Cut ``text`` (whose first line is line ``first_line`` of its file) into pieces of about ``piece_bytes`` that
    end just before a ``boundary`` (which starts with a newline), with the line number of each piece's first line.
    """
    start, line = 0, first_line
    while start < len(text):
        cut = text.find(boundary, start + piece_bytes)
        end = len(text) if cut < 0 else cut + 1
        piece = text[start:end]
        yield piece, line
        line += piece.count(b"\n")
        start = end


def read_token_file(
    content: bytes, source: str, split: str, piece_bytes: int = PIECE_BYTES, lists: bool = False
) -> Iterator[pa.RecordBatch]:
    """The records of one token file (``.gz`` or not) as :data:`~sparktc.corpora.records.RECORD_SCHEMA` batches,
    identical to :func:`~sparktc.corpora.lyrl2004.parse_token_file` over the same file; with ``lists``, the batches
    of the pieces read in columnar form keep each document's tokens as a list
    (:data:`~sparktc.corpora.records.TOKEN_LIST_RECORD_SCHEMA`), the line reader's hold strings.
    """

    def line_reader(lines: Iterable[bytes], name: str) -> Iterator[Document | Reject]:
        return lyrl2004.parse_token_file(lines, name, split)

    try:
        text = gunzip(content) if source.endswith(".gz") else content
    except CORRUPT_GZIP_ERRORS:
        # The line reader keeps the records before the break and names it.
        yield from record_batches(read_records(line_reader, content, source))
        return
    del content  # inflated: the compressed bytes are not needed any more (74 MB for a 164 MB RCV1 token file)
    yield from _token_records(text, source, split, 1, piece_bytes, lists)


def _token_records(text: bytes, source: str, split: str, first_line: int, piece_bytes: int, lists: bool
                   ) -> Iterator[pa.RecordBatch]:
    """The records of the plain token file text ``text`` (all of a file, or the records of a byte range, which
    starts at a ``.I`` line), its first line being line ``first_line`` of ``source``; with ``lists``, those of the
    pieces read in columnar form with their token lists (:func:`read_token_file`).
    """
    accepted: set[str] = set()
    for piece, line in _pieces(text, shaped_piece_bytes(piece_bytes), RECORD_BOUNDARY, first_line):
        clean = read_clean_piece(piece, line)
        if clean is not None:
            ids = clean[0].to_pylist()
            if accepted.isdisjoint(ids):
                accepted.update(ids)
                yield from tokenized_documents(clean[0], split, clean[1], source, clean[2], lists).to_batches(
                    BATCH_ROWS)
                continue
        records = lyrl2004.parse_token_file(io.BytesIO(piece), source, split, first_line=line, accepted=accepted)
        yield from record_batches(records)


def read_range(file: pa.NativeFile, size: int, source: str, start: int, end: int,
               newlines_before: int, lists: bool = False) -> Iterator[pa.RecordBatch]:
    """The records of a plain token file (``size`` bytes, opened for random access) whose ``.I`` line is the first
    at or after ``start`` of those before the first at or after ``end`` (:data:`RECORD_BOUNDARY`;
    :func:`~sparktc.corpora.line_ranges.range_lines`), ``newlines_before`` being the newlines in ``[0, start)``:
    with the ranges of :func:`~sparktc.corpora.line_ranges.byte_ranges`, the records of :func:`read_corpus_file`
    over the whole file, split between the ranges, with its line numbers. The one difference: an id repeated in
    two ranges is accepted by each range (an id repeated within a range is rejected here, as in a whole file);
    ingest rejects the repeat after its first occurrence with every other repeated id
    (:func:`~sparktc.experiment.tables.mark_duplicates`). With ``lists``, token lists as :func:`read_token_file`
    keeps them.
    """
    text, first_line = range_lines(file, size, start, end, newlines_before, RECORD_BOUNDARY)
    yield from _token_records(text, source, lyrl2004.split_of(source), first_line, PIECE_BYTES, lists)


def read_range_lists(file: pa.NativeFile, size: int, source: str, start: int, end: int,
                     newlines_before: int) -> Iterator[pa.RecordBatch]:
    """:func:`read_range` with each document's tokens as a list where it reads them so, for ingest's integer form."""
    return read_range(file, size, source, start, end, newlines_before, lists=True)


def read_corpus_file(content: bytes, source: str) -> Iterator[pa.RecordBatch]:
    """The records of a corpus's token file, its split by its name (:func:`~sparktc.corpora.lyrl2004.split_of`)."""
    return read_token_file(content, source, lyrl2004.split_of(source))


def read_corpus_lists(content: bytes, source: str) -> Iterator[pa.RecordBatch]:
    """:func:`read_corpus_file` with each document's tokens as a list where it reads them so (the pieces read in
    columnar form; :func:`read_token_file`), for ingest's integer form: no token list is joined into a string only
    to be split again.
    """
    return read_token_file(content, source, lyrl2004.split_of(source), lists=True)


def read_new_documents(content: bytes, source: str) -> Iterator[pa.RecordBatch]:
    """The records of a token file of new documents to classify (any name): test documents."""
    return read_token_file(content, source, TEST)


def token_files(test_parts: Sequence[int]) -> tuple[str, ...]:
    """The token files of a LYRL2004 corpus read with ``corpus.test_parts``: the training file and those parts."""
    return (lyrl2004.TRAIN_FILE, *(lyrl2004.TEST_FILES[part] for part in test_parts))


# --- qrels ---------------------------------------------------------------------------------------

#: One row per qrels line: an assignment (``reason`` null) or a rejected line (``category`` null).
ASSIGNMENT_SCHEMA = pa.schema(
    [("doc_id", pa.string()), ("category", pa.string()), ("source", pa.string()), ("line", pa.int32()),
     ("reason", pa.string())]
)


def read_clean_qrels_piece(piece: bytes, first_line: int) -> tuple[pa.Array, pa.Array, np.ndarray] | None:
    """``(doc_ids, categories, lines)`` of a piece of a qrels file whose every non-blank line is
    ``CATEGORY DOCID 1`` with a canonical id and a category without control characters, or None otherwise.
    """
    # ASCII leaves controls the only characters that make a category no label; deleting them costs a few ms.
    if not piece.isascii() or len(piece.translate(None, _CONTROL)) != len(piece):
        return None
    found = _words(np.frombuffer(piece, dtype=np.uint8))
    if found is None:
        return None
    words, starts, _, newlines = found
    if len(words) % 3:
        return None
    category_at = np.arange(0, len(words), 3)
    line_of = _triple_lines(starts, newlines)
    if line_of is None:
        return None
    doc_ids, flags = words.take(pa.array(category_at + 1)), words.take(pa.array(category_at + 2))
    if not (pc.all(pc.equal(flags, "1")).as_py() in (True, None) and canonical_decimals(doc_ids)):
        return None
    return doc_ids, words.take(pa.array(category_at)), line_of + first_line


def _triple_lines(starts: np.ndarray, newlines: np.ndarray) -> np.ndarray | None:
    """The line (0-based) of each triple of words (by the words' ``starts``) when every line holds one triple, the
    first and third words on the same line and a new line after it; else None. With no blank line, triple k is line
    k exactly when it lies between newline k - 1 and newline k: two comparisons per line, where numbering every
    word's line by a search was 0.6 of the qrels' task's 6 CPU-s (10.4M lines).
    """
    lines = len(starts) // 3
    if len(newlines) in (lines - 1, lines):  # the last line with or without its newline: no blank line
        first, third = starts[0::3], starts[2::3]
        if (third[:len(newlines)] < newlines[:lines]).all() and (first[1:] > newlines[:lines - 1]).all():
            return np.arange(lines, dtype=np.int64)
        return None
    line_of = _line_index(newlines, starts)  # blank lines: every word's line, found by a search
    category_at = np.arange(0, len(starts), 3)
    if (line_of[category_at] != line_of[category_at + 2]).any() or (
            line_of[category_at[1:]] == line_of[category_at[:-1] + 2]).any():
        return None
    return line_of[category_at]


def assignment_batch(rows: list[lyrl2004.Assignment | Reject]) -> pa.RecordBatch:
    """The line reader's qrels rows (:func:`~sparktc.corpora.lyrl2004.parse_qrels`: assignments and rejects) as one
    :data:`ASSIGNMENT_SCHEMA` batch, as :func:`read_qrels_file` yields the lines it leaves to the line reader.
    """
    return pa.RecordBatch.from_pydict(
        {
            "doc_id": [row.doc_id for row in rows],
            "category": [row.category if isinstance(row, lyrl2004.Assignment) else None for row in rows],
            "source": [row.source for row in rows],
            "line": [row.line for row in rows],
            "reason": [row.reason if isinstance(row, Reject) else None for row in rows],
        },
        schema=ASSIGNMENT_SCHEMA,
    )


def read_qrels_file(content: bytes, source: str, piece_bytes: int = PIECE_BYTES) -> Iterator[pa.RecordBatch]:
    """The lines of a qrels file (``.gz`` or not) as :data:`ASSIGNMENT_SCHEMA` batches, identical to
    :func:`~sparktc.corpora.lyrl2004.parse_qrels` over the same file (blank lines give no row).
    """

    def batches(rows: Iterable[lyrl2004.Assignment | Reject]) -> Iterator[pa.RecordBatch]:
        return batches_of(rows, assignment_batch)

    try:
        text = gunzip(content) if source.endswith(".gz") else content
    except CORRUPT_GZIP_ERRORS:
        yield from batches(read_records(lyrl2004.parse_qrels, content, source, "line"))  # type: ignore[arg-type]
        return
    del content  # inflated: the compressed bytes are not needed any more
    for piece, first_line in _pieces(text, shaped_piece_bytes(piece_bytes), b"\n"):
        clean = read_clean_qrels_piece(piece, first_line)
        if clean is None:
            yield from batches(lyrl2004.parse_qrels(io.BytesIO(piece), source, first_line=first_line))
            continue
        doc_ids, categories, lines = clean
        n = len(doc_ids)
        table = pa.Table.from_arrays(
            [doc_ids, categories, pa.repeat(pa.scalar(source, pa.string()), n),
             pa.array(lines, pa.int32()), pa.nulls(n, pa.string())],
            schema=ASSIGNMENT_SCHEMA,
        )
        yield from table.to_batches(QRELS_BATCH_ROWS)


#: How a large plain token file is parsed in byte ranges.
RANGES = ByteRanges(file_ranges, count_newlines, read_range)
#: LYRL2004's token files as ``corpus.format = "lyrl2004"`` (declared here, beside the reader ingest runs on them), a
#: large plain file parsed in byte ranges: documents tokenized, labelled from the qrels of a category set of RCV1-v2
#: (topics by default) under its hierarchy; for ingest's integer form, read with their token lists.
FORMAT = CorpusFormat(
    name="lyrl2004",
    title="RCV1-v2 (LYRL2004)",
    assembly=QRELS,
    names=lyrl2004.corpus_names(lyrl2004.TOKEN_FILES, "LYRL2004 token and qrels files"),
    hint=lyrl2004.CORPUS_HINT,
    reader=read_corpus_file,
    document_files=token_files,
    ranges=RANGES,
    list_reader=read_corpus_lists,
    list_ranges=replace(RANGES, read_range=read_range_lists),
    tokenized=True,
    category_sets=lyrl2004.CATEGORY_SETS,
    default_category_set="topics",
    hierarchical=True,
    classify=read_new_documents,
)
