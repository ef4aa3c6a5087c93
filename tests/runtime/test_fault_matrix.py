"""The fault matrix: what an operator running sparktc nightly meets, each case then the same command again.

One tiny JSON Lines corpus, one undisturbed reference run (in this process), and per case a run
that meets the fault, then the next run. Each case asserts the exit status, the one line the job
prints on stderr, that every stage's counts add up (rows in = out + set aside, in each manifest),
and that the next run's results (models, predictions, contingency, metrics.json) equal the
reference's. The faults:

* the driver failing at each point of a stage (``spark.sparktc.driver_fault``: between two of its
  outputs being published, before the stage computes, before its manifest; in weight, rank and
  evaluate), one run after another on one output, in this process; and a ``spark-submit`` driver
  SIGKILLed between two outputs of ingest (started with the module, so that its JVM works while the
  tests before its own run here), followed by the same command, which meets a Python worker killed
  in every stage that runs one (``spark.sparktc.fault``, all in that one run);
* an output file truncated, corrupted at the same size (with and without its ``.crc``), deleted,
  and only touched (not recomputed);
* a full disk in train and evaluate (a small tmpfs under ``--output``, or, where mounting is not
  allowed, the injected ``disk-full``), then space again;
* two runs at once on one ``--output``; an ``--output`` over user files; classify into a training run;
* an ``--output`` that cannot be made (under ``/proc``, under a file, in a folder this user may not write), in each
  job that writes one, refused before Spark starts; a ``spark.sparktc.*`` setting given to spark-submit that no run
  can work under, refused as a configuration error before any work;
* an upgrade (the code digest changed).

Bad input (reader x kind x ``on_error``) has its own table: ``tests/stages/test_bad_input.py``.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, assert_same_tables, invented_words, jvm_options, reseal_bundle, selected

from sparktc.apps import cli
from sparktc.apps.classify import classify
from sparktc.apps.pipeline import plan
from sparktc.apps.pipeline import run as run_pipeline
from sparktc.experiment.bundle import load_bundle
from sparktc.experiment.config import load_config
from sparktc.runtime import manifest
from sparktc.runtime.faults import DRIVER_SETTING, SETTING
from sparktc.runtime.outputs import BUSY_EXIT, LOCK, OutputError
from sparktc.runtime.resources import TASK_MEMORY
from sparktc.runtime.runner import damage, read_manifest

STAGES = ["ingest", "tokenize", "weight", "rank", "train", "evaluate"]
CATEGORIES = ["alpha", "beta", "gamma", "delta"]


def write_corpus(directory: Path) -> Path:
    """160 training and 80 test documents over 4 categories, each category with its own words."""
    rng = np.random.default_rng(12)
    words = invented_words(rng, 400)
    own = {category: words[i * 60:(i + 1) * 60] for i, category in enumerate(CATEGORIES)}
    common = words[240:]
    directory.mkdir(parents=True)
    for split, count in (("train", 160), ("test", 80)):
        lines = []
        for number in range(count):
            labels = sorted(set(rng.choice(CATEGORIES, size=rng.integers(1, 3)).tolist()))
            text = [*rng.choice(common, 20), *(w for c in labels for w in rng.choice(own[c], 8))]
            lines.append(json.dumps({"id": f"{split}-{number}", "text": " ".join(rng.permutation(text)),
                                     "labels": labels, "split": split}))
        (directory / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    return directory


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("matrix") / "corpus")


def settings(corpus: Path) -> list[str]:
    # No progress lines: each case checks that stderr is exactly the one line of the failure (a loaded machine can
    # make a stage outlast progress.interval).
    return ["corpus.format=jsonl", f"corpus.path={corpus}", "tokenize.stemmer=none", "progress.mode=off"]


@pytest.fixture(scope="module")
def reference(spark, corpus, tmp_path_factory) -> str:
    output = str(tmp_path_factory.mktemp("matrix") / "reference")
    run_pipeline(spark, load_config(None, settings(corpus)), output)
    return output


@pytest.fixture
def copy(reference, tmp_path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(reference, target)
    return target


@pytest.fixture
def job(spark, corpus, monkeypatch, capsys):
    """Run jobs/pipeline.py in this process (the suite's session stands in for the job's): (status, stdout, stderr)."""
    monkeypatch.setattr(cli, "session", lambda config: spark)
    monkeypatch.setattr(spark, "stop", lambda: None)  # the suite's session outlives each job

    def run(output: Path, *argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        arguments = [*(f"--set={setting}" for setting in settings(corpus)), *argv, "--output", str(output)]
        status = cli.main("pipeline", plan, arguments)
        out, err = capsys.readouterr()
        return status, out, err

    return run


def stage_lines(out: str) -> dict[str, str]:
    return {line.split()[1]: line for line in out.splitlines() if re.match(r"sparktc: \w+ +(in|up to date)", line)}


def recomputed(out: str) -> list[str]:
    return [stage for stage, line in stage_lines(out).items() if "up to date" not in line]


def assert_reconciled(output: Path | str) -> None:
    for stage in STAGES:
        recorded = json.loads(Path(output, "manifests", f"{stage}.json").read_text())
        assert recorded["rows_out"] + sum(recorded["set_aside"].values()) == recorded["rows_in"], stage


def assert_same_results(output: Path | str, reference: str) -> None:
    assert_same_tables(output, reference)
    assert json.loads(Path(output, "metrics.json").read_text()) == \
        json.loads(Path(reference, "metrics.json").read_text())
    assert_reconciled(output)


def one_error_line(err: str) -> str:
    """The job's stderr is exactly one line, ``sparktc: error: ...``; that line."""
    assert err.count("\n") == 1 and err.startswith("sparktc: "), err
    return err.rstrip("\n")


