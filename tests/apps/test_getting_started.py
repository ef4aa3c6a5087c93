"""The README's and docs/getting-started.md's examples as they stand, each run by the job's own entry point on this
session, in the order a newcomer runs them: the R(90) command (the suite's ``reuters21578_run`` is that command,
conftest.py), classify on examples/classify-sample.jsonl, a second run and the comparison of the two, the Python API
and the Spark ML pipeline. Only paths are substituted: the corpus in ../shared/data, the outputs in a temporary
folder. The main command (``main-job``) runs through spark-submit.sh in tests/apps/test_submit.py.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import (
    REPO,
    command_words,
    job_arguments,
    prepared_job,
    reuters21578_arguments,
    run_prepared,
    shared_data,
    substituted,
)
from docs_examples import example, output

from sparktc.apps import submit
from sparktc.apps.cli import parse_arguments
from sparktc.apps.pipeline import run as run_pipeline
from sparktc.experiment.bundle import BUNDLE_FORMAT


def test_getting_started_gives_the_readme_commands_word_for_word():
    assert example("getting-started-main-job") == example("main-job")
    assert example("getting-started-reuters21578") == example("reuters21578")


def test_sparktc_run_is_the_readme_r90_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The installed command's form reaches jobs/pipeline.py with the settings of the suite's R(90) run."""
    submitted = []
    monkeypatch.setattr(submit, "submit", lambda home, arguments, ship=True: submitted.append(arguments) or 0)
    words = command_words(example("sparktc-run-reuters21578"))
    assert words[:2] == ["sparktc", "run"]
    assert submit.main(words[1:]) == 0
    [[job, *arguments]] = submitted
    assert Path(job).name == "pipeline.py"
    corpus = {"../shared/data/reuters21578": str(shared_data("reuters21578"))}
    installed, _, _ = parse_arguments("", substituted(arguments, {**corpus, "runs/reuters21578": str(tmp_path / "a")}))
    readme, _, _ = parse_arguments("", reuters21578_arguments(tmp_path / "b"))
    assert installed == readme


@pytest.fixture(scope="module")
def folder(reuters21578_run, tmp_path_factory) -> Path:
    """A working folder whose runs/reuters21578 is a copy of the suite's R(90) run (the R(90) command's output: the
    examples after it may write into it).
    """
    folder = tmp_path_factory.mktemp("getting-started")
    shutil.copytree(reuters21578_run[0], folder / "runs" / "reuters21578", symlinks=True)
    return folder


def in_folder(folder: Path, words: list[str]) -> list[str]:
    """A block's words with its runs/... paths inside ``folder``."""
    return [str(folder / word) if word.startswith("runs/") else word for word in words]


def test_the_r90_run_ends_as_getting_started_says(reuters21578_run):
    metrics = pd.read_json(Path(reuters21578_run[0], "metrics.json"), typ="series")
    assert (round(metrics["micro_f1"], 4), round(metrics["macro_f1"], 4)) == (0.8642, 0.4218)
    assert reuters21578_run[1]["ingest"]["rows_in"] == 21_578


