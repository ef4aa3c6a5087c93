"""Fitting :class:`~sparktc.models.method.FromSums`: LLSF (:mod:`sparktc.models.llsf`, up to
:data:`~sparktc.models.llsf.MAX_GRAM_TERMS` terms) and the naive Bayes mixture (:mod:`sparktc.models.naive_bayes`),
one model for all categories from sums over the training documents (:func:`summed_training`).

One Spark task per training ``vectors`` file reads it with pyarrow (no Spark rows) and computes, over the selected
terms and per cross-validation fold, X'Y_f (terms x categories), the documents per category and, for LLSF,
G_f = X_f'X_f (terms x terms), with scipy sparse products, and saves them to a file beside the stage's outputs (G is
dense: 233 MB for 2,415 terms and 5 folds, too much to pass through the JVM); the driver adds the files up one at a
time, so it holds folds x (terms^2 + terms x categories) numbers, never the training matrix, and deletes them.
For LLSF the driver then decomposes G = sum_f G_f, and each G - G_f for the fold models, once each: terms^2 memory,
not corpus-sized. Cost: O(N * nnz_d^2) to accumulate over N documents of nnz_d selected terms (O(N * nnz_d) for
naive Bayes), spread over the tasks; O((folds + 1) * terms^3) to decompose on the driver; O(folds * terms^2 + terms *
categories) memory per task and on the driver. The fold models' out-of-fold scores set the thresholds
(:func:`~sparktc.stages.train.joint.joint_thresholds`).
"""

from __future__ import annotations

import functools
import io
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse

from sparktc.errors import InputError
from sparktc.features.matrix import csr_from_lists
from sparktc.filesystem import arrow_filesystem
from sparktc.models.llsf import document_folds, gram_sums
from sparktc.models.method import FromSums
from sparktc.runtime import storage
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import map_parts, parquet_files, read_batches
from sparktc.runtime.progress import loop
from sparktc.stages.train.context import (
    MODELS_TYPE,
    TrainContext,
    Trained,
    categories_table,
    save_arrays,
    selected_columns,
)
from sparktc.stages.train.joint import FullModel, joint_models, joint_settings, joint_thresholds, over_vocabulary

__all__ = ["SUMS_BATCH_ROWS", "Sums", "SumsPass", "label_matrix", "summed_training", "train_from_sums",
           "training_sums"]

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


@dataclass(frozen=True)
class SumsPass:
    """What every task of one pass of :func:`training_sums` computes: the sums over the selected ``columns`` of the
    ``column`` matrix X (ltc ``values``, or raw tf ``counts``; ``n_terms`` wide), per fold of ``folds`` (1: no
    cross-validation; folds by :func:`sparktc.models.llsf.document_folds` with ``seed``), of the categories
    ``codes``, with G = X'X only with ``gram`` (LLSF), saved into ``directory``.
    """

    columns: np.ndarray
    codes: list[str]
    n_terms: int
    folds: int
    seed: int
    directory: str
    column: str = "values"
    gram: bool = True


def training_sums(sums_pass: SumsPass, index: int, path: str) -> str:
    """One training file's per-fold sums (``sums_pass``), saved as ``directory/sums-<index>.npz``; the file's path.
    Per fold f: G_f = X_f'X_f (terms x terms; only with ``gram``, for LLSF), X'Y_f (terms x categories), the
    documents, and the documents per category. G is dense (folds x terms^2 numbers: 233 MB for Yang & Liu's 2,415
    terms and 5 folds), so the sums go through a file, not through the JVM.
    """
    inject("train")
    columns, codes, folds, gram = sums_pass.columns, sums_pass.codes, sums_pass.folds, sums_pass.gram
    sums = {"G": np.zeros((folds, len(columns), len(columns)) if gram else (folds, 0, 0)),
            "XY": np.zeros((folds, len(columns), len(codes))), "sizes": np.zeros(folds, dtype=np.int64),
            "labels": np.zeros((folds, len(codes)))}
    for batch in read_batches(path, ["doc_id", "indices", sums_pass.column, "labels"], SUMS_BATCH_ROWS):
        X = csr_from_lists(batch.column("indices"), batch.column(sums_pass.column), sums_pass.n_terms)[:, columns]
        fold = (document_folds(batch.column("doc_id").to_pylist(), folds, sums_pass.seed) if folds > 1
                else np.zeros(len(batch), dtype=np.int64))
        Y = label_matrix(batch.column("labels"), codes)
        g, xy, n = gram_sums(X, Y, fold, folds, gram)
        sums["G"] += g
        sums["XY"] += xy
        sums["sizes"] += n
        in_fold = sparse.csr_matrix((np.ones(len(fold)), (np.arange(len(fold)), fold)), shape=(len(fold), folds))
        sums["labels"] += (in_fold.T @ Y).toarray()
    return save_arrays(sums_pass.directory, f"sums-{index}.npz", sums)


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


