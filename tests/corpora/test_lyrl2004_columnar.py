"""The columnar LYRL2004 readers give exactly what the line readers give, on clean and on bad files."""

from __future__ import annotations

import gzip
import random
import tracemalloc
import zlib

import numpy as np
import pyarrow as pa
import pytest
from conftest import invented_words, lyrl2004_fixture

from sparktc.corpora import files, lyrl2004
from sparktc.corpora.files import read_lines, read_records
from sparktc.corpora.line_ranges import byte_ranges
from sparktc.corpora.lyrl2004_columnar import (
    assignment_batch,
    read_clean_piece,
    read_clean_qrels_piece,
    read_qrels_file,
    read_range,
    read_token_file,
)
from sparktc.corpora.records import RECORD_SCHEMA, record_batches, token_counts


def line_tokens(content: bytes, source: str, split: str = "test") -> pa.Table:
    records = read_records(lambda lines, name: lyrl2004.parse_token_file(lines, name, split), content, source)
    return pa.Table.from_batches(list(record_batches(records)), schema=RECORD_SCHEMA)


def columnar_tokens(content: bytes, source: str, split: str = "test", piece_bytes: int = 1 << 24) -> pa.Table:
    return pa.Table.from_batches(list(read_token_file(content, source, split, piece_bytes)), schema=RECORD_SCHEMA)


def line_qrels(content: bytes, source: str) -> pa.Table:
    items = list(lyrl2004.parse_qrels(read_lines(content, source), source))
    return pa.Table.from_batches([assignment_batch(items)])


def columnar_qrels(content: bytes, source: str, piece_bytes: int = 1 << 24) -> pa.Table:
    batches = list(read_qrels_file(content, source, piece_bytes))
    return pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None


def clean_token_file(n_documents: int, seed: int) -> bytes:
    """A well-formed token file with ragged lines, CRLF and extra blank lines here and there."""
    rng = random.Random(seed)
    words = invented_words(np.random.default_rng(seed), 300)
    out = []
    for i in range(n_documents):
        tokens = [rng.choice(words) for _ in range(rng.randint(1, 40))]
        lines, at = [], 0
        while at < len(tokens):
            width = rng.randint(1, 12)
            lines.append(" ".join(tokens[at : at + width]))
            at += width
        end = "\r\n" if rng.random() < 0.1 else "\n"
        w_line = ".W " + lines.pop(0) if rng.random() < 0.1 else ".W"
        out.append(end.join([f".I {1000 + 3 * i}", w_line, *lines]) + end + "\n" * rng.randint(1, 3))
    return "".join(out).encode("ascii")


@pytest.mark.parametrize("piece_bytes", [1 << 24, 64, 1000])
@pytest.mark.parametrize("gzipped", [False, True])
def test_clean_file_equals_line_reader(piece_bytes, gzipped):
    content = clean_token_file(400, seed=piece_bytes)
    source = "lyrl2004_tokens_test_pt1.dat" + (".gz" if gzipped else "")
    if gzipped:
        content = gzip.compress(content)
    expected = line_tokens(content, source)
    assert expected.num_rows == 400 and expected.column("reason").null_count == 400
    assert columnar_tokens(content, source, piece_bytes=piece_bytes).equals(expected)


def test_fixtures_equal_line_reader():
    for official in [lyrl2004.TRAIN_FILE, lyrl2004.TEST_FILES[0] + ".gz"]:
        content = lyrl2004_fixture(official).read_bytes()
        split = lyrl2004.split_of(official)
        expected = line_tokens(content, official, split)
        assert expected.num_rows > 0
        assert columnar_tokens(content, official, split).equals(expected)


def test_clean_piece_is_read_columnar():
    piece = b".I 7\n.W\na b\nc\n\n.I 8\n.W d\n"
    doc_ids, tokens, lines = read_clean_piece(piece, 10)
    assert doc_ids.to_pylist() == ["7", "8"]
    assert tokens.to_pylist() == [["a", "b", "c"], ["d"]]
    assert lines.tolist() == [10, 15]


