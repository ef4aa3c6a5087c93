"""Plain-Python references that more than one test module checks the library against."""

from __future__ import annotations

import ast
import csv
import ctypes
import ctypes.util
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from liblinear import liblinearutil
from numpy.typing import NDArray
from scipy import sparse


def hits_from_rankings(
    ranked: Sequence[Sequence[str]], relevant: Sequence[Iterable[str]], k_max: int
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """The inputs of :func:`sparktc.evaluation.ranking.ranking_measures` from ranked and relevant category names.

    A plain-Python helper for moderate batches. ``ranked[i]`` lists document i's categories
    best first (only the first ``k_max`` are used; a shorter list is padded with misses);
    ``relevant[i]`` holds its true categories.

    Returns ``(hits, n_relevant)``: a boolean array of shape (n_docs, k_max) with
    ``hits[i, r]`` True when ``ranked[i][r]`` is in ``relevant[i]``, and the int64 sizes of the
    relevant sets. Raises ValueError if the lists differ in length, ``k_max`` is not a positive
    int, or a ranking repeats a category within its first ``k_max`` entries.
    """
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
        raise ValueError(f"k_max must be a positive integer; got {k_max!r}")
    if len(ranked) != len(relevant):
        raise ValueError(
            f"ranked and relevant must have one entry per document; got {len(ranked)} and "
            f"{len(relevant)}"
        )
    hits = np.zeros((len(ranked), int(k_max)), dtype=np.bool_)
    n_relevant = np.zeros(len(ranked), dtype=np.int64)
    for i, (ranking, truth) in enumerate(zip(ranked, relevant)):
        top = list(ranking[:k_max])
        if len(set(top)) != len(top):
            raise ValueError(
                f"ranked[{i}] must not repeat a category in its first {k_max} entries; got {top}"
            )
        truth_set = set(truth)
        n_relevant[i] = len(truth_set)
        hits[i, : len(top)] = [category in truth_set for category in top]
    return hits, n_relevant


def name_branches(source: str, names: Collection[str]) -> list[str]:
    """Where ``source`` names one of ``names`` (registered formats, methods) to branch on it: a comparison with a
    name, a table keyed by names, or a collection of names and nothing else (``LYRL2004_FORMATS = (...)``,
    ``fmt in (...)``; not ``("parquet", "jsonl")``, output formats, nor a folder's ``__all__``).
    """
    tree = ast.parse(source)
    modules = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and [getattr(target, "id", None) for target in node.targets] == ["__all__"]]

    def named(node: ast.AST) -> list[str]:
        return [node.value] if isinstance(node, ast.Constant) and node.value in names else []

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            hits = [name for operand in (node.left, *node.comparators) for name in named(operand)]
        elif isinstance(node, ast.Dict):
            hits = [name for key in node.keys if key is not None for name in named(key)]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not any(node is listed for listed in modules):
            strings = [item for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
            hits = [item.value for item in strings if item.value in names]
            hits = hits if hits and len(hits) == len(strings) else []
        else:
            continue
        found += [f"line {node.lineno}: {name!r}" for name in hits]
    return found


def declaring(folder: Path, name: str) -> list[Path]:
    """The modules of ``folder`` that assign ``name`` at their top level (``FORMAT``, ``METHOD``), sorted."""
    def declares(path: Path) -> bool:
        return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                   for node in ast.parse(path.read_text()).body)

    return sorted(path for path in folder.glob("*.py") if declares(path))


def liblinear_one_vs_rest(X_train: sparse.csr_matrix, Y_train: NDArray[np.bool_], X_test: sparse.csr_matrix,
                          options: str) -> NDArray[np.bool_]:
    """Test decisions of LIBLINEAR itself, one-vs-rest: per column of ``Y_train``, a model trained with ``options``
    (``-B 1`` for a bias; ``-q``), "w'x + b > 0" on ``X_test``. The C library's rand is seeded with 1 before each
    training, as sparktc seeds it (the dual solvers shuffle with it).
    """
    n_features = X_train.shape[1]
    decisions = np.zeros((X_test.shape[0], Y_train.shape[1]), dtype=bool)
    for j in range(Y_train.shape[1]):
        ctypes.CDLL(ctypes.util.find_library("c")).srand(1)
        model = liblinearutil.train(np.where(Y_train[:, j], 1.0, -1.0), X_train, options)
        w = np.array([model.w[i] for i in range(n_features + 1)])
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        decisions[:, j] = sign * (X_test @ w[:-1] + w[-1]) > 0
    return decisions


def libmultilabel_read(path: Path) -> dict[str, list]:
    """A file of LibMultiLabel's text format as LibMultiLabel 0.10.0 reads it
    (``libmultilabel.linear.preprocessor.read_libmultilabel_format(path)``, as it is written there): the columns
    ``index`` (the id field, or the row from 0), ``label`` (lists) and ``text``.
    """
    data = pd.read_csv(path, sep="\t", header=None, on_bad_lines="warn", quoting=csv.QUOTE_NONE).fillna("")
    data = data.astype(str)
    if data.shape[1] == 2:
        data.columns = ["label", "text"]
        data = data.reset_index()
    elif data.shape[1] == 3:
        data.columns = ["index", "label", "text"]
    else:
        raise ValueError(f"Expected 2 or 3 columns, got {data.shape[1]}.")
    data["label"] = data["label"].map(lambda s: s.split())
    return data.to_dict("list")
