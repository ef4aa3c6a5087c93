"""The lean single-process peer (benchmarks/lean_peer.py) against independent computations: a plain
line-by-line reader of the LYRL2004 format, ltc and chi-square by hand, LIBLINEAR trained directly,
and scikit-learn's metrics. No Spark, no sparktc.
"""

from __future__ import annotations

import ctypes
import gzip
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
from liblinear import liblinearutil
from scipy.stats import chi2_contingency
from sklearn.metrics import precision_recall_fscore_support

_spec = importlib.util.spec_from_file_location("lean_peer", REPO / "benchmarks" / "lean_peer.py")
lean_peer = importlib.util.module_from_spec(_spec)
sys.modules["lean_peer"] = lean_peer  # dataclasses look their module up
_spec.loader.exec_module(lean_peer)

TRAIN_IDS = [2286, 2287, 2288, 2289, 2290, 2291]
TEST_IDS = [26151, 26152, 26153, 26154]
TOPICS = {"CCAT": "Root", "C15": "CCAT", "C17": "CCAT", "ECAT": "Root", "E21": "ECAT", "GCAT": "Root",
          "G15": "GCAT", "GSPO": "GCAT"}


# --- corpora ----------------------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The hand-written LYRL2004 fixture (test part 0 only) with RCV1's real hierarchy."""
    directory = lyrl2004_corpus(tmp_path / "corpus")
    shutil.copy(shared_data("rcv1", "rcv1.topics.hier.orig"), directory / "rcv1.topics.hier.orig")
    return directory


def record(doc_id: int, tokens: list[str]) -> str:
    """One record in the token-file format, tokens over lines of at most 8."""
    lines = [" ".join(tokens[i:i + 8]) for i in range(0, len(tokens), 8)]
    return f".I {doc_id}\n.W\n" + "\n".join(lines) + "\n\n"


def write_synthetic(directory: Path, seed: int = 5, n_train: int = 150, n_test: int = 240) -> Path:
    """A seeded corpus in the LYRL2004 format: 4 gzipped test parts, labels tied to topic words."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True)
    words = [f"w{i}" for i in range(300)]
    codes = sorted(TOPICS)
    own = {code: words[20 * j:20 * j + 20] for j, code in enumerate(codes)}  # each topic's typical words
    qrels, files = [], {"lyrl2004_tokens_train.dat": ""} | {f"lyrl2004_tokens_test_pt{p}.dat.gz": "" for p in range(4)}
    for i in range(n_train + n_test):
        doc_id = 1000 + i
        topics = set(rng.choice(codes, size=rng.integers(1, 3), replace=False))
        topics |= {TOPICS[code] for code in topics if TOPICS[code] != "Root"}
        tokens = list(rng.choice(words, size=rng.integers(5, 40)))
        for code in topics:
            tokens += list(rng.choice(own[code], size=rng.integers(1, 6)))
        rng.shuffle(tokens)
        name = "lyrl2004_tokens_train.dat" if i < n_train else f"lyrl2004_tokens_test_pt{i % 4}.dat.gz"
        files[name] += record(doc_id, tokens)
        qrels += [f"{code} {doc_id} 1\n" for code in sorted(topics)]
    for name, text in files.items():
        path = directory / name
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    qrels.append(qrels[0])  # a repeated line counts once
    (directory / "rcv1-v2.topics.qrels").write_text("".join(qrels))
    (directory / "rcv1.topics.hier.orig").write_text(
        "parent: None    child: Root    child-description: Root\n"
        + "".join(f"parent: {up}    child: {code}    child-description: topic {code}\n" for code, up in TOPICS.items()))
    return directory


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    return write_synthetic(tmp_path / "synthetic")


def reference_records(path: Path) -> list[tuple[int, list[str]]]:
    """(doc id, tokens) of a token file, read line by line: ``.I`` and ``.W`` are markers as a line's first token."""
    data = path.read_bytes()
    records: list[tuple[int, list[str]]] = []
    for line in (gzip.decompress(data) if path.name.endswith(".gz") else data).decode().split("\n"):
        parts = line.split()
        if parts and parts[0] == ".I":
            records.append((int(parts[1]), []))
        elif parts and parts[0] == ".W":
            records[-1][1].extend(parts[1:])
        else:
            records[-1][1].extend(parts)
    return records


