"""What sparktc asks of a classic session's ``SparkContext``, and nothing else does: the one module that touches
``sparkContext``, py4j's ``_jvm``/``_jsc``, or the status tracker.

A Spark Connect session (``SparkSession.builder.remote(...)``, Databricks serverless and standard access mode) has
none of them: every caller asks :func:`is_classic` first and has a Connect answer of its own
(:mod:`sparktc.runtime.session`, :mod:`sparktc.runtime.storage`, :mod:`sparktc.runtime.progress`). A test reads the
package's source and refuses those names anywhere else.
"""

from __future__ import annotations

import atexit
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

__all__ = ["Hadoop", "application_id", "default_parallelism", "executors", "is_classic", "job_group", "job_ids",
           "labelled_jobs", "master", "settings", "set_log_level", "stage_tasks", "wait_for_jvm_at_exit",
           "workers_python"]


def is_classic(spark: Any) -> bool:
    """Whether ``spark`` is a classic session (a JVM in this process's reach), not a Spark Connect client."""
    return not type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """Spark's default number of partitions: the cores of the application's executors."""
    return spark.sparkContext.defaultParallelism


def master(spark: SparkSession) -> str:
    """The session's master URL."""
    return spark.sparkContext.master


def application_id(spark: SparkSession) -> str:
    """The application's id."""
    return spark.sparkContext.applicationId


#: Each SparkContext's start-up settings, read once: they cannot change while it lives, and reading them takes
#: a few JVM round trips per setting (hundreds), which a run did at each stage.
_SETTINGS: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()


def settings(spark: SparkSession) -> dict[str, str]:
    """Every Spark setting the application started with (``spark.conf`` holds only the SQL ones and those set)."""
    context = spark.sparkContext
    if context not in _SETTINGS:
        _SETTINGS[context] = dict(context.getConf().getAll())
    return dict(_SETTINGS[context])


def set_log_level(spark: SparkSession, level: str) -> None:
    """Spark's log level on the driver's console."""
    spark.sparkContext.setLogLevel(level)


def executors(spark: SparkSession) -> int:
    """Executors of the application: the driver itself in local mode, every executor but the driver's entry else."""
    infos = spark.sparkContext.statusTracker().getExecutorInfos()
    return len(infos) if master(spark).startswith("local") else max(0, len(infos) - 1)


def workers_python(spark: Any) -> str | None:
    """The interpreter a local-mode session's Python workers start; None on a cluster (other machines') or on a
    Spark Connect session (the server's workers are configured server-side).
    """
    if not is_classic(spark):
        return None
    context = getattr(spark, "sparkContext", None)
    if context is None or not context.master.startswith("local"):
        return None
    return context.pythonExec


def job_group(name: str) -> str:
    """The job group of a stage's Spark jobs (the UI's and the status tracker's key)."""
    return f"sparktc-{name}"


@contextmanager
def labelled_jobs(spark: SparkSession, name: str, description: str) -> Iterator[None]:
    """The jobs started inside in the job group of stage ``name``, described as ``description`` in the UI and the
    event log.
    """
    context = spark.sparkContext
    context.setJobGroup(job_group(name), description)
    try:
        yield
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setLocalProperty("spark.job.description", None)


def job_ids(spark: SparkSession, name: str) -> set[int]:
    """The ids of the jobs of stage ``name``'s group so far."""
    return set(spark.sparkContext.statusTracker().getJobIdsForGroup(job_group(name)))


def stage_tasks(spark: SparkSession, job: int) -> tuple[bool, int, int] | None:
    """(running, tasks done, tasks) of a job's stages so far; None when the tracker no longer knows the job."""
    tracker = spark.sparkContext.statusTracker()
    info = tracker.getJobInfo(job)
    if info is None:
        return None
    done = total = 0
    for stage_id in info.stageIds:
        stage = tracker.getStageInfo(stage_id)
        if stage is not None:
            done, total = done + stage.numCompletedTasks, total + stage.numTasks
    return info.status == "RUNNING", done, total


@dataclass(frozen=True)
class _Classes:
    """A SparkContext's Hadoop Path class, its (live) Hadoop configuration, a codec factory over it and the class
    that reads a stream whole, kept: each ``jvm.org.apache...`` name takes a round trip to the JVM, and building a
    codec factory many, while a run asks for a file system hundreds of times.
    """

    path: Any
    configuration: Any
    codecs: Any
    io_utils: Any
    file_util: Any
    digests: Any


_CLASSES: weakref.WeakKeyDictionary[Any, _Classes] = weakref.WeakKeyDictionary()


