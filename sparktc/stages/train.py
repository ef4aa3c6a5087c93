"""Train: one classifier per category -> ``models``, via ``groupBy("category").applyInPandas``; or LLSF.

LIBLINEAR, Rocchio or naive Bayes models (naive Bayes over the raw term frequencies, the ``counts`` of
``vectors``), chosen and thresholded by cross-validation on the training data when
the configuration asks for it (:mod:`sparktc.models.tuning`), or kNN thresholds from leave-one-out scores,
each by the run's decision rule (:mod:`sparktc.models.decision`).

The grouped DataFrame holds one small row per category (its name and training positives), not
the training data: each Python worker loads the training split of ``vectors`` once
(:func:`sparktc.features.matrix.load_training_set`) and trains every category Spark sends it, so the
matrix is never replicated per category and nothing proportional to the corpus reaches the driver.
Weights are stored over the whole vocabulary (zero for terms outside the selection), so scoring
needs no term mapping. Beside ``models``, train writes the model bundle ``model`` that classifies new
documents on its own (:mod:`sparktc.runtime.bundle`).

LLSF (:mod:`sparktc.models.llsf`) is one regression for all categories, so it is not trained per category:
one Spark task per training ``vectors`` file reads it with pyarrow (no Spark rows) and computes, over the
selected terms and per cross-validation fold, the sums G_f = X_f'X_f (terms x terms) and X'Y_f (terms x
categories) with scipy sparse products, and saves them to a file beside the stage's outputs (G is dense:
233 MB for 2,415 terms and 5 folds, too much to pass through the JVM); the driver adds the files up one
at a time, so it holds folds x (terms^2 + terms x categories) numbers, never the training matrix
(:func:`fit_llsf`), and deletes them. The driver
then decomposes G = sum_f G_f, and each G - G_f for the fold models, once each: terms^2 memory, not
corpus-sized. Cost: O(N * nnz_d^2) to accumulate over N documents of nnz_d selected terms, spread over
the tasks; O((folds + 1) * terms^3) to decompose on the driver; O(folds * terms^2 + terms * categories)
memory per task and on the driver. SCut/SCutFBR thresholds then come from each fold's model scoring
its held-out documents, one grouped task per category as for the other methods.
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from scipy import sparse

from sparktc.corpora.records import TRAIN
from sparktc.errors import InputError
from sparktc.evaluation.metrics import f1_score
from sparktc.features.matrix import csr_from_lists, load_training_set
from sparktc.features.term_selection import top_k_from_reduction_factor
from sparktc.filesystem import arrow_filesystem, per_worker
from sparktc.models.decision import JOINT_METHODS, DecisionRule
from sparktc.models.knn import knn_scores_from_neighbours, knn_topk
from sparktc.models.llsf import LLSFModel, document_folds, fold_models, gram_sums, llsf_weights
from sparktc.models.nnet import SavedNetwork, fit_network, write_network
from sparktc.models.tuning import (
    ZERO_DIVISION,
    Candidate,
    candidates,
    fit_category,
    knn_threshold,
    needs_cross_validation,
    shared_weight,
)
from sparktc.runtime import storage
from sparktc.runtime.bundle import MODEL, MODEL_SETTINGS, NETWORK, write_bundle
from sparktc.runtime.config import Config
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import map_parts, parquet_files, read_batches
from sparktc.runtime.resources import check_training_memory, explained_failures, out_of_memory
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage

MODELS_DDL = (
    "category string, method string, weights array<double>, bias double, threshold double, train_positives long, "
    "solver string, C double, positive_weight double, epsilon double, B double, features int, cv_f1 double, "
    "choices string, seconds double"
)


@per_worker
def _training_neighbours(path: str, n_features: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every training document's k nearest other training documents (leave-one-out), once per worker."""
    X = load_training_set(path, n_features).X
    return knn_topk(X, X, k, exclude_self=np.arange(X.shape[0]))


