"""A vector corpus's stored features (``index:value`` tokens) as vectors over its vocabulary
(sparktc.features.weighting.given_vectors), against each document's features looked up one by one: features
ascending as the readers store them (no sort needed), and shuffled within documents (sorted then); and the
training vocabulary's counts of them (token_counts), against a count of each document's index strings.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from sparktc.features.weighting import GIVEN, term_vectors, token_counts


def documents(rng: np.random.Generator, n: int, shuffled: bool) -> list[list[tuple[int, float]]]:
    """``n`` documents of 0-12 distinct features (indices 1-60) with their values, by ascending index unless
    ``shuffled``.
    """
    found = []
    for _ in range(n):
        indices = np.sort(rng.choice(np.arange(1, 61), size=rng.integers(0, 13), replace=False))
        if shuffled:
            rng.shuffle(indices)
        found.append([(int(index), float(rng.normal())) for index in indices])
    return found


def stored(features: list[tuple[int, float]]) -> str:
    return " ".join(f"{index}:{value!r}" for index, value in features)


@pytest.mark.parametrize("shuffled", [False, True])
def test_given_vectors_are_each_documents_features_in_the_vocabulary_by_term_id(shuffled: bool) -> None:
    rng = np.random.default_rng(7)
    docs = documents(rng, 300, shuffled)
    vocabulary = sorted(rng.choice(np.arange(1, 61), size=40, replace=False).tolist())  # numeric order
    position = {index: term_id for term_id, index in enumerate(vocabulary)}
    tokens = pa.array([stored(features) for features in docs] + [None], pa.string())
    indices, values, counts = term_vectors(tokens, pa.array([str(index) for index in vocabulary]),
                                           np.ones(len(vocabulary)), GIVEN)
    expected = [sorted((position[index], value) for index, value in features if index in position)
                for features in docs] + [[]]
    assert indices.to_pylist() == [[term_id for term_id, _ in pairs] for pairs in expected]
    assert values.to_pylist() == [[float(np.float32(value)) for _, value in pairs] for pairs in expected]
    assert counts.null_count == len(tokens)


@pytest.mark.parametrize("scale", [1, 10**9])
def test_indices_far_apart_are_looked_up_by_a_binary_search_as_by_the_table(scale: int) -> None:
    """Feature indices up to 6e10 (beyond :data:`TABLE_INDICES` and 8 times the vocabulary) take the binary search;
    those up to 60 the table: each document's features in the vocabulary, by term id, either way.
    """
    rng = np.random.default_rng(11)
    docs = [[(index * scale, value) for index, value in features] for features in documents(rng, 200, False)]
    vocabulary = sorted((rng.choice(np.arange(1, 61), size=30, replace=False) * scale).tolist())
    position = {index: term_id for term_id, index in enumerate(vocabulary)}
    indices, values, _ = term_vectors(pa.array([stored(features) for features in docs]),
                                      pa.array([str(index) for index in vocabulary]), np.ones(len(vocabulary)), GIVEN)
    expected = [[(position[index], value) for index, value in features if index in position] for features in docs]
    assert indices.to_pylist() == [[term_id for term_id, _ in pairs] for pairs in expected]
    assert values.to_pylist() == [[float(np.float32(value)) for _, value in pairs] for pairs in expected]


def test_a_feature_without_its_value_is_refused_naming_its_document() -> None:
    with pytest.raises(ValueError, match=r"not index:value tokens \(document 1 of the batch: '3:0.5 7'\)"):
        term_vectors(pa.array(["1:2.0", "3:0.5 7"]), pa.array(["1", "3", "7"]), np.ones(3), GIVEN)


@pytest.mark.parametrize("shuffled", [False, True])
def test_given_counts_are_each_indexs_documents_and_occurrences(shuffled: bool) -> None:
    rng = np.random.default_rng(11)
    docs = [stored(features) for features in documents(rng, 300, shuffled)]
    docs[5] = "3:1.0 7:2.0 3:0.5"  # an index twice in one document: one document, two occurrences
    df, frequency = Counter(), Counter()
    for doc in docs:
        indices = [token.split(":")[0] for token in doc.split()]
        df.update(set(indices))
        frequency.update(indices)
    counted = token_counts(pa.array(docs + ["", None], pa.string()), given=True).sort_by("term").to_pydict()
    assert counted == {"term": sorted(df), "df": [df[term] for term in sorted(df)],
                       "frequency": [frequency[term] for term in sorted(df)]}


def test_a_given_index_that_is_not_whole_is_refused_naming_its_document() -> None:
    with pytest.raises(ValueError, match=r"^stored feature index 2\.5 \(document 1 of the batch\) is not a whole"):
        token_counts(pa.array(["1:1.0", "2.5:1.0"]), given=True)
