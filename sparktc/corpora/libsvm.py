"""Reader for multi-label LIBSVM files, as LibMultiLabel reads them and as the LIBSVM data page distributes
RCV1-v2: a corpus of given feature vectors (LibMultiLabel's "Dataset Formats, LibSVM Format",
https://www.csie.ntu.edu.tw/~cjlin/libmultilabel/cli/ov_data_format.html#libsvm-format; REFERENCE.md section 5
for LibMultiLabel's linear defaults and section 7 for its published RCV1-v2 figures).

``corpus.path`` holds ``train.svm`` and ``test.svm`` (each plain, ``.gz`` or ``.bz2``); one document per line::

    label1,label2 index:value index:value ...

* The labels are the first whitespace-separated field when it holds no ``:``: labels separated by commas,
  each any non-empty string without white space, comma or colon (numbers on the LIBSVM data page) that is a
  label by :func:`sparktc.corpora.labels.label_problem` (no control or invisible format character, such as
  a byte order mark before the first label of a file). A line that starts with white space, or whose first
  field holds a ``:``, has no labels (an unlabelled document). A label given twice counts once.
* Every other field is a feature ``index:value``: the index a whole number from 1 (no sign), the value a
  finite decimal number; indices may come in any order, each at most once per line. A document without
  features is kept.
* ``#`` starts a comment to the end of the line; blank lines are skipped.

A document's id is ``<file>:<line>`` (``train.svm:12``, whatever the compression); its split is the file's;
its features are stored as its tokens, ``index:value`` strings in ascending index order with the value
written as Python's shortest round-trip repr of the float (``3:0.5``). The reader never raises on bad input:
a line it cannot take is a reject naming the field and what is expected, and a file of another name is
one reject for the whole file.

Two readers give exactly the same records. :func:`parse_libsvm` reads line by line. :func:`read_libsvm` (what
ingest runs) reads column-wise with numpy and pyarrow, :data:`CHUNK_BYTES` of whole lines at a time. A line already in
stored form (its labels and one space, or none, then features of at most 8 digits in ascending order, single-spaced,
each value written as its float's repr) is taken whole: its tokens are its bytes as written, and its indices are
compared eight bytes at a time, never parsed. Of the other lines, one that
is ASCII and matches a strict pattern (labels of printable characters, indices of at most 10 digits, exponents
of at most 4, spaces or tabs between fields) is parsed as part of columns, and every other line, or one whose
check fails (index 0 or over :data:`MAX_INDEX`, a value that overflows, an index or label given twice), goes to
the line parser, so every reject keeps its reason. A value is stored as its text when that already is the
float's repr (a plain decimal of at most 15 digits in repr's fixed-point range, no superfluous zero), else
as the repr of the float (computed once per distinct value). A large plain file is read in byte ranges
(:mod:`sparktc.corpora.line_ranges`, :func:`read_range`), one ingest task each: a range holds the lines that start
in it and numbers them from the newlines of the ranges before it, so the records are those of the whole file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import reprlib
from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparktc.corpora.files import COMPRESSIONS, CORRUPT_GZIP_ERRORS, base_name, compression_of, corrupt_gzip
from sparktc.corpora.formats import LABELLED, ByteRanges, CorpusFormat, CorpusNames
from sparktc.corpora.labels import label_problem
from sparktc.corpora.line_ranges import count_newlines, file_ranges, range_lines
from sparktc.corpora.records import TEST, TRAIN, Document, FeatureSyntax, Reject, decoded_line, record_batch
from sparktc.schemas import RECORD_SCHEMA

__all__ = ["CHUNK_BYTES", "FORMAT", "MAX_INDEX", "TEST_FILE", "TRAIN_FILE", "parse_chunk", "parse_libsvm",
           "parse_lines", "read_libsvm", "read_range", "split_of"]

TRAIN_FILE = "train.svm"
TEST_FILE = "test.svm"
#: The largest feature index read: LIBLINEAR (LibMultiLabel's linear solver) holds indices as C ints.
MAX_INDEX = 2**31 - 1

_SUFFIXES = " or ".join(COMPRESSIONS)
_FEATURES = FeatureSyntax(
    index="index", value="value", form="'index:value'", maximum=MAX_INDEX,
    hint="each feature is 'index:value', a whole number from 1 and a decimal number, as in '3:0.5'",
    below_one="LIBSVM indices start at 1 (add 1 to every index of a 0-based file)",
    over_maximum=", the largest LIBLINEAR reads; renumber the features from 1")


def split_of(source: str) -> str:
    """``"train"`` or ``"test"`` for a LIBSVM corpus file name (any directory, ``.gz``, ``.bz2`` or neither)."""
    name = base_name(source)
    if name == TRAIN_FILE:
        return TRAIN
    if name == TEST_FILE:
        return TEST
    raise ValueError(f"{source!r} is not a LIBSVM corpus file; expected {TRAIN_FILE} or {TEST_FILE} "
                     f"(optionally {_SUFFIXES})")


def _parse_line(text: str) -> tuple[tuple[str, ...], tuple[str, ...]] | str:
    """The labels and feature tokens of a non-blank line with its comment removed, or why it is rejected."""
    fields = text.split()
    labels: dict[str, None] = {}
    if not text[0].isspace() and ":" not in fields[0]:
        labels_field = fields.pop(0)
        for label in labels_field.split(","):
            if not label:
                return (f"empty label in {reprlib.repr(labels_field)}; separate labels by single commas, "
                        "with none at either end")
            # White space ends the field, so only characters like a control or a byte order mark remain to check.
            problem = label_problem(label, "in the labels field")
            if problem is not None:
                return problem
            labels.setdefault(label)
    features: dict[int, tuple[str, float]] = {}
    for field in fields:
        parsed = _FEATURES.parse(field)
        if isinstance(parsed, str):
            return parsed
        index, value = parsed
        if index in features:
            first = reprlib.repr(features[index][0])
            return f"index {index} repeated ({first} and {reprlib.repr(field)}); give each index once per line"
        features[index] = (field, value)
    tokens = tuple(f"{index}:{features[index][1]!r}" for index in sorted(features))
    return tuple(labels), tokens


def parse_libsvm(lines: Iterable[bytes], source: str) -> Iterator[Document | Reject]:
    """Yield a Document (``tokens`` set to the features, ``text=None``) or a Reject per non-blank line.

    Rejected, with the line number: a non-UTF-8 line, an empty label or one that is not a label
    (:func:`~sparktc.corpora.labels.label_problem`), a field that is not ``index:value``,
    an index that is not a whole number from 1 to :data:`MAX_INDEX`, a value that is not a finite decimal
    number, and an index repeated on its line. A file not named ``train.svm`` or ``test.svm`` (optionally
    compressed) is one Reject (line 0) and none of its lines is read.
    """
    try:
        split = split_of(source)
    except ValueError:
        yield Reject(source, 0, None, f"not a LIBSVM corpus file name; name the files {TRAIN_FILE} and {TEST_FILE} "
                                      f"(optionally {_SUFFIXES})")
        return
    name = base_name(source)
    for number, raw in enumerate(lines, 1):
        record = _parse_raw(raw, source, name, split, number)
        if record is not None:
            yield record


# --- The column-wise reader ------------------------------------------------------------------------------------
# A line is read on the fast path when all of it (before any comment) is ASCII and matches _FAST_LINE: labels
# of plain printable characters, features whose index has at most 10 digits, and only spaces and tabs between
# fields (a carriage return may end the line). Its numbers are then parsed column-wise; a line with an index out
# of range, a value that overflows, a repeated index or a repeated label, and every line that does not match,
# is read by _parse_line like any line of parse_libsvm, so its record and its reject's reason are the same.
_LABEL = r'[!"$-+\--9;-~]+'  # printable ASCII but '#', ',' and ':'
_FAST_FEATURE = r"[0-9]{1,10}:[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?"
_FAST_LINE = (rf"^(?:{_LABEL}(?:,{_LABEL})*|{_FAST_FEATURE})?(?:[ \t]+{_FAST_FEATURE})*[ \t\r]*"
              r"(?:#[^\n]*)?\n?$")
# Values whose text is already Python's repr of their float: plain decimals of at most 15 digits (so the
# text is the shortest that rounds back) in repr's fixed-point range, 1e-4 <= |x| < 1e16, without a superfluous
# zero: kept as written; any other value is written by repr (once per distinct value).
_CANONICAL_VALUE = r"^-?(?:[1-9][0-9]*\.(?:0|[0-9]*[1-9])|0\.0{0,3}[1-9](?:[0-9]*[1-9])?|0\.0)$"
_CANONICAL_LENGTH = 16  # at most 15 digits and the point, a sign aside
# A line in stored form, its tokens as written (_plain_records): labels then one space, or none; features in
# ascending index order (checked after the match) separated by single spaces; an index of at most 8 digits without a
# leading zero; a value that is already its float's repr (_CANONICAL_VALUE of at most _CANONICAL_LENGTH characters,
# not negative); nothing after the last feature but the newline.
_PLAIN_VALUE = "|".join([
    r"0\.0",
    *(rf"0\.{'0' * zeros}[1-9](?:[0-9]{{0,{12 - zeros}}}[1-9])?" for zeros in range(4)),  # 0.1 to 0.000123...
    *(rf"[1-9][0-9]{{{whole - 1}}}\.(?:0|[0-9]{{0,{14 - whole}}}[1-9])" for whole in range(1, 15)),  # 1.0 and up
])
_PLAIN_FEATURE = rf"[1-9][0-9]{{0,7}}:(?:{_PLAIN_VALUE})"
_PLAIN_LINE = rf"^(?:{_LABEL}(?:,{_LABEL})* )?{_PLAIN_FEATURE}(?: {_PLAIN_FEATURE})*\n$"
#: Bytes parsed at a time (whole lines): bounds the memory of the columns built from them.
CHUNK_BYTES = 32 << 20
_DECOMPRESS_READ = io.DEFAULT_BUFFER_SIZE  # the reads line iteration makes, so a corrupt stream breaks alike


def read_libsvm(content: bytes, source: str) -> Iterator[pa.RecordBatch]:
    """The records of a whole LIBSVM file (plain, ``.gz`` or ``.bz2``) as :data:`RECORD_SCHEMA` batches in line
    order: the records of :func:`parse_libsvm` through :func:`~sparktc.corpora.files.read_records`, read
    column-wise (a corrupt compressed stream ends with the same line-0 reject after the same lines).
    """
    try:
        split_of(source)
    except ValueError:
        yield record_batch(list(parse_libsvm([], source)))
        return
    compression = compression_of(source)
    if compression is None:
        yield from parse_lines(content, source)
        return
    pending: list[bytes] = []
    held, first_line = 0, 1
    stream: io.BufferedIOBase = (gzip.GzipFile(fileobj=io.BytesIO(content)) if compression == "gzip"  # type: ignore
                                 else bz2.BZ2File(io.BytesIO(content)))
    with stream:
        while True:
            try:
                piece = stream.read1(_DECOMPRESS_READ)
            except CORRUPT_GZIP_ERRORS as error:
                data = b"".join(pending)
                whole = data[: data.rfind(b"\n") + 1]  # a line cut by the break is lost, as read_records loses it
                yield from parse_lines(whole, source, first_line)
                yield record_batch([corrupt_gzip(source, error, first_line - 1 + whole.count(b"\n"))])
                return
            if piece:
                pending.append(piece)
                held += len(piece)
            if held >= CHUNK_BYTES or not piece:
                data = b"".join(pending)
                cut = len(data) if not piece else data.rfind(b"\n") + 1
                yield from parse_lines(data[:cut], source, first_line)
                first_line += data.count(b"\n", 0, cut)
                pending, held = [data[cut:]], len(data) - cut
                if not piece:
                    return


def parse_lines(data: bytes | memoryview, source: str, first_line: int = 1) -> Iterator[pa.RecordBatch]:
    """The records of whole lines of a LIBSVM file, the first of them line ``first_line``, as batches
    (:func:`parse_chunk` over pieces of about :data:`CHUNK_BYTES`).
    """
    view = memoryview(data)
    start = 0
    while start < len(view):
        end = len(view)
        if end - start > CHUNK_BYTES:
            cut = bytes(view[start + CHUNK_BYTES - 1: start + CHUNK_BYTES + (1 << 20)]).find(b"\n")
            end = start + CHUNK_BYTES + cut if cut >= 0 else len(view)
            if cut < 0:  # a line of over 1 MiB: find its end the slow way
                rest = bytes(view[start + CHUNK_BYTES - 1:]).find(b"\n")
                end = start + CHUNK_BYTES + rest if rest >= 0 else len(view)
        chunk = view[start:end]
        batch = parse_chunk(chunk, source, first_line)
        if len(batch):
            yield batch
        first_line += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == 10))
        start = end


def _strings(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    """Strings laid end to end in ``data`` (ASCII: checked by the caller) at ``offsets``."""
    return pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets.astype(np.int32)),
                                       pa.py_buffer(data))


def _ends(lengths: np.ndarray) -> np.ndarray:
    """Offsets of consecutive pieces of ``lengths``: 0, then each piece's end."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _canonical(values: pa.Array, digits: np.ndarray) -> np.ndarray:
    """Whether each value's text is already its float's repr (``digits``: the text's length without a minus)."""
    return (digits <= _CANONICAL_LENGTH) & pc.match_substring_regex(values, _CANONICAL_VALUE).to_numpy(
        zero_copy_only=False)


