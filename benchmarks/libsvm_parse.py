"""CPU seconds of the LIBSVM readers on one generated file shaped like RCV1-v2 (LibMultiLabel's rcv1 train.svm):
the line parser (``parse_libsvm`` through ``read_records``, what ingest ran per file) against the column-wise
``read_libsvm``; both give the same records (checked here).

    .venv/bin/python benchmarks/libsvm_parse.py --lines 100000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from sparktc.corpora.files import read_records
from sparktc.corpora.libsvm import parse_libsvm, read_libsvm
from sparktc.corpora.records import record_batches
from sparktc.schemas import RECORD_SCHEMA


def rcv1_like(lines: int, seed: int = 0, digits: str = "repr") -> bytes:
    """``lines`` documents of 1-4 labels (of 103) and about 75 features (indices of 47,236, ascending) each; values
    are unit-norm TF-IDF-like weights written as Python writes them (``digits="repr"``) or as ``%.6e``."""
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
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--digits", choices=["repr", "e"], default="repr")
    arguments = parser.parse_args()
    data = rcv1_like(arguments.lines, digits=arguments.digits)
    old_seconds, old = cpu(lambda: pa.Table.from_batches(
        list(record_batches(read_records(parse_libsvm, data, "train.svm"))), RECORD_SCHEMA))
    new_seconds, new = cpu(lambda: pa.Table.from_batches(list(read_libsvm(data, "train.svm")), RECORD_SCHEMA))
    assert old.equals(new), "the readers disagree"
    mib = len(data) / 2**20
    print(f"{arguments.lines:,} lines, {mib:.1f} MiB, values {arguments.digits}: line parser {old_seconds:.2f} CPU-s "
          f"({mib / old_seconds:.1f} MiB/s), column-wise {new_seconds:.2f} CPU-s ({mib / new_seconds:.1f} MiB/s), "
          f"{old_seconds / new_seconds:.1f}x; records identical")


if __name__ == "__main__":
    main()
