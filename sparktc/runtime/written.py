"""The SHA-256 of the files this run's tasks wrote, hashed where they wrote them, so that the driver, whose manifests
record every output file's digest, reads none of a table to hash it.

A :class:`~sparktc.runtime.parts.PartWriter` reads each file it finishes back from the page cache, hashes it and
records it (:func:`record`) with its size and modification time; a task hands its records to the driver with its result
(:func:`sparktc.runtime.parts.map_parts`), and :func:`sparktc.runtime.storage.rename` carries them along as a
stage's outputs are published (a rename keeps a file's size and time), as :func:`sparktc.runtime.storage.link_or_copy`
does for a hard link. Paths are pyarrow's, of the file's own file
system (:func:`sparktc.filesystem.arrow_filesystem`). A file changed since, or never recorded, has no digest here:
the driver hashes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from sparktc.filesystem import arrow_filesystem

__all__ = ["digest", "drained", "linked", "merge", "moved", "record"]

#: By path: size, modification time (ms) and SHA-256, as the writer found them.
_FILES: dict[str, tuple[int, int, str]] = {}


def record(path: str, size: int, modified: int, sha256: str) -> None:
    """The file at pyarrow path ``path`` was written with these ``size``, ``modified`` time (ms) and ``sha256``."""
    _FILES[path] = (size, modified, sha256)


def drained() -> dict[str, tuple[int, int, str]]:
    """This process's records, handed on (a task's, to go to the driver with its result) and forgotten here."""
    found = dict(_FILES)
    _FILES.clear()
    return found


def merge(files: Mapping[str, tuple[int, int, str]]) -> None:
    """Records a task handed on (:func:`drained`), kept in this process (the driver's)."""
    _FILES.update(files)


def moved(source: str, target: str) -> None:
    """``source`` (a file or a directory; storage paths or URIs) was renamed ``target``: its records follow it."""
    old, new = arrow_filesystem(source)[1].rstrip("/"), arrow_filesystem(target)[1].rstrip("/")
    for path in [path for path in _FILES if path == old or path.startswith(old + "/")]:
        _FILES[new + path[len(old):]] = _FILES.pop(path)


def linked(source: str, target: str) -> None:
    """``target`` was made a hard link of the file ``source``: the same bytes, size and time, under a second path."""
    found = _FILES.get(arrow_filesystem(source)[1])
    if found is not None:
        _FILES[arrow_filesystem(target)[1]] = found


def digest(path: str, size: int, modified: int) -> str | None:
    """The recorded SHA-256 of the file at ``path`` (a storage path or URI) if it is still the ``size`` and
    ``modified`` time (ms) recorded, else None.
    """
    found = _FILES.get(arrow_filesystem(path)[1])
    return found[2] if found is not None and found[:2] == (size, modified) else None