BAD_PIECES = {
    "preamble": b"junk\n.I 1\n.W\na\n",
    "non-numeric id": b".I x1\n.W\na\n",
    "leading zero": b".I 01\n.W\na\n",
    "id missing": b".I\n.W\na\n",
    "two ids": b".I 1 2\n.W\na\n",
    "text before .W": b".I 1\nb\n.W\na\n",
    "no .W": b".I 1\na\n",
    "no .W at the end": b".I 1\n.W\na\n.I 2\n",
    "second .W": b".I 1\n.W\na\n.W\nb\n",
    "empty document": b".I 1\n.W\n\n.I 2\n.W\nb\n",
    "duplicate id": b".I 1\n.W\na\n.I 1\n.W\nb\n",
    "non-ASCII": ".I 1\n.W\ncaf\u00e9\n".encode(),
    "non-UTF-8": b".I 1\n.W\nab\xff\n",
    "unit separator": b".I 1\n.W\na\x1fb\n",
}


@pytest.mark.parametrize("case", sorted(BAD_PIECES))
def test_bad_piece_goes_to_line_reader_with_same_result(case):
    piece = BAD_PIECES[case]
    if case != "unit separator":  # Python splits on \x1f too: the columnar path must not read it
        assert read_clean_piece(piece, 1) is None
    good = clean_token_file(30, seed=3)
    for content in (piece, good + piece, piece + b"\n" + good.replace(b".I 10", b".I 90")):
        source = "lyrl2004_tokens_train.dat"
        expected = line_tokens(content, source, "train")
        assert columnar_tokens(content, source, "train", piece_bytes=16).equals(expected), case


def test_duplicate_id_across_pieces_is_rejected_as_the_line_reader_does():
    content = b".I 1\n.W\na\n\n.I 2\n.W\nb\n\n.I 1\n.W\nc\n"
    expected = line_tokens(content, "lyrl2004_tokens_train.dat", "train")
    assert expected.column("reason").null_count == 2
    assert columnar_tokens(content, "lyrl2004_tokens_train.dat", "train", piece_bytes=4).equals(expected)


def ranged_tokens(content: bytes, source: str, range_bytes: int) -> pa.Table:
    """The records of a plain token file read in byte ranges of about ``range_bytes``, one call each, every range
    told the newlines before it (counted here in the bytes before its start).
    """
    file, batches = pa.BufferReader(content), []
    for start, end in byte_ranges(len(content), range_bytes):
        batches += read_range(file, len(content), source, start, end, content[:start].count(b"\n"))
    return pa.Table.from_batches(batches, schema=RECORD_SCHEMA)


# Records of every kind, each id once: a preamble; rejects (an id not a number, text before .W, no .W, an empty
# document, a second .W, a line not UTF-8); a non-ASCII token (the line reader reads it); blank lines, CRLF; records
# whose .I line is indented or has a tab (no cut before them: each stays in the range before).
MIXED_RECORDS = [b"junk before the first record\n", b".I 90\n.W\nbad id follows\n", b".I x9\n.W\na\n",
                 b".I 91\nb\n.W\na\n\n\n", b".I 92\na b c\n", b".I 93\n.W\n\n", b".I 94\n.W\na\n.W\nb\n",
                 b".I 95\r\n.W x\r\ny z\r\n\r\n", b".I 96\n.W\nab\xff\n", " .I 97\n.W\ncaf\u00e9\n".encode(),
                 b".I\t98\n.W\nc d\n", b".I 99\n.W\ne\n\n\n\n"]