def summed_training(context: TrainContext, codes: list[str], gram: bool, searching: bool = False) -> Sums:
    """One pass of tasks over the training files (:func:`training_sums`), over the largest of the candidate
    term counts (0: every term): a smaller count's ranked terms are a prefix of the ranking, so its sums are a
    sub-matrix of those. Cross-validated (``rule.folds`` folds) when the thresholds are or several counts or other
    settings (``searching``) are searched.
    """
    started = time.perf_counter()
    spark, rule, n_terms, terms = context.spark, context.rule, context.n_terms, context.term_counts
    candidates = {count: selected_columns(context.order.value, count, n_terms) for count in terms}
    columns = max(candidates.values(), key=len)
    folds = rule.folds if rule.cross_validated or len(terms) > 1 or searching else 1
    train_path = context.train_path
    files = parquet_files(train_path) if storage.exists(spark, train_path) else []
    scratch = context.tables.output("models") + "-sums"
    try:
        saved = map_parts(spark, files, functools.partial(training_sums, SumsPass(
            columns, codes, n_terms, folds, rule.seed, scratch, rule.vector_column, gram)))
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


def train_from_sums(context: TrainContext, fitting: FromSums) -> Trained:
    """The models of a method fitted from sums (one row per category, as the per-category tasks write them) and
    what the stage reports.

    The sums X'Y, the documents per category and, with ``fitting.gram``, G = X'X come from one pass over the
    training files (:func:`summed_training`; module docstring); each cross-validation fold's model is fitted from
    the sums without the fold's documents (``fold_models``) under each of the method's searched settings
    (:func:`~sparktc.stages.train.joint.joint_settings`), and
    :func:`~sparktc.stages.train.joint.joint_thresholds` chooses the term count, setting and fbr and sets the
    thresholds. The full model (``full``) has zero weights outside its terms.
    """
    spark, rule, n_terms = context.spark, context.rule, context.n_terms
    name = rule.method
    settings = joint_settings(rule, context.tune)
    categories = categories_table(context)
    codes = categories["category"].tolist()
    rules = [functools.reduce(lambda r, item: r.with_setting(*item), setting.items(), rule) for setting in settings]
    fittings = [context.with_search(each, context.tune).fitting() for each in rules]
    gram = fittings[0].gram  # what a setting changes is the model fitted from the sums, not the sums (gram or not)
    sums = summed_training(context, codes, gram=gram, searching=len(settings) > 1)

    def over(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # the per-fold sums over count's terms
        at = sums.positions[count]
        return (sums.G[:, at][:, :, at] if gram else sums.G), sums.XY[:, at], sums.labels

    fold_sets = {(count, i): each.fold_models(*over(count), sums.candidates[count])
                 for count in sums.positions for i, each in enumerate(fittings)} if sums.folds > 1 else {}
    chosen = joint_thresholds(context, categories, fold_sets, settings)
    solving = time.perf_counter()
    at = sums.positions[chosen.terms]  # the full model from the sums over all folds, summed before slicing
    summed_G = sums.G.sum(axis=0)[np.ix_(at, at)] if gram else sums.G.sum(axis=0)
    weights, bias = fittings[chosen.setting].full(summed_G, sums.XY.sum(axis=0)[at], sums.labels.sum(axis=0))
    solved = time.perf_counter()
    features = len(at)
    models = joint_models(rule, categories, chosen,
                          FullModel(over_vocabulary(weights, sums.candidates[chosen.terms], n_terms), bias, features),
                          rules[chosen.setting].parameters.record())
    details = {**rules[chosen.setting].parameters.record(), f"{name}_fitting": "sums", f"{name}_terms": features,
               f"{name}_train_documents": int(sums.sizes.sum()), f"{name}_folds": sums.folds,
               f"{name}_sum_seconds": round(sums.seconds, 3), f"{name}_solve_seconds": round(solved - solving, 3),
               "searched": chosen.searched, "chosen_fbr": chosen.fbr, "cv_micro_f1": chosen.cv_micro_f1}
    spark.createDataFrame(models, MODELS_TYPE).write.mode("overwrite").parquet(context.tables.output("models"))
    return Trained(rule, len(context.candidates()), details)
