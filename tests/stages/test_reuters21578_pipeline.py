"""The whole experiment on the real Reuters-21578 (../shared/data/reuters21578): R(90) ApteMod, plain one-vs-rest.

Counts from REFERENCE.md section 1: ModApte 9,603 train / 3,299 test, 90 categories in R(90), earn
with 2,877 training positives. The ApteMod filter leaves 7,770 training documents, one more than
Yang & Liu's 7,769: NEWID 1199 (reut2-001, a BRIEF story labelled trade) is missing from the
common ApteMod copies, apparently because its <REUTERS> tag carries the undocumented CSECS
attribute; we keep it, as the ModApte definition does (see tests/corpora/test_reuters21578_reader.py).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import REPO, shared_data
from pyspark.sql import functions as F

from sparktc.apps.pipeline import run as run_pipeline
from sparktc.experiment.config import load_config


@pytest.fixture(scope="module")
def run(reuters21578_run):
    """The suite's one local-mode run of the pipeline (conftest.py; tests/apps/test_cluster.py compares with it)."""
    return reuters21578_run


def test_aptemod_counts(spark, run) -> None:
    output, reports = run
    ingest_report = reports["ingest"]
    assert ingest_report["rows_in"] == 21_578
    assert ingest_report["set_aside"] == {"not in the ModApte split": 8_676,
                                          "no category of R(90) (ApteMod filter)": 2_113}
    assert (ingest_report["details"]["train_documents"], ingest_report["details"]["test_documents"]) == (7_770, 3_019)
    categories = spark.read.parquet(f"{output}/categories")
    assert categories.count() == 90
    earn = categories.filter(F.col("category") == "earn").first()
    assert (earn["train_positives"], earn["name"]) == (2_877, "Earnings and Earnings Forecasts")
    assert categories.filter((F.col("train_positives") == 0) | (F.col("test_positives") == 0)).count() == 0
    assert spark.read.parquet(f"{output}/rejects").count() == 0


def test_every_stage_reconciles(run) -> None:
    _, reports = run
    assert reports["tokenize"]["rows_in"] == reports["tokenize"]["rows_out"] == 10_789
    assert reports["weight"]["rows_out"] == 10_789
    assert reports["train"]["rows_out"] == 90
    assert reports["evaluate"]["rows_in"] == reports["evaluate"]["rows_out"] == 3_019


def test_plain_one_vs_rest_reaches_the_published_micro_f1(run) -> None:
    output, _ = run
    metrics = json.loads(Path(output, "metrics.json").read_text())
    assert metrics["n_categories"] == 90 and metrics["zero_division"] == 1.0
    assert metrics["test_documents"] == 3_019
    # Yang & Liu's SVM: .8599 micro-F1 (REFERENCE.md section 7); the issue asks for >= .855.
    assert metrics["micro_f1"] >= 0.855
    assert 0.3 < metrics["macro_f1"] < metrics["micro_f1"]


def test_modapte_without_the_aptemod_filter(spark, tmp_path) -> None:
    config = load_config(str(REPO / "conf" / "reuters21578.toml"),
                         [f"corpus.path={shared_data('reuters21578')}", "corpus.document_filter=none",
                          "corpus.category_set=R115"])
    [report] = run_pipeline(spark, config, str(tmp_path), "ingest")
    assert (report["details"]["train_documents"], report["details"]["test_documents"]) == (9_603, 3_299)
    assert report["details"]["categories"] == 115


def test_reports_of_the_run(run) -> None:
    output, _ = run
    metrics = json.loads(Path(output, "metrics.json").read_text())
    assert metrics["averages"]["R(10)"]["n_categories"] == 10
    assert metrics["averages"]["R(90)"]["micro_f1"] == metrics["micro_f1"]
    assert [band["band"] for band in metrics["bands"]] == ["1-10", "11-100", "101-1000", ">1000"]
    assert sum(band["n_categories"] for band in metrics["bands"]) == 90
    assert 0.9 < metrics["ranking"]["P@1"] <= 1.0
    rows = Path(output, "per_category.csv").read_text().splitlines()
    assert rows[0] == "category,name,train_positives,test_positives,TP,FP,FN,TN,P,R,F1" and len(rows) == 91
    assert any(row.startswith("earn,Earnings and Earnings Forecasts,2877,1087,") for row in rows)
    assert "zero_division = 1.0" in Path(output, "report.md").read_text()
    for plot in ("f1_by_training_frequency.png", "f1_by_band.png"):
        assert Path(output, plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # beside each PNG its SVG and PDF, titled with the run: conf/reuters21578.toml's corpus, set and rule
        title = ET.parse(Path(output, plot.replace(".png", ".svg"))).getroot().find("{http://www.w3.org/2000/svg}title")
        assert title.text.endswith("\nReuters-21578 ApteMod, R(90); SVM (LIBLINEAR -s 1), fixed threshold 0")
        assert Path(output, plot.replace(".png", ".pdf")).read_bytes().startswith(b"%PDF-")