def term_order(spark: SparkSession, tables: Tables) -> np.ndarray:
    """Term ids from the best chi-square rank down (vocabulary-sized)."""
    ranks = spark.read.parquet(tables.input("term_ranks")).select("term_id", "rank").toPandas()
    return ranks.sort_values("rank")["term_id"].to_numpy(dtype=np.int64)


def default_terms(config: Config, n_terms: int) -> int:
    """Terms training keeps without a search: select.top_k, or the reduction factor's count, or 0 (all)."""
    select = config.select
    return select.top_k or (top_k_from_reduction_factor(n_terms, select.reduction_factor)
                            if select.reduction_factor else 0)


def fit_models(spark: SparkSession, tables: Tables, rule: DecisionRule, space: list[Candidate], n_terms: int,
               order) -> DataFrame:
    """The grouped UDF over one row per category: each group fits that category on the worker's training set."""
    train_path = storage.join(tables.input("vectors"), "split=train")

    def fit(group: pd.DataFrame) -> pd.DataFrame:
        started = time.perf_counter()
        category = group["category"].iloc[0]
        try:
            inject("train")
            training = load_training_set(train_path, n_terms, rule.vector_column)
            y = training.positives(category)
            if rule.method == "knn":
                neighbours, similarities = _training_neighbours(train_path, n_terms, rule.knn_k)
                scores = knn_scores_from_neighbours(neighbours, similarities, y[:, None])[:, 0]
                threshold, cv_f1 = knn_threshold(scores, y, rule)
                weights, bias, choice, choices = np.zeros(0), 0.0, space[0], {"k": rule.knn_k, "cv_f1": cv_f1}
            else:
                model = fit_category(training.X, y, order.value, space, rule)
                weights, bias, threshold, cv_f1, choice = (model.weights, model.bias, model.threshold, model.cv_f1,
                                                           model.choice)
                choices = model.choices()
        except MemoryError:
            raise out_of_memory("train", f"category {category}, training set {train_path}") from None
        return pd.DataFrame({
            "category": [category], "method": [rule.method], "weights": [weights], "bias": [bias],
            "threshold": [threshold], "train_positives": [int(y.sum())], "solver": [choice.solver], "C": [choice.C],
            "positive_weight": [choice.positive_weight], "epsilon": [rule.epsilon], "B": [rule.bias],
            "features": [choice.terms or n_terms], "cv_f1": [cv_f1], "choices": [json.dumps(choices)],
            "seconds": [time.perf_counter() - started],
        })

    categories = spark.read.parquet(tables.input("categories")).select("category", "train_positives")
    return categories.groupBy("category").applyInPandas(fit, MODELS_DDL)


@contextmanager
def one_task_per_category(spark: SparkSession, n_categories: int) -> Iterator[None]:
    """One task per category up to twice the cores; AQE must not merge the tiny groups into one task."""
    tasks = max(1, min(n_categories, 2 * spark.sparkContext.defaultParallelism))
    keys = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.enabled")
    previous = {key: spark.conf.get(key) for key in keys}
    spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        yield
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)


#: LLSF's terms x terms Gram matrix is dense: beyond this many selected terms it no longer fits a worker.
MAX_LLSF_TERMS = 20_000
LLSF_BATCH_ROWS = 8192  # training documents whose sums a task computes at a time


def label_matrix(labels: pa.Array, codes: list[str]) -> sparse.csr_matrix:
    """Documents x categories 0/1 indicators of a list<string> column (null lists are empty); a label
    outside ``codes`` is an error, as in the rank stage."""
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


