"""The table corpus's rows, checks and settings without Spark (:mod:`sparktc.corpora.table`): a batch of rows as
ingest's tasks check it, against what JSON Lines says of the same records; the hashed test share; the file names of
Hugging Face's layout; the column types a schema may have; and the settings the configuration refuses together.
"""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pytest

from sparktc.corpora import table
from sparktc.corpora.jsonl import parse_jsonl
from sparktc.corpora.records import Document, Reject
from sparktc.errors import ConfigError
from sparktc.experiment.config import load_config

COLUMNS = table.TableColumns(id="key", text="body", labels="topics", split="part")
ROWS = pa.schema([("doc_id", pa.string()), ("text", pa.string()), ("labels", pa.list_(pa.string())),
                  ("split", pa.string())])


def records(rows: list[tuple], columns: table.TableColumns = COLUMNS, by_file: bool = False) -> list[dict]:
    names = ["doc_id", "tokens" if columns.tokens else "text", "labels", "split"]
    schema = ROWS if not columns.tokens else ROWS.set(1, pa.field("tokens", pa.list_(pa.string())))
    batch = pa.RecordBatch.from_pylist([dict(zip(names, row)) for row in rows], schema=schema)
    return table.checked_records(batch, "t partition 3", 10, columns, by_file).to_pylist()


def test_valid_rows_become_documents_located_by_partition_and_row():
    got = records([("d1", "Oil rose.", ["crude"], "train"), ("7", "", [], "test")])
    assert [(r["doc_id"], r["split"], r["labels"], r["text"], r["tokens"], r["source"], r["line"], r["reason"])
            for r in got] == [("d1", "train", ["crude"], "Oil rose.", None, "t partition 3", 10, None),
                              ("7", "test", [], "", None, "t partition 3", 11, None)]


BAD = [
    ((None, "x", [], "train"), "column 'key' is null; give every document an id"),
    (("", "x", [], "train"), "column 'key' must be a non-empty string or an integer, got ''"),
    (("d", None, [], "train"), "column 'body' is null; give every document a text (\"\" for one without words)"),
    (("d", "x", None, "train"), "column 'topics' is null; give a document without labels an empty list"),
    (("d", "x", ["earn", None], "train"), "column 'topics' holds a null label; remove it"),
    (("d", "x", ["earn", "earn"], "train"), "label 'earn' repeated in column 'topics'; list each label once"),
    (("d", "x", ["train"], "dev"), "column 'part' must be 'train' or 'test', got 'dev'"),
    (("d", "x", ["train"], None), "column 'part' must be 'train' or 'test', got None"),
]


@pytest.mark.parametrize(("row", "reason"), BAD, ids=[reason[:30] for _, reason in BAD])
def test_a_bad_row_is_a_reject_naming_its_column(row, reason):
    [got] = records([row])
    assert (got["reason"], got["doc_id"], got["line"], got["text"]) == (reason, row[0] or None, 10, None)


@pytest.mark.parametrize("label", [" earn", "", "a\u200bb", "a\u00a0b"])
def test_a_label_is_held_to_the_rule_json_lines_holds_it_to(label):
    """The reason is JSON Lines' for the same record, the column named where JSON Lines names its field."""
    [got] = records([("d", "x", [label], "train")])
    [jsonl] = parse_jsonl([json.dumps({"id": "d", "text": "x", "labels": [label], "split": "train"}).encode()], "f")
    assert isinstance(jsonl, Reject)
    assert got["reason"] == jsonl.reason.replace("field 'labels'", "column 'topics'")


