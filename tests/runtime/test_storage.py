"""Listings of local paths (sparktc/runtime/storage.py): Python lists them as Hadoop's local file system does, which
the manifests' damage checks compare with what was written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sparktc.runtime import classic, storage


def test_a_local_listing_is_hadoops(spark, tmp_path: Path) -> None:
    output = tmp_path / "run"
    spark.range(50).repartition(3).write.parquet(str(output / "table"))  # part files, _SUCCESS and their .crc files
    (output / "nested" / "deeper").mkdir(parents=True)
    (output / "nested" / "deeper" / "notes.txt").write_text("x" * 123)
    (output / ".sparktc").write_text("{}")  # a dot file that is no checksum file
    (output / "empty").mkdir()
    os.symlink(output / "nested", output / "linked")  # a directory reached twice: listed twice
    assert any(name.endswith(".crc") for name in os.listdir(output / "table"))
    for path in (output, output / "table", output / "nested" / "deeper" / "notes.txt", tmp_path / "none"):
        assert storage.list_files(spark, str(path)) == classic.Hadoop(spark).list_files(str(path)), path
    listed = storage.list_files(spark, f"file://{output}")
    assert listed == classic.Hadoop(spark).list_files(f"file://{output}")
    names = [name for name, _, _ in listed]
    assert ".sparktc" in names and "nested/deeper/notes.txt" in names and "linked/deeper/notes.txt" in names
    assert not any(name.endswith(".crc") for name in names)
    # A loop: Hadoop's listing goes round it until the system refuses the path (41 times for a one-file loop, as
    # measured); this one does not enter it.
    os.symlink(output, output / "nested" / "up")
    assert [name for name, _, _ in storage.list_files(spark, str(output))] == names
    assert storage.list_files(spark, str(output / "nested" / "deeper" / "notes.txt"))[0][:2] == ("", 123)


def test_a_folder_that_cannot_be_read_is_an_error_not_a_gap(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "corpus" / "locked").mkdir(parents=True)
    (tmp_path / "corpus" / "locked" / "part.txt").write_text("x")
    scandir = os.scandir

    def refusing(path):  # as for a folder without read permission (the tests run as root, who reads any)
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(PermissionError, match="locked"):
        storage._list_local(str(tmp_path / "corpus"))