def files_of(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in directory.rglob("*") if p.is_file()}


# --- the driver failing in each stage, then the same command -------------------------------------------------------


#: Where the driver fails, one point each, in the order the runs meet them: between two outputs being published, before
#: the stage computes, before its manifest. (The runner publishes and records every stage alike; ingest's outputs
#: published in part are the SIGKILLed driver's, in the next test.)
FAILING = {"weight": "publish", "rank": "start", "evaluate": "manifest"}


def test_the_driver_failing_in_each_stage_then_the_same_command(spark, job, copy, reference):
    """One output, one command repeated: each run finishes the stage the last one failed in and fails in a later
    one, at the next point (in this process, ``raise``; the SIGKILLed driver is the next test), the last run is
    undisturbed.
    """
    previous = "weight"
    (copy / "manifests" / f"{previous}.json").unlink()  # as after a crash in weight: it and what follows run again
    for stage, point in [*FAILING.items(), (None, None)]:
        if stage:
            spark.conf.set(DRIVER_SETTING, f"{stage}:{point}:raise")
        try:
            status, out, err = job(copy)
        finally:
            spark.conf.unset(DRIVER_SETTING)
        lines = stage_lines(out)
        # What the last run finished stays finished; the stage it failed in is computed again.
        assert [name for name in lines if "up to date" in lines[name]] == STAGES[:STAGES.index(previous)], out
        if stage is None:
            assert (status, err) == (0, "") and recomputed(out) == [previous]
            break
        assert status == 1
        log = re.fullmatch(rf"sparktc: error: injected by {DRIVER_SETTING} = {stage}:{point}:raise "
                           r"\(the trace and Spark's log: (\S+)\)", one_error_line(err)).group(1)
        assert "Traceback" in Path(log).read_text()
        # Nothing of the failed stage or after it passes for finished; what came before it does.
        manifests = {path.stem for path in (copy / "manifests").glob("*.json") if not path.stem.startswith("_")}
        assert manifests == set(STAGES[:STAGES.index(stage)]), (stage, manifests)
        previous = stage
    assert not (copy / "_incomplete").exists()
    assert_same_results(copy, reference)


def submit(corpus: Path, output: Path, *conf: str) -> tuple[subprocess.Popen, Path, Path]:
    """jobs/pipeline.py through ./spark-submit.sh in the background: (process, stdout file, stderr file)."""
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    # The driver writes no class archive (sparktc.apps.submit): one the test kills would throw it away, about 20 CPU-s
    # for nothing. It reads the suite's once written (conftest.jvm_options).
    environment["SPARKTC_CLASS_ARCHIVE"] = "0"
    conf = ("spark.sql.shuffle.partitions=4", f"spark.driver.defaultJavaOptions={jvm_options(serial_gc=True)}", *conf)
    options = [option for setting in conf for option in ("--conf", setting)]
    stdout, stderr = output.with_name(f"{output.name}.out"), output.with_name(f"{output.name}.err")
    with open(stdout, "w") as out, open(stderr, "w") as err:  # files, not pipes: nothing reads them meanwhile
        process = subprocess.Popen(
            ["./spark-submit.sh", "--master", "local[2,4]", *options, "jobs/pipeline.py",
             *[f"--set={setting}" for setting in settings(corpus)], "--output", str(output)],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=environment, start_new_session=True)
    return process, stdout, stderr


