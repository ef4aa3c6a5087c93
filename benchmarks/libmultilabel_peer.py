r"""LibMultiLabel's linear methods on multi-label LIBSVM files or LibMultiLabel-format text files, through its public
API only; run by the separate virtual environment that ``benchmarks/libmultilabel.py`` makes (never the project's:
libmultilabel's ``liblinear-multicore`` installs a ``liblinear`` module over the project's ``liblinear-official``).

    VENV/bin/python -I benchmarks/libmultilabel_peer.py --train DIR/train.svm --test DIR/test.svm \
        --method 1vsrest|thresholding|cost_sensitive|cost_sensitive_micro --output RESULT.json \
        --decisions DECISIONS.npz [--folds FOLDS.tsv]
    VENV/bin/python -I benchmarks/libmultilabel_peer.py --format txt --tfidf default|tutorial \
        --train DIR/train.txt --test DIR/test.txt --vocabulary VOCABULARY.txt --method ... --output ... --decisions ...

``-I`` keeps this directory off ``sys.path`` (``benchmarks/libmultilabel.py`` would hide the package) and the
project's environment out. What it does, timed step by step, as LibMultiLabel's own linear trainer does it:

1. ``load_dataset(FORMAT, train, test)``: LibMultiLabel's own reader of the files (``svm``: LIBSVM lines;
   ``txt``: ``pandas.read_csv`` of 2 or 3 tab-separated columns, plain or compressed by the file name). The ``txt``
   reader's ids, which ``load_dataset`` drops, are kept as its reader returns them: the documents' ids in the
   decisions and folds. With 3 columns, the id column (sparktc's doc ids); with 2, LibMultiLabel's id is the row
   ``k`` (from 0), written as sparktc's doc id ``FILE:{k+1}`` (FILE: the name without ``.gz`` or ``.bz2``), the
   document's line when the file has no blank or skipped line (``benchmarks/libmultilabel.py`` checks that);
2. ``Preprocessor(tfidf_params=...).fit_transform``: for ``txt`` the tf-idf features of scikit-learn's
   ``TfidfVectorizer(**tfidf_params)`` fitted on the training texts (:data:`TFIDF`: ``default``, the quickstart's
   ``Preprocessor()``; ``tutorial``, the tutorial "Tweaking Feature Generation for Linear Methods"), its vocabulary
   written to ``--vocabulary`` (a term a line, in column order); with ``--vocabulary-from FILE``, the vectorizer
   is given FILE's terms as its ``vocabulary`` instead (another tool's, e.g. sparktc's, to tell the features'
   share of a difference from the rest); for ``svm`` the features as given. The labels
   binarized over the training labels (a label no training document has is not a class: LibMultiLabel's default
   ``include_test_labels = False``), training documents without a label kept (``remove_no_label_data = False``);
3. ``train_1vsrest``, ``train_thresholding``, ``train_cost_sensitive`` or ``train_cost_sensitive_micro`` with
   ``--options`` (default ``-s 1 -c 1 -B 1 -e 0.0001``, its linear one-vs-rest defaults); numpy seeded by
   ``--seed`` (the methods' cross-validation permutations come from numpy's global generator). Every
   ``np.random.permutation`` the method draws is recorded as it is drawn, and ``--folds`` gets the fold
   assignment they make (:func:`fold_table`): sparktc's ``train.fold_file``, so that it cross-validates over
   LibMultiLabel's folds;
4. the test documents in batches of ``--batch-size``: ``predict_values``, the metrics of ``get_metrics``
   (Micro-F1, Macro-F1, P@1, P@3, P@5; F1 is 0 at 0/0) updated batch by batch, and each positive decision
   (decision value > 0) kept as (test row, label).

Prints one JSON object (also written to ``--output``): the metrics, the step times, the number of labels,
documents and features (the vocabulary's size for ``txt``), and the versions of libmultilabel, liblinear-multicore,
numpy, scipy and scikit-learn. ``--decisions`` gets the positive decisions as two arrays, ``rows`` (the test row:
its LIBSVM line - 1) and ``labels`` (integers for ``svm``, strings for ``txt``), and for ``txt`` ``ids``, every
test row's id.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import resource
import sys
import time

import numpy as np
from libmultilabel import linear
from libmultilabel.linear import data_utils

METHODS = {"1vsrest": linear.train_1vsrest, "thresholding": linear.train_thresholding,
           "cost_sensitive": linear.train_cost_sensitive, "cost_sensitive_micro": linear.train_cost_sensitive_micro}
NR_FOLD = 3  # linear._micromacro_one_label's and linear._cross_validate's nr_fold
METRICS = ["Micro-F1", "Macro-F1", "P@1", "P@3", "P@5"]
PACKAGES = ("libmultilabel", "liblinear-multicore", "numpy", "scipy", "scikit-learn")
#: LibMultiLabel's two tf-idf settings for text (``Preprocessor(tfidf_params=...)``, scikit-learn's TfidfVectorizer
#: arguments): the quickstart's defaults, and the tutorial "Tweaking Feature Generation for Linear Methods"'s.
TFIDF = {"default": {}, "tutorial": {"max_features": 20000, "min_df": 3, "ngram_range": (1, 3)}}


def visiting_order(y) -> np.ndarray:
    """The label indices in the order ``method`` draws their permutations: train_thresholding's
    ``np.flip(np.argsort(np.sum(y, 2))).flat`` (the same expression on the same matrix), the label order for
    train_cost_sensitive; train_cost_sensitive_micro draws one for all labels.
    """
    return np.asarray(np.flip(np.argsort(np.sum(y.tocsc(), 2))).flat)


def permutation_folds(permutation: np.ndarray) -> np.ndarray:
    """The fold of each training row under one permutation, as LibMultiLabel cuts it: fold f holds the rows at
    positions int(f l / 3) .. int((f + 1) l / 3) - 1 of the permutation.
    """
    rows = len(permutation)
    ends = np.array([int((fold + 1) * rows / NR_FOLD) for fold in range(NR_FOLD)])
    folds = np.empty(rows, dtype=np.int64)
    folds[permutation] = np.searchsorted(ends, np.arange(rows), side="right")
    return folds


def fold_table(method: str, permutations: list[np.ndarray], labels: list[str], y, doc_ids: list[str]) -> str:
    """The fold file (sparktc's ``train.fold_file``) of the permutations drawn: a header ``doc_id`` then each
    label (``*`` for one assignment of all labels), then a line per training row: its sparktc doc id (``doc_ids``,
    by row) and its fold for each label.
    """
    if method == "cost_sensitive_micro":
        columns, names = [permutation_folds(permutations[0])], ["*"]
    else:
        order = visiting_order(y) if method == "thresholding" else np.arange(len(labels))
        if len(order) != len(permutations):
            raise RuntimeError(f"{method} drew {len(permutations)} permutations for {len(order)} labels")
        by_label = {int(label): permutation_folds(drawn) for label, drawn in zip(order, permutations)}
        columns, names = [by_label[j] for j in range(len(labels))], list(labels)
    matrix = np.column_stack(columns).astype(str)
    lines = ["\t".join(["doc_id", *names])]
    lines += [f"{doc_ids[row]}\t" + "\t".join(matrix[row]) for row in range(matrix.shape[0])]
    return "\n".join(lines) + "\n"


def main() -> int:
    """Run one LibMultiLabel linear method on the LIBSVM files, timed step by step, and write its figures and decisions
    (module docstring); the exit code.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--format", choices=["svm", "txt"], default="svm",
                        help="LibMultiLabel's data_format: LIBSVM lines or LibMultiLabel-format text")
    parser.add_argument("--tfidf", choices=list(TFIDF), help="txt only: the tf-idf setting (default: default)")
    parser.add_argument("--vocabulary", help="txt only: write the tf-idf vocabulary here, a term a line")
    parser.add_argument("--vocabulary-from", help="txt only: give the vectorizer these terms (a term a line) as its "
                                                  "vocabulary instead of choosing them")
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--method", choices=list(METHODS), default="1vsrest")
    parser.add_argument("--options", default="-s 1 -c 1 -B 1 -e 0.0001")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=8192)
    parser.add_argument("--output", required=True)
    parser.add_argument("--decisions", required=True)
    parser.add_argument("--folds", help="write the fold assignment of the permutations drawn here (sparktc's "
                                        "train.fold_file)")
    arguments = parser.parse_args()
    text = arguments.format == "txt"
    if not text and (arguments.tfidf or arguments.vocabulary or arguments.vocabulary_from):
        parser.error("--tfidf, --vocabulary and --vocabulary-from are for --format txt: LIBSVM files come with their "
                     "features")
    arguments.tfidf = (arguments.tfidf or "default") if text else None
    np.random.seed(arguments.seed)
    drawn: list[np.ndarray] = []
    columns: list[int] = []
    permutation = np.random.permutation

    def recorded(*args, **kwargs):
        drawn.append(np.asarray(permutation(*args, **kwargs)))
        return drawn[-1]

    np.random.permutation = recorded  # the methods call np.random.permutation; the same draws, kept
    ids: list[list[str]] = []  # each text file's ids as LibMultiLabel's reader returns them (load_dataset drops them)
    reader = data_utils._read_libmultilabel_format

    def kept(path, *args, **kwargs):
        data = reader(path, *args, **kwargs)
        if "idx" in data:  # 3 columns
            ids.append([str(value) for value in data["idx"]])
        else:  # 2 columns: the row, from pandas' reset_index
            name = re.sub(r"\.(gz|bz2)$", "", str(path).rsplit("/", 1)[-1])
            ids.append([f"{name}:{row + 1}" for row in data["index"]])
        columns.append(3 if "idx" in data else 2)
        return data

    data_utils._read_libmultilabel_format = kept
    steps: dict[str, float] = {}
    began = time.perf_counter()

    dataset = linear.load_dataset(arguments.format, arguments.train, arguments.test)
    steps["read"] = time.perf_counter() - began
    data_utils._read_libmultilabel_format = reader
    mark = time.perf_counter()
    tfidf_params = TFIDF[arguments.tfidf] if text else {}
    if arguments.vocabulary_from:  # scikit-learn applies no min_df or max_features to a given vocabulary
        with open(arguments.vocabulary_from, encoding="utf-8") as handle:
            tfidf_params = {**tfidf_params, "vocabulary": handle.read().split("\n")[:-1]}
    preprocessor = linear.Preprocessor(tfidf_params=tfidf_params) if text else linear.Preprocessor()
    dataset = preprocessor.fit_transform(dataset)
    steps["preprocess"] = time.perf_counter() - mark
    if text:
        train_ids, test_ids = ids
        if arguments.vocabulary:
            with open(arguments.vocabulary, "w", encoding="utf-8") as handle:
                handle.writelines(f"{term}\n" for term in preprocessor.vectorizer.get_feature_names_out())
    else:
        name = arguments.train.rsplit("/", 1)[-1]
        train_ids = [f"{name}:{row + 1}" for row in range(dataset["train"]["x"].shape[0])]

    mark = time.perf_counter()
    model = METHODS[arguments.method](dataset["train"]["y"], dataset["train"]["x"], options=arguments.options,
                                      verbose=False)
    steps["train"] = time.perf_counter() - mark
    np.random.permutation = permutation
    order = [str(preprocessor.label_mapping[j]) for j in visiting_order(dataset["train"]["y"])]
    if arguments.folds and drawn:
        with open(arguments.folds, "w") as handle:
            handle.write(fold_table(arguments.method, drawn, [str(label) for label in preprocessor.label_mapping],
                                    dataset["train"]["y"], train_ids))

    mark = time.perf_counter()
    x, y = dataset["test"]["x"], dataset["test"]["y"]
    metrics = linear.get_metrics(METRICS, y.shape[1])
    names = np.asarray(preprocessor.label_mapping).astype(str if text else np.int64)
    rows, labels = [], []
    for start in range(0, x.shape[0], arguments.batch_size):
        values = linear.predict_values(model, x[start:start + arguments.batch_size])
        metrics.update(values, y[start:start + arguments.batch_size].toarray())
        row, column = np.nonzero(values > 0)
        rows.append((row + start).astype(np.int64))
        labels.append(names[column])
    result = {key: float(value) for key, value in metrics.compute().items()}
    steps["predict_evaluate"] = time.perf_counter() - mark
    np.savez(arguments.decisions, rows=np.concatenate(rows or [np.zeros(0, np.int64)]),
             labels=np.concatenate(labels or [names[:0]]), **({"ids": np.asarray(test_ids, dtype=str)} if text else {}))

    record = {
        "method": arguments.method, "options": arguments.options, "seed": arguments.seed,
        "batch_size": arguments.batch_size, "metrics": result, "labels": int(y.shape[1]),
        "train_documents": int(dataset["train"]["x"].shape[0]), "test_documents": int(x.shape[0]),
        "features": int(dataset["train"]["x"].shape[1]), "permutations": len(drawn),
        "visiting_order": order if arguments.method == "thresholding" else None,
        "train": arguments.train, "test": arguments.test,
        **({"format": arguments.format, "tfidf": arguments.tfidf, "tfidf_params": TFIDF[arguments.tfidf],
            "vocabulary": arguments.vocabulary, "vocabulary_from": arguments.vocabulary_from,
            "columns": columns} if text else {}),
        "steps_seconds": {key: round(value, 3) for key, value in steps.items()},
        "seconds": round(time.perf_counter() - began, 3),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "versions": {name: importlib.metadata.version(name) for name in PACKAGES},
        "python": sys.version.split()[0],
    }
    summary = json.dumps(record, indent=2)
    with open(arguments.output, "w") as handle:
        handle.write(summary + "\n")
    print(summary, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
