"""Byte ranges of a large plain file of lines, each parsed by one ingest task
(:class:`~sparktc.corpora.formats.ByteRanges`), as the formats read in ranges (LIBSVM, LibMultiLabel's text
format, LYRL2004's token files) share them.

A range ``[start, end)`` owns the records that start in it: it skips the record under way at ``start`` (the
previous range's) and finishes its own last record past ``end``. A record starts at a line (LIBSVM's, one per
line) or at a line that begins with a marker (LYRL2004's ``.I``): the ``boundary`` of :func:`range_lines`. A line's
number is 1 + the newlines before it, so a range's first line is numbered from the newlines before its start,
which its task counts (:func:`count_newlines`); the ranges' records are then those of the whole file, with its line
numbers.
"""

from __future__ import annotations

import pyarrow as pa

from sparktc.corpora.files import compression_of

__all__ = ["MIN_RANGE_BYTES", "RANGE_BYTES", "byte_ranges", "count_newlines", "file_ranges", "range_lines",
           "range_share"]

#: A plain file larger than a task's share is read in byte ranges of about that share, one task each
#: (:func:`file_ranges`); the share is the corpus's bytes over the tasks (:func:`range_share`), at most this...
RANGE_BYTES = 64 << 20
#: ...and at least this: a smaller range would cost more in its task's start than its parsing saves (Spark's own
#: spark.sql.files.openCostInBytes).
MIN_RANGE_BYTES = 4 << 20
_EXTEND = 1 << 20  # bytes read at a time to find where the next record starts
_COUNT_BYTES = 16 << 20


def byte_ranges(size: int, range_bytes: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of about ``range_bytes`` covering a file of ``size`` bytes (one for a small file)."""
    count = max(1, -(-size // range_bytes))
    bounds = [size * k // count for k in range(count + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def range_share(total_bytes: int, tasks: int) -> int:
    """A task's share of a corpus of ``total_bytes`` over ``tasks`` tasks (the session's cores times
    :data:`~sparktc.runtime.session.TASKS_PER_CORE`), as Spark sizes its file splits: the bytes per task, within
    [:data:`MIN_RANGE_BYTES`, :data:`RANGE_BYTES`] (at most :data:`RANGE_BYTES` when that is set below the minimum),
    so the ranges are of about equal bytes and, for a corpus of over ``tasks`` minimum ranges, at least ``tasks``.
    """
    return min(RANGE_BYTES, max(MIN_RANGE_BYTES, -(-total_bytes // max(tasks, 1))))


def file_ranges(source: str, size: int, share: int | None = None) -> list[tuple[int, int]]:
    """The byte ranges ingest parses the file ``source`` of ``size`` bytes in, one task each: those of
    :func:`byte_ranges` for a plain file of over ``share`` bytes (:data:`RANGE_BYTES` when not given); none for a
    smaller one or a compressed one, which cannot be split (the whole file in one task, by the format's reader).
    """
    share = RANGE_BYTES if share is None else share
    if compression_of(source) is not None or size <= share:
        return []
    return byte_ranges(size, share)


def count_newlines(file: pa.NativeFile, start: int, end: int) -> int:
    """The newlines in bytes ``[start, end)`` of a file opened for random access, read :data:`_COUNT_BYTES` at a
    time (a range's task counts all the bytes before it: 1.2 GB/s).
    """
    return sum(file.read_at(min(_COUNT_BYTES, end - at), at).count(b"\n") for at in range(start, end, _COUNT_BYTES))


def range_lines(file: pa.NativeFile, size: int, start: int, end: int, newlines_before: int,
                boundary: bytes = b"\n") -> tuple[bytes, int]:
    r"""The whole records (lines with their endings) of a plain file (``size`` bytes, opened for random access) that
    start in ``[start, end)``, ``newlines_before`` being the newlines in ``[0, start)``; and the line number of the
    first of them (no bytes when no record starts in the range). A record starts at the file's start and after each
    ``boundary`` (a newline, then what begins a record's first line: ``b"\n.I "`` for LYRL2004), so consecutive
    ranges hold consecutive records, each once.
    """
    first, stop = _record_start(file, size, start, boundary), _record_start(file, size, end, boundary)
    if first >= stop:
        return b"", newlines_before + 1
    between = file.read_at(first - start, start).count(b"\n") if first > start else 0
    return file.read_at(stop - first, first), newlines_before + between + 1


def _record_start(file: pa.NativeFile, size: int, position: int, boundary: bytes) -> int:
    """The offset of the first record starting at or after ``position``: 0 at the file's start, else just after
    the first ``boundary`` that starts at or after ``position - 1``; ``size`` when there is none.
    """
    if position <= 0:
        return 0
    at = position - 1
    while at < size:
        chunk = file.read_at(min(_EXTEND, size - at), at)
        found = chunk.find(boundary)
        if found >= 0:
            return at + found + 1
        if at + len(chunk) >= size:
            break
        at += len(chunk) - len(boundary) + 1  # a boundary across the chunk's end is found in the next one
    return size
