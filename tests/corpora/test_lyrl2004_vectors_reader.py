"""The LYRL2004 vector file reader on hand-written fixtures in the format of Lewis et al. 2004, online appendix 13,
checked against scikit-learn's SVMlight reader (which ``fetch_rcv1`` reads these files with).
"""

from __future__ import annotations

import gzip
import reprlib
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from sparktc.corpora.files import read_lines, read_records
from sparktc.corpora.lyrl2004_vectors import (
    MAX_TERM_ID,
    TEST_FILES,
    TRAIN_FILE,
    VECTOR_FILES,
    parse_vector_file,
    split_of,
)
from sparktc.corpora.records import Document, Reject, record_batch, split_tokens

# Stored under short names, as the token fixtures are: the official names are reserved for the real files.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lyrl2004_vectors"
STORED = {TRAIN_FILE: "train.dat", TEST_FILES[0]: "test_pt0.dat"}
N_FEATURES = 40  # the largest term id in the fixtures
SRC = TRAIN_FILE


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures under their official names, each also gzipped (``NAME.gz``)."""
    directory = tmp_path_factory.mktemp("lyrl2004_vectors")
    for official, stored in STORED.items():
        shutil.copy(FIXTURES / stored, directory / official)
        (directory / f"{official}.gz").write_bytes(gzip.compress((FIXTURES / stored).read_bytes()))
    return directory


def sklearn_rows(path: Path, tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The dense rows and ids scikit-learn's SVMlight reader reads from ``path`` (the doc id taken as the label).

    It refuses a line whose features are out of order, so each line's fields are given to it sorted by term id
    (the real files are in order: ``fetch_rcv1`` reads them with this reader).
    """
    lines = [line.split() for line in path.read_text().splitlines()]
    ordered = tmp_path / path.name
    ordered.write_text("".join(f"{doc_id}  {' '.join(sorted(features, key=lambda f: int(f.split(':')[0])))}\n"
                               for doc_id, *features in lines))
    features, doc_ids = load_svmlight_file(str(ordered), zero_based=False, n_features=N_FEATURES)
    return features.toarray(), doc_ids


def read(path: Path) -> list[Document | Reject]:
    return list(read_records(parse_vector_file, path.read_bytes(), str(path)))


def parse(text: str | bytes, source: str = SRC) -> list[Document | Reject]:
    data = text.encode() if isinstance(text, str) else text
    return list(parse_vector_file(read_lines(data, source), source))


def doc(doc_id: str, tokens: str, line: int, split: str = "train", source: str = SRC) -> Document:
    return Document(doc_id, split, (), None, tuple(tokens.split()), source, line)


def dense(document: Document) -> np.ndarray:
    """A document's features as a dense row over term ids 1..N_FEATURES (column 0 is term 1)."""
    row = np.zeros(N_FEATURES)
    for token in document.tokens:
        term, weight = token.split(":")
        row[int(term) - 1] = float(weight)
    return row


# --- fixtures against the independent reader ----------------------------------------------------


@pytest.mark.parametrize(("name", "split", "count"), [(TRAIN_FILE, "train", 8), (TEST_FILES[0], "test", 4)])
def test_fixture_matches_sklearn_svmlight_reader(corpus: Path, tmp_path: Path, name: str, split: str,
                                                 count: int):
    path = corpus / name
    documents = read(path)
    features, doc_ids = sklearn_rows(path, tmp_path)
    assert len(documents) == features.shape[0] == count
    assert all(isinstance(d, Document) for d in documents)
    assert [d.doc_id for d in documents] == [str(int(i)) for i in doc_ids]
    np.testing.assert_array_equal(np.vstack([dense(d) for d in documents]), features)
    assert [(d.split, d.labels, d.text, d.source, d.line) for d in documents] == [
        (split, (), None, str(path), line) for line in range(1, count + 1)
    ]
    first = 2286 if split == "train" else 26151
    assert [int(d.doc_id) for d in documents] == list(range(first, first + count))


def test_fixture_vectors_are_normalized_and_tokens_ascending(corpus: Path):
    for name in STORED:
        for document in read(corpus / name):
            terms = [int(token.split(":")[0]) for token in document.tokens]
            assert terms == sorted(terms) and len(set(terms)) == len(terms)
            assert np.linalg.norm(dense(document)) == pytest.approx(1.0, abs=1e-12)


