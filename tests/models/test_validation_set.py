"""Debole & Sebastiani's validation set Va (``train.validation``): models learn from Tr - Va, thresholds are set on Va.

A [tune] choice is made on Va too. Recomputed here independently of sparktc:

* :func:`validation_split` against BLAKE2b computed here: Va is the round(f * n) smallest digests, whatever the
  order of the documents; its size at the edges; refusals;
* ``DecisionRule.validation_threshold`` against brute forces over every cut of Va's scores (proportional: the
  reachable count closest to p * |Va|; SCut: the best F1);
* ``fit_category`` (Rocchio) against numpy's Rocchio on Tr - Va, Va's labels changed without effect on the model;
  ``knn_category`` against cosine neighbours among Tr - Va computed here;
* the configuration's refusals, the record and the report's lines; and Rocchio and kNN runs through the train and
  evaluate stages on copies of tests/models/test_methods.py's prepared corpus (shared by the suite), their models,
  thresholds and test scores against numpy's on Tr - Va and Va.
"""

from __future__ import annotations

import hashlib
import random
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import sparse
from test_methods import CATEGORIES, corpus_config, prepared_corpus

from sparktc.evaluation.metrics import f1_score
from sparktc.evaluation.report import decision_lines
from sparktc.experiment.config import ConfigError, TrainConfig, TuneConfig, load_config
from sparktc.models.decision import decision_record
from sparktc.models.knn import KnnParameters
from sparktc.models.thresholds import validation_size, validation_split
from sparktc.models.tuning import candidates, fit_category, knn_category

# --- independent helpers ------------------------------------------------------------------------


def rule(**train):
    return TrainConfig(**train).decision_rule()


def digest(seed: int, doc_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}\x00{doc_id}".encode(), digest_size=8).digest(), "little")


