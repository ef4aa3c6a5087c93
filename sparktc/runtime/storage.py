"""Small files and listings on the store the executors read and write, from the driver, on a session of either kind.

Corpus data never passes through here: these helpers move metadata (listings, the hierarchy and stop-list files,
manifests, ``metrics.json``, locks) between the driver and that store. Each path goes to one of three backends:

- a local path or ``file:`` URI: Python's own file operations, on a classic and a Connect session alike (Hadoop's
  local file system did the same through py4j, six round trips a file);
- any other URI on a classic session: the Hadoop file system that holds it, with the cluster's Hadoop settings and
  credentials (:class:`sparktc.runtime.classic.Hadoop`);
- any other URI on a Spark Connect session, which has no JVM in reach: pyarrow's file system for it
  (:func:`sparktc.filesystem.arrow_filesystem`: ``s3a://`` as ``s3://``, ``hdfs://`` through libhdfs, ``gs://``,
  ``abfs://``), with the credentials of the client's environment.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import shutil
import stat
import zlib
from typing import Any, Protocol

import pyarrow.fs as pafs
from pyspark.sql import SparkSession

from sparktc.errors import InputError
from sparktc.filesystem import arrow_filesystem, local_path
from sparktc.runtime import classic, written

#: Decompressors by file extension, as Hadoop's codec factory picks them for a small file read whole.
_CODECS = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".deflate": zlib.decompress}


class Backend(Protocol):
    """The file operations of one kind of store (see the module docstring)."""

    def kind(self, path: str) -> str | None:
        """"file", "directory", or None."""
    def qualified(self, path: str) -> str:
        """The path as its file system names it."""
    def entries(self, path: str) -> dict[str, bool]:
        """Names in a directory, each with whether it is a file."""
    def read_bytes(self, path: str) -> bytes:
        """A small file's bytes, decompressed by its extension's codec."""
    def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a small file."""
    def create_new(self, path: str, data: bytes) -> bool:
        """Create a file only if nothing is there; False when something is."""
    def delete(self, path: str) -> None:
        """Remove a file or tree, if there."""
    def rename(self, source: str, target: str) -> None:
        """Move to a target that must not exist."""
    def list_files(self, path: str) -> list[tuple[str, int, int]] | None:
        """(relative path, size, mtime ms) of every file, or None."""
    def copy(self, source: str, target: str) -> None:
        """Copy byte for byte, replacing the target."""
    def modified(self, path: str) -> int:
        """Modification time in ms."""
    def touch(self, path: str) -> None:
        """Set the modification time to now."""
    def sha256(self, path: str) -> str:
        """The SHA-256 of the file's bytes."""


