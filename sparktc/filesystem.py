r"""Paths and file systems, for every layer: the one rule for what is a URI, pyarrow's view of a path, and
the per-worker caches.

**The URI rule** (:func:`is_uri`). A path is a URI when it starts with a scheme as RFC 3986 spells
it (a letter, then letters, digits, ``+``, ``-`` or ``.``) of two characters or more, then ``:``;
that is also what Spark and Hadoop take for a URI. So:

=================  ======  ===================================================================
path               URI?    what it names
=================  ======  ===================================================================
``hdfs://h/x``     yes     ``/x`` on HDFS at ``h``, through Hadoop (pyarrow: ``HadoopFileSystem``)
``s3a://b/x``      yes     ``x`` in bucket ``b`` (pyarrow reads it as ``s3://b/x``)
``file:/x``        yes     the local ``/x``, as Hadoop writes local paths
``file:///x``      yes     the local ``/x`` as well
``/x``             no      the local ``/x``
``runs/x``         no      a local path relative to the working directory (made absolute on the driver)
``C:\x``, ``c:/x``  no      a Windows drive letter is one character: a local path
=================  ======  ===================================================================

A ``file:`` URI stays a URI where sparktc decides between a local and a Hadoop path (it is not
made absolute, it is checked through Hadoop, an output there is locked by a lease), and names the
local file system wherever pyarrow or the driver opens it (:func:`local_path`, :func:`arrow_filesystem`).
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Callable
from typing import Generic, TypeVar

import pyarrow.fs as pafs

__all__ = [
    "PROBE_PREFIX", "absolute", "arrow_filesystem", "directory_problem", "fingerprint", "forget_kept", "is_uri",
    "local_path", "per_worker", "unwritable",
]

Result = TypeVar("Result")

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def is_uri(path: str) -> bool:
    """True when ``path`` names its file system by a scheme (``hdfs://``, ``s3a://``, ``file:``...); see the module
    docstring.
    """
    return _SCHEME.match(path) is not None


def local_path(path: str) -> str | None:
    """The local path that ``path`` names: itself when it is no URI, the path of a ``file:`` URI; None for any
    other scheme.
    """
    if not is_uri(path):
        return path
    scheme, _, rest = path.partition(":")
    return "/" + rest.lstrip("/") if scheme.lower() == "file" else None


def absolute(path: str) -> str:
    """Local paths made absolute so that executors and pyarrow see the same file; URIs (and "") unchanged."""
    return path if not path or is_uri(path) else os.path.abspath(path)


def arrow_filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system and path for a path as Spark writes it, read on an executor:
    local paths and ``file:`` URIs are the local file system, Hadoop's ``s3a://`` / ``s3n://`` are
    pyarrow's ``s3://`` (credentials from the executor's environment or instance role), ``hdfs://``
    needs libhdfs.
    """
    local = local_path(path)
    if local is not None:
        return pafs.LocalFileSystem(), local
    scheme = path.partition(":")[0]
    if scheme in ("s3a", "s3n"):
        path = "s3" + path[len(scheme):]
    return pafs.FileSystem.from_uri(path)


def write_file(directory: str, name: str, data: bytes) -> None:
    """``data`` as the file ``directory/name``, the directory made when missing; a retried task that writes
    the same bytes again replaces the file.
    """
    filesystem, root = arrow_filesystem(directory)
    filesystem.create_dir(root, recursive=True)
    with filesystem.open_output_stream(f"{root}/{name}") as stream:
        stream.write(data)


def read_file(directory: str, name: str) -> bytes:
    """The bytes of the file ``directory/name``."""
    filesystem, root = arrow_filesystem(directory)
    with filesystem.open_input_file(f"{root}/{name}") as handle:
        return handle.read()


def fingerprint(path: str) -> tuple:
    """(file, size, mtime) of every file under ``path`` (or of the file ``path``): changes whenever it is rewritten."""
    filesystem, root = arrow_filesystem(path)
    info = filesystem.get_file_info(root)
    infos = [info] if info.type == pafs.FileType.File else filesystem.get_file_info(
        pafs.FileSelector(root, recursive=True))
    return tuple(sorted((i.path, i.size, i.mtime_ns) for i in infos if i.type == pafs.FileType.File))


#: How to empty every cache a worker keeps (:func:`per_worker`'s and :class:`KeptOne`'s): :func:`forget_kept`.
_CACHES: list[Callable[[], None]] = []


def forget_kept() -> None:
    """Drop what this worker keeps in every :func:`per_worker` and :class:`KeptOne` cache (a later call loads
    afresh): a task capped in memory does not carry an earlier stage's training set or index.
    """
    for clear in _CACHES:
        clear()


def per_worker(load: Callable[..., Result]) -> Callable[..., Result]:
    """``load(path, *arguments)`` computed once per Python worker and kept, one result at a time (what a
    worker loads is as big as the training set): called again with the same arguments while the files
    under ``path`` are unchanged (:func:`fingerprint`), the kept result; a rewritten output is read afresh.
    """

    @functools.lru_cache(maxsize=1)
    def cached(path: str, files: tuple, *arguments) -> Result:
        return load(path, *arguments)

    @functools.wraps(load)
    def wrapper(path: str, *arguments) -> Result:
        return cached(path, fingerprint(path), *arguments)

    _CACHES.append(cached.cache_clear)

    return wrapper


class KeptOne(Generic[Result]):
    """One value a worker keeps, the last one made (as big as the training set, like :func:`per_worker`'s), for keys
    :func:`per_worker` cannot hash (a matrix, broadcast models): ``get(key, make)`` is the kept value while ``key``
    is the same, item by item (the same object, or an equal str, bytes or number), else ``make()``'s, kept instead.
    """

    def __init__(self) -> None:
        self._kept: tuple[tuple, Result] | None = None
        _CACHES.append(self.forget)

    def forget(self) -> None:
        """Drop the kept value."""
        self._kept = None

    def get(self, key: tuple, make: Callable[[], Result]) -> Result:
        if self._kept is None or not _same(self._kept[0], key):
            self._kept = (key, make())
        return self._kept[1]


def _same(kept: tuple, key: tuple) -> bool:
    return len(kept) == len(key) and all(a is b or (isinstance(a, str | bytes | int | float) and type(a) is type(b)
                                                    and a == b) for a, b in zip(kept, key))


#: How the probe files of :func:`unwritable` begin: an output's ownership check passes them over, as another process's
#: probe may be there for an instant.
PROBE_PREFIX = ".sparktc-probe-"


def unwritable(folder: str) -> str | None:
    """Why no file can be made in ``folder`` (a hidden file made and removed at once: the permission bits alone say
    nothing for root, nor of a read-only file system), or None.
    """
    try:
        handle, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=folder)
    except OSError as error:
        return error.strerror or str(error)
    os.close(handle)
    os.unlink(probe)
    return None


def directory_problem(path: str, what: str = "the directory") -> str | None:
    """Why the local directory ``path`` (absolute) cannot be written, or made where it is missing, with what to do;
    None when it can. The nearest existing path at or above it decides, before anything is made: a file there (``what``
    could not be made under it), or a directory in which no file can be made (:func:`unwritable`: its probe is the
    only file made, and it is removed at once).
    """
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return f"{existing} is a file, so {what} cannot be made there; give a directory path"
    problem = unwritable(existing)
    if problem:
        made = "" if existing == path else f" (where {path} would be made)"
        return f"the directory {existing}{made} cannot be written ({problem}); give a directory this user can write"
    return None
