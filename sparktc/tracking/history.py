"""The history table: one Parquet file per run under ``[history] path``, readable by Spark and pandas.

Writers never conflict: a run writes its record to a hidden name (``_``-prefixed, which Spark, pyarrow and
pandas skip when they read the directory) and then renames it to ``run-<run id>.parquet``, a name no other run
has (the run id holds the host and the process id). A local rename is atomic; on an object store the rename is
a copy, but the hidden name is still never read, so a reader sees a record whole or not at all.
"""

from __future__ import annotations

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


def read(path: str) -> pa.Table:
    """Every record in the history at ``path`` (an empty table of :data:`SCHEMA` when there is none), by start time."""
    filesystem, root = arrow_filesystem(path)
    if filesystem.get_file_info(root).type == pafs.FileType.NotFound:
        return SCHEMA.empty_table()
    try:
        table = ds.dataset(root, schema=SCHEMA, format="parquet", filesystem=filesystem).to_table()
    except (OSError, pa.ArrowInvalid) as error:
        raise HistoryError(f"cannot read the history {path}: {error}; every file in it must be a run record "
                           f"sparktc wrote (run-*.parquet)") from None
    return table.sort_by([("started", "ascending"), ("run_id", "ascending")])
