"""Scoring on the executors: batches of document vectors -> scores -> predictions (REFERENCE.md section 5).

The evaluate stage and the classification of new documents share one :class:`Scorer` with their tasks and call
:func:`predict_batch` on each Arrow batch of vectors (doc_id, labels, indices, values, counts): s(d, c) =
w_c'x_d + b_c for the linear models (X W + b, W dense vocabulary x categories; naive Bayes's over the raw
term frequencies, the mixture's normalized to posteriors P(c|d)), kNN's sum of the similarities of d's k
nearest training documents labelled c, or the NNet's output-unit inputs; the categories assigned are
those the decision rule's :class:`~sparktc.models.decision.Cut` gives, and the ``top_k`` best-scoring
categories are kept with their scores for the ranking measures. Linear scores are computed in float32, the
documents whose decisions or ranking they cannot settle recomputed in float64, and the kept scores summed in
float64, so that every decision and kept score is the float64 product's (:mod:`sparktc.models.float32_scoring`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from sparktc.features.matrix import csr_from_lists, load_training_set
from sparktc.filesystem import KeptOne, per_worker
from sparktc.models.decision import Cut, DecisionRule
from sparktc.models.float32_scoring import Float32Weights, decide
from sparktc.models.knn import columns_of, knn_scores_from_neighbours, knn_topk, selected_space, selection_key
from sparktc.models.method import LINEAR, NEIGHBOURS, NETWORK, POSTERIOR
from sparktc.models.naive_bayes import posterior
from sparktc.models.nnet import load_network
from sparktc.models.thresholds import best_columns, validation_split

#: The float32 weights of the last scorer a worker scored with (:attr:`Scorer.float32`).
_FLOAT32: KeptOne[Float32Weights] = KeptOne()


@dataclass(frozen=True)
class Scorer:
    """What executors need to score documents, by the method's kind of score (:class:`sparktc.models.method.Scoring`):
    linear weights (and their posteriors), the kNN training set, or the saved network.
    """

    codes: np.ndarray
    n_terms: int
    kind: str
    W: np.ndarray | None  # vocabulary x categories: linear scores only
    b: np.ndarray
    k: int = 0  # neighbours summed
    train_path: str = ""  # neighbours: the training split of ``vectors``
    column: str = "values"  # the vectors column scored: the scheme's weights, or raw tf for naive Bayes
    network_path: str = ""  # network: the directory of its saved network
    knn_selection: bytes = b""  # neighbours: the selected term ids (int64 bytes); empty: every term
    validation: float = 0.0  # neighbours: Va's share of the training documents, held out of the neighbours
    seed: int = 0  # neighbours: the seed Va was drawn with
    #: This scorer's own, made with it on the driver: every task unpickles its own copy of a shared scorer, and a
    #: worker keeps what it derives from one by this (:attr:`float32`).
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @staticmethod
    def of(models: pd.DataFrame, n_terms: int, rule: DecisionRule, train_path: str = "", network_path: str = "",
           order: np.ndarray | None = None) -> Scorer:
        """The scorer of ``models`` (one row per category, ordered by category: a ``models`` table or a model
        bundle's categories) trained by ``rule``: for neighbours, the training set at ``train_path`` over the
        models' ``features`` best terms of the rank ``order`` (term ids best first); for a network, the one
        saved at ``network_path``.
        """
        scoring = rule.spec.scoring(rule.parameters)
        linear = scoring.kind in (LINEAR, POSTERIOR)
        neighbours = scoring.kind == NEIGHBOURS
        selection = selection_key(order, int(models["features"].iloc[0])) \
            if neighbours and order is not None and len(models) else b""
        W = np.column_stack(models["weights"].to_list()) if len(models) else np.zeros((n_terms, 0))
        return Scorer(codes=models["category"].to_numpy(dtype=object), n_terms=n_terms, kind=scoring.kind,
                      W=W if linear else None, b=models["bias"].to_numpy(), k=scoring.k,
                      train_path=train_path if neighbours else "", column=rule.vector_column,
                      network_path=network_path if scoring.kind == NETWORK else "", knn_selection=selection,
                      validation=rule.validation if neighbours else 0.0, seed=rule.seed if neighbours else 0)

    def matrix(self, batch: pa.RecordBatch):
        """The documents x vocabulary matrix of a batch of ``vectors`` rows, of the column this scorer reads."""
        return csr_from_lists(batch.column("indices"), batch.column(self.column), self.n_terms)

    @property
    def float32(self) -> Float32Weights:
        """The linear weights as float32 scoring reads them, made once per worker for this scorer (by its
        ``token``), not once per task: 0.1-0.3 s each at 47,236 terms x 103 categories, for each of a stage's tasks.
        """
        return _FLOAT32.get((self.token,), lambda: Float32Weights.of(self.W, self.b))

    def scores(self, X) -> np.ndarray:
        """Documents x categories scores of the rows of ``X`` (documents x vocabulary), in float64."""
        if self.kind == LINEAR:
            return np.asarray(X @ self.W) + self.b
        if self.kind == POSTERIOR:
            return posterior(np.asarray(X @ self.W) + self.b)
        if self.kind == NETWORK:
            return load_network(self.network_path).scores(X)
        training = _knn_training(self.train_path, self.n_terms, self.knn_selection, self.validation, self.seed)
        neighbours, similarities = knn_topk(selected_space(X, columns_of(self.knn_selection)), training, self.k)
        labels = _knn_labels(self.train_path, self.n_terms, tuple(self.codes), self.validation, self.seed)
        return knn_scores_from_neighbours(neighbours, similarities, labels)


@per_worker
def validation_rows(path: str, n_terms: int, validation: float, seed: int) -> np.ndarray:
    """True for the rows of the training set at ``path`` in the validation set Va
    (:func:`sparktc.models.thresholds.validation_split`; all False at ``validation`` = 0), once per worker.
    """
    return validation_split(load_training_set(path, n_terms).doc_ids, validation, seed)


def _learnt(path: str, n_terms: int, validation: float, seed: int) -> np.ndarray:
    """The rows of the training set the neighbours come from: Tr - Va."""
    return np.flatnonzero(~validation_rows(path, n_terms, validation, seed))


@per_worker
def _knn_training(path: str, n_terms: int, selection: bytes, validation: float, seed: int):
    """The kNN training matrix (Tr - Va) over the selected terms (renormalized), once per worker and training set."""
    X = load_training_set(path, n_terms).X[_learnt(path, n_terms, validation, seed)]
    return selected_space(X, columns_of(selection))


@per_worker
def _knn_labels(path: str, n_terms: int, codes: tuple[str, ...], validation: float, seed: int) -> np.ndarray:
    """Training (Tr - Va) labels as a documents x categories matrix, once per worker and training set."""
    training = load_training_set(path, n_terms)
    return np.column_stack([training.positives(code) for code in codes])[_learnt(path, n_terms, validation, seed)]


def _lists(offsets: np.ndarray, values: pa.Array) -> pa.ListArray:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)


def predict_batch(batch: pa.RecordBatch, scorer: Scorer, cut: Cut, top_k: int) -> pa.RecordBatch:
    """A batch of vectors (doc_id, labels, indices, values, counts) to predictions (doc_id, labels, predicted,
    top_categories, top_scores): the categories ``cut`` assigns, and the ``top_k`` best categories with
    their scores (ties to the category first in order).
    """
    codes = scorer.codes
    X = scorer.matrix(batch)
    n, k = X.shape[0], min(top_k, len(codes))
    if scorer.kind == LINEAR and n and len(codes) and cut.rcut_k <= len(codes):
        decided = decide(X, scorer.float32, scorer.b, cut, k, scorer.scores)
        assigned, top, top_scores = decided.assigned, decided.top, decided.top_scores
    else:
        scores = scorer.scores(X)
        assigned, top = cut.assign(scores), best_columns(scores, k)
        top_scores = np.take_along_axis(scores, top, axis=1)
    rows, cols = np.nonzero(assigned)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    top_offsets = np.arange(n + 1, dtype=np.int64) * k
    # The codes taken by position in Arrow, not gathered as Python strings and converted (0.05 -> 0.01 CPU-s for
    # 100,000 documents' five best and three assigned categories).
    names = pa.array(codes.tolist(), type=pa.string())
    return pa.RecordBatch.from_arrays(
        [batch.column("doc_id"), batch.column("labels"),
         _lists(offsets, names.take(pa.array(cols))),
         _lists(top_offsets, names.take(pa.array(top.ravel()))),
         _lists(top_offsets, pa.array(top_scores.ravel(), type=pa.float64()))],
        names=["doc_id", "labels", "predicted", "top_categories", "top_scores"],
    )
