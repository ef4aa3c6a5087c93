"""Train: one classifier per category -> ``models``, in grouped tasks of categories balanced by cost
(:func:`fit_models`); or one model for all categories (LLSF, NNet, the naive Bayes mixture).

LIBLINEAR, Rocchio or one-against-the-rest naive Bayes models (naive Bayes over the raw term frequencies,
the ``counts`` of ``vectors``), chosen and thresholded by cross-validation on the training data when
the configuration asks for it (:mod:`sparktc.models.tuning`), or kNN thresholds from leave-one-out scores,
each by the run's decision rule (:mod:`sparktc.models.decision`). A setting searched for all categories
at once (kNN's term count, ``tune.shared_positive_weight``, ``tune.shared_fbr``) takes a first pass that
returns every category's cross-validated counts, summed by the driver into micro-F1 per value.

A task is a group of category names (a grouped pandas UDF over a small DataFrame of categories), not the training
data: each Python worker loads the training split of ``vectors`` once
(:func:`sparktc.features.matrix.load_training_set`) and trains every category of the tasks Spark gives it, writing
their rows with pyarrow, so the matrix is never replicated per category and nothing proportional to the corpus
reaches the driver.
Weights are stored over the whole vocabulary (zero for terms outside the selection), so scoring
needs no term mapping. Beside ``models``, train writes the model bundle ``model`` that classifies new
documents on its own (:mod:`sparktc.experiment.bundle`).

LLSF (:mod:`sparktc.models.llsf`) and the naive Bayes mixture (:mod:`sparktc.models.naive_bayes`) are
fitted from sums over documents (:func:`summed_training`): one Spark task per training ``vectors`` file
reads it with pyarrow (no Spark rows) and computes, over the selected terms and per cross-validation
fold, X'Y_f (terms x categories), the documents per category and, for LLSF, G_f = X_f'X_f (terms x terms),
with scipy sparse products, and saves them to a file beside the stage's outputs (G is dense: 233 MB for
2,415 terms and 5 folds, too much to pass through the JVM); the driver adds the files up one at a time,
so it holds folds x (terms^2 + terms x categories) numbers, never the training matrix, and deletes them.
For LLSF the driver then decomposes G = sum_f G_f, and each G - G_f for the fold models, once each:
terms^2 memory, not corpus-sized. Cost: O(N * nnz_d^2) to accumulate over N documents of nnz_d
selected terms (O(N * nnz_d) for naive Bayes), spread over the tasks; O((folds + 1) * terms^3) to
decompose on the driver; O(folds * terms^2 + terms * categories) memory per task and on the driver.
NNet (:mod:`sparktc.models.nnet`) trains its networks, the full one and one per fold, in parallel tasks
that each load the training set (:func:`fit_joint_in_tasks`), as LLSF does over more terms. For all three,
each fold's model scores its held-out documents, and one grouped task per category sets the thresholds
(:func:`joint_thresholds`), which also choose one term count and one fbr for the whole model by cross-validated
micro-F1.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from scipy import sparse

from sparktc.corpora.records import TRAIN
from sparktc.errors import InputError
from sparktc.evaluation.metrics import f1_score
from sparktc.evaluation.training_decisions import training_decisions, training_decisions_lines
from sparktc.experiment.bundle import MODEL, MODEL_SETTINGS, NETWORK, write_bundle
from sparktc.experiment.config import Config, check_against_data
from sparktc.experiment.tables import term_order
from sparktc.features.matrix import csr_from_lists, load_training_set
from sparktc.features.term_selection import FREQUENCY, top_k_from_reduction_factor, top_terms
from sparktc.filesystem import KeptOne, arrow_filesystem, per_worker
from sparktc.models.decision import SHARED, DecisionRule, cross_validated_counts
from sparktc.models.knn import columns_of, knn_topk, selected_space, selection_key
from sparktc.models.llsf import document_folds, gram_sums
from sparktc.models.method import FromSums, InTasks, Neighbours
from sparktc.models.micromacro import label_order, micromacro_thresholds, visiting_order
from sparktc.models.scoring import Scorer, validation_rows
from sparktc.models.thresholds import validation_size
from sparktc.models.tuning import (
    ZERO_DIVISION,
    Candidate,
    averaged_f1,
    candidates,
    category_folds,
    fit_category,
    knn_category,
    needs_cross_validation,
    out_of_fold_scores,
    pooled_micro_f1,
    shared_value,
)
from sparktc.runtime import session, storage
from sparktc.runtime.faults import inject
from sparktc.runtime.groups import in_groups
from sparktc.runtime.parts import (
    count_rows,
    map_parts,
    parquet_files,
    read_batches,
    read_small,
    remove_unfinished,
    write_parts,
)
from sparktc.runtime.progress import loop
from sparktc.runtime.resources import check_training_memory, explained_failures, out_of_memory
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.shared import Shared
from sparktc.runtime.stage_report import StageReport, stage


@per_worker
def _training_neighbours(path: str, n_features: int, k: int, selections: tuple[bytes, ...], validation: float,
                         seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every training document's k nearest other training documents (leave-one-out), over each of the
    ``selections`` (selected term ids as int64 bytes; empty: every term), once per worker. With ``validation``
    > 0, those of each document of the validation set Va among Tr - Va instead (row numbers among Tr - Va).
    """
    X = load_training_set(path, n_features).X
    held = validation_rows(path, n_features, validation, seed)
    found = []
    for selection in selections:
        space = selected_space(X, columns_of(selection))
        found.append(knn_topk(space[held], space[~held], k) if validation
                     else knn_topk(space, space, k, exclude_self=np.arange(X.shape[0])))
    return found


def default_terms(config: Config, n_terms: int) -> int:
    """Terms training keeps without a search: select.top_k, or the reduction factor's count, or 0 (all); 0 under the
    frequency ranking, whose top terms the weight stage kept as the vocabulary.
    """
    select = config.select
    if config.rank.score == FREQUENCY:
        return 0
    return select.top_k or (top_k_from_reduction_factor(n_terms, select.reduction_factor)
                            if select.reduction_factor else 0)


