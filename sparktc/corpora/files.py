"""Bytes of a corpus file to lines (gunzipping ``.gz`` files as a stream), and to records through a line parser."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable, Iterable, Iterator

from sparktc.corpora.records import Document, Reject

# What a damaged gzip stream raises part-way through iteration.
CORRUPT_GZIP_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile)

#: A reader of one file's lines: (lines, source) -> records.
Parser = Callable[[Iterable[bytes], str], Iterator[Document | Reject]]


def read_lines(data: bytes, source: str) -> Iterator[bytes]:
    """Yield the lines of ``data`` (with line endings), decompressing when ``source`` ends in ``.gz``.

    A corrupt gzip stream raises one of ``CORRUPT_GZIP_ERRORS`` at the point it breaks, after
    the lines before it were yielded.
    """
    if source.endswith(".gz"):
        stream: io.BufferedIOBase = gzip.GzipFile(fileobj=io.BytesIO(data))  # type: ignore[assignment]
    else:
        stream = io.BytesIO(data)
    with stream:
        yield from stream


def corrupt_gzip(source: str, error: Exception, lines_read: int, what: str = "record") -> Reject:
    """The Reject (line 0: the file, not one of its records) for a gzip stream that broke after ``lines_read``
    lines; the record still open at the break is lost with everything after it."""
    if lines_read:
        where = f"after line {lines_read}; the {what} being read there and every {what} after it are lost"
    else:
        where = "before its first line; nothing in the file could be read"
    return Reject(source, 0, None, f"corrupt gzip stream ({error}) {where}: re-fetch the file")


def read_records(parser: Parser, data: bytes, source: str, what: str = "record") -> Iterator[Document | Reject]:
    """Run a line parser over a file's bytes; a corrupt gzip stream ends the file with a Reject (line 0)
    after the records read before the break, naming the last line read."""
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
