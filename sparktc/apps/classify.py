"""Classify new documents with a model bundle: files -> ``OUTPUT/predictions`` and ``OUTPUT/rejects``.

The same code as the pipeline, step for step: files are read by Spark's ``binaryFile`` source and
parsed on the executors by the corpus readers; raw texts are analyzed by the tokenize stage's
code with the bundle's analyzer, stop words and stemmer (token files are taken as they are, as the tokenize
stage takes them); vectors are weighted by the weight stage's code under the training run's [weight] scheme,
with the bundle's vocabulary and each term's stored global factor (idf, or the supervised score, both from
the training documents: new documents change none of them); scores and decisions come from the evaluate
stage's code (:mod:`sparktc.models.scoring`, the run's :mod:`sparktc.models.decision` rule; PCut's thresholds
over the documents classified, as evaluate computes them over the test set). The bundle is broadcast; the driver
only sees counts and the first few rejected ids.

Documents with no term of the bundle's vocabulary, repeats of a doc id, and records the readers
reject are not classified: they go to ``rejects`` (source, line, doc_id, reason), and the job says
how many. Input without a single record is an error.

The job then says what it found (:func:`summary`, unless ``--quiet``): the first documents by doc id with the
categories assigned and their scores, and the documents assigned to each category, read back from the written
predictions by a limit and a Spark aggregation (the driver sees those rows and one count per category).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.records import Reject
from sparktc.corpora.registry import CLASSIFY_READERS
from sparktc.errors import InputError
from sparktc.experiment.bundle import Bundle, OnWorker
from sparktc.experiment.config import ConfigError, checked
from sparktc.experiment.tables import cut_of, mark_duplicates, parse_files
from sparktc.features.text import Analyzer, token_strings
from sparktc.features.weighting import GIVEN, term_vectors
from sparktc.models.scoring import predict_batch
from sparktc.runtime import storage
from sparktc.runtime.outputs import INCOMPLETE, Claim, check_output, claim
from sparktc.runtime.permissions import permission_errors
from sparktc.runtime.progress import cleared
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import CLASSIFY_VECTORS_SCHEMA, PREDICTIONS_SCHEMA
from sparktc.validation import check_integer

OUTPUT_FORMATS = ("parquet", "jsonl")
NO_TERMS = "no term of the model's vocabulary: nothing to classify by"
#: Why a row of a DataFrame (:func:`sparktc.apps.api.classify`) is not classified, where a reader would reject a
#: record of a file (its doc id or text missing: the readers say it in their format's words) or a vector.
NO_ID = "doc_id is null or empty: give every document an id"
NO_TEXT = "text is null: give every document its text"
NOT_FINITE = "values holds NaN or infinity (or a number beyond a float's range, 3.4e38): give finite values"
#: A vector's term ids as Spark ML's SparseVector takes them: each once, in increasing order. A repeated id would be
#: scored as given twice and an unsorted vector taken on trust by the scorer, so neither is guessed at.
REPEATED_INDICES = "indices name a term id more than once: give each term id once, with its values summed"
UNSORTED_INDICES = ("indices are not in increasing order: give the term ids in increasing order, their values in the "
                    "same order (as Spark ML's SparseVector takes them)")
SHOWN = 5
#: What the job's summary shows (:func:`summary`): the first documents, by doc id, and the most assigned categories.
SHOWN_DOCUMENTS = 10
SHOWN_CATEGORIES = 20


def null_entries(column: str) -> str:
    """Why a document whose vector ``column`` (indices, values, counts) is null or holds a null is not classified."""
    return f"{column} is null or holds a null: give every document a list (an empty one for a document without terms)"


def unequal_lengths(column: str) -> str:
    """Why a document whose ``column`` is not as long as its indices is not classified (a format string of the two
    lengths).
    """
    return f"indices and {column} differ in length (%d and %d): give one entry per term id"


def outside_terms(n_terms: int) -> str:
    """Why a document with a term id outside the model's ``n_terms`` terms is not classified."""
    return f"a term id outside the model's {n_terms:,} terms (0 to {n_terms - 1:,})"


