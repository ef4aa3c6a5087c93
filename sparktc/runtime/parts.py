"""Work done part by part on the executors, with pyarrow reading and writing the Parquet files.

For the stages whose work is one pass over a big table (parsing the corpus, weighting, scoring),
the rows never need to be Spark rows: Spark schedules one task per part and retries a failed one,
and each task reads its input and writes its output with pyarrow, on any file system pyarrow
supports (:func:`sparktc.filesystem.arrow_filesystem`). That skips the Arrow -> row -> Parquet
conversions of the JVM, which cost as much CPU as the work itself.

A task writes its part under a hidden name of its own and renames it into place, so a failed or
repeated attempt never leaves a partial or doubled part: part names depend only on the part's
index, and a retried task replaces the first attempt's file with identical content. What a task
returns (counts, small per-category sums) must be small: it is collected on the driver. With it comes the
SHA-256 of each file the task wrote (:mod:`sparktc.runtime.written`), hashed where the bytes are, in parallel, so
that the driver, whose manifests record every output file's digest, reads none of the table to hash it.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.serializers import CPickleSerializer
from pyspark.sql import SparkSession
from scipy import sparse

from sparktc.filesystem import arrow_filesystem
from sparktc.runtime import written
from sparktc.runtime.task_memory import python_task, work_name

__all__ = ["BATCH_ROWS", "ROWS_PER_FILE", "ROW_GROUP_ROWS", "PartWriter", "add_counts", "map_parts", "parquet_files",
           "read_batches", "remove_unfinished", "rows_and_list_lengths", "sum_over_files", "write_parts"]

Unit = TypeVar("Unit")
Result = TypeVar("Result")

#: Rows per Parquet file a task writes (a later stage's unit of parallelism) and per row group
#: (the unit a reader decodes at once); chosen by measurement on the 804,414-document corpus
#: (docs/benchmarks/rcv1-scale.md): big enough that per-file costs vanish, small enough to spread over cores.
ROWS_PER_FILE = 100_000
ROW_GROUP_ROWS = 25_000
#: Measured on the 804,414-document tables (docs/benchmarks/rcv1-scale.md): against Spark's default snappy, zstd
#: (level 1) writes ``documents`` 30% and ``vectors`` 13% smaller at the same CPU, and reads them back in half the CPU.
COMPRESSION = "zstd"
#: Floating-point columns (vectors' ``values``, predictions' ``top_scores``) are written plain, without a dictionary
#: or min/max statistics: their values seldom repeat, so the dictionary is built and dropped for nothing, and no
#: reader prunes by them (row groups are pruned by ``split``; train counts nonzeros from ``indices``' null counts).
#: On 200,000-document tables, against both on every column: vectors' writing 0.630 -> 0.528 CPU-s (median of 7),
#: 44.9 -> 42.6 MB; predictions' 0.122 -> 0.086, 5.91 -> 4.86 MB; reading them back the same (2026-12-04).
PLAIN_TYPES = (pa.types.is_floating,)
BATCH_ROWS = 65_536  # rows a reader decodes at a time unless it says otherwise (pyarrow's own default)
#: How a task's result travels back to the driver: PySpark's own serializer, as ``RDD.collect`` sends results (never a
#: file: sparktc reads its files as data only).
_RESULTS = CPickleSerializer()
_UNFINISHED = re.compile(r"\.part-[0-9]+-[0-9]+\.[0-9a-f]{32}\.tmp")


def map_parts(spark: SparkSession, units: Sequence[Unit], work: Callable[[int, Unit], Result],
              outputs: Sequence[str] = (), errors: tuple[type[Exception], ...] = ()) -> list[Result]:
    """``work(index, unit)`` for every unit, one Spark task each; the results in the units' order.

    A DataFrame job, as a Spark Connect session runs it too: a range of the units' indexes, one per partition,
    mapped by a Python function (``mapInArrow``) that carries ``units`` and ``work`` in its closure (small: paths,
    byte ranges, category codes; what is big is :class:`sparktc.runtime.shared.Shared`) and gives back each result
    pickled. ``outputs`` are the directories the tasks write parts into: what failed attempts left unfinished
    there is removed once every task has succeeded. A task that raises one of ``errors`` (the user's input is at
    fault, the message says what to do) fails the job with that error raised again here, its message as the task
    gave it.
    """
    units = list(units)
    results = []
    for row in _collect(_mapped(spark, units, work), errors) if units else []:
        result, files = _RESULTS.loads(row[0])
        written.merge(files)
        results.append(result)
    for directory in outputs:
        remove_unfinished(directory)
    return results


def _mapped(spark: SparkSession, units: list, work: Callable[[int, Any], Any]) -> Any:
    """The DataFrame of ``work``'s pickled results (column ``result``), one row per unit in the units' order, each with
    the files its task wrote (``(result, files)``: :func:`sparktc.runtime.written.drained`).
    """
    name = work_name(work)

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with python_task(name):
            for batch in batches:
                done = []
                for index in batch.column(0).to_pylist():
                    written.drained()  # a worker runs many tasks: an earlier (or failed) one's files are not this one's
                    result = work(index, units[index])
                    done.append(_RESULTS.dumps((result, written.drained())))
                yield pa.record_batch([pa.array(done, pa.binary())], names=["result"])

    return spark.range(0, len(units), 1, len(units)).mapInArrow(task, "result binary")


def _collect(frame: Any, errors: tuple[type[Exception], ...]) -> list:
    """``frame``'s rows; a task's user error (one of ``errors``) raised again as that error."""
    try:
        return frame.collect()
    except Exception as failure:
        for kind in errors:
            found = re.search(rf"\b{kind.__name__}: ([^\n]*)", str(failure))
            if found:
                raise kind(found.group(1).strip()) from None
        raise


def remove_unfinished(directory: str) -> None:
    """Delete the parts that attempts began under ``directory`` (recursively) and never finished."""
    filesystem, root = arrow_filesystem(directory)
    if filesystem.get_file_info(root).type != pafs.FileType.Directory:
        return
    for info in filesystem.get_file_info(pafs.FileSelector(root, recursive=True)):
        if info.type == pafs.FileType.File and _UNFINISHED.fullmatch(info.base_name):
            filesystem.delete_file(info.path)


def parquet_files(path: str) -> list[str]:
    """The Parquet data files of a table (recursively, partition directories included), sorted;
    hidden files (``_SUCCESS``, ``.crc``, a task's unfinished part) are not data.
    """
    filesystem, root = arrow_filesystem(path)
    infos = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
    hidden = lambda info: any(part.startswith(("_", ".")) for part in info.path[len(root):].split("/"))  # noqa: E731
    return sorted(info.path for info in infos
                  if info.type == pafs.FileType.File and info.path.endswith(".parquet") and not hidden(info))


def read_batches(path: str, columns: Sequence[str], batch_size: int = BATCH_ROWS,
                 where: tuple[str, str] | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of the Parquet file at ``path`` (on any file system pyarrow reaches), ``columns`` only, as
    record batches of ``batch_size`` rows; the file stays open until they have all been read. With ``where``,
    a (column, value) pair, only the row groups whose statistics admit ``column == value`` are read (the
    caller still filters their rows): a file of test documents is not decoded to find no training one.
    """
    filesystem, file = arrow_filesystem(path)
    with filesystem.open_input_file(file) as source:
        parquet = pq.ParquetFile(source)
        groups = None if where is None else _row_groups_admitting(parquet.metadata, *where)
        if groups != []:
            yield from parquet.iter_batches(batch_size, row_groups=groups, columns=list(columns))


def _row_groups_admitting(metadata: pq.FileMetaData, column: str, value: str) -> list[int]:
    """The row groups of a file whose min/max statistics of ``column`` admit ``value`` (a group without them: yes)."""
    position = metadata.schema.to_arrow_schema().get_field_index(column)
    groups = []
    for group in range(metadata.num_row_groups):
        statistics = metadata.row_group(group).column(position).statistics
        if statistics is None or not statistics.has_min_max or statistics.min <= value <= statistics.max:
            groups.append(group)
    return groups


def write_parts(batches: Iterable[pa.RecordBatch], schema: pa.Schema, directory: str, index: int,
                rows_per_file: int = ROWS_PER_FILE, row_group_rows: int = ROW_GROUP_ROWS) -> int:
    """Write ``batches`` as ``directory/part-<index>-<n>.parquet`` files (at least one, so an empty part
    still carries the schema); the number of rows written.
    """
    with PartWriter(schema, directory, index, rows_per_file, row_group_rows, empty_file=True) as writer:
        for batch in batches:
            writer.write(batch)
    return writer.rows


class PartWriter:
    """A task's part of a table: ``directory/part-<index>-<n>.parquet`` files of at most ``rows_per_file``
    rows in row groups of ``row_group_rows``, each written under a hidden name and renamed into place
    when complete. No file when nothing is written, unless ``empty_file``.
    """

    def __init__(self, schema: pa.Schema, directory: str, index: int, rows_per_file: int = ROWS_PER_FILE,
                 row_group_rows: int = ROW_GROUP_ROWS, empty_file: bool = False):
        self.schema, self.index, self.empty_file = schema, index, empty_file
        self.filesystem, self.root = arrow_filesystem(directory)
        self.rows_per_file, self.row_group_rows = rows_per_file, row_group_rows
        self.attempt = uuid.uuid4().hex
        self.rows = 0  # written so far
        self._files = 0
        self._buffer: list[pa.RecordBatch] = []
        self._buffered = 0
        self._open: tuple[pa.NativeFile, pq.ParquetWriter, str, str] | None = None
        self._in_file = 0

    def write(self, batch: pa.RecordBatch) -> None:
        """Add the rows of ``batch``: a row group is written whenever ``row_group_rows`` rows are buffered, a new file
        begun when one would pass ``rows_per_file``.
        """
        while len(batch):
            take = min(self.row_group_rows - self._buffered, len(batch))
            self._buffer.append(batch.slice(0, take))
            self._buffered += take
            batch = batch.slice(take)
            if self._buffered == self.row_group_rows:
                self._flush()

    def close(self) -> None:
        """Write the rows still buffered (or the one empty file ``empty_file`` asks for) and rename the open file into
        place.
        """
        if self._buffered or (self.empty_file and not self._files and self._open is None):
            self._flush()
        if self._open is not None:
            sink, writer, temporary, final = self._open
            writer.close()
            sink.close()
            digest = hashlib.sha256()  # read back from the page cache (a local disk), where the task runs
            with self.filesystem.open_input_stream(temporary) as part:
                for block in iter(lambda: part.read(1 << 20), b""):
                    digest.update(block)
            self.filesystem.move(temporary, final)
            info = self.filesystem.get_file_info(final)
            written.record(final, info.size, info.mtime_ns // 1_000_000, digest.hexdigest())
            self._open = None

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            self.close()

    def _flush(self) -> None:
        group = pa.Table.from_batches(self._buffer, self.schema)
        self._buffer, self._buffered = [], 0
        if self._open is not None and self._in_file + len(group) > self.rows_per_file:
            self.close()
        if self._open is None:
            if not self._files:
                self.filesystem.create_dir(self.root, recursive=True)
            name = f"part-{self.index:05d}-{self._files:03d}"
            temporary = f"{self.root}/.{name}.{self.attempt}.tmp"
            sink = self.filesystem.open_output_stream(temporary)
            encoded = encoded_columns(self.schema)
            writer = pq.ParquetWriter(sink, self.schema, compression=COMPRESSION, use_dictionary=encoded,
                                      write_statistics=encoded)
            self._open = (sink, writer, temporary, f"{self.root}/{name}.parquet")
            self._files += 1
            self._in_file = 0
        self._open[1].write_table(group, row_group_size=self.row_group_rows)
        self._in_file += len(group)
        self.rows += len(group)


def encoded_columns(schema: pa.Schema) -> list[str]:
    """The Parquet leaf columns of ``schema`` written with a dictionary and statistics: all but those of
    :data:`PLAIN_TYPES` (a list's leaf is ``NAME.list.element``, a struct's ``NAME.FIELD``).
    """
    def leaves(path: str, kind: pa.DataType) -> list[tuple[str, pa.DataType]]:
        if pa.types.is_list(kind):
            return leaves(f"{path}.list.element", kind.value_type)
        if pa.types.is_struct(kind):
            return [leaf for field in kind for leaf in leaves(f"{path}.{field.name}", field.type)]
        if pa.types.is_map(kind):
            return [*leaves(f"{path}.key_value.key", kind.key_type), *leaves(f"{path}.key_value.value", kind.item_type)]
        return [(path, kind)]

    return [path for field in schema for path, kind in leaves(field.name, field.type)
            if not any(plain(kind) for plain in PLAIN_TYPES)]


def read_small(path: str, columns: list[str]) -> pa.Table:
    """``columns`` of a small table (vocabulary or categories sized), read on the driver with pyarrow."""
    files = parquet_files(path)
    if not files:
        raise FileNotFoundError(f"no Parquet files under {path}")
    filesystem, _ = arrow_filesystem(path)
    return pa.concat_tables([pq.read_table(file, columns=columns, filesystem=filesystem) for file in files])


def count_rows(path: str) -> int:
    """The rows of a table, from its Parquet footers: no data is read and no Spark job runs."""
    filesystem, _ = arrow_filesystem(path)
    return sum(pq.read_metadata(file, filesystem=filesystem).num_rows for file in parquet_files(path))


def rows_and_list_lengths(path: str, column: str) -> tuple[int, int] | None:
    """The rows of a table and the summed lengths of its list column ``column`` (a vectors table's nonzeros), from
    its Parquet footers: no data is read and no Spark job runs. A list's elements are one leaf value each, and an
    empty or null list is one null leaf value, so each row group adds its leaf's values less its nulls. None when
    a footer lacks the null count (a writer that kept no statistics), or ``column`` is no list of values.
    """
    filesystem, _ = arrow_filesystem(path)
    rows = lengths = 0
    for file in parquet_files(path):
        metadata = pq.read_metadata(file, filesystem=filesystem)
        leaves = [index for index in range(metadata.num_columns)
                  if metadata.schema.column(index).path.split(".")[0] == column]
        if len(leaves) != 1 or metadata.schema.column(leaves[0]).max_repetition_level != 1:
            return None
        rows += metadata.num_rows
        for group in range(metadata.num_row_groups):
            chunk = metadata.row_group(group).column(leaves[0])
            if chunk.statistics is None or not chunk.statistics.has_null_count:
                return None
            lengths += chunk.num_values - chunk.statistics.null_count
    return rows, lengths


def add_counts(left: tuple[int, sparse.csr_matrix] | None,
               right: tuple[int, sparse.csr_matrix] | None) -> tuple[int, sparse.csr_matrix] | None:
    """The sum of two (documents, counts) pairs; None is zero."""
    if left is None or right is None:
        return right if left is None else left
    return left[0] + right[0], left[1] + right[1]


def sum_over_files(spark: SparkSession, files: list[str],
                   count: Callable[[str], tuple[int, sparse.csr_matrix]]) -> tuple[int, sparse.csr_matrix] | None:
    """The sum over ``files`` of ``count`` (one file's (documents, counts) pair), run one task per file and summed
    in a second round of tasks, about the square root of the files' number, before the driver adds theirs: the
    driver receives a few sums (vocabulary x categories for the chi-square family's counts), never documents.
    None without files.
    """
    if not files:
        return None
    counted = _mapped(spark, files, lambda index, path: count(path))
    groups = max(1, math.isqrt(len(files)))

    def add(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with python_task("sum_over_files.add"):
            total = None
            for batch in batches:
                for blob in batch.column(0).to_pylist():
                    total = add_counts(total, _RESULTS.loads(blob)[0])  # counting writes no file
        if total is not None:
            yield pa.record_batch([pa.array([_RESULTS.dumps(total)], pa.binary())],
                                  names=["result"])

    summed = counted.repartition(groups).mapInArrow(add, "result binary").collect()
    total = None
    for row in summed:
        total = add_counts(total, _RESULTS.loads(row[0]))
    return total
