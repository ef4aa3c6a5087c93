"""``train.fold_file``: a cross-validation fold assignment taken in, instead of the folds sparktc draws (balanced for
positives per category, :func:`sparktc.models.thresholds.balanced_folds`), so that a run cross-validates over another
tool's folds (``benchmarks/libmultilabel.py`` passes LibMultiLabel's).

The file is tab-separated text with a header: ``doc_id`` then either one column ``*`` (one fold per document for
every category) or one column per category (its fold per document); then one line per training document, its doc
id and its fold(s), integers in 0..train.folds-1::

    doc_id      C15  GCAT  E21
    train.svm:1 0    2     1

Its form is checked before Spark starts (:func:`fold_file_problem`); that it holds every training document, and
only those, and every category with a training document, when the training set is loaded
(:meth:`FoldFile.folds`; a category without one, absent from the file, gets folds drawn with ``train.seed``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from sparktc.errors import InputError
from sparktc.filesystem import per_worker

__all__ = ["ALL", "FoldFile", "fold_file_problem", "load_fold_file", "read_fold_file"]

#: The header of the one column that gives every category the same folds.
ALL = "*"
#: Doc ids an error names at most.
SHOWN = 5


class FoldFile:
    """A fold assignment: the doc ids, the categories (None: one for all) and the folds, documents x columns."""

    def __init__(self, doc_ids: list[str], categories: list[str] | None, folds: NDArray[np.int64]) -> None:
        self.doc_ids, self.categories, self.assignment = doc_ids, categories, folds
        self.rows = {doc_id: row for row, doc_id in enumerate(doc_ids)}
        self.columns = None if categories is None else {category: j for j, category in enumerate(categories)}

    def folds(self, category: str, doc_ids: Sequence[str], positives: int) -> NDArray[np.int64] | None:
        """The fold of each of ``doc_ids`` (the training documents) for ``category``, which has ``positives`` of
        them; None when the file has no column for a category without one (a label no training document has is no
        class of LibMultiLabel's, so its folds are not written). An InputError naming the documents the file lacks
        or has beyond them, or the category with positives it lacks.
        """
        missing = [doc_id for doc_id in doc_ids if doc_id not in self.rows]
        if missing:
            raise InputError(f"train.fold_file has no fold for {len(missing):,} of the {len(doc_ids):,} training "
                             f"documents: {', '.join(missing[:SHOWN])}{' ...' if len(missing) > SHOWN else ''}; "
                             "give every training document a line")
        if len(doc_ids) != len(self.rows):
            known = set(doc_ids)
            extra = [doc_id for doc_id in self.doc_ids if doc_id not in known]
            raise InputError(f"train.fold_file holds {len(extra):,} doc ids that are not training documents: "
                             f"{', '.join(extra[:SHOWN])}{' ...' if len(extra) > SHOWN else ''}; is it this "
                             "corpus's?")
        if self.columns is None:
            column = 0
        elif category in self.columns:
            column = self.columns[category]
        elif not positives:
            return None
        else:
            raise InputError(f"train.fold_file has no column for category {category!r} ({positives:,} training "
                             f"documents); give every category one, or one column {ALL!r} for all")
        return self.assignment[[self.rows[doc_id] for doc_id in doc_ids], column]


def read_fold_file(path: str, folds: int) -> FoldFile:
    """The fold file at ``path`` (module docstring) with folds in 0..``folds``-1; ValueError saying what is wrong
    and where.
    """
    with open(path, encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        if len(header) < 2 or header[0] != "doc_id" or (ALL in header[1:] and len(header) != 2):
            raise ValueError(f"its header starts {header[:3]}: expected doc_id, then {ALL!r} or one "
                             "column per category, tab-separated")
        duplicated = sorted({name for name in header[1:] if header.count(name) > 1})
        if duplicated:
            raise ValueError(f"its header names categories more than once: {', '.join(duplicated[:SHOWN])}")
        doc_ids, rows = [], []
        for number, line in enumerate(handle, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != len(header):
                raise ValueError(f"line {number} has {len(fields)} fields, the header {len(header)}")
            doc_ids.append(fields[0])
            rows.append(fields[1:])
    if not rows:
        raise ValueError("it has no document")
    try:
        assignment = np.array(rows, dtype=np.int64)
    except ValueError:
        raise ValueError("a fold is not an integer") from None
    bad = np.argwhere((assignment < 0) | (assignment >= folds))
    if len(bad):
        row, column = bad[0]
        raise ValueError(f"line {row + 2} gives {doc_ids[row]} fold {assignment[row, column]} "
                         f"for {header[column + 1]}; with train.folds = {folds} the folds are 0..{folds - 1}")
    empty = [(header[j + 1], f) for j in range(assignment.shape[1]) for f in range(folds)
             if not np.any(assignment[:, j] == f)]
    if empty:
        raise ValueError(f"fold {empty[0][1]} of {empty[0][0]} has no document; every fold needs one")
    if len(set(doc_ids)) != len(doc_ids):
        seen: set[str] = set()
        twice = next(doc_id for doc_id in doc_ids if doc_id in seen or seen.add(doc_id))
        raise ValueError(f"doc id {twice} has more than one line")
    return FoldFile(doc_ids, None if header[1] == ALL else header[1:], assignment)


def fold_file_problem(path: str, folds: int) -> str | None:
    """Why the fold file at ``path`` cannot be used with ``folds`` folds, None when it can (its form only: the doc ids
    are checked against the training documents when they are loaded).
    """
    try:
        read_fold_file(path, folds)
    except (OSError, UnicodeDecodeError) as error:
        return f"train.fold_file = {path!r} cannot be read: {error}"
    except ValueError as error:
        return f"train.fold_file = {path!r}: {error}"
    return None


@per_worker
def load_fold_file(path: str, folds: int) -> FoldFile:
    """The fold file, read once per worker."""
    return read_fold_file(path, folds)
