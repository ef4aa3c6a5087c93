"""CPU seconds of the LIBSVM readers on one generated file shaped like RCV1-v2 (LibMultiLabel's rcv1 train.svm):
the line parser (``parse_libsvm`` through ``read_records``, what ingest ran per file) against the column-wise
``read_libsvm``; both give the same records (checked here). With ``--corpus DIR --output OUT``: DIR/train.svm and
DIR/test.svm of ``--lines`` documents in RCV1-v2's proportions (23,149 of 804,414 for training; reused when
there), and the ingest stage alone of conf/libsvm.toml on them into OUT (Spark ``local[2]``), its seconds.

    .venv/bin/python -m benchmarks.libsvm_parse --lines 100000
    .venv/bin/python -m benchmarks.libsvm_parse --lines 100000 --corpus /tmp/libsvm-100k --output /tmp/ingest-100k
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from sparktc.corpora.files import read_records
from sparktc.corpora.libsvm import parse_libsvm, read_libsvm
from sparktc.corpora.records import record_batches
from sparktc.schemas import RECORD_SCHEMA


def rcv1_like(lines: int, seed: int = 0, digits: str = "repr") -> bytes:
    """``lines`` documents of 1-4 labels (of 103) and about 75 features (indices of 47,236, ascending) each; values
    are unit-norm TF-IDF-like weights written as Python writes them (``digits="repr"``) or as ``%.6e``.
    """
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(lines):
        labels = ",".join(map(str, rng.choice(103, size=rng.integers(1, 5), replace=False)))
        indices = np.sort(rng.choice(47_236, size=max(1, int(rng.normal(75, 20))), replace=False)) + 1
        values = rng.random(len(indices))
        values /= np.linalg.norm(values)
        texts = [repr(v) for v in values.round(6).tolist()] if digits == "repr" else [f"{v:.6e}" for v in values]
        out.append(labels + " " + " ".join(f"{i}:{v}" for i, v in zip(indices.tolist(), texts)) + "\n")
    return "".join(out).encode()


def cpu(work) -> tuple[float, object]:
    """The CPU seconds ``work()`` took, and its result."""
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main() -> None:
    """Time both LIBSVM readers on a generated file and print their speeds, or time the ingest stage alone with
    ``--corpus`` (module docstring).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--digits", choices=["repr", "e"], default="repr")
    parser.add_argument("--corpus", type=Path, help="write (or reuse) train.svm and test.svm here and ingest them")
    parser.add_argument("--output", help="the ingest run's output directory (new)")
    arguments = parser.parse_args()
    if arguments.corpus is not None:
        ingest(arguments.corpus, arguments.output, arguments.lines, arguments.digits)
        return
    data = rcv1_like(arguments.lines, digits=arguments.digits)
    old_seconds, old = cpu(lambda: pa.Table.from_batches(
        list(record_batches(read_records(parse_libsvm, data, "train.svm"))), RECORD_SCHEMA))
    new_seconds, new = cpu(lambda: pa.Table.from_batches(list(read_libsvm(data, "train.svm")), RECORD_SCHEMA))
    assert old.equals(new), "the readers disagree"
    mib = len(data) / 2**20
    print(f"{arguments.lines:,} lines, {mib:.1f} MiB, values {arguments.digits}: line parser {old_seconds:.2f} CPU-s "
          f"({mib / old_seconds:.1f} MiB/s), column-wise {new_seconds:.2f} CPU-s ({mib / new_seconds:.1f} MiB/s), "
          f"{old_seconds / new_seconds:.1f}x; records identical")


def ingest(corpus: Path, output: str, lines: int, digits: str) -> None:
    """The ingest stage alone on ``lines`` generated documents in ``corpus`` (written unless there), into ``output``."""
    from sparktc.apps.pipeline import run
    from sparktc.experiment.config import load_config
    from sparktc.runtime.session import build_session

    train = round(23_149 * lines / 804_414)
    corpus.mkdir(parents=True, exist_ok=True)
    for name, count, seed in (("train.svm", train, 1), ("test.svm", lines - train, 2)):
        if not (corpus / name).exists():
            (corpus / name).write_bytes(rcv1_like(count, seed, digits))
    for variable, value in (("PYSPARK_PYTHON", sys.executable), ("PYSPARK_DRIVER_PYTHON", sys.executable),
                            ("SPARK_LOCAL_IP", "127.0.0.1")):
        os.environ.setdefault(variable, value)  # the workers run this Python (pyarrow, numpy)
    spark = build_session(app_name="libsvm-ingest", master="local[2]", conf={
        "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1"})
    [manifest] = run(spark, load_config("conf/libsvm.toml", [f"corpus.path={corpus}"]), output, "ingest")
    print(f"ingest of {lines:,} documents ({train:,} training): {manifest['seconds']:.1f} s "
          f"(rows in {manifest['rows_in']:,}, out {manifest['rows_out']:,})")


if __name__ == "__main__":
    main()