#: ``models``: the per-category methods' tasks write it with pyarrow, the joint methods through Spark
#: (:data:`MODELS_TYPE`, the same schema).
MODELS_SCHEMA = pa.schema([
    ("category", pa.string()), ("method", pa.string()), ("weights", pa.list_(pa.field("element", pa.float64()))),
    ("bias", pa.float64()), ("threshold", pa.float64()), ("train_positives", pa.int64()), ("solver", pa.string()),
    ("C", pa.float64()), ("positive_weight", pa.float64()), ("epsilon", pa.float64()), ("B", pa.float64()),
    ("features", pa.int32()), ("cv_f1", pa.float64()), ("choices", pa.string()), ("seconds", pa.float64()),
])
MODELS_TYPE = from_arrow_schema(MODELS_SCHEMA)


def liblinear_options(rule: DecisionRule) -> dict[str, float | None]:
    """The ``models`` columns ``epsilon`` and ``B``: LIBLINEAR's -e and -B when the method has them, else null
    (like ``solver``, ``C`` and ``positive_weight``, a candidate's).
    """
    record = rule.parameters.record()
    return {"epsilon": record.get("epsilon"), "B": record.get("bias")}


#: Tasks per core when a category's fit is many fits (cross-validation folds, a grid, a validation split): each task
#: ending moves the stage's progress line and its estimate (16 tasks of 103 SVM.2 categories on 2 cores, not 4 tasks
#: with no estimate for the first 10 minutes); the training set is read once per worker process whatever the tasks.
SEARCH_TASKS_PER_CORE = 8


def category_tasks(spark: SparkSession, categories: int, searched: bool) -> int:
    """How many tasks fit the categories: 2 per core (one more wave to even out the categories' costs), or
    :data:`SEARCH_TASKS_PER_CORE` per core when each category's fit is a search (``searched``); at most one per
    category.
    """
    per_core = SEARCH_TASKS_PER_CORE if searched else 2
    return max(1, min(categories, per_core * session.cores(spark)))


def category_costs(tables: Tables, documents: int) -> dict[str, float]:
    """Each category's estimated cost to fit (by name, in name order), known before any fit: the ``documents``
    training documents, which every fit of every category visits, plus the category's training positives, whose
    share of the solver's work grows with them (the biggest categories go to different tasks).
    """
    categories = read_small(tables.input("categories"), ["category", "train_positives"]).sort_by("category")
    return {code: float(documents + (positives or 0)) for code, positives in
            zip(categories["category"].to_pylist(), categories["train_positives"].to_pylist())}


def fit_models(spark: SparkSession, tables: Tables, rule: DecisionRule, space: list[Candidate], n_terms: int,
               order: Shared[np.ndarray], costs: dict[str, float], directory: str | None = None,
               decided: dict[str, tuple[float, dict]] | None = None) -> list[str]:
    """Fit every category on the workers' training set, in grouped pandas UDF tasks of categories balanced by their
    estimated ``costs`` (:func:`category_costs`; :func:`sparktc.runtime.groups.in_groups`; how many tasks:
    :func:`category_tasks`). Each task writes its ``models`` rows with pyarrow into ``directory`` (the JVM never
    converts the weights: only the categories' ``choices`` come back); without a directory (a shared setting's first
    pass) the rows are not kept. ``decided``: each category's threshold and cross-validated counts, set across
    categories (:func:`micromacro_decisions`). The categories' ``choices`` JSON, in category order.
    """
    train_path = storage.join(tables.input("vectors"), "split=train")
    codes = list(costs)
    tasks = category_tasks(spark, len(codes), rule.cross_validated or bool(rule.validation) or len(space) > 1)
    fitting, liblinear = rule.spec.fitting(rule.parameters, n_terms), liblinear_options(rule)

    def fit(category: str) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            inject("train")
            training = load_training_set(train_path, n_terms, rule.vector_column)
            y = training.positives(category)
            held = validation_rows(train_path, n_terms, rule.validation, rule.seed) if rule.validation else None
            if isinstance(fitting, Neighbours):
                selections = [selection_key(order.value, candidate.terms) for candidate in space]
                distinct = tuple(dict.fromkeys(selections))  # an fbr searched shares its terms' neighbours
                found = dict(zip(distinct, _training_neighbours(train_path, n_terms, fitting.k, distinct,
                                                                rule.validation, rule.seed)))
                model = knn_category([found[key] for key in selections], y, space, rule, held)
                choices = {**model.choices(), "k": fitting.k}
            else:
                folds = category_folds(rule, category, y, training.doc_ids) \
                    if rule.fold_file and decided is None else None
                model = fit_category(training.X, y, order.value, space, rule, held, folds,
                                     None if decided is None else decided[category])
                choices = model.choices()
        except MemoryError:
            raise out_of_memory("train", f"category {category}, training set {train_path}") from None
        choice = model.choice
        return {"category": category, "method": rule.method, "weights": model.weights, "bias": model.bias,
                "threshold": model.threshold, "train_positives": int(y.sum()), "solver": choice.solver,
                "C": choice.C, "positive_weight": choice.positive_weight, **liblinear,
                "features": choice.terms or n_terms, "cv_f1": model.cv_f1, "choices": json.dumps(choices),
                "seconds": time.perf_counter() - started}

    def work(index: int, categories: list[str]) -> list[str]:
        rows = pa.Table.from_pylist([fit(category) for category in categories], schema=MODELS_SCHEMA)
        if directory is not None:
            write_parts(rows.to_batches(), MODELS_SCHEMA, directory, index)
        return rows["choices"].to_pylist()

    if directory is not None and not codes:  # the table still has its schema
        write_parts([], MODELS_SCHEMA, directory, 0)
    groups = in_groups(spark, codes, list(costs.values()), tasks, work, (InputError,))
    if directory is not None:
        remove_unfinished(directory)
    chosen = {category: choices for categories, found in groups for category, choices in zip(categories, found)}
    return [chosen[category] for category in codes]


