"""Predict and evaluate: ``models`` x test ``vectors`` -> ``predictions``, ``contingency``, metrics and reports.

One pass over the test vectors (:mod:`sparktc.runtime.parts`): one Spark task per Parquet file of
the test split reads it with pyarrow, scores each Arrow batch as sparse X times dense W (broadcast)
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from sparktc.corpora.records import TEST, TRAIN
from sparktc.errors import InputError
from sparktc.evaluation.appendix_tables import CONTINGENCY_TABLES_TXT, contingency_tables_text
from sparktc.evaluation.category_sets import category_subsets
from sparktc.evaluation.metrics import ancestor_table
from sparktc.evaluation.ranking import ranking_measures
from sparktc.evaluation.report import per_category_csv, plot_f1_by_band, plot_f1_by_training_frequency, report_markdown
from sparktc.evaluation.summary import assemble, to_builtin
from sparktc.integer_sets import intersect, isin, unique
from sparktc.models.decision import Cut, DecisionRule, decision_record
from sparktc.models.scoring import Scorer, predict_batch
from sparktc.models.thresholds import pcut_counts
from sparktc.runtime import storage
from sparktc.runtime.bundle import MODEL, MODEL_SETTINGS, NETWORK
from sparktc.runtime.config import Config, EvaluateConfig
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
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import PREDICTIONS_SCHEMA
from sparktc.stages.rank import term_order

RANKING_MEASURES = ("P", "R", "RP", "nDCG")
#: Per-document ranking measures are summed as integers in units of 2^-40, so the averages do
#: not depend on the order Spark adds them in (floating-point addition is not associative).
FIXED_POINT = float(2**40)
#: The configuration sections ``metrics.json`` records, and so the ones evaluate's outputs depend on
#: (all but [synthesize], recorded by the corpus it wrote, and [spark], which does not change results).
SETTINGS = (*MODEL_SETTINGS, "evaluate")

VECTOR_COLUMNS = ["doc_id", "labels", "indices", "values", "counts"]
#: The ``models`` columns scoring reads (:meth:`sparktc.models.scoring.Scorer.of`, the cut).
MODEL_COLUMNS = ("category", "method", "weights", "bias", "threshold", "train_positives", "features")
CATEGORY_COLUMNS = ["category", "name", "parent", "train_positives"]
COUNT_COLUMNS = ["test_positives", "tp", "fp", "fn", "tn"]
#: ``contingency``: the categories table's columns, then the counts (never null).
CONTINGENCY_SCHEMA = StructType(
    [StructField(name, StringType()) for name in CATEGORY_COLUMNS[:3]] + [StructField("train_positives", LongType())]
    + [StructField(name, LongType(), nullable=False) for name in COUNT_COLUMNS]
)
#: Rows per Arrow batch a scoring task reads: Spark's setting for Arrow batches (<= 0: no limit, a file's worth).
BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"


def pcut_thresholds_of_documents(test: DataFrame, shared, train_share: np.ndarray) -> np.ndarray:
    """PCut (REFERENCE.md section 5) over a DataFrame of vectors, scored by the broadcast scorer ``shared``
    and ranked in Spark: per category, the score of the document ranked just below the training share of
    the documents, so that share of documents scores above it (in memory:
    :func:`sparktc.models.thresholds.pcut_thresholds`)."""

    def long(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        scorer = shared.value
        for batch in batches:
            scores = scorer.scores(scorer.matrix(batch))
            yield pa.RecordBatch.from_pydict({
                "c": np.tile(np.arange(scores.shape[1], dtype=np.int32), scores.shape[0]), "score": scores.ravel()})

    n_documents = test.count()
    assigned = pcut_counts(train_share, n_documents)
    wanted = test.sparkSession.createDataFrame(
        [(int(c), int(m) + 1) for c, m in enumerate(assigned) if m < n_documents], "c int, r long")
    ranked = test.mapInArrow(long, "c int, score double").withColumn(
        "r", F.row_number().over(Window.partitionBy("c").orderBy(F.col("score").desc())))
    thresholds = np.full(len(train_share), -np.inf)
    for row in ranked.join(wanted, ["c", "r"]).select("c", "score").collect():
        thresholds[row.c] = row.score
    return thresholds


def cut_of(rule: DecisionRule, models: pd.DataFrame, documents: DataFrame, shared, n_train: Callable[[], int]) -> Cut:
    """How ``documents`` are decided (:meth:`sparktc.models.decision.DecisionRule.cut`): the models' own
    thresholds, RCut's k, or PCut's thresholds over ``documents``, each category's share being its training
    positives out of ``n_train()`` training documents (counted for PCut only)."""
    return rule.cut(models["threshold"].to_numpy(), lambda: pcut_thresholds_of_documents(
        documents, shared, models["train_positives"].to_numpy() / max(n_train(), 1)))


def ranking_names(ks: Sequence[int]) -> list[str]:
    """The ranking measures evaluate reports for the cut-offs ``ks``: P@K, R@K, RP@K, nDCG@K."""
    return [f"{measure}@{k}" for measure in RANKING_MEASURES for k in ks]


@dataclass(frozen=True)
class Counts:
    """What evaluate needs of a set of predictions, summed over its documents: per category (in the
    order counted) the documents labelled with it (``positives``), assigned it (``assigned``) and both
    (``tp``); the documents; and per ranking measure (:func:`ranking_names`) the sum of its
    per-document values, each rounded to an integer in units of 2^-40, so that sums do not depend on
    the order they are added in (floating-point addition is not associative). When predictions are
    closed under a hierarchy (``evaluate.close_predictions``), ``closed_assigned`` and ``closed_tp`` are
    ``assigned`` and ``tp`` over each document's closed predicted set (:meth:`closed`); None otherwise."""

    documents: int
    positives: np.ndarray
    assigned: np.ndarray
    tp: np.ndarray
    ranking: np.ndarray
    closed_assigned: np.ndarray | None = None
    closed_tp: np.ndarray | None = None

    @staticmethod
    def zero(n_categories: int, n_measures: int, closed: bool = False) -> Counts:
        """No document counted; with ``closed``, closed predictions counted too (none)."""
        empty = np.zeros(n_categories, dtype=np.int64)
        return Counts(0, empty, empty, empty, np.zeros(n_measures, dtype=np.int64),
                      empty if closed else None, empty if closed else None)

    def __add__(self, other: Counts) -> Counts:
        if (self.closed_assigned is None) != (other.closed_assigned is None):
            raise ValueError("cannot add counts of closed predictions to counts without them")
        closed = self.closed_assigned is not None
        return Counts(self.documents + other.documents, self.positives + other.positives,
                      self.assigned + other.assigned, self.tp + other.tp, self.ranking + other.ranking,
                      self.closed_assigned + other.closed_assigned if closed else None,
                      self.closed_tp + other.closed_tp if closed else None)

    def closed(self) -> Counts:
        """The counts of the same documents with their predictions closed under the hierarchy: the labels
        (``positives``) and the ranking measures (of the top-scoring categories) are the same, ``assigned``
        and ``tp`` are the closed ones. ValueError if closed predictions were not counted."""
        if self.closed_assigned is None or self.closed_tp is None:
            raise ValueError("closed predictions were not counted (count_batch without an ancestor table)")
        return Counts(self.documents, self.positives, self.closed_assigned, self.closed_tp, self.ranking)

    def ranking_averages(self, ks: Sequence[int]) -> dict[str, float]:
        """The ranking measures averaged over the documents (0 without documents)."""
        return {name: (int(total) / FIXED_POINT / self.documents if self.documents else 0.0)
                for name, total in zip(ranking_names(ks), self.ranking)}


