r"""LibMultiLabel's linear methods on multi-label LIBSVM files, through its public API only; run by the separate
virtual environment that ``benchmarks/libmultilabel.py`` makes (never the project's: libmultilabel's
``liblinear-multicore`` installs a ``liblinear`` module over the project's ``liblinear-official``).

    VENV/bin/python -I benchmarks/libmultilabel_peer.py --train DIR/train.svm --test DIR/test.svm \
        --method 1vsrest|thresholding|cost_sensitive --output RESULT.json --decisions DECISIONS.npz

``-I`` keeps this directory off ``sys.path`` (``benchmarks/libmultilabel.py`` would hide the package) and the
project's environment out. What it does, timed step by step, as LibMultiLabel's own linear trainer does it:

1. ``load_dataset("svm", train, test)``: LibMultiLabel's own reader of the files;
2. ``Preprocessor().fit_transform``: the labels binarized over the training labels (a label no training document
   has is not a class: LibMultiLabel's default ``include_test_labels = False``);
3. ``train_1vsrest``, ``train_thresholding`` or ``train_cost_sensitive`` with ``--options`` (default
   ``-s 1 -c 1 -B 1 -e 0.0001``, its linear one-vs-rest defaults); numpy seeded by ``--seed`` (the methods'
   cross-validation permutations come from numpy's global generator);
4. the test documents in batches of ``--batch-size``: ``predict_values``, the metrics of ``get_metrics``
   (Micro-F1, Macro-F1, P@1, P@3, P@5; F1 is 0 at 0/0) updated batch by batch, and each positive decision
   (decision value > 0) kept as (test line - 1, label).

Prints one JSON object (also written to ``--output``): the metrics, the step times, the number of labels and
documents, and the versions of libmultilabel, liblinear-multicore, numpy and scipy. ``--decisions`` gets the
positive decisions as two arrays, ``rows`` and ``labels``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import resource
import sys
import time

import numpy as np
from libmultilabel import linear

METHODS = {"1vsrest": linear.train_1vsrest, "thresholding": linear.train_thresholding,
           "cost_sensitive": linear.train_cost_sensitive}
METRICS = ["Micro-F1", "Macro-F1", "P@1", "P@3", "P@5"]
PACKAGES = ("libmultilabel", "liblinear-multicore", "numpy", "scipy", "scikit-learn")


def main() -> int:
    """Run one LibMultiLabel linear method on the LIBSVM files, timed step by step, and write its figures and decisions
    (module docstring); the exit code.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--method", choices=list(METHODS), default="1vsrest")
    parser.add_argument("--options", default="-s 1 -c 1 -B 1 -e 0.0001")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=8192)
    parser.add_argument("--output", required=True)
    parser.add_argument("--decisions", required=True)
    arguments = parser.parse_args()
    np.random.seed(arguments.seed)
    steps: dict[str, float] = {}
    began = time.perf_counter()

    dataset = linear.load_dataset("svm", arguments.train, arguments.test)
    steps["read"] = time.perf_counter() - began
    mark = time.perf_counter()
    preprocessor = linear.Preprocessor()
    dataset = preprocessor.fit_transform(dataset)
    steps["preprocess"] = time.perf_counter() - mark

    mark = time.perf_counter()
    model = METHODS[arguments.method](dataset["train"]["y"], dataset["train"]["x"], options=arguments.options,
                                      verbose=False)
    steps["train"] = time.perf_counter() - mark

    mark = time.perf_counter()
    x, y = dataset["test"]["x"], dataset["test"]["y"]
    metrics = linear.get_metrics(METRICS, y.shape[1])
    rows, labels = [], []
    for start in range(0, x.shape[0], arguments.batch_size):
        values = linear.predict_values(model, x[start:start + arguments.batch_size])
        metrics.update(values, y[start:start + arguments.batch_size].toarray())
        row, column = np.nonzero(values > 0)
        rows.append((row + start).astype(np.int64))
        labels.append(np.asarray(preprocessor.label_mapping)[column].astype(np.int64))
    result = {key: float(value) for key, value in metrics.compute().items()}
    steps["predict_evaluate"] = time.perf_counter() - mark
    np.savez(arguments.decisions, rows=np.concatenate(rows or [np.zeros(0, np.int64)]),
             labels=np.concatenate(labels or [np.zeros(0, np.int64)]))

    record = {
        "method": arguments.method, "options": arguments.options, "seed": arguments.seed,
        "batch_size": arguments.batch_size, "metrics": result, "labels": int(y.shape[1]),
        "train_documents": int(dataset["train"]["x"].shape[0]), "test_documents": int(x.shape[0]),
        "features": int(dataset["train"]["x"].shape[1]),
        "steps_seconds": {key: round(value, 3) for key, value in steps.items()},
        "seconds": round(time.perf_counter() - began, 3),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "versions": {name: importlib.metadata.version(name) for name in PACKAGES},
        "python": sys.version.split()[0],
    }
    text = json.dumps(record, indent=2)
    with open(arguments.output, "w") as handle:
        handle.write(text + "\n")
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