class ClassifyError(InputError):
    """Input to classify that is missing, holds no documents, or cannot be read."""


def check_top_k(top_k: int, name: str = "--top-k") -> int:
    """``top_k``, or ConfigError naming it as ``name`` unless it is an integer (not a bool) >= 1."""
    return checked(check_integer, name, top_k, 1)


def check_arguments(input_format: str, output_format: str, top_k: int) -> None:
    """Refuse an unknown input or output format, or a top-K that is not an integer >= 1, before Spark starts."""
    if input_format not in CLASSIFY_READERS:
        raise ConfigError(f"--input-format {input_format!r} is not known; formats: {', '.join(CLASSIFY_READERS)}")
    if output_format not in OUTPUT_FORMATS:
        raise ConfigError(f"--format {output_format!r} is not known; formats: {', '.join(OUTPUT_FORMATS)}")
    check_top_k(top_k)


def _write(frame: DataFrame, path: str, output_format: str) -> None:
    writer = frame.write.mode("overwrite")
    writer.parquet(path) if output_format == "parquet" else writer.json(path)


def check_texts(bundle: Bundle, what: str) -> None:
    """Refuse to weight texts for a bundle that cannot: trained on given vectors, or counting titles apart."""
    if bundle.scheme == GIVEN:
        raise ClassifyError(f"the model bundle {bundle.path} was trained on given vectors (weight.scheme = {GIVEN!r}, "
                            f"a LIBSVM corpus): it cannot weight {what}; classify vectors over its features instead "
                            "(sparktc.apps.api.classify with indices and values columns), or run the pipeline with "
                            "them as the corpus's test.svm")
    if bundle.features.uses_title:
        raise ClassifyError(f"the model bundle {bundle.path} counts titles apart (tokenize.title_weight = "
                            f"{bundle.features.title_weight}, tokenize.title_terms = "
                            f"{str(bundle.features.title_terms).lower()}), and the {what} have no title; train "
                            "without those settings to classify them")


def weighted(spark: SparkSession, bundle: Bundle, records: DataFrame) -> DataFrame:
    """Records (doc_id, labels, text, title, tokens, source, line, reason) as vectors over the bundle's vocabulary
    (:data:`sparktc.schemas.CLASSIFY_VECTORS_SCHEMA`), a document without a term of it given :data:`NO_TERMS`.
    """
    shared = OnWorker.of(bundle)
    stop_words, stemmer, recipe = bundle.stop_words, bundle.stemmer, bundle.analyzer
    scheme, features = bundle.scheme, bundle.features

    def vectorize(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        terms, factors = shared.vocabulary
        analyzer = Analyzer(stop_words, stemmer, recipe)
        for batch in batches:
            given = batch.column("tokens")
            tokens = pc.if_else(pc.is_null(given), token_strings(analyzer, batch.column("text"), batch.column("title"),
                                                                   features), given)
            indices, values, counts = term_vectors(tokens, terms, factors, scheme)
            empty = pc.and_(pc.is_null(batch.column("reason")), pc.equal(pc.list_value_length(indices), 0))
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), batch.column("labels"), indices, values, counts, batch.column("source"),
                 batch.column("line"), pc.if_else(empty, pa.scalar(NO_TERMS), batch.column("reason"))],
                names=["doc_id", "labels", "indices", "values", "counts", "source", "line", "reason"])

    return records.select("doc_id", "labels", "text", "title", "tokens", "source", "line", "reason").mapInArrow(
        vectorize, from_arrow_schema(CLASSIFY_VECTORS_SCHEMA))


def vectors(spark: SparkSession, bundle: Bundle, path: str, input_format: str) -> DataFrame:
    """Every record under ``path`` as a vector over the bundle's vocabulary, or with the reason it is rejected."""
    check_texts(bundle, f"the {input_format} documents classify reads")
    return weighted(spark, bundle, parse_files(spark, [path], CLASSIFY_READERS[input_format]))


