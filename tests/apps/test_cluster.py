"""The README's Reuters-21578 R(90) command on a real Spark standalone cluster, run from the installed package.

A master and two workers (one core, 2 GB each) are started from the pyspark installation, on
127.0.0.1 only, by the master and worker commands of docs/clusters.md (their host, ports, cores and memory this
module's). The Python side comes from the packed environment the page's YARN recipe ships
(``scripts/pack-env.sh``, what ``make pack`` runs): a fresh virtual environment with sparktc installed
from its wheel and the pinned dependencies, packed by venv-pack. The driver is the environment's
``sparktc run`` command, started from a directory outside the clone with the packaged configuration
(``--config reuters21578``): no sparktc but the installed one can run (its interpreter finds sparktc in
the environment, installed from the wheel, and nothing of the clone on its path: checked first). The
executors receive the environment with ``--archives ENV#env`` and run ``./env/bin/python``; on a master
that is not local the command ships the installed package zipped with ``--py-files`` (the driver's own
code), so the executors import sparktc from that zip and its dependencies from ``./env``. The job runs
with two executors of 1 GB, one per worker, on three of the corpus's files (``REUTERS21578_SUBSET`` in
conftest.py: the command as the page writes it but for corpus.path; the whole corpus runs once, in local
mode, in tests/stages/test_reuters21578_pipeline.py), and its tables and metrics must equal those of the
suite's local-mode run of the same command (``reuters21578_subset_run``), which this process makes (or
another one has made) while the cluster runs the job. Its micro-F1 is counted again from its predictions, and
Spark's log went to a file in the user's cache, not to the console. The environment's ``sparktc classify``, in
local mode from outside the clone, classifies some of the run's test documents with its model as the run did
(the installed command's Spark jobs: tests/apps/test_package.py checks the wheel and the command without Spark).

Every JVM here (master, workers, driver, executors) runs with ``CHILD_JVM_OPTIONS`` (conftest.py):
the JIT options of the suite's own session, and the serial collector. They run many small
jobs, and the optimizing tier's compilations were about half of the cluster's CPU time on a 2-core
machine. The master, the workers and the executors run this clone's pyspark and read the suite's class archive
(``conftest.jvm_options``); the driver runs the environment's pyspark, whose jars the archive does not describe.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import CHILD_JVM_OPTIONS, REPO, PackedEnv, command_words, jvm_options, reuters21578_overrides, run_table
from docs_examples import example

pytestmark = pytest.mark.spark  # a standalone cluster and spark-submit, not the session fixture

SPARK_HOME = Path(__import__("pyspark").__file__).parent
WORKERS = 2
#: The master's log lines that say where it listens: its URL, then its web UI's port.
MASTER_BOUND = re.compile(r"Starting Spark master at (?P<url>spark://\S+).*?'MasterUI' on port (?P<web>\d+)", re.S)
START_TIMEOUT = 180  # seconds for the master and both workers to register (JVM start-up on a busy 2-core box)
SUBMIT_TIMEOUT = 1200
STOP_GRACE = 20  # seconds between SIGTERM and SIGKILL


def page_words(code: str) -> list[str]:
    """The words of a one-command block of docs/clusters.md (:func:`conftest.command_words`), no trailing ``&``."""
    words = command_words(code)
    return words[:-1] if words[-1] == "&" else words


def daemon(code: str, values: dict[str, str], *extra: str) -> list[str]:
    """The page's ``spark-class`` command ``code`` as this module runs it: pyspark's spark-class, each option of
    ``values`` given its value here (the page gives every one of them), the page's master URL ``values["url"]``,
    and ``extra`` options the page leaves to Spark's defaults.
    """
    words = page_words(code)
    assert words[0] == "$spark_home/bin/spark-class", words
    command = [str(SPARK_HOME / "bin" / "spark-class")]
    for word in words[1:]:
        if command[-1] in values:
            word = values[command[-1]]
        elif word.startswith("spark://"):
            word = values["url"]
        command.append(word)
    assert all(option in words for option in values if option != "url"), words
    return command + list(extra)


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cluster_environment() -> dict[str, str]:
    """The daemons' environment: loopback only, and nothing that would let Python find sparktc."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_PYTHON",
                                  "PYSPARK_DRIVER_PYTHON")}
    environment["SPARK_LOCAL_IP"] = "127.0.0.1"
    # The master's REST submission server would take the fixed port 6066; nothing here uses it.
    environment["SPARK_MASTER_OPTS"] = "-Dspark.master.rest.enabled=false"
    environment["SPARK_DAEMON_JAVA_OPTS"] = jvm_options(serial_gc=True)  # the master's and workers' JVMs
    return environment


