"""Ingest of a LYRL2004 corpus (the ``QRELS`` assembly): token or vector files labelled by the qrels while they
are parsed, so the documents are never shuffled to meet their labels.

Token files are read in two Spark jobs. The first counts the training file's terms beside the qrels' task, which
indexes the qrels (labels closed under the hierarchy) and stages the index, one Parquet file each worker of the
second job loads once (:mod:`~sparktc.stages.ingest.on_workers`; not the lines: only the general path of a corpus
with bad input reads them, and parses them again), and inflates each gzipped file larger than a task's share, one
task each, so that the second job parses its contents in byte ranges
(:class:`~sparktc.stages.ingest.parsing.Inflating`); the second parses every token file, each document's tokens
turned into its training terms' ids and counts (:func:`~sparktc.stages.ingest.on_workers.as_term_ids`), and, for a
weight stage of the same run whose weights the first job's counts fix, weights them too (:class:`Weighing`). Vector
files are parsed in one job, each worker reading and indexing the qrels itself.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora import lyrl2004, lyrl2004_columnar
from sparktc.corpora.formats import CorpusFormat
from sparktc.corpora.label_index import LabelIndex, QrelsFiles
from sparktc.corpora.records import RECORD_SCHEMA, TRAIN
from sparktc.corpora.tallies import AssignmentTally, LabelledTally, RecordTally, summed
from sparktc.experiment.config import Config, CorpusConfig, category_set_of, hierarchy_policy_of
from sparktc.experiment.corpus_files import IngestError, document_files, list_corpus, named_files
from sparktc.experiment.tables import mark_duplicates
from sparktc.features import weighting
from sparktc.runtime import session, storage
from sparktc.schemas import TERM_ID_RECORD_SCHEMA
from sparktc.stages.ingest.on_workers import as_term_ids, staged_label_index, staging_labels
from sparktc.stages.ingest.outputs import Categories, CleanCorpus
from sparktc.stages.ingest.parsing import Inflating, Parsing, TermTally, file_content, parse_together, to_inflate
from sparktc.stages.weight import WEIGHTED, IdWeights, WeightedParts, planned_weights


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


def qrels_corpus(spark: SparkSession, corpus: CorpusConfig, form: CorpusFormat, staging: str,
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
    inflated: dict[str, str] = {}  # gzipped files -> their contents staged by the first job
    # The documents' tasks (a large plain file's in byte ranges) attach the labels of a LabelIndex their worker loads
    # once: read and indexed from the qrels by each worker when the qrels' task runs beside them (vector files)...
    load_labels = partial(LabelIndex.load, qrels, file_content, parents, policy)
    if not form.vectors:  # token files (given features are weighted as given: their tokens stay strings)
        # Integers from ingest on (issue 39): a first job counts the training file's terms beside the qrels' task;
        # a second parses every token file (the training file again: 1/35 of the bytes), each document's tokens
        # turned into its training terms' ids and counts in its task, so no token string is written. Both read the
        # tokens as lists, never joined into strings to be split again. ...and as the qrels' task of the first job
        # indexed them and staged the index, once per run (token files).
        # The first job also inflates each gzipped file too large for one task (the test parts, as distributed),
        # so the second parses it in byte ranges over many tasks (issue 50).
        # Its qrels task stages their index, not their lines (2.0 of its 12 CPU-s at 3,217,656 documents, on the
        # path every token file waits on): only the general path reads the lines, and parses them again for it.
        reader, ranges = form.list_reader or reader, form.list_ranges or ranges
        staged_labels = storage.join(staging, "labels")
        (assignments, qrels_tallies), (_, counted), (_, staged) = parse_together(spark, [
            replace(qrels_parsing, directory=qrels_parsing.directory if tree is None else None,
                    then=staging_labels(staged_labels, parents, policy)),
            Parsing([path for path in paths if lyrl2004.split_of(path) == TRAIN], reader, None, tally=TermTally),
            Inflating(to_inflate(paths, session.cores(spark)) if ranges is not None else [],
                      storage.join(staging, "inflated"))])
        inflated = {each.source: each.path for each in staged if each.path is not None}
        terms = weighting.vocabulary_of([tally.counts for tally in counted if len(tally.counts)])
        load_labels = partial(staged_label_index, staged_labels)
        if weighing is not None:
            weights = planned_weights(weighing.config, terms, sum(tally.documents for tally in counted))
    convert = as_term_ids(terms["term"].combine_chunks()) if terms is not None else None

    def labelled(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        labels = load_labels()
        for batch in batches:
            attached = labels.attach(batch)
            yield attached if convert is None else convert(attached)

    tee = None if weights is None else WeightedParts(weighing.directory, weights)
    documents = Parsing(paths, reader, storage.join(staging, "tokens"),
                        RECORD_SCHEMA if terms is None else TERM_ID_RECORD_SCHEMA,
                        tally=lambda: LabelledTally(load_labels), ranges=ranges, then=labelled, tee=tee,
                        inflated=inflated)
    if terms is None:  # the qrels' task first, beside the token files' tasks
        (assignments, qrels_tallies), (parsed, tallies) = parse_together(spark, [qrels_parsing, documents])
    else:
        [(parsed, tallies)] = parse_together(spark, [documents])

    @functools.cache
    def qrels_lines() -> DataFrame:
        """The qrels lines as a table: as their task staged them, or parsed again (once) where it staged only their
        index.
        """
        return assignments if assignments is not None else parse_together(spark, [qrels_parsing])[0][0]

    if tree is None:  # no list of the set's codes: its categories are the codes the qrels assign
        good = qrels_lines().filter(F.col("reason").isNull())
        tree = lyrl2004.flat_hierarchy({r.category: r.category for r in good.select("category").distinct().collect()})
    names = dict(tree.descriptions)
    if corpus.topic_names:
        names.update(lyrl2004.load_topic_names(storage.read_text(spark, corpus.topic_names)))
    records = mark_duplicates(parsed)
    all_parts = sorted(corpus.test_parts) == [0, 1, 2, 3]
    extra = {"general": lambda: _assignment_checks(qrels_lines(), records, all_parts), "ignored_files": ignored,
             "terms": terms, "clean": lambda: _clean(parsed, tallies, qrels_tallies, storage.join(staging, "tokens")),
             "category_set": category_set, "weighted": None if weights is None else (weights, tallies),
             "hierarchy_closure": {"policy": policy, "documents_not_closed": tallies[0].not_closed if tallies else
                                   count_not_closed(qrels_lines().filter(F.col("reason").isNull()), dict(parents))}}
    return records, Categories(list(tree.categories), names, dict(parents)), extra


def _assignment_checks(assignments: DataFrame, records: DataFrame, all_parts: bool) -> dict:
    """What the general path of a LYRL2004 ingest reports of the qrels lines ``assignments`` against the parsed
    ``records``: every line, the rejected ones and, with a subset of the test parts, those for the parts left out.
    With every test part read, a qrels line for a document not among them is an error; with a subset, lines for the
    parts left out are expected and only counted.
    """
    document_ids = records.filter(F.col("reason").isNull()).select("doc_id")
    unknown_doc = assignments.filter(F.col("reason").isNull()).join(document_ids, "doc_id", "left_anti")
    assignment_rejects = assignments.filter(F.col("reason").isNotNull())
    if all_parts:
        assignment_rejects = assignment_rejects.unionByName(unknown_doc.withColumn(
            "reason", F.lit("qrels line for a document not among the accepted documents of the token files")
        ))
    return {"assignments": assignments, "assignment_rejects": assignment_rejects,
            "unread_assignments": None if all_parts else unknown_doc}


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