def cuts(scores: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """Every distinct "score > t" decision set, with a threshold giving it: above the top, between distinct
    scores, below the bottom.
    """
    distinct = np.unique(scores)
    thresholds = [distinct[-1], *((distinct[:-1] + distinct[1:]) / 2), np.nextafter(distinct[0], -np.inf)]
    return [(float(t), scores > t) for t in thresholds]


def brute_proportional(scores: np.ndarray, positives: int, documents: int) -> int:
    """The count of documents assigned: the reachable one closest to p * n (exact), the smaller on ties."""
    target = Fraction(positives, documents) * len(scores)
    return min((int(d.sum()) for _, d in cuts(scores)), key=lambda c: (abs(c - target), c))


def brute_scut_f1(scores: np.ndarray, y: np.ndarray) -> float:
    return max(f1_score(tp=int((d & y).sum()), fp=int((d & ~y).sum()), fn=int((~d & y).sum()), zero_division=0.0)
               for _, d in cuts(scores))


# --- the split ------------------------------------------------------------------------------------


def test_the_split_is_the_smallest_digests_whatever_the_order():
    ids = [f"doc{i}" for i in range(1000)]
    for fraction, seed in ((0.2, 0), (0.1, 7), (0.35, 2**32 - 1)):
        held = validation_split(ids, fraction, seed)
        size = round(fraction * 1000)
        assert held.sum() == size
        expected = set(sorted(ids, key=lambda d: digest(seed, d))[:size])
        assert {d for d, h in zip(ids, held) if h} == expected
        shuffled = random.Random(seed).sample(ids, len(ids))
        assert {d for d, h in zip(shuffled, validation_split(shuffled, fraction, seed)) if h} == expected
    assert not np.array_equal(validation_split(ids, 0.2, 0), validation_split(ids, 0.2, 1))


def test_the_split_size_at_the_edges_and_its_refusals():
    ids = [str(i) for i in range(10)]
    assert validation_split(ids, 0.0, 0).sum() == 0
    assert validation_split(ids, 1e-300, 0).sum() == 1  # at least one held out
    assert validation_split(ids, 0.9999, 0).sum() == 9  # at least one to learn from
    assert validation_split(["only"], 0.5, 0).sum() == 0
    assert [validation_size(n, f) for n, f in ((10, 0.25), (10, 0.35), (9603, 0.2), (1, 0.5))] == [2, 4, 1921, 0]
    for fraction in (1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="fraction"):
            validation_split(ids, fraction, 0)


# --- thresholds on Va -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_validation_thresholds_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=40), 1)  # ties
    y = scores + rng.normal(size=40) > 0.8
    threshold, counts = rule(thresholding="proportional").validation_threshold(scores, y, 0.3, 0.1)
    assert int((scores > threshold).sum()) == brute_proportional(scores, 3, 10)
    threshold, counts = rule(thresholding="scut").validation_threshold(scores, y, 0.3, 0.1)
    assert f1_score(**counts, zero_division=0.0) == pytest.approx(brute_scut_f1(scores, y))
    assert counts["tp"] == int((scores > threshold)[y].sum())
    hopeless = rule(thresholding="scutfbr").validation_threshold(scores, y, 0.3, 1.0)  # fbr 1: falls back
    assert hopeless == (scores.max(), {"tp": 0, "fp": 0, "fn": int(y.sum())})


def rocchio_numpy(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return 16 * X[y].mean(axis=0) - 4 * X[~y].mean(axis=0)


def test_fit_category_learns_from_tr_minus_va_and_thresholds_on_va():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(120, 15)) * (rng.random((120, 15)) < 0.4)
    y = X[:, 0] + X[:, 1] > 0.6
    held = validation_split([f"d{i}" for i in range(120)], 0.25, 0)
    train = rule(method="rocchio", thresholding="proportional", validation=0.25)
    space = candidates(train, TuneConfig().lists(train.method), 0)
    model = fit_category(sparse.csr_matrix(X), y, np.arange(15), space, train, held)
    w = rocchio_numpy(X[~held], y[~held])
    np.testing.assert_allclose(model.weights, w, atol=1e-12)
    va = X[held] @ w
    assert int((va > model.threshold).sum()) == brute_proportional(va, int(y[~held].sum()), int((~held).sum()))
    decided = va > model.threshold
    assert model.cv_counts == {"tp": int((decided & y[held]).sum()), "fp": int((decided & ~y[held]).sum()),
                               "fn": int((~decided & y[held]).sum())}
    flipped = y.copy()
    flipped[held] = ~flipped[held]  # Va's labels set the threshold only
    again = fit_category(sparse.csr_matrix(X), flipped, np.arange(15), space, train, held)
    np.testing.assert_array_equal(again.weights, model.weights)


def test_a_search_chooses_on_va():
    rng = np.random.default_rng(8)
    X = rng.uniform(size=(150, 30)) * (rng.random((150, 30)) < 0.3)
    y = X[:, :3].sum(axis=1) > 0.5
    held = validation_split([f"d{i}" for i in range(150)], 0.3, 4)
    train = rule(method="rocchio", thresholding="scut", validation=0.3, seed=4)
    order = np.arange(30)
    space = candidates(train, TuneConfig(terms=[3, 0]).lists(train.method), 0)
    model = fit_category(sparse.csr_matrix(X), y, order, space, train, held)
    f1 = {}
    for terms in (3, 30):
        w = rocchio_numpy(X[~held][:, :terms], y[~held])
        f1[terms] = brute_scut_f1(X[held][:, :terms] @ w, y[held])
    assert [row["cv_f1"] for row in model.searched] == pytest.approx([f1[3], f1[30]])
    assert model.choice.terms == (3 if f1[3] >= f1[30] else 0)


def cosine_neighbours(queries: np.ndarray, training: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    unit = lambda M: M / np.maximum(np.linalg.norm(M, axis=1, keepdims=True), 1e-300)  # noqa: E731
    S = unit(queries) @ unit(training).T
    order = np.lexsort((np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=1)[:, :k]
    return order, np.take_along_axis(S, order, axis=1)


def test_knn_category_scores_va_by_neighbours_in_tr_minus_va():
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(80, 10)) * (rng.random((80, 10)) < 0.5)
    y = X[:, 0] > 0.3
    held = validation_split([f"d{i}" for i in range(80)], 0.25, 0)
    train = rule(method="knn", knn=KnnParameters(k=5), thresholding="proportional", validation=0.25)
    neighbours = cosine_neighbours(X[held], X[~held], 5)
    model = knn_category([neighbours], y, candidates(train, TuneConfig().lists(train.method), 0), train, held)
    scores = (neighbours[1] * y[~held][neighbours[0]]).sum(axis=1)
    assert int((scores > model.threshold).sum()) == brute_proportional(scores, int(y[~held].sum()),
                                                                        int((~held).sum()))


# --- configuration, record, report --------------------------------------------------------------------


def test_the_setting_is_refused_where_it_cannot_work():
    base = ["corpus.format=synthetic", "train.validation=0.2"]
    with pytest.raises(ConfigError, match=r"^train.validation = 0.2 with train.thresholding = 'fixed' and no "
                                          r"\[tune\] search: .* or train.validation = 0$"):
        load_config(None, base)
    for joint in (["train.method=llsf"], ["train.method=nnet"], ["train.method=nb", "train.nb.model=mixture"]):
        with pytest.raises(ConfigError, match=r"^train.validation = 0.2 with train.method = .*set train.validation "
                                              r"= 0$"):
            load_config(None, [*base, *joint, "train.thresholding=scut"])
    with pytest.raises(ConfigError, match="0 <= validation < 1"):
        load_config(None, ["corpus.format=synthetic", "train.validation=1"])
    for fine in (["train.thresholding=proportional"], ["train.method=knn", "train.thresholding=scutfbr"],
                 ["tune.liblinear.C=[1, 2]"], ["train.method=nb", "train.nb.model=binary", "train.thresholding=scut"]):
        assert load_config(None, [*base, *fine]).train.decision_rule().validation == 0.2


def test_record_and_report_lines():
    record = decision_record({"method": "rocchio", "thresholding": "proportional", "folds": 5, "seed": 3,
                              "validation": 0.2}, {})
    assert record["thresholding"] == {"name": "proportional", "folds": 5, "seed": 3, "validation": 0.2}
    assert ("- Thresholding: `proportional`, per-category thresholds assigning each category its training share of "
            "the validation documents over a validation set of `0.2` of the training documents (seed `3`), held out "
            "from training (Debole & Sebastiani 2005)") in decision_lines(record, [])
    searched = decision_record({"method": "liblinear", "thresholding": "fixed", "folds": 5, "seed": 0,
                                "validation": 0.1}, {"C": [1, 2]})
    assert searched["search_space"] == {"C": [1, 2], "folds": 5, "seed": 0, "validation": 0.1}
    assert ("- Search space ([tune], chosen per category on a validation set of `0.1` of the training documents, "
            "seed `0`): C `[1, 2]`") in decision_lines(searched, [])
    assert "validation" not in decision_record({"thresholding": "scut", "validation": 0.0}, {})["thresholding"]


# --- through the stages -----------------------------------------------------------------------------------


def training_matrix(run: Path) -> tuple[np.ndarray, list[str], dict[str, np.ndarray]]:
    """The run's training vectors read here: dense ltc rows, doc ids sorted, labels per category."""
    table = pq.read_table(run / "vectors", filters=[("split", "=", "train")]).sort_by("doc_id")
    n_terms = pq.read_table(run / "vocabulary").num_rows
    X = np.zeros((table.num_rows, n_terms))
    for row, (indices, values) in enumerate(zip(table["indices"].to_pylist(), table["values"].to_pylist())):
        X[row, indices] = values
    labels = table["labels"].to_pylist()
    return X, table["doc_id"].to_pylist(), {c: np.array([c in ls for ls in labels]) for c in CATEGORIES}


def test_rocchio_and_knn_runs_learn_from_tr_minus_va_and_threshold_on_va(spark, tmp_path, tmp_path_factory):
    """On a copy of tests/models/test_methods.py's prepared corpus (160 training documents, 5 categories): Va is
    a quarter of them, 40.
    """
    from sparktc.apps.pipeline import run as run_pipeline

    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    base = ["train.validation=0.25", "train.seed=9"]
    rocchio_run, knn_run = tmp_path / "rocchio", tmp_path / "knn"
    shutil.copytree(prepared, rocchio_run)
    manifests = {m["stage"]: m for m in run_pipeline(spark, corpus_config(
        corpus, *base, "train.method=rocchio", "train.thresholding=proportional"), str(rocchio_run),
        "train", "evaluate")}
    assert manifests["train"]["details"]["validation_documents"] == 40
    X, ids, y = training_matrix(rocchio_run)
    held = np.array([d in set(sorted(ids, key=lambda d: digest(9, d))[:40]) for d in ids])
    models = pq.read_table(rocchio_run / "models").to_pandas().set_index("category")
    for category, labels in y.items():
        w = rocchio_numpy(X[~held], labels[~held])
        np.testing.assert_allclose(models.loc[category, "weights"], w, atol=1e-9)
        va = X[held] @ w
        assert int((va > models.loc[category, "threshold"]).sum()) == brute_proportional(
            va, int(labels[~held].sum()), int((~held).sum()))
    assert "validation set of `0.25`" in (rocchio_run / "report.md").read_text()

    shutil.copytree(prepared, knn_run)
    run_pipeline(spark, corpus_config(corpus, *base, "train.method=knn", "train.knn.k=4", "train.thresholding=scut"),
                 str(knn_run), "train", "evaluate")
    models = pq.read_table(knn_run / "models").to_pandas().set_index("category")
    neighbours = cosine_neighbours(X[held], X[~held], 4)
    for category, labels in y.items():
        scores = (neighbours[1] * labels[~held][neighbours[0]]).sum(axis=1)
        threshold = models.loc[category, "threshold"]
        decided = scores > threshold
        assert f1_score(tp=int((decided & labels[held]).sum()), fp=int((decided & ~labels[held]).sum()),
                        fn=int((~decided & labels[held]).sum()), zero_division=0.0) == pytest.approx(
            brute_scut_f1(scores, labels[held]))
    # The test documents' scores come from their neighbours among Tr - Va only.
    test = pq.read_table(knn_run / "vectors", filters=[("split", "=", "test")]).sort_by("doc_id")
    T = np.zeros((test.num_rows, X.shape[1]))
    for row, (indices, values) in enumerate(zip(test["indices"].to_pylist(), test["values"].to_pylist())):
        T[row, indices] = values
    near, similarity = cosine_neighbours(T, X[~held], 4)
    expected = {c: (similarity * labels[~held][near]).sum(axis=1) for c, labels in y.items()}
    predictions = pq.read_table(knn_run / "predictions").sort_by("doc_id").to_pylist()
    for row, prediction in enumerate(predictions):
        for category, score in zip(prediction["top_categories"], prediction["top_scores"]):
            assert score == pytest.approx(expected[category][row], rel=1e-6)  # float32 rows: unit to 1e-8
