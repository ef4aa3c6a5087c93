"""The multi-label LIBSVM reader: fixtures checked against scikit-learn's reader, every reject with its
file, line and reason, gzip and bz2 files (corrupt ones included) and the split of a file name."""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from sklearn.datasets import load_svmlight_file

from sparktc.corpora.files import read_lines, read_records
from sparktc.corpora.libsvm import TEST_FILE, TRAIN_FILE, parse_libsvm, split_of
from sparktc.corpora.records import Document, Reject

FIXTURES = REPO / "tests" / "fixtures" / "libsvm"
#: The highest feature index in the fixtures.
N_FEATURES = 20


def parse(data: bytes, source: str = TRAIN_FILE) -> list[Document | Reject]:
    return list(read_records(parse_libsvm, data, source))


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def dense(document: Document) -> np.ndarray:
    """The document's features (``index:value`` tokens, 1-based) as a dense row."""
    row = np.zeros(N_FEATURES)
    for token in document.tokens or ():
        index, value = token.split(":")
        row[int(index) - 1] = float(value)
    return row


def sorted_features(line: str) -> str:
    """``line`` with its features in ascending index order, which load_svmlight_file requires (LIBSVM does not)."""
    body, hash_sign, comment = line.partition("#")
    fields = body.split()
    labels = [field for field in fields if ":" not in field]
    features = sorted((field for field in fields if ":" in field), key=lambda field: int(field.split(":")[0]))
    lead = " " if body[:1].isspace() else ""
    return lead + " ".join(labels + features) + (f" {hash_sign}{comment}" if hash_sign else "")


def test_train_fixture_documents_exact():
    def doc(line: int, labels: tuple[str, ...], tokens: tuple[str, ...]) -> Document:
        return Document(f"train.svm:{line}", "train", labels, None, tokens, TRAIN_FILE, line)

    assert parse(fixture(TRAIN_FILE)) == [
        doc(2, ("1", "3"), ("1:0.5", "4:1.25", "7:2.0")),
        doc(3, ("2",), ("2:1.0", "3:0.125", "20:-1.5")),
        doc(4, ("1", "2", "3"), ("1:0.1", "5:0.2", "9:0.3", "13:0.4")),
        doc(5, ("3",), ("10:0.001", "11:250.0")),
        doc(6, ("2", "1"), ("6:0.75", "8:1.0")),  # "2,1,2": file order, the repeated label once
        doc(7, (), ("4:0.5", "12:3.0")),  # the line starts with white space: no labels
        doc(8, (), ("5:1.0", "15:2.0")),  # the first field is a feature: no labels
        doc(9, ("4",), ("1:4.0", "3:1.5", "17:0.25")),  # indices sorted
        doc(11, ("5",), ("19:1.0", "20:1.0")),  # the comment's "3:9" is no feature
        doc(12, ("1",), ()),  # no features
        doc(13, ("2", "4"), ("2:0.001", "14:-0.5", "16:7.0")),
        doc(14, ("3",), ("18:0.0", "19:-2.25")),
    ]


@pytest.mark.parametrize("name", [TRAIN_FILE, TEST_FILE])
def test_fixture_features_and_labels_match_scikit_learn(name: str, tmp_path: Path):
    copy = tmp_path / name
    copy.write_text("\n".join(map(sorted_features, fixture(name).decode().splitlines())) + "\n")
    features, labels = load_svmlight_file(str(copy), multilabel=True, zero_based=False, n_features=N_FEATURES)
    documents = parse(fixture(name), name)
    assert all(isinstance(document, Document) for document in documents)
    assert len(documents) == features.shape[0] == len(labels)
    for document, row, expected in zip(documents, features.toarray(), labels, strict=True):
        assert document.split == split_of(name)
        np.testing.assert_array_equal(dense(document), row, err_msg=document.doc_id)
        assert {float(label) for label in document.labels} == set(expected), document.doc_id


BAD_LINES = [
    (b"1 a:1", "field 'a:1': index 'a' is not a whole number (digits only); each feature is 'index:value'"),
    (b"1 0:1.0", "field '0:1.0': index 0 is below 1; LIBSVM indices start at 1"),
    (b"1 -3:1", "field '-3:1': index '-3' is not a whole number (digits only)"),
    (b"1 +3:1", "field '+3:1': index '+3' is not a whole number (digits only)"),
    (b"1 3:x", "field '3:x': value 'x' is not a finite decimal number; each feature is 'index:value'"),
    (b"1 3:nan", "field '3:nan': value 'nan' is not a finite decimal number"),
    (b"1 3:inf", "field '3:inf': value 'inf' is not a finite decimal number"),
    (b"1 3:1e999", "field '3:1e999': value '1e999' overflows a float"),
    (b"1 3:1 3:2", "index 3 repeated ('3:1' and '3:2'); give each index once per line"),
    (b"1 3:1 03:2", "index 3 repeated ('3:1' and '03:2')"),
    (b"1,,2 3:1", "empty label in '1,,2'; separate labels by single commas, with none at either end"),
    (b"1, 3:1", "empty label in '1,'"),
    # White space ends the labels field; what else makes a string no label is rejected (sparktc.corpora.labels).
    (b"1,\x01 3:1", "label '\\x01' in the labels field holds U+0001, a control character, at character 1: it prints "
                    "invisibly or breaks a report's line; remove it"),
    (b"\x7f 3:1", "label '\\x7f' in the labels field holds U+007F, a control character, at character 1"),
    (b"\xef\xbb\xbf1 3:1", "label '\\ufeff1' in the labels field holds U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible "
                          "format character, at character 1"),
    ("1,ea\u200brn 3:1".encode(), "label 'ea\\u200brn' in the labels field holds U+200B ZERO WIDTH SPACE"),
    (b"1 3", "field '3' is not 'index:value'; each feature is 'index:value', a whole number from 1"),
    (b"1 3:", "field '3:' is not 'index:value'"),
    (b"1 :3", "field ':3' is not 'index:value'"),
    (b"1 2147483648:1", "field '2147483648:1': index over 2,147,483,647, the largest LIBLINEAR reads"),
    # Longer than int() converts; the message shows the field shortened.
    (b"1 " + b"9" * 5000 + b":1", "field '999999999999...99999999999:1': index over 2,147,483,647"),
    (b"\xff 3:1", "line is not valid UTF-8; re-encode the file as UTF-8"),
]