def _value_texts(values: pa.Array, floats: np.ndarray, canonical: np.ndarray) -> pa.Array:
    """Each value as written to a token: its text when that is already the float's repr, else the repr."""
    if canonical.all():
        return values
    other = np.flatnonzero(~canonical)
    # Distinct by bit pattern: 0.0 and -0.0 are equal floats but different reprs.
    distinct, inverse = np.unique(floats[other].view(np.int64), return_inverse=True)
    reprs = pa.array([repr(value) for value in distinct.view(np.float64).tolist()], pa.string())
    # The texts kept and the reprs, put back in the values' order.
    order = np.concatenate([np.flatnonzero(canonical), other])
    combined = pa.concat_arrays([values.filter(pa.array(canonical)), reprs.take(pa.array(inverse))])
    return combined.take(pa.array(np.argsort(order, kind="stable")))


def _tokens_as_written(buf: np.ndarray, begins: np.ndarray, ends: np.ndarray) -> pa.Array:
    """The spans ``[begins, ends)`` of ``buf`` (in order, not overlapping; empty ones ``[0, 0)``) as strings."""
    lengths = ends - begins
    nonempty = lengths > 0
    b, e = begins[nonempty], ends[nonempty]
    pieces = np.empty(2 * len(b) + 1, dtype=np.int64)
    pieces[0:-1:2] = b - np.concatenate([[0], e[:-1]])
    pieces[1::2] = e - b
    pieces[-1] = len(buf) - (e[-1] if len(e) else 0)
    kept = np.zeros(len(pieces), dtype=bool)
    kept[1::2] = True
    return _strings(buf[np.repeat(kept, pieces)], _ends(lengths))


