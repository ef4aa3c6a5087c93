"""Reader for the project's own JSON Lines corpus format (any corpus not covered by a native reader).

One JSON object per line (blank lines skipped, other keys ignored)::

    {"id": "d1", "text": "raw text", "labels": ["earn", "acq"], "split": "train"}

``id`` is a string or an integer (stored as a string), ``text`` a string to be tokenized like
Reuters-21578 text (docs/REFERENCE.md sections 1-2), ``labels`` a list of strings and ``split``
``"train"`` or ``"test"``. A text that is empty or white space only is a document without tokens, kept and
counted (a test document's labels are then missed unless a model assigns them without a term), as LibMultiLabel
and sparktc's LibMultiLabel text reader keep it: one corpus gives one test set in every format. Each label must
be a label by :func:`sparktc.corpora.labels.label_problem`: not empty, no white space at either end, no control,
separator or invisible format character (JSON delimits a label by its quotes, so nothing is trimmed: ``" earn"``
is rejected, not read as ``"earn"``).

Every line the parser cannot take is a reject, valid JSON included: a line over :data:`MAX_LINE_BYTES`,
nesting deeper than Python's parser goes, a number longer than Python converts, a string with an
unpaired surrogate escape (UTF-8 cannot store it), a key repeated in any object of the line (JSON
parsers keep one value or the other silently, so a record could change its id unseen), a label that is
not a label, and a label listed twice (it would count the document twice as a positive of its category).
"""

from __future__ import annotations

import json
import reprlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from sparktc.corpora.files import line_reader
from sparktc.corpora.formats import LABELLED, CorpusFormat, CorpusNames
from sparktc.corpora.labels import label_problem
from sparktc.corpora.records import TEST, TRAIN, Document, Reject, decoded_line

__all__ = ["FORMAT", "MAX_LINE_BYTES", "parse_jsonl", "record_problem", "valid_record"]

_EXAMPLE = '{"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}'
#: The longest line read as a record (64 MiB): json.loads holds a line's objects several times over.
MAX_LINE_BYTES = 64 << 20


class _RepeatedKey(Exception):
    """A JSON object names ``key`` twice (not a ValueError: that means a number too long to convert)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A decoded object's dict, raising _RepeatedKey when a key repeats (then the dict is shorter than the pairs)."""
    record = dict(pairs)
    if len(record) != len(pairs):  # rare: only then look for the key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return record


# One decoder for every line: json.loads with a hook would build a decoder per call, which costs more than the hook.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _loads(text: str) -> Any:
    """``json.loads(text)``, with a key repeated in any object of ``text`` raising _RepeatedKey."""
    if text.startswith("\ufeff"):  # json.loads refuses a byte order mark this way; the decoder alone would not
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


def _encodable(value: str) -> bool:
    r"""False for a string JSON can hold but UTF-8 cannot: one with a ``\udXXX`` escape that has no pair."""
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
    return record_problem(record, labelled, _field)


def _field(key: str) -> str:
    return f"field {key!r}"


def record_problem(record: dict[str, Any], labelled: bool, named: Callable[[str], str]) -> str | None:
    """What is wrong with a record's ``id``, ``text``, ``labels`` and ``split`` (``labels`` and ``split`` optional
    unless ``labelled``), each named in the reason by ``named(key)`` ("field 'labels'", "column 'topics'"), or None
    when it is a valid document: the checks of every record of JSON Lines and of a table corpus
    (:mod:`sparktc.corpora.table`).
    """
    labels = record.get("labels", [])
    listed = labels if isinstance(labels, list) else []
    for key, value in [("id", record["id"]), ("text", record["text"]), *(("labels", label) for label in listed)]:
        if isinstance(value, str) and not _encodable(value):
            return (f"{named(key)} holds an unpaired surrogate escape ({reprlib.repr(value)}), which is no character "
                    "and cannot be stored as UTF-8; fix or drop the escape")
    if _usable_id(record) is None:
        return f"{named('id')} must be a non-empty string or an integer, got {reprlib.repr(record['id'])}"
    if not isinstance(record["text"], str):
        return f"{named('text')} must be a string, got {type(record['text']).__name__}"
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return f"{named('labels')} must be a list of strings, got {reprlib.repr(labels)}"
    for label in labels:
        problem = label_problem(label, f"in {named('labels')}")
        if problem is not None:
            return problem
    repeated = [label for label, n in Counter(labels).items() if n > 1]
    if repeated:
        which = ", ".join(map(reprlib.repr, repeated))
        return f"label{'s' if len(repeated) > 1 else ''} {which} repeated in {named('labels')}; list each label once"
    if (labelled or "split" in record) and record["split"] not in (TRAIN, TEST):
        return f"{named('split')} must be {TRAIN!r} or {TEST!r}, got {reprlib.repr(record['split'])}"
    return None


