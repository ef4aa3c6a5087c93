"""A table corpus (``corpus.format = "table"``, :mod:`sparktc.corpora.table`) through Spark: a Parquet directory, a
catalog table (a temporary view) and a DataFrame given to :func:`sparktc.run_pipeline`.

Checked against the rows as written: what is rejected and why, the counts, the documents kept; each split (a column,
a fraction drawn by the ids' hashes, a file of test ids, Hugging Face's file names) against the ids it must give; a
wrong argument refused before any Spark job. And the issue's test: Reuters-21578 R(90) (the subset the deployment
tests run, :func:`reuters21578_subset_run`) written as a Parquet table of its ingested documents gives, through
docs/corpora.md's command for a table (``corpus.format = "table"``) and through its Python block
(``run_pipeline(documents=df)``), the ``metrics.json`` figures of the Reuters job over the same documents.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import job_arguments, prepared_job, run_prepared, substituted
from docs_examples import example

import sparktc
from sparktc.apps.cli import parse_arguments
from sparktc.apps.pipeline import run
from sparktc.corpora import table
from sparktc.corpora.records import Reject
from sparktc.errors import ConfigError
from sparktc.experiment.config import load_config
from sparktc.experiment.corpus_files import IngestError
from sparktc.runtime.runner import Tables
from sparktc.stages import ingest as ingest_stage

SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string()), ("labels", pa.list_(pa.string())),
                    ("split", pa.string())])
GOOD = [(f"g{k}", f"oil prices rose {k}", [["crude"], ["acq", "earn"], []][k % 3], ["train", "test"][k % 2])
        for k in range(8)]
#: Rows each rejected, with the reason: the second file's, read by a task of its own.
BAD = {
    None: ("column 'id' is null; give every document an id", (None, "x", ["earn"], "train")),
    "": ("column 'id' must be a non-empty string or an integer, got ''", ("", "x", ["earn"], "train")),
    "b-text": ("column 'text' is null; give every document a text (\"\" for one without words)",
               ("b-text", None, [], "train")),
    "b-labels": ("column 'labels' is null; give a document without labels an empty list",
                 ("b-labels", "x", None, "test")),
    "b-space": ("label ' earn' in column 'labels' has white space at its start (U+0020 SPACE); remove the "
                "surrounding white space", ("b-space", "x", [" earn"], "test")),
    "b-twice": ("label 'earn' repeated in column 'labels'; list each label once",
                ("b-twice", "x", ["earn", "earn"], "train")),
    "b-split": ("column 'split' must be 'train' or 'test', got 'dev'", ("b-split", "x", [], "dev")),
}


def write(directory: Path, files: dict[str, list[tuple]], schema: pa.Schema = SCHEMA) -> Path:
    """Each file's rows as a Parquet file of ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        pq.write_table(pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=schema),
                       directory / name)
    return directory


def ingested(spark, tmp_path: Path, corpus: dict, documents=None, name: str = "out"):
    """The ingest stage's report and tables for a table corpus of the settings ``corpus``."""
    config = load_config({"corpus": {"format": "table", **corpus}}, documents=documents is not None)
    report = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / name)), documents)
    return report, {name_: pd.read_parquet(tmp_path / name / name_) for name_ in ("documents", "rejects", "categories")}


@contextmanager
def no_spark_job(spark) -> Iterator[None]:
    """Fail unless the block starts no Spark job."""
    context = spark.sparkContext
    context.setLocalProperty("spark.jobGroup.id", "table-door")
    try:
        yield
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert context.statusTracker().getJobIdsForGroup("table-door") == []


