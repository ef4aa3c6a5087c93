"""The Python API: the README's notebook example as it stands, in a Python whose environment has no PYSPARK_PYTHON;
classify over DataFrames checked against the bundle's scores computed independently; the workers' interpreter checked
before the first job.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import FIRST_TIER_JIT, REPO
from pyspark.sql import functions as F

import sparktc
from sparktc.apps.classify import NO_TERMS
from sparktc.errors import ConfigError, SparktcError
from sparktc.runtime import session

EXAMPLE = re.compile(r"<!-- notebook example[^>]*-->\n```python\n(.*?)```", re.S)
#: Run after the README block, in its process: what the tests read of it.
EPILOGUE = """
import json as _json
predictions.write.parquet("predictions")
_json.dump({"output": result.output, "exit_status": result.record.exit_status, "run_id": result.record.run_id,
            "stages": [s["stage"] for s in result.record.stages], "metrics": result.metrics,
            "recorded_micro_f1": result.record.metrics["micro_f1"], "C": result.record.config["train"]["C"],
            "texts": [row.doc_id for row in texts.collect()]}, open("facts.json", "w"))
"""
#: The settings a kernel could start with, none of them PYSPARK_PYTHON: two cores and few shuffle partitions, as the
#: suite's session, to keep the run short.
SUBMIT_ARGS = ("--master local[2] --conf spark.sql.shuffle.partitions=4 --conf spark.ui.enabled=false "
               f"--conf spark.driver.extraJavaOptions={FIRST_TIER_JIT} pyspark-shell")


def kernel_environment() -> dict[str, str]:
    """This process's environment as a plain Jupyter kernel started from the project's venv has it: without
    PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON (this checkout's sparktc on the path).
    """
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS")}
    return environment | {"PYTHONPATH": str(REPO), "PYSPARK_SUBMIT_ARGS": SUBMIT_ARGS}


@pytest.fixture(scope="module")
def notebook(tmp_path_factory) -> SimpleNamespace:
    """The README's example run as written by the project's Python in a fresh directory, in an environment
    without PYSPARK_PYTHON: what it printed, its predictions and what the epilogue read of its run.
    """
    [code] = EXAMPLE.findall((REPO / "README.md").read_text())
    folder = tmp_path_factory.mktemp("notebook")
    done = subprocess.run([sys.executable, "-c", code + EPILOGUE], cwd=folder, env=kernel_environment(),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return SimpleNamespace(stdout=done.stdout, predictions=str(folder / "predictions"),
                           **json.loads((folder / "facts.json").read_text()))


@pytest.fixture(scope="module")
def model(spark, notebook):
    return sparktc.load_model(spark, f"{notebook.output}/model")


def test_the_readme_notebook_example_runs_without_pyspark_python_and_returns_the_metrics(notebook) -> None:
    assert notebook.exit_status == 0 and notebook.run_id
    assert notebook.stages == ["synthesize", "ingest", "tokenize", "weight", "rank", "train", "evaluate"]
    assert 0 < notebook.metrics["micro_f1"] <= 1 and notebook.metrics["micro_f1"] == notebook.recorded_micro_f1
    assert notebook.C == 0.5  # the override applied to the dict
    assert f"micro-F1 {notebook.metrics['micro_f1']:.4f}" in notebook.stdout and "top_scores" in notebook.stdout


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
            sparktc.load_model(spark, model.path)
        with pytest.raises(SparktcError, match=re.escape(message)):
            sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, str(tmp_path / "out"))
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