@pytest.mark.parametrize("range_bytes", [1, 7, 40, 300, 5000, 10**9])
@pytest.mark.parametrize("ending", ["\n", "", "\n\n\n"], ids=["newline", "no-final-newline", "blank-lines"])
def test_byte_ranges_give_the_records_of_the_whole_file_with_its_line_numbers(range_bytes: int, ending: str):
    # Clean records between bad ones, so a range boundary falls inside clean and bad records alike; the file
    # read whole by the line reader is the independent answer.
    good = clean_token_file(110, seed=11)[len(b".I "):].split(b"\n.I ")  # ids 1000, 1003, ...
    content = MIXED_RECORDS[0] + b"".join(b".I " + b"\n.I ".join(good[10 * index:10 * index + 10]) + b"\n" + bad
                                          for index, bad in enumerate(MIXED_RECORDS[1:]))
    content = content.rstrip(b"\n") + ending.encode()
    source = "lyrl2004_tokens_test_pt2.dat"
    expected = line_tokens(content, source)
    reasons = expected.column("reason").to_pylist()
    assert sum(reason is not None for reason in reasons) == 7 and len(reasons) == 1 + 110 + 11  # the preamble
    assert min(len(record) + len(b"\n.I ") for record in content.split(b"\n.I ")) > 7  # 1 and 7 bytes cut each record
    assert ranged_tokens(content, source, range_bytes).equals(expected)


def test_an_id_repeated_in_two_ranges_is_accepted_by_each_and_left_to_ingest():
    content = b".I 1\n.W\na\n\n.I 2\n.W\nb\n\n.I 1\n.W\nc\n"
    whole = line_tokens(content, "lyrl2004_tokens_train.dat", "train")
    ranged = ranged_tokens(content, "lyrl2004_tokens_train.dat", 14)
    assert whole.column("reason").null_count == 2 and ranged.column("reason").null_count == 3
    assert ranged.column("doc_id").to_pylist() == whole.column("doc_id").to_pylist() == ["1", "2", "1"]
    assert ranged.column("line").to_pylist() == whole.column("line").to_pylist() == [1, 5, 9]


