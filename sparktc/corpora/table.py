"""A corpus that is a table (``corpus.format = "table"``): a directory Spark reads (``corpus.path``, Parquet by
default; ``corpus.read_format`` names any other source the session has: ``delta``, ``iceberg``, ``orc``), a
catalog table (``corpus.table``: Unity Catalog's ``catalog.schema.name``, a Hive table), or a DataFrame handed to
:func:`sparktc.run_pipeline` (``documents=``). Hugging Face datasets ship as such Parquet files.

One row per document, its columns named by ``[corpus.columns]`` (:class:`TableColumns`): an id (a string or an
integer type, stored as a string), a text (a string, tokenized like Reuters-21578 text) or, for documents that come
tokenized, tokens (an array of strings, or a string of tokens separated by white space, which tokenize passes
through as LYRL2004's), and labels (an array of strings, or one label per document: a string, or an integer as
Hugging Face's class labels are, kept as its decimal string). The split (``corpus.split_by``, :data:`SPLITS`): a
column of ``"train"`` or ``"test"``, a test fraction drawn by a hash of each id and ``corpus.split_seed``
(:func:`test_share`: the same documents whatever the table's partitioning or order), a file of test ids
(``corpus.test_ids``, the rest training), or each file's name (``train-00000-of-00001.parquet``, Hugging Face's
layout; a file of another split is set aside).

Each row is held to JSON Lines' record checks (:func:`sparktc.corpora.jsonl.record_problem`): a null or empty id, a
null text, null labels or a null label, a label that is not a label (:func:`~sparktc.corpora.labels.label_problem`),
a label listed twice and a split other than train and test reject the row, naming its column; a repeated id rejects
every row after its first, as in every format. A column missing or of another type refuses the table whole
(:func:`columns_problem`), naming the column, its type and what to set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa

from sparktc.corpora.formats import TABLE, CorpusFormat
from sparktc.corpora.jsonl import record_problem, valid_record
from sparktc.corpora.records import TEST, TRAIN, Document, Reject, record_batch
from sparktc.validation import meaning, rule

__all__ = ["FORMAT", "SET_ASIDE", "SETTINGS", "SPLITS", "TableColumns", "checked_records", "columns_problem",
           "read_columns", "settings_problem", "split_of_file", "test_share"]

#: ``corpus.split_by``: where a row's split comes from.
SPLITS = {
    "column": "the split column (corpus.columns.split), each value \"train\" or \"test\"",
    "fraction": "corpus.test_fraction of the documents, drawn by a hash of each id and corpus.split_seed",
    "test_ids": "corpus.test_ids, a file of the test documents' ids (one per line); the others are training ones",
    "file_name": "each file's name: train-* or test-* (Hugging Face's data/train-00000-of-00001.parquet)",
}
#: Why a row of a file of neither split (``split_by = "file_name"``: Hugging Face's validation-*, unsupervised-*) is
#: set aside.
SET_ASIDE = "set aside: in a file of neither split (its name starts with neither train nor test)"
#: The [corpus] settings only this format reads: another format refuses them.
SETTINGS = ("table", "read_format", "columns", "split_by", "test_fraction", "split_seed", "test_ids")
#: Bits of a hash that place an id in [0, 1) (:func:`test_share`): 13 hexadecimal digits, exact in a double.
SHARE_DIGITS = 13

_INTEGERS = ("tinyint", "smallint", "int", "bigint")


def _column_name(value: str) -> bool:
    return value == value.strip() and "`" not in value


@dataclass(frozen=True)
class TableColumns:
    """``[corpus.columns]``: the columns of a table corpus that hold each document's id, text, labels and split."""

    id: str = field(default="id", metadata=meaning(
        "the column of the documents' ids: a string or an integer type, unique. \"\": each row's Parquet file and "
        "its place in it (FILE_NAME:ROW, from 0), for a table without ids (Hugging Face's)",
        rule(_column_name, "a column name, or \"\"")))
    text: str = field(default="text", metadata=meaning(
        "the column of the documents' texts (strings, tokenized as [tokenize] says)",
        rule(lambda v: bool(v) and _column_name(v), "a column name")))
    tokens: str = field(default="", metadata=meaning(
        "the column of the documents' tokens when they come tokenized (array<string>, or a string of tokens separated "
        "by white space), passed through by tokenize as given; then the text column is not read. \"\": none",
        rule(lambda v: _column_name(v), "a column name, or \"\"")))
    labels: str = field(default="labels", metadata=meaning(
        "the column of the documents' labels: array<string>, or one label per document (a string, or an integer "
        "class as Hugging Face's label column)", rule(lambda v: bool(v) and _column_name(v), "a column name")))
    split: str = field(default="split", metadata=meaning(
        "the column of the documents' split, \"train\" or \"test\" (read when corpus.split_by = \"column\")",
        rule(lambda v: bool(v) and _column_name(v), "a column name")))

    def named(self, key: str) -> str:
        """How a reason names the column of ``key`` (``id``, ``text``, ``tokens``, ``labels``, ``split``): ``column
        'topics'``; the text's is the tokens' when they are read instead.
        """
        return f"column {getattr(self, 'tokens' if key == 'text' and self.tokens else key)!r}"