def predict(spark: SparkSession, bundle: Bundle, documents: DataFrame, top_k: int) -> DataFrame:
    """Predictions (doc_id, labels, predicted, predicted_names, top_categories, top_scores) of ``documents``
    (doc_id, labels, indices, values, counts): scores and decisions by the evaluate stage's code under the bundle's
    rule, PCut's thresholds over ``documents``.
    """
    scorer = OnWorker.of(bundle)
    cut = cut_of(bundle.rule, bundle.categories, documents, scorer, lambda: bundle.n_train)

    def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield predict_batch(batch, scorer.value, cut, top_k)

    names = F.create_map(*[F.lit(value) for pair in bundle.names.items() for value in pair])
    return documents.mapInArrow(score, from_arrow_schema(PREDICTIONS_SCHEMA)).withColumn(
        "predicted_names", F.transform("predicted", lambda code: F.element_at(names, code))) \
        .select("doc_id", "labels", "predicted", "predicted_names", "top_categories", "top_scores")


Scored = tuple[str, Sequence[str], Sequence[str], Sequence[float]]


def _scored(predicted: Sequence[str], top_categories: Sequence[str], top_scores: Sequence[float]) -> str:
    """The categories ``predicted``, the best first, each with its score when it is among the document's best ones
    (those that are not after them, in their order).
    """
    scores = dict(zip(top_categories, top_scores))
    ranked = sorted(predicted, key=lambda category: (category not in scores, -scores.get(category, 0.0)))
    return ", ".join(f"{category} {scores[category]:.2f}" if category in scores else category for category in ranked)


def summary_text(classified: int, first: Sequence[Scored], counts: Mapping[str | None, int], top_k: int,
                 shown_categories: int = SHOWN_CATEGORIES) -> str:
    """The job's summary of its ``classified`` documents' predictions: ``first`` (doc_id, predicted,
    top_categories, top_scores of the first documents by doc id) as a table, the assigned categories the best first,
    each with its score when it is among the ``top_k`` best (a document assigned none with its best one), then
    ``counts``, the documents assigned to each category (None: to none), the most assigned first (then by code), the
    first ``shown_categories`` of them.
    """
    assigned = sorted(((count, category) for category, count in counts.items() if category is not None),
                      key=lambda pair: (-pair[0], pair[1]))
    width = max([len("doc_id"), *(len(doc_id) for doc_id, *_ in first)])
    lines = [f"sparktc: {classified:,} documents classified; the first {len(first):,} by doc id, with the categories "
             f"assigned (and their scores when among the {top_k:,} best):", f"  {'doc_id':<{width}}  categories"]
    for doc_id, predicted, top_categories, top_scores in first:
        if predicted:
            shown = _scored(predicted, top_categories, top_scores)
        else:
            best = f"; best: {top_categories[0]} {top_scores[0]:.2f}" if top_categories else ""
            shown = f"(none{best})"
        lines.append(f"  {doc_id:<{width}}  {shown}")
    total = sum(count for count, _ in assigned)
    lines.append(f"sparktc: documents by category ({len(assigned):,} categories, {total:,} assignments; "
                 f"{counts.get(None, 0):,} documents assigned none):")
    if assigned:
        code_width = max(len("category"), *(len(category) for _, category in assigned[:shown_categories]))
        lines.append(f"  {'category':<{code_width}}  documents")
        lines += [f"  {category:<{code_width}}  {count:>9,}" for count, category in assigned[:shown_categories]]
        rest = assigned[shown_categories:]
        if rest:
            more = "1 more category" if len(rest) == 1 else f"{len(rest):,} more categories"
            lines.append(f"  ... {more}, {sum(count for count, _ in rest):,} assignments")
    return "\n".join(lines)


def summary(spark: SparkSession, predictions: str, output_format: str, classified: int, top_k: int,
            shown: int) -> str:
    """:func:`summary_text` of the ``classified`` documents' predictions written at ``predictions``: the first
    ``shown`` documents by doc id (a limit: the driver gets those rows) and the documents assigned to each category
    (a Spark aggregation: one count per category).
    """
    columns = "doc_id string, predicted array<string>, top_categories array<string>, top_scores array<double>"
    frame = (spark.read.parquet(predictions) if output_format == "parquet"
             else spark.read.schema(columns).json(predictions)).select("doc_id", "predicted", "top_categories",
                                                                      "top_scores")
    first = [(row.doc_id, row.predicted, row.top_categories, row.top_scores)
             for row in frame.orderBy("doc_id").limit(shown).collect()]
    counts = {row.category: row["count"] for row in
              frame.select(F.explode_outer("predicted").alias("category")).groupBy("category").count().collect()}
    return summary_text(classified, first, counts, top_k)


