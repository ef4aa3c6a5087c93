"""Ingest of corpora whose records carry their labels: a category set chosen from the records' positives (the
``SUBSET`` assembly: Reuters-21578's R10, R90, R115) and files of labelled lines (the ``LABELLED`` assembly: JSON
Lines, LIBSVM). Each assembly returns the records with a ``reason`` for rejected or set-aside rows, the
:class:`~sparktc.stages.ingest.outputs.Categories` of the run, and what else the outputs need; a clean corpus of
labelled lines, its ids shown distinct by the parsing tasks' hashes, takes the short path with no Spark job over
its records.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.formats import CorpusFormat
from sparktc.corpora.records import TEST, TRAIN
from sparktc.corpora.tallies import RecordTally, summed
from sparktc.experiment.config import CorpusConfig, category_set_of
from sparktc.experiment.corpus_files import document_files, list_corpus
from sparktc.experiment.tables import mark_duplicates
from sparktc.runtime import storage
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

