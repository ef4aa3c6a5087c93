"""The multi-label LIBSVM reader: fixtures checked against scikit-learn's reader, every reject with its
file, line and reason, gzip and bz2 files (corrupt ones included) and the split of a file name; the column-wise
reader (whole files, byte ranges) giving the line parser's records exactly.
"""

from __future__ import annotations

import bz2
import dataclasses
import functools
import gzip
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from conftest import REPO
from sklearn.datasets import load_svmlight_file

from sparktc.corpora import libsvm
from sparktc.corpora.files import read_lines, read_records
from sparktc.corpora.libsvm import (
    MAX_INDEX,
    TEST_FILE,
    TRAIN_FILE,
    parse_libsvm,
    read_libsvm,
    read_range,
    split_of,
)
from sparktc.corpora.line_ranges import byte_ranges, count_newlines
from sparktc.corpora.records import Document, Reject, record_batch
from sparktc.schemas import RECORD_SCHEMA

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


# --- The column-wise reader (read_libsvm, read_range) against the line parser ----------------------------------

VALUES = ["0.5", "1", "1e-3", "-2.25", "+3", ".5", "5.", "0.0001", "0.00001", "1e16", "1e15", "123456789.123", "0.1",
          "0.30000000000000004", "0.50", "-0", "0", "-0.0", "0.0", "1E5", "2.5e+2", "1e-320", "1e308", "1e-999",
          "9007199254740993", "1234567890123456.7", "123456789012345.0", "1.00000000000000000001", "0.000123", "100",
          "7.0e0", "99999999999999999999999", "0.0001000", "-123.456"]
# Every kind of reject and of line the fast path leaves to the line parser.
ODD_LINES = [line.decode("utf-8", "surrogateescape") for line, _ in BAD_LINES] + [
    "1 00:2", "1 3:1e99999", ",1 3:1", "1 99999999999:1", "1 0000000000003:1", "1 3:1:2", "1\xa02:1", "1 2:1\u20033:1",
    "1\x0b2:1", "1\x0c 2:1 \x0c", "1\r2:1", "1:2:3", "é 1:1", "1 1:1 # é", "2,1,2 1:1", "1#2 3:1", "1 2:1#c", "",
    " ", "\t", "# a comment 1:2", "  # x", "\r", "1 # 2:3", "\x0b", "1", "  3:1", "3:1 1:2", "1 2:1\t\t4:2 \r"]


@functools.cache  # drawn once per seed and count for the module: several tests read the same lines
def random_lines(seed: int, count: int) -> bytes:
    """``count`` lines drawn with a seed: documents with 0-4 labels (some repeated), 0-7 features in or out of order
    with indices with or without a leading zero, values written in many ways, separated by spaces or tabs,
    sometimes with a comment or trailing white space; and the odd lines above (rejects, blank and comment lines).
    Endings LF or CRLF; a non-UTF-8 line; the last line without a newline.
    """
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(count):
        if rng.random() < 0.15:
            line = str(rng.choice(ODD_LINES))
        else:
            labels = ",".join(str(rng.integers(1, 6)) for _ in range(rng.integers(0, 5)))
            indices = rng.choice(np.arange(1, 40), size=rng.integers(0, 8), replace=False)
            if rng.random() < 0.5:
                indices = np.sort(indices)
            features = []
            for index in indices.tolist():
                draw = rng.random()
                value = (str(rng.choice(VALUES)) if draw < 0.3 else repr(float(rng.standard_normal())) if draw < 0.6
                         else f"{rng.random():.{rng.integers(1, 8)}f}")
                features.append(f"{'0' * int(rng.random() < 0.1)}{index}:{value}")
            separators = [str(rng.choice([" ", " ", "  ", "\t"])) for _ in features]
            lead = str(rng.choice(["", "", " ", "\t"])) if not labels else labels
            line = lead + "".join(s + f for s, f in zip(separators, features))
            if not lead and features:
                line = line[len(separators[0]):]  # the first field a feature
            line += str(rng.choice(["", "", "", " ", "\t", " # comment 7:7", "#x"]))
        lines.append(line.encode("utf-8", "surrogateescape") + (b"\r\n" if rng.random() < 0.1 else b"\n"))
    lines.insert(int(rng.integers(len(lines))), b"\xff 3:1\n")
    return b"".join(lines) + b"2 1:1 2:2"  # no newline at the end


