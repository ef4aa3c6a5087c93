"""Bytes of a corpus file to lines, gunzipping ``.gz`` files as a stream."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator

# What a damaged gzip stream raises part-way through iteration.
CORRUPT_GZIP_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile)


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