def parse_chunk(data: bytes | memoryview, source: str, first_line: int = 1) -> pa.RecordBatch:
    """The records of ``data``, whole lines of a LIBSVM file (the last may lack its newline) of which the first is
    line ``first_line``, as one :data:`RECORD_SCHEMA` batch in line order; ``source`` is a corpus file name.

    A line already in stored form (:data:`_PLAIN_LINE`: its tokens are its bytes as written) is taken whole
    (:func:`_plain_records`); the other lines are parsed field by field (:func:`_column_records`).
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, lines = _lines(buf)
    if not len(starts):
        return record_batch([])
    numbers = np.arange(first_line, first_line + len(starts), dtype=np.int64)
    name, split = base_name(source), split_of(source)
    plain, table = _plain_records(buf, lines, starts, numbers, name, split, source)
    if table is None:
        table = _column_records(buf, starts, lines, numbers, name, split, source)
    elif not plain.all():
        rest = lines.filter(pa.array(~plain))  # their bytes, end to end
        offsets = np.frombuffer(rest.buffers()[1], np.int64, len(rest) + 1, rest.offset * 8)
        rest_buf = np.frombuffer(rest.buffers()[2], np.uint8, int(offsets[-1] - offsets[0]), int(offsets[0]))
        others = _column_records(rest_buf, *_lines(rest_buf), numbers[~plain], name, split, source)
        if len(others):
            table = pa.concat_tables([table, others])
            table = table.take(pc.sort_indices(table.column("line")))
    return table.combine_chunks().to_batches()[0] if len(table) else record_batch([])


def _spans(buf: np.ndarray, begins: np.ndarray, lengths: np.ndarray) -> pa.StringArray:
    """The spans ``[begins, begins + lengths)`` of ``buf`` (ASCII: checked by the caller), in any order, as strings:
    Arrow string views into ``buf`` (a span of at most 12 bytes is held in its view), cast to one copy.
    """
    count = len(begins)
    views = np.zeros((count, 16), dtype=np.uint8)
    fields = views.view(np.int32)  # length, then four bytes of the string, buffer 0, offset
    fields[:, 0] = lengths
    fields[:, 3] = begins
    reach = np.arange(12)
    within = np.minimum(begins[:, None] + reach, max(len(buf) - 1, 0))
    short = np.flatnonzero(lengths <= 12)
    if len(short):  # held in the view itself
        views[short, 4:] = np.where(reach < lengths[short, None], buf[within[short]], 0)
    long = np.flatnonzero(lengths > 12)
    views[long, 4:8] = buf[within[long, :4]]
    array = pa.Array.from_buffers(pa.string_view(), count, [None, pa.py_buffer(views), pa.py_buffer(buf)])
    return array.cast(pa.string())


def _index_keys(buf: np.ndarray, colons: np.ndarray) -> np.ndarray:
    """For each ``colons`` position of an index of at most 8 digits without a leading zero that follows a non-digit
    (or starts ``buf``), a key that orders the indices as numbers: its digits as base-256 digits.
    """
    if len(buf) < 8:  # too short for 8-byte words: pad
        return _index_keys(np.concatenate([np.zeros(8, np.uint8), buf]), colons + 8)
    words = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))  # the 8 bytes from each position
    before = words[np.maximum(colons - 8, 0)]  # the 8 bytes before each colon, the last of them the highest
    early = np.flatnonzero(colons < 8)  # fewer than 8 bytes before it: zeros first
    before[early] = before[early] << (8 * (8 - colons[early])).astype(np.uint64)
    # A byte is a digit when it is 0x30-0x39: after xor 0x30, at most 9 (SWAR, no carry between bytes).
    before ^= np.uint64(0x3030303030303030)
    other = (((before & np.uint64(0x7F7F7F7F7F7F7F7F)) + np.uint64(0x7676767676767676)) | before) \
        & np.uint64(0x8080808080808080)  # the top bit of each byte that is no digit
    for shift in (8, 16, 32):  # and of every byte before the last of those
        other |= other >> np.uint64(shift)
    before &= ~((other >> np.uint64(7)) * np.uint64(0xFF))  # the index's digits, after zeros
    return before.byteswap()  # the first digit the most significant: the order of the numbers


def _plain_records(buf: np.ndarray, lines: pa.LargeBinaryArray, starts: np.ndarray, numbers: np.ndarray, name: str,
                   split: str, source: str) -> tuple[np.ndarray, pa.Table | None]:
    """Which of ``lines`` (starting at ``starts`` in ``buf``, numbered ``numbers``) are in stored form, and their
    records: a line matching :data:`_PLAIN_LINE` whose indices ascend and whose labels differ, so that its labels
    are its first field split at commas and its tokens the rest of it as written (None when no line is).
    """
    plain = pc.match_substring_regex(lines, _PLAIN_LINE).to_numpy(zero_copy_only=False)
    if not plain.any():
        return plain, None
    colons = np.flatnonzero(buf == 58)
    keys = _index_keys(buf, colons)
    first_colon = np.searchsorted(colons, starts)
    line_start = np.zeros(len(colons), dtype=bool)
    line_start[first_colon[first_colon < len(colons)]] = True
    unordered = colons[1:][(keys[1:] <= keys[:-1]) & ~line_start[1:]]  # an index repeated or out of order
    plain[np.searchsorted(starts, unordered, side="right") - 1] = False
    chosen = np.flatnonzero(plain)
    space = pc.find_substring(lines, " ").to_numpy()[chosen]
    colon = pc.find_substring(lines, ":").to_numpy()[chosen]
    labelled = (space >= 0) & (space < colon)
    label_texts = _spans(buf, starts[chosen][labelled], space[labelled])
    label_lists = pc.split_pattern(label_texts, ",")
    label_values = pc.list_flatten(label_lists)
    label_counts = np.zeros(len(chosen), dtype=np.int64)
    label_counts[labelled] = pc.list_value_length(label_lists).to_numpy()
    label_line = np.repeat(np.arange(len(chosen)), label_counts)
    if len(label_values):  # a label given twice: the line parser keeps it once
        codes = pc.dictionary_encode(label_values).indices.to_numpy().astype(np.int64)
        width = int(codes.max()) + 1
        pairs = np.sort(label_line * width + codes)
        twice = np.unique(pairs[1:][np.diff(pairs) == 0] // width)
        if len(twice):
            plain[chosen[twice]] = False
            kept = np.ones(len(chosen), dtype=bool)
            kept[twice] = False
            label_values = label_values.filter(pa.array(kept[label_line]))
            chosen, space, labelled, label_counts = chosen[kept], space[kept], labelled[kept], label_counts[kept]
    labels = pa.ListArray.from_arrays(pa.array(_ends(label_counts).astype(np.int32)), label_values)
    begins = starts[chosen] + np.where(labelled, space + 1, 0)
    line_ends = np.append(starts[1:], len(buf))[chosen] - 1  # before the newline
    return plain, _documents(name, split, source, numbers[chosen], labels, _spans(buf, begins, line_ends - begins))


def _documents(name: str, split: str, source: str, numbers: np.ndarray, labels: pa.ListArray,
               tokens: pa.StringArray) -> pa.Table:
    """:data:`RECORD_SCHEMA` records of documents of the file ``source`` (base name ``name``, its ``split``): their
    line ``numbers``, ``labels`` and ``tokens``.
    """
    line_numbers = pa.array(numbers.astype(np.int32))
    count = len(numbers)
    return pa.Table.from_arrays([
        pc.binary_join_element_wise(pa.scalar(name), pc.cast(line_numbers, pa.string()), ":"),
        pa.repeat(pa.scalar(split), count), labels, pa.nulls(count, pa.string()), pa.nulls(count, pa.string()), tokens,
        pa.repeat(pa.scalar(source), count), line_numbers, pa.nulls(count, pa.string()),
    ], schema=RECORD_SCHEMA)


def _lines(buf: np.ndarray) -> tuple[np.ndarray, pa.LargeBinaryArray]:
    """Where each line of ``buf`` starts (the last may lack its newline) and the lines, each with its newline."""
    size = len(buf)
    starts = np.concatenate([[0], np.flatnonzero(buf == 10) + 1]).astype(np.int64)
    if size == 0 or buf[-1] == 10:
        starts = starts[:-1]  # no line after the last newline
    return starts, pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(starts),
                                                    [None, pa.py_buffer(np.append(starts, size)), pa.py_buffer(buf)])


def _column_records(buf: np.ndarray, starts: np.ndarray, lines: pa.LargeBinaryArray, numbers: np.ndarray, name: str,
                    split: str, source: str) -> pa.Table:
    """The records of ``buf``, whole lines starting at ``starts`` (:func:`_lines`) and numbered ``numbers``, parsed
    field by field: a line matching :data:`_FAST_LINE` column-wise, every other line by the line parser.
    """
    size = len(buf)
    n = len(starts)
    ends = np.append(starts[1:], size)  # each line with its newline
    fast = pc.match_substring_regex(lines, _FAST_LINE).to_numpy(zero_copy_only=False)
    high = np.flatnonzero(buf >= 0x80)
    if len(high):  # not ASCII: left to the line parser, which reads UTF-8 (and rejects what is not)
        fast[np.searchsorted(starts, high, side="right") - 1] = False
    # A line's body ends at its first '#'; the bytes of fast bodies that are no separator make the fields.
    body_ends = ends.copy()
    hashes = np.flatnonzero(buf == 35)
    if len(hashes):
        line_of_hash = np.searchsorted(starts, hashes, side="right") - 1
        lines_with, first = np.unique(line_of_hash, return_index=True)
        body_ends[lines_with] = hashes[first]
    pieces = np.empty(2 * n, dtype=np.int64)
    pieces[0::2], pieces[1::2] = body_ends - starts, ends - body_ends
    kept = np.zeros(2 * n, dtype=bool)
    kept[0::2] = fast
    in_field = np.repeat(kept, pieces) & (buf > 32)  # on a fast line only separators and comments are below "!"
    edges = np.flatnonzero(in_field[1:] != in_field[:-1]) + 1
    edges = np.concatenate([np.zeros(int(in_field[0]), np.int64), edges, np.full(int(in_field[-1]), size)])
    field_begins, field_ends = edges[0::2], edges[1::2]
    field_line = np.searchsorted(starts, field_begins, side="right") - 1
    colons = np.flatnonzero(buf == 58)
    colons = colons[in_field[colons]]  # one per feature field (the pattern of a fast line)
    is_feature = np.zeros(len(field_begins), dtype=bool)
    is_feature[np.searchsorted(field_begins, colons, side="right") - 1] = True
    bad = np.zeros(n, dtype=bool)
    # Each byte's part: 1 an index, 2 a value, 3 the labels, 0 none; from four pieces per field: the gap before
    # it, then the index (or the labels), the colon and the value.
    flat_pieces = np.zeros(4 * len(field_begins) + 1, dtype=np.int64)  # and the bytes after the last field
    flat_part = np.zeros(4 * len(field_begins) + 1, dtype=np.uint8)
    pieces, part = flat_pieces[:-1].reshape(-1, 4), flat_part[:-1].reshape(-1, 4)
    pieces[:, 0] = field_begins - np.concatenate([[0], field_ends[:-1]])
    pieces[:, 1] = field_ends - field_begins
    pieces[is_feature, 1] = colons - field_begins[is_feature]
    pieces[is_feature, 2] = 1
    pieces[is_feature, 3] = field_ends[is_feature] - colons - 1
    flat_pieces[-1] = size - (field_ends[-1] if len(field_ends) else 0)
    part[:, 1] = np.where(is_feature, 1, 3)
    part[:, 3] = 2
    parts = np.repeat(flat_part, flat_pieces)

    # Labels: the first field of a line that starts with it, when it has no colon.
    is_labels = ~is_feature & (field_begins == starts[field_line])
    label_lists = pc.split_pattern(_strings(buf[parts == 3], _ends(pieces[~is_feature, 1])), ",")
    label_values = pc.list_flatten(label_lists)
    label_line = field_line[is_labels][pc.list_parent_indices(label_lists).to_numpy()]
    if len(label_values):
        codes = pc.dictionary_encode(label_values).indices.to_numpy().astype(np.int64)
        width = int(codes.max()) + 1
        keys = np.sort(label_line * width + codes)
        bad[keys[1:][np.diff(keys) == 0] // width] = True  # a label given twice: the line parser keeps it once

    # Features: index and value column-wise.
    index_texts = _strings(buf[parts == 1], _ends(pieces[is_feature, 1]))
    value_lengths = pieces[is_feature, 3]
    value_texts = _strings(buf[parts == 2], _ends(value_lengths))
    indices = index_texts.cast(pa.int64()).to_numpy()
    floats = value_texts.cast(pa.float64()).to_numpy()
    feature_line = field_line[is_feature]
    feature_begins, feature_ends = field_begins[is_feature], field_ends[is_feature]
    canonical = _canonical(value_texts, value_lengths - (buf[colons + 1] == 45))
    bad[feature_line[(indices < 1) | (indices > MAX_INDEX) | ~np.isfinite(floats)]] = True
    same_line = feature_line[1:] == feature_line[:-1]
    step = np.diff(indices)
    bad[feature_line[1:][same_line & (step == 0)]] = True  # repeated (next to each other): the parser says which
    # A line whose features are in order, single-spaced, without leading zeros and with canonical values has
    # its tokens as written: the bytes from its first feature to its last.
    rewritten = np.zeros(n, dtype=bool)
    rewritten[feature_line[~canonical | (buf[feature_begins] == 48)]] = True
    rewritten[feature_line[1:][same_line & ((step < 0) | (feature_begins[1:] - feature_ends[:-1] != 1)
                                            | (buf[feature_ends[:-1]] != 32))]] = True
    if (same_line & (step < 0)).any():  # indices out of order: sorted per line, then checked for repeats
        order = np.lexsort((indices, feature_line))
        feature_line, indices, floats, canonical = feature_line[order], indices[order], floats[order], canonical[order]
        value_texts = value_texts.take(pa.array(order))
        bad[feature_line[1:][(feature_line[1:] == feature_line[:-1]) & (np.diff(indices) == 0)]] = True

    # The documents of the good fast lines; blank ones (no field) are skipped.
    good = fast & ~bad
    documents = np.flatnonzero(good & (np.bincount(field_line, minlength=n) > 0))
    verbatim = ~rewritten[documents]
    as_written = documents[verbatim]
    first, last = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)  # a line's features: [first, last)
    written_line = field_line[is_feature]  # in the order written
    if len(written_line):
        group = np.flatnonzero(np.concatenate([[True], written_line[1:] != written_line[:-1]]))
        first[written_line[group]] = feature_begins[group]
        last[written_line[group]] = feature_ends[np.append(group[1:], len(written_line)) - 1]
    tokens_written = _tokens_as_written(buf, first[as_written], last[as_written])
    others = documents[~verbatim]
    keep = np.zeros(n, dtype=bool)
    keep[others] = True
    keep = keep[feature_line]
    tokens = pc.binary_join_element_wise(pc.cast(pa.array(indices[keep]), pa.string()),
                                         _value_texts(value_texts.filter(pa.array(keep)), floats[keep],
                                                      canonical[keep]), ":")
    joined = pc.binary_join(pa.ListArray.from_arrays(
        pa.array(_ends(np.bincount(feature_line[keep], minlength=n)[others]).astype(np.int32)), tokens), " ")
    if len(others):
        joined = pa.concat_arrays([tokens_written, joined.cast(pa.string())]).take(
            pa.array(np.argsort(np.concatenate([np.flatnonzero(verbatim), np.flatnonzero(~verbatim)]))))
    else:
        joined = tokens_written
    label_keep = good[label_line]
    labels = pa.ListArray.from_arrays(
        pa.array(_ends(np.bincount(label_line[label_keep], minlength=n)[documents]).astype(np.int32)),
        label_values.filter(pa.array(label_keep)))
    fast_table = _documents(name, split, source, numbers[documents], labels, joined)

    # The other lines, one by one.
    records = [record for i in np.flatnonzero(~good).tolist()
               if (record := _parse_raw(bytes(buf[starts[i]:ends[i]]), source, name, split, int(numbers[i])))]
    if records:
        fast_table = pa.concat_tables([fast_table, pa.Table.from_batches([record_batch(records)])])
        fast_table = fast_table.take(pc.sort_indices(fast_table.column("line")))
    return fast_table


def _parse_raw(raw: bytes, source: str, name: str, split: str, number: int) -> Document | Reject | None:
    """A line as :func:`parse_libsvm` reads it: a Document, a Reject, or None for a blank line."""
    text = decoded_line(raw, source, number)
    if isinstance(text, Reject):
        return text
    text = text.split("#", 1)[0]
    if not text.strip():
        return None
    parsed = _parse_line(text)
    if isinstance(parsed, str):
        return Reject(source, number, None, parsed)
    labels, tokens = parsed
    return Document(f"{name}:{number}", split, labels, None, tokens, source, number)


# --- Byte ranges of a large plain file (sparktc.corpora.line_ranges) --------------------------------------------


def read_range(file: pa.NativeFile, size: int, source: str, start: int, end: int,
               newlines_before: int) -> Iterator[pa.RecordBatch]:
    """The records of the lines of a plain LIBSVM file (``size`` bytes, opened for random access) that start in
    ``[start, end)``, ``newlines_before`` being the newlines in ``[0, start)``: with the ranges of
    :func:`~sparktc.corpora.line_ranges.byte_ranges`, the records of :func:`read_libsvm` over the whole file, split
    between the ranges.
    """
    try:
        split_of(source)
    except ValueError:
        if start == 0:
            yield record_batch(list(parse_libsvm([], source)))
        return
    data, first_line = range_lines(file, size, start, end, newlines_before)
    yield from parse_lines(data, source, first_line)


#: Multi-label LIBSVM as ``corpus.format = "libsvm"``: train.svm and test.svm (plain, .gz or .bz2), a large plain file
#: parsed in byte ranges; its records are given vectors, carrying their labels.
FORMAT = CorpusFormat(
    name="libsvm",
    title="LIBSVM",
    assembly=LABELLED,
    names=CorpusNames(r"(train|test)\.svm(\.gz|\.bz2)?", r"(train|test)\.svm.*", "LIBSVM files (train.svm, test.svm)"),
    hint="set corpus.path to the directory of train.svm and test.svm (plain, .gz or .bz2)",
    reader=read_libsvm,
    document_files=lambda test_parts: (TRAIN_FILE, TEST_FILE),
    compressions=(".gz", ".bz2"),
    ranges=ByteRanges(file_ranges, count_newlines, read_range),
    tokenized=True,
    vectors=True,
)
