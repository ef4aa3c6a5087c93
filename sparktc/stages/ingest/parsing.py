"""Ingest's parsing tasks: corpus files -> staged Parquet, each task counting what it writes.

Files are read by the executors, one file (or byte range of a large plain file) per task, and parsed by the pure
readers of :mod:`sparktc.corpora`, so records keep their file and line; the tasks write their records with pyarrow
(the JVM never holds their bytes) and return their tallies, from which ingest's short path takes its counts. Tasks
may also write the hashes of the doc ids they accepted, one bucket per task of :func:`ids_distinct`, which shows
the ids distinct without a shuffle.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.files import CORRUPT_GZIP_ERRORS, Reader, base_name, compression_of, gunzip_chunks
from sparktc.corpora.formats import ByteRanges
from sparktc.corpora.label_index import id_hashes
from sparktc.corpora.line_ranges import byte_ranges, range_share
from sparktc.corpora.records import RECORD_SCHEMA
from sparktc.corpora.tallies import AssignmentTally, RecordTally
from sparktc.experiment.corpus_files import IngestError
from sparktc.features import weighting
from sparktc.filesystem import arrow_filesystem
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import map_parts, parquet_files, read_batches, write_parts
from sparktc.runtime.session import TASKS_PER_CORE, cores
from sparktc.stages.weight import VectorParts, WeightedParts


@dataclass(frozen=True)
class Parsing:
    """Files parsed into one staged table: read by ``reader`` or, with ``ranges``, a file larger than a task's share
    in byte ranges (:func:`parse_together`); each task's batches passed through ``then`` (LYRL2004's labels attached),
    written with ``schema`` under ``directory`` (None: not written, the tally is all a task gives) and counted by a
    fresh ``tally``; with ``ids``, each task also writes there the hashes of the doc ids it accepted
    (:func:`write_id_hashes`), so that :func:`ids_distinct` can show that no id repeats; with ``tee``, each task's
    batches also go to ``tee(task)`` as they are written (its documents weighted), whose ``close()`` becomes the
    tally's ``teed``. ``inflated`` maps a compressed file of ``paths`` to its contents as an earlier job's
    :class:`Inflating` staged them: those are parsed in byte ranges, their records named by the compressed file.
    """

    paths: list[str]
    reader: Reader
    directory: str | None
    schema: pa.Schema = RECORD_SCHEMA
    tally: Callable[[], RecordTally | AssignmentTally | TermTally] = RecordTally
    ids: str | None = None
    ranges: ByteRanges | None = None
    then: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]] | None = None
    tee: WeightedParts | None = None
    inflated: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Inflating:
    """Gzipped files inflated by one task each into ``directory`` (:func:`inflate_file`), so that a later job of
    the same ingest parses their contents in byte ranges over many tasks (``Parsing.inflated``), as a large plain
    file is: a gzip stream can only be inflated from its start, and parsing, not inflating, is most of a file's
    cost (LYRL2004's token files are distributed gzipped). Each task gives its file's :class:`Inflated`.
    """

    paths: list[str]
    directory: str


@dataclass(frozen=True)
class Inflated:
    """A compressed file ``source`` as an :class:`Inflating` task staged it: at ``path`` (None: the stream is
    damaged, and the file is parsed whole by its reader, which reports the damage at its line), ``size`` bytes.
    """

    source: str
    path: str | None
    size: int


def to_inflate(paths: Sequence[str], cores: int) -> list[str]:
    """The gzipped files of ``paths`` (the files a format reads in byte ranges) worth inflating before they are
    parsed (:class:`Inflating`) on ``cores`` cores: those whose contents are larger than a task's share of the
    whole (:func:`~sparktc.corpora.line_ranges.range_share` over :func:`planned_sizes`), which would otherwise be
    one task's work alone, whatever the cores.
    """
    sizes = planned_sizes(paths)
    share = range_share(sum(sizes.values()), TASKS_PER_CORE * cores)
    return [path for path in paths if compression_of(path) == "gzip" and sizes[path] > share]


def planned_sizes(paths: Sequence[str]) -> dict[str, int]:
    """Each file's bytes to parse, as known before it is read: a plain file's size; a gzipped file's contents by
    its trailer (ISIZE, RFC 1952: the last member's length mod 2^32, exact for one member under 4 GiB, a floor
    otherwise); a file of another compression's stored size.
    """
    return {path: _gzip_size(path) if compression_of(path) == "gzip" else _size(path) for path in paths}


def inflate_file(source: str, directory: str) -> Inflated:
    """An :class:`Inflating` task's work: the gzipped file ``source`` inflated into ``directory`` under its base
    name (written under a hidden name and renamed into place, so a retried task replaces a whole file), chunk by
    chunk; a damaged stream stages nothing (its reader then reports the damage where it lies).
    """
    filesystem, folder = arrow_filesystem(directory)
    target = f"{folder}/{base_name(source)}"
    unfinished = f"{folder}/.{base_name(source)}.{uuid.uuid4().hex}.tmp"
    filesystem.create_dir(folder, recursive=True)
    with _opened(source) as opened:
        content = opened.read()
    size = 0
    try:
        with filesystem.open_output_stream(unfinished) as out:
            for chunk in gunzip_chunks(content):
                out.write(chunk)
                size += len(chunk)
    except CORRUPT_GZIP_ERRORS:
        filesystem.delete_file(unfinished)
        return Inflated(source, None, 0)
    filesystem.move(unfinished, target)
    return Inflated(source, f"{directory}/{base_name(source)}", size)


def parse_into(spark: SparkSession, paths: list[str], reader: Reader, directory: str,
               schema: pa.Schema = RECORD_SCHEMA, tally: Callable[[], RecordTally | AssignmentTally] = RecordTally
               ) -> tuple[DataFrame, list]:
    """Parse every file into Parquet at ``directory``, one task per file (:mod:`sparktc.runtime.parts`:
    the executors read the file and write its records with pyarrow; the JVM never holds its bytes);
    the table read back, to be scanned column by column (keys for duplicates and counts, tokens only
    for the final write), and each file's tally of what it wrote.
    """
    [(parsed, tallies)] = parse_together(spark, [Parsing(paths, reader, directory, schema, tally)])
    return parsed, tallies


def parse_together(spark: SparkSession, parsings: Sequence[Parsing | Inflating]) -> list[tuple[DataFrame | None, list]]:
    """Several :func:`parse_into` in one Spark job, their tasks in the order given, so that no table's parsing waits
    for another's (LYRL2004's qrels beside its token files); per parsing, the table read back and its tasks' tallies
    (one per file, or per byte range of a file read in ranges; as many as the buckets of its ids). An
    :class:`Inflating` among them gives no table and its files' :class:`Inflated`.

    A parsing with ``ranges`` has each plain file larger than a task's share (the files' bytes over
    :data:`~sparktc.runtime.session.TASKS_PER_CORE` times the session's cores,
    :func:`~sparktc.corpora.line_ranges.range_share`) cut into byte ranges of about that share, one task each, so
    no file is a task's work alone on a cluster, and a cluster's cores have two waves of tasks; a file it
    ``inflated`` is cut so too, whatever its size. Each range's task counts the newlines before its start itself,
    so every range numbers its lines from the file's start with no job before the parsing (no serial prelude; at
    804,414 documents on 2 cores, 0.64 CPU-s of counting in all against 0.45 in a job of its own).
    """
    units = task_units(parsings, _sizes(parsings), cores(spark))
    tasks = Counter(unit[0] for unit in units)

    def parse(_: int, unit: tuple[int, int, str, str, int, int, int]) -> RecordTally | AssignmentTally | Inflated:
        kind, index, path, opened, start, end, size = unit
        parsing = parsings[kind]
        if isinstance(parsing, Inflating):
            return inflate_file(path, parsing.directory)
        counted = parsing.tally()
        hashes: list[np.ndarray] = []
        with _opened(opened) as source:
            if end < 0:
                content = source.read()
                inject("parse")
                batches = parsing.reader(content, path)
                del content  # the reader holds the file's bytes only as long as it needs them (gzip: until inflated)
            else:
                inject("parse")
                newlines_before = parsing.ranges.count_newlines(source, 0, start)
                batches = parsing.ranges.read_range(source, size, path, start, end, newlines_before)
            if parsing.then is not None:
                batches = parsing.then(batches)
            tee = parsing.tee(index) if parsing.tee is not None else None
            tallied = _tallied(batches, counted, hashes if parsing.ids is not None else None, tee, path)
            if parsing.directory is None:
                for _ in tallied:
                    pass
            else:
                write_parts(tallied, parsing.schema, parsing.directory, index)
        if parsing.ids is not None:
            write_id_hashes(hashes, parsing.ids, index, tasks[kind])
        if tee is not None:
            counted.teed = tee.close()
        counted.finish()
        return counted

    outputs = [directory for parsing in parsings if isinstance(parsing, Parsing)
               for directory in (parsing.directory, parsing.ids, parsing.tee and parsing.tee.directory) if directory]
    results = map_parts(spark, units, parse, outputs, errors=(IngestError,))
    return [(staged_table(spark, parsing) if isinstance(parsing, Parsing) and parsing.directory else None,
             [tally for unit, tally in zip(units, results) if unit[0] == kind])
            for kind, parsing in enumerate(parsings)]


def staged_table(spark: SparkSession, parsing: Parsing) -> DataFrame:
    """The table a parsing's tasks staged, read with the schema they wrote it with: Spark infers no schema, which
    costs a Spark job of its own on the driver's serial path (0.3 to 0.7 s at 804,414 documents, each time).
    """
    return spark.read.schema(from_arrow_schema(parsing.schema)).parquet(parsing.directory)


def _sizes(parsings: Sequence[Parsing | Inflating]) -> dict[str, int]:
    """The stored bytes of every file a parsing reads in ranges (an inflated file's as staged)."""
    return {opened: _size(opened) for parsing in parsings if isinstance(parsing, Parsing) and parsing.ranges
            for opened in (parsing.inflated.get(path, path) for path in parsing.paths)}


def task_units(parsings: Sequence[Parsing | Inflating], sizes: Mapping[str, int], cores: int
           ) -> list[tuple[int, int, str, str, int, int, int]]:
    """The tasks of :func:`parse_together`, in order: ``(parsing, its task, path, file opened, start, end, size)``,
    ``end`` -1 for a whole file; a task's share of the bytes read in ranges is their sum over
    :data:`~sparktc.runtime.session.TASKS_PER_CORE` times ``cores``.
    """
    share = range_share(sum(sizes.values()), TASKS_PER_CORE * cores)
    units: list[tuple[int, int, str, str, int, int, int]] = []
    for kind, parsing in enumerate(parsings):
        pieces: list[tuple[str, str, int, int, int]] = []
        for path in parsing.paths:
            if isinstance(parsing, Inflating) or parsing.ranges is None:
                pieces.append((path, path, 0, -1, 0))
                continue
            opened = parsing.inflated.get(path, path)
            size = sizes[opened]
            cut = (byte_ranges(size, share) if opened != path else parsing.ranges.ranges(path, size, share))
            pieces.extend([(path, opened, start, end, size) for start, end in cut] or [(path, path, 0, -1, 0)])
        units.extend((kind, index, *piece) for index, piece in enumerate(pieces))
    return units


def _gzip_size(path: str) -> int:
    """A gzipped file's contents by its trailer (:func:`planned_sizes`); 0 for a file too short to have one."""
    filesystem, file = arrow_filesystem(path)
    with filesystem.open_input_file(file) as opened:
        size = opened.size()
        return int.from_bytes(opened.read_at(4, size - 4), "little") if size >= 18 else 0


def _size(path: str) -> int:
    """The bytes of a corpus file, as stored."""
    filesystem, file = arrow_filesystem(path)
    return filesystem.get_file_info(file).size or 0


def _tallied(batches: Iterator[pa.RecordBatch], counted: RecordTally | AssignmentTally | TermTally,
             hashes: list[np.ndarray] | None, tee: VectorParts | None, source: str) -> Iterator[pa.RecordBatch]:
    """``batches`` as they are, each added to ``counted``, with ``hashes`` the hashes of its accepted doc ids
    (:func:`id_hashes`) appended there, and with ``tee`` its accepted documents weighted there, as a parsing task
    writes them.
    """
    for batch in batches:
        counted.add(batch)
        if hashes is not None:
            hashes.append(id_hashes(batch.column("doc_id").filter(pc.is_null(batch.column("reason")))))
        if tee is not None:
            tee.add(batch, source)
        yield batch


ID_HASHES_SCHEMA = pa.schema([("hash", pa.uint64())])


def write_id_hashes(hashes: list[np.ndarray], directory: str, index: int, buckets: int) -> None:
    """A parsing task's accepted doc id hashes (:func:`id_hashes`) into ``directory/bucket=B`` by hash mod
    ``buckets``, so one task per bucket sees every hash that could equal one of its own, and none holds them all.
    """
    found = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)
    bucket_of = found % np.uint64(buckets)
    for bucket in range(buckets):
        write_parts([pa.record_batch([pa.array(found[bucket_of == bucket])], schema=ID_HASHES_SCHEMA)],
                    ID_HASHES_SCHEMA, f"{directory}/bucket={bucket}", index)


