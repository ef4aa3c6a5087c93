r"""Reader for LibMultiLabel's text format, as LibMultiLabel reads it and as the LIBSVM data page distributes RCV1-v2's
texts (``rcv1_topics_train.txt``, ``rcv1_topics_test.txt``): LibMultiLabel's "Dataset Formats, LibMultiLabel
Format", https://www.csie.ntu.edu.tw/~cjlin/libmultilabel/cli/ov_data_format.html#libmultilabel-format;
REFERENCE.md section 3 for its tf-idf and section 5 for its linear defaults.

``corpus.path`` holds ``train.txt`` and ``test.txt`` (each plain, ``.gz`` or ``.bz2``); one document per line, its
fields separated by tabs, the id optional::

    2286<TAB>E11 ECAT M11 M12 MCAT<TAB>recov recov excit ...
    E11 ECAT M11 M12 MCAT<TAB>recov recov excit ...

LibMultiLabel reads a file with ``pandas.read_csv(path, sep="\t", header=None, on_bad_lines="warn",
quoting=csv.QUOTE_NONE).fillna("").astype(str)`` (``libmultilabel.linear.preprocessor.read_libmultilabel_format``,
0.10.0), and so does this reader, line by line, except where pandas would lose a line or change a field unseen:

* A line of spaces only, or empty, is skipped, as pandas skips it. A byte order mark at the start of the file is
  dropped, as pandas drops it. Lines end in ``\n`` or ``\r\n``; quotes and ``#`` are characters like any other.
* The file's first line (its first not skipped) fixes its columns, as in pandas: 2 fields are (labels, text), 3
  are (id, labels, text). Deciding line by line instead would read a 3-field line of a 2-column file as having an
  id, where LibMultiLabel skips it, and a 2-field line of a 3-column file as labels and text, where LibMultiLabel
  reads an id and labels: the file's columns keep LibMultiLabel's meaning for every line. A first line of another
  count, which LibMultiLabel refuses (``ValueError``), is one reject for the whole file (line 0); none of its lines
  is read.
* A line with more fields than the file's is a reject naming both counts (pandas skips it with only a warning: a
  tab inside a text). One with fewer has no text field (pandas reads ``""``): a reject, where LibMultiLabel keeps a
  document without words, because a field went missing (a one-field line of a 2-column file may as well be a
  text without its labels field, which would be read as labels).
* A text field that is empty or white space only (``id<TAB>labels<TAB>``) is a document without words, kept and
  counted (a test document's labels are then missed unless a model assigns them without a term), as LibMultiLabel
  keeps it and as the JSON Lines reader keeps an empty text: one corpus gives one test set in every format. A text
  whose words are all stop words is a document, without tokens, likewise.
* The labels are the labels field split at white space (``str.split``, as LibMultiLabel splits it), each a label by
  :func:`sparktc.corpora.labels.label_problem`; none is an unlabelled document. A label given twice on a line
  counts once, as LibMultiLabel's label binarizer counts it.
* A document's id is the id field, as written and not empty; in a 2-column file, ``<file>:<line>`` as the LIBSVM
  reader makes it (``train.txt:12``, whatever the compression), which names where the document is and needs no count
  of the lines before a byte range. LibMultiLabel's id there is the document's row, counted from 0 among the rows it
  keeps (no blank or skipped line), so for a file of documents only its id ``k`` is sparktc's ``train.txt:{k+1}``.
  A repeated id, in a file or across ``train.txt`` and ``test.txt``, is rejected by ingest after its first
  occurrence (:func:`sparktc.experiment.tables.mark_duplicates`), however the files are cut into ranges.
* Every field is kept as written. pandas reads a column of numbers as numbers and its default NA strings
  (``NA``, ``null``, ``None``, ``nan``, ...) as missing: an id ``007`` becomes ``7`` in LibMultiLabel, a labels
  field ``NA`` no labels, a text ``null`` empty; here they stay ``007``, the label ``NA`` and the text ``null``.
* Rejected too, with the line: a line that is not UTF-8 (pandas stops at the file), a carriage return inside a
  line (pandas ends a line there) and a NUL byte (pandas cuts its field there). A corrupt ``.gz`` or ``.bz2`` stream
  ends the file with one reject naming the last line read (:func:`sparktc.corpora.files.corrupt_gzip`), and a file
  of another name is one reject for the whole file.

The split is the file's (``train.txt``: train, ``test.txt``: test); the text is raw text, tokenized by the tokenize
stage. A large plain file is read in byte ranges, one ingest task each (:mod:`sparktc.corpora.line_ranges`), each
range knowing the file's columns from its first line: the records are those of the whole file.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial

import pyarrow as pa

from sparktc.corpora.files import COMPRESSIONS, base_name, line_reader
from sparktc.corpora.formats import LABELLED, ByteRanges, CorpusFormat, CorpusNames
from sparktc.corpora.labels import label_problem
from sparktc.corpora.line_ranges import count_newlines, file_ranges, range_lines
from sparktc.corpora.records import TEST, TRAIN, Document, Reject, decoded_line, record_batches

__all__ = ["FORMAT", "LAYOUTS", "TEST_FILE", "TRAIN_FILE", "Columns", "file_columns", "parse_libmultilabel_text",
           "read_range"]

TRAIN_FILE = "train.txt"
TEST_FILE = "test.txt"
_SPLITS = {TRAIN_FILE: TRAIN, TEST_FILE: TEST}
#: The fields of a line, by the number of fields of the file's first line.
LAYOUTS = {2: "labels, text", 3: "id, labels, text"}
_BOM = b"\xef\xbb\xbf"
_READ = 1 << 20  # bytes read at a time from a file's start to find its first line


@dataclass(frozen=True)
class Columns:
    """A file's fields per line, ``count``, as its first line ``line`` (the first not skipped) has them."""

    count: int
    line: int

    def problem(self) -> str | None:
        """Why a file whose first line has this many fields cannot be read, or None when it can."""
        if self.count in LAYOUTS:
            return None
        shown = " or ".join(f"{count} ({layout})" for count, layout in LAYOUTS.items())
        return (f"its first line (line {self.line}) has {_fields(self.count)}, and a file's first line fixes its "
                f"columns: {shown}, separated by single tabs (LibMultiLabel refuses the file too); none of its lines "
                "is read: fix the file")


