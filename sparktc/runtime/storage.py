"""Small files and listings through Hadoop file systems, so the same code serves local disk, HDFS and S3.

Corpus data never passes through here: these helpers move metadata (listings, the hierarchy and
stop-list files, ``metrics.json``) between the driver and the store the executors read and write.
"""

from __future__ import annotations

import os
import stat
import time
import weakref
from dataclasses import dataclass
from typing import Any

from pyspark import SparkContext
from pyspark.sql import SparkSession

from sparktc.errors import InputError
from sparktc.filesystem import local_path


@dataclass(frozen=True)
class _Hadoop:
    """A SparkContext's Hadoop Path class, its (live) Hadoop configuration, a codec factory over it and the class
    that reads a stream whole, kept: each ``jvm.org.apache...`` name takes a round trip to the JVM, and building a
    codec factory many, while a run asks for a file system hundreds of times (every manifest, listing and
    publishing step).
    """

    path: Any
    configuration: Any
    codecs: Any
    io_utils: Any


_HADOOP: weakref.WeakKeyDictionary[SparkContext, _Hadoop] = weakref.WeakKeyDictionary()


def _hadoop(spark: SparkSession) -> _Hadoop:
    context = spark.sparkContext
    found = _HADOOP.get(context)
    if found is None:
        jvm, configuration = context._jvm, context._jsc.hadoopConfiguration()
        found = _HADOOP[context] = _Hadoop(jvm.org.apache.hadoop.fs.Path, configuration,
                                           jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(configuration),
                                           jvm.org.apache.commons.io.IOUtils)
    return found


def file_system(spark: SparkSession, path: str):
    """The Hadoop Path of ``path`` and the file system that holds it."""
    hadoop = _hadoop(spark)
    hadoop_path = hadoop.path(path)
    return hadoop_path, hadoop_path.getFileSystem(hadoop.configuration)


def exists(spark: SparkSession, path: str) -> bool:
    """Whether ``path`` exists, on the file system that holds it."""
    hadoop_path, fs = file_system(spark, path)
    return bool(fs.exists(hadoop_path))


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
    hadoop_path, fs = file_system(spark, path)
    hadoop = _hadoop(spark)
    codec = hadoop.codecs.getCodec(hadoop_path)
    stream = fs.open(hadoop_path)
    try:
        if codec is not None:
            stream = codec.createInputStream(stream)
        return bytes(hadoop.io_utils.toByteArray(stream))
    finally:
        stream.close()


def write_text(spark: SparkSession, path: str, text: str) -> None:
    """Create or replace a small text file."""
    write_bytes(spark, path, text.encode("utf-8"))


def join(base: str, *parts: str) -> str:
    """``base/part/...``; empty parts are left out (a file lists itself under the relative path "")."""
    return "/".join([base.rstrip("/"), *(part for part in parts if part)])


def write_bytes(spark: SparkSession, path: str, data: bytes) -> None:
    """Create or replace a small binary file (a PNG plot)."""
    hadoop_path, fs = file_system(spark, path)
    stream = fs.create(hadoop_path, True)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()


def delete(spark: SparkSession, path: str) -> None:
    """Remove a file or a directory tree; nothing happens when it does not exist."""
    hadoop_path, fs = file_system(spark, path)
    fs.delete(hadoop_path, True)


def rename(spark: SparkSession, source: str, target: str) -> None:
    """Move ``source`` (a file or a directory) to ``target``, which must not exist: the publishing step of
    a stage. Nothing is replaced here; callers remove first what is theirs to remove.
    """
    source_path, fs = file_system(spark, source)
    target_path, _ = file_system(spark, target)
    if fs.exists(target_path):
        raise OSError(f"cannot move {source} to {target}: something is already there")
    fs.mkdirs(target_path.getParent())
    if not fs.rename(source_path, target_path):
        raise OSError(f"could not move {source} to {target}")


def list_files(spark: SparkSession, path: str) -> list[tuple[str, int, int]] | None:
    """(path relative to ``path``, size, modification time in ms) of every file under ``path``, sorted;
    a file lists itself with the relative path ""; None when ``path`` does not exist.

    A local path (or ``file:`` URI) is listed by Python, as Hadoop's local file system lists it
    (:func:`_list_local`); any other through Hadoop (:func:`_list_hadoop`), which takes six round trips to the JVM
    per file.
    """
    local = local_path(path)
    return _list_hadoop(spark, path) if local is None else _list_local(local)


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


def _list_hadoop(spark: SparkSession, path: str) -> list[tuple[str, int, int]] | None:
    """:func:`list_files` through the Hadoop file system that holds ``path``."""
    hadoop_path, fs = file_system(spark, path)
    if not fs.exists(hadoop_path):
        return None
    root = fs.getFileStatus(hadoop_path).getPath().toString().rstrip("/")
    files = fs.listFiles(hadoop_path, True)
    found = []
    while files.hasNext():
        status = files.next()
        relative = status.getPath().toString()[len(root):].lstrip("/")
        found.append((relative, int(status.getLen()), int(status.getModificationTime())))
    return sorted(found)


def copy(spark: SparkSession, source: str, target: str) -> None:
    """Copy a file or directory tree byte for byte, replacing ``target``."""
    source_path, source_fs = file_system(spark, source)
    target_path, target_fs = file_system(spark, target)
    target_fs.delete(target_path, True)
    jvm = spark.sparkContext._jvm
    conf = _hadoop(spark).configuration
    if not jvm.org.apache.hadoop.fs.FileUtil.copy(source_fs, source_path, target_fs, target_path, False, conf):
        raise OSError(f"could not copy {source} to {target}")


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
            into = os.path.join(local_target, os.path.relpath(folder, local_source))
            os.makedirs(into, exist_ok=True)
            for name in names:
                os.link(os.path.join(folder, name), os.path.join(into, name))
    except OSError:  # a file system without hard links, or across devices: copy instead
        copy(spark, source, target)


def create_new(spark: SparkSession, path: str, text: str) -> bool:
    """Create a small text file only if nothing is at ``path`` (atomic on HDFS); False when something is."""
    hadoop_path, fs = file_system(spark, path)
    try:
        stream = fs.create(hadoop_path, False)
    except Exception as error:  # py4j wraps FileAlreadyExistsException
        if "FileAlreadyExistsException" in str(error) or fs.exists(hadoop_path):
            return False
        raise
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()
    return True


def modified(spark: SparkSession, path: str) -> int:
    """The modification time of ``path`` in ms since the epoch."""
    hadoop_path, fs = file_system(spark, path)
    return int(fs.getFileStatus(hadoop_path).getModificationTime())


def touch(spark: SparkSession, path: str) -> None:
    """Set the modification time of ``path`` to now (a lease renewal)."""
    hadoop_path, fs = file_system(spark, path)
    fs.setTimes(hadoop_path, int(time.time() * 1000), -1)


def sha256(spark: SparkSession, path: str) -> str:
    """The SHA-256 of a file's bytes, streamed by the JVM (nothing crosses to Python but the digest).
    On the local file system Hadoop checks the file against its ``.crc`` sidecar while reading, and a
    file that fails that check raises.
    """
    hadoop_path, fs = file_system(spark, path)
    stream = fs.open(hadoop_path)
    try:
        return str(spark.sparkContext._jvm.org.apache.commons.codec.digest.DigestUtils.sha256Hex(stream))
    finally:
        stream.close()
