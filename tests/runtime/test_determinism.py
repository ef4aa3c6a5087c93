"""Same input and configuration, same results: whatever the number of partitions, and on every rerun.

A small synthetic corpus in the LYRL2004 format goes through ingest -> evaluate with 1 and 64
shuffle partitions, and the Parquet files written and read in matching numbers of pieces (one row group
and one read split; 4 KB ones, many of them) and Arrow batches of 10,000 and 13 rows: the two ends of
what a layout can be, empty shuffle partitions included (64 of them for 1,200 documents and their
categories). The 64-partition run is a rerun with ``--force`` over a copy of the 1-partition run's
output (every stage recomputed over a finished run: a second computation agrees with the first).
Vectors, vocabulary, term ranks, models (with cross-validated SCutFBR thresholds over a C grid, so the
folds are exercised), predictions, contingency tables and ``metrics.json`` must be identical to the
last bit in both runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from chispa import assert_df_equality

from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import load_config

PARTITIONS = (1, 64)
#: Session settings per partition count: shuffle partitions, Parquet row-group bytes and read-split
#: bytes (so tables are written and read in about that many pieces), rows per Arrow batch.
LAYOUTS = {
    1: {"spark.sql.shuffle.partitions": "1", "parquet.block.size": str(128 << 20),
        "spark.sql.files.maxPartitionBytes": str(1 << 30), "spark.sql.execution.arrow.maxRecordsPerBatch": "10000"},
    64: {"spark.sql.shuffle.partitions": "64", "parquet.block.size": str(4 << 10),
         "spark.sql.files.maxPartitionBytes": str(4 << 10), "spark.sql.execution.arrow.maxRecordsPerBatch": "13"},
}
COMMON = {"spark.sql.adaptive.coalescePartitions.enabled": "false", "spark.sql.files.openCostInBytes": "0"}
SORT_KEYS = {"vocabulary": "term_id", "vectors": "doc_id", "term_ranks": "term_id", "models": "category",
             "predictions": "doc_id", "contingency": "category", "documents": "doc_id", "categories": "category"}


def corpus_config(corpus: Path):
    return load_config(None, [
        "corpus.format=lyrl2004", f"corpus.path={corpus}", "tokenize.stemmer=none",
        "train.thresholding=scutfbr", "train.folds=3", "tune.liblinear.C=[0.5, 2.0]",
    ])


def run_with_layout(spark, config, output: str, layout: dict[str, str], force: bool = False) -> int:
    """The whole pipeline under ``layout``; the number of pieces the test vectors are read in."""
    previous = {key: spark.conf.get(key, None) for key in {**layout, **COMMON}}
    for key, value in {**layout, **COMMON}.items():
        spark.conf.set(key, value)
    try:
        run_stages(spark, config, output, force=force)
        return spark.read.parquet(f"{output}/vectors").rdd.getNumPartitions()
    finally:
        for key, value in previous.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


@pytest.fixture(scope="module")
def runs(spark, small_corpus, tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("layouts")
    config = corpus_config(small_corpus)
    outputs, pieces = {}, {}
    for partitions in PARTITIONS:
        outputs[partitions] = str(base / f"p{partitions}")
        if partitions == 64:  # the rerun: over the finished 1-partition run, recomputed by --force
            shutil.copytree(outputs[1], outputs[64])
        pieces[partitions] = run_with_layout(spark, config, outputs[partitions], LAYOUTS[partitions],
                                             force=partitions == 64)
    outputs["rerun"] = outputs[64]
    return {"outputs": outputs, "pieces": pieces}


def table(spark, output: str, name: str):
    frame = spark.read.parquet(f"{output}/{name}")
    if name == "models":
        frame = frame.drop("seconds")  # wall time, the one column that may differ
    if name == "vectors":
        frame = frame.select("doc_id", "split", "labels", "indices", "values")  # the partition column last
    return frame.orderBy(SORT_KEYS[name])


def test_the_layouts_really_differ(runs):
    pieces = runs["pieces"]
    assert pieces[1] < pieces[64], pieces


@pytest.mark.parametrize("name", ["documents", "categories", "vocabulary", "vectors", "term_ranks", "models",
                                  "predictions", "contingency"])
def test_tables_do_not_depend_on_partitions(spark, runs, name):
    outputs = runs["outputs"]
    reference = table(spark, outputs[1], name)
    assert reference.count() > 0
    for partitions in PARTITIONS[1:]:
        assert_df_equality(table(spark, outputs[partitions], name), reference)


def test_metrics_do_not_depend_on_partitions(runs):
    outputs = runs["outputs"]
    reference = json.loads(Path(outputs[1], "metrics.json").read_text())
    assert reference["micro_f1"] > 0.2 and reference["ranking"]["nDCG@3"] > 0
    for partitions in PARTITIONS[1:]:
        assert json.loads(Path(outputs[partitions], "metrics.json").read_text()) == reference


def test_the_64_partition_run_was_recomputed_by_force(runs):
    # So the tables compared above for 64 partitions are the rerun's, every one of them recomputed under the
    # 64-partition layout (none left as copied from the 1-partition run), and equal those of the first run
    # with 1 partition: a second computation agrees with the first.
    for stage in ("ingest", "tokenize", "weight", "rank", "train", "evaluate"):
        manifest = json.loads(Path(runs["outputs"]["rerun"], "manifests", f"{stage}.json").read_text())
        assert manifest["recomputed_because"] == "--force", stage