def llsf_file_sums(path: str, columns: np.ndarray, codes: list[str], n_terms: int, folds: int, seed: int,
                   directory: str, index: int) -> str:
    """One training file's per-fold (G_f, X'Y_f, documents) over the selected ``columns``
    (:func:`sparktc.models.llsf.gram_sums`; ``folds`` = 1: no cross-validation), saved as
    ``directory/sums-<index>.npz``; the file's path. G is dense (folds x terms^2 numbers: 233 MB for
    Yang & Liu's 2,415 terms and 5 folds), so it goes through a file, not through the JVM."""
    inject("train")
    G = np.zeros((folds, len(columns), len(columns)))
    XY = np.zeros((folds, len(columns), len(codes)))
    sizes = np.zeros(folds, dtype=np.int64)
    for batch in read_batches(path, ["doc_id", "indices", "values", "labels"], LLSF_BATCH_ROWS):
        X = csr_from_lists(batch.column("indices"), batch.column("values"), n_terms)[:, columns]
        fold = (document_folds(batch.column("doc_id").to_pylist(), folds, seed) if folds > 1
                else np.zeros(len(batch), dtype=np.int64))
        g, xy, n = gram_sums(X, label_matrix(batch.column("labels"), codes), fold, folds)
        G += g
        XY += xy
        sizes += n
    filesystem, root = arrow_filesystem(directory)
    filesystem.create_dir(root, recursive=True)
    target = f"{root}/sums-{index}.npz"
    with filesystem.open_output_stream(target) as stream:  # a retried attempt writes the same numbers again
        buffer = io.BytesIO()
        np.savez(buffer, G=G, XY=XY, sizes=sizes)
        stream.write(buffer.getvalue())
    return target


