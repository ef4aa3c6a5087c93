"""Bytes of a corpus file to lines (decompressing ``.gz`` and ``.bz2`` files as a stream), and to records
through a line parser.
"""

from __future__ import annotations

import bz2
import gzip
import io
import zlib
from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa

from sparktc.corpora.records import Document, Reject, record_batches

#: The compressed files read_lines decompresses: file name suffix -> the compression's name in messages.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2"}
# What a damaged gzip or bz2 stream raises part-way through iteration (bz2: OSError "Invalid data stream",
# EOFError when cut short).
CORRUPT_GZIP_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile)

#: A reader of one file's lines: (lines, source) -> records.
Parser = Callable[[Iterable[bytes], str], Iterator[Document | Reject]]
#: A reader of one whole file: (content, source) -> Arrow batches of ``RECORD_SCHEMA``.
Reader = Callable[[bytes, str], Iterator[pa.RecordBatch]]


def compression_of(source: str) -> str | None:
    """The compression of ``source`` by its name (``"gzip"`` for ``.gz``, ``"bz2"`` for ``.bz2``), None for none."""
    return next((name for suffix, name in COMPRESSIONS.items() if source.endswith(suffix)), None)


def base_name(source: str) -> str:
    """The file name of ``source`` without directory and compression suffix: ``d/train.svm.bz2`` -> ``train.svm``."""
    name = source.rstrip("/").rsplit("/", 1)[-1]
    suffix = next((suffix for suffix in COMPRESSIONS if name.endswith(suffix)), "")
    return name[: len(name) - len(suffix)]


def read_lines(data: bytes, source: str) -> Iterator[bytes]:
    """Yield the lines of ``data`` (with line endings), decompressing when ``source`` ends in ``.gz`` or ``.bz2``.

    A corrupt compressed stream raises one of ``CORRUPT_GZIP_ERRORS`` at the point it breaks, after
    the lines before it were yielded.
    """
    compression = compression_of(source)
    if compression == "gzip":
        stream: io.BufferedIOBase = gzip.GzipFile(fileobj=io.BytesIO(data))  # type: ignore[assignment]
    elif compression == "bz2":
        stream = bz2.BZ2File(io.BytesIO(data))
    else:
        stream = io.BytesIO(data)
    with stream:
        yield from stream


GUNZIP_INPUT_BYTES = 1 << 20  # compressed bytes inflated at a time: what a member's end leaves over is copied


def gunzip(data: bytes) -> bytearray:
    """The contents of every gzip member of ``data``, as :func:`gzip.decompress` gives them (zero bytes between
    members allowed), without its copy of the rest of the input per member (RCV1's synthetic token files
    have dozens of members: 0.93 -> 0.57 CPU-s for 164 MB), appended into one buffer: joining the decompressed
    chunks held the output twice (a 164 MB token file: 315 MiB of peak growth, 160 appended). Damage raises one of
    ``CORRUPT_GZIP_ERRORS``: zlib checks each member's header, CRC-32 and length.
    """
    out = bytearray()
    for chunk in gunzip_chunks(data):
        out += chunk
        del chunk  # before the next is inflated: two chunks held at once would be 3 MiB more
    return out


def gunzip_chunks(data: bytes) -> Iterator[bytes]:
    """:func:`gunzip`'s contents as zlib inflates them, chunk by chunk, for a task that streams them to a file
    (ingest's inflating tasks) rather than holding them; damage raises one of ``CORRUPT_GZIP_ERRORS``.
    """
    view, position = memoryview(data), 0
    while position < len(data):
        if data[position] == 0:  # zero padding after a member, which gzip.decompress skips (rare: copying is fine)
            position = len(data) - len(data[position:].lstrip(b"\x00"))
            continue
        member = zlib.decompressobj(wbits=31)
        while not member.eof:
            if position >= len(data):
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
            chunk = view[position:position + GUNZIP_INPUT_BYTES]
            position += len(chunk)
            yield member.decompress(chunk)
        position -= len(member.unused_data)


def corrupt_gzip(source: str, error: Exception, lines_read: int, what: str = "record") -> Reject:
    """The Reject (line 0: the file, not one of its records) for a compressed (gzip or bz2) stream that broke
    after ``lines_read`` lines; the record still open at the break is lost with everything after it.
    """
    if lines_read:
        where = f"after line {lines_read}; the {what} being read there and every {what} after it are lost"
    else:
        where = "before its first line; nothing in the file could be read"
    compression = compression_of(source) or "compressed"
    return Reject(source, 0, None, f"corrupt {compression} stream ({error}) {where}: re-fetch the file")


def read_records(parser: Parser, data: bytes, source: str, what: str = "record") -> Iterator[Document | Reject]:
    """Run a line parser over a file's bytes; a corrupt gzip or bz2 stream ends the file with a Reject (line 0)
    after the records read before the break, naming the last line read.
    """
    lines_read = 0

    def counted() -> Iterator[bytes]:
        nonlocal lines_read
        for line in read_lines(data, source):
            lines_read += 1
            yield line

    try:
        yield from parser(counted(), source)
    except CORRUPT_GZIP_ERRORS as error:
        yield corrupt_gzip(source, error, lines_read, what)


def line_reader(parser: Parser) -> Reader:
    """A whole-file reader from a line parser (records to Arrow batches)."""
    return lambda content, source: record_batches(read_records(parser, content, source))