def test_share(doc_id: str, seed: int) -> float:
    """Where the id ``doc_id`` falls in [0, 1) under ``seed``: the first :data:`SHARE_DIGITS` hexadecimal digits of
    SHA-256 of ``"SEED:ID"`` over 16 to that power. A document is a test one when its share is below
    ``corpus.test_fraction``: the draw is the id's alone, the same whatever the table's order or partitions (ingest
    computes it in Spark, ``sha2`` and ``conv``).
    """
    digest = hashlib.sha256(f"{seed}:{doc_id}".encode()).hexdigest()
    return int(digest[:SHARE_DIGITS], 16) / 16**SHARE_DIGITS


def split_of_file(name: str) -> str | None:
    """The split of a file of a table read with ``split_by = "file_name"``: ``train`` or ``test`` when its name starts
    with it followed by ``-``, ``_`` or ``.`` (``train-00000-of-00001.parquet``), None for any other.
    """
    for split in (TRAIN, TEST):
        if name.startswith(split) and name[len(split):len(split) + 1] in ("-", "_", "."):
            return split
    return None


def read_columns(corpus: Any) -> dict[str, str]:
    """The columns a table corpus reads, by role (``id``, ``text`` or ``tokens``, ``labels``, and ``split`` when the
    split is a column), from its [corpus] settings.
    """
    columns: TableColumns = corpus.columns
    split = ["split"] if corpus.split_by == "column" else []
    roles = [*(["id"] if columns.id else []), "tokens" if columns.tokens else "text", "labels", *split]
    return {role: getattr(columns, role) for role in roles}


#: The types each role's column may have (Spark's simple type strings), and how a message says them.
_TYPES: dict[str, tuple[Callable[[str], bool], str]] = {
    "id": (lambda kind: kind in ("string", *_INTEGERS), "string or an integer type"),
    "text": (lambda kind: kind == "string", "string"),
    "tokens": (lambda kind: kind in ("array<string>", "string"),
               "array<string>, or a string of tokens separated by white space"),
    "labels": (lambda kind: kind in ("array<string>", "string", *_INTEGERS),
               "array<string>, or one label per document: string or an integer type"),
    "split": (lambda kind: kind == "string", "string (\"train\" or \"test\")"),
}


def columns_problem(types: Mapping[str, str], corpus: Any, what: str, key: str) -> str | None:
    """What keeps the columns ``types`` (name -> Spark's simple type string) of ``what`` ("the table /data/t", "the
    documents DataFrame") from being read as a table corpus under ``corpus``'s settings: a column it reads missing
    or of another type, naming the column, the role ``key`` names it by (``corpus.columns.labels``) and what to do;
    None when they can be read.
    """
    for role, name in read_columns(corpus).items():
        accepts, expected = _TYPES[role]
        setting = f"{key}.{role}"
        if name not in types:
            return (f"{what} has no column {name!r} ({setting}); its columns: {', '.join(types) or 'none'}. Set "
                    f"{setting} to the column of the documents' {role}")
        if not accepts(types[name]):
            return f"{what}'s column {name!r} ({setting}) is {types[name]}; expected {expected}"
    return None


def checked_records(batch: pa.RecordBatch, source: str, first_line: int, columns: TableColumns,
                    by_file: bool = False) -> pa.RecordBatch:
    """A batch of table rows (``doc_id``, ``text`` or ``tokens``, ``labels``, ``split``: strings, a list of strings
    for the labels and for tokens read as lists; the split null for a row of neither split when ``by_file``) as
    records (:data:`~sparktc.schemas.RECORD_SCHEMA`), each row a document or a reject naming its column
    (:func:`sparktc.corpora.jsonl.record_problem`); ``source`` and the rows' place from ``first_line`` locate them.
    """
    records: list[Document | Reject] = []
    content = "tokens" if columns.tokens else "text"
    rows = zip(*(batch.column(name).to_pylist() for name in ("doc_id", content, "labels", "split")), strict=True)
    for line, (doc_id, value, labels, split) in enumerate(rows, first_line):
        tokens = _tokens(value) if columns.tokens else None
        text = "" if isinstance(tokens, tuple) else value  # the tokens stand for the text in the checks
        record = {"id": doc_id, "text": text, "labels": labels, "split": split}
        problem = tokens if isinstance(tokens, str) else None
        if problem is None and not valid_record(record, True):
            problem = _problem(record, columns, by_file)
        if problem is None:
            records.append(Document(doc_id, split, tuple(labels), None if columns.tokens else text, tokens, source,
                                    line))
        else:
            records.append(Reject(source, line, doc_id or None, problem))
    return record_batch(records)


