"""Single-process peer of sparktc: scikit-learn + scipy + LIBLINEAR in ONE Python process (no Spark, no multiprocessing).

This is the baseline a competent user would write instead of sparktc for the LYRL2004 task (REFERENCE.md
sections 1, 3, 5, 6), run on exactly the tokens and labels sparktc ingests:

    .venv/bin/python benchmarks/single_process.py --corpus DIR --output FILE.json [--test-parts 0,1,2,3] \
        [--hierarchy rcv1.topics.hier.orig]

DIR holds ``lyrl2004_tokens_train.dat[.gz]``, ``lyrl2004_tokens_test_pt{0..3}.dat[.gz]``,
``rcv1-v2.topics.qrels[.gz]`` and (unless --hierarchy names it elsewhere) ``rcv1.topics.hier.orig``.

Steps, each timed with the wall clock:

* read: sparktc's own pure readers (``parse_token_file``, ``parse_qrels``, ``read_lines``), so tokens and
  labels are identical to sparktc's ingest; any Reject stops the run (sparktc's ``corpus.on_error = "fail"``);
  a doc id repeated across files keeps its first record by (file path, line), as sparktc's ingest does.
* weight: ``CountVectorizer`` fit on the training documents (vocabulary = training terms), then ltc
  w = (1 + ln tf) * ln(N / df) with N and df from the training documents, rows L2-normalised.
* train: one-vs-rest LIBLINEAR ``-s 1 -c 1 -e 0.0001 -B 1`` (sparktc's defaults), one binary problem per
  category of the hierarchy with >= 1 training positive; the LIBLINEAR problem is built once and only its
  labels are rewritten per category.
* predict: decision values X_test W + b, a category is assigned when its value is > 0.
* evaluate: per-category TP/FP/FN; micro- and macro-F1 over the categories with >= 1 training positive,
  F1 = 1 when TP = FP = FN = 0 (sparktc's ``evaluate.zero_division = 1``, ``average_over = "train_positive"``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from liblinear import liblinearutil
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # sparktc is not installed: it is imported from the checkout

from sparktc.corpora.files import read_lines
from sparktc.corpora.lyrl2004 import (
    HIERARCHY_FILE,
    QRELS_FILE,
    TEST_FILES,
    TRAIN_FILE,
    parse_hierarchy,
    parse_qrels,
    parse_token_file,
    split_of,
)
from sparktc.records import TRAIN, Reject

TOOL = "single-process scikit-learn + LIBLINEAR"
LIBLINEAR_OPTIONS = "-s 1 -c 1 -e 0.0001 -B 1 -q"  # sparktc's defaults (conf/rcv1.toml [train])
BIAS = 1.0
PREDICT_ROWS = 100_000  # test documents scored at a time (bounds the dense score block)


@dataclass
class Corpus:
    """Documents of both splits (in reading order) and the categories to train."""

    train_ids: list[str]
    train_tokens: list[tuple[str, ...]]
    test_ids: list[str]
    test_tokens: list[tuple[str, ...]]
    labels: dict[str, set[str]]  # doc id -> categories (from the qrels)
    categories: list[str]  # every topic of the hierarchy, sorted
    duplicates: int  # records dropped because their doc id was read earlier


# --- read -------------------------------------------------------------------------------------------


def corpus_files(corpus: str, name: str) -> list[str]:
    """The files ``name`` or ``name.gz`` in ``corpus`` (sparktc globs ``name*``), sorted; fail if none."""
    found = sorted(glob.glob(os.path.join(glob.escape(corpus), glob.escape(name) + "*")))
    if not found:
        raise SystemExit(f"{name}[.gz] not found in {corpus}")
    return found


def _accepted(items: Iterator[Any]) -> Iterator[Any]:
    """The items of a sparktc reader, stopping at the first Reject (``corpus.on_error = "fail"``)."""
    for item in items:
        if isinstance(item, Reject):
            raise SystemExit(f"bad input: {item.message()}")
        yield item


def read_corpus(corpus: str, test_parts: Sequence[int], hierarchy_path: str | None = None) -> Corpus:
    """Parse token files, qrels and hierarchy with sparktc's readers; keep the first record of each doc id."""
    hierarchy_path = hierarchy_path or corpus_files(corpus, HIERARCHY_FILE)[0]
    hierarchy = parse_hierarchy(read_lines(Path(hierarchy_path).read_bytes(), hierarchy_path), hierarchy_path)
    paths = corpus_files(corpus, TRAIN_FILE) + [p for part in test_parts for p in corpus_files(corpus, TEST_FILES[part])]
    read = Corpus([], [], [], [], {}, list(hierarchy.categories), 0)
    seen: set[str] = set()
    for path in sorted(paths):  # first by (file path, line), like sparktc's duplicate rule
        split = split_of(path)
        for document in _accepted(parse_token_file(read_lines(Path(path).read_bytes(), path), path, split)):
            if document.doc_id in seen:
                read.duplicates += 1
                continue
            seen.add(document.doc_id)
            ids, tokens = (read.train_ids, read.train_tokens) if split == TRAIN else (read.test_ids, read.test_tokens)
            ids.append(document.doc_id)
            tokens.append(tuple(map(sys.intern, document.tokens)))  # one str per distinct term: about half the memory
    known = set(hierarchy.categories)
    all_parts = sorted(test_parts) == [0, 1, 2, 3]
    for path in corpus_files(corpus, QRELS_FILE):
        for assignment in _accepted(parse_qrels(read_lines(Path(path).read_bytes(), path), path)):
            where = f"{path}:{assignment.line}"
            if assignment.category not in known:
                raise SystemExit(f"bad input: {where}: unknown category {assignment.category} (not in {hierarchy_path})")
            if assignment.doc_id not in seen:
                if all_parts:  # with a subset of the test parts, lines for the other parts are expected
                    raise SystemExit(f"bad input: {where}: qrels line for doc {assignment.doc_id}, not in the token files")
                continue
            read.labels.setdefault(assignment.doc_id, set()).add(assignment.category)
    return read


