"""The history table: one Parquet file per run under ``[history] path``, readable by Spark and pandas.

Writers never conflict: a run writes its record to a hidden name (``_``-prefixed, which Spark, pyarrow and
pandas skip when they read the directory) and then renames it to ``run-<run id>.parquet``, a name no other run
has (the run id holds the host and the process id). A local rename is atomic; on an object store the rename is
a copy, but the hidden name is still never read, so a reader sees a record whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from sparktc.errors import InputError
from sparktc.filesystem import arrow_filesystem
from sparktc.tracking.record import SCHEMA, RunRecord


class HistoryError(InputError):
    """A history directory that cannot be read or written."""


def part_name(run_id: str) -> str:
    """The file name of a run's record."""
    return f"run-{run_id}.parquet"


def append(path: str, record: RunRecord) -> str:
    """Add ``record`` to the history at ``path`` (created when missing); the file written."""
    filesystem, root = arrow_filesystem(path)
    name = part_name(record.run_id)
    target, hidden = f"{root.rstrip('/')}/{name}", f"{root.rstrip('/')}/_{name}.writing"
    try:
        filesystem.create_dir(root, recursive=True)
        if filesystem.get_file_info(target).type != pafs.FileType.NotFound:
            raise HistoryError(f"the history {path} already holds a record of run {record.run_id} ({target}); "
                               "records are never replaced: give another [history] path")
        pq.write_table(record.table(), hidden, filesystem=filesystem)
        filesystem.move(hidden, target)
    except OSError as error:
        raise HistoryError(f"cannot write the run's record into the history {path}: {error}") from None
    return target


@dataclass(frozen=True)
class Contents:
    """What :func:`scan` found in a history: the records (a table of :data:`SCHEMA`, by start time), the number of
    files they were read from, and the files skipped as not run records, each with why.
    """

    table: pa.Table
    files: int = 0
    skipped: tuple[tuple[str, str], ...] = ()


def exists(path: str) -> bool:
    """Whether the history directory ``path`` exists (a file there is not one: :func:`scan` names it)."""
    filesystem, root = arrow_filesystem(path)
    return filesystem.get_file_info(root).type != pafs.FileType.NotFound


def scan(path: str, strict: bool = False) -> Contents:
    """Every record in the history at ``path`` (none when there is no such directory), each file checked against the
    record's schema first. A file is a run record when it has a ``run_id`` column; every other file (another Parquet
    table, a file that is not Parquet) is skipped, or refused with ``strict``. A run record must have every column
    of :data:`SCHEMA` with its type (a timestamp in any unit) and a run id; one that has not is refused, naming the
    file and the column: it is not a record sparktc wrote, and reading it would show a failed run that never ran.
    A file that cannot be read at all (permissions, the network) is a :class:`HistoryError` too.
    """
    filesystem, root = arrow_filesystem(path)
    if filesystem.get_file_info(root).type == pafs.FileType.NotFound:
        return Contents(SCHEMA.empty_table())
    try:
        # The listing Spark and pandas read: names starting with _ or . (a record being written) are left out.
        files = ds.dataset(root, schema=SCHEMA, format="parquet", filesystem=filesystem).files
        records, skipped = [], []
        for file in sorted(files):
            why = _not_a_record(file, filesystem)
            if why is None:
                records.append(file)
            elif strict:
                raise HistoryError(f"the history {path} holds {file}, which is not a run record ({why}): move it "
                                   "out of the history")
            else:
                skipped.append((file, why))
        table = ds.dataset(records, schema=SCHEMA, format="parquet", filesystem=filesystem).to_table()
    except (OSError, pa.ArrowInvalid) as error:
        raise HistoryError(f"cannot read the history {path}: {error}") from None
    if not all(table["run_id"].to_pylist()):  # None or ""
        file = next(file for file in records
                    if not all(pq.read_table(file, columns=["run_id"], filesystem=filesystem)["run_id"].to_pylist()))
        raise HistoryError(f"{file}: a run record without a run id; it is not a record sparktc wrote: move it out of "
                           "the history")
    return Contents(table.sort_by([("started", "ascending"), ("run_id", "ascending")]), len(records), tuple(skipped))


def _not_a_record(file: str, filesystem: pafs.FileSystem) -> str | None:
    """Why ``file`` is not a run record (it is no Parquet table, or has no ``run_id`` column), or None when it is
    one; :class:`HistoryError` for a record whose columns are not the record's.
    """
    try:
        found = pq.read_schema(file, filesystem=filesystem)
    except pa.ArrowInvalid as error:
        return f"not a Parquet file: {error}"
    if "run_id" not in found.names:
        return f"no run_id column; its columns: {_first_names(found.names) or 'none'}"
    for expected in SCHEMA:
        if expected.name not in found.names:
            continue
        actual = found.field(expected.name).type
        if not (actual.equals(expected.type) or (pa.types.is_timestamp(actual) and pa.types.is_timestamp(expected.type)
                                                 and actual.tz == expected.type.tz)):
            raise HistoryError(f"{file}: column {expected.name} is {actual}, a run record's is {expected.type}; it is "
                               "not a record sparktc wrote: move it out of the history")
    missing = [name for name in SCHEMA.names if name not in found.names]
    if missing:
        raise HistoryError(f"{file}: a run record without the column{'s' * (len(missing) > 1)} {_first_names(missing)} "
                           f"({len(missing)} of the record's {len(SCHEMA)}); it is not a record sparktc wrote: move "
                           "it out of the history")
    return None


def _first_names(names: list[str]) -> str:
    """The first five of ``names``, comma-separated, with ", ..." when there are more."""
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")


def read(path: str) -> pa.Table:
    """Every record in the history at ``path`` (an empty table of :data:`SCHEMA` when there is none), by start time;
    a file that is not a run record is refused (:func:`scan` with ``strict``).
    """
    return scan(path, strict=True).table
