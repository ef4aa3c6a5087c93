"""NNet (Yang & Liu section 3.4): one feed-forward network for all categories, scored by the output units' inputs.

Pure: :func:`sparktc.models.nnet.fit_network` on a small random sparse problem against a numpy forward
pass written here from the same weights, and against scikit-learn's ``MLPClassifier`` fitted directly with
the documented settings (its ``predict_proba`` is the logistic of the scores); seeds, one category and a
constant one, the saved forms. Configuration: the [train] nnet and nb settings and the [tune] lists the two
methods refuse, before Spark starts. Spark: the JSON Lines corpus of ``test_methods`` through ingest -> rank
once, then NNet with SCut over the 60 best terms through train and evaluate: the saved network's scores
against a numpy forward pass over the test vectors read with pyarrow, and the same scores from
classifying the test texts with the model bundle.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest
from conftest import chi2_order, reseal_bundle
from scipy import sparse
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from test_methods import CATEGORIES, N_TEST, corpus_config, prepared_corpus

from sparktc.apps.classify import classify
from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.bundle import BundleError, load_bundle
from sparktc.experiment.config import ConfigError, load_config
from sparktc.models.decision import decision_record
from sparktc.models.linear import LinearSearch
from sparktc.models.nnet import NETWORK_FILE, Network, SavedNetwork, fit_network, read_network, write_network

HIDDEN, EPOCHS, L2, RATE = 6, 30, 0.001, 0.01


def problem(seed: int = 0, documents: int = 80, terms: int = 30, categories: int = 3):
    """A sparse documents x terms matrix (about 30% non-zero), 0/1 labels, and a selection of half the terms."""
    rng = np.random.default_rng(seed)
    X = sparse.random(documents, terms, density=0.3, format="csr", random_state=seed)
    Y = rng.random((documents, categories)) < 0.35
    columns = np.sort(rng.choice(terms, size=terms // 2, replace=False)).astype(np.int64)
    return X, Y, columns


def forward(X, network) -> np.ndarray:
    """sigma(X[:, columns] W1 + b1) W2 + b2, written out."""
    dense = np.asarray(X[:, network.columns].todense())
    return expit(dense @ network.W1 + network.b1) @ network.W2 + network.b2


def fit(X, Y, columns, seed: int = 1, hidden: int = HIDDEN) -> Network:
    return fit_network(X, Y, columns, hidden, EPOCHS, L2, RATE, seed)


# --- pure ------------------------------------------------------------------------------------------


def test_scores_are_the_forward_pass_of_its_weights():
    X, Y, columns = problem()
    network = fit(X, Y, columns)
    assert network.W1.shape == (len(columns), HIDDEN) and network.W2.shape == (HIDDEN, Y.shape[1])
    assert network.b1.shape == (HIDDEN,) and network.b2.shape == (Y.shape[1],)
    assert network.columns.tolist() == columns.tolist() and 0 < network.iterations <= EPOCHS
    np.testing.assert_allclose(network.scores(X), forward(X, network), rtol=1e-12, atol=1e-12)


def test_logistic_of_the_scores_is_mlpclassifier_predict_proba_with_the_same_settings():
    X, Y, columns = problem()
    network = fit(X, Y, columns, seed=3)
    reference = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="logistic", solver="adam", alpha=L2,
                              learning_rate_init=RATE, max_iter=EPOCHS, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference.fit(X[:, columns], Y.astype(np.int64))
    np.testing.assert_allclose(expit(network.scores(X)), reference.predict_proba(X[:, columns]), rtol=1e-12,
                               atol=1e-12)
    assert (network.iterations, network.loss) == (reference.n_iter_, pytest.approx(reference.loss_, rel=1e-12))


def test_a_seed_gives_the_same_network_and_another_seed_another():
    X, Y, columns = problem()
    first, again, other = fit(X, Y, columns, seed=5), fit(X, Y, columns, seed=5), fit(X, Y, columns, seed=6)
    for name in ("W1", "b1", "W2", "b2"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    np.testing.assert_array_equal(first.scores(X), again.scores(X))
    assert not np.allclose(first.scores(X), other.scores(X))


def test_one_category_and_a_category_without_positives():
    X, Y, columns = problem()
    one = fit(X, Y[:, :1], columns)
    assert one.W2.shape == (HIDDEN, 1) and one.b2.shape == (1,) and one.scores(X).shape == (X.shape[0], 1)
    np.testing.assert_allclose(one.scores(X), forward(X, one), rtol=1e-12, atol=1e-12)
    # The padding is a constant-zero second output: the one category's output is MLPClassifier's first column.
    reference = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="logistic", solver="adam", alpha=L2,
                              learning_rate_init=RATE, max_iter=EPOCHS, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference.fit(X[:, columns], np.column_stack([Y[:, 0], np.zeros(X.shape[0])]).astype(np.int64))
    np.testing.assert_allclose(expit(one.scores(X))[:, 0], reference.predict_proba(X[:, columns])[:, 0],
                               rtol=1e-12, atol=1e-12)
    alone_empty = fit(X, np.zeros((X.shape[0], 1), dtype=bool), columns)
    assert np.isfinite(alone_empty.scores(X)).all() and (alone_empty.scores(X) < 0).all()
    with_empty = fit(X, np.column_stack([Y[:, 0], np.zeros(X.shape[0], dtype=bool), Y[:, 1]]), columns)
    scores = with_empty.scores(X)
    assert scores.shape == (X.shape[0], 3) and np.isfinite(scores).all()
    assert scores[:, 1].max() < min(scores[:, 0].max(), scores[:, 2].max())  # learnt to say no


def test_zero_hidden_units_are_refused():
    X, Y, columns = problem()
    with pytest.raises(ValueError, match="hidden = 0"):
        fit(X, Y, columns, hidden=0)


def test_bytes_and_files_round_trip(tmp_path):
    X, Y, columns = problem()
    network = fit(X, Y, columns)
    for copy in (Network.from_bytes(network.to_bytes()), None):
        if copy is None:
            write_network(network, str(tmp_path / "net"))
            assert (tmp_path / "net" / NETWORK_FILE).is_file()
            copy = read_network(str(tmp_path / "net"))
        for name in ("columns", "W1", "b1", "W2", "b2"):
            np.testing.assert_array_equal(getattr(copy, name), getattr(network, name))
        assert copy.columns.dtype == np.int64
        assert (copy.iterations, copy.loss) == (network.iterations, network.loss)
    np.testing.assert_array_equal(SavedNetwork(str(tmp_path / "net")).scores(X), network.scores(X))


# --- configuration ---------------------------------------------------------------------------------

SYNTHETIC = "corpus.format=synthetic"


@pytest.mark.parametrize(("overrides", "message"), [
    (["train.nnet.hidden=0"], "train.nnet.hidden = 0 is out of range"),
    (["train.nnet.epochs=0"], "train.nnet.epochs = 0 is out of range"),
    (["train.nnet.learning_rate=0"], "train.nnet.learning_rate = 0.0 is out of range; expected > 0"),
    (["train.nb.alpha=0"], "train.nb.alpha = 0.0 is out of range; expected > 0"),
    (["train.nb.alpha=-1"], "train.nb.alpha = -1.0 is out of range; expected > 0"),
])
def test_bad_nnet_and_nb_settings_are_refused_before_spark_starts(overrides, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, [SYNTHETIC, *overrides])
    assert message in str(error.value)


@pytest.mark.parametrize("method", ["nb", "nnet"])
def test_liblinears_search_is_kept_and_searches_nothing_under_another_method(method):
    """One file may hold several methods' settings: [tune.liblinear] under nb or nnet is kept, not searched."""
    lists = ["tune.liblinear.C=[1.0, 2.0]", "tune.liblinear.solver=['l2r_lr']", "tune.liblinear.positive_weight=[1, 2]"]
    config = load_config(None, [SYNTHETIC, f"train.method={method}", "train.threshold=0.5", *lists])
    assert config.tune.liblinear == LinearSearch(C=[1.0, 2.0], solver=["l2r_lr"], positive_weight=[1.0, 2.0])
    assert not {"C", "solver", "positive_weight"} & {f.name for f in dataclasses.fields(config.tune.lists(method))}
    assert decision_record(dataclasses.asdict(config.train), dataclasses.asdict(config.tune))["search_space"] == {}