# --- weight -----------------------------------------------------------------------------------------


def identity(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """CountVectorizer analyzer: the documents are token lists already (LYRL2004 tokens are stemmed)."""
    return tokens


def ltc(counts: sparse.csr_matrix, idf: np.ndarray) -> sparse.csr_matrix:
    """w = (1 + ln tf) * idf, each row divided by its L2 norm (REFERENCE.md section 3)."""
    weights = counts.astype(np.float64)
    weights.data = (1.0 + np.log(weights.data)) * idf[weights.indices]
    return normalize(weights, norm="l2", copy=False)


def weight(train_tokens: list, test_tokens: list) -> tuple[sparse.csr_matrix, sparse.csr_matrix, list[str]]:
    """ltc matrices of the training and test documents over the training vocabulary (sorted terms)."""
    vectorizer = CountVectorizer(analyzer=identity)
    train_counts = sparse.csr_matrix(vectorizer.fit_transform(train_tokens))
    test_counts = sparse.csr_matrix(vectorizer.transform(test_tokens))
    n_train = train_counts.shape[0]
    df = np.bincount(train_counts.indices, minlength=train_counts.shape[1])  # CSR rows hold each term once
    idf = np.log(n_train / df)
    return ltc(train_counts, idf), ltc(test_counts, idf), list(vectorizer.get_feature_names_out())


def label_matrix(doc_ids: list[str], labels: dict[str, set[str]], categories: list[str]) -> sparse.csc_matrix:
    """Documents x ``categories`` boolean indicator matrix (CSC: one column per category; other labels ignored)."""
    column = {category: j for j, category in enumerate(categories)}
    rows, cols = [], []
    for i, doc_id in enumerate(doc_ids):
        for category in labels.get(doc_id, ()):
            if category in column:
                rows.append(i)
                cols.append(column[category])
    data = np.ones(len(rows), dtype=bool)
    return sparse.csc_matrix((data, (rows, cols)), shape=(len(doc_ids), len(categories)), dtype=bool)


# --- train and predict ------------------------------------------------------------------------------


def train_one_vs_rest(X: sparse.csr_matrix, Y: sparse.csc_matrix, options: str = LIBLINEAR_OPTIONS
                      ) -> tuple[np.ndarray, np.ndarray]:
    """One LIBLINEAR binary problem per column of Y (each with >= 1 positive): W (features x categories), b."""
    n_docs, n_features = X.shape
    problem = liblinearutil.problem(np.zeros(n_docs), X)  # the CSR -> LIBLINEAR copy, once
    labels = np.ctypeslib.as_array(problem.y, (n_docs,))  # LIBLINEAR reads prob->y, never writes it
    W = np.zeros((n_features, Y.shape[1]))
    b = np.zeros(Y.shape[1])
    for j in range(Y.shape[1]):
        positive = Y[:, j].toarray().ravel()
        if positive.all():  # one class only: always assign (sparktc does the same)
            b[j] = 1.0
            continue
        labels[:] = np.where(positive, 1.0, -1.0)
        model = liblinearutil.train(problem, options)
        w = np.ctypeslib.as_array(model.w, (n_features + 1,))  # last weight is the bias feature's
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0  # w is for the first label LIBLINEAR saw
        W[:, j] = sign * w[:n_features]
        b[j] = sign * w[n_features] * BIAS
    return W, b


def train(read: Corpus, X_train: sparse.csr_matrix) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The categories with >= 1 training positive and their models (the others are never assigned)."""
    train_positives = np.asarray(label_matrix(read.train_ids, read.labels, read.categories).sum(axis=0)).ravel()
    trained = [category for category, n in zip(read.categories, train_positives) if n > 0]
    return trained, *train_one_vs_rest(X_train, label_matrix(read.train_ids, read.labels, trained))


def predict(X: sparse.csr_matrix, W: np.ndarray, b: np.ndarray) -> sparse.csc_matrix:
    """Documents x categories assignments: decision value X W + b > 0 (scored in blocks of rows)."""
    blocks = [sparse.csr_matrix(np.asarray(X[start:start + PREDICT_ROWS] @ W) + b > 0)
              for start in range(0, X.shape[0], PREDICT_ROWS)]
    if not blocks:
        return sparse.csc_matrix((0, W.shape[1]), dtype=bool)
    return sparse.vstack(blocks, format="csc")


# --- evaluate ---------------------------------------------------------------------------------------


def contingency(Y_true: sparse.csc_matrix, Y_pred: sparse.csc_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per category: TP, FP, FN."""
    positives = np.asarray(Y_true.sum(axis=0)).ravel()
    assigned = np.asarray(Y_pred.sum(axis=0)).ravel()
    tp = np.asarray(Y_true.multiply(Y_pred).sum(axis=0)).ravel()
    return tp, assigned - tp, positives - tp


def f1_scores(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Micro-F1, macro-F1 and per-category F1; F1 = 1 when TP = FP = FN = 0 (LYRL2004)."""
    denominator = 2 * tp + fp + fn
    per_category = np.divide(2 * tp, denominator, out=np.ones(len(tp)), where=denominator > 0)
    total = 2 * tp.sum() + fp.sum() + fn.sum()
    micro = float(2 * tp.sum() / total) if total else 1.0
    return micro, float(per_category.mean()), per_category


# --- the run ----------------------------------------------------------------------------------------


def timed(steps: dict[str, float], name: str, function: Callable[..., Any], *args: Any) -> Any:
    """Run ``function(*args)``, record and print its wall time under ``name``."""
    started = time.perf_counter()
    result = function(*args)
    steps[name] = time.perf_counter() - started
    print(f"{name:<9} {steps[name]:9.2f} s", flush=True)
    return result


def run(corpus: str, test_parts: Sequence[int], hierarchy: str | None = None) -> dict[str, Any]:
    """All five steps; the result record (the output JSON)."""
    steps: dict[str, float] = {}
    read = timed(steps, "read", read_corpus, corpus, test_parts, hierarchy)
    X_train, X_test, vocabulary = timed(steps, "weight", weight, read.train_tokens, read.test_tokens)
    trained, W, b = timed(steps, "train", train, read, X_train)
    Y_pred = timed(steps, "predict", predict, X_test, W, b)

    def evaluate() -> tuple[float, float, np.ndarray, tuple]:
        table = contingency(label_matrix(read.test_ids, read.labels, trained), Y_pred)
        return (*f1_scores(*table), table)

    micro, macro, per_category, (tp, fp, fn) = timed(steps, "evaluate", evaluate)
    total = sum(steps.values())
    print(f"{'total':<9} {total:9.2f} s", flush=True)
    print(f"micro-F1 {micro:.4f}  macro-F1 {macro:.4f}  over {len(trained)} categories with >= 1 training positive "
          "(F1 = 1 when TP = FP = FN = 0)", flush=True)
    return {
        "tool": TOOL,
        "steps": {name: round(seconds, 3) for name, seconds in steps.items()},
        "total_seconds": round(total, 3),
        "documents": {"train": len(read.train_ids), "test": len(read.test_ids)},
        "features": len(vocabulary),
        "categories_trained": len(trained),
        "micro_f1": micro,
        "macro_f1": macro,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "duplicate_records_dropped": read.duplicates,
        "liblinear_options": LIBLINEAR_OPTIONS,
        "per_category": [
            {"category": c, "tp": int(tp[j]), "fp": int(fp[j]), "fn": int(fn[j]), "f1": float(per_category[j])}
            for j, c in enumerate(trained)
        ],
    }


def parse_parts(text: str) -> list[int]:
    parts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not parts or any(part not in range(4) for part in parts):
        raise argparse.ArgumentTypeError(f"test parts must be a comma-separated subset of 0,1,2,3; got {text!r}")
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="directory of the LYRL2004 files")
    parser.add_argument("--output", required=True, help="result JSON file")
    parser.add_argument("--test-parts", type=parse_parts, default=[0, 1, 2, 3], help="e.g. 0,1 (default 0,1,2,3)")
    parser.add_argument("--hierarchy", default=None, help=f"default: {HIERARCHY_FILE}[.gz] in --corpus")
    arguments = parser.parse_args(argv)
    result = run(arguments.corpus, arguments.test_parts, arguments.hierarchy)
    Path(arguments.output).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
