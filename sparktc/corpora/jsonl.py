"""Reader for the project's own JSON Lines corpus format (any corpus not covered by a native reader).

One JSON object per line (blank lines skipped, other keys ignored)::

    {"id": "d1", "text": "raw text", "labels": ["earn", "acq"], "split": "train"}

``id`` is a string or an integer (stored as a string), ``text`` a string to be tokenized like
Reuters-21578 text (docs/REFERENCE.md sections 1-2), ``labels`` a list of strings and ``split``
``"train"`` or ``"test"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from sparktc.records import TEST, TRAIN, Document, Reject

_EXAMPLE = '{"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}'


def _usable_id(record: Any) -> str | None:
    """The record's id as a string when it is a non-empty string or an integer, else None."""
    doc_id = record.get("id") if isinstance(record, dict) else None
    # bool is an int subclass; true/false as an id is a mistake, not a number.
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
        return None
    return str(doc_id)


def _problem(record: Any, labelled: bool) -> str | None:
    """What is wrong with a decoded line, or None when it is a valid document."""
    if not isinstance(record, dict):
        return f"expected a JSON object like {_EXAMPLE}, got {type(record).__name__}"
    for key in ("id", "text", "labels", "split") if labelled else ("id", "text"):
        if key not in record:
            return f"missing field {key!r}; each line must look like {_EXAMPLE}"
    if _usable_id(record) is None:
        return f"field 'id' must be a non-empty string or an integer, got {record['id']!r}"
    if not isinstance(record["text"], str):
        return f"field 'text' must be a string, got {type(record['text']).__name__}"
    if not record["text"].strip():
        return "empty text: field 'text' holds nothing but white space; drop the line or give the document its text"
    labels = record.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return f"field 'labels' must be a list of strings, got {labels!r}"
    if (labelled or "split" in record) and record["split"] not in (TRAIN, TEST):
        return f"field 'split' must be {TRAIN!r} or {TEST!r}, got {record['split']!r}"
    return None


def parse_jsonl(lines: Iterable[bytes], source: str, labelled: bool = True) -> Iterator[Document | Reject]:
    """Yield a Document (``text`` set, ``tokens=None``) or a Reject per non-blank line.

    Rejected, with the line number: non-UTF-8 bytes, invalid JSON, a missing or wrongly typed
    field, an empty text, a split other than train/test, and an id already accepted earlier in the file.
    ``labelled=False`` (documents to classify) makes ``labels`` and ``split`` optional: no labels, no split.
    """
    accepted: set[str] = set()
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield Reject(source, number, None, "line is not valid UTF-8; re-encode the file as UTF-8")
            continue
        text = text.rstrip()  # the line ending would make error columns point past the line
        if not text:
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            yield Reject(source, number, None, f"invalid JSON ({exc.msg}: column {exc.colno}); one object per line")
            continue
        problem = _problem(record, labelled)
        if problem is not None:
            yield Reject(source, number, _usable_id(record), problem)
            continue
        doc_id = str(record["id"])
        if doc_id in accepted:
            reason = f"duplicate id {doc_id!r} (already read earlier in this file); keep one line per id"
            yield Reject(source, number, doc_id, reason)
        else:
            accepted.add(doc_id)
            yield Document(doc_id, record.get("split"), tuple(record.get("labels", ())), record["text"], None, source, number)