class _Local:
    """A local disk through Python. Paths may be ``file:`` URIs; names given back keep Hadoop's ``file:/...`` form."""

    def kind(self, path: str) -> str | None:
        local = _local(path)
        return "directory" if os.path.isdir(local) else "file" if os.path.exists(local) else None

    def qualified(self, path: str) -> str:
        return "file:" + os.path.abspath(_local(path)).rstrip("/")

    def entries(self, path: str) -> dict[str, bool]:
        local = _local(path)
        return {name: os.path.isfile(os.path.join(local, name)) for name in sorted(os.listdir(local))
                if not _checksum_file(name)}

    def read_bytes(self, path: str) -> bytes:
        local = _local(path)
        with open(local, "rb") as handle:
            data = handle.read()
        decompress = _CODECS.get(os.path.splitext(local)[1])
        try:
            return data if decompress is None else decompress(data)
        except (EOFError, ValueError, zlib.error) as error:  # cut short, or not that codec's data
            raise OSError(f"{path}: cannot be decompressed ({error})") from None

    def write_bytes(self, path: str, data: bytes) -> None:
        local = _local(path)
        os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
        with open(local, "wb") as handle:
            handle.write(data)

    def create_new(self, path: str, data: bytes) -> bool:
        local = _local(path)
        os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
        try:
            with open(local, "xb") as handle:
                handle.write(data)
        except FileExistsError:
            return False
        return True

    def delete(self, path: str) -> None:
        local = _local(path)
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        elif os.path.lexists(local):
            os.remove(local)

    def rename(self, source: str, target: str) -> None:
        local_target = _local(target)
        if os.path.lexists(local_target):
            raise OSError(f"cannot move {source} to {target}: something is already there")
        os.makedirs(os.path.dirname(local_target) or ".", exist_ok=True)
        os.rename(_local(source), local_target)

    def list_files(self, path: str) -> list[tuple[str, int, int]] | None:
        return _list_local(_local(path))

    def copy(self, source: str, target: str) -> None:
        self.delete(target)
        local_source, local_target = _local(source), _local(target)
        if os.path.isdir(local_source):
            shutil.copytree(local_source, local_target, ignore=lambda folder, names: [
                name for name in names if _checksum_file(name)])
        else:
            os.makedirs(os.path.dirname(local_target) or ".", exist_ok=True)
            shutil.copyfile(local_source, local_target)

    def modified(self, path: str) -> int:
        return os.stat(_local(path)).st_mtime_ns // 1_000_000

    def touch(self, path: str) -> None:
        os.utime(_local(path))

    def sha256(self, path: str) -> str:
        digest = hashlib.sha256()
        with open(_local(path), "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def _local(path: str) -> str:
    local = local_path(path)
    assert local is not None, path  # noqa: S101 (the backend is chosen by local_path)
    return local


class _Arrow:
    """Any store pyarrow reaches (S3, HDFS, GCS, Azure), for a Spark Connect client."""

    def kind(self, path: str) -> str | None:
        filesystem, root = arrow_filesystem(path)
        found = filesystem.get_file_info(root).type
        return {pafs.FileType.File: "file", pafs.FileType.Directory: "directory"}.get(found)

    def qualified(self, path: str) -> str:
        return path.rstrip("/")

    def entries(self, path: str) -> dict[str, bool]:
        filesystem, root = arrow_filesystem(path)
        return {info.base_name: info.type == pafs.FileType.File
                for info in filesystem.get_file_info(pafs.FileSelector(root))}

    def read_bytes(self, path: str) -> bytes:
        filesystem, root = arrow_filesystem(path)
        with filesystem.open_input_stream(root, compression="detect") as stream:
            return stream.read()

    def write_bytes(self, path: str, data: bytes) -> None:
        filesystem, root = arrow_filesystem(path)
        with filesystem.open_output_stream(root) as stream:
            stream.write(data)

    def create_new(self, path: str, data: bytes) -> bool:
        # Object stores have no exclusive create (Hadoop's s3a has none either): checked, then written.
        if self.kind(path) is not None:
            return False
        self.write_bytes(path, data)
        return True

    def delete(self, path: str) -> None:
        filesystem, root = arrow_filesystem(path)
        found = filesystem.get_file_info(root).type
        if found == pafs.FileType.Directory:
            filesystem.delete_dir(root)
        elif found == pafs.FileType.File:
            filesystem.delete_file(root)

    def rename(self, source: str, target: str) -> None:
        if self.kind(target) is not None:
            raise OSError(f"cannot move {source} to {target}: something is already there")
        filesystem, root = arrow_filesystem(source)
        filesystem.move(root, arrow_filesystem(target)[1])

    def list_files(self, path: str) -> list[tuple[str, int, int]] | None:
        filesystem, root = arrow_filesystem(path)
        info = filesystem.get_file_info(root)
        if info.type == pafs.FileType.NotFound:
            return None
        if info.type == pafs.FileType.File:
            return [("", info.size, info.mtime_ns // 1_000_000)]
        return sorted((found.path[len(root.rstrip("/")):].lstrip("/"), found.size, found.mtime_ns // 1_000_000)
                      for found in filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
                      if found.type == pafs.FileType.File)

    def copy(self, source: str, target: str) -> None:
        self.delete(target)
        filesystem, root = arrow_filesystem(source)
        pafs.copy_files(root, arrow_filesystem(target)[1], source_filesystem=filesystem,
                        destination_filesystem=arrow_filesystem(target)[0])

    def modified(self, path: str) -> int:
        filesystem, root = arrow_filesystem(path)
        return filesystem.get_file_info(root).mtime_ns // 1_000_000

    def touch(self, path: str) -> None:
        self.write_bytes(path, self.read_bytes(path))  # no setTimes on an object store: a rewrite renews it

    def sha256(self, path: str) -> str:
        filesystem, root = arrow_filesystem(path)
        digest = hashlib.sha256()
        with filesystem.open_input_stream(root) as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


_LOCAL, _ARROW = _Local(), _Arrow()


def backend(spark: Any, path: str) -> Backend:
    """The backend for ``path`` on ``spark``'s kind of session (see the module docstring)."""
    if local_path(path) is not None:
        return _LOCAL
    return classic.Hadoop(spark) if classic.is_classic(spark) else _ARROW


def exists(spark: SparkSession, path: str) -> bool:
    """Whether ``path`` exists, on the file system that holds it."""
    return backend(spark, path).kind(path) is not None


def kind(spark: SparkSession, path: str) -> str | None:
    """"file", "directory", or None when nothing is at ``path``."""
    return backend(spark, path).kind(path)


def qualified(spark: SparkSession, path: str) -> str:
    """``path`` as its file system names it (``file:/...`` for a local one), without a trailing slash."""
    return backend(spark, path).qualified(path)


def entries(spark: SparkSession, path: str) -> dict[str, bool]:
    """The names in the directory ``path`` (checksum sidecars left out), each with whether it is a file."""
    return backend(spark, path).entries(path)


def read_text(spark: SparkSession, path: str) -> str:
    """The whole of a small UTF-8 text file (a hierarchy, a stop list, a manifest), gzipped or not,
    read by the driver without a Spark job.
    """
    data = read_bytes(spark, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text (byte {error.start}: {data[error.start:error.start + 1]!r}); "
                         "save it as UTF-8") from None


def read_bytes(spark: SparkSession, path: str) -> bytes:
    """The whole of a small file (a PNG plot, a text file), decompressed when its name ends in a codec's
    extension (``.gz``, ``.bz2``), read by the driver without a Spark job.
    """
    return backend(spark, path).read_bytes(path)


def write_text(spark: SparkSession, path: str, text: str) -> None:
    """Create or replace a small text file."""
    write_bytes(spark, path, text.encode("utf-8"))


def join(base: str, *parts: str) -> str:
    """``base/part/...``; empty parts are left out (a file lists itself under the relative path "")."""
    return "/".join([base.rstrip("/"), *(part for part in parts if part)])


def write_bytes(spark: SparkSession, path: str, data: bytes) -> None:
    """Create or replace a small binary file (a PNG plot)."""
    backend(spark, path).write_bytes(path, data)


def delete(spark: SparkSession, path: str) -> None:
    """Remove a file or a directory tree; nothing happens when it does not exist."""
    backend(spark, path).delete(path)


def rename(spark: SparkSession, source: str, target: str) -> None:
    """Move ``source`` (a file or a directory) to ``target``, which must not exist: the publishing step of
    a stage. Nothing is replaced here; callers remove first what is theirs to remove.
    """
    backend(spark, source).rename(source, target)
    written.moved(source, target)  # the digests its tasks took of what it holds follow it


def list_files(spark: SparkSession, path: str) -> list[tuple[str, int, int]] | None:
    """(path relative to ``path``, size, modification time in ms) of every file under ``path``, sorted;
    a file lists itself with the relative path ""; None when ``path`` does not exist. A local path is listed as
    Hadoop's local file system lists it (:func:`_list_local`).
    """
    return backend(spark, path).list_files(path)


def _checksum_file(name: str) -> bool:
    """Whether Hadoop's local file system hides ``name`` from listings: the checksum file ``.NAME.crc`` it writes
    beside each file (ChecksumFileSystem.isChecksumFile).
    """
    return name.startswith(".") and name.endswith(".crc")


def _list_local(path: str) -> list[tuple[str, int, int]] | None:
    """:func:`list_files` of a local path as Hadoop's LocalFileSystem gives it: files only, checksum files left
    out, symbolic links followed (but never into a directory the link is inside of), modification times truncated
    to the millisecond (java.io.File.lastModified).
    """
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(status.st_mode):
        return [("", status.st_size, status.st_mtime_ns // 1_000_000)]
    found, within = [], {path: {os.path.realpath(path)}}  # each folder's own and its ancestors' real paths
    for folder, folders, names in os.walk(path, onerror=_raise, followlinks=True):  # never skip what it cannot read
        kept = []
        for name in folders:
            real = os.path.realpath(os.path.join(folder, name))
            if real not in within[folder]:  # else a link back up: a loop
                kept.append(name)
                within[os.path.join(folder, name)] = within[folder] | {real}
        folders[:] = kept
        for name in names:
            if _checksum_file(name):
                continue
            file = os.path.join(folder, name)
            status = os.stat(file)
            found.append((os.path.relpath(file, path), status.st_size, status.st_mtime_ns // 1_000_000))
    return sorted(found)


def _raise(error: OSError) -> None:
    raise error


def copy(spark: SparkSession, source: str, target: str) -> None:
    """Copy a file or directory tree byte for byte, replacing ``target``."""
    backend(spark, source).copy(source, target)


def link_or_copy(spark: SparkSession, source: str, target: str) -> None:
    """``target`` as the same files as ``source``, replacing it: hard links on the local file system (no byte
    is copied and no space taken; outputs are never changed in place, only replaced), a copy elsewhere.
    """
    local_source, local_target = local_path(source), local_path(target)
    if local_source is None or local_target is None or not os.path.isdir(local_source):
        copy(spark, source, target)
        return
    delete(spark, target)
    try:
        for folder, _, names in os.walk(local_source):
            into = os.path.normpath(os.path.join(local_target, os.path.relpath(folder, local_source)))
            os.makedirs(into, exist_ok=True)
            for name in names:
                if not _checksum_file(name):
                    os.link(os.path.join(folder, name), os.path.join(into, name))
                    written.linked(os.path.join(folder, name), os.path.join(into, name))
    except OSError:  # a file system without hard links, or across devices: copy instead
        copy(spark, source, target)


def create_new(spark: SparkSession, path: str, text: str) -> bool:
    """Create a small text file only if nothing is at ``path`` (atomic on a local disk and HDFS); False when
    something is.
    """
    return backend(spark, path).create_new(path, text.encode("utf-8"))


def modified(spark: SparkSession, path: str) -> int:
    """The modification time of ``path`` in ms since the epoch."""
    return backend(spark, path).modified(path)


def touch(spark: SparkSession, path: str) -> None:
    """Set the modification time of ``path`` to now (a lease renewal)."""
    backend(spark, path).touch(path)


def sha256(spark: SparkSession, path: str) -> str:
    """The SHA-256 of a file's bytes, streamed (on a classic session's Hadoop store, by the JVM: nothing crosses to
    Python but the digest). OSError when the file cannot be read back.
    """
    return backend(spark, path).sha256(path)