def test_bad_rows_are_rejected_naming_their_column_and_every_row_is_counted(spark, tmp_path):
    repeated = ("g1", "again", ["earn"], "test")  # after the first g1 of its file
    corpus = write(tmp_path / "t", {"part-0.parquet": [*GOOD, repeated],
                                    "part-1.parquet": [row for _, row in BAD.values()]})
    report, tables = ingested(spark, tmp_path, {"path": str(corpus), "on_error": "reject"})
    rejects = tables["rejects"].astype(object).where(tables["rejects"].notna(), None)
    reasons = sorted(zip(rejects["doc_id"], rejects["reason"]), key=str)
    [(_, duplicate)] = [pair for pair in reasons if pair[0] == "g1"]
    assert duplicate.startswith(f"duplicate doc id (first at the parquet table {corpus} partition ")
    assert [pair for pair in reasons if pair[0] != "g1"] == sorted(
        ((key or None, reason) for key, (reason, _) in BAD.items()), key=str)
    assert (report.rows_in, report.rows_out, report.set_aside) == (len(GOOD) + len(BAD) + 1, len(GOOD),
                                                                   {"rejected": len(BAD) + 1})
    documents = tables["documents"].set_index("doc_id").sort_index()
    assert list(documents.index) == sorted(row[0] for row in GOOD)
    assert [list(labels) for labels in documents["labels"]] == [row[2] for row in sorted(GOOD)]
    assert list(tables["categories"]["category"]) == ["acq", "crude", "earn"]
    assert report.details["read"] == {"source": f"the parquet table {corpus}", "split_by": "column"}
    assert (report.details["train_documents"], report.details["test_documents"]) == (4, 4)
    # Where a reject is, as corpus.on_error = "fail" names it: the table, the task's partition, the row in it.
    [located] = rejects[rejects["reason"] == BAD["b-split"][0]].itertuples()
    assert Reject(located.source, located.line, located.doc_id, located.reason).message() == (
        f"the parquet table {corpus} partition {located.source.rsplit(' ', 1)[1]}:{located.line} (doc b-split): "
        f"{BAD['b-split'][0]}")
    assert int(located.source.rsplit(" ", 1)[1]) >= 0 and located.line >= 1


def test_a_column_missing_or_of_another_type_refuses_the_table(spark, tmp_path):
    integers = pa.schema([("id", pa.string()), ("text", pa.string()), ("labels", pa.list_(pa.int64())),
                          ("split", pa.string())])
    corpus = write(tmp_path / "t", {"part-0.parquet": [("d", "x", [1], "train")]}, integers)
    with pytest.raises(IngestError, match=r"^the parquet table .*'s column 'labels' \(corpus.columns.labels\) is "
                                          r"array<bigint>; expected array<string>, or one label"):
        ingested(spark, tmp_path, {"path": str(corpus)})
    with pytest.raises(IngestError, match=r"has no column 'body' \(corpus.columns.text\); its columns: id, text, "
                                          r"labels, split. Set corpus.columns.text"):
        ingested(spark, tmp_path, {"path": str(corpus), "columns": {"text": "body"}})
    with pytest.raises(IngestError, match=r"the delta table .* cannot be read: \[DATA_SOURCE_NOT_FOUND\] Failed to "
                                          r"find the data source: delta\..* needs its package in the session"):
        ingested(spark, tmp_path, {"path": str(corpus), "read_format": "delta"})


def test_hugging_face_parquet_files_split_by_their_names_ids_by_file_and_row(spark, tmp_path):
    """Hugging Face's layout: data/SPLIT-00000-of-00001.parquet, a text and an integer class label, no id; read with
    docs/corpora.md's settings for it, as the job parses them.
    """
    schema = pa.schema([("text", pa.string()), ("label", pa.int64())])
    files = {"train-00000-of-00001.parquet": [("good film", 1), ("dull", 0), ("fine", 1)],
             "test-00000-of-00001.parquet": [("great", 1), ("bad", 0)],
             "validation-00000-of-00001.parquet": [("so so", 0)]}
    data = write(tmp_path / "ag_news" / "data", files, schema)
    job, arguments = job_arguments(example("table-hugging-face"))
    config, _, _ = parse_arguments(job, substituted(arguments, {"/data/ag_news/data": str(data),
                                                                "runs/ag_news": str(tmp_path / "run")}))
    report = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "out")))
    tables = {name: pd.read_parquet(tmp_path / "out" / name) for name in ("documents", "categories")}
    documents = tables["documents"].set_index("doc_id").sort_index()
    expected = {f"{name}:{row}": (name.split("-")[0], [str(label)], text) for name, rows in files.items()
                for row, (text, label) in enumerate(rows) if not name.startswith("validation")}
    assert {doc_id: (r.split, list(r.labels), r.text) for doc_id, r in documents.iterrows()} == expected
    assert (report.rows_in, report.rows_out) == (6, 5)
    assert report.set_aside == {table.SET_ASIDE.removeprefix("set aside: "): 1}
    assert list(tables["categories"]["category"]) == ["0", "1"]


