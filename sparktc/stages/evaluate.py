"""Predict and evaluate: ``models`` x test ``vectors`` -> ``predictions``, ``contingency``, metrics and reports.

One pass over the test vectors (:mod:`sparktc.runtime.parts`): one Spark task per Parquet file of
the test split reads it with pyarrow, scores each Arrow batch as sparse X times dense W (shared)
plus b, assigns the categories whose score exceeds their threshold (or RCut's best;
:mod:`sparktc.models.scoring`, :mod:`sparktc.models.decision`), keeps the top-scoring categories,
writes its part of ``predictions``, and counts as it goes, per category, the documents labelled with
it, assigned it, and both, and sums the ranking measures. With ``evaluate.close_predictions`` (hierarchical
category sets only) it also counts, in the same pass, each document's predicted categories closed under the
hierarchy (each with its ancestors among the run's categories: :func:`sparktc.evaluation.metrics.ancestor_table`
applied to the positions of the categories a batch predicts). Only those sums, a few numbers per category,
come back to the driver, which builds the contingency table (TP, FP, FN, TN per category), and
:mod:`sparktc.evaluation.summary` averages them over every category set (REFERENCE.md section 6) and
:mod:`sparktc.evaluation.report` renders ``report.md`` (with the run's method, thresholding and search
space), ``per_category.csv`` and the plots, and :mod:`sparktc.evaluation.appendix_tables` the per-category
contingency tables in the layout of LYRL2004's online appendix 15, ``contingency_tables.txt``. The
as-assigned numbers are the headline; the closed ones are ``metrics.json``'s ``closed`` and a section of
``report.md``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.records import TEST, TRAIN
from sparktc.corpora.registry import corpus_title
from sparktc.evaluation.appendix_tables import CONTINGENCY_TABLES_TXT, contingency_tables_text
from sparktc.evaluation.category_sets import category_subsets
from sparktc.evaluation.counting import Counts, closure_of, contingency_table, count_batch, ranking_names
from sparktc.evaluation.figures import drawn_together, figure_file, preload
from sparktc.evaluation.report import (
    F1_BY_BAND_PNG,
    F1_BY_TRAINING_FREQUENCY_PNG,
    FIGURE_FILES,
    per_category_csv,
    plot_f1_by_band,
    plot_f1_by_training_frequency,
    report_markdown,
)
from sparktc.evaluation.summary import assemble, to_builtin
from sparktc.experiment.bundle import MODEL, MODEL_SETTINGS, NETWORK
from sparktc.experiment.config import Config, EvaluateConfig
from sparktc.experiment.tables import cut_of, term_order
from sparktc.models.decision import decision_record, rule_title
from sparktc.models.registry import describe
from sparktc.models.scoring import Scorer, predict_batch
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import (
    ROWS_PER_FILE,
    count_rows,
    map_parts,
    parquet_files,
    read_batches,
    read_small,
    write_parts,
)
from sparktc.runtime.resources import explained_failures, out_of_memory
from sparktc.runtime.runner import Stage, Tables, read_manifest
from sparktc.runtime.shared import Shared
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import PREDICTIONS_SCHEMA, VECTORS_SCHEMA

#: The configuration sections ``metrics.json`` records, and so the ones evaluate's outputs depend on
#: (all but [synthesize], recorded by the corpus it wrote, and [spark], which does not change results).
SETTINGS = (*MODEL_SETTINGS, "evaluate")

VECTOR_COLUMNS = ["doc_id", "labels", "indices", "values", "counts"]
#: ``vectors`` as Spark reads it: the files' columns and the ``split`` of their directories.
VECTORS_READ_TYPE = from_arrow_schema(VECTORS_SCHEMA).add("split", "string")
#: The ``models`` columns scoring reads (:meth:`sparktc.models.scoring.Scorer.of`, the cut).
MODEL_COLUMNS = ("category", "method", "weights", "bias", "threshold", "train_positives", "features")
CATEGORY_COLUMNS = ["category", "name", "parent", "train_positives"]
COUNT_COLUMNS = ["test_positives", "tp", "fp", "fn", "tn"]
#: ``contingency``: the categories table's columns, then the counts (never null).
CONTINGENCY_SCHEMA = pa.schema(
    [pa.field(name, pa.string()) for name in CATEGORY_COLUMNS[:3]] + [pa.field("train_positives", pa.int64())]
    + [pa.field(name, pa.int64(), nullable=False) for name in COUNT_COLUMNS]
)
#: The report files evaluate writes into the run's output (:func:`write_reports`), which MLflow logs as the run's
#: artifacts (:mod:`sparktc.tracking.mlflow_run`); each plot as PNG, SVG and PDF.
REPORTS = ("metrics.json", "report.md", "per_category.csv", CONTINGENCY_TABLES_TXT, *FIGURE_FILES)
#: Rows per Arrow batch a scoring task reads: Spark's setting for Arrow batches (<= 0: no limit, a file's worth).
BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"


def predict(spark: SparkSession, config: Config, tables: Tables) -> tuple[pd.DataFrame, Counts]:
    """Score the test vectors with the models and write ``predictions``, counting them in the same
    pass: the categories (category, name, parent, train_positives; by category) and their counts, with
    ``evaluate.close_predictions`` those of the predictions closed under the hierarchy too (InputError
    before any scoring when the categories have no hierarchy: :func:`closure_of`).
    """
    rule = config.train.decision_rule()
    # Category and vocabulary sized: read with pyarrow on the driver, no Spark job.
    categories = read_small(tables.input("categories"), CATEGORY_COLUMNS).sort_by("category").to_pandas()
    ancestors = closure_of(categories) if config.evaluate.close_predictions else None
    models = read_small(tables.input("models"), list(MODEL_COLUMNS)).sort_by("category").to_pandas()
    n_terms = count_rows(tables.input("vocabulary"))
    scorer = Scorer.of(models, n_terms, rule, storage.join(tables.input("vectors"), f"split={TRAIN}"),
                       storage.join(tables.input(MODEL), NETWORK),
                       term_order(tables.input("term_ranks"), config))
    shared = Shared(scorer)
    # Read with its schema, so Spark infers none (a job of its own); only PCut's thresholds scan it.
    vectors = spark.read.schema(VECTORS_READ_TYPE).parquet(tables.input("vectors"))
    test = vectors.filter(F.col("split") == TEST).select(*VECTOR_COLUMNS)
    cut = cut_of(rule, models, test, shared, lambda: vectors.filter(F.col("split") == TRAIN).count())
    top_k, ks = config.evaluate.top_scores, config.evaluate.ranks
    codes = pa.array(categories["category"].tolist(), type=pa.string())
    none = Counts.zero(len(codes), len(ranking_names(ks)), closed=ancestors is not None)
    directory = tables.output("predictions")
    batch_rows = int(spark.conf.get(BATCH_ROWS, "10000"))
    batch_rows = batch_rows if batch_rows > 0 else ROWS_PER_FILE
    # The columns a prediction needs: the weights' column the scorer reads, not both (reading ``counts`` besides
    # ``values`` was 0.11 of 0.26 CPU-s per 100,000 test documents).
    columns = list(dict.fromkeys(["doc_id", "labels", "indices", scorer.column]))

    def score(index: int, path: str) -> Counts:
        """Predictions of one file of test vectors, written as part ``index``; their counts."""
        counted: list[Counts] = []

        def predicted() -> Iterator[pa.RecordBatch]:
            for batch in read_batches(path, columns, batch_rows):
                try:
                    predictions = predict_batch(batch, shared.value, cut, top_k)
                    counted.append(count_batch(predictions, codes, ks, ancestors))
                except MemoryError:
                    raise out_of_memory("evaluate", f"scoring {len(batch)} test documents") from None
                yield predictions

        try:
            inject("score")  # once per task, whether or not its file has rows
        except MemoryError:
            raise out_of_memory("evaluate", f"scoring the test documents of {path}") from None
        write_parts(predicted(), PREDICTIONS_SCHEMA, directory, index)
        return sum(counted, none)

    storage.delete(spark, directory)  # parts of an earlier run there are not overwritten by name
    split = storage.join(tables.input("vectors"), f"split={TEST}")
    files = parquet_files(split) if storage.exists(spark, split) else []
    with explained_failures("evaluate"):
        counts = map_parts(spark, files, score, [directory])
    if not files:  # no test document: an empty table all the same
        write_parts([], PREDICTIONS_SCHEMA, directory, 0)
    return categories, sum(counts, none)


def closed_record(categories: pd.DataFrame, counts: Counts, subsets: dict[str, list[str]],
                  settings: EvaluateConfig) -> dict:
    """``metrics.json``'s ``closed``: the headline record (:func:`sparktc.evaluation.summary.assemble`: micro and
    macro averages over ``evaluate.average_over``, every category set, the frequency bands, the per-category
    rows) over the predictions closed under the hierarchy (:meth:`Counts.closed`), over the same sets and with
    the same 0/0 convention. The ranking measures rate the top-scoring categories, which closing does not
    change, so they are the headline's only.
    """
    record, _ = assemble(contingency_table(categories, counts.closed()), subsets, settings.average_over,
                         settings.zero_division, settings.bands, {})
    del record["ranking"]
    return record


def write_reports(spark: SparkSession, tables: Tables, metrics: dict, table) -> None:
    """metrics.json, report.md, per_category.csv, contingency_tables.txt and the two plots (each in every format,
    titled with the corpus, category set and decision rule), through the Hadoop file system (local, HDFS or S3 paths
    alike).
    """
    storage.write_text(spark, tables.output("metrics.json"), json.dumps(to_builtin(metrics), indent=2) + "\n")
    report = report_markdown(metrics, table, describe(metrics.get("method") or {}))
    storage.write_text(spark, tables.output("report.md"), report)
    storage.write_text(spark, tables.output("per_category.csv"), per_category_csv(table))
    storage.write_text(spark, tables.output(CONTINGENCY_TABLES_TXT), contingency_tables_text(metrics, table))
    label = f"{corpus_title(metrics['settings']['corpus'])}; {rule_title(metrics)}"
    plots = drawn_together([lambda: plot_f1_by_training_frequency(table, label),
                            lambda: plot_f1_by_band(metrics["bands"], label)])
    for png, plot in zip((F1_BY_TRAINING_FREQUENCY_PNG, F1_BY_BAND_PNG), plots, strict=True):
        for fmt, data in plot.items():
            storage.write_bytes(spark, tables.output(figure_file(png, fmt)), data)


def _from_train(spark: SparkSession, tables: Tables) -> dict:
    """``metrics.json``'s ``training_decisions``: what the train stage found its rule does on the training documents
    (:func:`sparktc.models.decision.training_decisions`), from its manifest, nothing for PCut and RCut; and
    ``cv_micro_f1``, the micro-F1 of its cross-validated decisions there, when it cross-validated.
    """
    details = (read_manifest(spark, tables.root, "train") or {}).get("details") or {}
    return {key: details[key] for key in ("training_decisions", "cv_micro_f1") if details.get(key)}


def format_table(metrics: dict, table) -> str:
    """The per-category table and the averages as evaluate prints them; with closed predictions, their averages
    on a line of their own.
    """
    lines = [f"{'category':<12} {'train+':>7} {'test+':>7} {'TP':>6} {'FP':>6} {'FN':>6} {'P':>6} {'R':>6} {'F1':>6}"]
    for row in table.itertuples():
        scores = f"{row.precision:6.3f} {row.recall:6.3f} {row.f1:6.3f}" + ("" if row.averaged else "  (not averaged)")
        lines.append(f"{row.category:<12} {row.train_positives:>7} {row.test_positives:>7} "
                     f"{row.tp:>6} {row.fp:>6} {row.fn:>6} {scores}")
    lines.append(
        f"micro P {metrics['micro_precision']:.4f}  R {metrics['micro_recall']:.4f}  F1 {metrics['micro_f1']:.4f}   "
        f"macro P {metrics['macro_precision']:.4f}  R {metrics['macro_recall']:.4f}  F1 {metrics['macro_f1']:.4f}   "
        f"over {metrics['n_categories']} categories ({metrics['averaged_over']}); {metrics['zero_division_convention']}"
    )
    if "closed" in metrics:
        closed = metrics["closed"]
        lines.append(
            f"closed under the hierarchy: micro P {closed['micro_precision']:.4f}  R {closed['micro_recall']:.4f}  "
            f"F1 {closed['micro_f1']:.4f}   macro P {closed['macro_precision']:.4f}  R {closed['macro_recall']:.4f}  "
            f"F1 {closed['macro_f1']:.4f}")
    return "\n".join(lines)


def evaluate(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """The evaluate stage (module docstring): the test documents' ``predictions``, the ``contingency`` table, the
    metrics and the reports; the table is printed.
    """
    settings = config.evaluate
    with stage(spark, "evaluate") as report:
        # The plotting libraries load while the test documents are scored: the plots come after, on the driver
        # alone, and their imports (matplotlib's backends, fontTools) were 0.6 of their 2 CPU-s.
        loading = threading.Thread(target=preload, name="sparktc-preload-plots", daemon=True)
        loading.start()
        categories, counts = predict(spark, config, tables)
        contingency = contingency_table(categories, counts)
        # A row per category: written on the driver, as rank's term_ranks are, not by a Spark job of its own.
        write_parts(pa.Table.from_pandas(contingency[CONTINGENCY_SCHEMA.names], CONTINGENCY_SCHEMA,
                                         preserve_index=False).to_batches(), CONTINGENCY_SCHEMA,
                    tables.output("contingency"), 0)
        subsets = category_subsets(contingency, config.corpus.format, settings.subsets)
        metrics, table = assemble(contingency, subsets, settings.average_over, settings.zero_division,
                                  settings.bands, counts.ranking_averages(settings.ranks))
        per_category_rows = metrics.pop("per_category")
        metrics.update({
            "corpus": config.corpus.format,
            "test_documents": counts.documents,
            **decision_record(config.as_dict()["train"], config.as_dict()["tune"]),
            "settings": {section: config.as_dict()[section] for section in SETTINGS},
            **({"closed": closed_record(categories, counts, subsets, settings)} if settings.close_predictions else {}),
            **_from_train(spark, tables),
            "per_category": per_category_rows,
        })
        loading.join()
        write_reports(spark, tables, metrics, table)
        print(format_table(metrics, table), flush=True)
        report.rows_in = report.rows_out = counts.documents
        report.details = {k: metrics[k] for k in ("micro_f1", "macro_f1", "n_categories")}
    return report


STAGE = Stage(
    "evaluate", evaluate, reads=("models", MODEL, "vocabulary", "term_ranks", "vectors", "categories"),
    writes=("predictions", "contingency", *REPORTS),
    sections=SETTINGS,
)
