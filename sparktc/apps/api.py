"""The Python API: what the jobs do, from a notebook (Jupyter, Databricks) or any program holding a SparkSession.

>>> import sparktc
>>> result = sparktc.run_pipeline(spark, "conf/synthetic.toml", "runs/notebook", verbose=False,
...                               overrides=["synthesize.documents=3000", "synthesize.train_documents=1000"])
>>> round(result.metrics["micro_f1"], 4)  # doctest: +SKIP
>>> result.per_category().nsmallest(5, "F1")  # doctest: +SKIP
>>> model = sparktc.load_model(spark, result.model)
>>> predictions = sparktc.classify(model, spark.createDataFrame([("d1", "oil prices rose")], ["doc_id", "text"]))

:func:`run_pipeline` is the pipeline job (``jobs/pipeline.py``) on the caller's session: the same checks before any
Spark work (the configuration, ``output``), the same hold on the output, the same stages, manifests and run record
(:mod:`sparktc.apps.recording`). :func:`classify` is classify's code over a DataFrame instead of files.

Every argument is checked at the door, as the command line checks its flags: a wrong type or value, or a column of
the documents of a wrong type, is one :class:`sparktc.errors.SparktcError` naming it before any Spark job. So is a
local session whose workers would start a Python that cannot run sparktc's tasks
(:func:`sparktc.runtime.session.check_workers_python`), and a Spark Connect session whose server does not answer
within 15 s (:func:`sparktc.runtime.session.check_server`).

In a notebook, a :class:`RunResult` and a model show themselves (``_repr_html_``): the headline metrics, the
decision rule, the report's figures inline and a link to ``report.md``; their plain ``repr`` is one line.
``verbose=False`` keeps a run's stage lines and per-category table out of the cell, leaving its progress line
(:mod:`sparktc.runtime.progress`: in a notebook's kernel, one line drawn in place).
"""

from __future__ import annotations

import html
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext, redirect_stdout
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sparktc.apps.classify import (
    NO_ID,
    NO_TERMS,
    NO_TEXT,
    NOT_FINITE,
    REPEATED_INDICES,
    UNSORTED_INDICES,
    ClassifyError,
    check_texts,
    check_top_k,
    null_entries,
    outside_terms,
    predict,
    unequal_lengths,
    weighted,
)
from sparktc.apps.pipeline import check_stages, run_recorded
from sparktc.corpora.formats import TABLE
from sparktc.corpora.registry import FORMATS
from sparktc.corpora.table import columns_problem
from sparktc.errors import InputError
from sparktc.evaluation.notebook import Evaluation
from sparktc.evaluation.report import FIGURES
from sparktc.experiment.bundle import MODEL, MODEL_SETTINGS, Bundle, load_bundle
from sparktc.experiment.config import Config, ConfigError, check_overrides, checked, load_config
from sparktc.experiment.tables import mark_duplicates
from sparktc.filesystem import absolute
from sparktc.models.registry import describe
from sparktc.runtime import storage
from sparktc.runtime.session import check_server, check_settings, check_workers_python
from sparktc.tracking.record import RunRecord
from sparktc.tracking.store_probe import check_tracking
from sparktc.validation import check_flag, check_path, check_strings

__all__ = ["RunResult", "classify", "load_model", "run_pipeline"]


