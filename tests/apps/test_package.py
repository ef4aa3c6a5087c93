"""``pip install`` gives a working tool: the wheel, installed into a fresh virtual environment with its dependencies,
runs ``sparktc run`` on the embedded default and ``sparktc classify`` on its model from a directory outside the
repository.

The environment and the wheel are those of ``scripts/pack-env.sh`` (``make pack``), built once for the suite
(``packed_env`` in conftest.py): a fresh virtual environment with sparktc installed from the wheel, built from the
checkout's files, and the dependencies pinned in pyproject.toml installed by pip.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import CHILD_JVM_OPTIONS, REPO, PackedEnv

pytestmark = pytest.mark.spark  # spark-submit, not the session fixture

#: The embedded default made small (conf/synthetic.toml's corpus has 30,000 documents).
SMALL = ["--set", "synthesize.documents=600", "--set", "synthesize.train_documents=300",
         "--set", "synthesize.vocabulary_size=1000", "--set", "synthesize.chunk_documents=300",
         "--set", 'spark.conf={"spark.sql.shuffle.partitions" = "2"}']
#: spark-submit options, given after the job's arguments as a user may.
SUBMIT = ["--master", "local[2]", "--conf", f"spark.driver.defaultJavaOptions={CHILD_JVM_OPTIONS}"]
TIMEOUT = 600


@pytest.fixture(scope="module")
def installed(packed_env: PackedEnv, tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """The wheel, the environment's bin/ and the environment variables to run its commands with, from a directory
    outside the repository: nothing that points at the clone or at the tests' interpreter, and a cache of its own.
    """
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARKTC_LOG",
                                  "SPARKTC_LOG_DIR")}
    # Where an installed sparktc puts its logs, its zip and the JVM's class archive, which the first local job writes;
    # here none: writing one costs this test's run about 20 s, and tests/apps/test_submit.py checks the archive.
    environment["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("package") / "cache")
    environment["SPARKTC_CLASS_ARCHIVE"] = "0"
    return packed_env.wheel, packed_env.env / "bin", environment


def test_the_wheel_holds_the_configurations_the_stop_list_the_jobs_and_the_command(installed) -> None:
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [entry_points] = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    data = {f"sparktc/conf/{path.relative_to(REPO / 'conf')}" for path in (REPO / "conf").rglob("*") if path.is_file()}
    jobs = {f"sparktc/jobs/{path.name}" for path in (REPO / "jobs").glob("*.py")}
    modules = {f"{path.relative_to(REPO)}" for path in (REPO / "sparktc").rglob("*.py")}
    assert "sparktc/conf/stopwords/smart_english.stop" in data and "sparktc/conf/synthetic.toml" in data
    assert data | jobs | modules <= names
    assert not [name for name in names if name.startswith(("conf/", "jobs/", "tests/"))]
    assert "sparktc = sparktc.apps.submit:main" in scripts


def test_python_m_sparktc_shows_the_commands(installed, tmp_path) -> None:
    _, bin_, environment = installed
    shown = subprocess.run([bin_ / "python", "-m", "sparktc", "--help"], cwd=tmp_path, env=environment,
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: sparktc COMMAND")
    assert "reuters21578" in shown.stdout  # the packaged configurations, by name
    unknown = subprocess.run([bin_ / "sparktc", "train"], cwd=tmp_path, env=environment, capture_output=True,
                             text=True, timeout=TIMEOUT)
    assert unknown.returncode == 2
    assert unknown.stderr == ("sparktc: error: unknown command 'train'; commands: run, classify, compare, history, "
                              "export, synthesize (sparktc --help)\n")


def test_sparktc_run_and_classify_from_outside_the_repository(installed, tmp_path) -> None:
    _, bin_, environment = installed
    run = subprocess.run([bin_ / "sparktc", "run", "--output", "out", *SMALL, *SUBMIT], cwd=tmp_path, env=environment,
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-3000:]
    output = tmp_path / "out"
    # The embedded default: conf/synthetic.toml's settings with the --set lines.
    synthesized = json.loads((output / "manifests" / "synthesize.json").read_text())
    assert synthesized["rows_out"] == 600 and synthesized["configuration"]["spark"]["app_name"] == "sparktc-synthetic"
    # Its micro-F1, counted again from its predictions over the categories with training positives.
    metrics = json.loads((output / "metrics.json").read_text())
    averaged = {row["category"] for row in pq.read_table(output / "categories").to_pylist() if row["train_positives"]}
    tp = fp = fn = 0
    predictions = {row["doc_id"]: row for row in pq.read_table(output / "predictions").to_pylist()}
    for row in predictions.values():
        labels, predicted = set(row["labels"]) & averaged, set(row["predicted"]) & averaged
        tp, fp, fn = tp + len(labels & predicted), fp + len(predicted - labels), fn + len(labels - predicted)
    assert metrics["micro_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-12) and tp > 0
    # Spark's log went to a file per job in the user's cache, not to the console.
    [log] = (Path(environment["XDG_CACHE_HOME"]) / "sparktc" / "logs").glob("*-pipeline.log")
    assert " WARN " in log.read_text() and " WARN " not in run.stderr
    assert not list((Path(environment["XDG_CACHE_HOME"]) / "sparktc").rglob("*.jsa"))  # SPARKTC_CLASS_ARCHIVE=0

    # Five test documents as texts again (their term ids point into the run's terms), classified with the run's model.
    terms = [row["term"] for row in sorted(pq.read_table(output / "terms").to_pylist(), key=lambda row: row["term_id"])]
    documents = sorted((row for row in pq.read_table(output / "tokens").to_pylist() if row["split"] == "test"),
                       key=lambda row: row["doc_id"])[:5]
    with (tmp_path / "documents.jsonl").open("w") as handle:
        for row in documents:
            words = (terms[term] for term, count in zip(row["term_ids"], row["term_counts"]) for _ in range(count))
            text = " ".join(words)
            handle.write(json.dumps({"id": row["doc_id"], "text": text}) + "\n")
    classify = subprocess.run([bin_ / "sparktc", "classify", "--model", "out/model", "--input", "documents.jsonl",
                               "--output", "classified", "--format", "jsonl", *SUBMIT], cwd=tmp_path,
                              env=environment, capture_output=True, text=True, timeout=TIMEOUT)
    assert classify.returncode == 0, classify.stderr[-3000:]
    classified = [json.loads(line) for part in sorted((tmp_path / "classified" / "predictions").glob("part-*.json"))
                  for line in part.read_text().splitlines()]
    assert sorted(row["doc_id"] for row in classified) == [row["doc_id"] for row in documents]
    for row in classified:
        assert row["predicted"] == predictions[row["doc_id"]]["predicted"], row["doc_id"]


def test_the_zip_shipped_to_a_cluster_carries_the_configurations_and_the_stop_list(installed, tmp_path) -> None:
    """A master that is not local gets the installed package zipped (--py-files): a driver importing sparktc from
    the zip finds the configurations and the stop list by name in it.
    """
    _, bin_, environment = installed
    written = subprocess.run([bin_ / "python", "-c", "from sparktc.apps.submit import Home, write_zip\n"
                              "print(write_zip(Home.installed()))"], cwd=tmp_path, env=environment,
                             capture_output=True, text=True, timeout=TIMEOUT, check=True)
    library = written.stdout.strip()
    assert library.startswith(environment["XDG_CACHE_HOME"])
    with zipfile.ZipFile(library) as archive:
        assert {"sparktc/conf/stopwords/smart_english.stop", "sparktc/conf/reuters21578.toml",
                "sparktc/packaged.pyc", "sparktc/jobs/pipeline.py"} <= set(archive.namelist())
    read = subprocess.run(
        [bin_ / "python", "-c", f"import sys; sys.path.insert(0, {library!r})\n"
         "import sparktc\nfrom sparktc.experiment.config import load_config\n"
         "from sparktc.features.text import stop_words_of\n"
         "config = load_config('reuters21578', ['corpus.path=.'])\n"
         "print(sparktc.__file__, config.tokenize.stop_list, len(stop_words_of(config.tokenize.stop_list, None)))"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=TIMEOUT)
    assert read.returncode == 0, read.stderr
    assert read.stdout == f"{library}/sparktc/__init__.pyc smart 570\n"