def _save_arrays(directory: str, name: str, arrays: dict[str, np.ndarray]) -> str:
    """``arrays`` saved as ``directory/name`` (npz), through pyarrow's file system; the file's path."""
    filesystem, root = arrow_filesystem(directory)
    filesystem.create_dir(root, recursive=True)
    target = f"{root}/{name}"
    with filesystem.open_output_stream(target) as stream:  # a retried attempt writes the same numbers again
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        stream.write(buffer.getvalue())
    return target


def micromacro_decisions(spark: SparkSession, tables: Tables, rule: DecisionRule, candidate: Candidate,
                         n_terms: int, order: Shared[np.ndarray],
                         costs: dict[str, float]) -> tuple[dict[str, tuple[float, dict]], list[str]]:
    """Every category's threshold and cross-validated counts by micromacro (:mod:`sparktc.models.micromacro`), and
    the order it visited the categories in.

    The fold fits and out-of-fold scores are per category: grouped tasks of categories balanced by ``costs`` (as
    :func:`fit_models`) each save their categories' scores, labels and folds beside the stage's outputs. The pass
    over them is sequential, so one task reads them all (categories x training documents numbers: 19 MB for 101
    categories and 23,149 training documents) and only the thresholds and counts reach the driver. The counts are
    those of each fold's documents decided at the mean of the other folds' thresholds, as for the other
    cross-validated thresholdings.
    """
    train_path = storage.join(tables.input("vectors"), "split=train")
    codes = list(costs)
    tasks = category_tasks(spark, len(codes), True)
    scratch = tables.output("models") + "-scores"

    def scores(index: int, categories: list[str]) -> list[str]:
        inject("train")
        training = load_training_set(train_path, n_terms, rule.vector_column)
        kept: dict[str, list[np.ndarray]] = {"scores": [], "y": [], "folds": []}
        for category in categories:
            y = training.positives(category)
            folds = category_folds(rule, category, y, training.doc_ids)
            kept["scores"].append(out_of_fold_scores(training.X, y, order.value, [candidate], rule,
                                                     folds)[candidate.model])
            kept["y"].append(y)
            kept["folds"].append(folds)
        return [_save_arrays(scratch, f"scores-{index}.npz", {
            "categories": np.array(categories, dtype=str), **{key: np.array(value) for key, value in kept.items()}})]

    def visit(index: int, paths: list[str]) -> tuple[dict[str, tuple[float, dict]], list[str]]:
        filesystem, _ = arrow_filesystem(scratch)
        found: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for path in paths:
            with filesystem.open_input_file(path) as handle, np.load(io.BytesIO(handle.read())) as saved:
                for j, category in enumerate(saved["categories"].tolist()):
                    found[category] = (saved["scores"][j], saved["y"][j], saved["folds"][j])
        # LibMultiLabel's classes are the labels of training documents: the others, last, change no other threshold.
        labels = label_order([code for code in found if found[code][1].any()])
        visited = [labels[j] for j in visiting_order([int(found[code][1].sum()) for code in labels])]
        visited += label_order([code for code in found if not found[code][1].any()])
        decided = {}
        for code, (threshold, per_fold) in zip(visited, micromacro_thresholds([found[c] for c in visited],
                                                                                 rule.folds)):
            values, y, folds = found[code]
            decided[code] = (threshold, cross_validated_counts(values, y, folds, per_fold))
        return decided, visited

    try:
        paths = [path for _, saved in in_groups(spark, codes, list(costs.values()), tasks, scores, (InputError,))
                 for path in saved]
        return map_parts(spark, [paths], visit)[0]
    finally:
        storage.delete(spark, scratch)


@contextmanager
def one_task_per_category(spark: SparkSession, n_categories: int) -> Iterator[None]:
    """One task per category up to twice the cores; AQE must not merge the tiny groups into one task."""
    tasks = max(1, min(n_categories, 2 * session.cores(spark)))
    keys = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.enabled")
    previous = {key: spark.conf.get(key) for key in keys}
    spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        yield
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)


SUMS_BATCH_ROWS = 8192  # training documents whose sums a task computes at a time


def label_matrix(labels: pa.Array, codes: list[str]) -> sparse.csr_matrix:
    """Documents x categories 0/1 indicators of a list<string> column (null lists are empty); a label
    outside ``codes`` is an error, as in the rank stage.
    """
    flat = pc.list_flatten(labels)
    columns = pc.index_in(flat, value_set=pa.array(codes, pa.string()))
    if columns.null_count:
        raise ValueError(f"vectors: label {pc.filter(flat, pc.is_null(columns))[0]} is not in the categories table")
    lengths = pc.list_value_length(labels).fill_null(0).to_numpy(zero_copy_only=False)
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    cols = columns.to_numpy(zero_copy_only=False).astype(np.int64)
    Y = sparse.csr_matrix((np.ones(len(cols)), cols, indptr), shape=(len(lengths), len(codes)))
    Y.sum_duplicates()
    Y.data[:] = 1.0
    return Y