@dataclass(frozen=True, repr=False)
class RunResult:
    """A finished run: where it wrote, its record (:class:`sparktc.tracking.record.RunRecord`), the stages'
    manifests, ``metrics.json`` as a dict and its reports as read once when the run ended (``evaluation``: the
    metrics empty and no evaluation when the run did not evaluate).
    """

    output: str
    record: RunRecord
    manifests: list[dict[str, Any]]
    metrics: dict[str, Any]
    evaluation: Evaluation | None = None

    @property
    def model(self) -> str:
        """The run's model bundle, for :func:`load_model`."""
        return storage.join(self.output, MODEL)

    @property
    def figures(self) -> list[str]:
        """The paths of the report's figures (PNG images in the output), in the report's order; none when the run
        did not evaluate.
        """
        return list(self.evaluation.figures) if self.evaluation is not None else []

    def per_category(self) -> pd.DataFrame:
        """The run's per-category table (``per_category.csv``) as a pandas DataFrame, one row per category:
        ``category, name, train_positives, test_positives, TP, FP, FN, TN, P, R, F1`` and ``averaged`` (whether
        the headline averages count it); :class:`sparktc.errors.InputError` when the run did not evaluate.
        """
        if self.evaluation is None:
            raise InputError(f"the run in {self.output} has no per-category table: it did not evaluate (run the "
                             "evaluate stage: stages=[] runs them all)")
        return self.evaluation.per_category()

    def __repr__(self) -> str:
        """One line: the output, the run, how it ended and its headline F1s (never the configuration)."""
        scores = (f", micro-F1 {self.metrics['micro_f1']:.4f}, macro-F1 {self.metrics['macro_f1']:.4f}"
                  if self.metrics.get("micro_f1") is not None and self.metrics.get("macro_f1") is not None else "")
        return (f"RunResult({self.output!r}: run {self.record.run_id}, exit status {self.record.exit_status}, "
                f"{len(self.record.stages)} stage{'' if len(self.record.stages) == 1 else 's'}{scores})")

    def _repr_html_(self) -> str:
        """The run in a notebook: its stages, then its headline metrics, decision rule, figures and a link to
        ``report.md`` (:meth:`sparktc.evaluation.notebook.Evaluation.html`).
        """
        stages = ", ".join(f"{stage['stage']} {stage['status']} {stage['seconds']:.1f} s"
                           for stage in self.record.stages)
        heading = (f"<p><b>sparktc run</b> {html.escape(self.record.run_id)} in <code>{html.escape(self.output)}"
                   f"</code>, exit status {self.record.exit_status}: {html.escape(stages)}</p>")
        return heading + (self.evaluation.html() if self.evaluation is not None else "<p>Not evaluated.</p>")


class _Nowhere(io.TextIOBase):
    """A text stream that keeps nothing: a quiet run's standard output."""

    def write(self, text: str) -> int:
        """Drop ``text``."""
        return len(text)


def _check_session(spark: Any) -> None:
    """ConfigError unless ``spark`` is a SparkSession (classic, or Spark Connect's, which is no subclass of it)."""
    if not isinstance(spark, SparkSession) and not type(spark).__module__.startswith("pyspark.sql.connect."):
        raise ConfigError(f"spark must be a SparkSession (SparkSession.builder.getOrCreate()); "
                          f"got {type(spark).__name__}")


def run_pipeline(spark: SparkSession, config: str | os.PathLike[str] | Mapping[str, Any] | Config | None,
                 output: str | os.PathLike[str], *, overrides: Sequence[str] = (), preset: str = "",
                 stages: Sequence[str] = (), force: bool = False, verbose: bool = True,
                 documents: DataFrame | None = None) -> RunResult:
    """Run the pipeline (or the stages ``stages``) on ``spark`` into ``output``.

    ``config`` is a TOML file's path, a packaged configuration's name (``"reuters21578"``: conf/NAME.toml, when no
    such file exists; :mod:`sparktc.packaged`), a dict of sections (``{"corpus": {"format": "synthetic"}, ...}``), a
    loaded :class:`~sparktc.experiment.config.Config` or None (the defaults); ``overrides`` are ``section.key=value``
    strings and ``preset`` a paper's method, as the jobs' ``--set`` and ``--preset``; ``stages`` names stages (a list:
    one string is not read as its letters). Stages whose manifests are current are skipped, as on the command line;
    ``force`` (True or False) recomputes them. ``verbose=False`` prints nothing on standard output (no stage lines,
    no per-category table) and leaves the progress line ([progress], on standard error) and warnings. A wrong
    argument or setting raises :class:`sparktc.errors.ConfigError` before any Spark work.

    ``documents`` is the corpus as a DataFrame, under ``corpus.format = "table"`` (:mod:`sparktc.corpora.table`)
    with neither corpus.path nor corpus.table: one row per document, its columns those [corpus.columns] names (an id
    of a string or integer type, a string text, labels as an array of strings or one string or integer each, a
    string split unless ``corpus.split_by`` draws it), checked from its schema; each row is checked as ingest reads
    it, as a table's are. Ingest runs again on every run (no manifest records a DataFrame's content).
    """
    _check_session(spark)
    if not isinstance(config, Config | Mapping) and config is not None:
        checked(check_path, "config", config, also=", a dict of sections, a Config or None")
    output = checked(check_path, "output", output)
    overrides, preset = check_overrides(overrides, preset)
    stages = checked(check_strings, "stages", stages)
    check_stages(stages)
    force = checked(check_flag, "force", force)
    verbose = checked(check_flag, "verbose", verbose)
    if documents is not None and not isinstance(documents, DataFrame):
        raise ConfigError(f"documents must be a Spark DataFrame or None; got {type(documents).__name__}")
    if not isinstance(config, Config):
        config = load_config(config, overrides, preset, documents=documents is not None)
    elif overrides or preset:
        raise ConfigError("overrides and preset apply to a configuration file or dict, not to a loaded Config")
    config = check_tracking(config)
    check_server(spark)
    if documents is not None:
        _check_documents(documents, config)
    check_workers_python(spark)
    check_settings(spark)  # what spark.conf.set gave the session
    with nullcontext() if verbose else redirect_stdout(_Nowhere()):
        manifests, record = run_recorded(spark, config, output, stages, force, option="output", documents=documents)
    evaluation = _evaluation(spark, record.output)
    return RunResult(record.output, record, manifests, evaluation.metrics if evaluation else {}, evaluation)


