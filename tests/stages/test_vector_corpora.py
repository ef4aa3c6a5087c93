"""Corpora of given vectors through the pipeline (weight.scheme = given): a multi-label LIBSVM corpus
(corpus.format = libsvm) against scikit-learn's reader and LIBLINEAR called directly with LibMultiLabel's
one-vs-rest options, and LYRL2004 vector files with their qrels (corpus.format = lyrl2004_vectors).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, conf_run, lyrl2004_fixture, shared_data
from reference import liblinear_one_vs_rest
from scipy import sparse
from sklearn.datasets import load_svmlight_file
from sklearn.metrics import f1_score

from sparktc.apps.classify import ClassifyError, classify
from sparktc.apps.pipeline import run as run_stages
from sparktc.corpora import line_ranges
from sparktc.experiment.bundle import load_bundle
from sparktc.experiment.config import ConfigError, load_config

LABELS = ["1", "2", "3", "4"]
N_FEATURES = 40
OPTIONS = "-s 1 -c 1 -B 1 -e 0.0001 -q"  # LibMultiLabel's linear one-vs-rest defaults; sparktc's conf/libsvm.toml


def write_corpus(directory: Path, seed: int = 3) -> None:
    """train.svm (150 documents) and test.svm (50): each label owns a few features, documents draw from their
    labels' features and from noise; one training document has no label, one test document a feature no training
    document has (features in ascending order, as scikit-learn requires).
    """
    rng = np.random.default_rng(seed)
    owned = {label: rng.choice(N_FEATURES - 5, size=6, replace=False) + 1 for label in LABELS}
    for name, n in (("train.svm", 150), ("test.svm", 50)):
        lines = []
        for d in range(n):
            labels = sorted(set(rng.choice(LABELS, size=rng.integers(0 if d == 7 else 1, 3))), key=int)
            features = {int(f): round(float(rng.uniform(0.1, 1.0)), 4) for label in labels
                        for f in rng.choice(owned[label], size=3, replace=False)}
            features.update({int(f): round(float(rng.uniform(0.05, 0.5)), 4)
                             for f in rng.integers(1, N_FEATURES - 4, size=4)})
            if name == "test.svm" and d == 0:
                features[N_FEATURES] = 0.9  # never seen in training: no model weights it
            lines.append(",".join(labels) + " " + " ".join(f"{f}:{v}" for f, v in sorted(features.items())))
        (directory / name).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def libsvm_run(spark, tmp_path_factory):
    return conf_run(spark, tmp_path_factory, "libsvm.toml", write_corpus, "libsvm")


def direct_one_vs_rest(corpus: Path) -> tuple[np.ndarray, np.ndarray]:
    """Test decisions and labels by scikit-learn's reader and LIBLINEAR itself: per label, -s 1 -c 1 -B 1 on the
    training documents, "w'x + b > 0" on the test documents (features beyond the training ones dropped).
    """
    X_train, y_train = load_svmlight_file(str(corpus / "train.svm"), multilabel=True, zero_based=False,
                                          n_features=N_FEATURES)
    X_test, y_test = load_svmlight_file(str(corpus / "test.svm"), multilabel=True, zero_based=False,
                                        n_features=N_FEATURES)
    trained = np.flatnonzero(X_train.getnnz(axis=0) > 0)
    X_train, X_test = X_train[:, trained].tocsr(), X_test[:, trained].tocsr()
    Y_train = np.array([[float(label) in labels for label in LABELS] for labels in y_train])
    Y_test = np.array([[float(label) in labels for label in LABELS] for labels in y_test])
    return liblinear_one_vs_rest(X_train, Y_train, X_test, OPTIONS), Y_test


def test_documents_and_vectors_are_the_files_as_scikit_learn_reads_them(spark, libsvm_run):
    corpus, output, manifests = libsvm_run
    vocabulary = pd.read_parquet(output / "vocabulary").sort_values("term_id")
    X_train, _ = load_svmlight_file(str(corpus / "train.svm"), multilabel=True, zero_based=False,
                                    n_features=N_FEATURES)
    trained = np.flatnonzero(X_train.getnnz(axis=0) > 0)
    # The terms are the training features' 1-based indices, in numeric order; df their training documents.
    assert vocabulary["term"].astype(int).tolist() == (trained + 1).tolist()
    assert vocabulary["df"].tolist() == X_train.getnnz(axis=0)[trained].tolist()
    for split in ("train", "test"):
        X, y = load_svmlight_file(str(corpus / f"{split}.svm"), multilabel=True, zero_based=False,
                                  n_features=N_FEATURES)
        rows = pd.read_parquet(output / "vectors" / f"split={split}")
        rows["line"] = rows["doc_id"].str.split(":").str[1].astype(int)
        rows = rows.sort_values("line")
        assert rows["line"].tolist() == list(range(1, X.shape[0] + 1))  # doc id = file:line
        got = sparse.csr_matrix((np.concatenate(rows["values"].to_list()).astype(np.float64),
                                 trained[np.concatenate(rows["indices"].to_list()).astype(int)],
                                 np.concatenate([[0], np.cumsum(rows["indices"].map(len))])),
                                shape=(X.shape[0], N_FEATURES))
        expected = X.tocsc()[:, trained].tocsr()  # given values, features outside training dropped
        expected = sparse.csr_matrix((expected.data, trained[expected.indices], expected.indptr),
                                     shape=(X.shape[0], N_FEATURES))
        np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=1e-6, atol=0)
        assert [{float(label) for label in labels} for labels in rows["labels"]] == [set(labels) for labels in y]
        assert rows["counts"].isna().all()  # given vectors have no term counts
    assert manifests["weight"]["details"]["scheme"] == "given"
    assert manifests["ingest"]["rows_in"] == 200 and manifests["ingest"]["rows_out"] == 200


def test_predictions_are_liblinears_one_vs_rest_with_libmultilabels_options(spark, libsvm_run):
    corpus, output, _ = libsvm_run
    decisions, Y_test = direct_one_vs_rest(corpus)
    predictions = pd.read_parquet(output / "predictions")
    predictions["line"] = predictions["doc_id"].str.split(":").str[1].astype(int)
    predicted = np.array([[label in set(p) for label in LABELS]
                          for p in predictions.sort_values("line")["predicted"]])
    np.testing.assert_array_equal(predicted, decisions)
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["micro_f1"] == pytest.approx(f1_score(Y_test, decisions, average="micro", zero_division=0.0))
    assert metrics["macro_f1"] == pytest.approx(f1_score(Y_test, decisions, average="macro", zero_division=0.0))


def test_a_vector_corpus_is_weighted_as_given_and_never_by_naive_bayes():
    corpus = ["corpus.format=libsvm", f"corpus.path={REPO}"]
    with pytest.raises(ConfigError, match="weight.scheme = 'ltc' with corpus.format = 'libsvm'"):
        load_config(None, corpus)
    with pytest.raises(ConfigError, match="train.method = 'nb' with corpus.format = 'libsvm'"):
        load_config(None, [*corpus, "weight.scheme=given", "train.method=nb"])
    with pytest.raises(ConfigError, match="weight.scheme = 'given' with corpus.format = 'jsonl'"):
        load_config(None, ["corpus.format=jsonl", f"corpus.path={REPO}", "weight.scheme=given"])


LYRL2004_VECTORS = REPO / "tests" / "fixtures" / "lyrl2004_vectors"


def test_lyrl2004_vector_files_are_the_given_vectors_labelled_by_the_qrels(spark, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(LYRL2004_VECTORS / "train.dat", corpus / "lyrl2004_vectors_train.dat")
    with gzip.open(corpus / "lyrl2004_vectors_test_pt0.dat.gz", "wb") as handle:
        handle.write((LYRL2004_VECTORS / "test_pt0.dat").read_bytes())
    shutil.copy(lyrl2004_fixture("rcv1-v2.topics.qrels"), corpus / "rcv1-v2.topics.qrels")
    config = load_config(None, ["corpus.format=lyrl2004_vectors", f"corpus.path={corpus}", "corpus.test_parts=[0]",
                                f"corpus.hierarchy={shared_data('rcv1', 'rcv1.topics.hier.orig')}",
                                "weight.scheme=given", "evaluate.average_over=all"])
    output = tmp_path / "run"
    run_stages(spark, config, str(output))
    qrels: dict[str, set[str]] = {}
    for line in (corpus / "rcv1-v2.topics.qrels").read_text().split("\n"):
        if line.strip():
            category, doc_id, _ = line.split()
            qrels.setdefault(doc_id, set()).add(category)
    vocabulary = pd.read_parquet(output / "vocabulary").sort_values("term_id")
    terms = vocabulary["term"].astype(int).to_numpy()
    assert (np.diff(terms) > 0).all()  # the training term ids, in numeric order
    for split, name in (("train", "train.dat"), ("test", "test_pt0.dat")):
        lines = [line.split() for line in (LYRL2004_VECTORS / name).read_text().splitlines() if line.strip()]
        ordered = tmp_path / name  # scikit-learn reads features in ascending order only; one fixture line is not
        ordered.write_text("".join(f"{line[0]} {' '.join(sorted(line[1:], key=lambda f: int(f.split(':')[0])))}\n"
                                   for line in lines))
        X, ids = load_svmlight_file(str(ordered), zero_based=False, n_features=int(terms.max()) + 50)
        rows = pd.read_parquet(output / "vectors" / f"split={split}").set_index("doc_id")
        assert sorted(rows.index) == sorted(str(int(i)) for i in ids)
        for row, doc_id in zip(X, ids):
            got = rows.loc[str(int(doc_id))]
            given = dict(zip(row.indices + 1, row.data))  # sklearn's 0-based columns of the 1-based term ids
            kept = {term: value for term, value in given.items() if term in set(terms.tolist())}
            assert terms[got["indices"]].tolist() == sorted(kept)
            np.testing.assert_allclose(got["values"], [kept[t] for t in sorted(kept)], rtol=1e-6)
            assert set(got["labels"]) == qrels.get(str(int(doc_id)), set())
    assert len(pd.read_parquet(output / "predictions")) == 4


def test_a_model_of_given_vectors_refuses_to_classify_texts(spark, libsvm_run, tmp_path):
    _, output, _ = libsvm_run
    documents = tmp_path / "new.jsonl"
    documents.write_text('{"id": "n1", "text": "oil prices rose"}\n')
    refusal = "trained on given vectors .* cannot weight the jsonl documents classify reads"
    with pytest.raises(ClassifyError, match=refusal):
        classify(spark, load_bundle(spark, str(output / "model")), str(documents), str(tmp_path / "out"))


def test_plain_libsvm_files_read_in_byte_ranges_give_the_same_documents(spark, libsvm_run, tmp_path, monkeypatch):
    corpus, output, manifests = libsvm_run
    assert (corpus / "train.svm").stat().st_size > 10 * 500
    monkeypatch.setattr(line_ranges, "RANGE_BYTES", 500)  # the driver splits the files into ranges of about 500 bytes
    config = load_config(str(REPO / "conf" / "libsvm.toml"), [f"corpus.path={corpus}"])
    [ingest] = run_stages(spark, config, str(tmp_path / "run"), "ingest")
    ranged = pd.read_parquet(tmp_path / "run" / "documents").sort_values("doc_id", ignore_index=True)
    whole = pd.read_parquet(output / "documents").sort_values("doc_id", ignore_index=True)
    assert len(ranged) == 200
    pd.testing.assert_frame_equal(ranged, whole)
    assert (ingest["rows_in"], ingest["rows_out"]) == (manifests["ingest"]["rows_in"], manifests["ingest"]["rows_out"])
