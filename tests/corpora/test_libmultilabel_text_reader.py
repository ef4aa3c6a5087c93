"""The LibMultiLabel text reader: good files exactly as LibMultiLabel's own reader (pandas' read_csv as
libmultilabel.linear.preprocessor.read_libmultilabel_format 0.10.0 calls it) reads them, plain, gzip and bz2, with LF
or CRLF endings; the fields pandas would change kept as written; every reject with its file, line and reason
(those pandas drops or refuses checked against pandas too); corrupt compressed streams; and byte ranges giving
the records of the whole file.
"""

from __future__ import annotations

import bz2
import gzip
import random
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from reference import libmultilabel_read

from sparktc.corpora import libmultilabel_text
from sparktc.corpora.libmultilabel_text import FORMAT, TEST_FILE, TRAIN_FILE, Columns, file_columns, read_range
from sparktc.corpora.line_ranges import byte_ranges, count_newlines
from sparktc.corpora.records import Document, Reject
from sparktc.schemas import RECORD_SCHEMA

COMPRESS = {"": lambda data: data, ".gz": gzip.compress, ".bz2": bz2.compress}


def read(data: bytes, source: str = TRAIN_FILE, reader=FORMAT.reader) -> list[Document | Reject]:
    """The records of a whole file as ingest reads it (the format's reader), back as Documents and Rejects."""
    rows = [row for batch in reader(data, source) for row in batch.to_pylist()]
    return [Reject(row["source"], row["line"], row["doc_id"], row["reason"]) if row["reason"] is not None else
            Document(row["doc_id"], row["split"], tuple(row["labels"]), row["text"], None, row["source"], row["line"])
            for row in rows]


def test_a_two_column_file_exact():
    data = (b"\xef\xbb\xbfGCAT E11\tOil prices rose.\r\n"  # a byte order mark before the first line: dropped
            b"\n"
            b"   \n"  # spaces only: blank
            b"C24 CCAT C24\t\"Quoted\" #not a comment  \n"  # C24 twice counts once; quotes and '#' are text
            b" \tno labels at all\n"
            b"M11\tcaf\xc3\xa9 profit")  # no newline at the end
    assert read(data) == [
        Document("train.txt:1", "train", ("GCAT", "E11"), "Oil prices rose.", None, TRAIN_FILE, 1),
        Document("train.txt:4", "train", ("C24", "CCAT"), '"Quoted" #not a comment  ', None, TRAIN_FILE, 4),
        Document("train.txt:5", "train", (), "no labels at all", None, TRAIN_FILE, 5),
        Document("train.txt:6", "train", ("M11",), "caf\u00e9 profit", None, TRAIN_FILE, 6),
    ]


def test_a_three_column_file_exact_with_its_ids():
    data = b"2286\tE11 ECAT\trecov recov excit\nd-7\t\tunlabelled text\n2288\tC24\turuguay compan\n"
    assert read(data, f"corpus/{TEST_FILE}") == [
        Document("2286", "test", ("E11", "ECAT"), "recov recov excit", None, "corpus/test.txt", 1),
        Document("d-7", "test", (), "unlabelled text", None, "corpus/test.txt", 2),
        Document("2288", "test", ("C24",), "uruguay compan", None, "corpus/test.txt", 3),
    ]


def random_corpus(columns: int, ending: str, seed: int = 5) -> bytes:
    """A good file of 60 documents with blank lines between some, fields that pandas reads as the strings they are."""
    rng = random.Random(seed)
    words = ["oil", "price", "rose", "bank", "rate", "cut", "wheat", "ship", "strike", "yen", "\u00e9t\u00e9", "a-b"]
    lines = []
    for n in range(60):
        labels = " ".join(rng.sample(["GCAT", "E11", "C24", "M11", "ECAT"], rng.randrange(0, 4)))
        text = " ".join(rng.choices(words, k=rng.randrange(1, 12))) + rng.choice(["", " ", "."])
        lines.append("\t".join(([f"doc{n}"] if columns == 3 else []) + [labels, text]))
        if n % 9 == 4:
            lines.append(rng.choice(["", "  "]))
    return "".join(line + ending for line in lines).encode()