def _check_documents(documents: DataFrame, config: Config) -> None:
    """ConfigError unless ``documents`` can be read as the table corpus ``config`` describes: corpus.format =
    "table" with no other source, and the columns [corpus.columns] names, of their types (the schema alone).
    """
    corpus = config.corpus
    if FORMATS[corpus.format].assembly != TABLE:
        raise ConfigError(f"documents given with corpus.format = {corpus.format!r}: a DataFrame of documents is a "
                          "table corpus; set corpus.format = 'table'")
    for key in ("path", "table"):
        if getattr(corpus, key):
            raise ConfigError(f"documents given with corpus.{key} = {getattr(corpus, key)!r}: the corpus is read "
                              f"from one; remove corpus.{key}, or leave documents=None")
    types = {column.name: column.dataType.simpleString() for column in documents.schema.fields}
    problem = columns_problem(types, corpus, "documents", "corpus.columns")
    if problem:
        raise ConfigError(problem)


def _evaluation(spark: SparkSession, output: str) -> Evaluation | None:
    """The evaluation reports in ``output`` (the evaluate stage writes and publishes them together), None when it
    has none.
    """
    path = storage.join(output, "metrics.json")
    if not storage.exists(spark, path):
        return None
    metrics = json.loads(storage.read_text(spark, path))
    figures = {figure: storage.read_bytes(spark, figure) for figure in (storage.join(output, name) for name in FIGURES)
               if storage.exists(spark, figure)}
    return Evaluation(metrics, describe(metrics.get("method") or {}), storage.join(output, "report.md"),
                      storage.read_text(spark, storage.join(output, "per_category.csv")), figures)


def load_model(spark: SparkSession, path: str | os.PathLike[str]) -> Bundle:
    """The model bundle at ``path`` (a training run's ``OUTPUT/model``: :attr:`RunResult.model`), checked; with its
    training run's evaluation (:attr:`Bundle.evaluation`, shown in a notebook) when the bundle is still in the run's
    output and the run evaluated it: its ``metrics.json`` records the settings the bundle was trained with.
    """
    _check_session(spark)
    path = checked(check_path, "path", path)
    check_server(spark)
    check_workers_python(spark)
    bundle = load_bundle(spark, absolute(path))
    output, _, name = bundle.path.rstrip("/").rpartition("/")
    evaluation = _evaluation(spark, output) if name == MODEL and output else None
    if evaluation is None or {section: (evaluation.metrics.get("settings") or {}).get(section)
                              for section in MODEL_SETTINGS} != bundle.settings:
        return bundle
    return replace(bundle, evaluation=evaluation)