def test_a_test_fraction_is_the_ids_hash_whatever_the_partitioning(spark, tmp_path):
    """Each id's split is its hash's (:func:`sparktc.corpora.table.test_share`, computed here in Python), a function
    of the id alone: the rows, shuffled over four files, cannot move it.
    """
    rows = [(f"doc{k}", "oil", ["crude"], None) for k in range(120)]
    corpus = write(tmp_path / "four", {f"part-{k}.parquet": rows[k::4][::-1] for k in range(4)})
    _, tables = ingested(spark, tmp_path, {"path": str(corpus), "split_by": "fraction", "test_fraction": 0.3,
                                           "split_seed": 5})
    expected = {doc_id: "test" if table.test_share(doc_id, 5) < 0.3 else "train" for doc_id, *_ in rows}
    assert dict(zip(tables["documents"]["doc_id"], tables["documents"]["split"])) == expected
    assert 20 < list(expected.values()).count("test") < 55


def test_test_ids_of_a_catalog_table_make_the_test_set_and_an_id_of_no_row_is_refused(spark, tmp_path):
    """A catalog table (a temporary view, which spark.read.table reads as it reads a catalog's)."""
    rows = [(f"d{k}", "oil", ["crude"], None) for k in range(10)]
    spark.read.parquet(str(write(tmp_path / "t", {"part-0.parquet": rows}))).createOrReplaceTempView("sparktc_table")
    ids = tmp_path / "test_ids.txt"
    ids.write_text("d3\nd7\n\nd3\n")
    settings = {"path": "", "table": "sparktc_table", "split_by": "test_ids", "test_ids": str(ids)}
    try:
        report, tables = ingested(spark, tmp_path, settings)
        assert dict(zip(tables["documents"]["doc_id"], tables["documents"]["split"])) == {
            f"d{k}": "test" if k in (3, 7) else "train" for k in range(10)}
        assert report.details["read"] == {"source": "the table sparktc_table", "split_by": "test_ids"}
        ids.write_text("d3\nnone-such\n")
        with pytest.raises(IngestError, match=r"^1 id of corpus.test_ids .*test_ids.txt is in no row of the table "
                                              r"sparktc_table: 'none-such'; remove it from the file, or fix the ids$"):
            ingested(spark, tmp_path, settings, name="again")
    finally:
        spark.catalog.dropTempView("sparktc_table")


def test_a_tokens_column_is_passed_through_by_tokenize(spark, tmp_path):
    schema = pa.schema([("id", pa.int64()), ("words", pa.list_(pa.string())), ("labels", pa.string()),
                        ("split", pa.string())])
    rows = [(1, ["oil", "price", "rose"], "crude", "train"), (2, ["bank", "rate"], "money", "test"),
            (3, [], "crude", "test")]
    corpus = write(tmp_path / "t", {"part-0.parquet": rows}, schema)
    config = load_config({"corpus": {"format": "table", "path": str(corpus), "columns": {"tokens": "words"}}})
    run(spark, config, str(tmp_path / "run"), "ingest", "tokenize")
    tokens = pd.read_parquet(tmp_path / "run" / "tokens").set_index("doc_id").sort_index()
    assert dict(zip(tokens.index, tokens["tokens"])) == {"1": "oil price rose", "2": "bank rate", "3": ""}
    assert [list(labels) for labels in tokens["labels"]] == [["crude"], ["money"], ["crude"]]
    manifest = json.loads((tmp_path / "run" / "manifests" / "tokenize.json").read_text())
    assert manifest["details"]["tokens"] == 5 and manifest["details"]["documents_without_tokens"] == 1


def test_documents_are_checked_at_the_door_as_the_command_line_checks_a_table(spark, tmp_path):
    frame = spark.createDataFrame([("d1", "oil", ["crude"], "train")], "id string, text string, labels "
                                                                       "array<string>, split string")
    table_config = {"corpus": {"format": "table"}}
    refusals = [
        ({}, [("d1",)], "documents must be a Spark DataFrame or None; got list"),
        ({"corpus": {"format": "jsonl"}}, frame, "documents given with corpus.format = 'jsonl': a DataFrame of "
                                                 "documents is a table corpus; set corpus.format = 'table'"),
        ({"corpus": {"format": "table", "path": str(tmp_path)}}, frame, f"documents given with corpus.path = "
                                                                        f"'{tmp_path}': the corpus is read from one"),
        ({"corpus": {"format": "table", "columns": {"labels": "topics"}}}, frame,
         "documents has no column 'topics' (corpus.columns.labels); its columns: id, text, labels, split"),
        (table_config, frame.selectExpr("id", "length(text) AS text", "labels", "split"),
         "documents's column 'text' (corpus.columns.text) is int; expected string"),
    ]
    for config, documents, message in refusals:
        with no_spark_job(spark), pytest.raises(ConfigError) as refused:
            sparktc.run_pipeline(spark, config, str(tmp_path / "out"), documents=documents)
        assert message in str(refused.value)
    with pytest.raises(ConfigError, match=r"corpus.path is not set; give the directory of the table files"):
        sparktc.run_pipeline(spark, table_config, str(tmp_path / "out"))