def reference_corpus(directory: Path, parts: list[int]):
    """Training and test records, labels (doc id -> set of categories) and the sorted vocabulary."""
    train = reference_records(directory / "lyrl2004_tokens_train.dat")
    test = [r for p in parts for r in reference_records(next(directory.glob(f"lyrl2004_tokens_test_pt{p}.dat*")))]
    labels: dict[int, set[str]] = {}
    for line in (directory / "rcv1-v2.topics.qrels").read_text().splitlines():
        category, doc_id, _ = line.split()
        labels.setdefault(int(doc_id), set()).add(category)
    return train, test, labels, sorted({t for _, tokens in train for t in tokens})


def reference_ltc(documents: list[list[str]], train: list[list[str]], vocabulary: list[str]) -> np.ndarray:
    """Dense ltc by hand: w = (1 + ln tf) ln(N / df) over the training documents, rows L2-normalised."""
    column = {term: j for j, term in enumerate(vocabulary)}
    df = Counter(term for tokens in train for term in set(tokens))
    dense = np.zeros((len(documents), len(vocabulary)))
    for i, tokens in enumerate(documents):
        for term, tf in Counter(tokens).items():
            if term in column:
                dense[i, column[term]] = (1 + math.log(tf)) * math.log(len(train) / df[term])
        norm = np.linalg.norm(dense[i])
        if norm > 0:
            dense[i] /= norm
    return dense


def dense(blocks) -> np.ndarray:
    return np.vstack([block.toarray() for block in blocks]) if isinstance(blocks, list) else blocks.toarray()


# --- read -------------------------------------------------------------------------------------------


def test_reads_the_fixture_documents_and_labels(corpus):
    read = lean_peer.read_corpus(str(corpus), [0])
    train, test, labels, vocabulary = reference_corpus(corpus, [0])
    assert read.train_ids.tolist() == TRAIN_IDS == [doc_id for doc_id, _ in train]
    assert read.test_ids.tolist() == TEST_IDS == [doc_id for doc_id, _ in test]
    assert read.vocabulary == vocabulary and len(read.categories) == 103 and read.duplicates == 0
    tf = dense(read.train_tf)
    assert tf[0, vocabulary.index("recov")] == 2  # "recov recov": tokens of all lines counted
    for Y, records in ((read.train_labels, train), (read.test_labels, test)):
        for row, (doc_id, _) in enumerate(records):
            assert {read.categories[j] for j in Y.tocsr()[row].indices} == labels.get(doc_id, set())


def test_reads_synthetic_parts_in_any_chunk_size(synthetic, monkeypatch):
    read = lean_peer.read_corpus(str(synthetic), [0, 1, 2, 3])
    train, test, _, vocabulary = reference_corpus(synthetic, [0, 1, 2, 3])
    assert read.test_ids.tolist() == [doc_id for doc_id, _ in test] and read.vocabulary == vocabulary
    counts = dense(read.test_tf)
    for row, (_, tokens) in enumerate(test):
        expected = Counter(t for t in tokens if t in set(vocabulary))
        assert {vocabulary[j]: counts[row, j] for j in np.flatnonzero(counts[row])} == expected
    monkeypatch.setattr(lean_peer, "CHUNK_BYTES", 100)  # a chunk per record or two
    small = lean_peer.read_corpus(str(synthetic), [0, 1, 2, 3])
    np.testing.assert_array_equal(dense(small.test_tf), counts)
    np.testing.assert_array_equal(small.train_tf.toarray(), read.train_tf.toarray())
    assert (small.test_labels != read.test_labels).nnz == 0


def test_tokens_split_as_str_split_and_markers_only_start_lines(tmp_path):
    path = tmp_path / "lyrl2004_tokens_test_pt0.dat"
    text = (".I 7\n.W first .I .W\r\n\n  second\x1cthird\xa0fourth\u2003fifth \n"
            "   .I 8\n.W\nsixth\tseventh\x0b.Wx\n")
    path.write_bytes(text.encode())
    vocabulary = sorted({"first", ".I", ".W", "second", "third", "fourth", "fifth", "sixth", "seventh", ".Wx"})
    table = lean_peer.TermTable(lean_peer.token_keys([term.encode() for term in vocabulary]))
    ids, blocks = lean_peer.read_token_file(path.read_bytes(), table, len(vocabulary), str(path))
    assert ids.tolist() == [7, 8]
    got = [sorted(vocabulary[j] for j in row.indices) for row in blocks[0]]
    expected = [sorted(line.split()) for line in ("first .I .W second third fourth fifth", "sixth seventh .Wx")]
    assert got == expected


def test_term_table_agrees_with_a_dict():
    rng = np.random.default_rng(3)
    words = sorted({bytes(rng.integers(97, 123, size=rng.integers(1, 12)).astype(np.uint8)) for _ in range(3000)})
    known, queries = words[::2], words + [b"x" * 40, b"\xc3\xa9t\xc3\xa9"]
    table = lean_peer.TermTable(lean_peer.token_keys(known))
    position = {word: j for j, word in enumerate(known)}
    assert table.lookup(lean_peer.token_keys(queries)).tolist() == [position.get(w, -1) for w in queries]