def valid_record(record: Any, labelled: bool) -> bool:
    """True only when :func:`record_problem` finds nothing wrong with ``record`` (a dict holding its keys), decided
    quickly for the common record (exact types, ASCII or encodable strings, distinct labels); False sends the record
    to :func:`record_problem`, which says what is wrong, if anything.
    """
    if type(record) is not dict:
        return False
    text, doc_id = record.get("text"), record.get("id")
    if type(text) is not str or not (text.isascii() or _encodable(text)):
        return False
    if type(doc_id) is str:
        if not doc_id or not (doc_id.isascii() or _encodable(doc_id)):
            return False
    elif type(doc_id) is not int:  # bool is no int here: type() is exact
        return False
    labels = record.get("labels") if labelled else record.get("labels", _NO_LABELS)
    if type(labels) is not list:
        return False
    for label in labels:
        if type(label) is not str or not (label.isascii() or _encodable(label)) or \
                label_problem(label, "in field 'labels'") is not None:
            return False
    if len(labels) > 1 and len(set(labels)) != len(labels):
        return False
    return not (labelled or "split" in record) or record.get("split") in (TRAIN, TEST)


_NO_LABELS: list[str] = []


def parse_jsonl(lines: Iterable[bytes], source: str, labelled: bool = True) -> Iterator[Document | Reject]:
    """Yield a Document (``text`` set, ``tokens=None``) or a Reject per non-blank line.

    Rejected, with the line number: a line over :data:`MAX_LINE_BYTES`, non-UTF-8 bytes, invalid JSON,
    JSON too deeply nested or with a number too long for Python, a key repeated in any object, a missing or
    wrongly typed field, a string with an unpaired surrogate escape, a label that is not a
    label (:func:`~sparktc.corpora.labels.label_problem`), a repeated label, a split other than train/test,
    and an id already accepted earlier in the file.
    ``labelled=False`` (documents to classify) makes ``labels`` and ``split`` optional: no labels, no split.
    """
    accepted: set[str] = set()
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE_BYTES:
            reason = (f"line of {len(raw):,} bytes, over the limit of {MAX_LINE_BYTES >> 20} MiB per record "
                      "(sparktc.corpora.jsonl.MAX_LINE_BYTES); shorten the record")
            yield Reject(source, number, None, reason)
            continue
        text = decoded_line(raw, source, number)
        if isinstance(text, Reject):
            yield text
            continue
        text = text.rstrip()  # the line ending would make error columns point past the line
        if not text:
            continue
        try:
            record = _loads(text)
        except _RepeatedKey as repeated:
            yield Reject(source, number, None, f"key {reprlib.repr(repeated.key)} repeated in a JSON object; "
                                               "give each key once")
            continue
        except json.JSONDecodeError as exc:
            yield Reject(source, number, None, f"invalid JSON ({exc.msg}: column {exc.colno}); one object per line")
            continue
        except RecursionError:
            yield Reject(source, number, None, "JSON nested too deeply (Python's parser stops at its recursion limit, "
                                               "about 1,000 levels); flatten the record")
            continue
        except ValueError:  # the only other ValueError the decoder raises: int() refusing a long number
            yield Reject(source, number, None, f"number too long: over {sys.get_int_max_str_digits():,} digits "
                                               "(Python's int conversion limit); write it as a string")
            continue
        problem = None if valid_record(record, labelled) else _problem(record, labelled)
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


#: JSON Lines as ``corpus.format = "jsonl"``: every ``*.jsonl`` file in corpus.path, the records carrying their labels;
#: classify reads new documents in it, labels and split optional.
FORMAT = CorpusFormat(
    name="jsonl",
    title="JSON lines",
    assembly=LABELLED,
    names=CorpusNames(r"[^._].*\.jsonl(\.gz)?", r"[^._].*\.jsonl.*", "JSON Lines files (*.jsonl or *.jsonl.gz)"),
    hint="set corpus.path to the directory holding them",
    reader=line_reader(parse_jsonl),
    classify=line_reader(partial(parse_jsonl, labelled=False)),
)