KILLED = "test_a_killed_driver_then_a_killed_worker_in_every_stage_give_the_undisturbed_results"


@pytest.fixture(scope="module", autouse=True)
def killed(request, corpus, tmp_path_factory):
    """The spark-submit run whose driver is SIGKILLed in ingest, between two outputs, started when the module
    starts (if its test runs), so that its JVM works while the tests before it run in this process:
    (process, output, stdout file, stderr file).
    """
    if not selected(request, KILLED):
        yield None
        return
    output = tmp_path_factory.mktemp("matrix") / "killed"
    process, stdout, stderr = submit(corpus, output, f"{DRIVER_SETTING}=ingest:publish:kill")
    try:
        yield process, output, stdout, stderr
    finally:
        if process.poll() is None:  # its test failed before waiting, or did not wait long enough
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def failed_tasks(spark, group: str) -> int:
    tracker = spark.sparkContext.statusTracker()
    stages = {stage for job in tracker.getJobIdsForGroup(group) for stage in tracker.getJobInfo(job).stageIds}
    return sum(info.numFailedTasks for info in map(tracker.getStageInfo, stages) if info is not None)


#: Where a Python worker is killed in the resumed run, the point of every stage that runs one: its stage's job group.
WORKER_GROUPS = {"parse": "ingest", "tokenize": "tokenize", "weight": "weight", "rank": "rank", "train": "train",
                 "score": "evaluate"}


def test_a_killed_driver_then_a_killed_worker_in_every_stage_give_the_undisturbed_results(spark, job, killed,
                                                                                          reference):
    """The same command after the SIGKILLed driver recomputes every stage, and meets a Python worker killed in each
    (``spark.sparktc.fault``): each death is retried, and the results are the undisturbed run's.
    """
    process, output, stdout, stderr = killed
    process.wait(timeout=600)
    out, err = stdout.read_text(), stderr.read_text()
    assert process.returncode != 0 and list(stage_lines(out)) == ["ingest"], (out, err[-2000:])
    # ingest published documents, then its driver died: categories and rejects still staged, no manifest.
    assert (output / "documents").exists() and not (output / "categories").exists()
    assert list(output.glob("_incomplete/*/ingest/categories"))
    assert not list((output / "manifests").glob("[!_]*.json"))
    holder = json.loads((output / LOCK).read_text())  # names the dead run
    assert holder["pid"] != os.getpid() and holder["command"].endswith(f"--output {output}")
    before = {point: failed_tasks(spark, f"sparktc-{stage}") for point, stage in WORKER_GROUPS.items()}
    # tokenize analyzes raw texts in the partitions that follow those of documents given with tokens (a union):
    # which partition comes first there depends on the files, so the first eight are named.
    specs = [f"{point}:0:exit" for point in WORKER_GROUPS if point != "tokenize"] + [f"tokenize:{p}:exit"
                                                                                    for p in range(8)]
    spark.conf.set(SETTING, ",".join(specs))
    try:
        status, out, err = job(output)  # the same command: the dead run's lock holds nothing back
    finally:
        spark.conf.unset(SETTING)
    assert (status, err) == (0, "") and recomputed(out) == STAGES
    for point, stage in WORKER_GROUPS.items():  # each injected death happened, and was retried
        assert failed_tasks(spark, f"sparktc-{stage}") >= before[point] + 1, point
    assert not (output / "_incomplete").exists()
    assert_same_results(output, reference)


# --- damaged outputs -----------------------------------------------------------------------------------------------