@pytest.mark.parametrize("suffix", list(COMPRESS))
@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("columns", [2, 3])
def test_good_files_are_what_libmultilabels_reader_reads(tmp_path: Path, columns: int, ending: str, suffix: str):
    data = random_corpus(columns, ending)
    path = tmp_path / f"{TRAIN_FILE}{suffix}"
    path.write_bytes(COMPRESS[suffix](data))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no line skipped
        theirs = libmultilabel_read(path)
    ours = read(path.read_bytes(), str(path))
    assert all(isinstance(record, Document) and record.split == "train" for record in ours)
    assert [list(record.labels) for record in ours] == theirs["label"]
    assert [record.text for record in ours] == theirs["text"]
    lines = [number for number, line in enumerate(data.decode().split(ending), 1) if line.strip(" ")]
    assert [record.line for record in ours] == lines
    if columns == 3:
        assert [record.doc_id for record in ours] == theirs["index"]
    else:  # LibMultiLabel's id is the row (0-based) among those it keeps; sparktc's the file and line
        assert theirs["index"] == list(range(len(ours)))
        assert [record.doc_id for record in ours] == [f"train.txt:{line}" for line in lines]


def test_fields_pandas_would_change_are_kept_as_written(tmp_path: Path):
    data = b"007\tNA\tnull\n010\tGCAT\tprofits rose\n"
    path = tmp_path / TRAIN_FILE
    path.write_bytes(data)
    theirs = libmultilabel_read(path)
    assert theirs == {"index": ["7", "10"], "label": [[], ["GCAT"]], "text": ["", "profits rose"]}
    assert read(data) == [Document("007", "train", ("NA",), "null", None, TRAIN_FILE, 1),
                          Document("010", "train", ("GCAT",), "profits rose", None, TRAIN_FILE, 2)]


def test_an_empty_text_is_a_document_without_words_as_libmultilabel_keeps_it(tmp_path: Path):
    """LibMultiLabel keeps a line whose text field is empty or white space, so a test document is never dropped;
    so does sparktc (the JSON Lines reader too), the text as written.
    """
    data = "d1\tGCAT\tprofits rose\nd2\tE11\t\nd3\tGCAT E11\t \u3000 \nd4\t\t\n".encode()
    path = tmp_path / TEST_FILE
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no line skipped
        theirs = libmultilabel_read(path)
    assert theirs == {"index": ["d1", "d2", "d3", "d4"], "label": [["GCAT"], ["E11"], ["GCAT", "E11"], []],
                      "text": ["profits rose", "", " \u3000 ", ""]}
    assert read(data, TEST_FILE) == [
        Document("d1", "test", ("GCAT",), "profits rose", None, TEST_FILE, 1),
        Document("d2", "test", ("E11",), "", None, TEST_FILE, 2),
        Document("d3", "test", ("GCAT", "E11"), " \u3000 ", None, TEST_FILE, 3),
        Document("d4", "test", (), "", None, TEST_FILE, 4)]


FILE_HAS_2 = "where the file has 2 (labels, text), as its first line (line 1) has them"
FILE_HAS_3 = "where the file has 3 (id, labels, text), as its first line (line 2) has them"
MORE = ": LibMultiLabel's reader skips such a line with only a warning; no field may hold a tab: replace the tabs " \
       "inside the text by spaces"
NO_TEXT = ": no text (LibMultiLabel reads an empty one); give the document its text, or drop the line"