_INTEGERS = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_STRING = (lambda kind: isinstance(kind, T.StringType), "string")


def _array_of(*elements: type[T.DataType]) -> Callable[[T.DataType], bool]:
    return lambda kind: isinstance(kind, T.ArrayType) and isinstance(kind.elementType, elements)


#: The columns classify reads, each with its test of a column's type and the type expected in words. A doc_id may
#: be an integer, as a JSON Lines id may (it is read as its decimal string).
COLUMNS: dict[str, tuple[Callable[[T.DataType], bool], str]] = {
    "doc_id": (lambda kind: isinstance(kind, (T.StringType, *_INTEGERS)), "string or an integer type"),
    "labels": (_array_of(T.StringType), "array<string> (a list of category names per document)"),
    "text": _STRING,
    "title": _STRING,
    "indices": (_array_of(*_INTEGERS), "an array of integers (term ids from 0)"),
    "values": (_array_of(T.FloatType, T.DoubleType), "array<float> or array<double>"),
    "counts": (_array_of(*_INTEGERS), "an array of integers (term counts)"),
}


def _check_columns(documents: DataFrame) -> set[str]:
    """The names of the documents' columns, or ClassifyError naming the first column classify reads whose type is
    not the one it reads (the schema alone: no Spark job).
    """
    for field in documents.schema.fields:
        if field.name in COLUMNS:
            accepts, expected = COLUMNS[field.name]
            if not accepts(field.dataType):
                raise ClassifyError(f"the documents' column {field.name} is {field.dataType.simpleString()}; "
                                    f"expected {expected}")
    return set(documents.columns)


def _column(frame: DataFrame, name: str, otherwise: Any) -> Any:
    return F.col(name) if name in frame.columns else otherwise


def _without_id() -> Column:
    doc_id = F.col("doc_id").cast("string")
    return doc_id.isNull() | (doc_id == "")


def _vector_reason(columns: set[str], n_terms: int) -> Column:
    """Why a row of vectors is not classified (null if it is), the first that applies: no id, a null list or
    entry, lengths that differ, a value that is not finite, a term id outside the model, a term id given twice, term ids
    out of increasing order, no term at all.
    """
    lists = ["indices", "values", *(["counts"] if "counts" in columns else [])]
    reason = F.when(_without_id(), F.lit(NO_ID))
    for name in lists:
        reason = reason.when(F.col(name).isNull() | F.exists(name, lambda entry: entry.isNull()),
                             F.lit(null_entries(name)))
    for name in lists[1:]:
        reason = reason.when(F.size(name) != F.size("indices"),
                             F.format_string(unequal_lengths(name), F.size("indices"), F.size(name)))
    as_floats = F.col("values").cast("array<float>")  # the vectors' type: a double beyond its range is infinite
    return (reason.when(F.exists(as_floats, lambda v: F.isnan(v) | (F.abs(v) == float("inf"))), F.lit(NOT_FINITE))
            .when(F.exists("indices", lambda i: (i < 0) | (i >= n_terms)), F.lit(outside_terms(n_terms)))
            .when(F.size(F.array_distinct("indices")) < F.size("indices"), F.lit(REPEATED_INDICES))
            .when(F.col("indices") != F.array_sort("indices"), F.lit(UNSORTED_INDICES))
            .when(F.size("indices") == 0, F.lit(NO_TERMS)))


#: Where a DataFrame's row is: its partition and its place in it, from :func:`F.monotonically_increasing_id` (the
#: partition's index in the upper 31 bits, the row's in the lower 33), which keeps the DataFrame's order.
_ROW_BITS = 33


def _dataframe_row(first: Column) -> Column:
    position = first["line"]
    return F.format_string("row %d of partition %d of the DataFrame",
                           position.bitwiseAND((1 << _ROW_BITS) - 1) + 1, F.shiftright(position, _ROW_BITS))


