"""The run's output directory: whose it is, who is writing it, and what it may never be.

sparktc writes only into directories it owns and only one run at a time:

* **Safety** (:func:`check_output`): ``--output`` may not be ``/`` or a home directory, and may not
  equal, contain or lie inside any input of the run (the corpus, the hierarchy, the stop list, a
  model bundle ...), compared after resolving symbolic links. An existing regular file is refused, and
  so is a local directory that cannot be written or made (under a file, in a folder this user may not
  write: :func:`sparktc.filesystem.directory_problem`), before anything is written.
* **Ownership** (:data:`MARKER`): the first run writes ``OUTPUT/.sparktc`` (what kind of output it is).
  A non-empty directory without it is the user's and is refused, so sparktc never deletes or
  replaces what it did not write; a directory of another kind (a training run given to classify)
  is refused too.
* **The run lock** (:data:`LOCK`): a run holds ``OUTPUT/.sparktc.lock`` from before its first write
  to its end, and the file names the holder (run id, host, process id, start time, command). On a
  local file system the lock is a kernel ``flock``: it dies with its process, so a killed run
  (``kill -9``, a lost machine's NFS client aside) never leaves it stuck. On a Hadoop file system
  (``hdfs://``, ``s3a://``) it is a lease: the file is created only if absent and its holder renews
  its modification time every :data:`LEASE_RENEWAL` seconds; one older than :data:`LEASE_SECONDS`
  is taken over. Creation is atomic on HDFS; on object stores it is not, and the lock is then
  advisory (docs/trusted-runs.md says so).

The lock's run id names the run's private staging directory (``OUTPUT/_incomplete/<run id>/``);
everything under ``_incomplete`` belongs to runs that are over once the lock is held, and is removed.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import pwd
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sparktc.errors import BUSY_EXIT, ConfigError, SparktcError
from sparktc.filesystem import PROBE_PREFIX, absolute, directory_problem, is_uri
from sparktc.runtime import storage

MARKER = ".sparktc"
INCOMPLETE = "_incomplete"
LOCK = ".sparktc.lock"
#: What a directory holds: a pipeline or single-stage run, classify's predictions, a comparison of two runs, or a
#: run history's report (jobs/history.py --report).
KINDS = ("run", "classify", "compare", "history")
#: The argument that names a directory of each kind on the command line, as refusals say it (:func:`_option`):
#: ``--output`` but for a history's report. A caller that takes it by another name (the Python API's ``output``)
#: gives that name.
OPTIONS = {"history": "--report"}
LEASE_SECONDS = 300
LEASE_RENEWAL = 30


class OutputError(ConfigError):
    """An ``--output`` that sparktc must not write to (unsafe, not its own, or of another kind)."""


class OutputBusyError(SparktcError, RuntimeError):
    """Another live run holds the output directory's lock: exit status 75 (EX_TEMPFAIL, try again later)."""

    exit_code = BUSY_EXIT


