"""LLSF, the linear least-squares fit of documents to their categories (Yang & Chute 1994; Yang & Liu 1999
section 3.3; REFERENCE.md section 5).

One multivariate regression for all categories: with X the documents x terms training matrix (the
selected terms only) and Y the documents x categories 0/1 matrix of their labels, LLSF finds the
terms x categories matrix W minimising ||X W - Y||_F^2 (Yang & Liu write it transposed,
F_LS = argmin_F ||F A - B||^2 with A = X', B = Y', F = W'). A document d is scored for category c
by s(d, c) = x_d' W_c: no bias term, as in Yang & Liu's formula (the regression has no intercept
column, so ``bias`` is 0), and with 0/1 targets the scores lie near [0, 1].

The system is solved through a truncated SVD, keeping the k largest singular values (Yang & Liu
keep k = 500). With the SVD X = U diag(sigma) V', the least-squares solution of minimum norm is
W = X^+ Y = V diag(1/sigma) U' Y; truncated at k it is W_k = V_k diag(1/sigma_k) U_k' Y. Here it is
computed from two sums over documents instead of X itself: the Gram matrix G = X'X (terms x terms)
and X'Y (terms x categories). G = V diag(lambda) V' with lambda = sigma^2, and U_k' = diag(1/sigma_k)
V_k' X', so

    W_k = V_k diag(1/sigma_k) diag(1/sigma_k) V_k' X'Y = V_k diag(1/lambda_k) V_k' X'Y,

the same matrix, from the eigendecomposition of G (:func:`llsf_weights`). When k >= rank(X) it is
the pseudo-inverse solution X^+ Y, numpy's ``lstsq``. Eigenvalues below
``lambda_max * terms * EIGENVALUE_RTOL`` count as zero (they are rounding: sigma / sigma_max below
about 1e-7 is lost by forming G, as squaring doubles the condition number); when two eigenvalues tie
at the k-th place, which one is kept is arbitrary, as the truncated SVD itself is then not unique.

Because G and X'Y are sums over documents, the model of cross-validation fold f (fitted on every
training document outside f) is :func:`llsf_weights` of G - G_f and X'Y - X'Y_f, with G_f and X'Y_f
the sums over f's documents alone (:func:`fold_models`): one pass over the data gives the full model
and every fold's. The folds are shared by all categories, since the regression is one for all of
them: document d's fold is a hash of its id and the seed (:func:`document_folds`), so it does not
depend on how the documents are split into files or ordered.

Over many terms the dense terms x terms G no longer fits (nor its O(terms^3) eigendecomposition), and
:func:`llsf_weights_svd` computes the same W_k from the k largest singular triplets of X itself (Lanczos,
O(nnz(X) k) per step, (documents + terms) x k memory); each fold's model is then its own SVD of the
fold's complement.

Cost: accumulating G is O(N * nnz_d^2) for N documents of nnz_d selected terms each, X'Y is
O(N * nnz_d * labels_d); the eigendecomposition is O(terms^3) per model (folds + 1 models when
cross-validating); memory O(terms^2 + terms * categories) per model.

Pure numpy/scipy; the train stage accumulates the sums on the executors (:mod:`sparktc.stages.train.from_sums`).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.filesystem import read_file, write_file
from sparktc.models.method import (
    LINEAR,
    FromSums,
    InTasks,
    Method,
    Parameters,
    ScoreRange,
    Scoring,
    SearchLists,
    shown,
)
from sparktc.runtime.progress import loop
from sparktc.validation import between, meaning

__all__ = ["EIGENVALUE_RTOL", "MAX_GRAM_TERMS", "METHOD", "LLSFModel", "LLSFParameters", "SavedLLSF", "document_folds",
           "fold_models", "gram_sums", "llsf_weights", "llsf_weights_svd"]

#: Relative tolerance, times the number of terms, below which an eigenvalue of G counts as zero.
EIGENVALUE_RTOL = 10 * np.finfo(np.float64).eps


def llsf_weights(G: NDArray[np.float64], XY: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """The truncated-SVD least-squares weights W = V_k diag(1/lambda_k) V_k' X'Y (module docstring).

    Args:
        G: float array, shape (terms, terms). X'X over the training documents (symmetric positive
            semi-definite).
        XY: float array, shape (terms, categories). X'Y, Y the documents' 0/1 category indicators.
        k: The number of singular values kept (>= 1): the k largest eigenvalues of G that are not zero.

    Returns:
        float array, shape (terms, categories); zero when G is zero.
    """
    G = np.asarray(G, dtype=np.float64)
    XY = np.asarray(XY, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1] or XY.shape[:1] != G.shape[:1] or XY.ndim != 2:
        raise ValueError(f"G must be square and XY have as many rows: got shapes {G.shape} and {XY.shape}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if G.shape[0] == 0:
        return np.zeros(XY.shape)
    eigenvalues, V = np.linalg.eigh((G + G.T) / 2)  # ascending
    top = eigenvalues[-1]
    if not top > 0:
        return np.zeros(XY.shape)
    kept = np.arange(len(eigenvalues) - 1, max(len(eigenvalues) - k, 0) - 1, -1)
    kept = kept[eigenvalues[kept] > top * G.shape[0] * EIGENVALUE_RTOL]
    Vk = V[:, kept]
    return Vk @ ((Vk.T @ XY) / eigenvalues[kept][:, None])


def llsf_weights_svd(X: Matrix, Y: Matrix, k: int) -> NDArray[np.float64]:
    """The same W_k = V_k diag(1/sigma_k) U_k' Y from a truncated SVD of X itself (ARPACK's Lanczos through
    scipy's ``svds``, started from a fixed vector, so deterministic), for term sets whose terms x terms Gram
    matrix would not fit (:func:`llsf_weights` needs it): O(nnz(X) k) work per Lanczos step and
    (documents + terms) x k memory instead of terms^2. Singular values below sigma_max sqrt(terms *
    ``EIGENVALUE_RTOL``) count as zero, as the eigenvalues lambda = sigma^2 do in :func:`llsf_weights`.
    """
    from scipy.sparse.linalg import svds

    X = sparse.csr_matrix(X, dtype=np.float64)
    Y = np.asarray(Y.toarray() if sparse.issparse(Y) else Y, dtype=np.float64)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if X.nnz == 0:
        return np.zeros((X.shape[1], Y.shape[1]))
    if k >= min(X.shape):  # svds finds fewer than min(shape) values: every one, densely
        U, sigma, Vt = np.linalg.svd(X.toarray(), full_matrices=False)
        U, sigma, Vt = U[:, :k], sigma[:k], Vt[:k]
    else:
        start = np.full(min(X.shape), 1.0 / np.sqrt(min(X.shape)))
        U, sigma, Vt = svds(X, k=k, v0=start, solver="arpack")
    kept = sigma > sigma.max() * np.sqrt(X.shape[1] * EIGENVALUE_RTOL)
    return Vt[kept].T @ ((U[:, kept].T @ Y) / sigma[kept][:, None])


#: The file a saved LLSF model's directory holds.
LLSF_FILE = "llsf.npz"


@dataclass(frozen=True)
class LLSFModel:
    """An LLSF fit over the selected terms ``columns``: s(d, c) = x_d[columns]'W_c."""

    columns: NDArray[np.int64]
    W: NDArray[np.float64]  # selected terms x categories

    def scores(self, X: sparse.csr_matrix) -> NDArray[np.float64]:
        """Documents x categories scores of the rows of ``X`` (documents x vocabulary)."""
        return np.asarray(X[:, self.columns] @ self.W)

    def save(self, directory: str) -> None:
        """Save the model as ``directory/llsf.npz`` (local or any Hadoop file system pyarrow reaches)."""
        buffer = io.BytesIO()
        np.savez(buffer, columns=self.columns, W=self.W)
        write_file(directory, LLSF_FILE, buffer.getvalue())

    @staticmethod
    def load(directory: str) -> LLSFModel:
        """The model :meth:`save` wrote in ``directory``."""
        with np.load(io.BytesIO(read_file(directory, LLSF_FILE))) as saved:
            return LLSFModel(saved["columns"], saved["W"])