def classify(model: Bundle, documents: DataFrame, top_k: int = 5) -> DataFrame:
    """Predictions for a DataFrame of documents: ``doc_id`` (string, or an integer type) with either ``text`` (and
    optionally ``title``), strings weighted as the training run weighted its documents, or ``indices`` (integers)
    and ``values`` (floats or doubles), a vector over the model's terms, ids from 0 (naive Bayes also reads
    ``counts``), taken as they are; ``labels`` (array of strings) is optional. A column of another type, or
    ``top_k`` other than an integer >= 1 (as the job's ``--top-k``), is refused before any Spark job.

    One row per document: doc_id, labels, predicted (category codes), predicted_names, top_categories, top_scores,
    and ``reason``, null for a classified document, else why it could not be, as the classify job would say it: a
    null or empty doc_id, a null text, a null list or entry, indices and values of different lengths, a value NaN
    or infinite, a term id outside the model, a term id given twice or out of increasing order (Spark ML's
    ``SparseVector`` refuses both too), no term of the model's vocabulary, or a doc id met in an earlier row
    (the DataFrame's order; the first of a doc id's rows that can be classified is, the later ones are not). Such a
    document keeps its row with no predictions, so nothing is dropped.
    """
    if not isinstance(model, Bundle):
        raise ConfigError(f"model must be a Bundle (sparktc.load_model's result); got {type(model).__name__}")
    if not isinstance(documents, DataFrame):
        raise ConfigError(f"documents must be a Spark DataFrame; got {type(documents).__name__}")
    top_k = check_top_k(top_k, "top_k")
    check_server(documents.sparkSession)  # before the schema, the first call to a Connect server
    columns = _check_columns(documents)
    if "doc_id" not in columns:
        raise ClassifyError(f"the documents have no doc_id column (columns: {', '.join(documents.columns)})")
    spark = documents.sparkSession
    labels = _column(documents, "labels", F.array().cast("array<string>"))
    if {"indices", "values"} <= columns:
        if model.scorer.column not in columns:
            raise ClassifyError(f"the model {model.path} scores the {model.scorer.column!r} column of the vectors, "
                                "which the documents lack")
        check_workers_python(spark)
        reason = _vector_reason(columns, len(model.terms))
        valid = reason.isNull()  # the lists cast only then: a term id over 2**31 would stop the job
        vectors = documents.select(
            F.col("doc_id").cast("string"), labels.alias("labels"),
            F.when(valid, F.col("indices").cast("array<int>")).alias("indices"),
            F.when(valid, F.col("values").cast("array<float>")).alias("values"),
            F.when(valid, _column(documents, "counts", F.lit(None)).cast("array<int>")).alias("counts"),
            F.lit("DataFrame").alias("source"), reason.alias("reason"))
    elif "text" in columns:
        check_texts(model, "texts of the DataFrame")
        check_workers_python(spark)
        records = documents.select(
            F.col("doc_id").cast("string"), labels.alias("labels"), F.col("text"),
            _column(documents, "title", F.lit(None)).cast("string").alias("title"),
            F.lit(None).cast("string").alias("tokens"), F.lit("DataFrame").alias("source"),
            F.lit(None).cast("int").alias("line"),
            F.when(_without_id(), F.lit(NO_ID)).when(F.col("text").isNull(), F.lit(NO_TEXT)).alias("reason"))
        vectors = weighted(spark, model, records).drop("line")
    else:
        raise ClassifyError("the documents need a text column, or indices and values columns (columns: "
                            f"{', '.join(documents.columns)})")
    # A doc id met again is not classified after its first classifiable row, as the job does; weighting keeps the
    # rows' partitions and order, so the position is the documents' row.
    vectors = mark_duplicates(vectors.withColumn("line", F.monotonically_increasing_id()), _dataframe_row)
    classified = predict(spark, model, vectors.filter(F.col("reason").isNull())
                         .select("doc_id", "labels", "indices", "values", "counts"), top_k)
    nothing = F.lit(None).cast(T.ArrayType(T.StringType()))
    unclassified = vectors.filter(F.col("reason").isNotNull()).select(
        "doc_id", "labels", nothing.alias("predicted"), nothing.alias("predicted_names"),
        nothing.alias("top_categories"), F.lit(None).cast(T.ArrayType(T.DoubleType())).alias("top_scores"), "reason")
    return classified.withColumn("reason", F.lit(None).cast("string")).unionByName(unclassified)