def test_multi_member_gzip(tmp_path):
    path = tmp_path / "x.gz"
    path.write_bytes(gzip.compress(b"one\n") + gzip.compress(b"two\n"))
    assert lean_peer.file_bytes(str(path)) == b"one\ntwo\n"


def test_a_repeated_doc_id_keeps_its_first_record_by_file_path(corpus):
    # test_pt1 sorts before train: its copy of 2286 is kept and the training record dropped, with the
    # terms only that record had (sparktc's rule).
    (corpus / "lyrl2004_tokens_test_pt1.dat").write_text(".I 2286\n.W\nrepeat record\n\n.I 30000\n.W\nnew doc\n")
    read = lean_peer.read_corpus(str(corpus), [0, 1])
    assert read.duplicates == 1
    assert read.train_ids.tolist() == TRAIN_IDS[1:]
    assert read.test_ids.tolist() == TEST_IDS + [2286, 30000]
    _, _, _, vocabulary = reference_corpus(corpus, [0])
    assert "excit" in vocabulary and "excit" not in read.vocabulary  # only in the dropped record
    assert len(read.vocabulary) == read.train_tf.shape[1] == dense(read.test_tf).shape[1]
    assert {read.categories[j] for j in read.test_labels.tocsr()[4].indices} == \
        {"C15", "C151", "C1511", "CCAT", "E12", "E121", "ECAT"}


@pytest.mark.parametrize(("text", "message"), [
    (".I 2286\n.W\n\n", "train.dat:1: empty document"),
    ("junk\n.I 2286\n.W\na b\n", "train.dat:1: text before the first '.I'"),
    (".I 2286\n.W\na\n.I 2287 extra\n.W\nb\n", "train.dat:4: expected a line '.I <doc id>' followed by"),
    (".I 2286\n.W\na\n.I\n2287\n.W\nb\n", "train.dat:4: expected '.I <doc id>' on one line"),
    (".I 2286\nearly\n.W\na\n", "train.dat:1: expected a line '.I <doc id>' followed by a line '.W'"),
    (".I 2286\n.W\na\n.W\nb\n", "train.dat:4: a second '.W'"),
    (".I 22x6\n.W\na\n", "train.dat:1: doc id '22x6' is not a decimal number"),
    (".I 02286\n.W\na\n", "train.dat:1: doc id '02286' is not a decimal number without leading zeros"),
    (".I 2286\n.W\na\n.I 2286\n.W\nb\n", "duplicate doc id 2286 in the file"),
    (b".I 2286\n.W\n\xff\n", "not valid UTF-8"),
])
def test_bad_token_files_stop_the_run(corpus, text, message):
    (corpus / "lyrl2004_tokens_train.dat").write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SystemExit, match=message):
        lean_peer.read_corpus(str(corpus), [0])


@pytest.mark.parametrize(("line", "message"), [
    ("C15 2286 2", "qrels:3: third field is not '1'"),
    ("C15 2286", "qrels:3: expected 'CATEGORY DOCID 1', got 2 fields"),
    ("NOPE 2286 1", "qrels:3: unknown category NOPE"),
    ("C15 x2286 1", "qrels:3: doc id 'x2286'"),
])
def test_bad_qrels_stop_the_run(corpus, line, message):
    path = corpus / "rcv1-v2.topics.qrels"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2] + [line] + lines[2:]) + "\n")
    with pytest.raises(SystemExit, match=message):
        lean_peer.read_corpus(str(corpus), [0])


def test_qrels_for_unread_documents(synthetic):
    with (synthetic / "rcv1-v2.topics.qrels").open("a") as qrels:
        qrels.write("C15 999999 1\n")
    lean_peer.read_corpus(str(synthetic), [0, 2])  # lines of unread parts are expected
    with pytest.raises(SystemExit, match="qrels line for doc 999999, not in the token files"):
        lean_peer.read_corpus(str(synthetic), [0, 1, 2, 3])


# --- weight, rank, train, evaluate ------------------------------------------------------------------


def test_ltc_matches_a_hand_computation(synthetic):
    read = lean_peer.read_corpus(str(synthetic), [0, 1, 2, 3])
    train, test, _, vocabulary = reference_corpus(synthetic, [0, 1, 2, 3])
    X_train, X_test = lean_peer.weight(read)
    train_tokens = [tokens for _, tokens in train]
    np.testing.assert_allclose(X_train.toarray(), reference_ltc(train_tokens, train_tokens, vocabulary), atol=1e-6)
    np.testing.assert_allclose(dense(X_test), reference_ltc([t for _, t in test], train_tokens, vocabulary), atol=1e-6)