def _tokens(value: str | list[str | None] | None) -> tuple[str, ...] | str | None:
    """A row's tokens (a string of tokens separated by white space, or a list), or why they are none (a string);
    None for null tokens, which the text's check refuses.
    """
    if value is None or isinstance(value, str):
        return None if value is None else tuple(value.split())
    for token in value:
        if token is None or not token or token != "".join(token.split()):
            return (f"token {token!r} in the tokens column: a token is a non-empty string without white space "
                    "(tokenize passes tokens through as given); remove or fix it")
    return tuple(value)


def _problem(record: dict[str, Any], columns: TableColumns, by_file: bool) -> str | None:
    """What is wrong with a table row (None: nothing), a null said as such before the JSON Lines checks."""
    named = columns.named
    if record["id"] is None:
        return f"{named('id')} is null; give every document an id"
    if record["text"] is None:
        what = "its tokens ([] for one without" if columns.tokens else "a text (\"\" for one without"
        return f"{named('text')} is null; give every document {what} words)"
    if record["labels"] is None:
        return f"{named('labels')} is null; give a document without labels an empty list"
    if None in record["labels"]:
        return f"{named('labels')} holds a null label; remove it"
    if by_file and record["split"] is None:
        return SET_ASIDE
    return record_problem(record, True, named)


def settings_problem(corpus: Any) -> str | None:
    """What is wrong with a table corpus's [corpus] settings together (None: nothing): one source, and the split's
    settings those of ``corpus.split_by`` only.
    """
    if corpus.path and corpus.table:
        return (f"corpus.path = {corpus.path!r} and corpus.table = {corpus.table!r}: a table corpus is read from one; "
                "set corpus.path to a directory Spark reads, or corpus.table to a catalog table's name")
    if corpus.table and corpus.read_format != "parquet":
        return (f"corpus.read_format = {corpus.read_format!r} with corpus.table = {corpus.table!r}: the catalog knows "
                "its table's format; remove corpus.read_format")
    uses = {"fraction": ("test_fraction", "split_seed"), "test_ids": ("test_ids",)}.get(corpus.split_by, ())
    defaults = {f.name: f.default for f in fields(corpus)}
    for key in ("test_fraction", "split_seed", "test_ids"):
        if key not in uses and getattr(corpus, key) != defaults[key]:
            return (f"corpus.{key} = {getattr(corpus, key)!r} with corpus.split_by = {corpus.split_by!r}: read only "
                    f"with corpus.split_by = {'fraction' if key != 'test_ids' else 'test_ids'!r}; remove it")
    if corpus.split_by == "fraction" and not 0 < corpus.test_fraction < 1:
        return (f"corpus.split_by = 'fraction' needs 0 < corpus.test_fraction < 1 (the share of test documents), got "
                f"{corpus.test_fraction}")
    if corpus.split_by == "test_ids" and not corpus.test_ids:
        return "corpus.split_by = 'test_ids' needs corpus.test_ids, a file of the test documents' ids, one per line"
    if corpus.table and (corpus.split_by == "file_name" or not corpus.columns.id):
        given = "corpus.split_by = 'file_name'" if corpus.split_by == "file_name" else "corpus.columns.id = ''"
        return (f"{given} with corpus.table = {corpus.table!r}: the rows of a catalog table have no file names here; "
                "name its id column, and split by a column, a fraction or test ids")
    roles = read_columns(corpus)
    if len(set(roles.values())) < len(roles):
        shown = ", ".join(f"corpus.columns.{role} = {name!r}" for role, name in roles.items())
        return f"{shown}: each role needs a column of its own"
    return None


#: A table (or a DataFrame) as ``corpus.format = "table"``: its rows carry their labels; the categories are
#: ``corpus.categories``, or every label seen.
FORMAT = CorpusFormat(
    name="table",
    title="table",
    assembly=TABLE,
    hint="set corpus.path to a directory Spark reads (corpus.read_format) or corpus.table to a catalog table",
    settings=SETTINGS,
    settings_problem=settings_problem,
    tokenized_by=lambda corpus: bool(corpus.columns.tokens),
)
