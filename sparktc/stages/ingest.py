"""Ingest: corpus files -> ``documents``, ``categories`` and ``rejects`` tables.

Files are read by Spark's ``binaryFile`` source (any Hadoop file system) and parsed on the
executors by the pure readers in :mod:`sparktc.corpora`, one file per parser call, so records
keep their file and line. The files read are exactly those of the format's names in corpus.path
(``NAME`` or ``NAME.gz``, never both); an entry of such a name that is no file stops ingest, and
other versions of corpus files (backups, partial copies) are named as ignored, never passed over
in silence. Every record ends in exactly one place: ``documents``, ``rejects``
(malformed input), or a set-aside count with its reason (outside the split, no category of the
chosen set); the stage report checks that these add up to the records read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora import lyrl2004, lyrl2004_columnar
from sparktc.corpora.files import Reader
from sparktc.corpora.formats import LABELLED, QRELS, SUBSET, ByteRanges, CorpusFormat
from sparktc.corpora.label_index import LabelIndex, QrelsFiles, id_hashes
from sparktc.corpora.line_ranges import range_share
from sparktc.corpora.records import RECORD_SCHEMA, TEST, TRAIN, Reject, term_id_token_counts, token_counts
from sparktc.corpora.registry import FORMATS
from sparktc.corpora.tallies import AssignmentTally, LabelledTally, RecordTally, summed
from sparktc.experiment.config import Config, CorpusConfig, category_set_of, hierarchy_policy_of
from sparktc.experiment.corpus_files import IngestError, document_files, list_corpus, named_files
from sparktc.experiment.tables import mark_duplicates
from sparktc.features import weighting
from sparktc.filesystem import arrow_filesystem, per_worker
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import count_rows, map_parts, parquet_files, read_batches, write_parts
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.session import cores
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import TERM_ID_RECORD_SCHEMA, TERMS_SCHEMA
from sparktc.stages.weight import (
    WEIGHTED,
    IdWeights,
    VectorParts,
    WeightedParts,
    leave_weighted,
    planned_weights,
    summed_parts,
)


@dataclass(frozen=True)
class Parsing:
    """Files parsed into one staged table: read by ``reader`` or, with ``ranges``, a file larger than a task's share
    in byte ranges (:func:`parse_together`); each task's batches passed through ``then`` (LYRL2004's labels attached),
    written with ``schema`` under ``directory`` (None: not written, the tally is all a task gives) and counted by a
    fresh ``tally``; with ``ids``, each task also writes there the hashes of the doc ids it accepted
    (:func:`_write_id_hashes`), so that :func:`ids_distinct` can show that no id repeats; with ``tee``, each task's
    batches also go to ``tee(task)`` as they are written (its documents weighted), whose ``close()`` becomes the
    tally's ``teed``.
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


def parse_together(spark: SparkSession, parsings: Sequence[Parsing]) -> list[tuple[DataFrame, list]]:
    """Several :func:`parse_into` in one Spark job, their tasks in the order given, so that no table's parsing waits
    for another's (LYRL2004's qrels beside its token files); per parsing, the table read back and its tasks' tallies
    (one per file, or per byte range of a file read in ranges; as many as the buckets of its ids).

    A parsing with ``ranges`` has each plain file larger than a task's share (the files' bytes over the session's
    cores, :func:`~sparktc.corpora.line_ranges.range_share`) cut into byte ranges of about that share, one task
    each, so no file is a task's work alone on a cluster; each range's task counts the newlines before its start
    itself, so every range numbers its lines from the file's start with no job before the parsing (no serial
    prelude; at 804,414 documents on 2 cores, 0.64 CPU-s of counting in all against 0.45 in a job of its own).
    """
    sizes = {path: _size(path) for parsing in parsings if parsing.ranges is not None for path in parsing.paths}
    share = range_share(sum(sizes.values()), cores(spark))
    units: list[tuple[int, int, str, int, int, int]] = []  # (parsing, its task, path, start, end, size); end -1: whole
    for kind, parsing in enumerate(parsings):
        pieces: list[tuple[str, int, int, int]] = []
        for path in parsing.paths:
            cut = parsing.ranges.ranges(path, sizes[path], share) if parsing.ranges is not None else []
            pieces.extend([(path, start, end, sizes[path]) for start, end in cut] or [(path, 0, -1, 0)])
        units.extend((kind, index, *piece) for index, piece in enumerate(pieces))
    tasks = Counter(unit[0] for unit in units)

    def parse(_: int, unit: tuple[int, int, str, int, int, int]) -> RecordTally | AssignmentTally:
        kind, index, path, start, end, size = unit
        parsing = parsings[kind]
        counted = parsing.tally()
        hashes: list[np.ndarray] = []
        with _opened(path) as source:
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
            _write_id_hashes(hashes, parsing.ids, index, tasks[kind])
        if tee is not None:
            counted.teed = tee.close()
        counted.finish()
        return counted

    outputs = [directory for parsing in parsings
               for directory in (parsing.directory, parsing.ids, parsing.tee and parsing.tee.directory) if directory]
    results = map_parts(spark, units, parse, outputs, errors=(IngestError,))
    return [(spark.read.parquet(parsing.directory) if parsing.directory is not None else None,
             [tally for unit, tally in zip(units, results) if unit[0] == kind])
            for kind, parsing in enumerate(parsings)]


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