def test_unsorted_line_gives_ascending_tokens(corpus: Path):
    raw = (corpus / TRAIN_FILE).read_text().splitlines()[4]
    assert raw.startswith("2290  17:0.15366712579023106 27:")  # the fixture's one unsorted line
    with pytest.raises(ValueError, match="should be sorted and unique"):
        load_svmlight_file(str(corpus / TRAIN_FILE), zero_based=False, n_features=N_FEATURES)
    document = read(corpus / TRAIN_FILE)[4]
    assert document.tokens == (
        "4:0.34652514594226846", "6:0.4322217770422649", "11:0.3590566897328671", "17:0.15366712579023106",
        "20:0.4781815306736237", "21:0.24089602424860868", "27:0.5038659503413633",
    )
    assert sorted(document.tokens) == sorted(raw.split()[1:])


@pytest.mark.parametrize("name", list(STORED))
def test_gzipped_file_gives_the_same_documents(corpus: Path, name: str):
    plain, gzipped = read(corpus / name), read(corpus / f"{name}.gz")
    assert [d.source for d in gzipped] == [str(corpus / f"{name}.gz")] * len(plain)
    assert [(d.doc_id, d.split, d.tokens, d.line) for d in gzipped] == [
        (d.doc_id, d.split, d.tokens, d.line) for d in plain
    ]


# --- line syntax --------------------------------------------------------------------------------


def test_white_space_crlf_blank_lines_and_number_forms():
    text = "\n  2300\t1:0.5   3:0.25 \r\n\r\n2301  007:1E-3 2:+.5 12:-0.0\n2302  5:1\n"
    assert parse(text) == [
        doc("2300", "1:0.5 3:0.25", 2),
        doc("2301", "2:0.5 7:0.001 12:-0.0", 4),
        doc("2302", "5:1.0", 5),
    ]


def test_document_without_features_is_an_empty_vector():
    assert parse("2300\n2301  \r\n2302  1:1.0\n") == [doc("2300", "", 1), doc("2301", "", 2), doc("2302", "1:1.0", 3)]


def test_tokens_survive_storage_without_white_space():
    documents = parse("2300  3:0.6 1:0.8\n2301\n")
    stored = record_batch(documents).column("tokens")
    assert stored.to_pylist() == ["1:0.8 3:0.6", ""]
    assert split_tokens(stored).to_pylist() == [["1:0.8", "3:0.6"], []]


FEATURE_HINT = "each feature is 'termid:weight', a whole number from 1 and a decimal number, as in '864:0.0497'"
LINE_HINT = "each line is 'DOCID  TERMID:WEIGHT TERMID:WEIGHT ...' (Lewis et al. 2004, online appendix 13)"