def column_wise(data: bytes, source: str = TRAIN_FILE) -> list[dict]:
    return pa.Table.from_batches(list(read_libsvm(data, source)), RECORD_SCHEMA).to_pylist()


@functools.cache  # the reference records of the same data, asked for by several tests
def line_parsed(data: bytes, source: str = TRAIN_FILE) -> list[dict]:
    return pa.Table.from_batches([record_batch(parse(data, source))], RECORD_SCHEMA).to_pylist()


@pytest.mark.parametrize("name", [TRAIN_FILE, TEST_FILE])
@pytest.mark.parametrize("variant", ["as is", "crlf", "no final newline"])
def test_the_column_wise_reader_gives_the_line_parsers_records_on_the_fixtures(name: str, variant: str):
    data = fixture(name)
    data = {"as is": data, "crlf": data.replace(b"\n", b"\r\n"), "no final newline": data.rstrip(b"\n")}[variant]
    assert column_wise(data, f"corpus/{name}") == line_parsed(data, f"corpus/{name}")


@pytest.mark.parametrize("chunk_bytes", [100, 4096, libsvm.CHUNK_BYTES])
@pytest.mark.parametrize("seed", range(4))
def test_the_column_wise_reader_gives_the_line_parsers_records_on_random_lines(seed: int, chunk_bytes: int,
                                                                              monkeypatch):
    monkeypatch.setattr(libsvm, "CHUNK_BYTES", chunk_bytes)
    data = random_lines(seed, 2000)
    expected = line_parsed(data)
    assert sum(record["reason"] is not None for record in expected) > 100  # rejects of every kind are in
    assert column_wise(data) == expected
    assert column_wise(b"\n" + data + b"\n", "d/test.svm") == line_parsed(b"\n" + data + b"\n", "d/test.svm")


# Values at the edges of the stored form: canonical within 16 characters (kept as written), and just past it.
PLAIN_VALUES = ["0.0", "0.1", "0.0001", "0.00001", "0.000123456789012", "0.0001234567890123", "0.123456789012345",
                "0.1234567890123456", "1.0", "12345678901234.5", "123456789012345.0", "99999999999999.9", "0.10", "1.",
                "1", "-0.5", "5.25", "0.5e0", "00.5"]


@functools.cache
def plain_lines(seed: int, count: int) -> bytes:
    """``count`` lines mostly in stored form (labels then features in ascending order, single spaces, canonical
    values), each drawn with one flaw at times: a label given twice, an index repeated or out of order, an index of
    9 digits or with a leading zero, a value not in stored form, two spaces, a CRLF ending, a comment or trailing
    space; some lines without labels, some of one short feature; the first line starts with a feature.
    """
    rng = np.random.default_rng(seed)
    lines = []
    for number in range(count):
        labels = [str(rng.integers(1, 30)) for _ in range(rng.integers(0 if number else 0, 4))]
        labels = list(dict.fromkeys(labels)) if rng.random() < 0.9 else labels
        digits = rng.integers(1, 9, size=rng.integers(1, 9))
        indices = sorted({int(rng.integers(10 ** (d - 1), 10**d)) for d in digits.tolist()})
        draw = rng.random()
        if draw < 0.03 and len(indices) > 1:
            indices[1] = indices[0]
        elif draw < 0.06 and len(indices) > 1:
            indices.reverse()
        elif draw < 0.08:
            indices[-1] = int(rng.integers(10**8, MAX_INDEX))
        elif draw < 0.1:
            indices[0] = f"0{indices[0]}"
        values = [str(rng.choice(PLAIN_VALUES)) if rng.random() < 0.06 else repr(round(float(rng.random()), 6))
                  for _ in indices]
        features = " ".join(f"{index}:{value}" for index, value in zip(indices, values))
        if rng.random() < 0.03:
            features = features.replace(" ", "  ", 1)
        line = f"{','.join(labels)} {features}" if labels and number else features
        line += str(rng.choice([""] * 30 + [" ", "#c", " # 1:2"]))
        lines.append(line.encode() + (b"\r\n" if rng.random() < 0.05 else b"\n"))
    return b"".join(lines)