def test_nnet_and_nb_settings_reach_the_decision_rule():
    rule = load_config(None, [SYNTHETIC, "train.method=nnet", "train.nnet.hidden=8", "train.nnet.epochs=20",
                              "train.nnet.l2=0", "train.nnet.learning_rate=0.05"]).train.decision_rule()
    assert (rule.method, rule.parameters.hidden, rule.parameters.epochs, rule.parameters.l2,
            rule.parameters.learning_rate) == ("nnet", 8, 20, 0.0, 0.05)
    nb = load_config(None, [SYNTHETIC, "train.method=nb", "train.nb.alpha=0.5", "tune.terms=[0, 100]",
                            "train.thresholding=scut"])
    assert (nb.train.decision_rule().parameters.alpha, nb.train.decision_rule().vector_column) == (0.5, "counts")


# --- through Spark ---------------------------------------------------------------------------------

TERMS = 60
NNET = ["train.method=nnet", "train.thresholding=scut", f"select.top_k={TERMS}", "train.nnet.hidden=8",
        "train.nnet.epochs=40", "train.nnet.learning_rate=0.01"]


def read_split(output: str, split: str, column: str = "values") -> tuple[list[str], sparse.csr_matrix]:
    """(doc ids, documents x vocabulary matrix of ``column``) of one split of ``vectors``, read with pyarrow."""
    n_terms = ds.dataset(f"{output}/vocabulary", format="parquet").count_rows()
    table = ds.dataset(f"{output}/vectors/split={split}", format="parquet").to_table().sort_by("doc_id")
    rows = table.to_pylist()
    indptr = np.cumsum([0] + [len(r["indices"]) for r in rows])
    X = sparse.csr_matrix((np.array([v for r in rows for v in r[column]], dtype=np.float64),
                           np.array([i for r in rows for i in r["indices"]], dtype=np.int64), indptr),
                          shape=(len(rows), n_terms))
    return [r["doc_id"] for r in rows], X