def training_sums(path: str, columns: np.ndarray, codes: list[str], n_terms: int, folds: int, seed: int,
                  directory: str, index: int, column: str = "values", gram: bool = True) -> str:
    """One training file's per-fold sums over the selected ``columns`` of its ``column`` matrix X (ltc
    ``values``, or raw tf ``counts``), saved as ``directory/sums-<index>.npz``; the file's path. Per fold f
    (``folds`` = 1: no cross-validation; folds by :func:`sparktc.models.llsf.document_folds`): G_f = X_f'X_f
    (terms x terms; only with ``gram``, for LLSF), X'Y_f (terms x categories), the documents, and the
    documents per category. G is dense (folds x terms^2 numbers: 233 MB for Yang & Liu's 2,415 terms and
    5 folds), so the sums go through a file, not through the JVM.
    """
    inject("train")
    sums = {"G": np.zeros((folds, len(columns), len(columns)) if gram else (folds, 0, 0)),
            "XY": np.zeros((folds, len(columns), len(codes))), "sizes": np.zeros(folds, dtype=np.int64),
            "labels": np.zeros((folds, len(codes)))}
    for batch in read_batches(path, ["doc_id", "indices", column, "labels"], SUMS_BATCH_ROWS):
        X = csr_from_lists(batch.column("indices"), batch.column(column), n_terms)[:, columns]
        fold = (document_folds(batch.column("doc_id").to_pylist(), folds, seed) if folds > 1
                else np.zeros(len(batch), dtype=np.int64))
        Y = label_matrix(batch.column("labels"), codes)
        g, xy, n = gram_sums(X, Y, fold, folds, gram)
        sums["G"] += g
        sums["XY"] += xy
        sums["sizes"] += n
        in_fold = sparse.csr_matrix((np.ones(len(fold)), (np.arange(len(fold)), fold)), shape=(len(fold), folds))
        sums["labels"] += (in_fold.T @ Y).toarray()
    return _save_arrays(directory, f"sums-{index}.npz", sums)


def _summed(directory: str, paths: list[str]) -> dict[str, np.ndarray]:
    """The sum of the per-file sums :func:`training_sums` saved, read one file at a time."""
    filesystem, _ = arrow_filesystem(directory)
    total: dict[str, np.ndarray] = {}
    with loop("train: summing the training files' sums", len(paths)) as step:  # on the driver, a file at a time
        for path in paths:
            with filesystem.open_input_file(path) as handle, np.load(io.BytesIO(handle.read())) as sums:
                for name in sums.files:
                    total[name] = total[name] + sums[name] if name in total else sums[name]
            step()
    return total


def selected_columns(order: np.ndarray, terms: int, n_terms: int) -> np.ndarray:
    """The term ids of the ``terms`` best-ranked terms, ascending (0, or more than there are: every term)."""
    selected = top_terms(order, terms)
    return np.arange(n_terms, dtype=np.int64) if selected is None else selected


def _categories(spark: SparkSession, tables: Tables) -> pd.DataFrame:
    return spark.read.parquet(tables.input("categories")).select("category", "train_positives") \
        .orderBy("category").toPandas()


@dataclass(frozen=True)
class Sums:
    """What one pass over the training files gives a method with one model for all categories: the
    candidate term counts' columns, their positions in the summed ``columns`` (the largest candidate's),
    and the per-fold sums of :func:`training_sums` over them.
    """

    candidates: dict[int, np.ndarray]
    positions: dict[int, np.ndarray]
    columns: np.ndarray
    folds: int
    G: np.ndarray
    XY: np.ndarray
    sizes: np.ndarray
    labels: np.ndarray
    seconds: float


def summed_training(spark: SparkSession, tables: Tables, rule: DecisionRule, codes: list[str], n_terms: int,
                    terms: list[int], order: np.ndarray, gram: bool, searching: bool = False) -> Sums:
    """One pass of tasks over the training files (:func:`training_sums`), over the largest of the candidate
    term counts ``terms`` (0: every term): a smaller count's ranked terms are a prefix of the ranking, so
    its sums are a sub-matrix of those. Cross-validated (``rule.folds`` folds) when the thresholds are or
    several counts or other settings (``searching``) are searched.
    """
    started = time.perf_counter()
    candidates = {count: selected_columns(order, count, n_terms) for count in terms}
    columns = max(candidates.values(), key=len)
    folds = rule.folds if rule.cross_validated or len(terms) > 1 or searching else 1
    train_path = storage.join(tables.input("vectors"), "split=train")
    files = parquet_files(train_path) if storage.exists(spark, train_path) else []
    scratch = tables.output("models") + "-sums"
    try:
        saved = map_parts(spark, files, lambda index, path: training_sums(
            path, columns, codes, n_terms, folds, rule.seed, scratch, index, rule.vector_column, gram))
        total = _summed(scratch, saved) if saved else {}
    finally:
        storage.delete(spark, scratch)
    width = len(columns) if gram else 0
    sizes = total.get("sizes", np.zeros(folds, dtype=np.int64))
    if folds > 1 and not sizes.all():
        raise InputError(f"train.folds = {folds}: fold {int(np.argmin(sizes))} of the {int(sizes.sum())} training "
                         "documents is empty; lower train.folds")
    return Sums(candidates, {count: np.searchsorted(columns, kept) for count, kept in candidates.items()}, columns,
                folds, total.get("G", np.zeros((folds, width, width))),
                total.get("XY", np.zeros((folds, len(columns), len(codes)))), sizes,
                total.get("labels", np.zeros((folds, len(codes)))), time.perf_counter() - started)


def _joint_models(rule: DecisionRule, categories: pd.DataFrame, chosen: Choice, weights: list | np.ndarray,
                  bias: list | float, features: int, extra: dict) -> pd.DataFrame:
    """The ``models`` rows of a method with one model for all categories: per category its threshold and
    what cross-validation chose, ``weights`` per category (over the vocabulary; empty for a network) and ``bias``.
    """
    codes = categories["category"].tolist()
    rows = chosen.rows
    return pd.DataFrame({
        "category": codes, "method": rule.method, "weights": weights, "bias": bias,
        "threshold": [rows[code]["threshold"] for code in codes],
        "train_positives": categories["train_positives"].astype("int64"), "solver": None, "C": None,
        "positive_weight": None, **liblinear_options(rule), "features": features,
        "cv_f1": [rows[code]["cv_f1"] for code in codes],
        "choices": [json.dumps({**extra, "terms": chosen.terms, "fbr": chosen.fbr, "cv_f1": rows[code]["cv_f1"]})
                    for code in codes],
        "seconds": [rows[code]["seconds"] for code in codes],
    })