def test_the_stored_form_takes_exactly_the_canonical_values_of_at_most_16_characters():
    stored = re.compile(f"(?:{libsvm._PLAIN_VALUE})")
    canonical = re.compile(libsvm._CANONICAL_VALUE)
    rng = np.random.default_rng(0)
    wholes = ["0", "00", "1", "9", "10", "12345", "1234567890123", "12345678901234", "123456789012345"]
    texts = [f"{rng.choice(wholes)}.{''.join(rng.choice(list('0123456789'), rng.integers(0, 17)))}"
             for _ in range(5_000)] + PLAIN_VALUES
    for text in texts:
        expected = bool(canonical.match(text)) and len(text) <= libsvm._CANONICAL_LENGTH and text[0] != "-"
        assert bool(stored.fullmatch(text)) == expected, text
        if expected:
            assert repr(float(text)) == text


@pytest.mark.parametrize("chunk_bytes", [4096, libsvm.CHUNK_BYTES])
@pytest.mark.parametrize("seed", range(3))
def test_lines_in_stored_form_are_taken_whole_with_the_line_parsers_records(seed: int, chunk_bytes: int,
                                                                             monkeypatch):
    monkeypatch.setattr(libsvm, "CHUNK_BYTES", chunk_bytes)
    data = plain_lines(seed, 3000)
    lines = pa.array(data.splitlines(keepends=True), pa.large_binary())
    taken_whole = pa.compute.match_substring_regex(lines, libsvm._PLAIN_LINE).to_numpy(zero_copy_only=False).mean()
    assert 0.5 < taken_whole < 0.95  # most lines take the stored-form path; the flawed ones fall through
    assert column_wise(data) == line_parsed(data)
    assert column_wise(data + b"1 3:0.5", "d/test.svm") == line_parsed(data + b"1 3:0.5", "d/test.svm")


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress], ids=["gz", "bz2"])
@pytest.mark.parametrize("cut", [None, 0.3, 0.7])
def test_the_column_wise_reader_of_a_compressed_file_whole_or_cut_short(compress, cut: float | None, monkeypatch):
    monkeypatch.setattr(libsvm, "CHUNK_BYTES", 5000)
    source = f"corpus/{TRAIN_FILE}{'.gz' if compress is gzip.compress else '.bz2'}"
    data = random_lines(7, 3000)
    # bz2: several streams, as parallel compressors write them, so a cut loses only the last one.
    packed = compress(data) if compress is gzip.compress else b"".join(
        bz2.compress(data[i:i + 30_000]) for i in range(0, len(data), 30_000))
    if cut is not None:
        packed = packed[: int(len(packed) * cut)]
    expected = line_parsed(packed, source)
    assert (expected[-1]["line"] == 0) == (cut is not None)
    assert column_wise(packed, source) == expected


def test_the_column_wise_reader_rejects_a_file_of_another_name_whole():
    assert column_wise(fixture(TRAIN_FILE), "corpus/dev.svm") == line_parsed(fixture(TRAIN_FILE), "corpus/dev.svm")


@pytest.mark.parametrize("range_bytes", [1, 37, 100, 1000, 50_000, 10**9])
@pytest.mark.parametrize("ending", ["", "\n", "crlf"])
def test_byte_ranges_give_the_records_of_the_whole_file_with_its_line_numbers(range_bytes: int, ending: str):
    data = random_lines(3, 600)
    data = data.replace(b"\n", b"\r\n") if ending == "crlf" else data + ending.encode()
    file = pa.BufferReader(data)
    records, newlines = [], 0
    for start, end in byte_ranges(len(data), range_bytes):
        records += pa.Table.from_batches(list(read_range(file, len(data), TRAIN_FILE, start, end, newlines)),
                                         RECORD_SCHEMA).to_pylist()
        newlines += count_newlines(file, start, end)
    assert records == line_parsed(data)


def test_byte_ranges_cover_the_file_in_order():
    assert byte_ranges(0, 10) == [(0, 0)]
    assert byte_ranges(25, 10) == [(0, 8), (8, 16), (16, 25)]
    assert byte_ranges(25, 100) == [(0, 25)]


@pytest.mark.parametrize("text", ["0.1", "1e-05", "1e16", "123456789.123", "0.0001", "1e-4", "100", "-0.0", "0.10",
                                  "0.30000000000000004", "1234567890123456", "0.000100"])
def test_values_are_written_as_pythons_repr(text: str):
    [record] = column_wise(f"1 3:{text}\n".encode())
    assert record["tokens"] == f"3:{float(text)!r}"