@dataclass(frozen=True)
class SavedLLSF:
    """An LLSF model saved in ``directory``, read when it scores (a cross-validation fold's, broadcast by path)."""

    directory: str

    def scores(self, X: sparse.csr_matrix) -> NDArray[np.float64]:
        """Documents x categories scores of the rows of ``X`` (documents x vocabulary) by the model saved in
        ``directory``.
        """
        return LLSFModel.load(self.directory).scores(X)


def document_folds(doc_ids: Iterable[str], folds: int, seed: int) -> NDArray[np.int64]:
    """Each document's cross-validation fold, 0..folds-1: the first 8 bytes of BLAKE2b(seed, doc id)
    modulo ``folds``, the same wherever and in whatever order the document is read. Folds are not
    balanced (their sizes are binomial around N / folds).
    """
    prefix = f"{seed}\x00".encode()
    return np.fromiter((int.from_bytes(hashlib.blake2b(prefix + str(doc_id).encode(), digest_size=8).digest(),
                                       "little") % folds for doc_id in doc_ids), dtype=np.int64)


Matrix = sparse.spmatrix | NDArray[np.float64]


def gram_sums(X: Matrix, Y: Matrix, fold: NDArray[np.int64], folds: int,
              gram: bool = True) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Per fold f: (G_f = X_f'X_f, X'Y_f, documents in f), X_f the rows of ``X`` whose ``fold`` is f; as
    arrays of shapes (folds, terms, terms), (folds, terms, categories) and (folds,). Their sums over the
    folds are G, X'Y and N (``folds`` = 1 and ``fold`` all 0 for no cross-validation). Without ``gram``,
    G is left out (shape (folds, 0, 0)): X'Y alone is what naive Bayes needs.
    """
    X = sparse.csr_matrix(X, dtype=np.float64)
    Y = sparse.csr_matrix(Y, dtype=np.float64)
    fold = np.asarray(fold, dtype=np.int64)
    G = np.zeros((folds, X.shape[1], X.shape[1]) if gram else (folds, 0, 0))
    XY = np.zeros((folds, X.shape[1], Y.shape[1]))
    for f in range(folds):
        rows = np.flatnonzero(fold == f)
        if len(rows):
            Xf = X[rows]
            if gram:
                G[f] = (Xf.T @ Xf).toarray()
            XY[f] = (Xf.T @ Y[rows]).toarray()
    return G, XY, np.bincount(fold, minlength=folds)[:folds].astype(np.int64)


def fold_models(G: NDArray[np.float64], XY: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """From the per-fold sums of :func:`gram_sums`, each fold's model, fitted on the other folds' documents:
    W_f = :func:`llsf_weights` (G - G_f, X'Y - X'Y_f, k), shape (folds, terms, categories).
    """
    G_all, XY_all = G.sum(axis=0), XY.sum(axis=0)
    models = []
    with loop(f"LLSF fold models over {G.shape[1]:,} terms", G.shape[0]) as step:  # one eigh each, on the driver
        for f in range(G.shape[0]):
            models.append(llsf_weights(G_all - G[f], XY_all - XY[f], k))
            step()
    return np.stack(models)


@dataclass(frozen=True)
class LLSFParameters(Parameters):
    """The singular values kept (Yang & Liu: 500); X has no more than its terms, so more than the selected terms
    (select.top_k, the smallest of tune.terms) is refused (:data:`METHOD`'s check).
    """

    k: int = field(default=500, metadata=meaning(
        "the singular values kept (Yang & Liu: 500), at most the selected terms", between(1, 100_000)))


#: G = X'X is dense, one per fold, and each model an O(terms^3) eigendecomposition (5,000 terms and 5 folds:
#: 0.9 GiB of sums per task and on the driver); over more terms each model is the truncated SVD of its training
#: rows of X itself, in a Spark task of its own (:func:`llsf_weights_svd`).
MAX_GRAM_TERMS = 5_000


def _fitting(parameters: LLSFParameters, terms: int) -> FromSums | InTasks:
    """Up to :data:`MAX_GRAM_TERMS` terms, from the per-fold sums G = X'X and X'Y (:func:`llsf_weights`); over
    more, the truncated SVD of X in a Spark task of its own per model (:func:`llsf_weights_svd`).
    """
    k = parameters.k
    if terms <= MAX_GRAM_TERMS:

        def without_each_fold(G: NDArray, XY: NDArray, labels: NDArray, columns: NDArray[np.int64]) -> list[LLSFModel]:
            return [LLSFModel(columns, W_f) for W_f in fold_models(G, XY, k)]

        def full(G: NDArray, XY: NDArray, labels: NDArray) -> tuple[NDArray[np.float64], float]:
            return llsf_weights(G, XY, k), 0.0

        return FromSums(gram=True, fold_models=without_each_fold, full=full)

    def fit_one(X: sparse.csr_matrix, Y: NDArray[np.bool_], columns: NDArray[np.int64], directory: str,
                seed: int) -> dict:
        LLSFModel(columns, llsf_weights_svd(X[:, columns], Y, k)).save(directory)
        return {}

    def weights(directory: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        model = LLSFModel.load(directory)
        return model.columns, model.W

    return InTasks(fit_one, SavedLLSF, weights=weights)


def _check(parameters: LLSFParameters, tune: SearchLists, top_k: int | None, thresholding: str) -> str | None:
    selected = [count for count in tune.terms or [top_k] if count]
    if not selected or parameters.k <= min(selected):
        return None
    names = "tune.terms" if tune.terms else "select.top_k"
    return (f"train.llsf.k = {parameters.k} singular values, but {names} = {min(selected)} keeps "
            f"{min(selected)} terms, and X has no more singular values than terms; set "
            f"train.llsf.k <= {min(selected)}")


def _scoring(parameters: LLSFParameters) -> Scoring:
    """A linear score, s = x'W_c."""
    return Scoring(LINEAR)


def _score_range(parameters: LLSFParameters, nonnegative_features: bool) -> ScoreRange:
    """x'W_c fit to 0/1 targets, unbounded; natural t = 0.5, midway between them."""
    return ScoreRange.unbounded(0.5, "x'W_c > 0.5, midway between the 0/1 targets", "LLSF's scores")


def _describe(record: Mapping[str, Any]) -> list[str]:
    return [f"- Method: `llsf`, one linear least-squares fit of the training documents to their categories, "
            f"truncated SVD keeping k = {shown(record, 'k')} singular values"]


#: LLSF (Yang & Chute 1994; Yang & Liu 1999): x'W_c fit to 0/1 targets, unbounded, natural t = 0.5.
METHOD = Method(
    name="llsf", title="LLSF", parameters=LLSFParameters, fitting=_fitting,
    scoring=_scoring, score_range=_score_range, describe=_describe, check=_check,
    unused=("tune.shared_fbr",),
    unused_reason="LLSF is one regression for all categories: its fbr is always one for all categories",
)