def test_a_dataframe_or_a_catalog_table_is_read_again_on_every_run(spark, tmp_path):
    """No manifest records a DataFrame's or a catalog table's content: ingest never passes for up to date (a
    directory's files are hashed: it does).
    """
    corpus = write(tmp_path / "t", {"part-0.parquet": GOOD})
    frame = spark.read.parquet(str(corpus))
    for _ in range(2):
        result = sparktc.run_pipeline(spark, {"corpus": {"format": "table"}}, str(tmp_path / "frame"),
                                      stages=["ingest"], documents=frame, verbose=False)
    [manifest] = result.manifests
    assert manifest["recomputed_because"] == "the documents are a DataFrame (documents=), whose content no " \
                                             "manifest records"
    assert manifest["rows_out"] == len(GOOD) and manifest["details"]["read"]["source"] == "the documents DataFrame"
    catalog = load_config({"corpus": {"format": "table", "table": "main.news.articles"}})
    assert ingest_stage.STAGE.unrecorded(catalog) == "corpus.table main.news.articles is read through the catalog, " \
                                                     "whose content no manifest records"
    assert ingest_stage.STAGE.unrecorded(load_config({"corpus": {"format": "table", "path": str(corpus)}})) == ""


#: The settings that make the README's R(90) command read the table: the labels are R(90)'s already.
AS_TABLE = ["corpus.format=table", 'corpus.category_set=""', "corpus.document_filter=none"]
#: The sections of a run's settings that decide its figures, beside the corpus.
FIGURES_SETTINGS = ("tokenize", "weight", "rank", "select", "train", "tune", "evaluate")


@pytest.fixture(scope="module")
def reuters21578_as_table(spark, reuters21578_subset_run, tmp_path_factory) -> dict[str, Path]:
    """The documents the README's R(90) command ingested from the subset (the deployment tests' run) as a Parquet
    table, run by docs/corpora.md's command for a table (``table-corpus``, as the job parses it) and by its Python
    block (``table-dataframe``, ``run_pipeline(documents=)``): each run's output, by form.
    """
    root = tmp_path_factory.mktemp("reuters21578_table")
    documents = spark.read.parquet(f"{reuters21578_subset_run[0]}/documents")
    documents.selectExpr("doc_id AS id", "text", "labels", "split").write.parquet(str(root / "table"))
    job, arguments = job_arguments(example("table-corpus"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        run_prepared(spark, prepared_job(job, substituted(arguments, {"/data/my-table": str(root / "table"),
                                                                       "runs/table": str(root / "path")}), monkeypatch))
    code = example("table-dataframe").replace("/data/my-table", str(root / "table"))
    exec(code.replace("runs/table-dataframe", str(root / "dataframe")), {"spark": spark})  # noqa: S102
    return {"path": root / "path", "dataframe": root / "dataframe"}


@pytest.mark.parametrize("form", ["path", "dataframe"])
def test_reuters21578_as_a_table_gives_the_reuters_jobs_figures(reuters21578_subset_run, reuters21578_as_table, form):
    expected = json.loads((Path(reuters21578_subset_run[0]) / "metrics.json").read_text())
    got = json.loads((reuters21578_as_table[form] / "metrics.json").read_text())
    # The same settings but the corpus's: docs/corpora.md's table settings are the Reuters job's.
    assert {key: got["settings"][key] for key in FIGURES_SETTINGS} == {
        key: expected["settings"][key] for key in FIGURES_SETTINGS}
    figures = [key for key, value in expected.items() if isinstance(value, int | float)]
    assert len(figures) > 15 and expected["test_documents"] > 600 and expected["n_categories"] > 50
    assert {key: got[key] for key in figures} == {key: expected[key] for key in figures}
    # Every average but Reuters' own category sets, R(10), R(90), R(115), which a table has not.
    assert set(got["averages"]) == {"all", "train_positive", "test_positive"}
    assert got["averages"] == {key: expected["averages"][key] for key in got["averages"]}
    assert got["per_category"] == expected["per_category"]
    ingest = json.loads((reuters21578_as_table[form] / "manifests" / "ingest.json").read_text())
    assert ingest["rows_in"] == ingest["rows_out"] == reuters21578_subset_run[1]["ingest"]["rows_out"]
