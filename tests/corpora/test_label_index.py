"""Labels attached while parsing: sorted, distinct codes from the accepted qrels lines only."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from sparktc.corpora.decimals import canonical_decimal_mask, canonical_decimals
from sparktc.corpora.label_index import (
    DocRows,
    LabelIndex,
    QrelsFiles,
    by_document,
    id_hashes,
    short_decimal_mask,
    short_decimals,
)
from sparktc.corpora.records import RECORD_SCHEMA, Document, Reject, record_batch
from sparktc.corpora.tallies import distinct_ids

SCHEMA = pa.schema([("doc_id", pa.string()), ("category", pa.string()), ("reason", pa.string())])


def qrels_lines(rows):
    return pa.table({name: [row[i] for row in rows] for i, name in enumerate(SCHEMA.names)}, schema=SCHEMA)


def test_labels_are_sorted_distinct_and_only_from_accepted_lines(tmp_path):
    lines = qrels_lines([
        ("7", "GCAT", None), ("7", "C15", None), ("7", "GCAT", None),
        ("8", "XXX", "unknown category XXX"), ("8", "E11", None), ("9", "ZZZ", "bad"),
    ])
    batch = record_batch([
        Document("7", "train", (), None, ("a",), "t", 1), Document("9", "test", (), None, ("b",), "t", 4),
        Document("8", "test", (), None, ("c",), "t", 7), Reject("t", 9, "7", "empty document"),
    ])
    attached = LabelIndex.of(lines).attach(batch)
    assert attached.schema == RECORD_SCHEMA
    assert attached.column("labels").to_pylist() == [["C15", "GCAT"], [], ["E11"], None]
    assert attached.column("tokens").to_pylist() == ["a", "b", "c", None]


@pytest.mark.parametrize("rows", [
    [("9", "C15"), ("9", "GCAT"), ("10", "C15"), ("10", "C15"), ("11", "E11")],  # as LYRL2004's qrels come
    [("10", "GCAT"), ("9", "GCAT"), ("11", "E11"), ("9", "C15"), ("10", "C15")],
    [("9", "GCAT"), ("9", "C15"), ("10", "C15")],  # the documents in order, one's categories not
    [("b", "GCAT"), ("10", "C15"), ("9", "C15"), ("b", "C15")],  # an id that is no decimal: as strings
    [("010", "C15"), ("9", "C15")],  # nor a canonical one
], ids=["in-order", "shuffled", "categories-out-of-order", "not-decimal", "leading-zero"])
def test_qrels_lines_are_ordered_by_document_then_category(rows):
    lines = pa.table({"doc_id": [r[0] for r in rows], "category": [r[1] for r in rows]})
    decimal = all(doc_id.isdigit() and (doc_id == "0" or doc_id[0] != "0") for doc_id, _ in rows)
    key = (lambda row: (int(row[0]), row[1])) if decimal else None
    doc_ids, categories = by_document(lines)
    assert list(zip(doc_ids.to_pylist(), categories.to_pylist())) == sorted(rows, key=key)


@pytest.mark.parametrize("chunks", [
    [["9", "9", "10"], ["10", "11"]],  # ascending, as LYRL2004's qrels come: counted between neighbours
    [["10", "9", "10"], ["9"]],
    [["b", "a"], ["b", "10"]],
    [["010", "10"]],  # the same value, not the same id
    [[]],
])
def test_distinct_ids_are_counted_exactly(chunks):
    ids = pa.chunked_array([pa.array(chunk, pa.string()) for chunk in chunks])
    assert distinct_ids(ids) == len({doc_id for chunk in chunks for doc_id in chunk})


def test_no_accepted_assignments_gives_empty_labels(tmp_path):
    lines = qrels_lines([("7", "XXX", "unknown category XXX")])
    batch = record_batch([Document("7", "train", (), None, ("a",), "t", 1)])
    assert LabelIndex.of(lines).attach(batch).column("labels").to_pylist() == [[]]


def test_a_worker_reads_the_qrels_files_as_their_own_task_checks_them(tmp_path):
    (tmp_path / "a.qrels").write_text("GCAT 7 1\nC15 7 1\nXXX 8 1\nE11 8 1\n")
    (tmp_path / "b.qrels.gz").write_bytes(gzip.compress(b"C15 9 1\nbad line\n"))
    qrels = QrelsFiles((str(tmp_path / "a.qrels"), str(tmp_path / "b.qrels.gz")), ("C15", "E11", "GCAT"), "tree")
    staged = pa.Table.from_batches([batch for path in qrels.paths
                                    for batch in qrels.read(open(path, "rb").read(), path)])
    assert staged.column("reason").to_pylist()[2] == "unknown category XXX (not in tree)"
    assert staged.column("reason").null_count == 4  # and the bad line is rejected with its reason
    batch = record_batch([Document(doc_id, "test", (), None, ("a",), "t", 1) for doc_id in ("7", "8", "9", "10")])
    index = LabelIndex.load(qrels, lambda path: Path(path).read_bytes())
    assert index.attach(batch).column("labels").to_pylist() == [["C15", "GCAT"], ["E11"], ["C15"], []]
    assert index.attach(batch).equals(LabelIndex.of(staged.select(["doc_id", "category", "reason"])).attach(batch))


# Ids a batch may carry: LYRL2004's (canonical decimals), others a reader rejects, and ones near int64's edge.
QUERIES = ["7", "007", "70", "-1", "", "x7", "0", "10", "2", "999999999999999999", "1000000000000000000",
           "9223372036854775807", "9223372036854775808", "123456789012345678901", None]


@pytest.mark.parametrize("ids", [
    ["10", "2", "2286", "7", "999999999999999999", "0"],  # every id a short canonical decimal: found by value
    ["10", "2", "123456789012345678901", "7"],  # one that does not fit an int64: found by a dict
    ["7", "007", "x7"],  # not canonical (a reader rejects them; the index must still find them exactly)
    [],
])
def test_doc_rows_find_each_id_exactly(ids):
    rows = DocRows.of(pa.array(ids, pa.string()))
    assert (rows.row_of is None) == (ids == ["10", "2", "2286", "7", "999999999999999999", "0"])
    expected = [{doc_id: row for row, doc_id in enumerate(ids)}.get(query, -1) for query in QUERIES + ids]
    assert rows.find(pa.array(QUERIES + ids, pa.string())).tolist() == expected


SHORT_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,17})")


@pytest.mark.parametrize("ids", [
    ["1", "2286", "810596"], ["0"], ["007"], ["00"], ["-5"], ["+5"], ["12a"], [" 1"], ["1 "], [""], ["1.0"],
    ["9" * 18], ["9" * 19], ["１２"], ["2286", "02286"], ["/", ":"], [],
])
def test_short_decimals_are_those_the_pattern_matches(ids):
    expected = all(SHORT_DECIMAL.fullmatch(doc_id) for doc_id in ids)
    for strings in (pa.array(ids, pa.string()), pa.array(ids, pa.large_string()),
                    pa.chunked_array([ids[:1], ids[1:]], pa.string()),
                    pa.array(["x", *ids, "y"], pa.string())[1:1 + len(ids)]):  # a slice: an offset into the buffers
        assert short_decimals(strings) == expected, (ids, strings.type)
        assert short_decimal_mask(strings).tolist() == [bool(SHORT_DECIMAL.fullmatch(doc_id)) for doc_id in ids]


def test_a_null_is_no_short_decimal():
    assert short_decimal_mask(pa.array(["12", None, "", "3"])).tolist() == [True, False, False, True]


def test_an_ids_hash_is_its_own_whatever_the_ids_beside_it():
    """Each id's hash depends on it alone (a digest summed over tasks must not depend on how the ids were cut),
    decimal ids or not; distinct ids, distinct hashes.
    """
    ids = ["2286", "train.svm:12", "0", "810596", "0810596", "d1", "999999999999999999", "1000000000000000000"]
    together = id_hashes(pa.array(ids))
    assert together.dtype == np.uint64
    assert together.tolist() == [int(id_hashes(pa.array([doc_id]))[0]) for doc_id in ids]
    assert together.tolist() == id_hashes(pa.chunked_array([ids[:3], ids[3:]])).tolist()
    assert len(set(together.tolist())) == len(ids)
    many = id_hashes(pa.array([str(value) for value in range(200_000)]))
    assert len(np.unique(many)) == 200_000


@pytest.mark.parametrize("ids", [["1", "12345678901234567890123"], ["0", "10"], ["01"], ["1", "x"], []])
def test_canonical_decimals_of_any_length_are_those_the_pattern_matches(ids):
    expected = all(re.fullmatch(r"0|[1-9][0-9]*", doc_id) for doc_id in ids)
    assert canonical_decimals(pa.array(ids, pa.string())) == expected
    assert canonical_decimal_mask(pa.array(ids, pa.string())).tolist() == [
        bool(re.fullmatch(r"0|[1-9][0-9]*", doc_id)) for doc_id in ids]