def _write_id_hashes(hashes: list[np.ndarray], directory: str, index: int, buckets: int) -> None:
    """A parsing task's accepted doc id hashes (:func:`id_hashes`) into ``directory/bucket=B`` by hash mod
    ``buckets``, so one task per bucket sees every hash that could equal one of its own, and none holds them all.
    """
    found = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)
    bucket_of = found % np.uint64(buckets)
    for bucket in range(buckets):
        write_parts([pa.record_batch([pa.array(found[bucket_of == bucket])], schema=ID_HASHES_SCHEMA)],
                    ID_HASHES_SCHEMA, f"{directory}/bucket={bucket}", index)


def ids_distinct(spark: SparkSession, directory: str, buckets: int) -> bool:
    """Whether the id hashes the parsing tasks wrote under ``directory`` (:func:`_write_id_hashes`) are all distinct,
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


def _file_content(path: str) -> bytes:
    """The bytes of a corpus file, read by a task."""
    with _opened(path) as source:
        return source.read()


def _first_rejects(rejects: DataFrame, limit: int = 5) -> list[str]:
    rows = rejects.orderBy("source", "line").limit(limit).collect()
    return [Reject(r.source, r.line, r.doc_id, r.reason).message() for r in rows]


def _counted(count: int, what: str) -> str:
    """``count`` and ``what`` (a plural) in the singular for one: "1 bad record", "3 qrels lines"."""
    return f"{count:,} {what if count != 1 else what.removesuffix('s')}"


def _fail_on_rejects(rejects: DataFrame, count: int, what: str) -> None:
    if count:
        shown = "\n  ".join(_first_rejects(rejects))
        raise IngestError(
            f"{_counted(count, 'bad ' + what)}; the first:\n  {shown}\n"
            "Fix the input, or set corpus.on_error=reject to set such records aside in the `rejects` table."
        )


@dataclass
class Categories:
    """The category set of the run, with display names and, for a hierarchy, each category's parent
    (None for top-level categories and flat category sets); training and averaging follow it.
    """

    codes: list[str]
    names: dict[str, str]
    parents: dict[str, str] = field(default_factory=dict)


def _filter_labels(labels: Column, codes: list[str]) -> Column:
    allowed = F.array(*[F.lit(c) for c in codes]) if codes else F.array().cast("array<string>")
    return F.array_sort(F.array_distinct(F.filter(labels, lambda label: F.array_contains(allowed, label))))


# --- the assemblies (CorpusFormat.assembly): each returns (records with a `reason` for rejected or set-aside rows,
# categories, extra)


def _subset_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str
                   ) -> tuple[DataFrame, Categories, dict]:
    """A corpus whose records carry their labels, kept to the category set chosen from their positives
    (:class:`~sparktc.corpora.formats.ChosenSets`: Reuters-21578's R10, R90, R115); the documents outside the format's
    split are set aside, and with the ApteMod filter those of no category of the set.
    """
    paths, ignored = list_corpus(spark, corpus.path, form.names, form.hint)
    records = mark_duplicates(parse_into(spark, paths, form.reader, staging)[0])
    in_split = records.filter(F.col("reason").isNull() & F.col("split").isNotNull())
    positives = (
        in_split.select("split", F.explode(F.array_distinct("labels")).alias("category"))
        .groupBy("split", "category").count().collect()
    )
    train = {r.category: r["count"] for r in positives if r.split == TRAIN}
    test = {r.category: r["count"] for r in positives if r.split == TEST}
    chosen = category_set_of(corpus)
    codes = form.chosen_sets.choose(chosen, train, test)
    set_name = form.chosen_sets.title(chosen)
    labelled = records.withColumn("labels", _filter_labels(F.col("labels"), codes))
    outside = F.col("split").isNull()
    no_category = F.size("labels") == 0
    if corpus.document_filter == "aptemod":
        aside = F.when(outside, F.lit(f"set aside: not in the {form.split} split")).when(
            no_category, F.lit(f"set aside: no category of {set_name} (ApteMod filter)")
        )
    else:
        aside = F.when(outside, F.lit(f"set aside: not in the {form.split} split"))
    marked = labelled.withColumn("reason", F.coalesce("reason", aside))
    # Names from the format's names file when it is beside the corpus files (Lewis's category descriptions); else
    # the codes.
    descriptions = storage.join(corpus.path, form.names_file)
    described = form.parse_names(storage.read_text(spark, descriptions)) if storage.exists(spark, descriptions) else {}
    names = {c: described.get(c, c) for c in codes}
    return marked, Categories(codes, names), {"category_set": set_name, "ignored_files": ignored}


@dataclass(frozen=True)
class Weighing:
    """What ingest's token-file tasks need to weight the documents they parse for the weight stage of the same run
    (:func:`~sparktc.stages.weight.adopt_weighted`): the run's settings and where to leave the vectors.
    """

    config: Config
    handoff: str

    @property
    def directory(self) -> str:
        """Where the tasks write the vectors."""
        return storage.join(self.handoff, WEIGHTED)


def _qrels_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str,
                  weighing: Weighing | None = None) -> tuple[DataFrame, Categories, dict]:
    """A LYRL2004 corpus: the documents of the format's files for the test parts read by its reader, labelled by the
    qrels of the category set (``corpus.category_set``) while they are parsed; the set's hierarchy or list and the
    names give the categories. With ``weighing``, token files in integer form are also weighted as they are parsed,
    when the weights need only the training file's term counts (:func:`~sparktc.stages.weight.planned_weights`):
    the test documents are read once, and ingest's output stays what it is.
    """
    category_set = category_set_of(corpus)
    tree, tree_path = _category_tree(spark, corpus, category_set)
    files, ignored = list_corpus(spark, corpus.path, form.names, form.hint)
    paths = document_files(files, corpus, form)
    qrels = QrelsFiles(tuple(named_files(files, lyrl2004.QRELS_FILES[category_set], corpus.path, form)),
                       None if tree is None else tuple(tree.categories), tree_path)
    parents = () if tree is None else tuple(
        (code, parent) for code, parent in sorted(tree.parent.items()) if parent != lyrl2004.ROOT)
    policy = hierarchy_policy_of(corpus)

    # The qrels are read whole (one file: list_corpus never takes both NAME and NAME.gz): a task's count of their
    # distinct documents (AssignmentTally) would count a document cut by a range twice.
    qrels_parsing = Parsing(list(qrels.paths), qrels.read, storage.join(staging, "qrels"),
                            lyrl2004_columnar.ASSIGNMENT_SCHEMA, AssignmentTally)
    terms: pa.Table | None = None  # the training terms, for documents in integer form
    reader, ranges = form.reader, form.ranges
    weights: IdWeights | None = None  # and, when the weight stage will find the same counts, their weights
    # The documents' tasks (a large plain file's in byte ranges) attach the labels of a LabelIndex their worker loads
    # once: read and indexed from the qrels by each worker when the qrels' task runs beside them (vector files)...
    load_labels = partial(LabelIndex.load, qrels, _file_content, parents, policy)
    if not form.vectors:  # token files (given features are weighted as given: their tokens stay strings)
        # Integers from ingest on (issue 39): a first job counts the training file's terms beside the qrels' task;
        # a second parses every token file (the training file again: 1/35 of the bytes), each document's tokens
        # turned into its training terms' ids and counts in its task, so no token string is written. Both read the
        # tokens as lists, never joined into strings to be split again. ...and as the qrels' task of the first job
        # indexed them and staged the index, once per run (token files).
        reader, ranges = form.list_reader or reader, form.list_ranges or ranges
        staged_labels = storage.join(staging, "labels")
        (assignments, qrels_tallies), (_, counted) = parse_together(spark, [
            replace(qrels_parsing, then=_staging_labels(staged_labels, parents, policy)),
            Parsing([path for path in paths if lyrl2004.split_of(path) == TRAIN], reader, None, tally=TermTally)])
        terms = weighting.vocabulary_of([tally.counts for tally in counted if len(tally.counts)])
        load_labels = partial(_staged_label_index, staged_labels)
        if weighing is not None:
            weights = planned_weights(weighing.config, terms, sum(tally.documents for tally in counted))
    convert = _as_term_ids(terms["term"].combine_chunks()) if terms is not None else None

    def labelled(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        labels = load_labels()
        for batch in batches:
            attached = labels.attach(batch)
            yield attached if convert is None else convert(attached)

    tee = None if weights is None else WeightedParts(weighing.directory, weights)
    documents = Parsing(paths, reader, storage.join(staging, "tokens"),
                        RECORD_SCHEMA if terms is None else TERM_ID_RECORD_SCHEMA,
                        tally=lambda: LabelledTally(load_labels), ranges=ranges, then=labelled, tee=tee)
    if terms is None:  # the qrels' task first, beside the token files' tasks
        (assignments, qrels_tallies), (parsed, tallies) = parse_together(spark, [qrels_parsing, documents])
    else:
        [(parsed, tallies)] = parse_together(spark, [documents])
    good = assignments.filter(F.col("reason").isNull())
    if tree is None:  # no list of the set's codes: its categories are the codes the qrels assign
        tree = lyrl2004.flat_hierarchy({r.category: r.category for r in good.select("category").distinct().collect()})
    names = dict(tree.descriptions)
    if corpus.topic_names:
        names.update(lyrl2004.load_topic_names(storage.read_text(spark, corpus.topic_names)))
    records = mark_duplicates(parsed)
    # With every test part read, a qrels line for a document not among them is an error; with a
    # subset, lines for the parts left out are expected and only counted.
    document_ids = records.filter(F.col("reason").isNull()).select("doc_id")
    unknown_doc = good.join(document_ids, "doc_id", "left_anti")
    assignment_rejects = assignments.filter(F.col("reason").isNotNull())
    all_parts = sorted(corpus.test_parts) == [0, 1, 2, 3]
    if all_parts:
        assignment_rejects = assignment_rejects.unionByName(unknown_doc.withColumn(
            "reason", F.lit("qrels line for a document not among the accepted documents of the token files")
        ))
    extra = {"assignments": assignments, "assignment_rejects": assignment_rejects,
             "unread_assignments": None if all_parts else unknown_doc, "ignored_files": ignored, "terms": terms,
             "clean": lambda: _clean(parsed, tallies, qrels_tallies, storage.join(staging, "tokens")),
             "category_set": category_set, "weighted": None if weights is None else (weights, tallies),
             "hierarchy_closure": {"policy": policy, "documents_not_closed": tallies[0].not_closed if tallies
                                   else count_not_closed(good, dict(parents))}}
    return records, Categories(list(tree.categories), names, dict(parents)), extra


def _staging_labels(directory: str, parents: tuple[tuple[str, str], ...], policy: str
                    ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The qrels' task's ``then``: its lines passed on as they are, and once read, their :class:`LabelIndex` (the
    hierarchy's ``parents``, the run's ``policy``) written under ``directory`` in columnar form, for the token files'
    workers to load (:func:`_staged_label_index`) instead of each reading and indexing the qrels. For 2.6M qrels
    lines (804,414 documents, gzipped) that cost each worker 2.8 to 3.6 CPU-s; loading the staged index costs 0.15
    to 0.2, and the qrels' task 0.5 to 0.9 more. One Parquet file of one row group (2.9 MB, read in 0.09 CPU-s):
    Arrow IPC reads in 0.02 but is 15 MB even with zstd, and every worker reads it.
    """

    def write(index: LabelIndex) -> None:
        table = index.table()
        rows = max(len(table), 1)
        write_parts(table.to_batches(), table.schema, directory, 0, rows_per_file=rows, row_group_rows=rows)

    return lambda batches: LabelIndex.passing(batches, parents, policy, write)


@per_worker
def _staged_label_index(directory: str) -> LabelIndex:
    """A parsing worker's :class:`LabelIndex`, as the qrels' task staged it under ``directory``
    (:func:`_staging_labels`).
    """
    filesystem, _ = arrow_filesystem(directory)
    [file] = parquet_files(directory)
    return LabelIndex.from_table(pq.read_table(file, filesystem=filesystem))


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


def _as_term_ids(terms: pa.StringArray) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    """A records batch, its tokens strings or lists (:data:`~sparktc.corpora.records.TOKEN_LIST_RECORD_SCHEMA`), in
    integer form (:data:`~sparktc.schemas.TERM_ID_RECORD_SCHEMA`) against the training terms ``terms``
    (:func:`~sparktc.features.weighting.training_term_ids`), as a token file's task converts it.
    """

    def convert(batch: pa.RecordBatch) -> pa.RecordBatch:
        tokens = batch.column("tokens")
        term_ids, term_counts, outside = weighting.training_term_ids(tokens, terms)
        columns = {"term_ids": term_ids, "term_counts": term_counts,
                   "tokens_outside": pa.array(outside, mask=pc.is_null(tokens).to_numpy(zero_copy_only=False))}
        return pa.RecordBatch.from_arrays([columns[name] if name in columns else batch.column(name)
                                           for name in TERM_ID_RECORD_SCHEMA.names], schema=TERM_ID_RECORD_SCHEMA)

    return convert


def _category_tree(spark: SparkSession, corpus: CorpusConfig, category_set: str
                   ) -> tuple[lyrl2004.Hierarchy | None, str]:
    """The categories of ``category_set`` and the file that lists them: the set's hierarchy (``corpus.hierarchy``,
    else the set's file in corpus.path; required for topics) or, for regions, the flat list. None when corpus.path
    has no industries hierarchy or regions list: the categories are then the codes the qrels assign.
    """
    if category_set == "regions":
        path = storage.join(corpus.path, lyrl2004.REGIONS_FILE)
        if not storage.exists(spark, path):
            return None, ""
        codes = lyrl2004.parse_category_list(storage.read_text(spark, path).splitlines(), path)
        return lyrl2004.flat_hierarchy(codes), path
    name = lyrl2004.HIERARCHY_FILES[category_set]
    path = corpus.hierarchy or storage.join(corpus.path, name)
    if not storage.exists(spark, path):
        if category_set == "industries" and not corpus.hierarchy:
            return None, ""
        raise IngestError(f"hierarchy file not found: {path}; set corpus.hierarchy to {name}")
    return lyrl2004.parse_hierarchy(storage.read_text(spark, path).splitlines(), path), path


def count_not_closed(good: DataFrame, parents: Mapping[str, str]) -> int:
    """How many documents of the accepted qrels lines ``good`` have a label whose parent is not among their labels
    (LYRL2004's qrels include every ancestor), counted by Spark.
    """
    if not parents:
        return 0
    parent = F.create_map(*[F.lit(value) for pair in parents.items() for value in pair])
    labelled = good.groupBy("doc_id").agg(F.collect_set("category").alias("labels"))
    return labelled.filter(F.exists(
        "labels", lambda label: parent[label].isNotNull() & ~F.array_contains("labels", parent[label]))).count()


def _labelled_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str
                     ) -> tuple[DataFrame, Categories, dict]:
    """Files whose records carry their labels (JSON Lines, LIBSVM), one parsing task each, or one per byte range
    for a format read in ranges (:func:`parse_together`); a clean corpus (:func:`_clean_lines`) takes the short
    path, its categories those given or the labels the tasks counted, with no Spark job over the records.
    """
    files, ignored = list_corpus(spark, corpus.path, form.names, form.hint)
    paths = document_files(files, corpus, form)
    staged, ids = storage.join(staging, "records"), storage.join(staging, "ids")
    [(parsed, tallies)] = parse_together(spark, [Parsing(paths, form.reader, staged, ids=ids, ranges=form.ranges)])
    return _lines_corpus(spark, corpus, parsed, ignored, _clean_lines(spark, corpus, tallies, staged, ids,
                                                                      len(tallies)))


