"""The files of a corpus directory: exactly the names a format reads (``CorpusFormat.names``), each a file; other
versions of corpus files (backups, partial copies) named as ignored, never passed over in silence; and, of them,
the document files of ``corpus.test_parts`` (:func:`list_corpus`, :func:`document_files`, :func:`named_files`).
"""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING

from pyspark.sql import SparkSession

from sparktc.corpora.formats import CorpusFormat, CorpusNames
from sparktc.errors import InputError
from sparktc.filesystem import local_path
from sparktc.runtime import storage

if TYPE_CHECKING:  # a parsing task's worker imports this module for IngestError, and not the configuration
    from sparktc.experiment.config import CorpusConfig

__all__ = ["IGNORED_SHOWN", "IngestError", "document_files", "list_corpus", "named_files"]


class IngestError(InputError):
    """Bad corpus input met with ``corpus.on_error = "fail"``, or corpus files that are missing, not files,
    given twice (``NAME`` and ``NAME.gz``) or not readable.
    """


#: Ignored names a message shows (all of them are in the ingest manifest).

#: How many ignored names the console line shows (the manifest has them all).
IGNORED_SHOWN = 10
_REPLACE = "replace it with the file itself, or move it out of corpus.path"


def _not_a_file(path: str) -> str | None:
    """What the local ``path`` is when it is not a regular file (following symbolic links), with what to do."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"a symbolic link to {os.readlink(path)}, which does not exist; restore that file, or remove the link"
    except OSError as error:  # a loop of symbolic links
        return f"a path that cannot be followed ({error.strerror}); {_REPLACE}"
    if stat.S_ISREG(mode):
        return None
    kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device")
    return f"{kind}, not a file; {_REPLACE}"


def list_corpus(spark: SparkSession, directory: str, names: CorpusNames, hint: str) -> tuple[list[str], list[str]]:
    """The corpus files in ``directory`` (full paths, sorted) and the names of the entries that resemble
    corpus files but are not read (printed here, for the report's ``ignored_files``).

    Listed through :mod:`sparktc.runtime.storage`, and on a local disk checked entry by entry with ``os``: a
    dangling symbolic link, a FIFO or a socket is named (Spark would wait on a FIFO forever). IngestError for an
    entry with a corpus file's name that is not a regular file, for ``NAME`` beside ``NAME.gz`` or ``NAME.bz2`` (the
    same records twice), and for no corpus file.
    """
    found = storage.kind(spark, directory)
    if found is None:
        raise IngestError(f"corpus.path {directory} does not exist; {hint}")
    if found != "directory":
        raise IngestError(f"corpus.path {directory} is a file, not a directory; {hint}")
    root = storage.qualified(spark, directory)
    local = local_path(directory)
    listed = storage.entries(spark, directory)
    files, unusable, ignored = [], [], []
    for name in sorted(listed):
        if re.fullmatch(names.accepted, name):
            path = f"{root}/{name}"
            if local is not None:
                problem = _not_a_file(os.path.join(local, name))
            else:
                problem = None if listed[name] else f"not a file; {_REPLACE}"
            if problem:
                unusable.append(f"{path} is {problem}")
            else:
                files.append(path)
        elif re.fullmatch(names.resembling, name):
            ignored.append(name)
    if unusable:
        raise IngestError("\n".join(unusable))
    by_base: dict[str, list[str]] = {}
    for path in files:  # NAME, NAME.gz and NAME.bz2 are one file's copies
        by_base.setdefault(re.sub(r"\.(gz|bz2)$", "", path), []).append(path)
    doubled = [" and ".join(copies) for copies in by_base.values() if len(copies) > 1]
    if doubled:
        raise IngestError("\n".join(f"both {pair} are in corpus.path: the same records would be read twice; keep one"
                                     for pair in doubled))
    if not files:
        raise IngestError(f"no {names.what} found in {directory}; {hint}")
    if ignored:
        shown = ", ".join(ignored[:IGNORED_SHOWN])
        more = f", and {len(ignored) - IGNORED_SHOWN:,} more (all in the ingest manifest)" \
            if len(ignored) > IGNORED_SHOWN else ""
        print(f"sparktc: ingest: ignoring {len(ignored):,} file(s) in corpus.path that are not corpus files: "
              f"{shown}{more}", flush=True)
    return files, ignored


def named_files(files: list[str], name: str, directory: str, form: CorpusFormat) -> list[str]:
    """The corpus file ``name``, plain or with one of the format's compressions, among ``files``; IngestError when it
    is not there.
    """
    copies = (name, *(name + suffix for suffix in form.compressions))
    found = [path for path in files if path.rsplit("/", 1)[-1] in copies]
    if not found:
        first, *others = form.compressions
        raise IngestError(f"no {name} (or {name}{first}{''.join(f', {suffix}' for suffix in others)}) found in "
                          f"{directory}; {form.hint}")
    return found


def document_files(files: list[str], corpus: CorpusConfig, form: CorpusFormat) -> list[str]:
    """The files of ``files`` that hold the corpus's documents: every one for a format of no fixed names, else those
    of the format's names for ``corpus.test_parts`` (IngestError for one that is not there).
    """
    if form.document_files is None:
        return files
    return [path for name in form.document_files(corpus.test_parts)
            for path in named_files(files, name, corpus.path, form)]

