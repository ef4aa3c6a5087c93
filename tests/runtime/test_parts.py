"""Work done part by part (sparktc.runtime.parts): the files a task writes, how a task reads one back, what a
failed attempt leaves, and how a task's error reaches the driver.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark import TaskContext

from sparktc.experiment.corpus_files import IngestError
from sparktc.runtime.parts import (
    PartWriter,
    map_parts,
    parquet_files,
    read_batches,
    remove_unfinished,
    rows_and_list_lengths,
    write_parts,
)

SCHEMA = pa.schema([("n", pa.int64())])


def batches(total: int, size: int) -> list[pa.RecordBatch]:
    return [pa.record_batch([pa.array(range(start, min(start + size, total)))], schema=SCHEMA)
            for start in range(0, total, size)]


def test_a_file_is_read_back_in_batches_of_the_columns_asked(tmp_path):
    table = pa.table({"n": range(10), "m": [str(i) for i in range(10)]})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=4)
    for path in (str(tmp_path / "t.parquet"), f"file:{tmp_path}/t.parquet"):
        read = list(read_batches(path, ["m"], batch_size=3))
        assert [len(batch) for batch in read] == [3, 3, 3, 1]
        assert pa.Table.from_batches(read) == table.select(["m"])
    assert sum(len(batch) for batch in read_batches(str(tmp_path / "t.parquet"), ["n", "m"])) == 10


def test_a_part_is_cut_into_files_and_row_groups_of_the_sizes_asked(tmp_path):
    written = write_parts(batches(25, 4), SCHEMA, str(tmp_path / "t"), 7, rows_per_file=10, row_group_rows=5)
    files = parquet_files(str(tmp_path / "t"))
    assert written == 25
    assert [os.path.basename(f) for f in files] == ["part-00007-000.parquet", "part-00007-001.parquet",
                                                     "part-00007-002.parquet"]
    assert [(pq.ParquetFile(f).metadata.num_rows, pq.ParquetFile(f).metadata.num_row_groups) for f in files] == \
        [(10, 2), (10, 2), (5, 1)]
    assert pq.read_table(str(tmp_path / "t")).column("n").to_pylist() == list(range(25))


def test_an_empty_part_is_one_file_with_the_schema_only_when_asked(tmp_path):
    assert write_parts([], SCHEMA, str(tmp_path / "empty"), 0) == 0
    assert pq.read_table(str(tmp_path / "empty")).schema == SCHEMA
    with PartWriter(SCHEMA, str(tmp_path / "none"), 0) as writer:
        writer.write(pa.record_batch([pa.array([], pa.int64())], schema=SCHEMA))
    assert writer.rows == 0 and not (tmp_path / "none").exists()


def test_unfinished_parts_are_hidden_from_readers_and_removed(tmp_path):
    write_parts(batches(3, 3), SCHEMA, str(tmp_path / "t"), 0)
    unfinished = tmp_path / "t" / f".part-00001-000.{'0' * 32}.tmp"
    unfinished.write_bytes(b"half a file")
    assert [os.path.basename(f) for f in parquet_files(str(tmp_path / "t"))] == ["part-00000-000.parquet"]
    remove_unfinished(str(tmp_path / "t"))
    assert sorted(os.listdir(tmp_path / "t")) == ["part-00000-000.parquet"]


def test_a_retried_task_leaves_one_copy_of_its_part_and_results_keep_the_units_order(spark, tmp_path):
    output = str(tmp_path / "t")
    schema = SCHEMA  # the closure travels to the workers, which cannot import this test module

    def work(index: int, unit: int) -> int:
        context = TaskContext.get()
        writer = PartWriter(schema, output, index, rows_per_file=2, row_group_rows=1)
        for n in range(unit):
            writer.write(pa.record_batch([pa.array([n])], schema=schema))
            if index == 1 and context.attemptNumber() == 0 and writer.rows == 3:
                raise RuntimeError("the first attempt dies half-way through its part")
        writer.close()
        return unit * 10

    assert map_parts(spark, [2, 5, 1], work, [output]) == [20, 50, 10]
    assert sorted(os.listdir(output)) == ["part-00000-000.parquet", "part-00001-000.parquet",
                                          "part-00001-001.parquet", "part-00001-002.parquet",
                                          "part-00002-000.parquet"]
    assert sorted(pq.read_table(output).column("n").to_pylist()) == [0, 0, 0, 1, 1, 2, 3, 4]


def test_a_task_error_of_the_users_input_reaches_the_driver_with_its_message(spark):
    def work(index: int, unit: str) -> None:
        raise IngestError(f"cannot read {unit}: permission denied; give the user read access")

    with pytest.raises(IngestError, match=r"^cannot read /x/a\.dat: permission denied; give the user read access$"):
        map_parts(spark, ["/x/a.dat"], work, errors=(IngestError,))


def test_a_file_is_read_only_in_the_row_groups_whose_statistics_admit_the_value(tmp_path):
    table = pa.table({"split": ["test"] * 4 + ["train", "test"] + ["test"] * 2, "n": range(8)})
    path = str(tmp_path / "t.parquet")
    pq.write_table(table, path, row_group_size=2)  # groups: test test | test test | train test | test test
    read = pa.Table.from_batches(list(read_batches(path, ["split", "n"], where=("split", "train"))))
    assert read["n"].to_pylist() == [4, 5]
    assert list(read_batches(path, ["n"], where=("split", "dev"))) == []
    # Without statistics, or a value the statistics cannot rule out: every group is read, and the caller filters.
    pq.write_table(table, path, row_group_size=2, write_statistics=False)
    assert sum(len(b) for b in read_batches(path, ["n"], where=("split", "dev"))) == 8
    pq.write_table(pa.table({"split": pa.nulls(3, pa.string()), "n": range(3)}), path)  # no min/max either
    assert sum(len(b) for b in read_batches(path, ["n"], where=("split", "train"))) == 3


def test_floating_point_columns_are_written_plain_and_the_others_with_a_dictionary_and_statistics(tmp_path):
    # The footer says what was written: a float leaf (a list's, a struct's, a map's value, a scalar) has no
    # dictionary page and no statistics; every other leaf has both, and the table reads back equal.
    schema = pa.schema([("doc_id", pa.string()), ("indices", pa.list_(pa.int32())), ("values", pa.list_(pa.float32())),
                        ("score", pa.float64()), ("pair", pa.struct([("name", pa.string()), ("weight", pa.float64())])),
                        ("named", pa.map_(pa.string(), pa.float64()))])
    table = pa.table({"doc_id": ["a", "b", "a"], "indices": [[1, 2], [], [2]], "values": [[0.5, 0.25], [], [1.0]],
                      "score": [1.0, 2.0, 1.0], "pair": [{"name": "x", "weight": 0.5}] * 3,
                      "named": [[("k", 1.0)], [], [("k", 2.0)]]}, schema=schema)
    write_parts(table.to_batches(), schema, str(tmp_path / "t"), 0)
    [file] = parquet_files(str(tmp_path / "t"))
    group = pq.read_metadata(file).row_group(0)
    written = {group.column(i).path_in_schema: ("RLE_DICTIONARY" in group.column(i).encodings,
                                                group.column(i).is_stats_set) for i in range(group.num_columns)}
    plain = {"values.list.element", "score", "pair.weight", "named.key_value.value"}
    assert written == {path: (path not in plain, path not in plain) for path in written}
    assert set(written) == plain | {"doc_id", "indices.list.element", "pair.name", "named.key_value.key"}
    assert pq.read_table(file).equals(table)


def test_rows_and_list_lengths_come_from_the_footers_as_the_lists_count(tmp_path):
    # Empty and null lists, several row groups and files, and a file without statistics (no null counts).
    rng = np.random.default_rng(3)
    lists = [None if rng.random() < 0.1 else rng.integers(0, 50, rng.integers(0, 6)).tolist() for _ in range(3000)]
    table = pa.table({"doc_id": [str(i) for i in range(len(lists))],
                      "indices": pa.array(lists, pa.list_(pa.int32()))})
    (tmp_path / "t").mkdir()
    pq.write_table(table.slice(0, 1000), tmp_path / "t" / "part-0.parquet", row_group_size=128)
    pq.write_table(table.slice(1000), tmp_path / "t" / "part-1.parquet", row_group_size=700)
    expected = (len(lists), sum(len(values) for values in lists if values))
    assert rows_and_list_lengths(str(tmp_path / "t"), "indices") == expected
    assert rows_and_list_lengths(str(tmp_path / "t"), "doc_id") is None  # not a list
    pq.write_table(table, tmp_path / "t" / "part-2.parquet", write_statistics=False)
    assert rows_and_list_lengths(str(tmp_path / "t"), "indices") is None


def test_a_part_writer_records_each_file_s_digest_which_follows_renames_and_links(tmp_path) -> None:
    """What the driver's manifests take from the tasks instead of reading the tables back (sparktc.runtime.written):
    the SHA-256 of each file a writer finished, true to its bytes, under its path after a publish (a rename) or a hard
    link; none for a file changed since.
    """
    import hashlib

    from sparktc.runtime import storage, written
    from sparktc.runtime.parts import PartWriter

    written.drained()
    schema = pa.schema([("x", pa.int64())])
    with PartWriter(schema, str(tmp_path / "staging" / "table"), 3, rows_per_file=4, row_group_rows=2) as writer:
        writer.write(pa.record_batch([pa.array(range(10))], schema=schema))
    files = sorted((tmp_path / "staging" / "table").iterdir())
    assert [path.name for path in files] == ["part-00003-000.parquet", "part-00003-001.parquet",
                                             "part-00003-002.parquet"]
    storage.rename(None, str(tmp_path / "staging" / "table"), str(tmp_path / "table"))
    storage.link_or_copy(None, str(tmp_path / "table"), str(tmp_path / "linked"))
    for folder in ("table", "linked"):
        for name in [path.name for path in files]:
            path = tmp_path / folder / name
            found = os.stat(path)
            assert written.digest(str(path), found.st_size, found.st_mtime_ns // 1_000_000) == hashlib.sha256(
                path.read_bytes()).hexdigest()
    assert written.digest(str(files[0]), 1, 1) is None  # the staged path is gone
    path = tmp_path / "table" / files[0].name
    assert written.digest(str(path), os.stat(path).st_size + 1, os.stat(path).st_mtime_ns // 1_000_000) is None
    shipped = written.drained()  # what a task hands the driver with its result
    assert len(shipped) == 6 and written.digest(str(path), os.stat(path).st_size,
                                                os.stat(path).st_mtime_ns // 1_000_000) is None
    written.merge(shipped)
    assert written.digest(str(path), os.stat(path).st_size, os.stat(path).st_mtime_ns // 1_000_000) is not None
    written.drained()