def classify(spark: SparkSession, bundle: Bundle, path: str, output: str, input_format: str = "jsonl",
             output_format: str = "parquet", top_k: int = 5, shown: int = 0) -> StageReport:
    """Classify the documents under ``path`` into ``output`` (checked and held as by the job:
    :mod:`sparktc.runtime.outputs`); see :func:`classify_into`.
    """
    output = check_output(output, {"--model": bundle.path, "--input": path}, "classify")
    with claim(output, "classify", spark) as held:
        return classify_into(spark, bundle, path, held, input_format, output_format, top_k, shown)


def classify_into(spark: SparkSession, bundle: Bundle, path: str, held: Claim, input_format: str = "jsonl",
                  output_format: str = "parquet", top_k: int = 5, shown: int = 0) -> StageReport:
    """Classify the documents under ``path`` into the held output's predictions (doc_id, labels, predicted,
    predicted_names, top_categories, top_scores); rejected records and documents without a vocabulary
    term into its rejects. Both are written in the run's staging directory and moved into the output
    when complete, replacing those of an earlier classify run there. ``shown`` > 0 prints :func:`summary` of the
    first ``shown`` documents (the job's default, :data:`SHOWN_DOCUMENTS`; 0 with ``--quiet``).
    """
    output = held.output
    check_arguments(input_format, output_format, top_k)
    if not storage.exists(spark, path):
        raise ClassifyError(f"no input at {path}; give a file or a directory of {input_format} files")
    staging = held.staging
    with stage(spark, "classify") as report:
        with permission_errors(ClassifyError, "leave it out of --input"):
            vectors(spark, bundle, path, input_format).write.mode("overwrite").parquet(storage.join(staging, "vectors"))
        # A doc id met again (in another file) is rejected after its first classifiable occurrence, as by ingest.
        staged = mark_duplicates(spark.read.parquet(storage.join(staging, "vectors")))
        counts = {row.reason: row["count"] for row in staged.groupBy(
            F.when(F.col("reason") == NO_TERMS, "no vocabulary term").when(F.col("reason").isNotNull(), "rejected")
            .alias("reason")).count().collect()}
        if not counts:
            raise ClassifyError(f"no documents in {path} (an empty directory or file, or blank lines only); "
                                f"give a file or a directory of {input_format} documents")
        documents = staged.filter(F.col("reason").isNull()).select("doc_id", "labels", "indices", "values", "counts")
        predictions = predict(spark, bundle, documents, top_k)
        _write(predictions, storage.join(staging, "predictions"), output_format)
        rejects = staged.filter(F.col("reason").isNotNull()).select("source", "line", "doc_id", "reason")
        _write(rejects, storage.join(staging, "rejects"), output_format)
        first = [Reject(r.source, r.line, r.doc_id, r.reason).message()
                 for r in rejects.orderBy("source", "line").limit(SHOWN).collect()]
        for name in ("predictions", "rejects"):
            storage.delete(spark, storage.join(output, name))  # the output is held and of kind classify: ours
            storage.rename(spark, storage.join(staging, name), storage.join(output, name))
        storage.delete(spark, storage.join(output, INCOMPLETE))  # the lock is held: no other run stages here
        report.rows_in = sum(counts.values())
        report.rows_out = counts.pop(None, 0)
        report.set_aside = counts
        if first:
            print(f"sparktc: {sum(counts.values()):,} records not classified, in {storage.join(output, 'rejects')}; "
                  "the first:\n  " + "\n  ".join(first), flush=True)
        report.details = {"bundle": bundle.path, "input": path, "input_format": input_format}
        if shown and report.rows_out:
            text = summary(spark, storage.join(output, "predictions"), output_format, report.rows_out, top_k, shown)
            with cleared():  # not after a progress line
                print(text, flush=True)
    return report