def _summed(directory: str, paths: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sum of the per-file sums :func:`llsf_file_sums` saved, read one file at a time."""
    filesystem, _ = arrow_filesystem(directory)
    total = None
    for path in paths:
        with filesystem.open_input_file(path) as handle, np.load(io.BytesIO(handle.read())) as sums:
            part = (sums["G"], sums["XY"], sums["sizes"])
        total = part if total is None else tuple(a + b for a, b in zip(total, part))
    return total


def fit_llsf(spark: SparkSession, tables: Tables, rule: DecisionRule, n_terms: int, terms: int,
             order: np.ndarray) -> tuple[DataFrame, dict]:
    """The LLSF models (one row per category, as :func:`fit_models` writes them) and what the stage reports.

    The sums come from one pass over the training files (module docstring); with SCut or SCutFBR the
    training documents are split into ``rule.folds`` folds by :func:`sparktc.models.llsf.document_folds`
    and each category's threshold is :meth:`DecisionRule.learned_threshold` over the out-of-fold scores,
    each fold's documents scored by the model fitted without them. Weights are zero outside the
    ``terms`` best-ranked terms (0: every term); the bias is 0.
    """
    started = time.perf_counter()
    columns = selected_columns(order, terms, n_terms)
    if len(columns) > MAX_LLSF_TERMS:
        raise InputError(f"train.method = 'llsf' solves a terms x terms system over the {len(columns):_} selected "
                         f"terms, at most {MAX_LLSF_TERMS:_}: set select.top_k or select.reduction_factor "
                         "(Yang & Liu kept 2,415 terms)")
    categories = spark.read.parquet(tables.input("categories")).select("category", "train_positives") \
        .orderBy("category").toPandas()
    codes = categories["category"].tolist()
    folds = rule.folds if rule.cross_validated else 1
    train_path = storage.join(tables.input("vectors"), "split=train")
    files = parquet_files(train_path) if storage.exists(spark, train_path) else []
    scratch = tables.output("models") + "-llsf-sums"
    try:
        saved = map_parts(spark, files, lambda index, path: llsf_file_sums(
            path, columns, codes, n_terms, folds, rule.seed, scratch, index))
        total = _summed(scratch, saved) if saved else None
    finally:
        storage.delete(spark, scratch)
    G, XY, sizes = total or (np.zeros((folds, len(columns), len(columns))), np.zeros((folds, len(columns), len(codes))),
                             np.zeros(folds, dtype=np.int64))
    if folds > 1 and not sizes.all():
        raise InputError(f"train.folds = {folds}: fold {int(np.argmin(sizes))} of the {int(sizes.sum())} training "
                         "documents is empty; lower train.folds")
    summed = time.perf_counter()
    W = llsf_weights(G.sum(axis=0), XY.sum(axis=0), rule.llsf_k)
    fitted = time.perf_counter()
    rows = joint_thresholds(spark, rule, categories, train_path, n_terms,
                            [LLSFModel(columns, W_f) for W_f in fold_models(G, XY, rule.llsf_k)] if folds > 1 else [])
    weights = np.zeros((n_terms, len(codes)))
    weights[columns] = W
    models = pd.DataFrame({
        "category": codes, "method": "llsf", "weights": [weights[:, j].tolist() for j in range(len(codes))],
        "bias": 0.0, "threshold": [rows[code]["threshold"] for code in codes],
        "train_positives": categories["train_positives"].astype("int64"), "solver": rule.solver, "C": rule.C,
        "positive_weight": rule.positive_weight, "epsilon": rule.epsilon, "B": rule.bias, "features": len(columns),
        "cv_f1": [rows[code]["cv_f1"] for code in codes],
        "choices": [json.dumps({"llsf_k": rule.llsf_k, "cv_f1": rows[code]["cv_f1"]}) for code in codes],
        "seconds": [rows[code]["seconds"] for code in codes],
    })
    details = {"llsf_k": rule.llsf_k, "llsf_terms": len(columns), "llsf_train_documents": int(sizes.sum()),
               "llsf_folds": folds, "llsf_sum_seconds": round(summed - started, 3),
               "llsf_solve_seconds": round(fitted - summed, 3)}
    return spark.createDataFrame(models, MODELS_DDL), details


def joint_thresholds(spark: SparkSession, rule: DecisionRule, categories: pd.DataFrame, train_path: str,
                     n_terms: int, fold_models: list) -> dict[str, dict]:
    """Per category (``categories``: category, train_positives): its threshold, cross-validated F1 and
    seconds, for a method with one model for all categories (LLSF, NNet). With SCut or SCutFBR,
    ``fold_models`` are the models fitted without each fold's documents (objects with ``scores(X)``,
    X documents x vocabulary; folds by :func:`sparktc.models.llsf.document_folds`), and each category's
    threshold is :meth:`DecisionRule.learned_threshold` over the out-of-fold scores, one grouped task per
    category; otherwise (no ``fold_models``) the rule's fixed threshold."""
    codes = categories["category"].tolist()
    rows = {code: {"threshold": rule.threshold, "cv_f1": None, "seconds": 0.0} for code in codes}
    if not fold_models:
        return rows
    shared = spark.sparkContext.broadcast((uuid.uuid4().hex, fold_models))
    index = {code: j for j, code in enumerate(codes)}

    def threshold(group: pd.DataFrame) -> pd.DataFrame:
        began = time.perf_counter()
        category = group["category"].iloc[0]
        inject("train")
        training = load_training_set(train_path, n_terms, rule.vector_column)
        scores, fold = _out_of_fold(training, shared, rule.folds, rule.seed)
        y = training.positives(category)
        value, counts = rule.learned_threshold(scores[:, index[category]], y, fold, rule.fbr)
        return pd.DataFrame({"category": [category], "threshold": [value],
                             "cv_f1": [float(f1_score(**counts, zero_division=ZERO_DIVISION))],
                             "seconds": [time.perf_counter() - began]})

    with one_task_per_category(spark, len(codes)):
        for row in spark.createDataFrame(categories).groupBy("category").applyInPandas(
                threshold, "category string, threshold double, cv_f1 double, seconds double").collect():
            rows[row.category] = {"threshold": row.threshold, "cv_f1": row.cv_f1, "seconds": row.seconds}
    shared.unpersist()
    return rows


# One worker's out-of-fold scores, for the broadcast fold models it was computed with (their key): the
# broadcast models are not hashable, so filesystem.per_worker cannot key on them.
_out_of_fold_cache: list[tuple[str, np.ndarray, np.ndarray]] = []