def trained(spark, tmp_path_factory, name: str, overrides: list[str]) -> SimpleNamespace:
    """A copy of the prepared output through train and evaluate with ``overrides``: its tables, read with pandas."""
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    output = tmp_path_factory.mktemp(name) / "run"
    shutil.copytree(prepared, output)
    run_stages(spark, corpus_config(corpus, *overrides), str(output), "train", "evaluate")
    predictions = pd.read_parquet(output / "predictions").sort_values("doc_id").set_index("doc_id")
    models = pd.read_parquet(output / "models").sort_values("category").set_index("category")
    return SimpleNamespace(corpus=corpus, output=output, predictions=predictions, models=models,
                           thresholds=models.loc[CATEGORIES, "threshold"].to_numpy(),
                           assigned=np.array([[c in p for c in CATEGORIES] for p in predictions["predicted"]]))


@pytest.fixture(scope="module")
def nnet(spark, tmp_path_factory):
    return trained(spark, tmp_path_factory, "nnet", NNET)


def test_nnet_saves_one_network_whose_scores_are_the_predictions(nnet):
    path = nnet.output / "model" / "network" / NETWORK_FILE
    assert path.is_file()
    network = Network.from_bytes(path.read_bytes())
    order = chi2_order(nnet.output)
    assert network.columns.tolist() == sorted(order[:TERMS].tolist())
    assert network.W1.shape == (TERMS, 8) and network.W2.shape == (8, len(CATEGORIES))
    ids, X = read_split(str(nnet.output), "test")
    assert ids == nnet.predictions.index.tolist() and len(ids) == N_TEST
    scores = forward(X, network)
    top = np.vstack(nnet.predictions["top_scores"])
    np.testing.assert_allclose(top, -np.sort(-scores, axis=1)[:, :top.shape[1]], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(nnet.assigned, scores > nnet.thresholds)
    assert nnet.assigned.any() and not nnet.assigned.all()
    assert (nnet.models["method"] == "nnet").all() and (nnet.models["features"] == TERMS).all()
    metrics = json.loads((nnet.output / "metrics.json").read_text())
    assert metrics["method"] == {"name": "nnet", "hidden": 8, "epochs": 40, "l2": 0.0001, "learning_rate": 0.01}


def test_classifying_the_test_texts_with_the_bundle_gives_the_same_scores(spark, nnet, tmp_path):
    source = tmp_path / "documents.jsonl"
    with source.open("w") as handle:
        for line in (nnet.corpus / "test.jsonl").read_text().splitlines():
            document = json.loads(line)
            handle.write(json.dumps({"id": document["id"], "text": document["text"]}) + "\n")
    bundle = load_bundle(spark, str(nnet.output / "model"))
    report = classify(spark, bundle, str(source), str(tmp_path / "out"))
    assert report.rows_in == report.rows_out == N_TEST
    classified = pd.read_parquet(tmp_path / "out" / "predictions").set_index("doc_id").loc[nnet.predictions.index]
    assert [list(p) for p in classified["predicted"]] == [list(p) for p in nnet.predictions["predicted"]]
    assert [list(c) for c in classified["top_categories"]] == [list(c) for c in nnet.predictions["top_categories"]]
    np.testing.assert_allclose(np.vstack(classified["top_scores"]), np.vstack(nnet.predictions["top_scores"]),
                               rtol=0, atol=1e-9)


def test_a_damaged_network_file_is_refused_as_a_damaged_bundle_before_spark_scores(spark, nnet, tmp_path):
    bundle = tmp_path / "model"
    shutil.copytree(nnet.output / "model", bundle)
    path, name = bundle / "network" / NETWORK_FILE, f"network/{NETWORK_FILE}"
    good = path.read_bytes()
    description = json.loads((bundle / "bundle.json").read_text())
    restore = r"; restore the whole model directory from a good copy, or train again$"
    middle = len(good) // 2
    # The same byte count, so bundle.json's sizes cannot tell: an array's bytes changed (also the zip's CRC), and the
    # zip's header gone (numpy takes it for pickled data). Its SHA-256 tells.
    flipped = good[:middle] + bytes(b ^ 0xFF for b in good[middle:middle + 16]) + good[middle + 16:]
    headless = bytes(64) + good[64:]
    for damaged in (flipped, headless):
        path.write_bytes(damaged)
        with pytest.raises(BundleError, match=rf"^the model bundle {bundle} is damaged: {name} has other bytes than "
                                              rf"when written \(its SHA-256 is not the one bundle.json records\)"
                                              rf"{restore}"):
            load_bundle(spark, str(bundle))
    path.write_bytes(good[:-1])
    with pytest.raises(BundleError, match=rf"damaged: {name} has {len(good) - 1:,} bytes"):
        load_bundle(spark, str(bundle))

    def recorded(data: bytes) -> None:
        """The network file as ``data``, and bundle.json edited to its size and SHA-256 (sealed again)."""
        path.write_bytes(data)
        reseal_bundle(bundle, {**description, "parts": {
            **description["parts"], name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}}})

    # Recorded as if written so, the file is still read and checked on the driver before Spark scores.
    for damaged, kind in ((flipped, "BadZipFile"), (headless, "ValueError")):
        recorded(damaged)
        with pytest.raises(BundleError, match=rf"^the model bundle {bundle} is damaged: {name} cannot be read "
                                              rf"\({kind}\){restore}"):
            load_bundle(spark, str(bundle))
    # A readable network that is not this bundle's (another training's).
    network = read_network(str(nnet.output / "model" / "network"))
    recorded(Network(network.columns, network.W1, network.b1, network.W2[:, :-1], network.b2[:-1]).to_bytes())
    with pytest.raises(BundleError, match=rf"damaged: {name} does not fit its \d+ terms and "
                                          rf"{len(CATEGORIES)} categories \(input terms {TERMS}, W1 \({TERMS}, 8\), "
                                          rf"W2 \(8, {len(CATEGORIES) - 1}\)\){restore}"):
        load_bundle(spark, str(bundle))
    recorded(good)
    assert load_bundle(spark, str(bundle)).scorer.network_path.endswith("network")


def test_the_stage_reports_the_network_and_removes_the_fold_networks(nnet):
    details = json.loads((nnet.output / "manifests" / "train.json").read_text())["details"]
    network = read_network(str(nnet.output / "model" / "network"))
    expected = {"method": "nnet", "nnet_terms": TERMS, "hidden": 8, "nnet_folds": 5, "nnet_train_documents": 160}
    assert {key: details[key] for key in expected} == expected
    assert (details["nnet_iterations"], details["nnet_loss"]) == (network.iterations, network.loss)
    assert 0 < network.iterations <= 40
    assert ("- Method: `nnet`, one network for all categories, `8` logistic hidden units, at most `40` epochs of Adam "
            "(step `0.01`), L2 penalty `0.0001`") in (nnet.output / "report.md").read_text()
    # The fold networks are scratch: removed once the thresholds are set.
    assert not list(nnet.output.rglob("*nnet-folds*"))