def test_chi2_ranking_matches_scipy(synthetic):
    read = lean_peer.read_corpus(str(synthetic), [0])
    X_train, _ = lean_peer.weight(read)
    order, scores = lean_peer.rank(X_train, read.train_labels)
    present = X_train.toarray() != 0
    Y = read.train_labels.toarray()
    expected = np.zeros(present.shape[1])
    for t in range(present.shape[1]):
        for c in range(Y.shape[1]):
            table = [[np.sum(present[:, t] & Y[:, c]), np.sum(present[:, t] & ~Y[:, c])],
                     [np.sum(~present[:, t] & Y[:, c]), np.sum(~present[:, t] & ~Y[:, c])]]
            if min(map(sum, table)) and min(map(sum, zip(*table))):  # else chi2 = 0
                expected[t] = max(expected[t], chi2_contingency(table, correction=False)[0])
    np.testing.assert_allclose(scores, expected, rtol=1e-9)
    assert order.tolist() == sorted(range(len(expected)), key=lambda t: (-scores[t], t))


def test_models_match_liblinear_trained_directly(synthetic):
    read = lean_peer.read_corpus(str(synthetic), [0, 1, 2, 3])
    X_train, _ = lean_peer.weight(read)
    trained, W, b = lean_peer.train_categories(X_train, read)
    assert [read.categories[j] for j in trained] == sorted(TOPICS)
    libc = ctypes.CDLL(None)
    for k, j in enumerate(trained):
        y = np.where(read.train_labels[:, j].toarray().ravel(), 1.0, -1.0)
        libc.srand(1)
        model = liblinearutil.train(y, X_train.astype(np.float64), "-s 1 -c 1 -e 0.0001 -B 1 -q")
        w = np.array([model.w[i] for i in range(X_train.shape[1] + 1)])
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        np.testing.assert_allclose(W[:, k], sign * w[:-1], atol=1e-12)
        assert b[k] == pytest.approx(sign * w[-1], abs=1e-12)


def test_run_agrees_with_sklearn_metrics(synthetic, tmp_path):
    output = tmp_path / "result.json"
    assert lean_peer.main(["--corpus", str(synthetic), "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert set(result) >= {"tool", "steps", "total_seconds", "cpu_seconds", "peak_rss_mb", "documents", "features",
                           "categories_trained", "micro_f1", "macro_f1", "duplicate_records_dropped",
                           "liblinear_options", "per_category"}
    assert list(result["steps"]) == ["read", "weight", "rank", "train", "predict+evaluate"]
    assert result["documents"] == {"train": 150, "test": 240} and result["categories_trained"] == len(TOPICS)

    # Predictions recomputed in float64 from the models, scored by scikit-learn.
    read = lean_peer.read_corpus(str(synthetic), [0, 1, 2, 3])
    X_train, X_test = lean_peer.weight(read)
    trained, W, b = lean_peer.train_categories(X_train, read)
    assigned = dense(X_test) @ W + b > 0
    truth = read.test_labels[:, trained].toarray()
    counts = [(row["tp"], row["fp"], row["fn"]) for row in result["per_category"]]
    assert counts == [(int(np.sum(assigned[:, k] & truth[:, k])), int(np.sum(assigned[:, k] & ~truth[:, k])),
                       int(np.sum(~assigned[:, k] & truth[:, k]))) for k in range(len(trained))]
    for average in ("micro", "macro"):
        p, r, f, _ = precision_recall_fscore_support(truth, assigned, average=average, zero_division=1)
        assert (result[f"{average}_precision"], result[f"{average}_recall"], result[f"{average}_f1"]) == \
            pytest.approx((p, r, f))
    assert 0.3 < result["micro_f1"] < 1  # the topic words make the task learnable, not trivial


def test_fixture_run_has_empty_categories_scored_one(corpus, tmp_path):
    output = tmp_path / "result.json"
    assert lean_peer.main(["--corpus", str(corpus), "--test-parts", "0", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert result["documents"] == {"train": 6, "test": 4} and result["categories_trained"] == 20
    rows = result["per_category"]
    empty = [row for row in rows if row["tp"] + row["fp"] + row["fn"] == 0]
    assert empty and all(row["f1"] == 1.0 for row in empty)  # F1 = 1 when TP = FP = FN = 0
    assert result["macro_f1"] == pytest.approx(np.mean([row["f1"] for row in rows]))
