"""The single-process peer benchmark (benchmarks/single_process.py) on the LYRL2004 fixtures: its reading,
ltc matrix, LIBLINEAR models and F1 checked against independent computations and sparktc's own modules."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, lyrl2004_corpus, shared_data

from sparktc.linear import BinaryProblems
from sparktc.metrics import macro_average, micro_average
from sparktc.weighting import idf as sparktc_idf
from sparktc.weighting import ltc_rows

_spec = importlib.util.spec_from_file_location("single_process", REPO / "benchmarks" / "single_process.py")
single_process = importlib.util.module_from_spec(_spec)
sys.modules["single_process"] = single_process  # dataclasses look their module up
_spec.loader.exec_module(single_process)

TRAIN_IDS = ["2286", "2287", "2288", "2289", "2290", "2291"]
TEST_IDS = ["26151", "26152", "26153", "26154"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    directory = lyrl2004_corpus(tmp_path / "corpus")
    shutil.copy(shared_data("rcv1", "rcv1.topics.hier.orig"), directory / "rcv1.topics.hier.orig")
    return directory


@pytest.fixture
def read(corpus: Path):
    return single_process.read_corpus(str(corpus), [0])


def test_reads_the_fixture_documents_and_labels(read):
    assert read.train_ids == TRAIN_IDS
    assert read.test_ids == TEST_IDS
    assert read.train_tokens[0][:3] == ("recov", "recov", "excit")  # tokens of all lines, .W line included
    assert read.train_tokens[0][-1] == "meet"
    assert sorted(read.labels["26153"]) == ["E21", "E211", "ECAT", "M12", "MCAT"]
    assert len(read.categories) == 103
    assert read.duplicates == 0


def reference_ltc(train_tokens, test_tokens):
    """ltc by hand: Counter per document, vocabulary = sorted training terms, df and N from training."""
    vocabulary = sorted({term for tokens in train_tokens for term in tokens})
    column = {term: j for j, term in enumerate(vocabulary)}
    df = Counter(term for tokens in train_tokens for term in set(tokens))
    n = len(train_tokens)

    def matrix(documents):
        dense = np.zeros((len(documents), len(vocabulary)))
        for i, tokens in enumerate(documents):
            for term, tf in Counter(tokens).items():
                if term in column:
                    dense[i, column[term]] = (1 + math.log(tf)) * math.log(n / df[term])
            norm = np.linalg.norm(dense[i])
            if norm > 0:
                dense[i] /= norm
        return dense

    return matrix(train_tokens), matrix(test_tokens), vocabulary


def test_ltc_matches_a_hand_computation_and_sparktc_weighting(read):
    X_train, X_test, vocabulary = single_process.weight(read.train_tokens, read.test_tokens)
    expected_train, expected_test, expected_vocabulary = reference_ltc(read.train_tokens, read.test_tokens)
    assert vocabulary == expected_vocabulary
    np.testing.assert_allclose(X_train.toarray(), expected_train, rtol=0, atol=1e-12)
    np.testing.assert_allclose(X_test.toarray(), expected_test, rtol=0, atol=1e-12)
    assert X_test.getnnz() > 0  # test documents share some training terms

    # sparktc's ltc_rows (float32 values) on the same tokens: equal up to float32 rounding.
    column = {term: j for j, term in enumerate(vocabulary)}
    df = np.bincount([column[t] for tokens in read.train_tokens for t in set(tokens)], minlength=len(vocabulary))
    for tokens, X in ((read.train_tokens, X_train), (read.test_tokens, X_test)):
        rows = np.repeat(np.arange(len(tokens)), [len(t) for t in tokens])
        term_ids = np.array([column.get(t, -1) for doc in tokens for t in doc])
        offsets, indices, values = ltc_rows(rows, term_ids, len(tokens), sparktc_idf(df, len(read.train_tokens)))
        theirs = np.zeros(X.shape)
        for r in range(len(tokens)):
            theirs[r, indices[offsets[r]:offsets[r + 1]]] = values[offsets[r]:offsets[r + 1]]
        np.testing.assert_allclose(X.toarray(), theirs, rtol=0, atol=1e-6)


def test_models_match_sparktc_binary_problems(read):
    X_train, X_test, _ = single_process.weight(read.train_tokens, read.test_tokens)
    trained, W, b = single_process.train(read, X_train)
    assert len(trained) == 20  # the fixture's training documents carry 20 distinct topics
    problems = BinaryProblems(X_train, bias=1.0)
    Y = single_process.label_matrix(read.train_ids, read.labels, trained).toarray()
    for j in range(len(trained)):
        w, bias = problems.train(Y[:, j], "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4)
        # Same problem, same solver; only LIBLINEAR's random visiting order may differ (sparktc reseeds rand()).
        np.testing.assert_allclose(W[:, j], w, atol=1e-3)
        assert b[j] == pytest.approx(bias, abs=1e-3)
        np.testing.assert_array_equal(single_process.predict(X_test, W, b).toarray()[:, j],
                                      X_test @ w + bias > 0)


def test_f1_agrees_with_sparktc_metrics(corpus, tmp_path):
    output = tmp_path / "result.json"
    assert single_process.main(["--corpus", str(corpus), "--test-parts", "0", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert set(result) >= {"tool", "steps", "total_seconds", "documents", "features", "categories_trained",
                           "micro_f1", "macro_f1", "peak_rss_mb"}
    assert set(result["steps"]) == {"read", "weight", "train", "predict", "evaluate"}
    assert result["documents"] == {"train": 6, "test": 4}
    rows = result["per_category"]
    assert len(rows) == result["categories_trained"] == 20
    tp, fp, fn = (np.array([row[k] for row in rows]) for k in ("tp", "fp", "fn"))
    tn = result["documents"]["test"] - tp - fp - fn
    assert result["micro_f1"] == pytest.approx(micro_average(tp, fp, fn, tn, 1.0)["f1"])
    assert result["macro_f1"] == pytest.approx(macro_average(tp, fp, fn, tn, 1.0)["f1"])
    assert (tp + fn).sum() > 0 and (tp + fp + fn == 0).any()  # both kinds of category occur in the average


def test_a_repeated_doc_id_keeps_its_first_record_by_file_and_line(corpus):
    # test_pt1 sorts before train: its copy of 2286 is kept, the training record dropped (sparktc's rule).
    (corpus / "lyrl2004_tokens_test_pt1.dat").write_text(".I 2286\n.W\nrepeat record\n\n.I 30000\n.W\nnew doc\n")
    read = single_process.read_corpus(str(corpus), [0, 1])
    assert read.duplicates == 1
    assert "2286" not in read.train_ids
    assert read.test_ids[-2:] == ["2286", "30000"]
    assert read.test_tokens[-2] == ("repeat", "record")


def test_bad_input_stops_the_run(corpus):
    (corpus / "lyrl2004_tokens_train.dat").write_text(".I 2286\n.W\n\n")  # a record without tokens
    with pytest.raises(SystemExit, match="empty document"):
        single_process.read_corpus(str(corpus), [0])