def ids_distinct(spark: SparkSession, directory: str, buckets: int) -> bool:
    """Whether the id hashes the parsing tasks wrote under ``directory`` (:func:`write_id_hashes`) are all distinct,
    one task per bucket: then so are the ids (equal ids have equal hashes), exactly, with no Spark shuffle of the
    ids and nothing corpus-sized on the driver. False may be two distinct ids of one hash (a chance of about
    n^2 / 2^65): the caller then takes the general path, which finds repeated ids exactly.
    """

    def distinct(_: int, bucket: int) -> bool:
        found = [batch.column("hash").to_numpy() for file in parquet_files(f"{directory}/bucket={bucket}")
                 for batch in read_batches(file, ["hash"])]
        hashes = np.sort(np.concatenate(found)) if found else np.zeros(0, np.uint64)
        return not np.any(hashes[1:] == hashes[:-1])

    return all(map_parts(spark, list(range(buckets)), distinct))


def _opened(path: str) -> pa.NativeFile:
    """A corpus file opened by a task, as stored (no compression detection: the readers decompress it
    themselves); a file it cannot open is the user's to fix.
    """
    filesystem, file = arrow_filesystem(path)
    try:
        return filesystem.open_input_file(file)
    except PermissionError:
        raise IngestError(f"cannot read {path}: permission denied; give the user that runs Spark (on a "
                          "cluster, the executors' user) read access to it, or move it out of "
                          "corpus.path") from None
    except FileNotFoundError:
        raise IngestError(f"cannot read {path}: it was removed while ingest ran; "
                          "put it back and run again") from None


def file_content(path: str) -> bytes:
    """The bytes of a corpus file, read by a task."""
    with _opened(path) as source:
        return source.read()



class TermTally:
    """What a task of ingest's first job counts in a training file's records: its accepted documents, and their
    terms, ``term``, ``df`` and ``frequency`` (:func:`~sparktc.features.weighting.token_counts`), vocabulary-sized,
    for the driver to add up; the records themselves are not written.
    """

    def __init__(self) -> None:
        self._batches: list[pa.Table] = []
        self.counts = weighting.summed_counts([])
        self.documents = 0

    def add(self, batch: pa.RecordBatch) -> None:
        """Count one batch of records: its accepted documents and their terms."""
        accepted = batch.filter(pc.is_null(batch.column("reason")))
        self.documents += len(accepted)
        self._batches.append(weighting.token_counts(accepted.column("tokens")))

    def finish(self) -> None:
        """Add up the kept counts: only they travel to the driver."""
        self.counts, self._batches = weighting.summed_counts(self._batches), []

