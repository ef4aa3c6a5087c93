"""benchmarks/svm_knn_blend.py on test_methods' prepared corpus, against the pipeline's own runs of its members.

Each member alone, thresholded on its raw scores by the harness, must give what ``jobs/pipeline.py`` gives for that
method with the same SCutFBR rule: the train manifest's cross-validated micro-F1 and metrics.json's test micro- and
macro-F1. The blend's chosen alpha is the one of best cross-validated micro-F1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_methods import KNN_K, corpus_config, prepared_corpus

from benchmarks.svm_knn_blend import measure, render
from sparktc.apps.pipeline import run as run_stages

MEMBERS = {"liblinear_alone": ["train.thresholding=scutfbr"],
           "knn_alone": ["train.method=knn", f"train.knn.k={KNN_K}", "train.thresholding=scutfbr"]}


@pytest.fixture(scope="module")
def measured(spark, tmp_path_factory):
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    base = tmp_path_factory.mktemp("blend")
    pipeline = {}
    for name, overrides in MEMBERS.items():
        output = base / name
        shutil.copytree(prepared, output)
        run_stages(spark, corpus_config(corpus, *overrides), str(output), "train", "evaluate")
        pipeline[name] = {"cv_micro_f1": json.loads((output / "manifests" / "train.json").read_text())["details"]
                          ["cv_micro_f1"], **json.loads((output / "metrics.json").read_text())}
    result = measure(Path(prepared), corpus_config(corpus, *MEMBERS["liblinear_alone"]), KNN_K, 0, (0.0, 0.5, 1.0))
    return pipeline, result


@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_each_member_alone_reproduces_the_pipeline(measured, member: str) -> None:
    pipeline, result = measured
    assert result[member]["cv_micro_f1"] == pytest.approx(pipeline[member]["cv_micro_f1"], abs=1e-12)
    assert result[member]["micro_f1"] == pytest.approx(pipeline[member]["micro_f1"], abs=1e-12)
    assert result[member]["macro_f1"] == pytest.approx(pipeline[member]["macro_f1"], abs=1e-12)


def test_the_chosen_alpha_has_the_best_cross_validated_micro_f1(measured) -> None:
    _, result = measured
    best = max(figures["cv_micro_f1"] for figures in result["per_alpha"].values())
    assert result["per_alpha"][result["chosen_alpha"]]["cv_micro_f1"] == best
    assert f"alpha = {result['chosen_alpha']} (chosen)" in render(result)


def test_a_fixed_threshold_is_refused(spark, tmp_path_factory) -> None:
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    with pytest.raises(ValueError, match="scut or scutfbr"):
        measure(Path(prepared), corpus_config(corpus), KNN_K, 0)