def a_part(output: Path, name: str) -> Path:
    return sorted(Path(output, name).rglob("part-*.parquet"))[0]


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    path.with_name(f".{path.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum, where Spark wrote the file


def corrupt(path: Path, keep_crc: bool) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size
    path.write_bytes(bytes(data))
    if not keep_crc:
        path.with_name(f".{path.name}.crc").unlink(missing_ok=True)


DAMAGE = {
    "truncated": (truncate, "models", "train", r"output models: part-\S+ changed size \(\d[\d,]* bytes recorded"),
    "corrupted at the same size, .crc kept": (lambda p: corrupt(p, keep_crc=True), "vectors", "weight",
                                              r"output vectors: \S+ changed content"),
    "corrupted at the same size, .crc removed": (lambda p: corrupt(p, keep_crc=False), "term_ranks", "rank",
                                                 r"output term_ranks: \S+ changed content"),
    "deleted": (Path.unlink, "tokens", "tokenize", r"output tokens: \S+ is missing"),
    "only touched": (lambda p: os.utime(p, (time.time() + 60,) * 2), "vectors", "weight", None),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_output_file_is_found_by_its_manifest(spark, copy, kind):
    change, name, stage, reason = DAMAGE[kind]
    change(a_part(copy, name))
    found = damage(spark, str(copy), read_manifest(spark, str(copy), stage))
    assert found is None if reason is None else re.fullmatch(reason + ".*", found), found


def test_after_a_same_size_corruption_the_same_command_recomputes_from_there(spark, job, copy, reference):
    corrupt(a_part(copy, "models"), keep_crc=True)
    status, out, err = job(copy)
    assert (status, err) == (0, "")
    assert recomputed(out) == ["train", "evaluate"]
    assert json.loads((copy / "manifests" / "train.json").read_text())["recomputed_because"].startswith(
        "output models: ")
    assert_same_results(copy, reference)


# --- a full disk, then space again --------------------------------------------------------------------------------


def pages_of(directory: str | Path) -> int:
    """The 4 KiB pages the files under ``directory`` take on a tmpfs."""
    return sum(-(-p.stat().st_size // 4096) for p in Path(directory).rglob("*") if p.is_file())


def test_a_full_disk_is_named_in_one_line_and_the_next_run_completes(spark, job, reference, tmp_path):
    """The run as after rank (train's and evaluate's outputs and manifests removed) on a disk with room for about half
    of what those two write.
    """
    mount = tmp_path / "small-disk"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(mount)],
                             capture_output=True).returncode == 0
    output = mount / "run"
    try:
        shutil.copytree(reference, output)
        later = tmp_path / "later"  # what train and evaluate wrote, moved off the disk
        later.mkdir()
        for stage in ("train", "evaluate"):
            for name in json.loads((output / "manifests" / f"{stage}.json").read_text())["outputs"]:
                shutil.move(output / name, later / name)
            (output / "manifests" / f"{stage}.json").unlink()
        if mounted:
            room = pages_of(output) + pages_of(later) // 2
            subprocess.run(["mount", "-o", f"remount,size={room * 4096}", str(mount)], check=True)
        else:  # no mounting here (no privilege): the failure a full disk gives, injected in the driver
            spark.conf.set(DRIVER_SETTING, "train:publish:disk-full")
        try:
            status, out, err = job(output)
        finally:
            spark.conf.unset(DRIVER_SETTING)
        assert status == 1
        assert one_error_line(err).startswith(
            "sparktc: error: the disk is full (No space left on device): free space on the file system of --output and "
            "of spark.local.dir, or give an --output elsewhere, then run the same command again")
        finished = [stage for stage in STAGES if (output / "manifests" / f"{stage}.json").exists()]
        assert finished[:4] == STAGES[:4] and len(finished) < len(STAGES), finished
        if mounted:
            subprocess.run(["mount", "-o", "remount,size=256m", str(mount)], check=True)
        status, out, err = job(output)
        assert (status, err) == (0, "")
        assert recomputed(out) == STAGES[len(finished):]
        assert_same_results(output, reference)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(mount)], check=False)


# --- two runs at once; outputs over user files; classify into a run -----------------------------------------------


HOLD = textwrap.dedent("""
    import sys, time
    from sparktc.runtime.outputs import claim
    with claim(sys.argv[1]) as held:
        print(held.run_id, flush=True)
        time.sleep(600)
""")


def test_a_second_run_on_the_same_output_is_refused_while_the_first_runs(spark, job, copy, reference):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(copy)], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        run_id = holder.stdout.readline().strip()
        before = files_of(copy)
        status, out, err = job(copy, "--force")
        assert status == BUSY_EXIT and out == ""
        assert re.fullmatch(rf"sparktc: error: --output {copy} is in use by run {run_id} \(host \S+, process "
                            rf"{holder.pid}, started \S+: -c {copy}\); two runs never share an output: wait for it to "
                            r"finish, or give another --output", one_error_line(err))
        assert files_of(copy) == before  # not a byte written
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    status, out, err = job(copy)
    assert (status, err, recomputed(out)) == (0, "", [])
    assert_same_results(copy, reference)