def _out_of_fold(training, models, folds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Training documents x categories scores, each document's from the model of its fold (fitted
    without it), and the documents' folds; computed once per worker and broadcast ``models`` = (its key,
    the fold models), whichever categories the worker thresholds."""
    key, fold_models = models.value
    if not (_out_of_fold_cache and _out_of_fold_cache[0][0] == key):
        fold = document_folds(training.doc_ids, folds, seed)
        scores = None
        for f, model in enumerate(fold_models):
            held = np.flatnonzero(fold == f)
            part = model.scores(training.X[held])
            if scores is None:
                scores = np.zeros((training.X.shape[0], part.shape[1]))
            scores[held] = part
        _out_of_fold_cache[:] = [(key, scores, fold)]
    return _out_of_fold_cache[0][1], _out_of_fold_cache[0][2]


def selected_columns(order: np.ndarray, terms: int, n_terms: int) -> np.ndarray:
    """The term ids of the ``terms`` best-ranked terms, ascending (0, or more than there are: every term)."""
    return np.sort(order[:terms]) if 0 < terms < n_terms else np.arange(n_terms, dtype=np.int64)


def fit_nnet(spark: SparkSession, tables: Tables, rule: DecisionRule, n_terms: int, terms: int,
             order: np.ndarray) -> tuple[DataFrame, dict]:
    """The NNet models (one row per category, as :func:`fit_models` writes them, without weights: the
    network is the model bundle's ``network`` part) and what the stage reports.

    One network for all categories, over the ``terms`` best-ranked terms (:mod:`sparktc.models.nnet`),
    trained in one Spark task on the worker's training set; with SCut or SCutFBR, ``rule.folds`` more
    networks, each without one fold's documents, in tasks of their own alongside it (each saved to a
    file, not returned through the JVM), whose out-of-fold scores set the thresholds
    (:func:`joint_thresholds`). Cost: each network is O(epochs * nnz(X) * hidden) to train on one worker,
    holding the training set; the folds + 1 networks run in parallel.
    """
    columns = selected_columns(order, terms, n_terms)
    categories = spark.read.parquet(tables.input("categories")).select("category", "train_positives") \
        .orderBy("category").toPandas()
    codes = categories["category"].tolist()
    folds = rule.folds if rule.cross_validated else 0
    train_path = storage.join(tables.input("vectors"), "split=train")
    scratch = tables.output("models") + "-nnet-folds"
    directories = [storage.join(scratch, f"fold-{f}") for f in range(folds)] + [
        storage.join(tables.output(MODEL), NETWORK)]

    def fit(index: int, directory: str) -> dict:
        """Network ``index``: fold ``index``'s (trained without its documents), or the full one (index = folds)."""
        began = time.perf_counter()
        inject("train")
        training = load_training_set(train_path, n_terms)
        Y = np.column_stack([training.positives(code) for code in codes]) if codes else \
            np.zeros((training.X.shape[0], 0), dtype=np.bool_)
        rows = (document_folds(training.doc_ids, folds, rule.seed) != index) if index < folds else \
            np.ones(training.X.shape[0], dtype=np.bool_)
        if index < folds and rows.all():
            raise InputError(f"train.folds = {folds}: fold {index} of the {len(rows)} training documents is empty; "
                             "lower train.folds")
        try:
            network = fit_network(training.X[rows], Y[rows], columns, rule.nnet_hidden, rule.nnet_epochs,
                                  rule.nnet_l2, rule.nnet_learning_rate, rule.seed)
        except MemoryError:
            raise out_of_memory("train", f"the network over {len(columns):_} terms, training set {train_path}") \
                from None
        write_network(network, directory)
        return {"iterations": network.iterations, "loss": network.loss, "documents": int(rows.sum()),
                "seconds": round(time.perf_counter() - began, 3)}

    try:
        fitted = map_parts(spark, directories, fit, errors=(InputError,))
        rows = joint_thresholds(spark, rule, categories, train_path, n_terms,
                                [SavedNetwork(directory) for directory in directories[:folds]])
    finally:
        storage.delete(spark, scratch)
    full = fitted[-1]
    models = pd.DataFrame({
        "category": codes, "method": "nnet", "weights": [[] for _ in codes], "bias": 0.0,
        "threshold": [rows[code]["threshold"] for code in codes],
        "train_positives": categories["train_positives"].astype("int64"), "solver": rule.solver, "C": rule.C,
        "positive_weight": rule.positive_weight, "epsilon": rule.epsilon, "B": rule.bias, "features": len(columns),
        "cv_f1": [rows[code]["cv_f1"] for code in codes],
        "choices": [json.dumps({"nnet_hidden": rule.nnet_hidden, "iterations": full["iterations"],
                                "cv_f1": rows[code]["cv_f1"]}) for code in codes],
        "seconds": [rows[code]["seconds"] for code in codes],
    })
    details = {"nnet_terms": len(columns), "nnet_hidden": rule.nnet_hidden, "nnet_iterations": full["iterations"],
               "nnet_loss": full["loss"], "nnet_train_documents": full["documents"], "nnet_folds": folds,
               "nnet_seconds": full["seconds"], "nnet_fold_seconds": [f["seconds"] for f in fitted[:-1]]}
    return spark.createDataFrame(models, MODELS_DDL), details


