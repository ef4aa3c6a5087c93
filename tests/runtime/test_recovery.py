"""Runs that can be trusted: manifests, resume, exact invalidation and memory limits.

* every stage publishes its outputs with a manifest (settings, version, code, inputs, outputs, rows, times);
* a rerun skips every stage and touches no file but the lock's; a changed setting recomputes exactly
  the stages from the one that reads it onwards; a cut-short, deleted or other-code output is
  recomputed (``--force``, which recomputes all with the same results: tests/runtime/test_determinism.py); a
  stage whose input is incomplete says which stage to run;
* a worker out of memory is reported with the settings to change, and neither the half-done stage
  nor anything computed from the old settings downstream (``metrics.json``, the model bundle) is
  left to be mistaken for finished.

Killed drivers and workers, damaged files, full disks and concurrent runs: tests/runtime/test_fault_matrix.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sparktc.apps.pipeline import run as run_stages
from sparktc.errors import ConfigError
from sparktc.experiment.config import load_config
from sparktc.runtime.faults import SETTING as FAULT
from sparktc.runtime.outputs import claim
from sparktc.runtime.resources import (
    ResourceLimitError,
    check_training_memory,
    check_worker_memory,
    parse_memory,
    training_set_bytes,
)
from sparktc.runtime.runner import MissingInputError

STAGES = ["ingest", "tokenize", "weight", "rank", "train", "evaluate"]


def corpus_config(corpus: Path, *overrides: str):
    return load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", "tokenize.stemmer=none",
                              "train.thresholding=scut", "train.folds=3", *overrides])


def files(output: str) -> dict[str, tuple[int, int]]:
    """Every file under ``output``: relative path -> (size, modification time in ns)."""
    root = Path(output)
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def manifests_of(output: str) -> dict[str, dict]:
    return {stage: json.loads(Path(output, "manifests", f"{stage}.json").read_text()) for stage in STAGES}


@pytest.fixture(scope="module")
def reference(spark, small_corpus, tmp_path_factory) -> str:
    output = str(tmp_path_factory.mktemp("recovery") / "reference")
    run_stages(spark, corpus_config(small_corpus), output)
    return output


@pytest.fixture
def copy(reference, tmp_path) -> str:
    """A copy of the reference run (manifests and all) to rerun and change."""
    target = str(tmp_path / "run")
    shutil.copytree(reference, target)
    return target


def rewrite(path: Path, text: str) -> None:
    """Change a file behind Hadoop's back, its checksum file too (as an editor would leave it)."""
    path.write_text(text)
    path.with_name(f".{path.name}.crc").unlink(missing_ok=True)


# --- manifests ------------------------------------------------------------------------------------


def test_every_stage_has_a_manifest_describing_its_outputs(reference, small_corpus):
    manifests = manifests_of(reference)
    from sparktc import __version__

    for stage, manifest in manifests.items():
        assert manifest["stage"] == stage and manifest["sparktc_version"] == __version__
        assert manifest["rows_out"] + sum(manifest["set_aside"].values()) == manifest["rows_in"]
        assert manifest["seconds"] > 0 and manifest["started"] <= manifest["finished"]
        for name, output in manifest["outputs"].items():
            listed = {path: size for path, size, _, _ in output["files"]}
            on_disk = {path: size for path, (size, _) in files(str(Path(reference, name))).items()
                       if not Path(path).name.startswith(".")} \
                if Path(reference, name).is_dir() else {"": Path(reference, name).stat().st_size}
            assert listed == on_disk, (stage, name)
    assert manifests["ingest"]["settings"]["corpus"]["path"] == str(small_corpus)
    assert str(small_corpus) in manifests["ingest"]["inputs"]["files"]
    assert manifests["ingest"]["outputs"]["documents"]["rows"] == 1200
    assert manifests["weight"]["inputs"]["tables"] == {
        "tokens": {"path": f"{reference}/tokens", "stage": "tokenize",
                   "identity": manifests["tokenize"]["identity"], "outputs": manifests["tokenize"]["outputs_digest"]},
        # the training terms that documents in integer form number their terms by
        "terms": {"path": f"{reference}/terms", "stage": "ingest",
                  "identity": manifests["ingest"]["identity"], "outputs": manifests["ingest"]["outputs_digest"]},
        "categories": {"path": f"{reference}/categories", "stage": "ingest",  # supervised weights' category sizes
                       "identity": manifests["ingest"]["identity"], "outputs": manifests["ingest"]["outputs_digest"]}}
    assert manifests["weight"]["configuration"]["train"]["thresholding"] == "scut"  # the whole configuration
    assert manifests["train"]["settings"]["train"]["thresholding"] == "scut"
    assert set(manifests["evaluate"]["outputs"]) >= {"predictions", "contingency", "metrics.json", "report.md"}
    assert not Path(reference, "_incomplete").exists() or not any(Path(reference, "_incomplete").iterdir())