def _over_vocabulary(values: np.ndarray, columns: np.ndarray, n_terms: int) -> list[list[float]]:
    """Per category, its column of ``values`` (selected terms x categories) over the whole vocabulary
    (zero outside ``columns``).
    """
    weights = np.zeros((n_terms, values.shape[1]))
    weights[columns] = values
    return [weights[:, j].tolist() for j in range(values.shape[1])]


def fit_from_sums(spark: SparkSession, tables: Tables, rule: DecisionRule, n_terms: int, terms: list[int],
                  fbrs: list[float], order: np.ndarray, settings: list[dict[str, Any]],
                  objective: str) -> tuple[DataFrame, dict]:
    """The models of a method fitted from sums (LLSF up to :data:`sparktc.models.llsf.MAX_GRAM_TERMS` terms, the
    naive Bayes mixture; one row per category, as :func:`fit_models` writes them) and what the stage reports.

    The sums X'Y, the documents per category and, with ``fitting.gram``, G = X'X come from one pass over the
    training files (:func:`summed_training`; module docstring); each cross-validation fold's model is fitted from
    the sums without the fold's documents (``fitting.fold_models``) under each of the method's searched
    ``settings`` (:func:`joint_settings`), and :func:`joint_thresholds` chooses the term count, setting and fbr and
    sets the thresholds. The full model (``fitting.full``) has zero weights outside its terms.
    """
    name = rule.method
    categories = _categories(spark, tables)
    codes = categories["category"].tolist()
    rules = [functools.reduce(lambda r, item: r.with_setting(*item), setting.items(), rule) for setting in settings]
    fittings = [r.spec.fitting(r.parameters, max(len(selected_columns(order, count, n_terms)) for count in terms))
                for r in rules]
    fitting = fittings[0]  # what a setting changes is the model fitted from the sums, not the sums (gram or not)
    sums = summed_training(spark, tables, rule, codes, n_terms, terms, order, gram=fitting.gram,
                           searching=len(settings) > 1)

    def over(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # the per-fold sums over count's terms
        at = sums.positions[count]
        return (sums.G[:, at][:, :, at] if fitting.gram else sums.G), sums.XY[:, at], sums.labels

    fold_sets = {(count, i): each.fold_models(*over(count), sums.candidates[count])
                 for count in sums.positions for i, each in enumerate(fittings)} if sums.folds > 1 else {}
    train_path = storage.join(tables.input("vectors"), "split=train")
    chosen = joint_thresholds(spark, rule, categories, train_path, n_terms, fold_sets, fbrs, terms[0], settings,
                              objective)
    solving = time.perf_counter()
    at = sums.positions[chosen.terms]  # the full model from the sums over all folds, summed before slicing
    summed_G = sums.G.sum(axis=0)[np.ix_(at, at)] if fitting.gram else sums.G.sum(axis=0)
    weights, bias = fittings[chosen.setting].full(summed_G, sums.XY.sum(axis=0)[at], sums.labels.sum(axis=0))
    solved = time.perf_counter()
    features = len(at)
    models = _joint_models(rule, categories, chosen, _over_vocabulary(weights, sums.candidates[chosen.terms], n_terms),
                           bias, features, rules[chosen.setting].parameters.record())
    details = {**rules[chosen.setting].parameters.record(), f"{name}_fitting": "sums", f"{name}_terms": features,
               f"{name}_train_documents": int(sums.sizes.sum()), f"{name}_folds": sums.folds,
               f"{name}_sum_seconds": round(sums.seconds, 3), f"{name}_solve_seconds": round(solved - solving, 3),
               "searched": chosen.searched, "chosen_fbr": chosen.fbr, "cv_micro_f1": chosen.cv_micro_f1}
    return spark.createDataFrame(models, MODELS_TYPE), details


def _fold_rows(training, folds: int, seed: int, fold: int) -> np.ndarray:
    """The training rows a model of unit ``fold`` is fitted on: all but the fold's (fold < folds), or all;
    an empty fold is refused as in :func:`summed_training`.
    """
    if fold == folds:
        return np.ones(training.X.shape[0], dtype=np.bool_)
    rows = document_folds(training.doc_ids, folds, seed) != fold
    if rows.all():
        raise InputError(f"train.folds = {folds}: fold {fold} of the {len(rows)} training documents is empty; "
                         "lower train.folds")
    return rows


Unit = tuple[int, int]  # (candidate term count, fold); fold = folds: the model of all training documents


def fit_in_tasks(spark: SparkSession, tables: Tables, rule: DecisionRule, categories: pd.DataFrame, n_terms: int,
                 terms: list[int], fbrs: list[float], order: np.ndarray, name: str,
                 fit_one: Callable[[sparse.csr_matrix, np.ndarray, np.ndarray, str, int], dict],
                 saved: Callable[[str], Any], keep: Callable[[str], Any],
                 objective: str) -> tuple[Choice, int, dict[Unit, dict], Any]:
    """A one-model method that trains on the whole training matrix (LLSF by SVD, NNet), one Spark task per
    unit: per candidate term count, one model per cross-validation fold (when the thresholds are
    cross-validated or several counts are searched) and the full one. Each task loads the training set on
    its worker and calls ``fit_one(X, Y, columns, directory, seed)`` on its rows (X documents x vocabulary, Y
    documents x categories 0/1, the selected term ids), which saves the model in ``directory`` (a file, not
    through the JVM) and returns what to report. ``saved(directory)`` is a fold model that scores from
    there (:func:`joint_thresholds` chooses with them); ``keep(directory)`` takes the chosen full model
    out before the scratch directory ``models-<name>`` is deleted.

    Returns the choice, the folds, what each task reported (with its terms, documents and seconds) and
    what ``keep`` returned.
    """
    codes = categories["category"].tolist()
    folds = rule.folds if rule.cross_validated or len(terms) > 1 else 0
    train_path = storage.join(tables.input("vectors"), "split=train")
    scratch = tables.output("models") + f"-{name}"
    units = [(count, f) for count in terms for f in range(folds + 1)]
    directory = {unit: storage.join(scratch, f"terms-{unit[0]}", f"fold-{unit[1]}") for unit in units}

    def fit(index: int, unit: Unit) -> dict:
        began = time.perf_counter()
        inject("train")
        count, f = unit
        training = load_training_set(train_path, n_terms)
        rows = _fold_rows(training, folds, rule.seed, f)
        columns = selected_columns(order, count, n_terms)
        Y = np.column_stack([training.positives(code)[rows] for code in codes]) if codes else \
            np.zeros((int(rows.sum()), 0), dtype=np.bool_)
        try:
            reported = fit_one(training.X[rows], Y, columns, directory[unit], rule.seed)
        except MemoryError:
            raise out_of_memory("train", f"the {name} model over {len(columns):_} terms, training set {train_path}") \
                from None
        return {**reported, "terms": len(columns), "documents": int(rows.sum()),
                "seconds": round(time.perf_counter() - began, 3)}

    try:
        fitted = dict(zip(units, map_parts(spark, units, fit, errors=(InputError,))))
        fold_sets = {(count, 0): [saved(directory[(count, f)]) for f in range(folds)] for count in terms} if folds \
            else {}
        chosen = joint_thresholds(spark, rule, categories, train_path, n_terms, fold_sets, fbrs, terms[0],
                                  objective=objective)
        kept = keep(directory[(chosen.terms, folds)])
    finally:
        storage.delete(spark, scratch)
    return chosen, folds, fitted, kept


def _unit_seconds(fitted: dict[Unit, dict], folds: int) -> dict[str, float]:
    return {f"{count}/{'all' if f == folds else f}": result["seconds"] for (count, f), result in fitted.items()}


def fit_joint_in_tasks(spark: SparkSession, tables: Tables, rule: DecisionRule, fitting: InTasks, n_terms: int,
                       terms: list[int], fbrs: list[float], order: np.ndarray,
                       objective: str) -> tuple[DataFrame, dict]:
    """The models of a method fitted on the whole training matrix (NNet, LLSF by SVD over more than
    :data:`sparktc.models.llsf.MAX_GRAM_TERMS` terms; one row per category, as :func:`fit_models` writes them) and
    what the stage reports: per candidate term count, the full model and, with cross-validated thresholds or
    several candidates, ``rule.folds`` more, each without one fold's documents, all in parallel tasks
    (:func:`fit_in_tasks`), whose out-of-fold scores choose the term count and set the thresholds. The chosen full
    model either moves into the bundle as its network (no weights in ``models``) or gives its weights.
    Cost per model: that of ``fitting.fit_one`` on one worker holding the training set.
    """
    name = rule.method
    categories = _categories(spark, tables)
    network = storage.join(tables.output(MODEL), NETWORK)
    keep = (lambda directory: storage.rename(spark, directory, network)) if fitting.keep_as_network \
        else fitting.weights
    chosen, folds, fitted, kept = fit_in_tasks(spark, tables, rule, categories, n_terms, terms, fbrs, order, name,
                                               fitting.fit_one, fitting.saved, keep, objective)
    full = fitted[(chosen.terms, folds)]
    reported = {key: value for key, value in full.items() if key not in ("terms", "documents", "seconds")}
    weights = [[] for _ in range(len(categories))] if fitting.keep_as_network else _over_vocabulary(
        kept[1], kept[0], n_terms)
    models = _joint_models(rule, categories, chosen, weights, 0.0, full["terms"],
                           {**rule.parameters.record(), **reported})
    details = {**rule.parameters.record(), f"{name}_fitting": "tasks", f"{name}_terms": full["terms"],
               **{f"{name}_{key}": value for key, value in reported.items()},
               f"{name}_train_documents": full["documents"], f"{name}_folds": folds,
               f"{name}_seconds": full["seconds"], f"{name}_model_seconds": _unit_seconds(fitted, folds),
               "searched": chosen.searched, "chosen_fbr": chosen.fbr, "cv_micro_f1": chosen.cv_micro_f1}
    return spark.createDataFrame(models, MODELS_TYPE), details


@dataclass(frozen=True)
class Choice:
    """What :func:`joint_thresholds` chose: the term count, the method's searched settings (an index into the
    run's :func:`joint_settings`) and fbr (by cross-validated micro-F1 when several were searched; each searched
    candidate's micro-F1 in ``searched``, keyed "terms/fbr" or "terms/setting=value/fbr") and per category its
    threshold, cross-validated F1 (None when nothing was cross-validated) and seconds.
    """

    terms: int
    fbr: float
    rows: dict[str, dict]
    searched: dict[str, float]
    setting: int = 0
    cv_micro_f1: float | None = None  # of the chosen candidate's cross-validated decisions


JOINT_DDL = ("category string, terms int, setting int, fbr double, threshold double, tp long, fp long, fn long, "
             "seconds double")

Joint = tuple[int, int]  # a one-model candidate: (term count, index into the run's joint_settings)


def joint_settings(rule: DecisionRule, tune) -> list[dict[str, Any]]:
    """The method's own settings a one-model method searches for the whole model (the product of their [tune]
    lists, e.g. the naive Bayes mixture's ``alpha``; :attr:`sparktc.models.method.Method.searched`), [{}]
    when it searches none: each a candidate beside the term counts, chosen by cross-validated micro-F1.
    """
    names = [name for name in rule.spec.searched if hasattr(rule.parameters, name) and getattr(tune, name, None)]
    return [dict(zip(names, values)) for values in itertools.product(*(getattr(tune, name) for name in names))]


def _label(candidate: Joint, fbr: float, settings: list[dict[str, Any]]) -> str:
    shown = "".join(f"/{key}={value}" for key, value in settings[candidate[1]].items())
    return f"{candidate[0]}{shown}/{fbr}"


def joint_thresholds(spark: SparkSession, rule: DecisionRule, categories: pd.DataFrame, train_path: str,
                     n_terms: int, fold_sets: dict[Joint, list], fbrs: list[float], terms: int,
                     settings: list[dict[str, Any]] | None = None, objective: str = "micro_f1") -> Choice:
    """For a method with one model for all categories (LLSF, NNet): the term count, the fbr and the
    per-category thresholds (``categories``: category, train_positives). The fold models reach the tasks as a
    :class:`sparktc.runtime.shared.Shared` value.

    ``fold_sets`` maps each candidate (term count, index into ``settings``) to its fold models, fitted without each
    fold's documents (objects with ``scores(X)``, X documents x vocabulary; folds by
    :func:`sparktc.models.llsf.document_folds`). One grouped task per category scores the training documents out of
    fold and, for every candidate and every fbr of ``fbrs`` (fbr moves SCutFBR's thresholds only), takes
    :meth:`DecisionRule.learned_threshold` and the cross-validated counts of its decisions. The pair chosen
    has the best ``objective`` (micro-F1, or macro-F1) of those decisions over all categories (the first on
    ties): one setting for the whole model, as Yang & Liu chose one feature-set size per classifier by its global
    F1, and as a per-category choice of fbr would fit the few positives of rare categories. Without ``fold_sets`` (no
    cross-validation): ``terms``, the rule's fbr and its fixed threshold.
    """
    codes = categories["category"].tolist()
    if not fold_sets:
        return Choice(terms, rule.fbr, {code: {"threshold": rule.threshold, "cv_f1": None, "seconds": 0.0}
                                        for code in codes}, {})
    shared = Shared(list(fold_sets.values()))
    settings = settings or [{}]
    counts_of = list(fold_sets)
    index = {code: j for j, code in enumerate(codes)}

    def threshold(group: pd.DataFrame) -> pd.DataFrame:
        began = time.perf_counter()
        category = group["category"].iloc[0]
        inject("train")
        training = load_training_set(train_path, n_terms, rule.vector_column)
        scores, fold = _out_of_fold(training, shared, rule.folds, rule.seed)
        y = training.positives(category)
        found = []
        for (count, setting), candidate_scores in zip(counts_of, scores):
            for fbr in fbrs:
                value, counted = rule.learned_threshold(candidate_scores[:, index[category]], y, fold, fbr)
                found.append({"category": category, "terms": count, "setting": setting, "fbr": fbr,
                              "threshold": value, **counted})
        return pd.DataFrame(found).assign(seconds=time.perf_counter() - began)

    with one_task_per_category(spark, len(codes)):
        found = spark.createDataFrame(categories).groupBy("category").applyInPandas(threshold, JOINT_DDL).toPandas()
    pairs = [(count, setting, fbr) for count, setting in counts_of for fbr in fbrs]
    counted = {pair: rows.to_dict("records") for pair, rows in found.groupby(["terms", "setting", "fbr"])}
    figure = {pair: averaged_f1(counted[pair], objective) for pair in pairs}
    chosen = max(pairs, key=lambda pair: (figure[pair], -pairs.index(pair)))
    kept = found[(found["terms"] == chosen[0]) & (found["setting"] == chosen[1]) & (found["fbr"] == chosen[2])]
    rows = {row.category: {"threshold": row.threshold, "seconds": row.seconds,
                           "cv_f1": float(f1_score(tp=row.tp, fp=row.fp, fn=row.fn, zero_division=ZERO_DIVISION))}
            for row in kept.itertuples()}
    return Choice(int(chosen[0]), float(chosen[2]), rows,
                  {_label((count, setting), fbr, settings): f1 for (count, setting, fbr), f1 in figure.items()},
                  int(chosen[1]), averaged_f1(counted[chosen]))


# One worker's out-of-fold scores, for the shared fold models it was computed with (their key, unique per value).
_out_of_fold_cache: KeptOne[tuple[list[np.ndarray], np.ndarray]] = KeptOne()


def _out_of_fold(training, models: Shared[list[list]], folds: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Per candidate, the training documents x categories scores, each document's from the model of its
    fold (fitted without it); and the documents' folds. Computed once per worker for the shared ``models`` (each
    candidate's fold models), whichever categories the worker thresholds.
    """

    def compute() -> tuple[list[np.ndarray], np.ndarray]:
        fold_sets = models.value
        fold = document_folds(training.doc_ids, folds, seed)
        held = [np.flatnonzero(fold == f) for f in range(folds)]
        scores = []
        for candidate_models in fold_sets:
            parts = [model.scores(training.X[rows]) for model, rows in zip(candidate_models, held)]
            candidate = np.zeros((training.X.shape[0], parts[0].shape[1]))
            for rows, part in zip(held, parts):
                candidate[rows] = part
            scores.append(candidate)
        return scores, fold

    return _out_of_fold_cache.get((models.key,), compute)


#: The ``models`` columns the driver reads back: the bundle's, the scorer's, and the fits' seconds.
WRITTEN_COLUMNS = ("category", "method", "weights", "bias", "threshold", "train_positives", "features", "seconds")


def decisions_on_training(spark: SparkSession, tables: Tables, rule: DecisionRule, n_terms: int, n_train: int,
                          order: np.ndarray, models: pd.DataFrame) -> dict[str, Any] | None:
    """The written models' rule applied to the training documents (:func:`sparktc.models.decision.training_decisions`):
    one task per training ``vectors`` file scores it as evaluate scores the test documents and counts, per
    category, the documents assigned; only those counts reach the driver. None for PCut and RCut, which decide by
    the documents being scored, never by a stored threshold. ``models``: the written ones, sorted by category.
    """
    if rule.thresholding in ("pcut", "rcut"):
        return None
    train_path = storage.join(tables.input("vectors"), f"split={TRAIN}")
    shared = Shared(Scorer.of(models, n_terms, rule, train_path, storage.join(tables.output(MODEL), NETWORK), order))
    thresholds = models["threshold"].to_numpy(dtype=np.float64)

    def count(index: int, path: str) -> np.ndarray:
        scorer, assigned = shared.value, np.zeros(len(thresholds), dtype=np.int64)
        for batch in read_batches(path, ["indices", scorer.column]):
            assigned += np.count_nonzero(scorer.scores(scorer.matrix(batch)) > thresholds, axis=0)
        return assigned

    files = parquet_files(train_path) if storage.exists(spark, train_path) else []
    assigned = sum(map_parts(spark, files, count), np.zeros(len(thresholds), dtype=np.int64))
    return training_decisions(models["category"].to_numpy(dtype=object), assigned,
                              models["train_positives"].to_numpy(), n_train)


def shared_settings(rule: DecisionRule, tune) -> tuple[str, ...]:
    """The searched settings chosen once for all categories by cross-validated micro-F1, () for none: the one
    [tune] shares (:data:`sparktc.models.decision.SHARED`), and kNN's ``terms`` (one similarity space) and ``fbr``
    (a per-category fbr would fit the few positives of rare categories) always, together.
    """
    for shared in SHARED:
        if getattr(tune, f"shared_{shared}", False):
            return (shared,)
    if not isinstance(rule.spec.fitting(rule.parameters, 0), Neighbours):
        return ()
    return tuple(key for key in ("terms", "fbr") if len(getattr(tune, key)) > 1)


def train(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    """The train stage (module docstring): the ``models`` of every category and the decisions tuning made, after
    checking the settings and memory against the training data.
    """
    rule, tune = config.train.decision_rule(), config.tune.lists(config.train.method)
    with stage(spark, "train") as report:
        n_terms, n_categories = count_rows(tables.input("vocabulary")), count_rows(tables.input("categories"))
        training = spark.read.parquet(tables.input("vectors")).filter(F.col("split") == TRAIN) \
            .agg(F.count("*").alias("documents"), F.sum(F.size("indices")).alias("nonzeros")).first()
        check_against_data(config, {"train_documents": training["documents"], "categories": n_categories},
                           f"counted by train in {tables.root}")
        check_training_memory(session.settings(spark), training["documents"],
                              int(training["nonzeros"] or 0),
                              needs_cross_validation(rule, candidates(rule, tune, default_terms(config, n_terms))))
        order = Shared(term_order(tables.input("term_ranks"), config))
        costs = category_costs(tables, training["documents"])
        details: dict = {}
        with one_task_per_category(spark, n_categories), explained_failures("train"):
            if rule.joint:
                space = candidates(rule, tune, default_terms(config, n_terms))
                terms = list(tune.terms) or [default_terms(config, n_terms)]
                fitting = rule.spec.fitting(rule.parameters, max(
                    len(selected_columns(order.value, count, n_terms)) for count in terms))
                fbrs = list(tune.fbr) or [rule.fbr]
                objective = tune.objective
                models, joint_details = fit_from_sums(
                    spark, tables, rule, n_terms, terms, fbrs, order.value, joint_settings(rule, tune), objective) \
                    if isinstance(fitting, FromSums) else \
                    fit_joint_in_tasks(spark, tables, rule, fitting, n_terms, terms, fbrs, order.value, objective)
                details.update(joint_details)
                models.write.mode("overwrite").parquet(tables.output("models"))
            elif shared_settings(rule, tune):
                # First pass: every category's cross-validated counts for every value; one row per category back.
                keys = shared_settings(rule, tune)
                space = candidates(rule, tune, default_terms(config, n_terms))
                searched = [json.loads(choices)["searched"]
                            for choices in fit_models(spark, tables, rule, space, n_terms, order, costs)]
                values, figure = shared_value(searched, keys, tune.objective)
                for key, value in zip(keys, values):
                    if key == "terms":
                        tune = dataclasses.replace(tune, terms=[int(value)])
                    else:
                        rule = rule.with_setting(key, value)
                        tune = dataclasses.replace(tune, **{key: []})
                    details[f"shared_{key}"] = {"chosen": value, f"cv_{tune.objective}": {
                        "/".join(map(str, each)): f1 for each, f1 in figure.items()}}
            decided = None
            if rule.across_categories:
                space = candidates(rule, tune, default_terms(config, n_terms))
                decided, visited = micromacro_decisions(spark, tables, rule, space[0], n_terms, order, costs)
                details["visiting_order"] = visited
            if not rule.joint:
                space = candidates(rule, tune, default_terms(config, n_terms))
                chosen = fit_models(spark, tables, rule, space, n_terms, order, costs, tables.output("models"),
                                    decided)
                details["cv_micro_f1"] = pooled_micro_f1([json.loads(choices) for choices in chosen])
        # Categories x vocabulary, read back once with pyarrow: no Spark jobs (its sort alone took three).
        written = read_small(tables.output("models"), list(WRITTEN_COLUMNS)).sort_by("category")
        write_bundle(spark, config, tables, training["documents"], order.value, written)
        began = time.perf_counter()
        with explained_failures("train"):
            checked = decisions_on_training(spark, tables, rule, n_terms, training["documents"], order.value,
                                            written.to_pandas())
        if checked is not None:
            details["training_decisions"] = checked
            details["training_decisions_seconds"] = round(time.perf_counter() - began, 3)
            for line in training_decisions_lines(checked):
                print(f"sparktc: warning: train: {line}", file=sys.stderr, flush=True)
        report.rows_in = n_categories
        report.rows_out = written.num_rows
        report.details = {
            "method": rule.method, "thresholding": rule.thresholding, "search_space": len(space),
            "features": default_terms(config, n_terms) or n_terms, "vocabulary": n_terms, **liblinear_options(rule),
            **({"validation_documents": validation_size(training["documents"], rule.validation)}
               if rule.validation else {}),
            **details,
            "category_seconds_total": round(float(pc.sum(written["seconds"]).as_py() or 0), 3),
            "category_seconds_max": round(float(pc.max(written["seconds"]).as_py() or 0), 3),
        }
    return report


STAGE = Stage("train", train, reads=("vocabulary", "categories", "term_ranks", "vectors"), writes=("models", MODEL),
              sections=MODEL_SETTINGS, files=lambda config: [config.tokenize.stop_list])
