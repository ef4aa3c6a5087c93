"""Ingest: corpus files -> ``documents``, ``categories``, ``rejects`` and ``terms`` tables.

Files are read and parsed on the executors by the pure readers in :mod:`sparktc.corpora`, one file (or byte range of
a large plain file) per task, so records keep their file and line. The files read are exactly those of the format's
names in corpus.path (``NAME`` or ``NAME.gz``, never both); an entry of such a name that is no file stops ingest,
and other versions of corpus files (backups, partial copies) are named as ignored, never passed over in silence.
Every record ends in exactly one place: ``documents``, ``rejects`` (malformed input), or a set-aside count with its
reason (outside the split, no category of the chosen set); the stage report checks that these add up to the
records read.

A module per concern: ``parsing``, the parsing tasks (files to staged Parquet, each task counting what it writes,
and the hashes of its doc ids); ``assemblies``, the corpora whose records carry their labels (a category set chosen
from their positives, files of labelled lines); ``qrels``, LYRL2004's corpora, labelled by the qrels while they are
parsed (the staged label index, the tokens as training term ids, weighted for the weight stage), with what their
tasks run on the workers in ``on_workers``; ``outputs``, the tables written, by the short path for a clean corpus or
the general one; and ``stage``, the entry, :func:`ingest`, which picks the assembly by the format's and hands the
weighted vectors on (and the stage of a table corpus given as a DataFrame, :func:`given_documents`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparktc.stages.ingest.stage import STAGE, given_documents, ingest

__all__ = ["STAGE", "given_documents", "ingest"]


def __getattr__(name: str) -> Any:
    """``STAGE``, ``given_documents`` and ``ingest``, imported when first asked for: a parsing task's worker
    unpickles functions of :mod:`sparktc.stages.ingest.parsing` and needs none of them, nor the configuration and
    pandas they import (1.2 of a worker's 2.6 s of imports, in each Python worker of every ingest).
    """
    if name in __all__:
        from sparktc.stages.ingest import stage

        return getattr(stage, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
