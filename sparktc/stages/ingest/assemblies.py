"""Ingest of corpora whose records carry their labels: a category set chosen from the records' positives (the
``SUBSET`` assembly: Reuters-21578's R10, R90, R115), files of labelled lines (the ``LABELLED`` assembly: JSON
Lines, LIBSVM) and the rows of a table Spark reads or of a DataFrame given (the ``TABLE`` assembly). Each assembly
returns the records with a ``reason`` for rejected or set-aside rows, the
:class:`~sparktc.stages.ingest.outputs.Categories` of the run, and what else the outputs need; a clean corpus of
labelled lines, its ids shown distinct by the parsing tasks' hashes, takes the short path with no Spark job over
its records.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pyarrow as pa
from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException, PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora import table
from sparktc.corpora.formats import CorpusFormat
from sparktc.corpora.records import TEST, TRAIN
from sparktc.corpora.tallies import RecordTally, summed
from sparktc.experiment.config import CorpusConfig, category_set_of
from sparktc.experiment.corpus_files import IngestError, document_files, list_corpus
from sparktc.experiment.tables import mark_duplicates
from sparktc.runtime import storage
from sparktc.schemas import RECORD_SCHEMA
from sparktc.stages.ingest.outputs import Categories, CleanCorpus
from sparktc.stages.ingest.parsing import Parsing, ids_distinct, parse_into, parse_together


def _filter_labels(labels: Column, codes: list[str]) -> Column:
    allowed = F.array(*[F.lit(c) for c in codes]) if codes else F.array().cast("array<string>")
    return F.array_sort(F.array_distinct(F.filter(labels, lambda label: F.array_contains(allowed, label))))


def subset_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str
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


def labelled_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str
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



#: How many of the test ids not in the table an error shows.
_SHOWN = 5


def table_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str,
                 documents: DataFrame | None = None) -> tuple[DataFrame, Categories, dict]:
    """A table corpus (:mod:`sparktc.corpora.table`): ``documents`` or the table of corpus.path or corpus.table,
    read once, in parallel: its columns checked from the schema alone, each row checked where it is read (a Python
    task per partition) and staged as records; then as files of labelled lines (:func:`_labelled_lines`).
    """
    what = "the documents DataFrame" if documents is not None else \
        f"the table {corpus.table}" if corpus.table else f"the {corpus.read_format} table {corpus.path}"
    try:
        frame = documents if documents is not None else spark.read.table(corpus.table) if corpus.table else \
            spark.read.format(corpus.read_format).load(corpus.path)
        types = {column.name: column.dataType.simpleString() for column in frame.schema.fields}
    except (PySparkException, Py4JJavaError) as error:  # a classic session raises a missing source's from the JVM
        raise IngestError(f"{what} cannot be read: {spark_message(error)}; {form.hint} (a source such as delta or "
                          "iceberg needs its package in the session: docs/corpora.md, \"A table\")") from None
    problem = table.columns_problem(types, corpus, what, "corpus.columns")
    if problem:
        raise IngestError(problem)
    columns = corpus.columns
    labels = _column(columns.labels)
    if types[columns.labels] != "array<string>":  # one label per document
        labels = F.when(labels.isNull(), F.lit(None)).otherwise(F.array(labels.cast("string")))
    # No id column: the row's file and place in it, which no partitioning changes.
    doc_id = _column(columns.id).cast("string") if columns.id else \
        F.concat_ws(":", F.col("_metadata.file_name"), F.col("_metadata.row_index").cast("string"))
    test_ids = spark.read.text(corpus.test_ids).filter(F.col("value") != "").select(  # blank lines skipped
        F.col("value").alias("doc_id")).distinct() if corpus.split_by == "test_ids" else None
    content = "tokens" if columns.tokens else "text"
    staged = storage.join(staging, "records")
    by_file = corpus.split_by == "file_name"

    def check(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext  # in the worker

        source, line = f"{what} partition {TaskContext.get().partitionId()}", 1
        for batch in batches:
            yield table.checked_records(batch, source, line, columns, by_file)
            line += batch.num_rows

    try:
        selected = frame.select(doc_id.alias("doc_id"), _column(columns.tokens or columns.text).alias(content),
                                labels.alias("labels"), _split(corpus, doc_id).alias("split"))
        if test_ids is not None:
            listed = F.broadcast(test_ids.withColumn("listed", F.lit(True)))
            selected = selected.join(listed, "doc_id", "left").select("doc_id", content, "labels", F.when(
                F.col("listed"), F.lit(TEST)).otherwise(F.lit(TRAIN)).alias("split"))
        selected.mapInArrow(check, from_arrow_schema(RECORD_SCHEMA)).write.mode("overwrite").parquet(staged)
    except AnalysisException as error:  # _metadata, for ids or splits, of a table that is no files
        raise IngestError(f"{what} cannot be read as its settings say: {spark_message(error)}; a table without file "
                          "names needs corpus.columns.id and a split by a column, a fraction or test ids") from None
    records = spark.read.parquet(staged)
    if test_ids is not None:
        _check_test_ids(test_ids, records, corpus.test_ids, what)
    marked, categories, extra = _labelled_lines(corpus, records, [])
    return marked, categories, {**extra, "read": {"source": what, "split_by": corpus.split_by}}


def spark_message(error: Exception) -> str:
    """What Spark says of ``error`` in one line: the line of its error class (``[DATA_SOURCE_NOT_FOUND] ...``) without
    the JVM's exception name, else its first line (the rest is its stack).
    """
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    found = next((line for line in lines if re.search(r"\[[A-Z_]+(\.[A-Z_]+)?\]", line)), lines[0])
    return re.sub(r"^:?\s*[\w.$]+(Exception|Error):\s*", "", found)


def _column(name: str) -> Column:
    """The column ``name`` as it is named, a dot in it no field of a struct (backquoted; names hold no backquote)."""
    return F.col(f"`{name}`")


def _split(corpus: CorpusConfig, doc_id: Column) -> Column:
    """Each row's split by corpus.split_by (:data:`sparktc.corpora.table.SPLITS`): its column; a test share of the ids
    (:func:`sparktc.corpora.table.test_share`, computed here with sha2 and conv); null for test ids, joined after; or
    the file's name (:func:`sparktc.corpora.table.split_of_file`), null for a file of neither split.
    """
    if corpus.split_by == "column":
        return _column(corpus.columns.split)
    if corpus.split_by == "fraction":
        digest = F.sha2(F.concat(F.lit(f"{corpus.split_seed}:"), doc_id), 256)
        share = F.conv(F.substring(digest, 1, table.SHARE_DIGITS), 16, 10).cast("double") / 16**table.SHARE_DIGITS
        return F.when(share < corpus.test_fraction, F.lit(TEST)).otherwise(F.lit(TRAIN))
    if corpus.split_by == "file_name":
        found = F.regexp_extract(F.col("_metadata.file_name"), r"^(train|test)[-_.]", 1)
        return F.when(found != "", found)
    return F.lit(None).cast("string")


def _check_test_ids(test_ids: DataFrame, records: DataFrame, path: str, what: str) -> None:
    """IngestError for ids of corpus.test_ids that no row of the table has: a test set is what it lists."""
    missing = test_ids.join(records.select("doc_id"), "doc_id", "left_anti")
    count = missing.count()
    if count:
        shown = ", ".join(repr(row.doc_id) for row in missing.orderBy("doc_id").limit(_SHOWN).collect())
        more = ", ..." if count > _SHOWN else ""
        ids, verb, them = ("ids", "are", "them") if count > 1 else ("id", "is", "it")
        raise IngestError(f"{count:,} {ids} of corpus.test_ids {path} {verb} in no row of {what}: {shown}{more}; "
                          f"remove {them} from the file, or fix the ids")
