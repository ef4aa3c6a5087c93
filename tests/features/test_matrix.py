"""Executors read the training split straight from storage, at paths as Spark writes them: the one rule
for what is a URI (sparktc.filesystem), pyarrow's view of each path, and the per-worker cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from sparktc import filesystem
from sparktc.features.matrix import load_training_set
from sparktc.filesystem import KeptOne, absolute, arrow_filesystem, is_uri, local_path, per_worker


@pytest.mark.parametrize(("path", "uri", "local"), [
    ("file:/data/x", True, "/data/x"),  # as Hadoop writes local paths
    ("file:///data/x", True, "/data/x"),
    ("hdfs://namenode:8020/data/x", True, None),
    ("s3a://bucket/data/x", True, None),
    ("gs://bucket/x", True, None),
    ("/data/x", False, "/data/x"),
    ("runs/x", False, "runs/x"),
    ("runs/a:b", False, "runs/a:b"),  # a colon after a slash is part of a name
    ("C:\\data\\x", False, "C:\\data\\x"),  # a drive letter is one character: no scheme
    ("c:/data/x", False, "c:/data/x"),
])
def test_one_rule_says_what_is_a_uri_and_which_paths_are_local(path, uri, local):
    assert (is_uri(path), local_path(path)) == (uri, local)
    assert absolute(path) == (path if uri else os.path.abspath(path))


def test_local_paths_and_file_uris_are_the_local_file_system():
    for path in ("/data/run/vectors", "file:/data/run/vectors", "file:///data/run/vectors"):
        system, root = arrow_filesystem(path)
        assert isinstance(system, pafs.LocalFileSystem) and root == "/data/run/vectors"


def test_the_training_set_loads_from_a_file_uri_sorted_by_doc_id(tmp_path):
    table = pa.table({
        "doc_id": ["b", "a"], "labels": [["x"], ["x", "y"]],
        "indices": pa.array([[0, 2], [1]], pa.list_(pa.int32())),
        "values": pa.array([[0.6, 0.8], [1.0]], pa.list_(pa.float32())),
    })
    (tmp_path / "split=train").mkdir()
    pq.write_table(table, tmp_path / "split=train" / "part-0.parquet")
    training = load_training_set(f"file:{tmp_path}/split=train", 3)
    np.testing.assert_allclose(training.X.toarray(), [[0, 1, 0], [0.6, 0, 0.8]], rtol=1e-6)
    assert training.positives("y").tolist() == [True, False]


def test_a_file_uri_is_read_where_a_local_path_is(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    for path in (str(tmp_path / "f.txt"), f"file:{tmp_path}/f.txt", f"file://{tmp_path}/f.txt"):
        system, file = arrow_filesystem(path)
        with system.open_input_stream(file) as source:
            assert source.read() == b"x"


def test_hadoop_s3a_uris_are_pyarrows_s3(monkeypatch):
    opened = []
    from_uri = SimpleNamespace(from_uri=lambda uri: opened.append(uri) or (None, uri))
    monkeypatch.setattr(filesystem, "pafs", SimpleNamespace(FileSystem=from_uri))  # no S3 or HDFS here
    assert arrow_filesystem("s3a://bucket/run/vectors")[1] == "s3://bucket/run/vectors"
    assert arrow_filesystem("hdfs://namenode/run")[1] == "hdfs://namenode/run"
    assert opened == ["s3://bucket/run/vectors", "hdfs://namenode/run"]


def test_a_per_worker_load_is_kept_until_its_files_change(tmp_path):
    calls = []

    @per_worker
    def load(path: str, scale: int) -> int:
        calls.append((path, scale))
        return sum(len(p.read_bytes()) for p in Path(path).iterdir()) * scale

    (tmp_path / "a").write_bytes(b"12")
    assert load(str(tmp_path), 10) == load(str(tmp_path), 10) == 20 and len(calls) == 1
    assert load(str(tmp_path), 3) == 6 and len(calls) == 2  # other arguments: loaded again
    (tmp_path / "b").write_bytes(b"345")
    assert load(str(tmp_path), 3) == 15 and len(calls) == 3  # a file added: loaded again
    assert load.__name__ == "load"


def test_kept_one_keeps_the_last_value_while_its_key_is_the_same_objects_or_equal_values():
    kept, made = KeptOne(), []

    def make(value):
        return lambda: made.append(value) or value

    matrix, same_contents = np.ones(3), np.ones(3)
    assert kept.get((matrix, b"cols", 1.0), make("a")) == kept.get((matrix, b"cols", 1.0), make("b")) == "a"
    assert kept.get((same_contents, b"cols", 1.0), make("c")) == "c"  # another object: made again
    assert kept.get((same_contents, b"cols", 1), make("d")) == "d"  # 1 is not 1.0: made again
    assert kept.get((same_contents, b"other", 1), make("e")) == "e" and made == ["a", "c", "d", "e"]


def test_a_training_split_without_files_is_named(tmp_path):
    (tmp_path / "split=train").mkdir()
    with pytest.raises(FileNotFoundError, match="no training vectors under .*; run the weight stage first"):
        load_training_set(str(tmp_path / "split=train"), 3)