def _positions(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Each value's position in ``value_set`` (int64), -1 where it is not there."""
    return pc.index_in(values, value_set=value_set).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _per_category(positions: np.ndarray, n_categories: int) -> np.ndarray:
    return np.bincount(positions[positions >= 0], minlength=n_categories).astype(np.int64)


def _closed_counts(rows: np.ndarray, positions: np.ndarray, labelled: np.ndarray, ancestors: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per category, the documents whose predicted set closed under the hierarchy holds it, and those of them
    labelled with it: each predicted category (``positions``, of documents ``rows``) is replaced by its row of
    ``ancestors`` (itself and its ancestors; :func:`sparktc.evaluation.metrics.ancestor_table`) and each
    (document, category) pair counted once. ``labelled``: the distinct (document, category) labels, as
    document * n_categories + position."""
    n_categories = len(ancestors)
    kept = positions >= 0
    implied = ancestors[positions[kept]]  # one row per predicted category: it, then its ancestors, then -1s
    documents = np.broadcast_to(rows[kept, None], implied.shape)
    present = implied >= 0
    closed = unique(documents[present] * n_categories + implied[present])
    both = intersect(closed, labelled)
    return _per_category(closed % n_categories, n_categories), _per_category(both % n_categories, n_categories)


def count_batch(predictions: pa.RecordBatch, categories: pa.Array, ks: Sequence[int],
                ancestors: np.ndarray | None = None) -> Counts:
    """The counts of a batch of predictions (labels, predicted, top_categories) over ``categories``.

    As Spark's ``explode`` and ``array_intersect`` count: a label listed twice in a document is a
    positive twice, a category both labelled and predicted is one TP per document, and a label
    outside ``categories`` is not counted. Ranking measures as :func:`sparktc.evaluation.ranking.ranking_measures`
    rate each document: its relevant categories are its distinct labels, a hit is a top category among them.
    With ``ancestors`` (:func:`sparktc.evaluation.metrics.ancestor_table` over ``categories``), the predicted
    sets are also counted closed under the hierarchy (``closed_assigned``, ``closed_tp``): a document is
    assigned each category it is predicted and each ancestor of one, once, and a TP wherever it is labelled so.
    """
    n, n_categories, k_max = len(predictions), len(categories), max(ks)
    labels = predictions.column("labels")
    encoded = pc.dictionary_encode(pc.list_flatten(labels), null_encoding="encode")
    seen = encoded.dictionary  # the batch's distinct labels, numbered
    width = max(len(seen), 1)
    category_of_seen = _positions(seen, categories)

    def elements(column: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]:
        """A list column's elements, the document of each, its place in the document's list, and its
        (document, label) key: -1 when it is none of its document's labels."""
        lengths = pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False)
        rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
        places = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        values = pc.list_flatten(column)
        label = _positions(values, seen)
        return values, rows, places, np.where(label >= 0, rows * width + label, -1)

    *_, label_keys = elements(labels)
    pairs = unique(label_keys)  # each (document, distinct label) once
    predicted, predicted_rows, _, predicted_keys = elements(predictions.column("predicted"))
    predicted_positions = _positions(predicted, categories)
    both = intersect(pairs, predicted_keys)
    _, rows, rank, top_keys = elements(predictions.column("top_categories"))
    kept = rank < k_max
    hits = np.zeros((n, k_max), dtype=np.bool_)  # a ranking shorter than k_max is padded with misses
    hits[rows[kept], rank[kept]] = isin(top_keys[kept], pairs)
    values = ranking_measures(hits, np.bincount(pairs // width, minlength=n), ks)
    closed_assigned = closed_tp = None
    if ancestors is not None:
        if len(ancestors) != n_categories:
            raise ValueError(f"ancestors must have one row per category; got {len(ancestors)} rows for "
                             f"{n_categories} categories")
        labelled = category_of_seen[pairs % width]
        closed_assigned, closed_tp = _closed_counts(
            predicted_rows, predicted_positions, (pairs // width * n_categories + labelled)[labelled >= 0], ancestors)
    return Counts(
        documents=n,
        positives=_per_category(category_of_seen[encoded.indices.to_numpy(zero_copy_only=False)], n_categories),
        assigned=_per_category(predicted_positions, n_categories),
        tp=_per_category(category_of_seen[both % width], n_categories),
        ranking=np.array([np.rint(values[name] * FIXED_POINT).astype(np.int64).sum() for name in ranking_names(ks)],
                         dtype=np.int64),
        closed_assigned=closed_assigned,
        closed_tp=closed_tp,
    )


def closure_of(categories: pd.DataFrame) -> np.ndarray:
    """The ancestor table ``evaluate.close_predictions`` closes predictions with, over the run's categories
    (category, parent; :func:`sparktc.evaluation.metrics.ancestor_table`); InputError naming the setting when
    no category has a parent among them (a flat category set: there is no hierarchy to close under)."""
    ancestors = ancestor_table(categories["category"].tolist(), categories["parent"].tolist())
    if ancestors.shape[1] == 1:
        raise InputError(
            f"evaluate.close_predictions = true, but none of the {len(categories)} categories of this run has a "
            "parent among them: the category set has no hierarchy to close predictions under. Set "
            "evaluate.close_predictions = false, or evaluate a hierarchical category set (LYRL2004's topics or "
            "industries read with their hierarchy file, corpus.hierarchy)")
    return ancestors


def predict(spark: SparkSession, config: Config, tables: Tables) -> tuple[pd.DataFrame, Counts]:
    """Score the test vectors with the models and write ``predictions``, counting them in the same
    pass: the categories (category, name, parent, train_positives; by category) and their counts, with
    ``evaluate.close_predictions`` those of the predictions closed under the hierarchy too (InputError
    before any scoring when the categories have no hierarchy: :func:`closure_of`)."""
    rule = config.train.decision_rule()
    # Category and vocabulary sized: read with pyarrow on the driver, no Spark job.
    categories = read_small(tables.input("categories"), CATEGORY_COLUMNS).sort_by("category").to_pandas()
    ancestors = closure_of(categories) if config.evaluate.close_predictions else None
    models = read_small(tables.input("models"), list(MODEL_COLUMNS)).sort_by("category").to_pandas()
    n_terms = count_rows(tables.input("vocabulary"))
    scorer = Scorer.of(models, n_terms, rule.knn_k, storage.join(tables.input("vectors"), f"split={TRAIN}"),
                       storage.join(tables.input(MODEL), NETWORK), rule.posterior_scores,
                       term_order(spark, tables.input("term_ranks"), config))
    shared = spark.sparkContext.broadcast(scorer)
    vectors = spark.read.parquet(tables.input("vectors"))
    test = vectors.filter(F.col("split") == TEST).select(*VECTOR_COLUMNS)
    cut = cut_of(rule, models, test, shared, lambda: vectors.filter(F.col("split") == TRAIN).count())
    top_k, ks = config.evaluate.top_scores, config.evaluate.ranks
    codes = pa.array(categories["category"].tolist(), type=pa.string())
    none = Counts.zero(len(codes), len(ranking_names(ks)), closed=ancestors is not None)
    directory = tables.output("predictions")
    batch_rows = int(spark.conf.get(BATCH_ROWS, "10000"))
    batch_rows = batch_rows if batch_rows > 0 else ROWS_PER_FILE

    def score(index: int, path: str) -> Counts:
        """Predictions of one file of test vectors, written as part ``index``; their counts."""
        counted: list[Counts] = []

        def predicted() -> Iterator[pa.RecordBatch]:
            for batch in read_batches(path, VECTOR_COLUMNS, batch_rows):
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
    shared.unpersist()
    return categories, sum(counts, none)


def contingency_table(categories: pd.DataFrame, counts: Counts) -> pd.DataFrame:
    """Per category (``categories``: category, name, parent, train_positives): training and test
    positives, and TP, FP, FN, TN over the documents ``counts`` counted."""
    table = categories.copy()
    table["test_positives"] = counts.positives
    table["tp"] = counts.tp
    table["fp"] = counts.assigned - counts.tp
    table["fn"] = counts.positives - counts.tp
    table["tn"] = counts.documents - counts.positives - counts.assigned + counts.tp
    return table


def closed_record(categories: pd.DataFrame, counts: Counts, subsets: dict[str, list[str]],
                  settings: EvaluateConfig) -> dict:
    """``metrics.json``'s ``closed``: the headline record (:func:`sparktc.evaluation.summary.assemble`: micro and
    macro averages over ``evaluate.average_over``, every category set, the frequency bands, the per-category
    rows) over the predictions closed under the hierarchy (:meth:`Counts.closed`), over the same sets and with
    the same 0/0 convention. The ranking measures rate the top-scoring categories, which closing does not
    change, so they are the headline's only."""
    record, _ = assemble(contingency_table(categories, counts.closed()), subsets, settings.average_over,
                         settings.zero_division, settings.bands, {})
    del record["ranking"]
    return record


def write_reports(spark: SparkSession, tables: Tables, metrics: dict, table) -> None:
    """metrics.json, report.md, per_category.csv, contingency_tables.txt and the two plots, through the Hadoop
    file system (local, HDFS or S3 paths alike)."""
    storage.write_text(spark, tables.output("metrics.json"), json.dumps(to_builtin(metrics), indent=2) + "\n")
    storage.write_text(spark, tables.output("report.md"), report_markdown(metrics, table))
    storage.write_text(spark, tables.output("per_category.csv"), per_category_csv(table))
    storage.write_text(spark, tables.output(CONTINGENCY_TABLES_TXT), contingency_tables_text(metrics, table))
    storage.write_bytes(spark, tables.output("f1_by_training_frequency.png"), plot_f1_by_training_frequency(table))
    storage.write_bytes(spark, tables.output("f1_by_band.png"), plot_f1_by_band(metrics["bands"]))


def _training_decisions(spark: SparkSession, tables: Tables) -> dict:
    """``metrics.json``'s ``training_decisions``: what the train stage found its rule does on the training documents
    (:func:`sparktc.models.decision.training_decisions`), from its manifest; nothing for PCut and RCut."""
    found = ((read_manifest(spark, tables.root, "train") or {}).get("details") or {}).get("training_decisions")
    return {"training_decisions": found} if found else {}


def format_table(metrics: dict, table) -> str:
    """The per-category table and the averages as evaluate prints them; with closed predictions, their averages
    on a line of their own."""
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
    settings = config.evaluate
    with stage(spark, "evaluate") as report:
        categories, counts = predict(spark, config, tables)
        contingency = contingency_table(categories, counts)
        spark.createDataFrame(contingency, CONTINGENCY_SCHEMA).coalesce(1) \
            .write.mode("overwrite").parquet(tables.output("contingency"))
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
            **_training_decisions(spark, tables),
            "per_category": per_category_rows,
        })
        write_reports(spark, tables, metrics, table)
        print(format_table(metrics, table), flush=True)
        report.rows_in = report.rows_out = counts.documents
        report.details = {k: metrics[k] for k in ("micro_f1", "macro_f1", "n_categories")}
    return report


STAGE = Stage(
    "evaluate", evaluate, reads=("models", MODEL, "vocabulary", "term_ranks", "vectors", "categories"),
    writes=("predictions", "contingency", "metrics.json", "report.md", "per_category.csv", CONTINGENCY_TABLES_TXT,
            "f1_by_training_frequency.png", "f1_by_band.png"),
    sections=SETTINGS,
)