def test_tokens_come_as_lists_or_strings_and_a_token_holds_no_white_space():
    columns = table.TableColumns(tokens="words")
    got = records([("a", ["oil", "rose"], ["crude"], "train"), ("b", ["oil", "a b"], [], "train"),
                   ("c", ["", "x"], [], "test"), ("d", None, [], "test"), ("e", [], ["crude"], "test")], columns)
    assert [(r["doc_id"], r["text"], r["tokens"], r["reason"]) for r in got] == [
        ("a", None, "oil rose", None),
        ("b", None, None, "token 'a b' in the tokens column: a token is a non-empty string without white space "
                          "(tokenize passes tokens through as given); remove or fix it"),
        ("c", None, None, "token '' in the tokens column: a token is a non-empty string without white space "
                          "(tokenize passes tokens through as given); remove or fix it"),
        ("d", None, None, "column 'words' is null; give every document its tokens ([] for one without words)"),
        ("e", None, "", None)]
    schema = ROWS.set(1, pa.field("tokens", pa.string()))
    batch = pa.RecordBatch.from_pylist([{"doc_id": "s", "tokens": " oil  rose\tfast ", "labels": [], "split": "test"}],
                                       schema=schema)
    [row] = table.checked_records(batch, "t", 1, columns).to_pylist()
    assert (row["tokens"], row["reason"]) == ("oil rose fast", None)


def test_a_row_of_a_file_of_neither_split_is_set_aside():
    got = records([("d1", "x", [], None), ("d2", "x", [], "test")], by_file=True)
    assert [r["reason"] for r in got] == [table.SET_ASIDE, None]
    assert table.SET_ASIDE.startswith("set aside: ")


def test_the_test_share_is_the_ids_sha256_and_draws_about_the_fraction():
    assert table.test_share("d1", 7) == int(hashlib.sha256(b"7:d1").hexdigest()[:13], 16) / 2**52
    ids = [f"doc{k}" for k in range(4000)]
    shares = [table.test_share(doc_id, 0) for doc_id in ids]
    assert all(0 <= share < 1 for share in shares)
    assert abs(sum(share < 0.25 for share in shares) / len(ids) - 0.25) < 0.03
    other = [table.test_share(doc_id, 1) for doc_id in ids]
    assert sum((a < 0.25) != (b < 0.25) for a, b in zip(shares, other)) > 1000  # another seed, another draw


@pytest.mark.parametrize(("name", "split"), [
    ("train-00000-of-00001.parquet", "train"), ("test-00000-of-00002.parquet", "test"), ("test.parquet", "test"),
    ("train_0.parquet", "train"), ("validation-00000-of-00001.parquet", None), ("trainer.parquet", None),
    ("unsupervised-00000-of-00001.parquet", None), ("part-00000.parquet", None)])
def test_hugging_face_file_names_give_the_split(name, split):
    assert table.split_of_file(name) == split


def test_columns_are_checked_from_the_schema():
    corpus = load_config({"corpus": {"format": "table", "path": "."}}).corpus
    good = {"id": "bigint", "text": "string", "labels": "array<string>", "split": "string", "other": "double"}
    assert table.columns_problem(good, corpus, "the table t", "corpus.columns") is None
    assert table.columns_problem({**good, "labels": "int"}, corpus, "t", "corpus.columns") is None  # one class each
    assert table.columns_problem({**good, "id": "double"}, corpus, "documents", "corpus.columns") == (
        "documents's column 'id' (corpus.columns.id) is double; expected string or an integer type")
    assert table.columns_problem({**good, "labels": "array<int>"}, corpus, "t", "corpus.columns") == (
        "t's column 'labels' (corpus.columns.labels) is array<int>; expected array<string>, or one label per "
        "document: string or an integer type")
    missing = {key: kind for key, kind in good.items() if key != "text"}
    assert table.columns_problem(missing, corpus, "the table t", "corpus.columns") == (
        "the table t has no column 'text' (corpus.columns.text); its columns: id, labels, split, other. Set "
        "corpus.columns.text to the column of the documents' text")
    fraction = load_config({"corpus": {"format": "table", "path": ".", "split_by": "fraction",
                                       "test_fraction": 0.3}}).corpus
    assert table.columns_problem({key: good[key] for key in ("id", "text", "labels")}, fraction, "t", "c") is None
    by_file = load_config({"corpus": {"format": "table", "path": ".", "split_by": "file_name",
                                      "columns": {"id": "", "labels": "label"}}}).corpus
    assert table.columns_problem({"text": "string", "label": "bigint"}, by_file, "t", "c") is None