@pytest.mark.parametrize(
    ("line", "doc_id", "reason"),
    [
        ("23x0  1:0.5", None, f"doc id '23x0' is not a number; LYRL2004 ids are decimal numbers; {LINE_HINT}"),
        ("02300  1:0.5", None, "doc id '02300' has leading zeros; write it as '2300'; LYRL2004 ids are decimal "
                               f"numbers; {LINE_HINT}"),
        ("-2300  1:0.5", None, f"doc id '-2300' is not a number; LYRL2004 ids are decimal numbers; {LINE_HINT}"),
        ("1:0.5 2:0.5", None, f"line starts with feature '1:0.5', not a doc id; {LINE_HINT}"),
        ("2350  a:0.1", "2350", f"field 'a:0.1': term id 'a' is not a whole number (digits only); {FEATURE_HINT}"),
        ("2350  -3:0.1", "2350", f"field '-3:0.1': term id '-3' is not a whole number (digits only); {FEATURE_HINT}"),
        ("2350  0:0.1", "2350", f"field '0:0.1': term id 0 is below 1; {FEATURE_HINT}"),
        ("2350  3:x", "2350", f"field '3:x': weight 'x' is not a finite decimal number; {FEATURE_HINT}"),
        ("2350  3:inf", "2350", f"field '3:inf': weight 'inf' is not a finite decimal number; {FEATURE_HINT}"),
        ("2350  3:nan", "2350", f"field '3:nan': weight 'nan' is not a finite decimal number; {FEATURE_HINT}"),
        ("2350  3:1_0", "2350", f"field '3:1_0': weight '1_0' is not a finite decimal number; {FEATURE_HINT}"),
        ("2350  3:1e999", "2350", f"field '3:1e999': weight '1e999' overflows a float; {FEATURE_HINT}"),
        ("2350  3:0.1 3:0.2", "2350", "term id 3 repeated ('3:0.1' and '3:0.2'); give each term once per document"),
        ("2350  3:0.1 03:0.2", "2350", "term id 3 repeated ('3:0.1' and '03:0.2'); give each term once per document"),
        ("2350  3:", "2350", f"field '3:' is not 'termid:weight'; {FEATURE_HINT}"),
        ("2350  1:0.1 :0.2", "2350", f"field ':0.2' is not 'termid:weight'; {FEATURE_HINT}"),
        ("2350  1:0.1 3", "2350", f"field '3' is not 'termid:weight'; {FEATURE_HINT}"),
        ("2350  1:0.1:0.2", "2350", f"field '1:0.1:0.2': weight '0.1:0.2' is not a finite decimal number; "
                                    f"{FEATURE_HINT}"),
        (f"2350  {MAX_TERM_ID + 1}:0.1", "2350",
         f"field '{MAX_TERM_ID + 1}:0.1': term id over {MAX_TERM_ID:,}; term ids are the term dictionary's numbers"),
        ("2350  " + "9" * 5000 + ":0.1", "2350",
         f"field {reprlib.repr('9' * 5000 + ':0.1')}: term id over {MAX_TERM_ID:,}; term ids are the term "
         "dictionary's numbers"),
    ],
)
def test_bad_line_is_one_reject_and_the_next_lines_are_read(line: str, doc_id: str | None, reason: str):
    result = parse(f"2300  1:0.5\n{line}\n2301  2:1.0\n")
    assert result == [doc("2300", "1:0.5", 1), Reject(SRC, 2, doc_id, reason), doc("2301", "2:1.0", 3)]
    who = f" (doc {doc_id})" if doc_id else ""
    assert result[1].message() == f"{SRC}:2{who}: {reason}"


def test_non_utf8_line_rejected_and_next_line_read():
    assert parse(b"2300  1:0.5\n2301  \xff:0.5\n2302  2:1.0\n") == [
        doc("2300", "1:0.5", 1),
        Reject(SRC, 2, None, "line is not valid UTF-8; re-encode the file as UTF-8"),
        doc("2302", "2:1.0", 3),
    ]


def test_first_bad_field_of_a_line_is_named():
    [reject] = parse("2300  0:0.1 3:x 3:0.2\n")
    assert reject.reason.startswith("field '0:0.1': term id 0 is below 1")


# --- file names -------------------------------------------------------------------------------------


def test_file_names():
    assert TRAIN_FILE == "lyrl2004_vectors_train.dat"
    assert TEST_FILES == {part: f"lyrl2004_vectors_test_pt{part}.dat" for part in range(4)}
    assert VECTOR_FILES == (TRAIN_FILE, *(TEST_FILES[part] for part in range(4)))


def test_split_of_names():
    assert split_of(TRAIN_FILE) == "train"
    assert split_of("hdfs://x/y/lyrl2004_vectors_train.dat.gz") == "train"
    assert [split_of(TEST_FILES[part]) for part in range(4)] == ["test"] * 4
    assert split_of("/data/lyrl2004_vectors_test_pt3.dat.gz") == "test"
    for bad in ("lyrl2004_vectors_test_pt4.dat", "lyrl2004_tokens_train.dat", "lyrl2004_vectors_train.dat.bz2",
                "rcv1-v2.topics.qrels", "train.dat"):
        with pytest.raises(ValueError, match=f"^'{bad}' is not a LYRL2004 vector file; expected one of "
                                             f"lyrl2004_vectors_train.dat, lyrl2004_vectors_test_pt0.dat, "):
            split_of(bad)


@pytest.mark.parametrize("name", ["d/lyrl2004_tokens_train.dat", "d/lyrl2004_vectors_test_pt4.dat.gz", "d/x.dat"])
def test_other_file_name_is_one_reject_for_the_file_and_no_line_is_read(name: str):
    lines = iter([b"2300  1:0.5\n", b"bad line\n"])
    assert list(parse_vector_file(lines, name)) == [
        Reject(name, 0, None, f"not a LYRL2004 vector file name; expected one of {', '.join(VECTOR_FILES)} "
                              "(optionally .gz)")
    ]
    assert next(lines) == b"2300  1:0.5\n"