class Hadoop:
    """Small files and listings through the Hadoop file system that holds a path (``hdfs://``, ``s3a://``...), with
    the credentials and settings of the cluster's Hadoop configuration: :mod:`sparktc.runtime.storage`'s backend
    for URIs on a classic session.
    """

    def __init__(self, spark: SparkSession):
        context = spark.sparkContext
        found = _CLASSES.get(context)
        if found is None:
            jvm, configuration = context._jvm, context._jsc.hadoopConfiguration()
            found = _CLASSES[context] = _Classes(
                jvm.org.apache.hadoop.fs.Path, configuration,
                jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(configuration),
                jvm.org.apache.commons.io.IOUtils, jvm.org.apache.hadoop.fs.FileUtil,
                jvm.org.apache.commons.codec.digest.DigestUtils)
        self.classes = found

    def _of(self, path: str) -> tuple[Any, Any]:
        hadoop_path = self.classes.path(path)
        return hadoop_path, hadoop_path.getFileSystem(self.classes.configuration)

    def kind(self, path: str) -> str | None:
        """"file", "directory", or None when nothing is at ``path``."""
        hadoop_path, fs = self._of(path)
        if not fs.exists(hadoop_path):
            return None
        return "directory" if fs.getFileStatus(hadoop_path).isDirectory() else "file"

    def qualified(self, path: str) -> str:
        """``path`` as the file system names it (scheme and authority), without a trailing slash."""
        hadoop_path, fs = self._of(path)
        return fs.getFileStatus(hadoop_path).getPath().toString().rstrip("/")

    def entries(self, path: str) -> dict[str, bool]:
        """The names in directory ``path``, each with whether it is a file."""
        hadoop_path, fs = self._of(path)
        return {entry.getPath().getName(): bool(entry.isFile()) for entry in fs.listStatus(hadoop_path)}

    def read_bytes(self, path: str) -> bytes:
        """A small file's bytes, decompressed by the codec its extension names."""
        hadoop_path, fs = self._of(path)
        codec = self.classes.codecs.getCodec(hadoop_path)
        stream = fs.open(hadoop_path)
        try:
            if codec is not None:
                stream = codec.createInputStream(stream)
            return bytes(self.classes.io_utils.toByteArray(stream))
        finally:
            stream.close()

    def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a small file."""
        hadoop_path, fs = self._of(path)
        stream = fs.create(hadoop_path, True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def create_new(self, path: str, data: bytes) -> bool:
        """Create a small file only if nothing is at ``path`` (atomic on HDFS); False when something is."""
        hadoop_path, fs = self._of(path)
        try:
            stream = fs.create(hadoop_path, False)
        except Exception as error:  # py4j wraps FileAlreadyExistsException
            if "FileAlreadyExistsException" in str(error) or fs.exists(hadoop_path):
                return False
            raise
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()
        return True

    def delete(self, path: str) -> None:
        """Remove a file or a directory tree; nothing happens when it does not exist."""
        hadoop_path, fs = self._of(path)
        fs.delete(hadoop_path, True)

    def rename(self, source: str, target: str) -> None:
        """Move ``source`` to ``target``, which must not exist."""
        source_path, fs = self._of(source)
        target_path, _ = self._of(target)
        if fs.exists(target_path):
            raise OSError(f"cannot move {source} to {target}: something is already there")
        fs.mkdirs(target_path.getParent())
        if not fs.rename(source_path, target_path):
            raise OSError(f"could not move {source} to {target}")

    def list_files(self, path: str) -> list[tuple[str, int, int]] | None:
        """(path relative to ``path``, size, modification time in ms) of every file under ``path``, sorted."""
        hadoop_path, fs = self._of(path)
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

    def copy(self, source: str, target: str) -> None:
        """Copy a file or directory tree byte for byte, replacing ``target``."""
        source_path, source_fs = self._of(source)
        target_path, target_fs = self._of(target)
        target_fs.delete(target_path, True)
        if not self.classes.file_util.copy(source_fs, source_path, target_fs, target_path, False,
                                           self.classes.configuration):
            raise OSError(f"could not copy {source} to {target}")

    def modified(self, path: str) -> int:
        """The modification time of ``path`` in ms since the epoch."""
        hadoop_path, fs = self._of(path)
        return int(fs.getFileStatus(hadoop_path).getModificationTime())

    def touch(self, path: str) -> None:
        """Set the modification time of ``path`` to now (a lease renewal)."""
        hadoop_path, fs = self._of(path)
        fs.setTimes(hadoop_path, int(time.time() * 1000), -1)

    def sha256(self, path: str) -> str:
        """The SHA-256 of a file's bytes, streamed by the JVM (nothing crosses to Python but the digest); OSError
        when the file cannot be read back.
        """
        from py4j.protocol import Py4JJavaError

        hadoop_path, fs = self._of(path)
        try:
            stream = fs.open(hadoop_path)
            try:
                return str(self.classes.digests.sha256Hex(stream))
            finally:
                stream.close()
        except Py4JJavaError as error:
            raise OSError(str(error.java_exception)[:200]) from None


def wait_for_jvm_at_exit(spark: SparkSession) -> None:
    """Have this process, as it exits, end the JVM its session started and wait for it (a driver started Python first,
    :func:`sparktc.apps.submit.submit`): the JVM ends when its standard input closes, which it would only once this
    process had gone, and a local job's JVM may write the class archive as it ends, which the command waits for.
    Nothing for a session whose JVM this process did not start.
    """
    process = getattr(spark.sparkContext._gateway, "proc", None)
    if process is None or process in _WAITED:
        return
    _WAITED.add(process)

    def wait() -> None:
        process.stdin.close()
        process.wait()

    atexit.register(wait)


#: The JVMs waited for at exit, each once.
_WAITED: set[Any] = set()
