"""The Python API: the example notebook and docs/notebooks.md's notebook block as they stand, run one after the other
in one kernel whose environment had no PYSPARK_PYTHON (conftest.py's ``notebook_kernel_run``); every argument and
column checked at the door; classify over DataFrames checked against the classify job's own path and against the
bundle's scores computed independently; the workers' interpreter checked before the first job.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pandas as pd
import pytest
from conftest import REPO, cell_outputs
from docs_examples import example
from pyspark.sql import functions as F

import sparktc
from sparktc.apps import classify as job
from sparktc.apps.api import RunResult
from sparktc.apps.classify import NO_TERMS, ClassifyError, check_arguments
from sparktc.errors import ConfigError, InputError, SparktcError
from sparktc.experiment.config import load_config
from sparktc.runtime import session

#: The reasons a row is not classified that the job's readers word in their formats' terms (sparktc.apps.classify).
NO_ID = "doc_id is null or empty: give every document an id"
NO_TEXT = "text is null: give every document its text"
NOT_FINITE = "values holds NaN or infinity (or a number beyond a float's range, 3.4e38): give finite values"


@pytest.fixture(scope="module")
def notebook(notebook_kernel_run) -> SimpleNamespace:
    """docs/notebooks.md's notebook block as it stands, run after the example notebook in its kernel, whose
    environment had no PYSPARK_PYTHON (conftest.py's ``notebook_kernel_run``): what it printed, its predictions and
    what the epilogue read of its run.
    """
    return SimpleNamespace(stdout=notebook_kernel_run["stdout"],
                           predictions=str(Path(notebook_kernel_run["block"]) / "predictions"),
                           **notebook_kernel_run["facts"])


@pytest.fixture(scope="module")
def model(spark, notebook):
    return sparktc.load_model(spark, Path(notebook.output) / "model")  # a path may be a pathlib.Path


@pytest.mark.spark  # a run in a kernel
def test_the_notebook_block_runs_in_a_kernel_and_returns_the_metrics(notebook) -> None:
    assert notebook.exit_status == 0 and notebook.run_id
    assert notebook.stages == ["synthesize", "ingest", "tokenize", "weight", "rank", "train", "evaluate"]
    assert 0 < notebook.metrics["micro_f1"] <= 1 and notebook.metrics["micro_f1"] == notebook.recorded_micro_f1
    assert notebook.C == 0.5  # the override applied to the dict
    assert f"micro-F1 {notebook.metrics['micro_f1']:.4f}" in notebook.stdout and "top_scores" in notebook.stdout
    # verbose=False: what the example prints, and nothing of sparktc's (no stage line, no per-category table)
    assert "sparktc:" not in notebook.stdout and "train+" not in notebook.stdout


def test_the_block_sets_pyspark_python_before_its_session_as_the_notebook_s_first_cell() -> None:
    """The block runs after the notebook, on the session the notebook's first cell started without PYSPARK_PYTHON:
    its own first lines must be that cell's, which a kernel without PYSPARK_PYTHON needs; both sessions leave Spark's
    console bar off (it would write into the cell beside sparktc's progress).
    """
    setting = 'os.environ.setdefault("PYSPARK_PYTHON", sys.executable)'
    session_line = 'SparkSession.builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()'
    first_cell = next(cell.source for cell in nbformat.read(REPO / "examples" / "notebook.ipynb", as_version=4).cells
                      if cell.cell_type == "code")
    for code in (example("notebook"), first_cell):
        assert code.index("import sys") < code.index(setting) < code.index(session_line), code


@pytest.mark.spark  # a run in a kernel
def test_a_run_and_a_model_say_themselves_in_one_line(notebook) -> None:
    scores = f"micro-F1 {notebook.metrics['micro_f1']:.4f}, macro-F1 {notebook.metrics['macro_f1']:.4f}"
    assert notebook.repr == f"RunResult({notebook.output!r}: run {notebook.run_id}, exit status 0, 7 stages, {scores})"
    model = Path(notebook.output) / "model"
    categories, terms = (len(pd.read_parquet(model / part)) for part in ("categories", "vocabulary"))
    assert notebook.model_repr == (f"Bundle('{model}': liblinear, fixed thresholding, {categories} categories, "
                                   f"{terms:,} terms, 1,000 training documents, ltc weights)")


@pytest.mark.spark  # a run in a kernel
def test_a_run_and_its_model_show_the_headline_the_rule_the_figures_and_the_report(notebook) -> None:
    figures = [Path(notebook.output) / name for name in ("f1_by_band.png", "f1_by_training_frequency.png")]
    assert notebook.figures == [str(path) for path in figures]
    for page in (notebook.html, notebook.model_html):
        images = [base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]
        assert images == [path.read_bytes() for path in figures]  # inline, as the run wrote them
        for kind in ("micro", "macro"):
            assert f"<td>{notebook.metrics[f'{kind}_f1']:.4f}</td>" in page
        assert "<code>liblinear</code>" in page and "<code>fixed</code>" in page  # the decision rule
        # a link to report.md, relative to the working directory (the notebook's, which its server serves)
        assert '<a href="runs/notebook/report.md"' in page
    assert "exit status 0: synthesize run" in notebook.html


def test_a_run_that_did_not_evaluate_has_no_table_and_no_figures() -> None:
    record = SimpleNamespace(run_id="r1", exit_status=0, stages=[{"stage": "ingest", "status": "run", "seconds": 1.0}])
    result = RunResult("/runs/x", record, [], {})
    assert result.figures == [] and repr(result) == "RunResult('/runs/x': run r1, exit status 0, 1 stage)"
    assert result._repr_html_().endswith("<p>Not evaluated.</p>")
    with pytest.raises(InputError, match=re.escape("the run in /runs/x has no per-category table: it did not "
                                                   "evaluate (run the evaluate stage")):
        result.per_category()


@pytest.mark.spark  # a run in a kernel
def test_per_category_is_the_run_s_table_as_a_dataframe(notebook) -> None:
    table = pd.DataFrame(notebook.per_category)
    contingency = pd.read_parquet(Path(notebook.output) / "contingency").sort_values("category")
    assert list(table.columns) == ["category", "name", "train_positives", "test_positives", "TP", "FP", "FN", "TN",
                                   "P", "R", "F1", "averaged"]
    assert table["category"].tolist() == contingency["category"].tolist()
    for column in ("tp", "fp", "fn", "tn"):
        assert table[column.upper()].tolist() == contingency[column].tolist()
    tp, fp, fn = (contingency[column].to_numpy() for column in ("tp", "fp", "fn"))

    def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:  # 0/0 = 1 (evaluate.zero_division)
        return np.where(denominator > 0, numerator / np.maximum(denominator, 1), 1.0)

    np.testing.assert_allclose(table["P"], ratio(tp, tp + fp), atol=5e-5)
    np.testing.assert_allclose(table["R"], ratio(tp, tp + fn), atol=5e-5)
    np.testing.assert_allclose(table["F1"], ratio(2 * tp, 2 * tp + fp + fn), atol=5e-5)
    assert table["averaged"].tolist() == (contingency["train_positives"] > 0).tolist()  # average_over train_positive


def test_a_model_shows_its_run_s_evaluation_only_beside_the_run_that_evaluated_it(model, notebook, spark,
                                                                                   tmp_path) -> None:
    assert model.evaluation is not None and model.evaluation.metrics == notebook.metrics
    metrics = json.loads((Path(notebook.output) / "metrics.json").read_text())
    for C, shown in ((0.5, True), (2.0, False)):  # the C the bundle was trained with, and another
        copy = tmp_path / f"C{C}"
        shutil.copytree(Path(notebook.output) / "model", copy / "model")
        for name in ("per_category.csv", "report.md", "f1_by_band.png", "f1_by_training_frequency.png"):
            shutil.copy(Path(notebook.output) / name, copy / name)
        metrics["settings"]["train"]["liblinear"]["C"] = C
        (copy / "metrics.json").write_text(json.dumps(metrics))
        loaded = sparktc.load_model(spark, copy / "model")
        assert (loaded.evaluation is not None) is shown
    page = loaded._repr_html_()  # without an evaluation: its size and its own decision rule
    assert "<li>C: <code>0.5</code>;" in page and "<code>fixed</code>" in page and "<img" not in page


def test_classify_gives_every_document_a_row_and_the_bundle_s_scores(notebook, model, spark) -> None:
    rows = {row.doc_id: row for row in spark.read.parquet(notebook.predictions).collect()}
    assert set(rows) == set(notebook.texts)
    # The same documents as vectors, as the run weighted them: the scores must be the linear model's, X W + b.
    vectors = spark.read.parquet(f"{notebook.output}/vectors").filter(F.col("doc_id").isin(notebook.texts))
    scored = {row.doc_id: row for row in sparktc.classify(model, vectors).collect()}
    for row in vectors.collect():
        scores = linear_scores(model, row.indices, row.values)
        best = np.argsort(-scores, kind="stable")[:5]
        assert scored[row.doc_id].top_categories == [model.scorer.codes[i] for i in best]
        np.testing.assert_allclose(scored[row.doc_id].top_scores, scores[best], rtol=1e-5, atol=1e-6)
        assert rows[row.doc_id].predicted == scored[row.doc_id].predicted


def linear_scores(model, indices, values) -> np.ndarray:
    x = np.zeros(model.scorer.n_terms)
    x[indices] = values
    return x @ model.scorer.W + model.scorer.b


def test_documents_that_cannot_be_classified_keep_their_row_with_the_reason(model, spark) -> None:
    frame = spark.createDataFrame([("a", "zzzz qqqq"), ("b", "")], ["doc_id", "text"])
    rows = {row.doc_id: row for row in sparktc.classify(model, frame).collect()}
    assert set(rows) == {"a", "b"}
    assert all(row.predicted is None and row.reason == NO_TERMS for row in rows.values())
    outside = spark.createDataFrame([("v", [0, 10**8], [1.0, 1.0])], ["doc_id", "indices", "values"])
    [row] = sparktc.classify(model, outside).collect()
    assert row.predicted is None and "outside the model" in row.reason


def test_a_wrong_setting_is_refused_before_any_spark_work(spark, tmp_path) -> None:
    with pytest.raises(ConfigError, match="train.Cx"):
        sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, str(tmp_path / "out"),
                             overrides=["train.Cx=1"])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["proc", "under_a_file", "a_file"])
def test_an_output_that_cannot_be_written_is_refused_naming_the_argument(spark, tmp_path, where) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    output, message = {
        "proc": ("/proc/sparktc-out", "the directory /proc (where /proc/sparktc-out would be made) cannot be written "
                                      "(No such file or directory); give a directory this user can write"),
        "under_a_file": (f"{tmp_path}/notes.txt/out", f"{tmp_path}/notes.txt is a file, so the directory cannot be "
                                                      "made there; give a directory path"),
        "a_file": (f"{tmp_path}/notes.txt", "is an existing file, not a directory; give a directory path"),
    }[where]
    with no_spark_job(spark), pytest.raises(ConfigError) as caught:
        sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, output)
    assert str(caught.value) == f"output {output}{':' if where != 'a_file' else ''} {message}"
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"] and not os.path.exists("/proc/sparktc-out")


def test_a_sparktc_setting_of_the_session_is_refused_before_any_spark_work(spark, tmp_path) -> None:
    spark.conf.set("spark.sparktc.task_memory", "10m")
    try:
        with no_spark_job(spark), pytest.raises(ConfigError, match=re.escape(
                "spark.conf 'spark.sparktc.task_memory' = '10m' is not allowed; expected a memory size")):
            sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, str(tmp_path / "out"))
    finally:
        spark.conf.unset("spark.sparktc.task_memory")
    assert not (tmp_path / "out").exists()


# --- arguments checked at the door ------------------------------------------------------------------------------


def test_a_path_is_a_str_or_a_path_like_never_a_file_descriptor(spark, tmp_path) -> None:
    read, write = os.pipe()  # a descriptor holding text that is no TOML: open() would read it, then close it
    os.write(write, b"not toml\n")
    os.close(write)
    try:
        with pytest.raises(ConfigError, match=re.escape("config must be a path (a str or an os.PathLike such as "
                                                        "pathlib.Path), a dict of sections or None; got int")):
            load_config(read)
        with pytest.raises(ConfigError, match=r"config must be a path .*, a Config or None; got int"):
            sparktc.run_pipeline(spark, read, str(tmp_path / "out"))
        assert os.read(read, 100) == b"not toml\n"  # neither read nor closed
    finally:
        os.close(read)
    with pytest.raises(ConfigError, match=re.escape("output must be a path (a str or an os.PathLike such as "
                                                    "pathlib.Path); got int 3")):
        sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, 3)
    with pytest.raises(ConfigError, match="path must be a path .*; got bytes b'model'"):
        sparktc.load_model(spark, b"model")
    with pytest.raises(ConfigError, match="spark must be a SparkSession"):
        sparktc.load_model("spark", str(tmp_path))
    with pytest.raises(SparktcError, match=f"no model bundle at {tmp_path / 'none'}"):
        sparktc.load_model(spark, tmp_path / "none")
    assert not (tmp_path / "out").exists()


REFUSED = ["train.Cx=1"]  # a setting refused: the code before the checks at the door stopped there


@pytest.mark.parametrize(("arguments", "message"), [
    ({"stages": "train", "overrides": REFUSED},
     "stages must be a list or tuple of strings (one string is a list of one: ['train']); got str 'train'"),
    ({"stages": ["train", None], "overrides": REFUSED},
     "stages must be a list or tuple of strings; got NoneType None at index 1"),
    ({"stages": ["trian"]}, "unknown stage trian; stages: ingest, tokenize, weight, rank, train, evaluate"),
    ({"overrides": "train.liblinear.C=1"},
     "overrides must be a list or tuple of strings (one string is a list of one: ['train.liblinear.C=1']); got str"),
    ({"overrides": ["train.liblinear.C=1", 2]}, "overrides must be a list or tuple of strings; got int 2 at index 1"),
    ({"preset": 1, "overrides": REFUSED}, "preset must be a str (a preset's name, or \"\"); got int 1"),
    ({"force": "yes", "overrides": REFUSED}, "force must be True or False; got str 'yes'"),
    ({"force": 1, "overrides": REFUSED}, "force must be True or False; got int 1"),
    ({"verbose": 0, "overrides": REFUSED}, "verbose must be True or False; got int 0"),
    ({"verbose": None, "overrides": REFUSED}, "verbose must be True or False; got NoneType None"),
])
def test_lists_of_strings_and_flags_are_checked_before_anything_runs(spark, tmp_path, arguments, message) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, str(tmp_path / "out"), **arguments)
    assert not (tmp_path / "out").exists()


def test_load_config_refuses_a_bare_string_of_overrides_and_a_preset_that_is_no_string() -> None:
    with pytest.raises(ConfigError, match=re.escape("overrides must be a list or tuple of strings (one string is")):
        load_config(None, "train.liblinear.C=1")
    with pytest.raises(ConfigError, match="preset must be a str"):
        load_config(None, [], None)


@contextmanager
def no_spark_job(spark) -> Iterator[None]:
    """Fail unless the block starts no Spark job."""
    context = spark.sparkContext
    context.setLocalProperty("spark.jobGroup.id", "door")
    try:
        yield
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert context.statusTracker().getJobIdsForGroup("door") == []


def test_top_k_the_model_and_the_documents_are_checked_as_the_job_checks_them(model, spark) -> None:
    frame = spark.createDataFrame([("d1", "oil")], ["doc_id", "text"])
    for top_k in (2.5, True, 0, "5"):
        with no_spark_job(spark), pytest.raises(ConfigError, match=re.escape(
                f"top_k must be an integer >= 1; got {top_k!r}")):
            sparktc.classify(model, frame, top_k=top_k)
    with pytest.raises(ConfigError, match=re.escape("--top-k must be an integer >= 1; got 0")):
        check_arguments("jsonl", "parquet", 0)  # the job's own rule
    with pytest.raises(ConfigError, match=r"model must be a Bundle \(sparktc.load_model's result\); got str"):
        sparktc.classify("model", frame)
    with pytest.raises(ConfigError, match="documents must be a Spark DataFrame; got DataFrame"):
        sparktc.classify(model, pd.DataFrame({"doc_id": ["d1"], "text": ["oil"]}))  # pandas'


@pytest.mark.parametrize(("schema", "column", "kind", "expected"), [
    ("doc_id double, text string", "doc_id", "double", "string or an integer type"),
    ("doc_id string, text string, labels string", "labels", "string", "array<string>"),
    ("doc_id string, text string, labels array<int>", "labels", "array<int>", "array<string>"),
    ("doc_id string, text array<string>", "text", "array<string>", "string"),
    ("doc_id string, text string, title int", "title", "int", "string"),
    ("doc_id string, indices array<string>, values array<double>", "indices", "array<string>", "an array of integers"),
    ("doc_id string, indices array<int>, values array<string>", "values", "array<string>", "array<float> or"),
    ("doc_id string, indices int, values array<double>", "indices", "int", "an array of integers"),
    ("doc_id bigint, indices array<bigint>, values array<float>, counts array<double>", "counts", "array<double>",
     "an array of integers"),
])
def test_each_column_s_type_is_checked_before_any_spark_job(model, spark, schema, column, kind, expected) -> None:
    frame = spark.createDataFrame([], schema)
    with no_spark_job(spark), pytest.raises(ClassifyError, match=re.escape(
            f"the documents' column {column} is {kind}; expected {expected}")):
        sparktc.classify(model, frame)


def texts_of(spark, notebook, n: int) -> list[str]:
    """``n`` texts of the run's documents, which have terms of the model's vocabulary: each document's training terms
    (ingest's integer form, ``term_ids`` into ``terms``), each as often as it occurs.
    """
    terms = [row.term for row in spark.read.parquet(f"{notebook.output}/terms").orderBy("term_id").collect()]
    documents = spark.read.parquet(f"{notebook.output}/documents").filter("size(term_ids) > 0").orderBy("doc_id")
    return [" ".join(terms[i] for i, count in zip(row.term_ids, row.term_counts) for _ in range(count))
            for row in documents.limit(n).collect()]


def in_two_partitions(spark, rows: list[tuple], schema: str):
    """``rows`` as a DataFrame of two partitions, the first half of the rows in the first, in order: the rows'
    places are known.
    """
    names = [field.split()[0] for field in schema.split(", ")]
    columns = [F.element_at(F.array(*[F.lit(row[i]) for row in rows]), F.col("id").cast("int") + 1) for i in
               range(len(names))]
    return spark.range(0, len(rows), 1, 2).select(*[c.cast(kind.split()[1]).alias(kind.split()[0])
                                                    for c, kind in zip(columns, schema.split(", "))])


def test_rows_the_job_would_reject_keep_their_row_with_its_reason(model, notebook, spark) -> None:
    one, two, three = texts_of(spark, notebook, 3)
    frame = in_two_partitions(spark, [
        ("a", one, ["first"]), (None, two, []), ("", two, []), ("n", None, []),
        ("z", "zzzz qqqq", []), ("a", three, ["second"]), ("z", one, ["kept"]), ("z", two, ["again"])],
        "doc_id string, text string, labels array<string>")
    rows = sparktc.classify(model, frame).collect()
    assert len(rows) == 8  # nothing dropped
    reasons = sorted(((row.doc_id, row.labels, row.reason) for row in rows if row.reason is not None), key=str)
    assert reasons == sorted([
        (None, [], NO_ID), ("", [], NO_ID), ("n", [], NO_TEXT), ("z", [], NO_TERMS),
        ("a", ["second"], "duplicate doc id (first at row 1 of partition 0 of the DataFrame); doc ids must be unique"),
        # the first of z's rows that can be classified is kept, as by the job
        ("z", ["again"], "duplicate doc id (first at row 3 of partition 1 of the DataFrame); doc ids must be unique"),
    ], key=str)
    classified = sorted((row.doc_id, row.labels) for row in rows if row.reason is None)
    assert classified == [("a", ["first"]), ("z", ["kept"])]
    assert all(row.predicted is not None for row in rows if row.reason is None)
    assert all(row.predicted is None and row.top_scores is None for row in rows if row.reason is not None)


def test_the_api_and_the_classify_job_give_one_answer_for_one_input(model, notebook, spark, tmp_path) -> None:
    one, two, three = texts_of(spark, notebook, 3)
    files = {"a.jsonl": [("a", one), ("b", two), ("z", "zzzz qqqq")], "b.jsonl": [("a", three), ("c", three)]}
    source = tmp_path / "documents"
    source.mkdir()
    for name, documents in files.items():
        (source / name).write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in documents))
    job.classify(spark, model, str(source), str(tmp_path / "out"))
    by_job = pd.read_parquet(tmp_path / "out" / "predictions").set_index("doc_id").sort_index()
    rejected = dict(pd.read_parquet(tmp_path / "out" / "rejects")[["doc_id", "reason"]].values)
    frame = spark.createDataFrame(files["a.jsonl"], "doc_id string, text string").coalesce(1).union(
        spark.createDataFrame(files["b.jsonl"], "doc_id string, text string").coalesce(1))
    by_api = sparktc.classify(model, frame).toPandas()
    classified = by_api[by_api["reason"].isna()].set_index("doc_id").sort_index()
    assert list(classified.index) == list(by_job.index) == ["a", "b", "c"]
    for column in ("predicted", "predicted_names", "top_categories"):
        assert [list(v) for v in classified[column]] == [list(v) for v in by_job[column]]
    np.testing.assert_allclose(np.vstack(classified["top_scores"]), np.vstack(by_job["top_scores"]), rtol=0, atol=0)
    unplaced = {doc_id: re.sub(r"\(first at [^)]*\)", "(first at ...)", reason)
                for doc_id, reason in by_api[by_api["reason"].notna()][["doc_id", "reason"]].values}
    assert unplaced == {doc_id: re.sub(r"\(first at [^)]*\)", "(first at ...)", reason)
                        for doc_id, reason in rejected.items()}
    assert unplaced == {"z": NO_TERMS, "a": "duplicate doc id (first at ...); doc ids must be unique"}


def test_vectors_the_job_would_not_classify_keep_their_row_with_the_reason(model, spark) -> None:
    n_terms = len(model.terms)
    rows = [("ok", [0, 1], [1.0, 0.5]), ("short", [0, 1], [1.0]), ("nan", [0], [math.nan]), ("inf", [0], [-math.inf]),
            ("huge", [0], [1e300]), ("no indices", None, [1.0]), ("no values", [0], None),
            ("a null", [0, None], [1.0, 1.0]), ("far", [10**10], [1.0]), (None, [0], [1.0]), ("empty", [], []),
            ("twice", [1, 1], [0.3, 0.4]), ("unsorted", [2, 1], [0.3, 0.4]), ("ok", [2], [1.0])]
    frame = spark.createDataFrame(rows, "doc_id string, indices array<bigint>, values array<double>").coalesce(1)
    result = sparktc.classify(model, frame).collect()
    assert len(result) == len(rows)
    reasons = {row.doc_id: row.reason for row in result if row.reason is not None}
    assert reasons == {
        "short": "indices and values differ in length (2 and 1): give one entry per term id",
        "nan": NOT_FINITE, "inf": NOT_FINITE, "huge": NOT_FINITE,
        "no indices": "indices is null or holds a null: give every document a list (an empty one for a document "
                      "without terms)",
        "no values": "values is null or holds a null: give every document a list (an empty one for a document "
                     "without terms)",
        "a null": "indices is null or holds a null: give every document a list (an empty one for a document "
                  "without terms)",
        "far": f"a term id outside the model's {n_terms:,} terms (0 to {n_terms - 1:,})",
        None: NO_ID, "empty": NO_TERMS,
        "twice": "indices name a term id more than once: give each term id once, with its values summed",
        "unsorted": "indices are not in increasing order: give the term ids in increasing order, their values in the "
                    "same order (as Spark ML's SparseVector takes them)",
        "ok": "duplicate doc id (first at row 1 of partition 0 of the DataFrame); doc ids must be unique"}
    [ok] = [row for row in result if row.doc_id == "ok" and row.reason is None]
    scores = linear_scores(model, [0, 1], [1.0, 0.5])
    np.testing.assert_allclose(ok.top_scores, np.sort(scores)[::-1][:5], rtol=1e-5, atol=1e-6)


# --- the interpreter of the workers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python without sparktc's dependencies: a new venv of this Python's base, without packages."""
    folder = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return str(folder / "bin" / "python")


def test_workers_whose_python_lacks_the_dependencies_are_refused_naming_pyspark_python(model, spark, bare_python,
                                                                                        tmp_path, monkeypatch):
    # As if PYSPARK_PYTHON had named it when the session started: PySpark reads it into pythonExec then.
    monkeypatch.setattr(spark.sparkContext, "pythonExec", bare_python)
    message = (f"the Spark workers' Python, {bare_python} (PYSPARK_PYTHON, else python3, when the session started), "
               "lacks numpy, scipy, pyarrow, pandas, liblinear, sklearn, Stemmer: "
               f"set PYSPARK_PYTHON={sys.executable}, this interpreter, before the session starts")
    frame = spark.createDataFrame([("d1", "oil")], ["doc_id", "text"])
    with no_spark_job(spark):
        with pytest.raises(SparktcError, match=re.escape(message)):
            sparktc.classify(model, frame)
        with pytest.raises(SparktcError, match=re.escape(message)):
            sparktc.load_model(spark, Path(model.path))
        with pytest.raises(SparktcError, match=re.escape(message)):
            sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_able_python_is_probed_once(model, spark, monkeypatch) -> None:
    sparktc.classify(model, spark.createDataFrame([("d1", "oil")], ["doc_id", "text"]))
    monkeypatch.setattr(session, "python_problem", lambda executable: pytest.fail(f"{executable} probed again"))
    sparktc.classify(model, spark.createDataFrame([("d2", "oil")], ["doc_id", "text"]))


def test_the_workers_python_is_checked_on_local_sessions_only() -> None:
    def context(master: str) -> SimpleNamespace:
        return SimpleNamespace(sparkContext=SimpleNamespace(master=master, pythonExec="python3"))

    assert session.local_workers_python(context("local[2,4]")) == "python3"
    assert session.local_workers_python(context("local-cluster[2,1,1024]")) == "python3"
    assert session.local_workers_python(context("spark://master:7077")) is None  # other machines' interpreters
    assert session.local_workers_python(SimpleNamespace()) is None  # Spark Connect: no SparkContext


def test_a_python_that_cannot_start_or_lacks_modules_is_said_so(bare_python) -> None:
    assert session.python_problem(sys.executable) is None
    assert session.python_problem(bare_python) == "lacks numpy, scipy, pyarrow, pandas, liblinear, sklearn, Stemmer"
    assert session.python_problem("/nonexistent/python") == "cannot be started (No such file or directory)"


# --- the notebook under examples/ ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def executed_notebook(notebook_kernel_run) -> nbformat.NotebookNode:
    """``examples/notebook.ipynb`` executed headless (nbclient) in a kernel of this Python, in ``examples/`` of a
    copy of the layout (conf/ beside it), in an environment without PYSPARK_PYTHON: the notebook with its outputs
    (conftest.py's ``notebook_kernel_run``).
    """
    return nbformat.reads(notebook_kernel_run["notebook"], as_version=4)


@pytest.mark.spark  # a run in a kernel
def test_the_example_notebook_runs_headless_and_shows_the_run_in_one_cell(executed_notebook) -> None:
    run = cell_outputs(executed_notebook, "result = sparktc.run_pipeline(")
    assert not [output for output in run if output.output_type == "stream" and output.name == "stdout"]
    # Spark's console bar, on in a kernel's session unless the session turns it off as the first cell does
    assert not [output for cell in executed_notebook.cells if cell.cell_type == "code" for output in cell.outputs
                if output.output_type == "stream" and "[Stage " in output.text]
    [shown] = [output for output in run if output.output_type == "execute_result"]
    assert shown.data["text/plain"].startswith("RunResult(") and len(shown.data["text/plain"]) < 300
    page = shown.data["text/html"]
    assert page.count('src="data:image/png;base64,') == 2 and "Decision rule" in page and "report.md</a>" in page
    table = cell_outputs(executed_notebook, "table = result.per_category()")
    assert "<table" in table[0].data["text/html"]
    [figures] = [output.data["text/plain"] for output in cell_outputs(executed_notebook, "result.figures")]
    assert figures.count(".png") == 2
    [model] = [output for output in cell_outputs(executed_notebook, "model = ")
               if output.output_type == "execute_result"]
    assert model.data["text/plain"].startswith("Bundle(") and "Decision rule" in model.data["text/html"]
    [predictions] = cell_outputs(executed_notebook, "# Five of the run's documents")
    rows = re.findall(r"<tr>\s*<th>(\d+)</th>", predictions.data["text/html"])
    assert rows == ["0", "1", "2", "3", "4"]  # five documents
