"""The test documents read once (issue 39): ingest's parsing tasks weight LYRL2004 token files as they parse them, and
the weight stage of the same run adopts those vectors when they are exactly what it would write.

Each run here is checked against the weight stage's own work on the same documents (a second run of weight alone,
which has no handoff to adopt): the same ``vectors`` and ``vocabulary``, row for row, and the same report. Where the
weights need more than the training file's counts (supervised: the labels), or the corpus is not clean (ingest's
documents are not every record parsed), weight computes the vectors itself.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from chispa import assert_df_equality

from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import load_config
from sparktc.runtime import storage
from sparktc.stages.weight import WEIGHTED, WEIGHTED_STAMP, IdWeights, adopt_weighted, leave_weighted

pytestmark = pytest.mark.spark

STAGES = ("ingest", "tokenize", "weight")


def config_of(corpus: Path, *overrides: str):
    return load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", "tokenize.stemmer=none", *overrides])


def weight_details(output: Path) -> dict:
    return json.loads((output / "manifests" / "weight.json").read_text())["details"]


def assert_same_weights(spark, output: Path, reference: Path) -> None:
    """``vectors`` and ``vocabulary`` of both runs equal, row for row, and the weight reports but for who weighted."""
    for name, keys in (("vectors", ["split", "doc_id"]), ("vocabulary", ["term_id"])):
        found, expected = (spark.read.parquet(str(run / name)).orderBy(*keys) for run in (output, reference))
        assert_df_equality(found, expected)
    found, expected = weight_details(output), weight_details(reference)
    found.pop("weighted_by", None)
    expected.pop("weighted_by", None)
    assert found == expected


@pytest.fixture(scope="module")
def fused(spark, small_corpus, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("fused") / "run"
    run_stages(spark, config_of(small_corpus), str(output), *STAGES)
    return output


def test_weight_adopts_the_vectors_ingest_weighted_and_the_run_leaves_no_handoff(fused):
    assert weight_details(fused)["weighted_by"] == "ingest"
    assert not (fused / "_incomplete").exists()


def test_the_adopted_vectors_are_those_the_weight_stage_computes(spark, small_corpus, fused, tmp_path):
    alone = tmp_path / "run"
    shutil.copytree(fused, alone)
    run_stages(spark, config_of(small_corpus), str(alone), "weight", force=True)  # a run of its own: no handoff
    assert "weighted_by" not in weight_details(alone)
    assert_same_weights(spark, fused, alone)


def test_weights_that_need_the_labels_are_computed_by_the_weight_stage(spark, small_corpus, tmp_path):
    output = tmp_path / "run"
    run_stages(spark, config_of(small_corpus, "weight.scheme=supervised"), str(output), *STAGES)
    assert "weighted_by" not in weight_details(output)
    assert json.loads((output / "manifests" / "weight.json").read_text())["rows_out"] > 0


def test_a_corpus_with_a_repeated_doc_id_is_weighted_by_the_weight_stage(spark, small_corpus, fused, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(small_corpus, corpus)
    train = next(corpus.glob("lyrl2004_tokens_train.dat*"))
    first_id = _read(train).split(b"\n", 1)[0].split()[1]
    test = next(corpus.glob("lyrl2004_tokens_test_pt0.dat*"))
    _write(test, _read(test) + b".I " + first_id + b"\n.W\nrepeated document\n\n")
    output = tmp_path / "run"
    run_stages(spark, config_of(corpus, "corpus.on_error=reject"), str(output), *STAGES)
    ingest = json.loads((output / "manifests" / "ingest.json").read_text())
    assert ingest["set_aside"].get("rejected", 0) >= 1  # the general path: not every record is a document
    assert "weighted_by" not in weight_details(output)
    assert not (output / "_incomplete").exists()


def _read(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


@pytest.mark.parametrize("change", ["factors", "documents"])
def test_vectors_of_other_weights_or_other_documents_are_not_adopted(spark, fused, tmp_path, change):
    documents = tmp_path / "documents"
    shutil.copytree(fused / "documents", documents)
    handoff = tmp_path / "handoff"
    (handoff / WEIGHTED).mkdir(parents=True)
    weights = IdWeights("ltc", np.arange(5), np.linspace(0.5, 1.5, 5))
    leave_weighted(spark, str(handoff), weights, str(documents), {"read": 0})
    if change == "factors":
        weights = IdWeights("ltc", weights.to_vocabulary, np.nextafter(weights.factors, 2.0))
    else:
        next(documents.rglob("part-*.parquet")).unlink()
    assert adopt_weighted(spark, str(handoff), weights, str(documents), str(tmp_path / "vectors")) is None
    assert (handoff / WEIGHTED).exists() and (handoff / WEIGHTED_STAMP).exists()
    assert not (tmp_path / "vectors").exists()
    assert storage.exists(spark, str(handoff / WEIGHTED_STAMP))
