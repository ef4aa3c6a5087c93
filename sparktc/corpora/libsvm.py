"""Reader for multi-label LIBSVM files, as LibMultiLabel reads them and as the LIBSVM data page distributes
RCV1-v2: a corpus of given feature vectors (LibMultiLabel's "Dataset Formats, LibSVM Format",
https://www.csie.ntu.edu.tw/~cjlin/libmultilabel/cli/ov_data_format.html#libsvm-format; REFERENCE.md section 5
for LibMultiLabel's linear defaults and section 7 for its published RCV1-v2 figures).

``corpus.path`` holds ``train.svm`` and ``test.svm`` (each plain, ``.gz`` or ``.bz2``); one document per line::

    label1,label2 index:value index:value ...

* The labels are the first whitespace-separated field when it holds no ``:``: labels separated by commas,
  each any non-empty string without white space, comma or colon (numbers on the LIBSVM data page) that is a
  label by :func:`sparktc.corpora.labels.label_problem` (no control or invisible format character, such as
  a byte order mark before the first label of a file). A line that starts with white space, or whose first
  field holds a ``:``, has no labels (an unlabelled document). A label given twice counts once.
* Every other field is a feature ``index:value``: the index a whole number from 1 (no sign), the value a
  finite decimal number; indices may come in any order, each at most once per line. A document without
  features is kept.
* ``#`` starts a comment to the end of the line; blank lines are skipped.

A document's id is ``<file>:<line>`` (``train.svm:12``, whatever the compression); its split is the file's;
its features are stored as its tokens, ``index:value`` strings in ascending index order with the value
written as Python's shortest round-trip repr of the float (``3:0.5``). The reader never raises on bad input:
a line it cannot take is a reject naming the field and what is expected, and a file of another name is
one reject for the whole file.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Iterable, Iterator

from sparktc.corpora.files import COMPRESSIONS, base_name
from sparktc.corpora.labels import label_problem
from sparktc.corpora.records import TEST, TRAIN, Document, Reject

__all__ = ["MAX_INDEX", "TEST_FILE", "TRAIN_FILE", "parse_libsvm", "split_of"]

TRAIN_FILE = "train.svm"
TEST_FILE = "test.svm"
#: The largest feature index read: LIBLINEAR (LibMultiLabel's linear solver) holds indices as C ints.
MAX_INDEX = 2**31 - 1
_MAX_INDEX_DIGITS = len(str(MAX_INDEX))

_SUFFIXES = " or ".join(COMPRESSIONS)
_FEATURE_HINT = "each feature is 'index:value', a whole number from 1 and a decimal number, as in '3:0.5'"
# The values C's strtod reads as finite decimals (what LIBSVM tools read), without hexadecimal, inf and nan.
_FEATURE = re.compile(r"([0-9]+):([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_INDEX = re.compile(r"[0-9]+")


def split_of(source: str) -> str:
    """``"train"`` or ``"test"`` for a LIBSVM corpus file name (any directory, ``.gz``, ``.bz2`` or neither)."""
    name = base_name(source)
    if name == TRAIN_FILE:
        return TRAIN
    if name == TEST_FILE:
        return TEST
    raise ValueError(f"{source!r} is not a LIBSVM corpus file; expected {TRAIN_FILE} or {TEST_FILE} "
                     f"(optionally {_SUFFIXES})")


def _feature_problem(field: str) -> str:
    """Why ``field`` (which :data:`_FEATURE` does not match) is not a feature, with what is expected."""
    shown = reprlib.repr(field)
    index, colon, value = field.partition(":")
    if not colon or not index or not value:
        return f"field {shown} is not 'index:value'; {_FEATURE_HINT}"
    if not _INDEX.fullmatch(index):
        return f"field {shown}: index {reprlib.repr(index)} is not a whole number (digits only); {_FEATURE_HINT}"
    return f"field {shown}: value {reprlib.repr(value)} is not a finite decimal number; {_FEATURE_HINT}"


def _parse_line(text: str) -> tuple[tuple[str, ...], tuple[str, ...]] | str:
    """The labels and feature tokens of a non-blank line with its comment removed, or why it is rejected."""
    fields = text.split()
    labels: dict[str, None] = {}
    if not text[0].isspace() and ":" not in fields[0]:
        labels_field = fields.pop(0)
        for label in labels_field.split(","):
            if not label:
                return (f"empty label in {reprlib.repr(labels_field)}; separate labels by single commas, "
                        "with none at either end")
            # White space ends the field, so only characters like a control or a byte order mark remain to check.
            problem = label_problem(label, "in the labels field")
            if problem is not None:
                return problem
            labels.setdefault(label)
    features: dict[int, tuple[str, float]] = {}
    for field in fields:
        match = _FEATURE.fullmatch(field)
        if match is None:
            return _feature_problem(field)
        digits = match[1].lstrip("0")
        if not digits:
            return (f"field {reprlib.repr(field)}: index 0 is below 1; LIBSVM indices start at 1 "
                    "(add 1 to every index of a 0-based file)")
        # Compared by length first: int() refuses numbers of over 4,300 digits.
        if len(digits) > _MAX_INDEX_DIGITS or int(digits) > MAX_INDEX:
            return (f"field {reprlib.repr(field)}: index over {MAX_INDEX:,}, the largest LIBLINEAR reads; "
                    "renumber the features from 1")
        index, value = int(digits), float(match[2])
        if not math.isfinite(value):
            return f"field {reprlib.repr(field)}: value {reprlib.repr(match[2])} overflows a float; {_FEATURE_HINT}"
        if index in features:
            first = reprlib.repr(features[index][0])
            return f"index {index} repeated ({first} and {reprlib.repr(field)}); give each index once per line"
        features[index] = (field, value)
    tokens = tuple(f"{index}:{features[index][1]!r}" for index in sorted(features))
    return tuple(labels), tokens


def parse_libsvm(lines: Iterable[bytes], source: str) -> Iterator[Document | Reject]:
    """Yield a Document (``tokens`` set to the features, ``text=None``) or a Reject per non-blank line.

    Rejected, with the line number: a non-UTF-8 line, an empty label or one that is not a label
    (:func:`~sparktc.corpora.labels.label_problem`), a field that is not ``index:value``,
    an index that is not a whole number from 1 to :data:`MAX_INDEX`, a value that is not a finite decimal
    number, and an index repeated on its line. A file not named ``train.svm`` or ``test.svm`` (optionally
    compressed) is one Reject (line 0) and none of its lines is read.
    """
    try:
        split = split_of(source)
    except ValueError:
        yield Reject(source, 0, None, f"not a LIBSVM corpus file name; name the files {TRAIN_FILE} and {TEST_FILE} "
                                      f"(optionally {_SUFFIXES})")
        return
    name = base_name(source)
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield Reject(source, number, None, "line is not valid UTF-8; re-encode the file as UTF-8")
            continue
        text = text.split("#", 1)[0]
        if not text.strip():
            continue
        parsed = _parse_line(text)
        if isinstance(parsed, str):
            yield Reject(source, number, None, parsed)
        else:
            labels, tokens = parsed
            yield Document(f"{name}:{number}", split, labels, None, tokens, source, number)
