"""Byte ranges of a large plain file of lines, each parsed by one ingest task
(:class:`~sparktc.corpora.formats.ByteRanges`), as the line formats read in ranges (LIBSVM, LibMultiLabel's text
format) share them.

A range ``[start, end)`` owns the lines that start in it: it skips the line under way at ``start`` (the previous
range's) and finishes its own last line past ``end``. A line's number is 1 + the newlines before it, so a range's
first line is numbered from the newlines in the ranges before it, counted by a first light pass
(:func:`count_newlines`); the ranges' records are then those of the whole file, with its line numbers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sparktc.corpora.files import compression_of

__all__ = ["RANGE_BYTES", "byte_ranges", "count_newlines", "file_ranges", "range_lines"]

#: A plain file larger than this is read in byte ranges of about this size, one task each (:func:`file_ranges`).
RANGE_BYTES = 64 << 20
_EXTEND = 1 << 20  # bytes read at a time past a range's end to finish its last line


def byte_ranges(size: int, range_bytes: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of about ``range_bytes`` covering a file of ``size`` bytes (one for a small file)."""
    count = max(1, -(-size // range_bytes))
    bounds = [size * k // count for k in range(count + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def file_ranges(source: str, size: int) -> list[tuple[int, int]]:
    """The byte ranges ingest parses the file ``source`` of ``size`` bytes in, one task each: those of
    :func:`byte_ranges` for a plain file of over :data:`RANGE_BYTES`; none for a smaller one or a compressed one,
    which cannot be split (the whole file in one task, by the format's reader).
    """
    if compression_of(source) is not None or size <= RANGE_BYTES:
        return []
    return byte_ranges(size, RANGE_BYTES)


def count_newlines(file: pa.NativeFile, start: int, end: int) -> int:
    """The newlines in bytes ``[start, end)`` of a file opened for random access."""
    return int(np.count_nonzero(np.frombuffer(file.read_at(end - start, start), dtype=np.uint8) == 10))


def range_lines(file: pa.NativeFile, size: int, start: int, end: int, newlines_before: int) -> tuple[bytes, int]:
    """The whole lines (with their endings) of a plain file (``size`` bytes, opened for random access) that start in
    ``[start, end)``, ``newlines_before`` being the newlines in ``[0, start)``; and the line number of the first of
    them (no bytes when the range lies inside a line that an earlier range owns).
    """
    begin = max(start - 1, 0)
    data = file.read_at(end - begin, begin)
    first_line = newlines_before + 1
    if start:
        newline = data.find(b"\n")
        if newline < 0:
            return b"", first_line
        first_line += 1 if newline > 0 else 0  # the newline ends a line begun before start: one more before ours
        data = data[newline + 1:]
    pieces = [data]
    position = end
    while data and not pieces[-1].endswith(b"\n") and position < size:
        more = file.read_at(min(_EXTEND, size - position), position)
        newline = more.find(b"\n")
        pieces.append(more if newline < 0 else more[: newline + 1])
        position += len(more)
    return b"".join(pieces), first_line