def test_classify_the_sample(spark, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """The job prints what the guide shows, its stage line's time aside; the table is the predictions written."""
    job, arguments = job_arguments(example("classify-sample"))
    assert arguments[arguments.index("--input") + 1] == str(REPO / "examples" / "classify-sample.jsonl")
    prepared = prepared_job(job, in_folder(folder, arguments), monkeypatch)
    capsys.readouterr()
    run_prepared(spark, prepared)
    printed = capsys.readouterr().out.splitlines()
    expected = output("classify-sample").splitlines()
    assert [re.sub(r"\[[0-9.]+ s\]$", "[TIME]", line) for line in printed] == \
        [re.sub(r"\[[0-9.]+ s\]$", "[TIME]", line) for line in expected]
    predictions = pq.read_table(folder / "runs" / "classified" / "predictions").to_pandas().sort_values("doc_id")
    rows = [line.split(None, 1) for line in expected[2:12]]
    assert [(doc_id, sorted(shown.split()[0] for shown in categories.split(", "))) for doc_id, categories in rows] == \
        [(doc_id, sorted(predicted)) for doc_id, predicted in zip(predictions["doc_id"], predictions["predicted"])]
    assert len(pq.read_table(folder / "runs" / "classified" / "rejects")) == 0


@pytest.fixture(scope="module")
def second_run(spark, folder: Path) -> Path:
    """The second run of getting started, into a copy of the R(90) run's output: its corpus stages (ingest to rank,
    the same settings) are current there and skipped, as in a rerun; train and evaluate run.
    """
    _, arguments = job_arguments(example("reuters21578-rocchio"))
    arguments = substituted(in_folder(folder, arguments),
                            {"../shared/data/reuters21578": str(shared_data("reuters21578"))})
    config, output, force = parse_arguments("", arguments)
    shutil.copytree(folder / "runs" / "reuters21578", output, symlinks=True)
    manifests = {m["stage"]: m for m in run_pipeline(spark, config, output, force=force)}
    assert set(manifests) == {"ingest", "tokenize", "weight", "rank", "train", "evaluate"}
    return Path(output)


def test_the_second_run_ends_as_getting_started_says(second_run: Path):
    metrics = pd.read_json(second_run / "metrics.json", typ="series")
    assert metrics["method"]["name"] == "rocchio" and metrics["thresholding"]["name"] == "scut"
    assert (round(metrics["micro_f1"], 4), round(metrics["macro_f1"], 4)) == (0.7857, 0.5595)


def test_compare_the_two_runs(spark, folder: Path, second_run: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    job, arguments = job_arguments(example("compare-runs"))
    assert in_folder(folder, arguments)[1] == str(second_run)
    run_prepared(spark, prepared_job(job, in_folder(folder, arguments), monkeypatch))
    comparison = (folder / "runs" / "compare" / "comparison.md").read_text()
    for line in output("compare-runs").splitlines():
        assert line in comparison.splitlines(), line
    assert "## Table 2" in capsys.readouterr().out


def test_the_python_api_example(spark, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """The README's block as it stands, in the folder (its R(90) run current there, so every stage is skipped, as the
    README says), the corpus path made absolute.
    """
    code = example("python-api").replace("../shared/data/reuters21578", str(shared_data("reuters21578")))
    monkeypatch.chdir(folder)
    # As a plain interpreter runs it: without PYSPARK_PYTHON the workers would start the system's python3. The suite's
    # session has started already, so the block's own setting is checked here, not a session it starts.
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    exec(compile(code, "README.md python-api", "exec"), {})  # noqa: S102
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "micro-F1 0.8642, macro-F1 0.4218" in printed
    assert "[crude]" in printed
    for stage in ("ingest", "tokenize", "weight", "rank", "train", "evaluate"):
        assert re.search(rf"sparktc: {stage} +up to date, skipped", printed), stage


def test_the_spark_ml_example_decides_as_the_job(spark, reuters21578_subset_run):
    """The README's Spark ML block on the suite's run of the README's R(90) command on three of the corpus's files
    (``reuters21578_subset_run``; it only reads the run; its path made absolute: Spark resolves a relative one against
    its JVM's working directory): the pipeline of sparktc.ml stages makes the job's decisions on every test
    document. On the whole corpus, docs/notebooks.md's longer block does (tests/ml/test_pipeline.py).
    """
    run = reuters21578_subset_run[0]
    code = example("spark-ml-pipeline").replace('"runs/reuters21578/', f'"{run}/')
    namespace = {"spark": spark}
    exec(compile(code, "README.md spark-ml-pipeline", "exec"), namespace)  # noqa: S102
    scored = {row.doc_id: sorted(row.predicted) for row in namespace["scored"].select("doc_id", "predicted").collect()}
    job = {row.doc_id: sorted(row.predicted)
           for row in spark.read.parquet(os.path.join(run, "predictions")).collect()}
    assert len(job) == 652 and scored == job


def test_the_evaluation_page_lists_the_reports_sections_in_their_order(reuters21578_run):
    """docs/evaluation.md's list of report.md's sections, "Settings" last, against the R(90) run's report.md (which
    has the sections its run calls for).
    """
    page = (REPO / "docs" / "evaluation.md").read_text()
    listed = re.findall(r'^\d+\. (?:the title|the number|"([^"]+)")', page.split("## report.md", 1)[1], re.M)
    listed = [name for name in listed if name]
    report = Path(reuters21578_run[0], "report.md").read_text()
    headings = [line[3:].split(" (")[0] for line in report.splitlines() if line.startswith("## ")]
    assert headings == [name for name in listed if name in headings] and headings[-1] == listed[-1] == "Settings"


def test_the_evaluation_page_names_the_current_bundle_format():
    page = (REPO / "docs" / "evaluation.md").read_text()
    assert f"`bundle_format`: {BUNDLE_FORMAT} now" in page