def _fields(count: int) -> str:
    return f"{count} tab-separated field{'s' if count != 1 else ''}"


def _content(raw: bytes, number: int) -> bytes:
    r"""Line ``number``'s bytes without its ending (``\n``, ``\r\n``) and, on the file's first line, its byte
    order mark.
    """
    if raw.endswith(b"\n"):
        raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
    elif raw.endswith(b"\r"):  # the file's last line, ended by a carriage return alone: pandas ends a line there
        raw = raw[:-1]
    return raw[len(_BOM):] if number == 1 and raw.startswith(_BOM) else raw


def _blank(content: bytes) -> bool:
    """A line pandas skips: empty or spaces only (a tab makes fields; any other character, white space too, text)."""
    return not content.strip(b" ")


def parse_libmultilabel_text(lines: Iterable[bytes], source: str, first_line: int = 1,
                             columns: Columns | None = None, corpus: bool = True) -> Iterator[Document | Reject]:
    """Yield a Document (``text`` set, ``tokens=None``) or a Reject per line that is not blank (module docstring).

    ``lines`` are the file's from line ``first_line`` on; ``columns`` are the file's (:func:`file_columns`), None
    to take them from the first line that is not blank. A file whose first line has neither 2 nor 3 fields, or
    (in a ``corpus``) that is not named ``train.txt`` or ``test.txt`` (optionally compressed), is one Reject
    (line 0) and none of its lines is read. Documents to classify (``corpus=False``) come in files of any name,
    without a split; their labels field is read and checked as a corpus's.
    """
    name = base_name(source)
    split = _SPLITS.get(name)
    if split is None and corpus:
        suffixes = " or ".join(COMPRESSIONS)
        yield Reject(source, 0, None, f"not a LibMultiLabel text corpus file name; name the files {TRAIN_FILE} and "
                                      f"{TEST_FILE} (optionally {suffixes})")
        return
    for number, raw in enumerate(lines, first_line):
        content = _content(raw, number)
        if _blank(content):
            continue
        if columns is None:
            columns = Columns(content.count(b"\t") + 1, number)
        problem = columns.problem()
        if problem is not None:
            yield Reject(source, 0, None, problem)
            return
        yield _record(content, source, f"{name}:{number}", split, number, columns)


