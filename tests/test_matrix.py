"""Executors read the training split straight from storage, at paths as Spark writes them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from sparktc.features.matrix import arrow_filesystem, load_training_set


def test_local_paths_and_file_uris_are_the_local_file_system():
    for path in ("/data/run/vectors", "file:/data/run/vectors", "file:///data/run/vectors"):
        filesystem, root = arrow_filesystem(path)
        assert isinstance(filesystem, pafs.LocalFileSystem) and root == "/data/run/vectors"


def test_the_training_set_loads_from_a_file_uri_sorted_by_doc_id(tmp_path):
    table = pa.table({
        "doc_id": ["b", "a"], "labels": [["x"], ["x", "y"]],
        "indices": pa.array([[0, 2], [1]], pa.list_(pa.int32())), "values": pa.array([[0.6, 0.8], [1.0]], pa.list_(pa.float32())),
    })
    (tmp_path / "split=train").mkdir()
    pq.write_table(table, tmp_path / "split=train" / "part-0.parquet")
    training = load_training_set(f"file:{tmp_path}/split=train", 3)
    np.testing.assert_allclose(training.X.toarray(), [[0, 1, 0], [0.6, 0, 0.8]], rtol=1e-6)
    assert training.positives("y").tolist() == [True, False]