def _lines_corpus(spark: SparkSession, corpus: CorpusConfig, parsed: DataFrame, ignored: list[str],
                  clean: CleanCorpus | None) -> tuple[DataFrame, Categories, dict]:
    """A parsed corpus of lines that carry their own labels: by the short path when it is ``clean``, its
    categories those given or the labels the parsing tasks counted, with no Spark job over the records; else by
    :func:`_labelled_lines`.
    """
    if clean is None:
        return _labelled_lines(corpus, parsed, ignored)
    codes = sorted(corpus.categories or {category for _, category in clean.tally.positives})
    return parsed, Categories(codes, {c: c for c in codes}), {"ignored_files": ignored, "clean": lambda: clean}


def _labelled_lines(corpus: CorpusConfig, parsed: DataFrame, ignored: list[str]) -> tuple[DataFrame, Categories, dict]:
    """The records of line files that carry their own labels (JSON Lines, LIBSVM), as parsed: the categories are
    ``corpus.categories`` (a label outside them rejects its record) or, when empty, every label seen.
    """
    records = mark_duplicates(parsed)
    if corpus.categories:
        codes = sorted(corpus.categories)
        known = F.array(*[F.lit(c) for c in codes])
        unknown = F.filter("labels", lambda label: ~F.array_contains(known, label))
        marked = records.withColumn(
            "reason",
            F.coalesce("reason", F.when(F.size(unknown) > 0, F.concat(
                F.lit("unknown categories "), F.array_join(unknown, ","), F.lit(" (not in corpus.categories)")))),
        )
    else:
        seen = records.filter(F.col("reason").isNull()).select(F.explode("labels").alias("c")).distinct()
        codes = sorted(r.c for r in seen.collect())
        marked = records
    return marked, Categories(codes, {c: c for c in codes}), {"ignored_files": ignored}