@pytest.mark.parametrize(("corpus", "refusal"), [
    ({"format": "jsonl", "table": "t"}, "corpus.table = 't' with corpus.format = 'jsonl': read by corpus.format = "
                                        "'table' only; remove it"),
    ({"format": "jsonl", "columns": {"id": "key", "labels": "topics"}},
     "corpus.columns.id = 'key', corpus.columns.labels = 'topics' with corpus.format = 'jsonl': read by "
     "corpus.format = 'table' only; remove them"),
    ({"table": "cat.db.t"}, "corpus.path = "),
    ({"path": "", "table": "t", "read_format": "delta"}, "corpus.read_format = 'delta' with corpus.table = 't': the "
                                                         "catalog knows its table's format; remove corpus.read_format"),
    ({"test_fraction": 0.2}, "corpus.test_fraction = 0.2 with corpus.split_by = 'column': read only with "
                             "corpus.split_by = 'fraction'; remove it"),
    ({"split_by": "fraction"}, "corpus.split_by = 'fraction' needs 0 < corpus.test_fraction < 1"),
    ({"split_by": "test_ids"}, "corpus.split_by = 'test_ids' needs corpus.test_ids"),
    ({"path": "", "table": "t", "split_by": "file_name"}, "corpus.split_by = 'file_name' with corpus.table = 't'"),
    ({"path": "", "table": "t", "columns": {"id": ""}}, "corpus.columns.id = '' with corpus.table = 't': the rows of "
                                                        "a catalog table have no file names here"),
    ({"columns": {"text": "id"}}, "each role needs a column of its own"),
    ({"columns": {"labels": " topics"}}, "corpus.columns.labels = ' topics'"),
    ({"path": ""}, "corpus.path is not set; give the directory of the table files (--set corpus.path=DIR), or a "
                   "catalog table's name (--set corpus.table=NAME)"),
])
def test_settings_that_cannot_work_together_are_refused(tmp_path, corpus, refusal):
    with pytest.raises(ConfigError) as refused:
        load_config({"corpus": {"format": "table", "path": str(tmp_path), **corpus}})
    assert refusal in str(refused.value)


def test_a_catalog_table_or_given_documents_need_no_path():
    assert load_config({"corpus": {"format": "table", "table": "main.news.articles"}}).corpus.path == ""
    assert load_config({"corpus": {"format": "table"}}, documents=True).corpus.path == ""


def test_tokens_make_a_table_come_tokenized_and_refuse_tokenize_settings(tmp_path):
    tokens = {"format": "table", "path": str(tmp_path), "columns": {"tokens": "words"}}
    assert table.FORMAT.comes_tokenized(load_config({"corpus": tokens}).corpus)
    assert not table.FORMAT.comes_tokenized(load_config({"corpus": {**tokens, "columns": {}}}).corpus)
    with pytest.raises(ConfigError, match="tokenize.ngrams = 2 with corpus.format = 'table': its documents come "
                                          "tokenized"):
        load_config({"corpus": tokens, "tokenize": {"ngrams": 2}})


def test_a_document_keeps_the_record_fields_json_lines_gives_it():
    """The same record in both forms: the same Document but for where it was read."""
    line = json.dumps({"id": 7, "text": "Oil.", "labels": ["crude", "acq"], "split": "test"}).encode()
    [from_jsonl] = parse_jsonl([line], "f")
    [row] = records([("7", "Oil.", ["crude", "acq"], "test")])
    assert isinstance(from_jsonl, Document)
    assert (row["doc_id"], row["split"], tuple(row["labels"]), row["text"]) == (
        from_jsonl.doc_id, from_jsonl.split, from_jsonl.labels, from_jsonl.text)