def test_every_reject_with_its_line_in_a_two_column_file():
    lines = [
        b"GCAT\tgood one",  # 1
        b"GCAT\ttab\tinside",  # 2: three fields
        b"GCAT\t\t",  # 3: three fields, empty
        b"GCAT",  # 4: one field, no text
        b"GCAT\t \t",  # 5: three fields
        b"GCAT\t  ",  # 6: a text of white space only: a document without words
        b"GCAT\t\xff\xfe",  # 7: not UTF-8
        b"GCAT\tcarriage\rreturn",  # 8
        b"GCAT\tnul\x00byte",  # 9
        "GC\u200bAT\tinvisible".encode(),  # 10
        b"E11 \x7f\tcontrol",  # 11
        b"E11\tgood two",  # 12
    ]
    records = read(b"\n".join(lines) + b"\n")
    assert records[0] == Document("train.txt:1", "train", ("GCAT",), "good one", None, TRAIN_FILE, 1)
    assert records[-1] == Document("train.txt:12", "train", ("E11",), "good two", None, TRAIN_FILE, 12)
    assert records[5] == Document("train.txt:6", "train", ("GCAT",), "  ", None, TRAIN_FILE, 6)
    assert [(r.source, r.line, r.doc_id, r.reason) for r in records[1:5] + records[6:-1]] == [
        (TRAIN_FILE, line, None, reason) for line, reason in [
        (2, f"3 tab-separated fields {FILE_HAS_2}{MORE}"),
        (3, f"3 tab-separated fields {FILE_HAS_2}{MORE}"),
        (4, f"1 tab-separated field {FILE_HAS_2}{NO_TEXT}"),
        (5, f"3 tab-separated fields {FILE_HAS_2}{MORE}"),
        (7, "line is not valid UTF-8; re-encode the file as UTF-8"),
        (8, "a carriage return (\\r) inside the line, where LibMultiLabel's reader (pandas) would end the line; "
            "remove it (a line ends in \\n or \\r\\n)"),
        (9, "a NUL byte (\\x00) in the line, where LibMultiLabel's reader (pandas) would cut its field short; "
            "remove it"),
        (10, "label 'GC\\u200bAT' in the labels field holds U+200B ZERO WIDTH SPACE, an invisible format character, "
             "at character 3: it prints invisibly or breaks a report's line; remove it"),
        (11, "label '\\x7f' in the labels field holds U+007F, a control character, at character 1: it prints "
             "invisibly or breaks a report's line; remove it"),
    ]]


def test_every_reject_with_its_line_and_id_in_a_three_column_file():
    data = (b"\n"  # blank: the first line is line 2
            b"d1\tGCAT\tgood\n"
            b"d2\tGCAT\n"  # fewer fields
            b"d3\n"  # fewer fields
            b"d4\tGCAT\ttoo\tmany\n"
            b"\tGCAT\tno id\n"
            b" \tGCAT\twhite space id\n"
            b"d7\tGCAT\t \t\n"  # four fields
            b"d8\tGCAT\t\n"  # an empty text: a document without words
            b"d9\t\tgood too\n")
    records = read(data)
    assert [record for record in records if isinstance(record, Document)] == [
        Document("d1", "train", ("GCAT",), "good", None, TRAIN_FILE, 2),
        Document("d8", "train", ("GCAT",), "", None, TRAIN_FILE, 9),
        Document("d9", "train", (), "good too", None, TRAIN_FILE, 10)]
    empty_id = ("empty id: the first field holds nothing but white space; give each document an id, or drop the id "
                "column from every line of the file")
    assert [(r.line, r.doc_id, r.reason) for r in records if isinstance(r, Reject)] == [
        (3, "d2", f"2 tab-separated fields {FILE_HAS_3}{NO_TEXT}"),
        (4, "d3", f"1 tab-separated field {FILE_HAS_3}{NO_TEXT}"),
        (5, "d4", f"4 tab-separated fields {FILE_HAS_3}{MORE}"),
        (6, None, empty_id),
        (7, None, empty_id),
        (8, "d7", f"4 tab-separated fields {FILE_HAS_3}{MORE}"),
    ]