def _record(content: bytes, source: str, line_id: str, split: str, number: int, columns: Columns) -> Document | Reject:
    """The Document or Reject of a line that is not blank (``content``: without its ending)."""
    text = decoded_line(content, source, number)
    if isinstance(text, Reject):
        return text
    fields = text.split("\t")
    doc_id = fields[0] if columns.count == 3 else None
    reject_id = doc_id if doc_id and not doc_id.isspace() else None

    def reject(reason: str) -> Reject:
        return Reject(source, number, reject_id, reason)

    if "\r" in text:
        return reject("a carriage return (\\r) inside the line, where LibMultiLabel's reader (pandas) would end the "
                      "line; remove it (a line ends in \\n or \\r\\n)")
    if "\0" in text:
        return reject("a NUL byte (\\x00) in the line, where LibMultiLabel's reader (pandas) would cut its field "
                      "short; remove it")
    if len(fields) != columns.count:
        file_has = (f"where the file has {columns.count} ({LAYOUTS[columns.count]}), as its first line "
                    f"(line {columns.line}) has them")
        if len(fields) > columns.count:
            return reject(f"{_fields(len(fields))} {file_has}: LibMultiLabel's reader skips such a line with only a "
                          "warning; no field may hold a tab: replace the tabs inside the text by spaces")
        return reject(f"{_fields(len(fields))} {file_has}: no text (LibMultiLabel reads an empty one); "
                      "give the document its text, or drop the line")
    if doc_id is not None and (not doc_id or doc_id.isspace()):
        return reject("empty id: the first field holds nothing but white space; give each document an id, or drop "
                      "the id column from every line of the file")
    labels_field, body = fields[-2], fields[-1]
    labels = labels_field.split()
    for label in labels:
        problem = label_problem(label, "in the labels field")
        if problem is not None:
            return reject(problem)
    return Document(doc_id or line_id, split, tuple(dict.fromkeys(labels)), body, None, source, number)


def file_columns(file: pa.NativeFile, size: int) -> Columns | None:
    """The columns of a plain file (``size`` bytes, opened for random access) by its first line that is not blank,
    read from the file's start; None when every line is blank.
    """
    position, number, pieces = 0, 1, []
    while position < size:
        piece = file.read_at(min(_READ, size - position), position)
        if not piece:  # the file is shorter than size (cut since it was listed)
            break
        position += len(piece)
        start = 0
        while (newline := piece.find(b"\n", start)) >= 0:
            content = _content(b"".join([*pieces, piece[start:newline]]), number)
            if not _blank(content):
                return Columns(content.count(b"\t") + 1, number)
            pieces, start, number = [], newline + 1, number + 1
        pieces.append(piece[start:])
    content = _content(b"".join(pieces), number)
    return None if _blank(content) else Columns(content.count(b"\t") + 1, number)


def read_range(file: pa.NativeFile, size: int, source: str, start: int, end: int,
               newlines_before: int) -> Iterator[pa.RecordBatch]:
    """The records of the lines of a plain file (``size`` bytes, opened for random access) that start in
    ``[start, end)``, ``newlines_before`` being the newlines in ``[0, start)``: with the ranges of
    :func:`~sparktc.corpora.line_ranges.byte_ranges`, the records of the whole file, split between the ranges (a
    reject of the whole file comes from the first range).
    """
    if base_name(source) not in _SPLITS:
        if start == 0:
            yield from record_batches(parse_libmultilabel_text([], source))
        return
    columns = file_columns(file, size)
    if columns is None:  # blank lines only
        return
    problem = columns.problem()
    if problem is None:
        data, first_line = range_lines(file, size, start, end, newlines_before)
        yield from record_batches(parse_libmultilabel_text(io.BytesIO(data), source, first_line, columns))
    elif start == 0:
        yield from record_batches([Reject(source, 0, None, problem)])


#: LibMultiLabel's text format as ``corpus.format = "libmultilabel_text"``: train.txt and test.txt (plain, .gz or
#: .bz2), a large plain file parsed in byte ranges; its records are raw texts, carrying their labels. classify
#: reads new documents in it from files of any name.
FORMAT = CorpusFormat(
    name="libmultilabel_text",
    title="LibMultiLabel text",
    assembly=LABELLED,
    names=CorpusNames(r"(train|test)\.txt(\.gz|\.bz2)?", r"(train|test)\.txt.*",
                      "LibMultiLabel text files (train.txt, test.txt)"),
    hint="set corpus.path to the directory of train.txt and test.txt (plain, .gz or .bz2)",
    reader=line_reader(parse_libmultilabel_text),
    document_files=lambda test_parts: (TRAIN_FILE, TEST_FILE),
    compressions=(".gz", ".bz2"),
    ranges=ByteRanges(file_ranges, count_newlines, read_range),
    classify=line_reader(partial(parse_libmultilabel_text, corpus=False)),
)
