"""Labels attached while parsing: sorted, distinct codes from the accepted qrels lines only."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from sparktc.corpora.records import RECORD_SCHEMA, Document, Reject, record_batch
from sparktc.stages.ingest import LabelIndex


def write_qrels(directory, rows):
    table = pa.table(
        {name: [row[i] for row in rows] for i, name in enumerate(["doc_id", "category", "source", "line", "reason"])},
        schema=pa.schema([("doc_id", pa.string()), ("category", pa.string()), ("source", pa.string()),
                          ("line", pa.int32()), ("reason", pa.string())]),
    )
    directory.mkdir()
    pq.write_table(table, directory / "part-0.parquet")
    return str(directory)


def test_labels_are_sorted_distinct_and_only_from_accepted_lines(tmp_path):
    path = write_qrels(tmp_path / "qrels", [
        ("7", "GCAT", "q", 1, None), ("7", "C15", "q", 2, None), ("7", "GCAT", "q", 3, None),
        ("8", "XXX", "q", 4, "unknown category XXX"), ("8", "E11", "q", 5, None), ("9", "ZZZ", "q", 6, "bad"),
    ])
    batch = record_batch([
        Document("7", "train", (), None, ("a",), "t", 1), Document("9", "test", (), None, ("b",), "t", 4),
        Document("8", "test", (), None, ("c",), "t", 7), Reject("t", 9, "7", "empty document"),
    ])
    attached = LabelIndex.load(path).attach(batch)
    assert attached.schema == RECORD_SCHEMA
    assert attached.column("labels").to_pylist() == [["C15", "GCAT"], [], ["E11"], None]
    assert attached.column("tokens").to_pylist() == ["a", "b", "c", None]


def test_no_accepted_assignments_gives_empty_labels(tmp_path):
    path = write_qrels(tmp_path / "qrels", [("7", "XXX", "q", 1, "unknown category XXX")])
    batch = record_batch([Document("7", "train", (), None, ("a",), "t", 1)])
    assert LabelIndex.load(path).attach(batch).column("labels").to_pylist() == [[]]