def train(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    rule, tune = config.train.decision_rule(), config.tune
    with stage(spark, "train") as report:
        n_terms = spark.read.parquet(tables.input("vocabulary")).count()
        n_categories = spark.read.parquet(tables.input("categories")).count()
        training = spark.read.parquet(tables.input("vectors")).filter(F.col("split") == TRAIN) \
            .agg(F.count("*").alias("documents"), F.sum(F.size("indices")).alias("nonzeros")).first()
        check_training_memory(dict(spark.sparkContext.getConf().getAll()), training["documents"],
                              int(training["nonzeros"] or 0),
                              needs_cross_validation(rule, candidates(rule, tune, default_terms(config, n_terms))))
        order = spark.sparkContext.broadcast(term_order(spark, tables))
        details: dict = {}
        with one_task_per_category(spark, n_categories), explained_failures("train"):
            if rule.method in JOINT_METHODS:
                space = candidates(rule, tune, default_terms(config, n_terms))
                fit_joint = fit_llsf if rule.method == "llsf" else fit_nnet
                models, joint_details = fit_joint(spark, tables, rule, n_terms, default_terms(config, n_terms),
                                                  order.value)
                details.update(joint_details)
                models.write.mode("overwrite").parquet(tables.output("models"))
            elif tune.shared_positive_weight:
                # First pass: every category's cross-validated counts for every weight; one row per category back.
                space = candidates(rule, tune, default_terms(config, n_terms))
                searched = [json.loads(row.choices)["searched"] for row in
                            fit_models(spark, tables, rule, space, n_terms, order).select("choices").collect()]
                weight, micro = shared_weight(searched)
                rule = dataclasses.replace(rule, positive_weight=weight)
                tune = dataclasses.replace(tune, positive_weight=[])
                details["shared_positive_weight"] = {"chosen": weight, "cv_micro_f1": micro}
            if rule.method not in JOINT_METHODS:
                space = candidates(rule, tune, default_terms(config, n_terms))
                fit_models(spark, tables, rule, space, n_terms, order).write.mode("overwrite").parquet(
                    tables.output("models"))
        order.unpersist()
        write_bundle(spark, config, tables, training["documents"])
        written = spark.read.parquet(tables.output("models"))
        report.rows_in = n_categories
        report.rows_out = written.count()
        totals = written.agg(F.sum("seconds").alias("s"), F.max("seconds").alias("m")).first()
        report.details = {
            "method": rule.method, "thresholding": rule.thresholding, "search_space": len(space),
            "features": default_terms(config, n_terms) or n_terms, "vocabulary": n_terms, "epsilon": rule.epsilon,
            "B": rule.bias, **details,
            "category_seconds_total": round(float(totals["s"] or 0), 3),
            "category_seconds_max": round(float(totals["m"] or 0), 3),
        }
    return report


STAGE = Stage("train", train, reads=("vocabulary", "categories", "term_ranks", "vectors"), writes=("models", MODEL),
              sections=MODEL_SETTINGS, files=lambda config: [config.tokenize.stop_list])