def _home_directories() -> set[str]:
    homes = {os.path.realpath(os.path.expanduser("~"))}
    homes.update(os.path.realpath(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir not in ("", "/"))
    return homes


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


#: What Hadoop's path globbing reads as a pattern (Spark reads every table back through it).
GLOB_CHARACTERS = "*?[]{}\\"


def _option(kind: str, option: str = "") -> str:
    """The argument that names an output directory of ``kind``: ``option`` when given, else :data:`OPTIONS`'."""
    return option or OPTIONS.get(kind, "--output")


def check_output(output: str, inputs: Mapping[str, str], kind: str = "run", option: str = "") -> str:
    """The absolute ``output``, or :class:`OutputError` when writing there could harm an input or the
    user's files, or when a local directory cannot be written or made there (Hadoop URIs are found out by
    Spark). ``inputs`` maps the setting that names each input (``corpus.path``, ``--model``) to its path;
    local paths are compared after resolving symbolic links, URIs as written. ``option`` names the argument
    that gave ``output`` (default: the command line's, :func:`_option`).
    """
    option = _option(kind, option)
    if not output:
        raise OutputError(f"{option} is required: the directory the stages write their tables to")
    output = absolute(output)
    globbed = sorted({c for c in output if c in GLOB_CHARACTERS})
    if globbed:
        raise OutputError(f"{option} {output} holds {' '.join(globbed)}, which Spark reads as a glob pattern when it "
                          "reads the outputs back, so it would not find them; choose a directory name without "
                          f"{' '.join(GLOB_CHARACTERS)}")
    if is_uri(output):
        real = output.rstrip("/")
        resolved_inputs = {key: path.rstrip("/") for key, path in inputs.items() if path and is_uri(path)}
    else:
        real = os.path.realpath(output)
        resolved_inputs = {key: os.path.realpath(path) for key, path in inputs.items() if path and not is_uri(path)}
        if real == "/" or real in _home_directories():
            raise OutputError(f"{option} {output} is {'the root directory' if real == '/' else 'a home directory'}; "
                              "give a directory of its own, e.g. runs/NAME")
        if os.path.exists(real) and not os.path.isdir(real):
            raise OutputError(f"{option} {output} is an existing file, not a directory; give a directory path")
    for key, path in resolved_inputs.items():
        if _inside(real, path):
            raise OutputError(f"{option} {output} is inside {key} {path}; write outputs outside the run's inputs")
        if _inside(path, real):
            raise OutputError(f"{option} {output} contains {key} {path}; write outputs outside the run's inputs")
    if not is_uri(output):
        check_owner(_LocalFiles(), real, kind, option)
        problem = directory_problem(real)  # after the ownership check: no probe in a directory of the user's
        if problem:
            raise OutputError(f"{option} {output}: {problem}")
    return output


class _LocalFiles:
    """The few file operations ownership needs, on the local file system."""

    def entries(self, path: str) -> list[str] | None:
        return os.listdir(path) if os.path.isdir(path) else None

    def read(self, path: str) -> str | None:
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read()
        except (FileNotFoundError, UnicodeDecodeError):
            return None


def _marker_kind(text: str | None) -> str | None:
    try:
        return json.loads(text).get("kind") if text else None
    except (ValueError, AttributeError):
        return None


class Files(Protocol):
    """The two file operations ownership needs, on the local file system or through Hadoop."""

    def entries(self, path: str) -> list[str] | None:
        """The names in directory ``path``; None when there is no such directory."""
        ...

    def read(self, path: str) -> str | None:
        """The text of the UTF-8 file ``path``; None when it is missing or not UTF-8."""
        ...


def check_owner(files: Files, output: str, kind: str, option: str = "") -> None:
    """Refuse a non-empty directory that is not a sparktc output of ``kind`` (``option``: as for :func:`_option`)."""
    option = _option(kind, option)
    entries = [name for name in files.entries(output) or () if name != LOCK and not name.startswith(PROBE_PREFIX)]
    if not entries:
        return
    found = _marker_kind(files.read(f"{output}/{MARKER}")) if MARKER in entries else None
    if found is None:
        shown = ", ".join(sorted(entries)[:5]) + (", ..." if len(entries) > 5 else "")
        raise OutputError(f"{option} {output} is not empty ({shown}) and is not a sparktc output directory (no "
                          f"{MARKER} file): sparktc never writes over files it did not write; give a new or empty "
                          "directory")
    if found != kind:
        what = {"run": "a training run (jobs/pipeline.py)", "classify": "a classify output",
                "compare": "a comparison (jobs/compare.py)",
                "history": "a history report (jobs/history.py)"}.get(found, found)
        raise OutputError(f"{option} {output} holds {what}; writing {kind} outputs there would replace its "
                          "files: give another directory")


_HOLDERS = itertools.count(1)  # this process's holders so far: no two of its runs share a run id


@dataclass(frozen=True)
class Holder:
    """Who holds a lock: as written into the lock file and quoted in a refusal."""

    run_id: str
    host: str
    pid: int
    started: str
    command: str

    @staticmethod
    def of_this_process() -> Holder:
        """The holder this process writes: a run id from the UTC time, the host and the process id (with ``.N`` for
        the process's N-th holder after its first, as a notebook's runs in one second are), and the command line
        (its first 500 characters).
        """
        now, count = datetime.now(UTC), next(_HOLDERS)
        run_id = f"{now:%Y%m%dT%H%M%S}Z-{socket.gethostname()}-{os.getpid()}" + (f".{count}" if count > 1 else "")
        return Holder(run_id, socket.gethostname(), os.getpid(), now.isoformat(timespec="seconds"),
                      " ".join(sys.argv)[:500])

    def text(self) -> str:
        """The holder as the lock file's JSON text."""
        return json.dumps(self.__dict__, indent=2) + "\n"

    @staticmethod
    def describe(text: str) -> str:
        """The holder described for a refusal (whatever the file holds, it is only quoted)."""
        try:
            holder = json.loads(text)
            return (f"run {holder['run_id']} (host {holder['host']}, process {holder['pid']}, "
                    f"started {holder['started']}: {holder['command']})")
        except (ValueError, KeyError, TypeError):
            return "another run (its lock file could not be read)"


def _busy(output: str, holder: str, reads: str = "", kind: str = "run", option: str = "") -> OutputBusyError:
    if reads:  # the job reads this directory: it is an input of this job, not its --output
        return OutputBusyError(f"{reads} {output} (an input of this job) is in use by {holder}, which may be writing "
                               "it; wait for that job to finish, then run this command again")
    option = _option(kind, option)
    return OutputBusyError(f"{option} {output} is in use by {holder}; two runs never share an output: wait for it "
                           f"to finish, or give another {option}")


def check_free(path: str, reads: str) -> None:
    """OutputBusyError (told as for ``claim(path, reads=reads)``) while a live run holds the local directory ``path``:
    for a job to say so before refusing what it finds there, which a run in progress may be rewriting.
    """
    try:
        descriptor = os.open(os.path.join(path, LOCK), os.O_RDONLY)
    except OSError:  # no lock file: never held
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(path, Holder.describe(os.pread(descriptor, 65536, 0).decode("utf-8", "replace")), reads) from None
    finally:
        os.close(descriptor)  # releases the probe's shared lock


@dataclass
class Claim:
    """A held output directory: the run id and its private staging directory, and what the job does once it lets the
    directory go (:meth:`then`).
    """

    output: str
    holder: Holder
    released: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def then(self, action: Callable[[], None]) -> None:
        """Do ``action`` once the lock is released, however the job ends (after those registered before it): work
        that must not hold the output, such as a call to a tracking server that may be slow to fail.
        """
        self.released.append(action)

    @property
    def run_id(self) -> str:
        """The holder's run id, which names the run's staging directory."""
        return self.holder.run_id

    @property
    def staging(self) -> str:
        """The run's private staging directory, ``OUTPUT/_incomplete/<run id>``."""
        return f"{self.output.rstrip('/')}/{INCOMPLETE}/{self.run_id}"


def _marker_text(kind: str, holder: Holder) -> str:
    return json.dumps({"kind": kind, "created": holder.started, "created_by": holder.run_id}, indent=2) + "\n"


def _write_marker(path: str, kind: str, holder: Holder) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(_marker_text(kind, holder))


@contextmanager
def _local_claim(output: str, kind: str, reads: str = "", option: str = "") -> Iterator[Claim]:
    check_owner(_LocalFiles(), output, kind, option)  # before the first write: the lock file
    created = not os.path.exists(output)
    os.makedirs(output, exist_ok=True)
    holder = Holder.of_this_process()
    descriptor = os.open(os.path.join(output, LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(output, Holder.describe(os.pread(descriptor, 65536, 0).decode("utf-8", "replace")),
                        reads, kind, option) from None
        # Checked again under the lock: another run may have marked the directory since check_output.
        check_owner(_LocalFiles(), output, kind, option)
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, holder.text().encode("utf-8"), 0)
        marker = os.path.join(output, MARKER)
        if not os.path.exists(marker):
            _write_marker(marker, kind, holder)
        shutil.rmtree(os.path.join(output, INCOMPLETE), ignore_errors=True)  # staging of runs that are over
        try:
            yield Claim(output, holder)
        except BaseException:
            # A first run that failed before publishing anything leaves no directory behind.
            if created and set(os.listdir(output)) <= {MARKER, LOCK, INCOMPLETE}:
                shutil.rmtree(output, ignore_errors=True)
            raise
    finally:
        os.close(descriptor)  # releases the flock


class _HadoopFiles:
    """Ownership's file operations through Hadoop (``hdfs://``, ``s3a://``, ``file://`` URIs)."""

    def __init__(self, spark: Any):
        self.spark = spark

    def entries(self, path: str) -> list[str] | None:
        listing = storage.list_files(self.spark, path)
        if listing is None:
            return None
        return sorted({relative.split("/", 1)[0] for relative, _, _ in listing if relative})

    def read(self, path: str) -> str | None:
        return storage.read_text(self.spark, path) if storage.exists(self.spark, path) else None


@contextmanager
def _hadoop_claim(spark: Any, output: str, kind: str, reads: str = "", option: str = "") -> Iterator[Claim]:
    files = _HadoopFiles(spark)
    check_owner(files, output, kind, option)
    holder = Holder.of_this_process()
    lock = f"{output.rstrip('/')}/{LOCK}"
    if not storage.create_new(spark, lock, holder.text()):
        age = time.time() - storage.modified(spark, lock) / 1000
        if age < LEASE_SECONDS:
            raise _busy(output, Holder.describe(files.read(lock) or ""), reads, kind, option)
        # The holder stopped renewing its lease: its run is over. Take the lock over.
        storage.delete(spark, lock)
        if not storage.create_new(spark, lock, holder.text()):
            raise _busy(output, Holder.describe(files.read(lock) or ""), reads, kind, option)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(LEASE_RENEWAL):
            storage.touch(spark, lock)

    renewer = threading.Thread(target=renew, name="sparktc-lease", daemon=True)
    renewer.start()
    try:
        marker = f"{output.rstrip('/')}/{MARKER}"
        if not storage.exists(spark, marker):
            storage.write_text(spark, marker, _marker_text(kind, holder))
        storage.delete(spark, f"{output.rstrip('/')}/{INCOMPLETE}")  # staging of runs that are over
        yield Claim(output, holder)
    finally:
        stop.set()
        renewer.join()
        storage.delete(spark, lock)


@contextmanager
def claim(output: str, kind: str = "run", spark: Any = None, reads: str = "", option: str = "") -> Iterator[Claim]:
    """Hold ``output`` for one run (see the module docstring): local paths need no Spark session and
    are claimed before it starts; a Hadoop URI needs ``spark``. Staging left by earlier runs is removed.
    ``reads`` names the argument that gave ``output`` when the job holds it to read it (export's ``RUN``):
    refused while held, it is then told as an input in use, not as the job's ``--output``. The actions given to
    :meth:`Claim.then` are done once the lock is released. ``option`` names the argument that gave ``output``, as
    for :func:`check_output`.
    """
    if kind not in KINDS:
        raise ValueError(f"kind = {kind!r}: expected one of {', '.join(KINDS)}")
    if is_uri(output):
        if spark is None:
            raise ValueError(f"claiming {output} needs a Spark session (it is a Hadoop URI)")
        held = _hadoop_claim(spark, output, kind, reads, option)
    else:
        held = _local_claim(output, kind, reads, option)
    claimed = None
    try:
        with held as claimed:
            yield claimed
    finally:
        for action in claimed.released if claimed else ():
            action()
