"""The README's main command (``<!-- example: main-job -->``) through spark-submit.sh: the packaged library, a fresh
session, the whole pipeline.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
import zipfile
import zipimport
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ARCHIVE_JOB_FOLDER, REPO, main_job

from benchmarks.harness_scaling import parse_events, project, read_events
from sparktc.experiment.config import Config
from sparktc.tracking import history_table
from sparktc.tracking.record import METRICS

pytestmark = pytest.mark.spark  # spark-submit.sh, not the session fixture

def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


JOB_TIMEOUT = 600  # seconds
STAGES = ["synthesize", "ingest", "tokenize", "weight", "rank", "train", "evaluate"]


def finished_main_job(tmp_path: Path) -> tuple[Path, str, str]:
    """The folder, stdout and stderr of the README's main command through spark-submit.sh (``conftest.main_job``):
    the job the suite's first process started to write the class archive, or, in a clone that has one, a job started
    here; it must have succeeded.
    """
    folder = Path(os.environ.get(ARCHIVE_JOB_FOLDER, tmp_path))
    if not (folder / "stdout").exists():
        folder = tmp_path
        main_job(folder)
    deadline = time.monotonic() + JOB_TIMEOUT
    while not (folder / "status").exists():
        assert time.monotonic() < deadline, f"the main job did not end in {JOB_TIMEOUT} s"
        time.sleep(0.5)
    stdout, stderr = ((folder / name).read_text() for name in ("stdout", "stderr"))
    assert (folder / "status").read_text() == "0", stderr[-3000:]
    return folder, stdout, stderr


def test_pipeline_on_a_small_synthetic_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, stdout, stderr = finished_main_job(tmp_path)
    output, events, history = folder / "run", folder / "events", str(folder / "history")
    # Spark's log went to the job's log file, not to the console.
    [log_file] = (folder / "logs").glob("*-pipeline.log")
    assert " WARN " in log_file.read_text() and " WARN " not in stderr
    lines = [line for line in stdout.splitlines() if line.startswith("sparktc: ") and " out " in line]
    assert [line.split()[1] for line in lines] == STAGES
    reports = {stage: json.loads((output / "manifests" / f"{stage}.json").read_text()) for stage in STAGES}
    assert reports["synthesize"]["rows_out"] == 1200
    assert reports["ingest"]["rows_in"] == reports["ingest"]["rows_out"] == 1200
    assert reports["ingest"]["details"]["train_documents"] == 400
    assert reports["evaluate"]["rows_out"] == 800
    metrics = json.loads((output / "metrics.json").read_text())
    categories = pq.read_table(output / "categories").to_pandas()
    assert len(categories) == 103
    assert metrics["test_documents"] == 800
    assert metrics["n_categories"] == int((categories["train_positives"] > 0).sum())
    assert 0.3 < metrics["micro_f1"] <= 1.0
    assert "micro P" in stdout  # the readable table
    # The event log for the history server, with every stage's jobs named after it.
    [log] = events.iterdir()  # Spark 4 writes a rolling event log: a directory of events_* files
    descriptions, task_ends = set(), 0
    for line in "".join(part.read_text() for part in sorted(log.glob("events_*"))).splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerJobStart":
            descriptions.add(event["Properties"].get("spark.job.description"))
        task_ends += event["Event"] == "SparkListenerTaskEnd"
    # Tokenize runs no Spark job for a corpus that comes tokenized (its files hard-linked, its rows from the footers).
    assert {f"sparktc: {stage}" for stage in STAGES if stage != "tokenize"} <= descriptions
    # The README's scaling replay of that log: every task, each stage's line, and at the 2 cores it ran on, no longer
    # than the wall it took (each task starts in the replay no later than it did; how much earlier depends on the
    # machine's load, so only the bound is checked: the fidelity is measured by the benchmark, not here).
    application = parse_events(read_events(events))
    lines = {line.label: line for line in project(application, [2])}
    assert list(lines) == [stage for stage in STAGES if stage != "tokenize"] + ["outside stages", "total"]
    assert lines["total"].tasks == task_ends and application.cores == 2
    assert 0.5 * application.wall <= lines["total"].walls[2] <= 1.05 * application.wall
    # The run's record in the history: the stages measured, the figures of metrics.json, the digests.
    [record] = history_table.read(history).to_pylist()
    assert record["exit_status"] == 0 and record["error"] is None and record["output"] == str(output)
    assert [stage["stage"] for stage in record["stages"]] == STAGES
    # Tokenize of a tokenized corpus hard-links its files and runs no Spark job: a few ms, which the process tree's
    # clock ticks may not see; every other stage's CPU-seconds are measured.
    assert all(stage["status"] == "run" and stage["cpu_seconds"] >= 0 for stage in record["stages"])
    assert all(stage["cpu_seconds"] > 0 for stage in record["stages"] if stage["stage"] != "tokenize")
    assert record["cpu_complete"] and record["master"] == "local[2]" and record["cores"] == 2
    assert record["cpu_seconds"] == pytest.approx(sum(stage["cpu_seconds"] for stage in record["stages"]), abs=0.05)
    assert {name: record[name] for name in METRICS} == {name: metrics[name] for name in METRICS}
    configuration = reports["synthesize"]["configuration"]  # as given: the later stages read the synthesized corpus
    # The digest: the settings away from the defaults, but where the run is recorded and the corpus lies.
    defaults = Config().as_dict()
    settings = {name: {key: value for key, value in values.items()
                       if value != defaults[name][key] and (name, key) != ("corpus", "path")}
                for name, values in configuration.items() if name not in ("history", "track", "progress")}
    settings = {name: values for name, values in settings.items() if values}
    assert settings["synthesize"]["documents"] == 1200 and "train" not in settings
    assert record["config_digest"] == hashlib.sha256(
        json.dumps(settings, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert json.loads(record["config"]) == configuration
    files = reports["ingest"]["inputs"]["files"][str(output / "corpus")]
    assert record["corpus_digest"] == hashlib.sha256(json.dumps(
        [sorted(files)], sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert f"recorded in {history}" in stdout
    # Local mode's JVM: the serial collector, and Spark's classes read from a class-data-sharing archive that the
    # first local job of a checkout that succeeds writes as it exits (under a name of its own, renamed into place) and
    # the next ones read; the JVM says nothing of it on the console.
    update = next(event for event in read_events(events) if event["Event"] == "SparkListenerEnvironmentUpdate")
    java_options = update["Spark Properties"]["spark.driver.extraJavaOptions"].split()
    assert "-XX:+UseSerialGC" in java_options
    sharing = ("-XX:SharedArchiveFile=", "-XX:ArchiveClassesAtExit=")
    assert sum(option.startswith(sharing) for option in java_options) == 1
    # Other tests' jobs may be writing their own partial archives right now (the suite runs in parallel workers): only a
    # partial whose writer has exited is a leftover.
    partials = (REPO / "build").glob(".jvm-classes-*.*.jsa")
    leftovers = [path for path in partials if not _running(int(path.suffixes[-2][1:]))]
    assert list((REPO / "build").glob("jvm-classes-*.jsa")) and not leftovers
    assert not [line for line in stdout.splitlines() if line.startswith("[")]
    # The library's zip carries each module's bytecode, that of its source: the driver and every Python worker import
    # it compiling nothing (zipimport compiled each module twice, in get_filename and in get_code).
    library = REPO / "build" / "sparktc.zip"
    monkeypatch.setattr(zipimport, "_compile_source", lambda path, source: pytest.fail(f"{path} compiled"))
    with zipfile.ZipFile(library) as archive:
        sources = {name: archive.read(name) for name in archive.namelist() if name.endswith(".py")}
        names = set(archive.namelist())
    assert len(sources) > 50
    # ... and conf/ as the wheel holds it: a driver importing sparktc from it finds the configurations by name.
    assert {"sparktc/conf/reuters21578.toml", "sparktc/conf/stopwords/smart_english.stop"} <= names
    for name, source in sources.items():
        module = name.removesuffix(".py").removesuffix("/__init__")  # sparktc/stages/train, sparktc/stages
        importer = zipimport.zipimporter(f"{library}/{os.path.dirname(module)}")  # what the parent package uses
        module = module.replace("/", ".")
        assert importer.get_filename(module) == f"{library}/{name}c"  # the bytecode is what it finds
        code = compile(source, name, "exec", dont_inherit=True)  # as spark-submit.sh compiles it
        assert importer.get_code(module) == code


def test_the_library_zip_is_kept_while_its_sources_are_unchanged_and_written_again_when_one_changes(tmp_path: Path):
    from sparktc.apps.submit import Home, write_zip

    root = tmp_path / "clone"
    (root / "sparktc" / "sub").mkdir(parents=True)
    (root / "conf").mkdir()
    (root / "sparktc" / "__init__.py").write_text("")
    (root / "sparktc" / "sub" / "__init__.py").write_text("")
    module = root / "sparktc" / "sub" / "mod.py"
    module.write_text("VALUE = 1\n")
    (root / "conf" / "a.toml").write_text("[x]\n")
    home = Home.clone(root)
    zipped = write_zip(home)
    first = zipped.stat()
    assert write_zip(home) == zipped and zipped.stat().st_mtime_ns == first.st_mtime_ns  # kept, not written
    module.write_text("VALUE = 22\n")  # another size and time
    write_zip(home)
    assert zipped.stat().st_ino != first.st_ino  # written again, renamed into place
    with zipfile.ZipFile(zipped) as archive:
        assert archive.read("sparktc/sub/mod.py") == b"VALUE = 22\n"
        assert {"sparktc/sub/mod.pyc", "sparktc/conf/a.toml"} <= set(archive.namelist())
    spec = zipimport.zipimporter(str(zipped / "sparktc" / "sub")).find_spec("mod")
    imported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(imported)
    assert imported.VALUE == 22  # from the new bytecode (unchecked: a stale one would be trusted)
    (root / "conf" / "b.toml").write_text("")  # a file more
    write_zip(home)
    with zipfile.ZipFile(zipped) as archive:
        assert "sparktc/conf/b.toml" in archive.namelist()
