"""The Python API: the README's notebook example as it stands, and classify over DataFrames checked against the
classify job's own path and against the bundle's scores computed independently.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from conftest import REPO

import sparktc
from sparktc.errors import ConfigError

EXAMPLE = re.compile(r"<!-- notebook example[^>]*-->\n```python\n(.*?)```", re.S)


@pytest.fixture(scope="module")
def notebook(spark, tmp_path_factory):
    """The README's example run in a fresh directory: its namespace after the block."""
    [code] = EXAMPLE.findall((REPO / "README.md").read_text())
    folder = tmp_path_factory.mktemp("notebook")
    namespace: dict = {}


    before = os.getcwd()
    os.chdir(folder)
    try:
        exec(compile(code, "README.md (notebook example)", "exec"), namespace)
    finally:
        os.chdir(before)
    return namespace


def test_the_readme_notebook_example_runs_and_returns_the_metrics(notebook, capsys) -> None:
    result = notebook["result"]
    assert result.record.exit_status == 0 and result.record.run_id
    assert [s["stage"] for s in result.record.stages] == ["synthesize", "ingest", "tokenize", "weight", "rank",
                                                          "train", "evaluate"]
    assert 0 < result.metrics["micro_f1"] <= 1 and result.metrics["micro_f1"] == result.record.metrics["micro_f1"]
    assert result.record.config["train"]["C"] == 0.5  # the override applied to the dict


def test_classify_gives_every_document_a_row_and_the_bundle_s_scores(notebook, spark) -> None:
    model, texts, predictions = notebook["model"], notebook["texts"], notebook["predictions"]
    rows = {row.doc_id: row for row in predictions.collect()}
    assert set(rows) == {row.doc_id for row in texts.collect()}
    # The same documents as vectors, as the run weighted them: the scores must be the linear model's, X W + b.
    vectors = spark.read.parquet(f"{notebook['result'].output}/vectors").join(texts.select("doc_id"), "doc_id")
    scored = {row.doc_id: row for row in sparktc.classify(model, vectors).collect()}
    scorer = model.scorer
    for row in vectors.collect():
        x = np.zeros(scorer.n_terms)
        x[row.indices] = row.values
        scores = x @ scorer.W + scorer.b
        best = np.argsort(-scores, kind="stable")[:5]
        assert scored[row.doc_id].top_categories == [scorer.codes[i] for i in best]
        np.testing.assert_allclose(scored[row.doc_id].top_scores, scores[best], rtol=1e-5, atol=1e-6)
        assert rows[row.doc_id].predicted == scored[row.doc_id].predicted


def test_documents_that_cannot_be_classified_keep_their_row_with_the_reason(notebook, spark) -> None:
    model = notebook["model"]
    frame = spark.createDataFrame([("a", "zzzz qqqq"), ("b", "")], ["doc_id", "text"])
    rows = {row.doc_id: row for row in sparktc.classify(model, frame).collect()}
    assert set(rows) == {"a", "b"}
    assert all(row.predicted is None and "vocabulary" in row.reason for row in rows.values())
    outside = spark.createDataFrame([("v", [0, 10**8], [1.0, 1.0])], ["doc_id", "indices", "values"])
    [row] = sparktc.classify(model, outside).collect()
    assert row.predicted is None and "outside the model" in row.reason


def test_a_wrong_setting_is_refused_before_any_spark_work(spark, tmp_path) -> None:
    with pytest.raises(ConfigError, match="train.Cx"):
        sparktc.run_pipeline(spark, {"corpus": {"format": "synthetic"}}, str(tmp_path / "out"),
                             overrides=["train.Cx=1"])
    assert not (tmp_path / "out").exists()