def test_an_output_over_user_files_is_refused_and_they_are_left_alone(spark, job, corpus, tmp_path):
    user = tmp_path / "user"
    (user / "documents").mkdir(parents=True)
    (user / "documents" / "thesis.tex").write_text("mine")
    (user / "link").symlink_to(corpus)
    before = files_of(tmp_path)
    for output, message in [
        (corpus.parent, f"--output {corpus.parent} contains corpus.path {corpus}; write outputs outside the "
                        "run's inputs"),
        (user / "link" / "out", f"--output {user}/link/out is inside corpus.path {corpus}; write outputs outside the "
                                "run's inputs"),
        (user, f"--output {user} is not empty (documents, link) and is not a sparktc output directory (no .sparktc "
               "file): sparktc never writes over files it did not write; give a new or empty directory"),
        (Path("/"), "--output / is the root directory; give a directory of its own, e.g. runs/NAME"),
    ]:
        status, out, err = job(output)
        assert (status, one_error_line(err)) == (2, f"sparktc: configuration error: {message}")
    assert files_of(tmp_path) == before


def test_classify_refuses_a_training_run_as_its_output(spark, reference, corpus, tmp_path):
    bundle = load_bundle(spark, f"{reference}/model")
    with pytest.raises(OutputError, match=re.escape(f"--output {reference} contains --model {reference}/model")):
        classify(spark, bundle, str(corpus / "test.jsonl"), reference)
    other = tmp_path / "other-run"
    shutil.copytree(reference, other, ignore=shutil.ignore_patterns("model"))
    with pytest.raises(OutputError, match=re.escape(f"--output {other} holds a training run")):
        classify(spark, bundle, str(corpus / "test.jsonl"), str(other))


# --- outputs that cannot be made; a setting given to spark-submit --------------------------------------------------


def run_script(job: str, arguments: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """``jobs/JOB.py ARGUMENTS`` run as a script in this process, where no Spark session may start: (status, stderr)."""

    def no_spark(*arguments, **options):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr("sparktc.runtime.session.build_session", no_spark)
    monkeypatch.setattr(sys, "argv", [str(REPO / "jobs" / job), *arguments])
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        runpy.run_path(str(REPO / "jobs" / job), run_name="__main__")
    return ended.value.code, capsys.readouterr().err


#: Each job's arguments but its output, its inputs made under a folder by :func:`job_inputs`.
JOBS = {
    "pipeline.py": lambda inputs: ["--config", "synthetic"],
    "classify.py": lambda inputs: ["--model", str(inputs / "model"), "--input", str(inputs / "documents.jsonl")],
    "compare.py": lambda inputs: [str(inputs / "run-1"), str(inputs / "run-2")],
    "export_libsvm.py": lambda inputs: [str(inputs / "run")],
}


def job_inputs(folder: Path) -> Path:
    """The inputs the jobs of :data:`JOBS` check before Spark starts: two evaluated runs, a weighted run."""
    for run in ("run-1", "run-2"):
        (folder / run).mkdir(parents=True)
        (folder / run / "metrics.json").write_text("{}")
    (folder / "run" / "manifests").mkdir(parents=True)
    (folder / "run" / ".sparktc").write_text('{"kind": "run"}')
    (folder / "run" / "manifests" / "weight.json").write_text("{}")
    return folder


@pytest.mark.parametrize("where", ["proc", "under_a_file"])
@pytest.mark.parametrize("job", list(JOBS))
def test_an_output_that_cannot_be_made_is_refused_before_spark_starts(tmp_path, monkeypatch, capsys, job, where):
    inputs = job_inputs(tmp_path / "inputs")
    (tmp_path / "README.md").write_text("mine")
    output, message = {
        "proc": ("/proc/sparktc-out", "the directory /proc (where /proc/sparktc-out would be made) cannot be written "
                                      "(No such file or directory); give a directory this user can write"),
        "under_a_file": (f"{tmp_path}/README.md/sub", f"{tmp_path}/README.md is a file, so the directory cannot be "
                                                      "made there; give a directory path"),
    }[where]
    before = files_of(tmp_path)
    status, err = run_script(job, [*JOBS[job](inputs), "--output", output], monkeypatch, capsys)
    assert (status, one_error_line(err)) == (2, f"sparktc: configuration error: --output {output}: {message}")
    assert files_of(tmp_path) == before and not os.path.exists("/proc/sparktc-out")


def test_an_output_in_a_folder_this_user_may_not_write_is_refused_before_spark_starts(tmp_path, monkeypatch, capsys):
    """A folder without write permission; for root, who writes into any folder, a read-only file system mounted there
    instead (a small tmpfs; the test is skipped where mounting is not allowed).
    """
    parent = tmp_path / "parent"
    parent.mkdir()
    root = os.geteuid() == 0
    if root and subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(parent)],
                               capture_output=True).returncode != 0:
        pytest.skip("run as root, who may write into any folder, where a read-only file system cannot be mounted")
    try:
        if not root:
            parent.chmod(0o555)
        output = parent / "out"
        status, err = run_script("pipeline.py", ["--config", "synthetic", "--output", str(output)], monkeypatch, capsys)
        why = "Read-only file system" if root else "Permission denied"
        assert (status, one_error_line(err)) == (2, (
            f"sparktc: configuration error: --output {output}: the directory {parent} (where {output} would be made) "
            f"cannot be written ({why}); give a directory this user can write"))
        assert list(parent.iterdir()) == []
    finally:
        if root:
            subprocess.run(["umount", "-l", str(parent)], check=False)
        else:
            parent.chmod(0o755)


