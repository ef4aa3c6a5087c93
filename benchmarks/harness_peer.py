"""Part of the benchmark harness (:mod:`benchmarks.harness`): the core the single-process peers share
(``benchmarks/lean_peer.py`` over LYRL2004's token files, ``benchmarks/text_peer.py`` over raw text): ltc weighting,
one LIBLINEAR model per category as LIBLINEAR's ``train`` command makes it, the test documents scored and counted,
and micro/macro precision, recall and F1. numpy, scipy and LIBLINEAR only: no sparktc, so a peer is what a lean
single-process program costs.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from liblinear import liblinearutil
from scipy import sparse

LIBLINEAR_OPTIONS = "-s 1 -c 1 -e 0.0001 -B 1 -q"  # conf/rcv1.toml [train]
BIAS = 1.0
WEIGHT_ROWS = 100_000  # rows weighted at a time (bounds the float temporaries)
_LIBC = ctypes.CDLL(None)  # LIBLINEAR's dual solver shuffles with the C library's rand()


def ltc(tf: sparse.csr_matrix, idf_values: np.ndarray) -> sparse.csr_matrix:
    """In place: w = (1 + ln tf) * idf, each row divided by its L2 norm (a zero row stays zero); computed in
    float64, stored in tf's float32.
    """
    for start in range(0, tf.shape[0], WEIGHT_ROWS):
        indptr = tf.indptr[start:start + WEIGHT_ROWS + 1]
        low, high = indptr[0], indptr[-1]
        weights = (1.0 + np.log(tf.data[low:high], dtype=np.float64)) * idf_values[tf.indices[low:high]]
        lengths = np.diff(indptr)
        filled = lengths > 0  # reduceat needs each segment's start, empty segments excluded
        norms = np.ones(len(lengths))
        norms[filled] = np.sqrt(np.add.reduceat(weights * weights, indptr[:-1][filled] - low))
        norms[norms == 0] = 1.0
        tf.data[low:high] = weights / np.repeat(norms, lengths)
    return tf


def train(X: sparse.csr_matrix, Y: sparse.csc_matrix, options: str = LIBLINEAR_OPTIONS
          ) -> tuple[np.ndarray, np.ndarray]:
    """One LIBLINEAR binary problem per column of Y: W (features x categories) and b, score = x W + b."""
    n_docs, n_features = X.shape
    problem = liblinearutil.problem(np.zeros(n_docs), X)  # the CSR -> LIBLINEAR copy, once
    labels = np.ctypeslib.as_array(problem.y, (n_docs,))  # LIBLINEAR reads prob->y, never writes it
    W = np.zeros((Y.shape[1], n_features))
    b = np.zeros(Y.shape[1])
    for j in range(Y.shape[1]):
        positive = Y[:, j].toarray().ravel()
        if positive.all():  # one class only: always assign (as sparktc)
            b[j] = 1.0
            continue
        labels[:] = np.where(positive, 1.0, -1.0)
        _LIBC.srand(1)  # each model as LIBLINEAR's train command makes it (sparktc reseeds the same way)
        model = liblinearutil.train(problem, options)
        w = np.ctypeslib.as_array(model.w, (n_features + 1,))  # the last weight is the bias feature's
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0  # w separates the first label LIBLINEAR saw
        W[j] = sign * w[:n_features]
        b[j] = sign * w[n_features] * BIAS
    return np.ascontiguousarray(W.T), b


def predict_and_count(X: list[sparse.csr_matrix], W: np.ndarray, b: np.ndarray, Y: sparse.csc_matrix
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per category TP, FP, FN of "X W + b > 0" against Y, one block of test rows at a time.

    X and W are float32 (X as sparktc stores it; scipy then sums in float32, over twice as fast as float64).
    """
    tp, fp, fn = (np.zeros(W.shape[1], dtype=np.int64) for _ in range(3))
    W = W.astype(np.float32)
    Y = Y.tocsr()
    start = 0
    for block in X:
        assigned = np.asarray(block @ W) + b > 0
        truth = Y[start:start + block.shape[0]].toarray()
        start += block.shape[0]
        hits = np.count_nonzero(assigned & truth, axis=0)
        tp += hits
        fp += np.count_nonzero(assigned, axis=0) - hits
        fn += np.count_nonzero(truth, axis=0) - hits
    return tp, fp, fn


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """The ratio numerator / denominator, 1 where the denominator is 0."""
    return np.divide(numerator, denominator, out=np.ones(len(numerator)), where=denominator > 0)


def scores(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> dict[str, Any]:
    """Micro and macro P, R, F1 and per-category F1; each measure is 1 when its denominator is 0."""
    counts = [np.asarray(v, dtype=np.float64) for v in (tp, fp, fn)]
    total = [np.array([v.sum()]) for v in counts]

    def measures(t: np.ndarray, f_p: np.ndarray, f_n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return ratio(t, t + f_p), ratio(t, t + f_n), ratio(2 * t, 2 * t + f_p + f_n)

    micro = [float(v[0]) for v in measures(*total)]
    per_category = measures(*counts)
    macro = [float(v.mean()) if len(v) else 1.0 for v in per_category]
    return {"micro_precision": micro[0], "micro_recall": micro[1], "micro_f1": micro[2],
            "macro_precision": macro[0], "macro_recall": macro[1], "macro_f1": macro[2], "f1": per_category[2]}