# --- resume and invalidation ------------------------------------------------------------------------


def test_a_rerun_skips_every_stage_and_touches_nothing(spark, small_corpus, copy, capsys):
    before = files(copy)
    with claim(str(small_corpus)):  # as jobs/synthesize.py run again over the corpus would: its lock is rewritten
        pass
    run_stages(spark, corpus_config(small_corpus), copy)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("sparktc: ")]
    assert [line.split()[1] for line in lines] == STAGES
    assert all("up to date, skipped" in line for line in lines)
    after = files(copy)
    assert after.pop(".sparktc.lock")[0] > 0  # the lock file names each run's holder; nothing else changes
    before.pop(".sparktc.lock")
    assert after == before


@pytest.mark.parametrize(("setting", "expected"), [
    ("tokenize.stemmer=porter", STAGES[1:]),
    ("rank.global_score=avg", ["train", "evaluate"]),  # re-selected from term_ranks' scores, not recounted
    ("evaluate.ranks=[1, 2]", ["evaluate"]),
    ("spark.app_name=renamed", []),
])
def test_a_changed_setting_recomputes_exactly_the_stages_downstream(spark, small_corpus, copy, setting, expected):
    before = manifests_of(copy)
    run_stages(spark, corpus_config(small_corpus, setting), copy)
    after = manifests_of(copy)
    assert [stage for stage in STAGES if after[stage]["started"] != before[stage]["started"]] == expected
    if expected:
        assert after[expected[0]]["recomputed_because"] == "settings or inputs changed"
    for stage in expected[1:]:  # invalidated when the first was recomputed: their manifests were removed then
        assert after[stage]["recomputed_because"] == f"{expected[0]} was recomputed (settings or inputs changed)"


@pytest.mark.parametrize(("damage", "first_recomputed", "reason"), [
    ("delete metrics.json", "evaluate", "output metrics.json is missing"),
    ("cut the rank manifest short", "rank", "no manifest"),
    ("claim other code", "train", "written by other code (sparktc"),
])
def test_a_damaged_output_is_recomputed_with_what_follows(spark, small_corpus, copy, damage, first_recomputed, reason):
    before = manifests_of(copy)
    if damage == "delete metrics.json":
        Path(copy, "metrics.json").unlink()
    elif damage == "cut the rank manifest short":
        path = Path(copy, "manifests", "rank.json")
        rewrite(path, path.read_text()[:100])
    else:
        path = Path(copy, "manifests", "train.json")
        rewrite(path, path.read_text().replace(before["train"]["code"], "0" * 64, 1))
    run_stages(spark, corpus_config(small_corpus), copy)
    after = manifests_of(copy)
    changed = [stage for stage in STAGES if after[stage]["started"] != before[stage]["started"]]
    assert changed == STAGES[STAGES.index(first_recomputed):]
    assert after[first_recomputed]["recomputed_because"].startswith(reason)


