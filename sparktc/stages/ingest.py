"""Ingest: corpus files -> ``documents``, ``categories`` and ``rejects`` tables.

Files are read by Spark's ``binaryFile`` source (any Hadoop file system) and parsed on the
executors by the pure readers in :mod:`sparktc.corpora`, one file per parser call, so records
keep their file and line. Every record ends in exactly one place: ``documents``, ``rejects``
(malformed input), or a set-aside count with its reason (outside the split, no category of the
chosen set); the stage report checks that these add up to the records read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc import storage
from sparktc.config import Config, CorpusConfig
from sparktc.corpora import jsonl, lyrl2004, reuters21578
from sparktc.corpora.files import CORRUPT_GZIP_ERRORS, read_lines
from sparktc.records import TEST, TRAIN, Document, Reject
from sparktc.stages.report import StageReport, stage

RECORD_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("split", pa.string()),
        ("labels", pa.list_(pa.string())),
        ("text", pa.string()),
        ("tokens", pa.list_(pa.string())),
        ("source", pa.string()),
        ("line", pa.int32()),
        ("reason", pa.string()),
    ]
)
RECORD_DDL = (
    "doc_id string, split string, labels array<string>, text string, tokens array<string>, "
    "source string, line int, reason string"
)
REJECTS_DDL = "source string, line int, doc_id string, reason string"
BATCH_ROWS = 4096

Parser = Callable[[Iterable[bytes], str], Iterator[Document | Reject]]


class IngestError(ValueError):
    """Bad corpus input met with ``corpus.on_error = "fail"``, or corpus files that are missing."""


def _guarded(parser: Parser, content: bytes, source: str) -> Iterator[Document | Reject]:
    try:
        yield from parser(read_lines(content, source), source)
    except CORRUPT_GZIP_ERRORS as error:
        yield Reject(source, 0, None, f"corrupt gzip stream ({error}); records after this point are lost: re-fetch the file")


def _batch(records: list[Document | Reject]) -> pa.RecordBatch:
    columns: dict[str, list] = {name: [] for name in RECORD_SCHEMA.names}
    for record in records:
        is_document = isinstance(record, Document)
        columns["doc_id"].append(record.doc_id)
        columns["split"].append(record.split if is_document else None)
        columns["labels"].append(list(record.labels) if is_document else None)
        columns["text"].append(record.text if is_document else None)
        columns["tokens"].append(list(record.tokens) if is_document and record.tokens is not None else None)
        columns["source"].append(record.source)
        columns["line"].append(record.line)
        columns["reason"].append(None if is_document else record.reason)
    return pa.RecordBatch.from_pydict(columns, schema=RECORD_SCHEMA)


def parse_files(spark: SparkSession, paths: list[str], parser: Parser) -> DataFrame:
    """One row per record of every file: a document (``reason`` null) or a rejected record."""

    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for source, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
                pending: list[Document | Reject] = []
                for record in _guarded(parser, content, source):
                    pending.append(record)
                    if len(pending) == BATCH_ROWS:
                        yield _batch(pending)
                        pending = []
                if pending:
                    yield _batch(pending)

    # The binaryFile source packs small files into one task; one file per task parses them in parallel.
    files = spark.read.format("binaryFile").load(paths).select("path", "content").repartition(len(paths))
    return files.mapInArrow(parse, RECORD_DDL)


def _first_rejects(rejects: DataFrame, limit: int = 5) -> list[str]:
    rows = rejects.orderBy("source", "line").limit(limit).collect()
    return [Reject(r.source, r.line, r.doc_id, r.reason).message() for r in rows]


def _fail_on_rejects(rejects: DataFrame, count: int, what: str) -> None:
    if count:
        shown = "\n  ".join(_first_rejects(rejects))
        raise IngestError(
            f"{count:,} bad {what}; the first:\n  {shown}\n"
            "Fix the input, or set corpus.on_error=reject to set such records aside in the `rejects` table."
        )


def _mark_duplicates(records: DataFrame) -> DataFrame:
    """Reject every repeat of a doc id after its first occurrence (by file, then line).

    Only the (doc_id, source, line) keys are shuffled to find repeated ids; the few repeats are
    broadcast back, so the documents themselves are not moved.
    """
    first = F.min(F.struct("source", "line"))
    repeated = (
        records.filter(F.col("reason").isNull()).groupBy("doc_id")
        .agg(F.count("*").alias("_n"), first.alias("_first")).filter(F.col("_n") > 1).drop("_n")
    )
    marked = records.join(F.broadcast(repeated), "doc_id", "left")
    is_repeat = F.col("reason").isNull() & F.col("_first").isNotNull() & (
        (F.col("source") != F.col("_first.source")) | (F.col("line") != F.col("_first.line"))
    )
    duplicate = F.concat(F.lit("duplicate doc id (first at "), F.col("_first.source"), F.lit(":"),
                         F.col("_first.line").cast("string"), F.lit("); doc ids must be unique"))
    return marked.withColumn("reason", F.when(is_repeat, duplicate).otherwise(F.col("reason"))).drop("_first")


@dataclass
class Categories:
    """The category set of the run, with display names and, for a hierarchy, each category's parent
    (None for top-level categories and flat category sets); training and averaging follow it."""

    codes: list[str]
    names: dict[str, str]
    parents: dict[str, str] = field(default_factory=dict)


def _files(spark: SparkSession, pattern: str, what: str, hint: str) -> list[str]:
    found = storage.glob(spark, pattern)
    if not found:
        raise IngestError(f"no {what} found at {pattern}; {hint}")
    return found


def _filter_labels(labels: Column, codes: list[str]) -> Column:
    allowed = F.array(*[F.lit(c) for c in codes]) if codes else F.array().cast("array<string>")
    return F.array_sort(F.array_distinct(F.filter(labels, lambda label: F.array_contains(allowed, label))))


# --- per-format readers: each returns (records with a `reason` for rejected or set-aside rows, categories)


def _reuters(spark: SparkSession, corpus: CorpusConfig) -> tuple[DataFrame, Categories, dict]:
    paths = _files(spark, storage.join(corpus.path, "reut2-*.sgm*"), "Reuters-21578 files (reut2-*.sgm or .sgm.gz)",
                   "set corpus.path to the directory holding reut2-000.sgm .. reut2-021.sgm")
    parsed = parse_files(spark, paths, reuters21578.parse_sgml).persist()  # parsing is the costly part: once
    records = _mark_duplicates(parsed)
    in_split = records.filter(F.col("reason").isNull() & F.col("split").isNotNull())
    positives = (
        in_split.select("split", F.explode(F.array_distinct("labels")).alias("category"))
        .groupBy("split", "category").count().collect()
    )
    train = {r.category: r["count"] for r in positives if r.split == TRAIN}
    test = {r.category: r["count"] for r in positives if r.split == TEST}
    codes = reuters21578.category_set(corpus.category_set, train, test)
    set_name = f"R({corpus.category_set[1:]})"
    labelled = records.withColumn("labels", _filter_labels(F.col("labels"), codes))
    outside = F.col("split").isNull()
    no_category = F.size("labels") == 0
    if corpus.document_filter == "aptemod":
        aside = F.when(outside, F.lit("set aside: not in the ModApte split")).when(
            no_category, F.lit(f"set aside: no category of {set_name} (ApteMod filter)")
        )
    else:
        aside = F.when(outside, F.lit("set aside: not in the ModApte split"))
    marked = labelled.withColumn("reason", F.coalesce("reason", aside))
    # Names from Lewis's category descriptions when they are beside the SGML files; else the codes.
    descriptions = storage.join(corpus.path, reuters21578.DESCRIPTIONS_FILE)
    described = reuters21578.topic_names(storage.read_text(spark, descriptions)) if storage.exists(spark, descriptions) else {}
    names = {c: described.get(c, c) for c in codes}
    return marked, Categories(codes, names), {"category_set": set_name, "parsed": parsed}


def _lyrl2004(spark: SparkSession, corpus: CorpusConfig) -> tuple[DataFrame, Categories, dict]:
    base = corpus.path
    hierarchy_path = corpus.hierarchy or storage.join(base, lyrl2004.HIERARCHY_FILE)
    if not storage.exists(spark, hierarchy_path):
        raise IngestError(f"hierarchy file not found: {hierarchy_path}; set corpus.hierarchy to rcv1.topics.hier.orig")
    hierarchy = lyrl2004.parse_hierarchy(storage.read_text(spark, hierarchy_path).splitlines(), hierarchy_path)
    names = dict(hierarchy.descriptions)
    if corpus.topic_names:
        names.update(lyrl2004.load_topic_names(storage.read_text(spark, corpus.topic_names)))
    hint = "set corpus.path to the directory of the LYRL2004 files, or corpus.test_parts to the parts you have"
    paths = _files(spark, storage.join(base, lyrl2004.TRAIN_FILE + "*"), lyrl2004.TRAIN_FILE, hint)
    for part in corpus.test_parts:
        paths += _files(spark, storage.join(base, lyrl2004.TEST_FILES[part] + "*"), lyrl2004.TEST_FILES[part], hint)
    qrels_paths = _files(spark, storage.join(base, lyrl2004.QRELS_FILE + "*"), lyrl2004.QRELS_FILE, hint)

    def tokens(lines: Iterable[bytes], source: str) -> Iterator[Document | Reject]:
        return lyrl2004.parse_token_file(lines, source, lyrl2004.split_of(source))

    parsed = parse_files(spark, paths, tokens).persist()  # parsing is the costly part: once
    records = _mark_duplicates(parsed)

    def qrels(lines: Iterable[bytes], source: str) -> Iterator[Document | Reject]:
        # An assignment travels as a one-label document row so that the same Arrow path carries it.
        for item in lyrl2004.parse_qrels(lines, source):
            if isinstance(item, Reject):
                yield item
            else:
                yield Document(item.doc_id, None, (item.category,), None, None, item.source, item.line)

    known = F.array(*[F.lit(c) for c in hierarchy.categories])
    assignments = parse_files(spark, qrels_paths, qrels).select(
        "doc_id", F.col("labels")[0].alias("category"), "source", "line",
        F.coalesce(
            "reason",
            F.when(~F.array_contains(known, F.col("labels")[0]),
                   F.concat(F.lit("unknown category "), F.col("labels")[0], F.lit(f" (not in {hierarchy_path})"))),
        ).alias("reason"),
    ).persist()
    good = assignments.filter(F.col("reason").isNull())
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
    labels = good.groupBy("doc_id").agg(F.array_sort(F.collect_set("category")).alias("_labels"))
    labelled = (
        records.join(labels, "doc_id", "left")
        .withColumn("labels", F.coalesce("_labels", F.array().cast("array<string>")))
        .drop("_labels")
    )
    extra = {"assignments": assignments, "assignment_rejects": assignment_rejects, "parsed": parsed,
             "unread_assignments": None if all_parts else unknown_doc}
    parents = {code: parent for code, parent in hierarchy.parent.items() if parent != lyrl2004.ROOT}
    return labelled, Categories(list(hierarchy.categories), names, parents), extra


def _jsonl(spark: SparkSession, corpus: CorpusConfig) -> tuple[DataFrame, Categories, dict]:
    paths = _files(spark, storage.join(corpus.path, "*.jsonl*"), "JSON Lines files (*.jsonl or *.jsonl.gz)",
                   "set corpus.path to the directory holding them")
    parsed = parse_files(spark, paths, jsonl.parse_jsonl).persist()  # parsing is the costly part: once
    records = _mark_duplicates(parsed)
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
    return marked, Categories(codes, {c: c for c in codes}), {"parsed": parsed}


READERS = {"reuters21578": _reuters, "lyrl2004": _lyrl2004, "jsonl": _jsonl}


def ingest(spark: SparkSession, config: Config, output: str) -> StageReport:
    """Read the corpus named by ``config.corpus`` and write ``documents``, ``categories``, ``rejects``."""
    corpus = config.corpus
    with stage(spark, "ingest") as report:
        marked, categories, extra = READERS[corpus.format](spark, corpus)
        marked = marked.persist()
        is_reject = F.col("reason").isNotNull() & ~F.col("reason").startswith("set aside:")
        rejects = marked.filter(is_reject).select("source", "line", "doc_id", "reason")
        assignment_rejects = extra.get("assignment_rejects")
        if assignment_rejects is not None:
            assignment_rejects = assignment_rejects.select("source", "line", "doc_id", "reason").persist()
        dispositions = {
            r.reason: r["count"] for r in marked.groupBy(
                F.when(is_reject, F.lit("rejected")).otherwise(F.col("reason")).alias("reason")
            ).count().collect()
        }
        if corpus.on_error == "fail":
            _fail_on_rejects(rejects, dispositions.get("rejected", 0), "records")
            if assignment_rejects is not None:
                _fail_on_rejects(assignment_rejects, assignment_rejects.count(), "qrels lines")
        documents = marked.filter(F.col("reason").isNull()).select("doc_id", "split", "labels", "text", "tokens")
        documents.write.mode("overwrite").parquet(storage.join(output, "documents"))
        all_rejects = rejects if assignment_rejects is None else rejects.unionByName(assignment_rejects)
        all_rejects.write.mode("overwrite").parquet(storage.join(output, "rejects"))
        written = spark.read.parquet(storage.join(output, "documents"))
        positives = written.select("split", F.explode("labels").alias("category")).groupBy("category").agg(
            F.sum(F.when(F.col("split") == TRAIN, 1).otherwise(0)).alias("train_positives"),
            F.sum(F.when(F.col("split") == TEST, 1).otherwise(0)).alias("test_positives"),
        )
        table = spark.createDataFrame(
            [(c, categories.names.get(c, c), categories.parents.get(c)) for c in categories.codes],
            "category string, name string, parent string",
        )
        (
            table.join(positives, "category", "left").fillna(0, ["train_positives", "test_positives"])
            .orderBy("category").coalesce(1)
            .write.mode("overwrite").parquet(storage.join(output, "categories"))
        )
        report.rows_in = sum(dispositions.values())
        report.rows_out = written.count()
        report.set_aside = {reason.removeprefix("set aside: "): n for reason, n in dispositions.items() if reason is not None}
        by_split = {r.split: r["count"] for r in written.groupBy("split").count().collect()}
        report.details = {
            "format": corpus.format,
            "train_documents": by_split.get(TRAIN, 0),
            "test_documents": by_split.get(TEST, 0),
            "categories": len(categories.codes),
            "documents_without_labels": written.filter(F.size("labels") == 0).count(),
        }
        if "category_set" in extra:
            report.details["category_set"] = extra["category_set"]
        if assignment_rejects is not None:
            report.details["qrels_lines"] = extra["assignments"].count()
            report.details["qrels_rejected"] = assignment_rejects.count()
            if extra["unread_assignments"] is not None:
                report.details["qrels_lines_for_test_parts_not_read"] = extra["unread_assignments"].count()
        for frame in (marked, extra["parsed"], extra.get("assignments"), assignment_rejects):
            if frame is not None:
                frame.unpersist()
    return report