def test_a_line_with_more_fields_is_one_libmultilabel_skips_with_only_a_warning(tmp_path: Path):
    data = b"d1\tGCAT\tgood\nd2\tGCAT\ttoo\tmany\nd3\tE11\tkept\n"
    (tmp_path / TRAIN_FILE).write_bytes(data)
    with pytest.warns(pd.errors.ParserWarning, match="Skipping line 2: expected 3 fields, saw 4"):
        assert libmultilabel_read(tmp_path / TRAIN_FILE)["index"] == ["d1", "d3"]
    assert [(r.line, type(r).__name__) for r in read(data)] == [(1, "Document"), (2, "Reject"), (3, "Document")]


@pytest.mark.parametrize(("bad", "theirs"), [
    (b"GCAT\tcut\x00short", {"index": [0, 1], "label": [["GCAT"], ["E11"]], "text": ["cut", "kept"]}),
    (b"GCAT\ttwo\rlines", {"index": [0, 1, 2], "label": [["GCAT"], ["lines"], ["E11"]], "text": ["two", "", "kept"]}),
    (b"GCAT\t\xff", UnicodeDecodeError),
])
def test_a_line_libmultilabel_would_read_otherwise_is_a_reject(tmp_path: Path, bad: bytes, theirs):
    data = bad + b"\nE11\tkept\n"
    (tmp_path / TRAIN_FILE).write_bytes(data)
    if isinstance(theirs, dict):
        assert libmultilabel_read(tmp_path / TRAIN_FILE) == theirs
    else:
        with pytest.raises(theirs):
            libmultilabel_read(tmp_path / TRAIN_FILE)
    first, second = read(data)
    assert isinstance(first, Reject) and first.line == 1
    assert second == Document("train.txt:2", "train", ("E11",), "kept", None, TRAIN_FILE, 2)


