"""LibMultiLabel's text format through the pipeline with conf/libmultilabel_text.toml, against LibMultiLabel's linear
recipe computed independently: its reader (pandas, as libmultilabel.linear.preprocessor calls it), scikit-learn's
TfidfVectorizer fitted on the training texts, and LIBLINEAR one-vs-rest with -s 1 -c 1 -B 1 -e 0.0001, threshold 0.

The texts are words of two letters or more, capitalized or followed by a comma or a period, and no digits (the conf
tokenizes with scikit-learn's analyzer, tokenize.analyzer = "sklearn", which tests/features/test_sklearn_features.py
checks against scikit-learn's on every code point).
"""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import conf_run
from reference import liblinear_one_vs_rest, libmultilabel_read
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import f1_score

LABELS = ["CCAT", "E11", "GCAT", "M11"]
OPTIONS = "-s 1 -c 1 -B 1 -e 0.0001 -q"  # LibMultiLabel's linear one-vs-rest defaults, conf/libmultilabel_text.toml's


def texts(rng: np.random.Generator, labels: list[str], owned: dict[str, list[str]], noise: list[str]) -> str:
    words = [str(word) for label in labels for word in rng.choice(owned[label], size=4)]
    words += [str(word) for word in rng.choice(noise, size=rng.integers(3, 9))]
    rng.shuffle(words)
    return " ".join(word.capitalize() if n % 5 == 0 else word + ("," if n % 7 == 3 else "") for n, word in
                    enumerate(words)) + "."


def write_corpus(directory: Path, seed: int = 11) -> None:
    """train.txt (120 documents, an id column) and test.txt.bz2 (40, none): each label owns a few words, documents
    draw from their labels' words and from noise; every label has training documents.
    """
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    vocabulary = sorted({"".join(rng.choice(letters, size=rng.integers(2, 8))) for _ in range(120)})
    owned = {label: vocabulary[8 * k:8 * k + 8] for k, label in enumerate(LABELS)}
    noise = vocabulary[8 * len(LABELS):]
    for name, n, with_id in (("train.txt", 120, True), ("test.txt.bz2", 40, False)):
        lines = []
        for d in range(n):
            labels = sorted(set(rng.choice(LABELS, size=rng.integers(0 if d == 5 else 1, 3))))
            lines.append("\t".join(([f"d{d}"] if with_id else []) + [" ".join(labels), texts(rng, labels, owned,
                                                                                                noise)]))
        data = "".join(line + "\n" for line in lines).encode()
        (directory / name).write_bytes(bz2.compress(data) if name.endswith(".bz2") else data)


@pytest.fixture(scope="module")
def text_run(spark, tmp_path_factory):
    return conf_run(spark, tmp_path_factory, "libmultilabel_text.toml", write_corpus, "libmultilabel_text")


@pytest.fixture(scope="module")
def libmultilabel(text_run):
    """LibMultiLabel's linear recipe on the corpus: tf-idf features of train and test, their label matrices."""
    corpus, _, _ = text_run
    train, test = libmultilabel_read(corpus / "train.txt"), libmultilabel_read(corpus / "test.txt.bz2")
    vectorizer = TfidfVectorizer().fit(train["text"])
    Y = [np.array([[label in labels for label in LABELS] for labels in split["label"]]) for split in (train, test)]
    return vectorizer, vectorizer.transform(train["text"]), vectorizer.transform(test["text"]), *Y, train, test


def sparktc_vectors(output: Path, split: str, terms: list[str]) -> sparse.csr_matrix:
    """The ``vectors`` of a split as a matrix over ``terms``, its rows in file order (by doc id)."""
    vocabulary = pd.read_parquet(output / "vocabulary").sort_values("term_id")
    column = np.array([terms.index(term) for term in vocabulary["term"]])
    rows = pd.read_parquet(output / "vectors" / f"split={split}")
    order = rows["doc_id"].str.extract(r"(\d+)$")[0].astype(int)  # d12 -> 12, test.txt:7 -> 7
    rows = rows.iloc[np.argsort(order.to_numpy(), kind="stable")]
    return sparse.csr_matrix((np.concatenate(rows["values"].to_list()).astype(np.float64),
                              column[np.concatenate(rows["indices"].to_list()).astype(int)],
                              np.concatenate([[0], np.cumsum(rows["indices"].map(len))])),
                             shape=(len(rows), len(terms)))


def test_the_vectors_are_libmultilabels_tf_idf(text_run, libmultilabel):
    _, output, manifests = text_run
    vectorizer, X_train, X_test, _, _, train, test = libmultilabel
    terms = vectorizer.get_feature_names_out().tolist()
    assert sorted(pd.read_parquet(output / "vocabulary")["term"]) == terms
    for split, expected in (("train", X_train), ("test", X_test)):
        np.testing.assert_allclose(sparktc_vectors(output, split, terms).toarray(), expected.toarray(), rtol=1e-6,
                                   atol=1e-12)
    documents = pd.read_parquet(output / "documents")
    assert sorted(documents.loc[documents["split"] == "train", "doc_id"]) == sorted(train["index"])
    # Without an id column a document is its file and line; LibMultiLabel's id is its row from 0.
    assert sorted(documents.loc[documents["split"] == "test", "doc_id"]) == sorted(
        f"test.txt:{row + 1}" for row in test["index"])
    assert manifests["ingest"]["rows_in"] == manifests["ingest"]["rows_out"] == 160


def test_the_predictions_are_liblinears_one_vs_rest(text_run, libmultilabel):
    _, output, _ = text_run
    _, X_train, X_test, Y_train, Y_test, _, _ = libmultilabel
    decisions = liblinear_one_vs_rest(X_train, Y_train, X_test, OPTIONS)
    assert decisions.any(axis=0).all() and not decisions.all(axis=0).any()  # each label assigned to some, not all
    predictions = pd.read_parquet(output / "predictions")
    predictions["line"] = predictions["doc_id"].str.split(":").str[1].astype(int)
    predicted = np.array([[label in set(p) for label in LABELS] for p in predictions.sort_values("line")["predicted"]])
    np.testing.assert_array_equal(predicted, decisions)
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["micro_f1"] == pytest.approx(f1_score(Y_test, decisions, average="micro", zero_division=0.0))
    assert metrics["macro_f1"] == pytest.approx(f1_score(Y_test, decisions, average="macro", zero_division=0.0))