@dataclass(frozen=True)
class CleanCorpus:
    """A parsed corpus in which nothing is to be rejected or set aside: where its records are staged, what the
    parsing tasks counted in them, and for LYRL2004 its number of qrels lines (None: the labels are on the lines).
    """

    staged: str
    tally: RecordTally
    qrels_lines: int | None


def _clean(parsed: DataFrame, tallies: list[RecordTally], qrels_tallies: list[AssignmentTally],
           staged: str) -> CleanCorpus | None:
    """The corpus as parsed when it is clean: no record or qrels line rejected, no doc id repeated, and
    every document of the qrels among the documents read (the documents with labels, each of which got
    them from a distinct qrels document, are as many as the qrels' documents). None otherwise: the
    general path then finds what is not clean and reports it.
    """
    tally = summed(tallies)
    qrels_reasons = sum((each.reasons for each in qrels_tallies), Counter())
    if set(tally.reasons) - {None} or set(qrels_reasons) - {None}:
        return None
    labelled = sum(tally.documents.values()) - tally.without_labels
    if labelled != sum(each.documents for each in qrels_tallies):
        return None
    if not _labelled_once(tallies, tally.without_labels) and \
            parsed.groupBy("doc_id").count().filter(F.col("count") > 1).limit(1).count():
        return None
    return CleanCorpus(staged, tally, qrels_reasons[None])