def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every live (non-zombie) process in process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            state, _, group = stat[stat.rindex(")") + 2:].split()[:3]
            if int(group) == pgid and state != "Z":
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                members.append((int(entry.name), command[:200]))
        except (OSError, ValueError):
            continue  # gone meanwhile
    return members


def stop_group(process: subprocess.Popen) -> list[tuple[int, str]]:
    """SIGTERM the process and its group (it leads a session of its own), SIGKILL after the grace
    period; the processes of the group still alive afterwards (none expected).
    """
    pgid = process.pid  # start_new_session=True: its pid is its process group id
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + (STOP_GRACE if sig == signal.SIGTERM else 10)
        while time.monotonic() < deadline:
            if process.poll() is not None and not group_members(pgid):
                return []
            time.sleep(0.2)
    process.poll()
    return group_members(pgid)


def installed_environment(cache: Path) -> dict[str, str]:
    """The environment of the installed ``sparktc`` command here: the daemons' (:func:`cluster_environment`), no
    log file named by the caller, and ``cache`` as the user's cache (where the command puts its logs and its zip).
    """
    environment = {key: value for key, value in cluster_environment().items()
                   if key not in ("SPARKTC_LOG", "SPARKTC_LOG_DIR")}
    return environment | {"XDG_CACHE_HOME": str(cache)}


def tail(path: Path, lines: int = 30) -> str:
    try:
        return f"--- {path.name} ---\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"--- {path.name}: {error}"


def master_state(web_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=5) as response:
        return json.load(response)


@dataclass
class Cluster:
    url: str
    web_port: int
    environment: dict[str, str]
    scratch: Path  # the daemons' working directory
    work_dirs: list[Path]
    logs: list[Path]

    def state(self) -> dict:
        return master_state(self.web_port)

    def log_tails(self) -> str:
        return "\n".join(tail(log) for log in self.logs)


#: What the packed interpreter says of the sparktc it imports: its file, its path, and how pip installed it.
WHICH_SPARKTC = """
import importlib.metadata, json, sys
import liblinear, numpy, pyarrow, pyspark, sparktc
origin = json.loads(importlib.metadata.distribution("sparktc").read_text("direct_url.json"))
print(json.dumps({"file": sparktc.__file__, "path": sys.path, "origin": origin}))
"""


