"""Set operations on integer arrays by sorting: numpy's own equivalents, without numpy 2.4's hashing.

numpy 2.4's ``np.unique`` (without ``return_*``) hashes its input, and ``np.isin`` and ``np.intersect1d``
call it: on the keys this project builds (document x term or document x category codes, a wide range of
int64) that is 100 to 300 times slower than sorting. Measured on this machine, 1.2M random int64 keys:
``np.unique`` 1,973 ms against a sort's 6 ms, ``np.intersect1d`` 3,085 ms. Each function here returns
exactly what its numpy namesake returns.

Example:
    >>> unique(np.array([5, 1, 5, 3]))
    array([1, 3, 5])
    >>> isin(np.array([1, 2, 3]), np.array([3, 1]))
    array([ True, False,  True])
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["intersect", "isin", "unique"]


def unique(values: ArrayLike) -> NDArray:
    """The sorted distinct values of ``values`` (flattened), as ``np.unique(values)``."""
    values = np.asarray(values).ravel()
    # Keys often come in order (a document's label codes, row by row): checking costs 1/50 of sorting them again.
    ordered = values if np.all(values[1:] >= values[:-1]) else np.sort(values)
    first = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def isin(values: ArrayLike, members: ArrayLike) -> NDArray[np.bool_]:
    """Whether each of ``values`` is among ``members``, in the shape of ``values``, as ``np.isin``."""
    values, keys = np.asarray(values), unique(members)
    if not len(keys):
        return np.zeros(values.shape, dtype=bool)
    return keys[np.minimum(np.searchsorted(keys, values), len(keys) - 1)] == values


def intersect(first: ArrayLike, second: ArrayLike) -> NDArray:
    """The sorted distinct values in both ``first`` and ``second``, as ``np.intersect1d(first, second)``."""
    distinct = unique(first)
    return distinct[isin(distinct, second)]
