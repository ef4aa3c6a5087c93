"""LibMultiLabel ranking measures per document (REFERENCE.md section 6)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import hits_from_rankings
from sklearn.metrics import ndcg_score

from sparktc.evaluation.ranking import DEFAULT_KS, ranking_measures

L1, L2, L3 = 1.0, 1 / np.log2(3), 1 / np.log2(4)  # discounts of ranks 1, 2, 3


def test_hand_worked_documents():
    ranked = [
        ["a", "b", "c"],  # relevant {a, c, d}: hits at ranks 1 and 3
        ["x", "y", "z"],  # no relevant category
        ["b", "a", "q"],  # relevant {a} only: fewer relevant than K = 3, hit at rank 2
        ["a", "b"],  # relevant {a, b}: short ranking, perfect
    ]
    relevant = [{"a", "c", "d"}, set(), ["a"], ("b", "a")]
    hits, n_relevant = hits_from_rankings(ranked, relevant, k_max=3)
    np.testing.assert_array_equal(
        hits, [[1, 0, 1], [0, 0, 0], [0, 1, 0], [1, 1, 0]]
    )
    np.testing.assert_array_equal(n_relevant, [3, 0, 1, 2])
    got = ranking_measures(hits, n_relevant, ks=(1, 3))
    assert list(got) == ["P@1", "R@1", "RP@1", "nDCG@1", "P@3", "R@3", "RP@3", "nDCG@3"]
    np.testing.assert_allclose(got["P@1"], [1, 0, 0, 1])
    np.testing.assert_allclose(got["R@1"], [1 / 3, 0, 0, 1 / 2])
    np.testing.assert_allclose(got["RP@1"], [1, 0, 0, 1])
    np.testing.assert_allclose(got["nDCG@1"], [1, 0, 0, 1])
    np.testing.assert_allclose(got["P@3"], [2 / 3, 0, 1 / 3, 2 / 3])
    np.testing.assert_allclose(got["R@3"], [2 / 3, 0, 1, 1])
    np.testing.assert_allclose(got["RP@3"], [2 / 3, 0, 1, 1])
    np.testing.assert_allclose(
        got["nDCG@3"], [(L1 + L3) / (L1 + L2 + L3), 0, L2 / L1, 1]
    )
    assert all(value.dtype == np.float64 for value in got.values())


def test_default_ks_and_p_at_k_direct():
    rng = np.random.default_rng(0)
    hits = rng.random((200, 7)) < 0.3
    n_relevant = hits.sum(axis=1) + rng.integers(0, 3, size=200)
    got = ranking_measures(hits, n_relevant)
    assert DEFAULT_KS == (1, 3, 5) and set(got) == {
        f"{m}@{k}" for m in ("P", "R", "RP", "nDCG") for k in DEFAULT_KS
    }
    for k in DEFAULT_KS:
        direct = np.array([sum(row[:k]) / k for row in hits.tolist()])
        np.testing.assert_allclose(got[f"P@{k}"], direct, rtol=0, atol=1e-15)
        for i in range(0, 200, 17):
            h, n = int(hits[i, :k].sum()), int(n_relevant[i])
            assert got[f"R@{k}"][i] == pytest.approx(h / n if n else 0.0)
            assert got[f"RP@{k}"][i] == pytest.approx(h / min(k, n) if n else 0.0)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_ndcg_matches_sklearn(k):
    rng = np.random.default_rng(k)
    n_docs, n_categories = 120, 8
    y_true = (rng.random((n_docs, n_categories)) < 0.3).astype(int)
    y_true[np.arange(n_docs), rng.integers(0, n_categories, n_docs)] = 1  # >= 1 relevant
    # Distinct scores per row (a permutation), so the ranking has no ties.
    scores = np.argsort(rng.random((n_docs, n_categories)), axis=1).astype(float)
    order = np.argsort(-scores, axis=1)
    hits = np.take_along_axis(y_true, order, axis=1).astype(bool)
    got = ranking_measures(hits, y_true.sum(axis=1), ks=[k])[f"nDCG@{k}"]
    expected = [ndcg_score(y_true[i : i + 1], scores[i : i + 1], k=k) for i in range(n_docs)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert got.mean() == pytest.approx(ndcg_score(y_true, scores, k=k), abs=1e-12)


def test_relevant_categories_beyond_k_max_count():
    # Two relevant categories, only one ranked in the top K_max = 2.
    got = ranking_measures(np.array([[False, True]]), np.array([2]), ks=(1, 2))
    assert got["R@2"][0] == 0.5 and got["RP@2"][0] == 0.5 and got["RP@1"][0] == 0.0
    assert got["nDCG@2"][0] == pytest.approx(L2 / (L1 + L2))


def test_empty_batch():
    got = ranking_measures(np.zeros((0, 5), dtype=bool), np.zeros(0, dtype=np.int64))
    assert all(value.shape == (0,) for value in got.values())


def test_inputs_are_validated():
    hits = np.zeros((2, 3), dtype=bool)
    counts = np.array([1, 0])
    with pytest.raises(ValueError, match=r"ks must be .* in 1..K_max = 3 .*; got \(1, 5\)"):
        ranking_measures(hits, counts, ks=(1, 5))
    for bad in [(), (0,), (1, 1), (1.0,), (True,)]:
        with pytest.raises(ValueError, match="ks must be a non-empty sequence of distinct integers"):
            ranking_measures(hits, counts, ks=bad)
    with pytest.raises(ValueError, match="hits must be a 2-D array"):
        ranking_measures(np.zeros(3, dtype=bool), counts)
    with pytest.raises(ValueError, match="hits must be a boolean array; got dtype int64"):
        ranking_measures(hits.astype(np.int64), counts, ks=(1,))
    with pytest.raises(ValueError, match=r"n_relevant must have shape \(n_docs,\) = \(2,\)"):
        ranking_measures(hits, np.array([1, 2, 3]), ks=(1,))
    with pytest.raises(ValueError, match="n_relevant must hold integer counts; got dtype float64"):
        ranking_measures(hits, np.array([1.0, 0.0]), ks=(1,))
    with pytest.raises(ValueError, match="document 1 has 2 hits but n_relevant = 1"):
        ranking_measures(np.array([[1, 0, 0], [1, 1, 0]], dtype=bool), np.array([1, 1]), ks=(1,))
    with pytest.raises(ValueError, match="k_max must be a positive integer; got 0"):
        hits_from_rankings([["a"]], [{"a"}], k_max=0)
    with pytest.raises(ValueError, match="one entry per document; got 1 and 2"):
        hits_from_rankings([["a"]], [{"a"}, set()], k_max=1)
    with pytest.raises(ValueError, match=r"ranked\[0\] must not repeat a category"):
        hits_from_rankings([["a", "a"]], [{"a"}], k_max=2)