def installed_sparktc(packed_env: PackedEnv, cwd: Path) -> str:
    """Why the packed interpreter, in the daemons' environment and in ``cwd``, could import sparktc from the
    clone ("" if it cannot: it imports the libraries, and sparktc from the environment, installed from a wheel).
    """
    probe = subprocess.run([str(packed_env.python), "-c", WHICH_SPARKTC], cwd=cwd, env=cluster_environment(),
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return probe.stderr
    found = json.loads(probe.stdout)
    clone = [entry for entry in found["path"] if Path(entry or cwd).resolve().is_relative_to(REPO)]
    if clone:
        return f"the clone is on the path: {clone}"
    if not Path(found["file"]).is_relative_to(packed_env.env):
        return f"sparktc imported from {found['file']}, not from {packed_env.env}"
    if not found["origin"].get("url", "").endswith(".whl") or "archive_info" not in found["origin"]:
        return f"sparktc was not installed from a wheel: {found['origin']}"
    return ""


def test_sparktc_comes_from_the_packed_environment_where_the_cluster_runs(packed_env: PackedEnv,
                                                                         tmp_path: Path) -> None:
    """The precondition of the cluster run: in the daemons' environment and working directory, the
    executors' interpreter imports the libraries, and sparktc from the environment, never from the clone.
    """
    assert installed_sparktc(packed_env, tmp_path) == ""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and two one-core workers on 127.0.0.1, stopped (with everything they
    started) when the module ends, also after a failure.
    """
    base = tmp_path_factory.mktemp("cluster")
    scratch = base / "cwd"
    scratch.mkdir()
    environment = cluster_environment()
    master = daemon(example("cluster-master"), {"--host": "127.0.0.1", "--port": str(free_port()),
                                                "--webui-port": str(free_port())})
    names = ["master", *(f"worker{number}" for number in range(1, WORKERS + 1))]
    logs = [base / f"{name}.log" for name in names]
    work_dirs = [base / name for name in names[1:]]
    started: list[subprocess.Popen] = []
    leftovers = []

    def start(command: list[str], log: Path) -> None:
        with open(log, "wb") as handle:
            started.append(subprocess.Popen(command, cwd=scratch, env=environment, stdin=subprocess.DEVNULL,
                                            stdout=handle, stderr=subprocess.STDOUT, start_new_session=True))

    try:
        deadline = time.monotonic() + START_TIMEOUT
        start(master, logs[0])
        # The ports the master bound, from its log: a port found free may be taken by another process before the
        # master binds it, and Spark then binds the next one.
        while not (bound := MASTER_BOUND.search(logs[0].read_text(errors="replace"))):
            if started[0].poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the master did not start (exit status {started[0].returncode}):\n"
                            + logs[0].read_text(errors="replace")[-4000:])
            time.sleep(0.5)
        url, web_port = bound["url"], int(bound["web"])
        for work_dir, log in zip(work_dirs, logs[1:]):
            work_dir.mkdir()
            start(daemon(example("cluster-worker"), {"--cores": "1", "--memory": "2g", "url": url},
                         "--host", "127.0.0.1", "--webui-port", str(free_port()), "--work-dir", str(work_dir)), log)
        the_cluster = Cluster(url, web_port, environment, scratch, work_dirs, logs)
        alive = 0
        while True:
            exited = [(name, process.returncode) for name, process in zip(names, started)
                      if process.poll() is not None]
            if exited:
                pytest.fail(f"cluster daemons exited: {exited}\n{the_cluster.log_tails()}")
            try:
                alive = sum(worker["state"] == "ALIVE" for worker in the_cluster.state()["workers"])
            except OSError:
                alive = 0  # the master's web UI is not up yet
            if alive == WORKERS:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"{alive} of {WORKERS} workers registered with {url} after {START_TIMEOUT} s\n"
                            f"{the_cluster.log_tails()}")
            time.sleep(1)
        yield the_cluster
    finally:
        for process in reversed(started):  # workers first, then the master
            leftovers += stop_group(process)
    assert not leftovers, f"processes of the test cluster still running after SIGKILL: {leftovers}"


@dataclass(frozen=True)
class ClusterRun:
    output: Path
    stdout: str
    stderr: str
    cache: Path  # the command's XDG_CACHE_HOME: its Spark log and its zip under sparktc/
    shipped: Path  # the installed package's zip the command passed with --py-files
    seconds: float


@pytest.fixture(scope="module")
def cluster_run(cluster: Cluster, packed_env: PackedEnv, reuters21578_subset: Path, tmp_path_factory,
                request) -> ClusterRun:
    """The Reuters-21578 command of docs/clusters.md, its Spark options as written (the master this module's), as
    the packed environment's ``sparktc run`` (its spark-submit and
    Python on the driver, the packaged configuration, a working directory outside the clone; the archive for the
    executors), on the corpus's subset (``reuters21578_subset``). While it runs, the suite's local-mode run of the
    same command (``reuters21578_subset_run``) is made here, or read if another test process made it: the
    cluster's JVMs and this process's session share the machine.
    """
    output = tmp_path_factory.mktemp("reuters21578-cluster") / "run"
    elsewhere = output.parent / "cwd"
    elsewhere.mkdir()
    reason = installed_sparktc(packed_env, elsewhere)
    assert not reason, f"the driver could import sparktc from the clone, so the run would prove nothing: {reason}"
    words = page_words(example("cluster-submit"))
    job = words.index("jobs/pipeline.py")
    assert words[:3] == ["./spark-submit.sh", "--master", "spark://HOST:7077"], words
    config, job_output = words[words.index("--config", job) + 1], words[words.index("--output", job) + 1]
    assert (config, job_output) == ("conf/reuters21578.toml", "runs/reuters21578-cluster")
    assert [override for override in reuters21578_overrides() if override.startswith("corpus.path=")] == [
        f"corpus.path={(REPO / words[words.index('--set', job) + 1].removeprefix('corpus.path=')).resolve()}"]
    command = [str(packed_env.env / "bin" / "sparktc"), "run", "--master", cluster.url, *words[3:job],
               # The executors' interpreter; the driver's stays the command's own (sparktc.apps.submit).
               "--archives", f"{packed_env.archive}#env", "--conf", "spark.pyspark.python=./env/bin/python",
               "--conf", "spark.driver.host=127.0.0.1",
               # As many shuffle partitions as the local-mode run's session (conftest.py), not the 16 of
               # conf/spark-defaults.conf: two one-core executors, and the results do not depend on it
               # (tests/runtime/test_determinism.py).
               "--conf", "spark.sql.shuffle.partitions=4",
               "--conf", f"spark.driver.defaultJavaOptions={CHILD_JVM_OPTIONS}",
               "--conf", f"spark.executor.defaultJavaOptions={jvm_options(serial_gc=True)}",
               # The page's configuration as the package carries it, by name, with the local-mode run's settings.
               "--config", Path(config).stem,
               *(argument for override in reuters21578_overrides(reuters21578_subset)
                 for argument in ("--set", override)),
               "--output", str(output)]
    # The driver binds to loopback as the daemons do; the command's zip and Spark's log go to a cache of its own.
    cache = output.parent / "cache"
    environment = installed_environment(cache)
    logs = output.parent / "stdout", output.parent / "stderr"  # files, not pipes: read when it has finished
    began = time.monotonic()
    with open(logs[0], "w") as out, open(logs[1], "w") as err:
        job = subprocess.Popen(command, cwd=elsewhere, env=environment, stdin=subprocess.DEVNULL, stdout=out,
                               stderr=err, start_new_session=True)
    try:
        request.getfixturevalue("reuters21578_subset_run")  # meanwhile
        job.wait(timeout=max(1.0, SUBMIT_TIMEOUT - (time.monotonic() - began)))
    except subprocess.TimeoutExpired:
        stop_group(job)
        pytest.fail(f"sparktc run did not finish in {SUBMIT_TIMEOUT} s\n{logs[1].read_text()[-3000:]}\n"
                    f"{cluster.log_tails()}")
    finally:
        leftovers = stop_group(job)  # nothing of the submit (driver JVM, Python driver) may outlive it
    stdout, stderr = (log.read_text(errors="replace") for log in logs)
    seconds = time.monotonic() - began
    assert not leftovers, f"processes of spark-submit still running after SIGKILL: {leftovers}"
    executor_logs = "\n".join(tail(log, 15) for work_dir in cluster.work_dirs
                              for log in work_dir.glob("app-*/*/stderr"))
    spark_logs = "\n".join(tail(log, 40) for log in (cache / "sparktc" / "logs").glob("*.log"))
    assert job.returncode == 0, f"{stderr[-4000:]}\n{spark_logs}\n{executor_logs}\n{cluster.log_tails()}"
    [shipped] = (cache / "sparktc").glob("*.zip")
    print(f"packed environment: {packed_env.seconds:.1f} s, {packed_env.archive.stat().st_size / 2**20:.0f} MiB; "
          f"cluster run: {seconds:.1f} s")
    return ClusterRun(output, stdout, stderr, cache, shipped, seconds)


def test_the_zip_shipped_is_the_installed_package(packed_env: PackedEnv, cluster_run: ClusterRun) -> None:
    """What the command shipped with --py-files is the environment's sparktc, file for file (its modules, with
    their bytecode, and its configurations), and nothing else.
    """
    [package] = (packed_env.env / "lib").glob("python*/site-packages/sparktc")
    installed = {f"sparktc/{path.relative_to(package)}" for path in package.rglob("*")
                 if path.is_file() and "__pycache__" not in path.parts}
    with zipfile.ZipFile(cluster_run.shipped) as archive:
        names = set(archive.namelist())
        sources = {name: archive.read(name) for name in names if not name.endswith(".pyc")}
    assert set(sources) == installed
    assert all(content == (package.parent / name).read_bytes() for name, content in sources.items())
    assert names - installed == {f"{name}c" for name in installed if name.endswith(".py")}


def test_the_run_used_both_workers(cluster: Cluster, cluster_run: ClusterRun) -> None:
    """Not local mode: the master lists the application as finished with 2 cores of 1 GB, the
    stages' manifests name that application and master, and each worker ran one executor that
    unpacked the environment, was shipped the installed package's zip and no other, and finished tasks.
    """
    output, stdout = cluster_run.output, cluster_run.stdout
    stages = [line.split()[1] for line in stdout.splitlines() if line.startswith("sparktc: ") and " out " in line]
    assert stages == ["ingest", "tokenize", "weight", "rank", "train", "evaluate"], stdout
    manifests = {stage: json.loads((output / "manifests" / f"{stage}.json").read_text()) for stage in stages}
    [application] = {manifest["spark"]["application_id"] for manifest in manifests.values()}
    assert {manifest["spark"]["master"] for manifest in manifests.values()} == {cluster.url}
    assert application.startswith("app-"), application  # local mode names its application local-...
    deadline = time.monotonic() + 30
    while True:  # the master may take a moment to move the application to the completed list
        completed = {app["id"]: app for app in cluster.state()["completedapps"]}
        if application in completed or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert application in completed, cluster.state()
    app = completed[application]
    assert (app["name"], app["state"], app["cores"], app["memoryperexecutor"]) == \
        ("sparktc-reuters21578", "FINISHED", 2, 1024), app
    shipped = cluster_run.shipped.read_bytes()
    for work_dir in cluster.work_dirs:  # one executor directory per executor the worker launched
        executors = sorted((work_dir / application).iterdir())
        assert executors and all((executor / "env" / "bin" / "python").exists()
                                 and [path.name for path in executor.glob("*.zip")] == [cluster_run.shipped.name]
                                 and (executor / cluster_run.shipped.name).read_bytes() == shipped
                                 for executor in executors), [sorted(executor.iterdir()) for executor in executors]
        finished = sum((executor / "stderr").read_text(errors="replace").count("Finished task")
                       for executor in executors)
        assert finished > 0, "\n".join(tail(executor / "stderr") for executor in executors)


def test_metrics_equal_the_local_run(cluster_run: ClusterRun, reuters21578_subset_run) -> None:
    cluster_output = cluster_run.output
    local_output, _ = reuters21578_subset_run
    cluster_metrics = json.loads((cluster_output / "metrics.json").read_text())
    local_metrics = json.loads(Path(local_output, "metrics.json").read_text())
    # R(90) of the subset: 3,000 documents, 652 test ones, 53 categories with positives in both
    assert (cluster_metrics["n_categories"], cluster_metrics["test_documents"]) == (53, 652)
    assert cluster_metrics["micro_f1"] > 0.5
    assert cluster_metrics == local_metrics


@pytest.mark.parametrize(("name", "key"), [("models", "category"), ("predictions", "doc_id"),
                                           ("contingency", "category")])
def test_tables_equal_the_local_run(cluster_run: ClusterRun, reuters21578_subset_run, name: str, key: str) -> None:
    """Row for row and column for column, read with pyarrow (``run_table``: models without their wall time)."""
    reference = run_table(reuters21578_subset_run[0], name, key)
    assert reference.num_rows == (53 if name != "predictions" else 652)
    written = run_table(cluster_run.output, name, key)
    assert written.schema == reference.schema and written.to_pylist() == reference.to_pylist()


def test_the_micro_f1_is_counted_from_the_predictions(cluster_run: ClusterRun) -> None:
    """metrics.json's micro-F1, counted again from the run's predictions over the categories with training
    positives (conf/reuters21578.toml's ``evaluate.average_over``).
    """
    output = cluster_run.output
    metrics = json.loads((output / "metrics.json").read_text())
    averaged = {row["category"] for row in pq.read_table(output / "categories").to_pylist() if row["train_positives"]}
    tp = fp = fn = 0
    for row in pq.read_table(output / "predictions").to_pylist():
        labels, predicted = set(row["labels"]) & averaged, set(row["predicted"]) & averaged
        tp, fp, fn = tp + len(labels & predicted), fp + len(predicted - labels), fn + len(labels - predicted)
    assert metrics["micro_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-12) and tp > 0


def test_sparks_log_went_to_a_file_in_the_users_cache(cluster_run: ClusterRun) -> None:
    """The installed command sends Spark's log to a file per job under ``$XDG_CACHE_HOME/sparktc/logs``, not to
    the console.
    """
    [log] = (cluster_run.cache / "sparktc" / "logs").glob("*-pipeline.log")
    assert " WARN " in log.read_text(errors="replace") and " WARN " not in cluster_run.stderr


def test_sparktc_classify_from_the_wheel_decides_as_the_cluster_run(packed_env: PackedEnv, cluster_run: ClusterRun,
                                                                   tmp_path: Path) -> None:
    """The environment's ``sparktc classify``, in local mode from a directory outside the clone, with the cluster
    run's model, on the first five of the run's test documents that it assigns categories to (their texts, as JSON
    Lines): each gets the categories and the best categories the run's predictions give it. The JVM's class archive
    is neither read nor written (``SPARKTC_CLASS_ARCHIVE=0``: writing one costs this run about 20 s, and
    tests/apps/test_submit.py checks the archive).
    """
    output = cluster_run.output
    predictions = {row["doc_id"]: row for row in pq.read_table(output / "predictions").to_pylist()}
    documents = sorted((row for row in pq.read_table(output / "documents", columns=["doc_id", "split", "text"])
                        .to_pylist() if row["split"] == "test" and predictions[row["doc_id"]]["predicted"]),
                       key=lambda row: row["doc_id"])[:5]
    with (tmp_path / "documents.jsonl").open("w") as handle:
        for row in documents:
            handle.write(json.dumps({"id": row["doc_id"], "text": row["text"]}) + "\n")
    cache = tmp_path / "cache"
    classify = subprocess.run([str(packed_env.env / "bin" / "sparktc"), "classify", "--model", str(output / "model"),
                               "--input", "documents.jsonl", "--output", "classified", "--format", "jsonl",
                               "--master", "local[2]",
                               "--conf", f"spark.driver.defaultJavaOptions={CHILD_JVM_OPTIONS}"],
                              cwd=tmp_path, env=installed_environment(cache) | {"SPARKTC_CLASS_ARCHIVE": "0"},
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=SUBMIT_TIMEOUT)
    assert classify.returncode == 0, classify.stderr[-3000:]
    assert not list((cache / "sparktc").rglob("*.jsa"))
    classified = [json.loads(line) for part in sorted((tmp_path / "classified" / "predictions").glob("part-*.json"))
                  for line in part.read_text().splitlines()]
    assert sorted(row["doc_id"] for row in classified) == [row["doc_id"] for row in documents]
    for row in classified:
        expected = predictions[row["doc_id"]]
        assert (row["predicted"], row["top_categories"]) == (expected["predicted"], expected["top_categories"])


def test_the_guides_spark_home_is_pysparks() -> None:
    """docs/clusters.md's first command finds the Spark whose spark-class this module's daemons run."""
    program = re.fullmatch(r"spark_home=\$\(\.venv/bin/python -c '([^']*)'\)\n", example("cluster-spark-home"))[1]
    found = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0 and Path(found.stdout.strip()) == SPARK_HOME