def _labelled_once(tallies: list[RecordTally], without_labels: int) -> bool:
    """Whether the parsing tasks' counts alone show that no doc id repeats, so no Spark job must group the ids:
    every document has labels, and the labelled documents, as many as the qrels documents, have the qrels
    documents' id digest (:func:`id_digest`), so each qrels document was read exactly once.
    """
    if without_labels or not tallies or not all(isinstance(t, LabelledTally) for t in tallies):
        return False
    return sum(t.labelled_digest for t in tallies) % 2**64 == tallies[0].qrels_digest


def _clean_lines(spark: SparkSession, corpus: CorpusConfig, tallies: list[RecordTally], staged: str, ids: str,
                 buckets: int) -> CleanCorpus | None:
    """A corpus of lines that carry their own labels (JSON Lines, LIBSVM) as parsed, when it is clean: no record
    rejected, every label among ``corpus.categories`` when they are given (else a record would be rejected for it),
    and no doc id repeated (:func:`ids_distinct`, over the hashes under ``ids``). None otherwise: the general path then
    finds what is not clean and reports it, exactly as before.
    """
    tally = summed(tallies)
    if set(tally.reasons) - {None}:
        return None
    if corpus.categories and not {category for _, category in tally.positives} <= set(corpus.categories):
        return None
    return CleanCorpus(staged, tally, None) if ids_distinct(spark, ids, buckets) else None


