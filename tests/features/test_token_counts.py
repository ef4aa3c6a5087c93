"""The training counts a weight task sends to the driver (sparktc.features.weighting.token_counts and summed_counts):
the sums, and a size for pickling that is the table's own. No Spark.
"""

from __future__ import annotations

import pickle
from collections import Counter

import pyarrow as pa

from sparktc.features.weighting import summed_counts, token_counts


def test_summed_counts_are_the_documents_counts_and_pickle_at_their_own_size() -> None:
    # Enough distinct terms for Arrow's group_by to answer in several chunks (it does in 32,768-row slices).
    documents = [" ".join(f"t{i}" for i in range(start, start + 60_000)) for start in (0, 40_000)]
    documents.append("t1 t1 t7")
    counted = [token_counts(pa.array(documents[:2])), token_counts(pa.array(documents[2:]))]
    summed = summed_counts(counted)
    df = Counter(term for document in documents for term in set(document.split()))
    frequency = Counter(term for document in documents for term in document.split())
    got = summed.to_pydict()
    assert dict(zip(got["term"], got["df"], strict=True)) == df
    assert dict(zip(got["term"], got["frequency"], strict=True)) == frequency
    # pickled (a task's result on its way to the driver) at about the table's size, not a copy of the buffers
    # each of group_by's slices points into
    assert len(pickle.dumps(summed)) < 1.2 * summed.nbytes