@pytest.mark.parametrize(("data", "line", "fields"), [
    (b"GCAT E11\n1\tGCAT\tx\n", 1, "1 tab-separated field"),  # fields separated by spaces, not tabs
    (b"\n  \na\tb\tc\td\n1\tGCAT\tx\n", 3, "4 tab-separated fields"),
])
def test_a_first_line_of_neither_2_nor_3_fields_is_one_reject_for_the_whole_file(tmp_path: Path, data: bytes, line: int,
                                                                                   fields: str):
    (tmp_path / TRAIN_FILE).write_bytes(data)
    with pytest.raises(ValueError, match="Expected 2 or 3 columns"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas skips the later lines, then LibMultiLabel refuses the file
        libmultilabel_read(tmp_path / TRAIN_FILE)
    assert read(data) == [Reject(TRAIN_FILE, 0, None, (
        f"its first line (line {line}) has {fields}, and a file's first line fixes its columns: 2 (labels, text) or "
        "3 (id, labels, text), separated by single tabs (LibMultiLabel refuses the file too); none of its lines is "
        "read: fix the file"))]


def test_a_file_of_blank_lines_has_no_records():
    assert read(b"\n  \n\r\n") == []


def test_a_file_of_another_name_is_one_reject():
    assert read(b"GCAT\tx\n", "corpus/valid.txt") == [Reject("corpus/valid.txt", 0, None, (
        "not a LibMultiLabel text corpus file name; name the files train.txt and test.txt (optionally .gz or .bz2)"))]


def test_classify_reads_files_of_any_name_without_a_split_and_rejects_as_ingest():
    data = b"2286\tE11 ECAT\trecov recov excit\nd-7\tGCAT\ttwo\ttabs\n"
    assert read(bz2.compress(data), "new/rcv1_topics_test.txt.bz2", FORMAT.classify) == [
        Document("2286", None, ("E11", "ECAT"), "recov recov excit", None, "new/rcv1_topics_test.txt.bz2", 1),
        Reject("new/rcv1_topics_test.txt.bz2", 2, "d-7",
               "4 tab-separated fields " + FILE_HAS_3.replace("line 2", "line 1") + MORE)]
    assert read(b"GCAT\tx\n", "docs.tsv", FORMAT.classify) == [
        Document("docs.tsv:1", None, ("GCAT",), "x", None, "docs.tsv", 1)]


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_a_corrupt_compressed_file_keeps_the_lines_before_the_break_and_names_the_last(suffix: str):
    data = b"".join(f"d{n}\tGCAT\tline number {n} of a text long enough to be cut\n".encode() for n in range(400))
    # Four streams, as parallel compressors write them (one bz2 block would hold the whole file): a cut loses the last.
    quarter = len(data) // 4
    packed = b"".join(COMPRESS[suffix](data[start:start + quarter]) for start in range(0, len(data), quarter))
    records = read(packed[: len(packed) * 2 // 3], f"{TRAIN_FILE}{suffix}")
    *documents, broken = records
    assert documents == [Document(f"d{n}", "train", ("GCAT",), f"line number {n} of a text long enough to be cut",
                                  None, f"{TRAIN_FILE}{suffix}", n + 1) for n in range(len(documents))]
    assert broken.line == 0 and broken.source == f"{TRAIN_FILE}{suffix}"
    compression = {".gz": "gzip", ".bz2": "bz2"}[suffix]
    assert broken.reason.startswith(f"corrupt {compression} stream (")
    assert broken.reason.endswith(f"after line {len(documents)}; the record being read there and every record after "
                                  "it are lost: re-fetch the file")


def ranged(data: bytes, range_bytes: int, source: str = TRAIN_FILE) -> list[dict]:
    """The records of ``data`` read in byte ranges as ingest reads a large plain file, in order."""
    file = pa.BufferReader(data)
    records, newlines = [], 0
    for start, end in byte_ranges(len(data), range_bytes):
        records += pa.Table.from_batches(list(read_range(file, len(data), source, start, end, newlines)),
                                         RECORD_SCHEMA).to_pylist()
        newlines += count_newlines(file, start, end)
    return records


def whole(data: bytes, source: str = TRAIN_FILE) -> list[dict]:
    return pa.Table.from_batches(list(FORMAT.reader(data, source)), RECORD_SCHEMA).to_pylist()


@pytest.mark.parametrize("range_bytes", [1, 7, 64, 500, 10**6])
@pytest.mark.parametrize("columns", [2, 3])
@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_byte_ranges_give_the_records_of_the_whole_file(range_bytes: int, columns: int, ending: str):
    data = (b"\xef\xbb\xbf\n  " + ending.encode() + random_corpus(columns, ending)
            + b"GCAT\ttoo\tmany\tfields\nGCAT\n\xff\tbad" + ending.encode() + b"E11\tlast")
    expected = whole(data)
    assert {70, 71, 72} <= {row["line"] for row in expected if row["reason"] is not None}
    assert ranged(data, range_bytes) == expected


@pytest.mark.parametrize(("data", "source"), [(b"\n\na\tb\tc\td\n1\tGCAT\tx\n" * 20, TRAIN_FILE),
                                            (b"GCAT\tx\n" * 20, "corpus/dev.txt"), (b"", "corpus/dev.txt")],
                         ids=["bad first line", "another name", "another name, empty"])
def test_byte_ranges_give_a_whole_file_reject_once(data: bytes, source: str):
    expected = whole(data, source)
    assert len(expected) == 1 and expected[0]["line"] == 0
    assert ranged(data, 10, source) == expected


def test_byte_ranges_of_blank_lines_give_no_records():
    assert ranged(b"\n \n" * 30, 10) == whole(b"\n \n" * 30) == []


def test_file_columns_finds_the_first_line_across_reads(monkeypatch):
    monkeypatch.setattr(libmultilabel_text, "_READ", 3)
    data = b"\xef\xbb\xbf  \r\n\n    \nid\tGC AT\ttext\n1\t2\n"
    assert file_columns(pa.BufferReader(data), len(data)) == Columns(3, 4)
    for data, columns in ((b"\n  \nGCAT text", Columns(1, 3)), (b"\n \n", None), (b"", None)):
        assert file_columns(pa.BufferReader(data), len(data)) == columns


@pytest.mark.parametrize(("count", "readable"), [(1, False), (2, True), (3, True), (4, False)])
def test_only_2_or_3_columns_can_be_read(count: int, readable: bool):
    assert (Columns(count, 1).problem() is None) == readable
