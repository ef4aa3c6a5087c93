"""The sorting set operations (sparktc.integer_sets) return exactly what numpy's namesakes return."""

from __future__ import annotations

import numpy as np
import pytest

from sparktc.integer_sets import intersect, isin, unique


@pytest.mark.parametrize("high", [3, 100, 10**12])
def test_unique_isin_and_intersect_equal_numpys(high):
    rng = np.random.default_rng(high)
    for trial in range(300):
        first = rng.integers(-high, high, rng.integers(0, 60))
        second = rng.integers(-high, high, rng.integers(0, 60))
        if trial % 3 == 0:
            first = first.reshape(-1, 1)  # any shape: unique flattens, isin keeps it
        if trial % 5 == 0:
            second = np.sort(second)  # taken as it is ordered, repeats and all
        assert np.array_equal(unique(first), np.unique(first)) and unique(first).dtype == first.dtype
        assert np.array_equal(isin(first, second), np.isin(first, second))
        assert isin(first, second).shape == first.shape
        assert np.array_equal(intersect(first, second), np.intersect1d(first, second))