def test_a_stage_whose_input_is_incomplete_names_the_stage_to_run(spark, small_corpus, copy):
    Path(copy, "manifests", "rank.json").unlink()
    with pytest.raises(MissingInputError, match=r"train reads term_ranks, which has no complete output .* "
                                                r"run the rank stage there first"):
        run_stages(spark, corpus_config(small_corpus), copy, "train")


# --- task failures ------------------------------------------------------------------------------------


# --- memory -----------------------------------------------------------------------------------------------


def test_a_worker_out_of_memory_names_the_setting_and_leaves_no_finished_output(spark, small_corpus, copy):
    spark.conf.set(FAULT, "train:0:memory")
    try:
        with pytest.raises(ResourceLimitError, match=r"ran out of memory in train \(category .*\); raise "
                                                     r"spark\.executor\.pyspark\.memory"):
            run_stages(spark, corpus_config(small_corpus, "train.liblinear.C=0.5"), copy)
    finally:
        spark.conf.unset(FAULT)
    assert not Path(copy, "manifests", "train.json").exists()
    # What C = 1 computed downstream of train is gone too, not left beside the new settings' manifests.
    assert not any(Path(copy, name).exists() for name in ("models", "model", "metrics.json", "predictions"))
    assert not Path(copy, "manifests", "evaluate.json").exists()
    # The next run recomputes train (and evaluate, whose input changed), not the stages before it: a changed setting
    # of train's own section (C) recomputes exactly the stages from train on.
    before = manifests_of_existing(copy)
    run_stages(spark, corpus_config(small_corpus, "train.liblinear.C=0.5"), copy)
    after = manifests_of(copy)
    assert [stage for stage in STAGES if before.get(stage, {}).get("started") != after[stage]["started"]] == \
        ["train", "evaluate"]


def manifests_of_existing(output: str) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in Path(output, "manifests").glob("*.json")}


def test_parse_memory_reads_spark_sizes():
    assert parse_memory("512m") == 512 << 20 and parse_memory("2g") == 2 << 30 and parse_memory("300") == 300 << 20
    with pytest.raises(ValueError, match="not a Spark memory size"):
        parse_memory("two gigs")


def test_training_that_cannot_fit_is_refused_before_it_starts():
    # 23,149 RCV1 training documents with ~1.9 M nonzeros: 40 bytes per nonzero + 48 per document.
    needed = training_set_bytes(23_149, 1_900_000, cross_validation=False)
    assert needed == 40 * 1_900_000 + 48 * 23_149
    conf = {"spark.executor.pyspark.memory": "6g", "spark.executor.cores": "4"}  # 1,536 MiB per worker
    with pytest.raises(ResourceLimitError) as caught:
        check_training_memory(conf, 23_149, 1_900_000, cross_validation=False)
    message = str(caught.value)
    assert ("training needs about 1,574 MiB in each Python worker (1,500 for Python and its libraries, 74 for "
            "23,149 training documents with 1,900,000 nonzero weights)") in message
    assert "spark.executor.pyspark.memory = 6g over 4 core(s) allows 1,536 MiB" in message
    assert "raise spark.executor.pyspark.memory" in message and "select.top_k" in message
    check_training_memory({**conf, "spark.executor.cores": "3"}, 23_149, 1_900_000, cross_validation=False)
    check_training_memory({}, 23_149, 1_900_000, cross_validation=True)  # unbounded: nothing to check


def test_a_limit_no_python_worker_can_start_under_is_refused():
    with pytest.raises(ConfigError, match=r"spark\.executor\.pyspark\.memory = 16m over 1 core\(s\) allows 16 "
                                          r"MiB per Python worker, less than the 1,500 MiB"):
        check_worker_memory({"spark.executor.pyspark.memory": "16m"})
    with pytest.raises(ConfigError, match=r"^spark\.executor\.pyspark\.memory: 'lots' is not a Spark memory size"):
        check_worker_memory({"spark.executor.pyspark.memory": "lots"})
    check_worker_memory({"spark.executor.pyspark.memory": "2g"})
    check_worker_memory({})