@pytest.mark.parametrize(("setting", "value", "message"), [
    (TASK_MEMORY, "10m", f"spark.conf '{TASK_MEMORY}' = '10m' is not allowed; expected a memory size such as '1g' or "
                         "'600m', at least the 320 MiB a Python worker holds before any data"),
    ("spark.sparktc.taskmemory", "1g", "unknown key 'spark.sparktc.taskmemory' in spark.conf; sparktc's own keys: "),
], ids=["task_memory_10m", "unknown_key"])
def test_a_sparktc_setting_given_to_spark_submit_is_a_configuration_error(spark, job, tmp_path, setting, value,
                                                                          message):
    """spark-submit's ``--conf`` reaches the session, not the arguments' checks: refused once the session is there,
    before any work, and nothing is left in the new output.
    """
    spark.conf.set(setting, value)
    try:
        status, out, err = job(tmp_path / "out")
    finally:
        spark.conf.unset(setting)
    assert (status, out) == (2, "")
    assert one_error_line(err).startswith(f"sparktc: configuration error: {message}")
    assert not (tmp_path / "out").exists()


# --- an upgrade ---------------------------------------------------------------------------------------------------


def test_an_upgrade_makes_every_manifest_stale(spark, copy, monkeypatch):
    """Another code digest: every stage is recomputed (the recomputation itself is ``--force``'s, whose results
    tests/runtime/test_determinism.py checks against a first run).
    """
    monkeypatch.setattr(manifest, "code_digest", lambda: "f" * 64)
    for stage in STAGES:
        assert damage(spark, str(copy), read_manifest(spark, str(copy), stage)).startswith(
            "written by other code (sparktc "), stage


# --- configurations are code; sparktc's own files are data -----------------------------------------------------------


def test_sparktc_reads_its_own_files_as_data_only(spark, reference, tmp_path):
    # No module unpickles, unmarshals, evaluates or executes anything: manifests, markers, locks and bundles are JSON
    # and Parquet. (The launcher marshals the bytecode it zips for the executors' imports; it reads none back.)
    forbidden = re.compile(r"\bpickle\.loads?\(|\bmarshal\.loads?\(|\beval\(|\bexec\(|allow_pickle=True|yaml\.load\(")
    found = {str(path): match.group(0) for path in (REPO / "sparktc").rglob("*.py")
             if (match := forbidden.search(path.read_text()))}
    assert found == {}
    # A bundle's recorded settings are checked like a configuration: a key sparktc does not know is refused.
    bundle = tmp_path / "model"
    shutil.copytree(f"{reference}/model", bundle)
    description = json.loads((bundle / "bundle.json").read_text())
    description["settings"]["train"]["spark.python.worker.module"] = "elsewhere"
    reseal_bundle(bundle, description)  # on purpose: the digest it records of itself made again
    with pytest.raises(ValueError, match=re.escape("unknown key train.spark.python.worker.module")):
        load_bundle(spark, str(bundle))
