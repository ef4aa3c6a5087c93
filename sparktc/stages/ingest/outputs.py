"""Ingest's outputs: the ``documents``, ``categories``, ``rejects`` and ``terms`` tables of an assembled corpus.

A clean corpus (:class:`CleanCorpus`: nothing to reject or set aside) takes the short path: its staged files are
renamed into ``documents`` and its counts are the parsing tasks' tallies. Anything else takes the general path,
which finds the rejected and set-aside records, fails on bad input unless ``corpus.on_error = "reject"`` (naming
the first bad records), and counts the tables it writes. Both write the same tables and report the same details.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.formats import LABELLED, QRELS
from sparktc.corpora.records import RECORD_SCHEMA, TEST, TRAIN, Reject, term_id_token_counts, token_counts
from sparktc.corpora.registry import FORMATS
from sparktc.corpora.tallies import RecordTally
from sparktc.experiment.config import CorpusConfig
from sparktc.experiment.corpus_files import IngestError
from sparktc.runtime import storage
from sparktc.runtime.parts import count_rows, map_parts, parquet_files, read_batches, write_parts
from sparktc.runtime.runner import Tables
from sparktc.runtime.stage_report import StageReport
from sparktc.schemas import CATEGORIES_SCHEMA, TERM_ID_RECORD_SCHEMA, TERMS_SCHEMA


@dataclass
class Categories:
    """The category set of the run, with display names and, for a hierarchy, each category's parent
    (None for top-level categories and flat category sets); training and averaging follow it.
    """

    codes: list[str]
    names: dict[str, str]
    parents: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CleanCorpus:
    """A parsed corpus in which nothing is to be rejected or set aside: where its records are staged, what the
    parsing tasks counted in them, and for LYRL2004 its number of qrels lines (None: the labels are on the lines).
    """

    staged: str
    tally: RecordTally
    qrels_lines: int | None


#: The assemblies whose clean corpora take ingest's short path (:class:`CleanCorpus`; every one but a chosen subset's):
#: their staged records become ``documents`` as they are, so the general path writes their documents with every
#: record column too.
CLEAN_PATH_ASSEMBLIES = (QRELS, LABELLED)
REJECTS_SCHEMA = pa.schema([RECORD_SCHEMA.field(name) for name in ("source", "line", "doc_id", "reason")])


def rejected_line(set_aside: dict[str, int], details: dict) -> str | None:
    """The console line under the stage's own (which counts records only) when qrels lines were rejected:
    the records and the qrels lines the rejects table holds.
    """
    lines = details.get("qrels_rejected", 0)
    if not lines:
        return None
    return (f"sparktc: {'ingest':<9} rejected {_counted(set_aside.get('rejected', 0), 'records')}, "
            f"{lines:,} of {_counted(details['qrels_lines'], 'qrels lines')} (all in the rejects table)")


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


def write_terms(terms: pa.Table | None, output: str) -> None:
    """The ``terms`` table: the training terms documents in integer form number their terms by; none for a corpus
    whose documents keep token strings or texts.
    """
    found = TERMS_SCHEMA.empty_table() if terms is None else terms.select(TERMS_SCHEMA.names).cast(TERMS_SCHEMA)
    write_parts(found.to_batches(), TERMS_SCHEMA, output, 0)


def write_outputs(spark: SparkSession, corpus: CorpusConfig, tables: Tables, staging: str, report: StageReport,
                  marked: DataFrame, categories: Categories, extra: dict) -> bool:
    """The ingest outputs of the parsed corpus: by the short path when it is clean (True), else the general one."""
    clean = extra["clean"]() if "clean" in extra else None
    if clean is not None:
        _write_clean(spark, corpus, clean, categories, extra["ignored_files"], tables, report,
                     extra.get("terms") is not None)
        return True
    extra = {**extra, **(extra["general"]() if "general" in extra else {})}  # what only the general path reads
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
    if form.comes_tokenized(corpus) and integer:  # as the short path counts them while parsing
        counted = map_parts(spark, parquet_files(tables.output("documents")), lambda index, path: [
            term_id_token_counts(batch) for batch in read_batches(path, ["term_counts", "tokens_outside"])])
        report.details["tokens"] = {"tokens": sum(c[0] for each in counted for c in each),
                                    "documents_without_tokens": sum(c[1] for each in counted for c in each),
                                    "outside_training_terms": sum(c[2] for each in counted for c in each)}
    elif form.comes_tokenized(corpus):
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
    codes = sorted(categories.codes)
    # A row per category, written on the driver (no Spark job on the serial path: 0.7 s at 804,414 documents); the
    # general path's positives are never null (filled with 0) either: the same schema, nullability included.
    write_parts(pa.table({
        "category": codes, "name": [categories.names.get(c, c) for c in codes],
        "parent": [categories.parents.get(c) for c in codes],
        "train_positives": [tally.positives[(TRAIN, c)] for c in codes],
        "test_positives": [tally.positives[(TEST, c)] for c in codes]}, CATEGORIES_SCHEMA).to_batches(),
        CATEGORIES_SCHEMA, tables.output("categories"), 0)
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
    if FORMATS[corpus.format].comes_tokenized(corpus):  # what tokenize reports of the documents it takes as they are
        report.details["tokens"] = {"tokens": tally.tokens, "documents_without_tokens": tally.without_tokens}
        if integer:
            report.details["tokens"]["outside_training_terms"] = tally.tokens_outside
