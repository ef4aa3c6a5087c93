"""The ingest stage's entry (:func:`ingest`): the corpus assembled by its format's kind of assembly
(:data:`ASSEMBLE`), its tables written, and the vectors its parsing tasks weighted left for the weight stage of the
same run when every record parsed is a document (the package's docstring tells the whole).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pyspark.sql import DataFrame, SparkSession

from sparktc.corpora.formats import LABELLED, QRELS, SUBSET, TABLE
from sparktc.corpora.registry import FORMATS
from sparktc.experiment.config import Config
from sparktc.runtime import storage
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.stages.ingest.assemblies import labelled_corpus, subset_corpus, table_corpus
from sparktc.stages.ingest.outputs import rejected_line, write_outputs, write_terms
from sparktc.stages.ingest.qrels import Weighing, qrels_corpus
from sparktc.stages.weight import WEIGHTED, leave_weighted, summed_parts

#: How ingest makes each kind of assembly (:data:`~sparktc.corpora.formats.ASSEMBLIES`) a corpus.
ASSEMBLE = {SUBSET: subset_corpus, QRELS: qrels_corpus, LABELLED: labelled_corpus, TABLE: table_corpus}


def ingest(spark: SparkSession, config: Config, tables: Tables, documents: DataFrame | None = None) -> StageReport:
    """Read the corpus named by ``config.corpus`` (or, for a table corpus, ``documents``) and write ``documents``,
    ``categories``, ``rejects``.
    """
    staging = tables.output("parsed")
    with stage(spark, "ingest") as report:
        try:
            _ingest(spark, config, tables, staging, report, documents)
        finally:
            storage.delete(spark, staging)
    rejected = rejected_line(report.set_aside, report.details)
    if rejected:
        print(rejected, flush=True)
    return report


def corpus_files(config: Config) -> list[str]:
    """The files outside the run that ingest reads: the corpus directory, the hierarchy, the topic names."""
    return [config.corpus.path, config.corpus.hierarchy, config.corpus.topic_names]


def catalog_table(config: Config) -> str:
    """Why ingest runs again on every run of a catalog table (corpus.table), "" for any other corpus."""
    table = config.corpus.table
    return f"corpus.table {table} is read through the catalog, whose content no manifest records" if table else ""


STAGE = Stage("ingest", ingest, writes=("documents", "categories", "rejects", "terms"), sections=("corpus",),
              files=corpus_files, counts_data=True, unrecorded=catalog_table)


def _given(config: Config) -> str:
    return "the documents are a DataFrame (documents=), whose content no manifest records"


def given_documents(documents: DataFrame) -> Stage:
    """The ingest stage of a table corpus that is the DataFrame ``documents`` (:func:`sparktc.run_pipeline`'s
    ``documents=``), run again on every run.
    """
    return replace(STAGE, run=partial(ingest, documents=documents), unrecorded=_given)


def _ingest(spark: SparkSession, config: Config, tables: Tables, staging: str, report: StageReport,
            documents: DataFrame | None) -> None:
    corpus = config.corpus
    form = FORMATS[corpus.format]
    if form.assembly == QRELS:
        # Only for a weight stage this run will run: it alone adopts the vectors.
        weighing = Weighing(config, tables.handoff) if tables.handoff and "weight" in tables.later else None
        marked, categories, extra = qrels_corpus(spark, corpus, form, staging, weighing)
    elif form.assembly == TABLE:
        marked, categories, extra = table_corpus(spark, corpus, form, staging, documents)
    else:
        marked, categories, extra = ASSEMBLE[form.assembly](spark, corpus, form, staging)
    clean = write_outputs(spark, corpus, tables, staging, report, marked, categories, extra)
    if extra.get("weighted") is not None:  # left for the weight stage only when every record parsed is a document
        weights, tallies = extra["weighted"]
        if clean:
            leave_weighted(spark, tables.handoff, weights, tables.output("documents"),
                           summed_parts([tally.teed for tally in tallies]))
        else:
            storage.delete(spark, storage.join(tables.handoff, WEIGHTED))
    write_terms(extra.get("terms"), tables.output("terms"))
    for key in ("category_set", "hierarchy_closure", "read"):
        if key in extra:
            report.details[key] = extra[key]