def test_corrupt_gzip_keeps_records_before_the_break():
    content = gzip.compress(clean_token_file(2000, seed=5))
    broken = content[: len(content) // 2]
    source = "lyrl2004_tokens_test_pt2.dat.gz"
    expected = line_tokens(broken, source)
    assert expected.column("reason").to_pylist()[-1].startswith("corrupt gzip stream")
    assert columnar_tokens(broken, source).equals(expected)


# --- qrels ------------------------------------------------------------------------------------------


def clean_qrels(n_lines: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return "".join(
        f"{rng.choice(['CCAT', 'C15', 'GSPO', 'E11'])} {rng.randint(1, 900000)} 1" + ("\r\n" if i % 7 == 0 else "\n")
        + ("\n" if i % 11 == 0 else "")
        for i in range(n_lines)
    ).encode("ascii")


@pytest.mark.parametrize("piece_bytes", [1 << 24, 50])
def test_clean_qrels_equal_line_reader(piece_bytes):
    content = gzip.compress(clean_qrels(500, seed=piece_bytes))
    expected = line_qrels(content, "rcv1-v2.topics.qrels.gz")
    assert expected.num_rows == 500
    assert columnar_qrels(content, "rcv1-v2.topics.qrels.gz", piece_bytes).equals(expected)


def test_qrels_fixture_equals_line_reader():
    content = lyrl2004_fixture("rcv1-v2.topics.qrels").read_bytes()
    assert columnar_qrels(content, "rcv1-v2.topics.qrels").equals(line_qrels(content, "rcv1-v2.topics.qrels"))


@pytest.mark.parametrize(
    "bad",
    [b"CCAT 12 1 extra\n", b"CCAT 12\n", b"CCAT 012 1\n", b"CCAT x 1\n", b"CCAT 12 0\n", b"CCAT 12 1 C15 13 1\n",
     "CCAT 12 1 \u00e9\n".encode(), b"CCAT 12 \xff\n",
     # ASCII, but the category is no label (sparktc.corpora.labels): only the line reader says why.
     b"C15\x01 12 1\n", b"C\x7f 12 1\n", b"\x00 12 1\n", b"CCAT\x1b 12 1\n"],
)
def test_bad_qrels_lines_go_to_line_reader(bad):
    assert read_clean_qrels_piece(bad, 1) is None
    content = clean_qrels(40, seed=1) + bad + clean_qrels(40, seed=2)
    assert columnar_qrels(content, "q", piece_bytes=30).equals(line_qrels(content, "q"))


@pytest.mark.parametrize("input_bytes", [1, 7, 64, 1 << 20])
def test_gunzip_equals_gzip_decompress_on_members_padding_and_damage(input_bytes, monkeypatch):
    monkeypatch.setattr(files, "GUNZIP_INPUT_BYTES", input_bytes)
    rng = random.Random(input_bytes)

    def outcome(decompress, data):
        try:
            return decompress(data)
        except (EOFError, zlib.error, gzip.BadGzipFile, OSError):
            return "damaged"

    damaged = 0
    for _ in range(150):
        members = [gzip.compress(bytes(rng.choice(b"ab .I\n") for _ in range(rng.randint(0, 300))))
                   for _ in range(rng.randint(0, 4))]
        data = b"".join(member + b"\x00" * rng.choice([0, 0, 3]) for member in members)
        if data and rng.random() < 0.3:
            data = data[:rng.randrange(len(data))]  # cut short
        elif data and rng.random() < 0.3:
            at = rng.randrange(len(data))
            data = data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1:]  # a flipped byte
        expected = outcome(gzip.decompress, data)
        damaged += expected == "damaged"
        assert outcome(files.gunzip, data) == expected
    assert damaged > 10  # the damaged cases were exercised


def test_gunzip_holds_its_output_once():
    # A parsing task holds the whole decompressed file; joining decompressed chunks held it twice at the join (a
    # 164 MB RCV1 token file: 315 MiB of peak growth, 160 MiB appended into one buffer).
    text = np.frombuffer(b"abcdefgh .I\n", np.uint8)[np.random.default_rng(5).integers(0, 12, 16 << 20)].tobytes()
    data = gzip.compress(text, compresslevel=1)
    tracemalloc.start()
    try:
        out = files.gunzip(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out == text
    assert peak < 1.3 * len(text), f"peak {peak / 2**20:.0f} MiB for {len(text) / 2**20:.0f} MiB of output"


def test_token_counts_count_separators_as_splitting_would():
    rng = random.Random(5)
    for _ in range(200):
        values = [None if rng.random() < 0.1 else " ".join("ab" * rng.randint(1, 3) for _ in range(rng.randint(0, 4)))
                  for _ in range(rng.randint(0, 30))]
        expected = (len(values), sum(len(v.split()) for v in values if v), sum(1 for v in values if not v))
        array = pa.array(values, pa.string())
        assert token_counts(array) == expected
        assert token_counts(pa.array(values, pa.large_string())) == expected
        assert token_counts(pa.chunked_array([array, array], pa.string())) == tuple(2 * n for n in expected)
        if values:
            assert token_counts(array.slice(1)) == (len(values) - 1, sum(len(v.split()) for v in values[1:] if v),
                                                    sum(1 for v in values[1:] if not v))


@pytest.mark.parametrize("ending", ["\n", "\r\n", ""])
def test_qrels_without_blank_lines_are_read_columnar_with_their_line_numbers(ending):
    """One line per triple and no blank line: each triple's line without a search (its newline count)."""
    rng = random.Random(5)
    lines = [f"{rng.choice(['CCAT', 'C15', 'GSPO'])} {rng.randint(1, 900000)} 1" for _ in range(300)]
    content = ("\n".join(lines[:-1]) + "\n" + lines[-1] + ending).encode("ascii")
    clean = read_clean_qrels_piece(content, 7)
    assert clean is not None
    assert clean[2].tolist() == list(range(7, 307))
    assert columnar_qrels(content, "q", piece_bytes=500).equals(line_qrels(content, "q"))


@pytest.mark.parametrize("content", [b"\nCCAT 12 1", b"\nCCAT 12 1\n", b"CCAT 12 1\n\n", b"CCAT 12 1\n \nC15 13 1",
                                     b"CCAT 12\n1 C15 13 1\n"])
def test_qrels_lines_around_blank_lines_keep_their_numbers(content):
    assert columnar_qrels(content, "q").equals(line_qrels(content, "q"))
