"""What every corpus reader yields: an accepted document or a rejected record.

Readers are plain generators over a file's lines, run on the executors; they never raise on
bad input. A record they cannot use becomes a :class:`Reject` naming the file, the line and
the reason, so the ingest stage can either stop with that message or set the record aside
in the ``rejects`` table, and the counts of records in and out always add up.
"""

from __future__ import annotations

from dataclasses import dataclass

TRAIN = "train"
TEST = "test"


@dataclass(frozen=True, slots=True)
class Document:
    """One document as read from the corpus, before any category set is applied.

    ``split`` is ``"train"``, ``"test"`` or ``None`` when the corpus split leaves the document
    unused (Reuters-21578 ModApte drops LEWISSPLIT NOT-USED and TOPICS NO). Exactly one of
    ``text`` (raw text, to be tokenized) and ``tokens`` (already tokenized and stemmed) is set.
    ``source`` and ``line`` locate the record for error messages (line is 1-based).
    """

    doc_id: str
    split: str | None
    labels: tuple[str, ...]
    text: str | None
    tokens: tuple[str, ...] | None
    source: str
    line: int


@dataclass(frozen=True, slots=True)
class Reject:
    """A record the reader could not accept; ``line`` is 1-based, 0 when the whole file failed."""

    source: str
    line: int
    doc_id: str | None
    reason: str

    def message(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        who = f" (doc {self.doc_id})" if self.doc_id is not None else ""
        return f"{where}{who}: {self.reason}"