@pytest.mark.parametrize(("line", "reason"), BAD_LINES,
                         ids=[line[:16].decode(errors="replace") for line, _ in BAD_LINES])
def test_a_bad_line_is_a_reject_naming_file_line_and_field_and_the_next_line_is_read(line: bytes, reason: str):
    records = parse(b"1 1:1\n" + line + b"\n2 2:2\n", f"corpus/{TEST_FILE}")
    assert records[0] == Document("test.svm:1", "test", ("1",), None, ("1:1.0",), f"corpus/{TEST_FILE}", 1)
    assert isinstance(records[1], Reject)
    assert (records[1].source, records[1].line, records[1].doc_id) == (f"corpus/{TEST_FILE}", 2, None)
    assert records[1].reason.startswith(reason)
    assert records[1].message().startswith(f"corpus/{TEST_FILE}:2: {reason}")
    assert records[2] == Document("test.svm:3", "test", ("2",), None, ("2:2.0",), f"corpus/{TEST_FILE}", 3)


@pytest.mark.parametrize("source", ["train.txt", "corpus/dev.svm", "train.svm.zip", "train.svm.bz2.gz"])
def test_a_file_of_another_name_is_one_reject_for_the_file(source: str):
    assert parse(fixture(TRAIN_FILE), source) == [Reject(
        source, 0, None,
        "not a LIBSVM corpus file name; name the files train.svm and test.svm (optionally .gz or .bz2)",
    )]


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress], ids=["gz", "bz2"])
@pytest.mark.parametrize("name", [TRAIN_FILE, TEST_FILE])
def test_compressed_files_give_the_documents_of_the_plain_file(name: str, compress, tmp_path: Path):
    suffix = ".gz" if compress is gzip.compress else ".bz2"
    path = tmp_path / f"{name}{suffix}"
    path.write_bytes(compress(fixture(name)))
    source = str(path)
    documents = parse(path.read_bytes(), source)
    assert documents == [dataclasses.replace(document, source=source) for document in parse(fixture(name), name)]


def test_a_corrupt_bz2_file_is_a_line_0_reject_after_the_documents_before_the_break():
    # Two bz2 streams, as parallel compressors write them; the second one is cut short.
    lines = fixture(TRAIN_FILE).splitlines(keepends=True)
    second = bz2.compress(b"".join(lines[6:]))
    data = bz2.compress(b"".join(lines[:6])) + second[: len(second) // 2]
    source = "corpus/train.svm.bz2"
    records = parse(data, source)
    assert records[:-1] == [dataclasses.replace(document, source=source) for document in parse(b"".join(lines[:6]))]
    assert records[-1] == Reject(source, 0, None, (
        "corrupt bz2 stream (Compressed file ended before the end-of-stream marker was reached) after line 6; "
        "the record being read there and every record after it are lost: re-fetch the file"))


def test_a_file_that_is_not_bz2_is_one_reject():
    assert parse(b"1 1:1\n", "test.svm.bz2") == [Reject("test.svm.bz2", 0, None, (
        "corrupt bz2 stream (Invalid data stream) before its first line; nothing in the file could be read: "
        "re-fetch the file"))]


def test_read_lines_streams_bz2():
    data = b"".join(b"1 %d:1\n" % index for index in range(1, 1001))
    assert list(read_lines(bz2.compress(data), "x.bz2")) == data.splitlines(keepends=True)


@pytest.mark.parametrize(("source", "split"), [
    (TRAIN_FILE, "train"), (TEST_FILE, "test"), ("corpus/train.svm.gz", "train"),
    ("hdfs://host/corpus/test.svm.bz2", "test"), ("/data/rcv1/test.svm", "test"),
])
def test_split_of(source: str, split: str):
    assert split_of(source) == split


@pytest.mark.parametrize("source", ["train.dat", "corpus/valid.svm", "train.svm.zip", "train.svm.gz.bz2", "Train.svm"])
def test_split_of_another_name_is_a_value_error_naming_it_and_the_names_allowed(source: str):
    expected = f"{source!r} is not a LIBSVM corpus file; expected train.svm or test.svm (optionally .gz or .bz2)"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        split_of(source)
