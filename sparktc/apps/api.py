"""The Python API: what the jobs do, from a notebook (Jupyter, Databricks) or any program holding a SparkSession.

>>> import sparktc
>>> result = sparktc.run_pipeline(spark, "conf/synthetic.toml", "runs/notebook",
...                               overrides=["synthesize.documents=3000", "synthesize.train_documents=1000"])
>>> round(result.metrics["micro_f1"], 4)  # doctest: +SKIP
>>> model = sparktc.load_model(spark, result.model)
>>> predictions = sparktc.classify(model, spark.createDataFrame([("d1", "oil prices rose")], ["doc_id", "text"]))

:func:`run_pipeline` is the pipeline job (``jobs/pipeline.py``) on the caller's session: the same checks before any
Spark work (the configuration, ``output``), the same hold on the output, the same stages, manifests and run record
(:mod:`sparktc.apps.recording`). :func:`classify` is classify's code over a DataFrame instead of files.

A local session whose workers would start a Python that cannot run sparktc's tasks is refused before the first Spark
job (:func:`sparktc.runtime.session.check_workers_python`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sparktc.apps.classify import NO_TERMS, ClassifyError, check_texts, predict, weighted
from sparktc.apps.pipeline import run_recorded
from sparktc.experiment.bundle import MODEL, Bundle, load_bundle
from sparktc.experiment.config import Config, ConfigError, load_config
from sparktc.filesystem import absolute
from sparktc.runtime import storage
from sparktc.runtime.session import check_workers_python
from sparktc.tracking.record import RunRecord

__all__ = ["RunResult", "classify", "load_model", "run_pipeline"]


@dataclass(frozen=True)
class RunResult:
    """A finished run: where it wrote, its record (:class:`sparktc.tracking.record.RunRecord`), the stages'
    manifests and ``metrics.json`` as a dict (empty when the run did not evaluate).
    """

    output: str
    record: RunRecord
    manifests: list[dict[str, Any]]
    metrics: dict[str, Any]

    @property
    def model(self) -> str:
        """The run's model bundle, for :func:`load_model`."""
        return storage.join(self.output, MODEL)


def run_pipeline(spark: SparkSession, config: str | Mapping[str, Any] | Config | None, output: str, *,
                 overrides: Sequence[str] = (), preset: str = "", stages: Sequence[str] = (),
                 force: bool = False) -> RunResult:
    """Run the pipeline (or the stages ``stages``) on ``spark`` into ``output``.

    ``config`` is a TOML file, a dict of sections (``{"corpus": {"format": "synthetic"}, ...}``) or a loaded
    :class:`~sparktc.experiment.config.Config`; ``overrides`` are ``section.key=value`` strings and ``preset`` a paper's
    method, as the jobs' ``--set`` and ``--preset``. Stages whose manifests are current are skipped, as on the command
    line; ``force`` recomputes them. A wrong setting raises :class:`sparktc.errors.ConfigError` before any Spark work.
    """
    if not isinstance(config, Config):
        config = load_config(config, overrides, preset)
    elif overrides or preset:
        raise ConfigError("overrides and preset apply to a configuration file or dict, not to a loaded Config")
    check_workers_python(spark)
    manifests, record = run_recorded(spark, config, output, stages, force)
    return RunResult(record.output, record, manifests, _metrics(spark, record.output))


def _metrics(spark: SparkSession, output: str) -> dict[str, Any]:
    path = storage.join(output, "metrics.json")
    return json.loads(storage.read_text(spark, path)) if storage.exists(spark, path) else {}


def load_model(spark: SparkSession, path: str) -> Bundle:
    """The model bundle at ``path`` (a training run's ``OUTPUT/model``: :attr:`RunResult.model`), checked."""
    check_workers_python(spark)
    return load_bundle(spark, absolute(path))


def _column(frame: DataFrame, name: str, otherwise: Any) -> Any:
    return F.col(name) if name in frame.columns else otherwise


def classify(model: Bundle, documents: DataFrame, top_k: int = 5) -> DataFrame:
    """Predictions for a DataFrame of documents: ``doc_id`` with either ``text`` (and optionally ``title``), weighted as
    the training run weighted its documents, or ``indices`` and ``values`` (a vector over the model's terms, ids from
    0; naive Bayes also reads ``counts``), taken as they are; ``labels`` (array of strings) is optional.

    One row per document: doc_id, labels, predicted (category codes), predicted_names, top_categories, top_scores,
    and ``reason``, null for a classified document, else why it could not be (no term of the model's vocabulary, a
    term id outside it): such a document keeps its row with no predictions, so nothing is dropped.
    """
    if top_k < 1:
        raise ClassifyError(f"top_k = {top_k}: expected an integer >= 1")
    columns = set(documents.columns)
    if "doc_id" not in columns:
        raise ClassifyError(f"the documents have no doc_id column (columns: {', '.join(documents.columns)})")
    spark = documents.sparkSession
    check_workers_python(spark)
    labels = _column(documents, "labels", F.array().cast("array<string>"))
    if {"indices", "values"} <= columns:
        n_terms = len(model.terms)
        if model.scorer.column not in columns:
            raise ClassifyError(f"the model {model.path} scores the {model.scorer.column!r} column of the vectors, "
                                "which the documents lack")
        outside = F.exists("indices", lambda i: (i < 0) | (i >= n_terms))
        vectors = documents.select(
            F.col("doc_id").cast("string"), labels.alias("labels"),
            F.col("indices").cast("array<int>"), F.col("values").cast("array<float>"),
            _column(documents, "counts", F.lit(None)).cast("array<int>").alias("counts"),
            F.when(outside, F.lit(f"a term id outside the model's {n_terms:,} terms (0 to {n_terms - 1:,})"))
            .when(F.size("indices") == 0, F.lit(NO_TERMS)).alias("reason"))
    elif "text" in columns:
        check_texts(model, "texts of the DataFrame")
        records = documents.select(
            F.col("doc_id").cast("string"), labels.alias("labels"), F.col("text").cast("string"),
            _column(documents, "title", F.lit(None)).cast("string").alias("title"),
            F.lit(None).cast("string").alias("tokens"), F.lit("DataFrame").alias("source"),
            F.lit(None).cast("int").alias("line"), F.lit(None).cast("string").alias("reason"))
        vectors = weighted(spark, model, records)
    else:
        raise ClassifyError("the documents need a text column, or indices and values columns (columns: "
                            f"{', '.join(documents.columns)})")
    classified = predict(spark, model, vectors.filter(F.col("reason").isNull())
                         .select("doc_id", "labels", "indices", "values", "counts"), top_k)
    nothing = F.lit(None).cast(T.ArrayType(T.StringType()))
    unclassified = vectors.filter(F.col("reason").isNotNull()).select(
        "doc_id", "labels", nothing.alias("predicted"), nothing.alias("predicted_names"),
        nothing.alias("top_categories"), F.lit(None).cast(T.ArrayType(T.DoubleType())).alias("top_scores"), "reason")
    return classified.withColumn("reason", F.lit(None).cast("string")).unionByName(unclassified)