#: How ingest makes each kind of assembly (:data:`~sparktc.corpora.formats.ASSEMBLIES`) a corpus.
ASSEMBLE = {SUBSET: _subset_corpus, QRELS: _qrels_corpus, LABELLED: _labelled_corpus}


def ingest(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """Read the corpus named by ``config.corpus`` and write ``documents``, ``categories``, ``rejects``."""
    staging = tables.output("parsed")
    with stage(spark, "ingest") as report:
        try:
            _ingest(spark, config, tables, staging, report)
        finally:
            storage.delete(spark, staging)
    rejected = rejected_line(report.set_aside, report.details)
    if rejected:
        print(rejected, flush=True)
    return report


def rejected_line(set_aside: dict[str, int], details: dict) -> str | None:
    """The console line under the stage's own (which counts records only) when qrels lines were rejected:
    the records and the qrels lines the rejects table holds.
    """
    lines = details.get("qrels_rejected", 0)
    if not lines:
        return None
    return (f"sparktc: {'ingest':<9} rejected {_counted(set_aside.get('rejected', 0), 'records')}, "
            f"{lines:,} of {_counted(details['qrels_lines'], 'qrels lines')} (all in the rejects table)")


def corpus_files(config: Config) -> list[str]:
    """The files outside the run that ingest reads: the corpus directory, the hierarchy, the topic names."""
    return [config.corpus.path, config.corpus.hierarchy, config.corpus.topic_names]


STAGE = Stage("ingest", ingest, writes=("documents", "categories", "rejects", "terms"), sections=("corpus",),
              files=corpus_files, counts_data=True)


#: The assemblies whose clean corpora take ingest's short path (:class:`CleanCorpus`; every one but a chosen subset's):
#: their staged records become ``documents`` as they are, so the general path writes their documents with every
#: record column too.
CLEAN_PATH_ASSEMBLIES = (QRELS, LABELLED)
REJECTS_SCHEMA = pa.schema([RECORD_SCHEMA.field(name) for name in ("source", "line", "doc_id", "reason")])


def _ingest(spark: SparkSession, config: Config, tables: Tables, staging: str, report: StageReport) -> None:
    corpus = config.corpus
    form = FORMATS[corpus.format]
    if form.assembly == QRELS:
        # Only for a weight stage this run will run: it alone adopts the vectors.
        weighing = Weighing(config, tables.handoff) if tables.handoff and "weight" in tables.later else None
        marked, categories, extra = _qrels_corpus(spark, corpus, form, staging, weighing)
    else:
        marked, categories, extra = ASSEMBLE[form.assembly](spark, corpus, form, staging)
    clean = _write(spark, corpus, tables, staging, report, marked, categories, extra)
    if extra.get("weighted") is not None:  # left for the weight stage only when every record parsed is a document
        weights, tallies = extra["weighted"]
        if clean:
            leave_weighted(spark, tables.handoff, weights, tables.output("documents"),
                           summed_parts([tally.teed for tally in tallies]))
        else:
            storage.delete(spark, storage.join(tables.handoff, WEIGHTED))
    _write_terms(extra.get("terms"), tables.output("terms"))
    for key in ("category_set", "hierarchy_closure"):
        if key in extra:
            report.details[key] = extra[key]


def _write_terms(terms: pa.Table | None, output: str) -> None:
    """The ``terms`` table: the training terms documents in integer form number their terms by; none for a corpus
    whose documents keep token strings or texts.
    """
    found = TERMS_SCHEMA.empty_table() if terms is None else terms.select(TERMS_SCHEMA.names).cast(TERMS_SCHEMA)
    write_parts(found.to_batches(), TERMS_SCHEMA, output, 0)


def _write(spark: SparkSession, corpus: CorpusConfig, tables: Tables, staging: str, report: StageReport,
           marked: DataFrame, categories: Categories, extra: dict) -> bool:
    """The ingest outputs of the parsed corpus: by the short path when it is clean (True), else the general one."""
    clean = extra["clean"]() if "clean" in extra else None
    if clean is not None:
        _write_clean(spark, corpus, clean, categories, extra["ignored_files"], tables, report,
                     extra.get("terms") is not None)
        return True
    is_reject = F.col("reason").isNotNull() & ~F.col("reason").startswith("set aside:")
    rejects = marked.filter(is_reject).select("source", "line", "doc_id", "reason")
    assignment_rejects = extra.get("assignment_rejects")
    if assignment_rejects is not None:
        assignment_rejects = assignment_rejects.select("source", "line", "doc_id", "reason")
    # Only the reason column is needed here, so Spark reads keys, never texts or tokens.
    dispositions = {
        r.reason: r["count"] for r in marked.groupBy(
            F.when(is_reject, F.lit("rejected")).otherwise(F.col("reason")).alias("reason")
        ).count().collect()
    }
    assignments_rejected = assignment_rejects.count() if assignment_rejects is not None else 0
    if corpus.on_error == "fail":
        _fail_on_rejects(rejects, dispositions.get("rejected", 0), "records")
        if assignment_rejects is not None:
            _fail_on_rejects(assignment_rejects, assignments_rejected, "qrels lines")
    # Corpora with a clean path keep every record column, as its staged files have them (where each document was
    # read: source and line), so both paths write the same documents table.
    form = FORMATS[corpus.format]
    integer = extra.get("terms") is not None  # documents in integer form (TERM_ID_RECORD_SCHEMA)
    columns = (TERM_ID_RECORD_SCHEMA if integer else RECORD_SCHEMA).names if form.assembly in CLEAN_PATH_ASSEMBLIES \
        else ["doc_id", "split", "labels", "text", "title", "tokens"]
    documents = marked.filter(F.col("reason").isNull()).select(*columns)
    documents.write.mode("overwrite").parquet(tables.output("documents"))
    all_rejects = rejects if assignment_rejects is None else rejects.unionByName(assignment_rejects)
    all_rejects.write.mode("overwrite").parquet(tables.output("rejects"))
    written = spark.read.parquet(tables.output("documents"))
    per_split = F.struct(*[F.sum(F.when(F.col("split") == s, 1).otherwise(0)).alias(s) for s in (TRAIN, TEST)])
    positives = written.select("split", F.explode("labels").alias("category")).groupBy("category").agg(
        per_split.alias("positives")
    ).select("category", F.col(f"positives.{TRAIN}").alias("train_positives"),
             F.col(f"positives.{TEST}").alias("test_positives"))
    table = spark.createDataFrame(
        [(c, categories.names.get(c, c), categories.parents.get(c)) for c in categories.codes],
        "category string, name string, parent string",
    )
    (
        table.join(positives, "category", "left").fillna(0, ["train_positives", "test_positives"])
        .orderBy("category").coalesce(1)
        .write.mode("overwrite").parquet(tables.output("categories"))
    )
    counts = written.agg(
        F.count("*").alias("documents"), per_split.alias("by_split"),
        F.sum(F.when(F.size("labels") == 0, 1).otherwise(0)).alias("without_labels"),
    ).first()
    report.rows_in = sum(dispositions.values())
    report.rows_out = counts["documents"]
    report.set_aside = {
        reason.removeprefix("set aside: "): n for reason, n in dispositions.items() if reason is not None
    }
    report.details = {
        "format": corpus.format,
        "train_documents": counts["by_split"][TRAIN] or 0,
        "test_documents": counts["by_split"][TEST] or 0,
        "categories": len(categories.codes),
        "documents_without_labels": counts["without_labels"] or 0,
        "ignored_files": extra["ignored_files"],
    }
    if assignment_rejects is not None:
        report.details["qrels_lines"] = extra["assignments"].count()
        report.details["qrels_rejected"] = assignments_rejected
        if extra["unread_assignments"] is not None:
            report.details["qrels_lines_for_test_parts_not_read"] = extra["unread_assignments"].count()
    if form.tokenized and integer:  # as the short path counts them while parsing
        counted = map_parts(spark, parquet_files(tables.output("documents")), lambda index, path: [
            term_id_token_counts(batch) for batch in read_batches(path, ["term_counts", "tokens_outside"])])
        report.details["tokens"] = {"tokens": sum(c[0] for each in counted for c in each),
                                    "documents_without_tokens": sum(c[1] for each in counted for c in each),
                                    "outside_training_terms": sum(c[2] for each in counted for c in each)}
    elif form.tokenized:
        counted = map_parts(spark, parquet_files(tables.output("documents")), lambda index, path: [
            token_counts(batch.column("tokens")) for batch in read_batches(path, ["tokens"])])
        report.details["tokens"] = {"tokens": sum(c[1] for each in counted for c in each),
                                    "documents_without_tokens": sum(c[2] for each in counted for c in each)}
    return False


def _write_clean(spark: SparkSession, corpus: CorpusConfig, clean: CleanCorpus, categories: Categories,
                 ignored_files: list[str], tables: Tables, report: StageReport, integer: bool) -> None:
    """The outputs of a clean corpus, the same tables the general path writes for it: every staged
    record is a document, so the staged files are the documents table, renamed into place (no byte copied);
    no rejects; the counts are the tallies'.
    """
    documents = tables.output("documents")
    storage.rename(spark, clean.staged, documents)
    written = count_rows(documents)
    write_parts([], REJECTS_SCHEMA, tables.output("rejects"), 0)
    tally = clean.tally
    spark.createDataFrame(
        [(c, categories.names.get(c, c), categories.parents.get(c), tally.positives[(TRAIN, c)],
          tally.positives[(TEST, c)]) for c in sorted(categories.codes)],
        # The general path's positives are never null (filled with 0): the same schema, nullability included.
        "category string, name string, parent string, train_positives long not null, test_positives long not null",
    ).coalesce(1).write.mode("overwrite").parquet(tables.output("categories"))
    report.rows_in = sum(tally.reasons.values())
    report.rows_out = written
    report.details = {
        "format": corpus.format,
        "train_documents": tally.documents[TRAIN],
        "test_documents": tally.documents[TEST],
        "categories": len(categories.codes),
        "documents_without_labels": tally.without_labels,
        "ignored_files": ignored_files,
    }
    if clean.qrels_lines is not None:
        report.details.update(qrels_lines=clean.qrels_lines, qrels_rejected=0)
        if sorted(corpus.test_parts) != [0, 1, 2, 3]:
            report.details["qrels_lines_for_test_parts_not_read"] = 0
    if FORMATS[corpus.format].tokenized:  # what tokenize reports of the documents it takes as they are
        report.details["tokens"] = {"tokens": tally.tokens, "documents_without_tokens": tally.without_tokens}
        if integer:
            report.details["tokens"]["outside_training_terms"] = tally.tokens_outside
