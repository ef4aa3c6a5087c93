"""The Spark ML example of docs/notebooks.md as it stands: a ``pyspark.ml.Pipeline`` of sparktc's stages, from the
texts of Reuters-21578 R(90) to decisions, against the job's own run of the same settings (the suite's
``reuters21578_run``, ``jobs/pipeline.py`` with ``conf/reuters21578.toml``). The pipeline decides every test
document as the job did, the evaluator's micro-F1 is the job's (the figure the page shows), the saved and loaded
PipelineModel decides them again, and the page's CrossValidator block chooses C on 400 training documents, its grid
reaching the classifier inside the estimator.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from docs_examples import example, output

pytestmark = pytest.mark.spark

CV_DOCUMENTS = 400


def page_block(code: str, folder: Path) -> str:
    """A block of the page, its relative paths under ``folder``: Spark resolves them against its JVM's working
    directory, which a Python ``chdir`` does not move.
    """
    return re.sub(r'"(runs|models)/', rf'"{folder}/\1/', code)


@pytest.fixture(scope="module")
def ran(spark, reuters21578_run, tmp_path_factory) -> dict:
    """The page's example run as written in a folder whose ``runs/reuters21578`` is the suite's R(90) run: its
    variables, and what it printed.
    """
    folder = tmp_path_factory.mktemp("spark-ml")
    (folder / "runs").mkdir()
    (folder / "runs" / "reuters21578").symlink_to(reuters21578_run[0])
    namespace: dict = {"spark": spark}
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(page_block(example("spark-ml-reuters21578"), folder), namespace)
    namespace["scored"].cache()  # the tests read it three times: the test documents are analyzed and scored once
    return namespace | {"printed": printed.getvalue(), "folder": folder, "run": reuters21578_run[0]}


def decisions(frame) -> dict[str, list[str]]:
    return {row.doc_id: list(row.predicted) for row in frame.select("doc_id", "predicted").collect()}


def job_decisions(run: str) -> dict[str, list[str]]:
    job = pd.read_parquet(Path(run) / "predictions", columns=["doc_id", "predicted"])
    return {row.doc_id: list(row.predicted) for row in job.itertuples()}


def test_the_pipeline_decides_every_test_document_as_the_job_did(ran):
    job = job_decisions(ran["run"])
    assert len(job) == 3019 and sum(map(len, job.values())) > 3000
    assert decisions(ran["scored"]) == job
    micro_f1 = json.loads((Path(ran["run"]) / "metrics.json").read_text())["micro_f1"]
    assert ran["evaluator"].evaluate(ran["scored"]) == pytest.approx(micro_f1, abs=1e-12)
    assert ran["printed"] == f"micro-F1 {micro_f1:.4f}\n" == output("spark-ml-reuters21578")
    assert [type(stage).__name__ for stage in ran["model"].stages] == [
        "Analyzer", "TermWeightingModel", "TermSelectorModel", "OneVsRestClassifierModel"]


def test_each_categorys_model_is_the_jobs_and_the_columns_say_the_same(ran):
    """The classifier's bundle holds the job's weights, bias, threshold and training positives for every category;
    ``prediction``, ``label`` and ``scores`` say what ``predicted`` and ``labels`` say, in ``categories``' order.
    """
    classifier = ran["model"].stages[-1]
    mine = classifier.bundle.categories.set_index("category")
    theirs = pd.read_parquet(Path(ran["run"]) / "model" / "categories").set_index("category").loc[mine.index]
    assert list(mine.index) == sorted(theirs.index) and len(mine) == 90
    np.testing.assert_allclose(np.vstack(mine["weights"]), np.vstack(theirs["weights"]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mine["bias"], theirs["bias"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mine["threshold"], theirs["threshold"], rtol=1e-9, atol=1e-12)
    assert list(mine["train_positives"]) == list(theirs["train_positives"])
    codes = classifier.categories
    for row in ran["scored"].limit(50).collect():
        assert [codes[int(i)] for i in row.prediction] == list(row.predicted)
        assert sorted(codes[int(i)] for i in row.label) == sorted(row.labels)
        scores = np.asarray(row.scores)
        assert len(scores) == 90
        assert [codes[i] for i in np.flatnonzero(scores > mine["threshold"].to_numpy())] == list(row.predicted)


def test_the_saved_pipeline_read_back_decides_them_again(ran):
    saved = ran["folder"] / "models" / "reuters21578-ml"
    assert sorted(path.name for path in saved.iterdir()) == ["metadata", "stages"]
    assert decisions(ran["again"].transform(ran["test"])) == job_decisions(ran["run"])


def test_cross_validation_chooses_c_on_training_documents(ran):
    namespace = dict(ran)
    namespace["train"] = ran["train"].orderBy("doc_id").limit(CV_DOCUMENTS)
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(page_block(example("spark-ml-cross-validation"), ran["folder"]), namespace)
    metrics = namespace["chosen"].avgMetrics
    assert len(metrics) == 2 and all(0 <= value <= 1 for value in metrics) and metrics[0] != metrics[1]
    best = namespace["chosen"].bestModel.stages[-1]
    chosen = best.getClassifier().getC()
    assert chosen == [0.1, 1.0][metrics.index(max(metrics))]
    # The grid reached the classifier inside the estimator through copy (the metrics differ above, and the best
    # model's bundle was trained with the C its classifier says); the page's own classifier is left as it was.
    assert best.bundle.settings["train"]["liblinear"]["C"] == chosen and best.bundle.rule.method == "liblinear"
    assert namespace["liblinear"].getC() == 1.0
    assert printed.getvalue() == f"C {chosen} micro-F1 by C {[round(value, 4) for value in metrics]}\n"
