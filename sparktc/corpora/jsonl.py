"""Reader for the project's own JSON Lines corpus format (any corpus not covered by a native reader).

One JSON object per line (blank lines skipped, other keys ignored)::

    {"id": "d1", "text": "raw text", "labels": ["earn", "acq"], "split": "train"}

``id`` is a string or an integer (stored as a string), ``text`` a string to be tokenized like
Reuters-21578 text (docs/REFERENCE.md sections 1-2), ``labels`` a list of strings and ``split``
``"train"`` or ``"test"``.

Every line the parser cannot take is a reject, valid JSON included: a line over :data:`MAX_LINE_BYTES`,
nesting deeper than Python's parser goes, a number longer than Python converts, a string with an
unpaired surrogate escape (UTF-8 cannot store it), and a label listed twice (it would count the
document twice as a positive of its category).
"""

from __future__ import annotations

import json
import reprlib
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from sparktc.corpora.records import TEST, TRAIN, Document, Reject

_EXAMPLE = '{"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}'
#: The longest line read as a record (64 MiB): json.loads holds a line's objects several times over.
MAX_LINE_BYTES = 64 << 20


def _encodable(value: str) -> bool:
    """False for a string JSON can hold but UTF-8 cannot: one with a ``\\udXXX`` escape that has no pair."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _usable_id(record: Any) -> str | None:
    """The record's id as a string when it is a non-empty string or an integer, else None."""
    doc_id = record.get("id") if isinstance(record, dict) else None
    # bool is an int subclass; true/false as an id is a mistake, not a number.
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
        return None
    if isinstance(doc_id, str) and not _encodable(doc_id):
        return None
    return str(doc_id)


def _problem(record: Any, labelled: bool) -> str | None:
    """What is wrong with a decoded line, or None when it is a valid document."""
    if not isinstance(record, dict):
        return f"expected a JSON object like {_EXAMPLE}, got {type(record).__name__}"
    for key in ("id", "text", "labels", "split") if labelled else ("id", "text"):
        if key not in record:
            return f"missing field {key!r}; each line must look like {_EXAMPLE}"
    labels = record.get("labels", [])
    listed = labels if isinstance(labels, list) else []
    for key, value in [("id", record["id"]), ("text", record["text"]), *(("labels", label) for label in listed)]:
        if isinstance(value, str) and not _encodable(value):
            return (f"field {key!r} holds an unpaired surrogate escape ({reprlib.repr(value)}), which is no character "
                    "and cannot be stored as UTF-8; fix or drop the escape")
    if _usable_id(record) is None:
        return f"field 'id' must be a non-empty string or an integer, got {reprlib.repr(record['id'])}"
    if not isinstance(record["text"], str):
        return f"field 'text' must be a string, got {type(record['text']).__name__}"
    if not record["text"].strip():
        return "empty text: field 'text' holds nothing but white space; drop the line or give the document its text"
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return f"field 'labels' must be a list of strings, got {reprlib.repr(labels)}"
    repeated = [label for label, n in Counter(labels).items() if n > 1]
    if repeated:
        which = ", ".join(map(reprlib.repr, repeated))
        return f"label{'s' if len(repeated) > 1 else ''} {which} repeated in field 'labels'; list each label once"
    if (labelled or "split" in record) and record["split"] not in (TRAIN, TEST):
        return f"field 'split' must be {TRAIN!r} or {TEST!r}, got {reprlib.repr(record['split'])}"
    return None


def parse_jsonl(lines: Iterable[bytes], source: str, labelled: bool = True) -> Iterator[Document | Reject]:
    """Yield a Document (``text`` set, ``tokens=None``) or a Reject per non-blank line.

    Rejected, with the line number: a line over :data:`MAX_LINE_BYTES`, non-UTF-8 bytes, invalid JSON,
    JSON too deeply nested or with a number too long for Python, a missing or wrongly typed field, a
    string with an unpaired surrogate escape, an empty text, a repeated label, a split other than
    train/test, and an id already accepted earlier in the file.
    ``labelled=False`` (documents to classify) makes ``labels`` and ``split`` optional: no labels, no split.
    """
    accepted: set[str] = set()
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE_BYTES:
            reason = (f"line of {len(raw):,} bytes, over the limit of {MAX_LINE_BYTES >> 20} MiB per record "
                      "(sparktc.corpora.jsonl.MAX_LINE_BYTES); shorten the record")
            yield Reject(source, number, None, reason)
            continue
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
        except RecursionError:
            yield Reject(source, number, None, "JSON nested too deeply (Python's parser stops at its recursion limit, "
                                               "about 1,000 levels); flatten the record")
            continue
        except ValueError:  # the only other ValueError json.loads raises: int() refusing a long number
            yield Reject(source, number, None, f"number too long: over {sys.get_int_max_str_digits():,} digits "
                                               "(Python's int conversion limit); write it as a string")
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
            yield Document(doc_id, record.get("split"), tuple(record.get("labels", ())), record["text"], None, source,
                           number)
