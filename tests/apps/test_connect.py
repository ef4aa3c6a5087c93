"""The experiment and classify through Spark Connect, as a Databricks or Spark 4 client runs them.

pyspark's bundled Spark Connect server is started on 127.0.0.1 (``spark-submit --class
org.apache.spark.sql.connect.service.SparkConnectServer``), in local mode with the suite's session's settings, its
Python workers running the project's interpreter. Client processes talk to it as thin clients
(``SparkSession.builder.remote("sc://127.0.0.1:PORT")``): no SparkContext, no py4j, no RDD on their side. The
README's Reuters-21578 R(90) command, on three of the corpus's files (``REUTERS21578_SUBSET`` in conftest.py), and
classify run through it with the API a notebook uses (docs/notebooks.md's Connect block, then what the example
notebook shows of the run and its model), and the main job through ``./spark-submit.sh --remote`` with the example
notebook's settings, its server killed after weight and the run resumed on another; their metrics, models,
predictions, manifests and what a notebook shows must equal those of the suite's classic runs (conftest.py's
``reuters21578_subset_run``, through the job's code on the suite's session, and ``notebook_kernel_run``, the example
notebook in a kernel).
"""

from __future__ import annotations

import ast
import base64
import fcntl
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import nbformat
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import EXPLAIN_MODE, REPO, SMALL_CORPUS, jvm_options, reuters21578_overrides, selected
from docs_examples import example

import sparktc

pytestmark = pytest.mark.spark

SPARK_HOME = Path(__import__("pyspark").__file__).parent
START_TIMEOUT = 180  # seconds for the server to listen (JVM start-up on a busy 2-core machine)


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start_server(base: Path) -> tuple[subprocess.Popen, str]:
    """A Spark Connect server on 127.0.0.1 in a process group of its own, its log in ``base``, once it listens: the
    process and its address.
    """
    port = free_port()
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "SPARK_HOME")}
    # The server's Python workers import this checkout's sparktc, as the driver does.
    environment.update(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(REPO))
    command = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[2,4]",
               "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--conf", f"spark.connect.grpc.binding.port={port}",
               # The suite's classic session's settings (conftest.py), so the results can be compared.
               "--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.default.parallelism=2",
               "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.session.timeZone=UTC",
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
               "--conf", "{}={}".format(*EXPLAIN_MODE),
               "--conf", f"spark.driver.extraJavaOptions={jvm_options(serial_gc=True)}"]
    log = base / "server.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen(command, cwd=base, env=environment, stdin=subprocess.DEVNULL, stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while not listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_server(process)
            pytest.fail(f"the Spark Connect server did not listen on {port}:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    return process, f"sc://127.0.0.1:{port}"


def stop_server(process: subprocess.Popen, signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGKILL)) -> None:
    """Stop a server of :func:`start_server` with everything it started: its process group (the JVM and its Python
    workers), by each of ``signals`` in turn until it has ended.
    """
    for sig in signals:
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=20)
            break
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """A Spark Connect server on 127.0.0.1, stopped with everything it started when the module ends."""
    process, url = start_server(tmp_path_factory.mktemp("connect"))
    try:
        yield url
    finally:
        stop_server(process)


#: Documents for classify, in both sessions.
TEXTS = [("d1", "crude oil prices rose as opec cut output"), ("d2", "the central bank raised interest rates"),
         ("d3", "wheat and corn exports to the soviet union")]
def client_code() -> str:
    """docs/notebooks.md's Connect block as a notebook's cell, in a process of its own (pyspark's functions build
    Connect columns only in a process whose session is a Connect one): the R(90) pipeline and classify through the
    API, on this module's server, output, settings and texts (argv), writing what classify returned and what the
    example notebook shows of a run and its model (their lines, pages, figures and per-category table).
    """
    code = example("connect-api")
    for page, here in (('"sc://127.0.0.1:15002"', "url"), ('"/Volumes/main/default/runs/reuters21578"', "output"),
                       ('[("d1", "crude oil prices rose")]', "texts")):
        assert page in code, page
        code = code.replace(page, here)
    code, overridden = re.subn(r"overrides=\[[^\]]*\]", "overrides=settings", code)
    assert overridden == 1
    return ("import json, sys\n"
            "url, output = sys.argv[1:3]\n"
            "settings, texts = json.loads(sys.argv[3]), json.loads(sys.argv[4])\n"
            f"{code}"
            "from sparktc.runtime.session import is_connect\n"
            "assert is_connect(spark)\n"
            'json.dump([row.asDict() for row in predictions.collect()], open(output + "/classified.json", "w"))\n'
            # what the example notebook shows of the run and its model, on this session
            "model = sparktc.load_model(spark, result.model)\n"
            'json.dump({"repr": repr(result), "html": result._repr_html_(), "figures": result.figures,\n'
            '           "per_category": result.per_category().to_dict("records"), "model_repr": repr(model),\n'
            '           "model_html": model._repr_html_()}, open(output + "/shown.json", "w"))\n')


@pytest.fixture(scope="module")
def connect_run(server: str, reuters21578_subset: Path, tmp_path_factory, request) -> tuple[Path, str]:
    """The Reuters-21578 R(90) pipeline, on the corpus's subset, and classify through a Connect session, with the
    Python API, in a client process: (output, what the client wrote to stderr: progress lines every second). While
    the server runs them, the suite's classic run of the same command (``reuters21578_subset_run``) is made here, or
    read if another test process made it, so that this process does not wait for it afterwards; then the notebook's
    run the last test compares with (``notebook_kernel_run``): the client and the server's small jobs keep less than
    one core busy.
    """
    output = tmp_path_factory.mktemp("reuters21578-connect") / "run"
    settings = [*reuters21578_overrides(reuters21578_subset), "progress.mode=log", "progress.interval=1"]
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS")}
    began = time.monotonic()
    logs = output.parent / "client.out", output.parent / "client.err"  # files, not pipes: read when it has finished
    with open(logs[0], "w") as out, open(logs[1], "w") as err:
        client = subprocess.Popen([sys.executable, "-c", client_code(), server, str(output), json.dumps(settings),
                                   json.dumps(TEXTS)], cwd=REPO, env=environment | {"PYTHONPATH": str(REPO)},
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    try:
        request.getfixturevalue("reuters21578_subset_run")  # meanwhile
        if selected(request, "test_the_main_job_submitted_to_a_connect_server_lost_mid_run_resumes_on_the_next_as"
                             "_the_notebook_runs"):
            request.getfixturevalue("notebook_kernel_run")
        client.wait(timeout=max(1.0, 900 - (time.monotonic() - began)))
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    stderr = logs[1].read_text(errors="replace")
    assert client.returncode == 0, stderr[-3000:]
    print(f"Connect run and classify: {time.monotonic() - began:.1f} s")
    return output, stderr


def test_the_pipeline_through_connect_equals_the_classic_run(connect_run, reuters21578_subset_run) -> None:
    connect_output, stderr = connect_run
    # Progress from Connect's progress reports: a stage's tasks done of its jobs' total.
    assert re.search(r"^sparktc: ingest +\d+s +tasks \d+/\d+", stderr, re.M), stderr[-2000:]
    classic_output, _ = reuters21578_subset_run
    metrics = json.loads((connect_output / "metrics.json").read_text())
    # R(90) of the subset: 3,000 documents, 652 test ones, 53 categories with positives in both
    assert (metrics["n_categories"], metrics["test_documents"]) == (53, 652) and metrics["micro_f1"] > 0.5
    assert metrics == json.loads(Path(classic_output, "metrics.json").read_text())
    for name, key in (("models", "category"), ("predictions", "doc_id"), ("contingency", "category")):
        tables = [pq.read_table(Path(output, name)).sort_by(key) for output in (connect_output, classic_output)]
        if name == "models":  # models.seconds: wall time, the one column that may differ
            tables = [table.drop(["seconds"]) for table in tables]
        assert tables[0].equals(tables[1]), name
    manifests = {stage: json.loads((connect_output / "manifests" / f"{stage}.json").read_text())
                 for stage in ("ingest", "weight", "train", "evaluate")}
    # The server's application, as a Connect client sees it; every stage's counts and each output's rows equal the
    # classic run's (the file names Spark gives its parts differ from run to run, and so do digests of the listings).
    assert {manifest["spark"]["master"] for manifest in manifests.values()} == {"local[2,4]"}
    for stage, manifest in manifests.items():
        classic = json.loads(Path(classic_output, "manifests", f"{stage}.json").read_text())
        counted = [{key: found[key] for key in ("rows_in", "rows_out", "set_aside")} for found in (manifest, classic)]
        rows = [{name: output["rows"] for name, output in found["outputs"].items()} for found in (manifest, classic)]
        assert counted[0] == counted[1] and rows[0] == rows[1], stage


def test_classify_through_connect_equals_the_classic_session(spark, connect_run, reuters21578_subset_run) -> None:
    connect_output, _ = connect_run
    classic_output, _ = reuters21578_subset_run
    by_classic = sparktc.classify(sparktc.load_model(spark, str(Path(classic_output, "model"))),
                                  spark.createDataFrame(TEXTS, ["doc_id", "text"]))
    by_connect = json.loads((connect_output / "classified.json").read_text())
    assert by_connect == json.loads(json.dumps([row.asDict() for row in by_classic.collect()]))
    # the subset's model (reut2-011 and -014's training documents) has the grain and interest categories
    assert {code for row in by_connect for code in row["predicted"]} >= {"grain", "interest", "wheat"}


def test_a_run_and_its_model_through_connect_show_what_the_notebook_shows(spark, connect_run,
                                                                          reuters21578_subset_run) -> None:
    """What examples/notebook.ipynb shows (the run's and the model's lines and pages, the figures, the per-category
    table) made by the Connect client: equal to the classic subset run's, or made of the Connect run's own files.
    """
    connect_output, _ = connect_run
    classic_output, _ = reuters21578_subset_run
    shown = json.loads((connect_output / "shown.json").read_text())
    metrics = json.loads((connect_output / "metrics.json").read_text())
    assert shown["repr"].startswith(f"RunResult({str(connect_output)!r}: run ") and "exit status 0" in shown["repr"]
    classic = sparktc.load_model(spark, str(Path(classic_output, "model")))
    assert shown["model_repr"] == repr(classic).replace(str(Path(classic_output, "model")),
                                                        str(connect_output / "model"))
    figures = [connect_output / name for name in ("f1_by_band.png", "f1_by_training_frequency.png")]
    assert shown["figures"] == [str(path) for path in figures]
    for page in (shown["html"], shown["model_html"]):
        images = [base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]
        assert images == [path.read_bytes() for path in figures]  # inline, as the run wrote them
        assert "Decision rule" in page and f"<td>{metrics['micro_f1']:.4f}</td>" in page
    table = json.loads(json.dumps(classic.evaluation.per_category().to_dict("records")))
    assert pd.DataFrame(shown["per_category"]).equals(pd.DataFrame(table))


def figures(output: Path) -> dict:
    """A run's metrics.json without its settings (which name the run's own corpus path)."""
    return {key: value for key, value in json.loads((output / "metrics.json").read_text()).items() if key != "settings"}


def notebook_overrides() -> list[str]:
    """The overrides the example notebook (examples/notebook.ipynb) gives the packaged conf/synthetic.toml."""
    notebook = nbformat.read(REPO / "examples" / "notebook.ipynb", as_version=4)
    [cell] = [cell.source for cell in notebook.cells if cell.source.startswith("result = sparktc.run_pipeline(")]
    assert 'spark, "synthetic", str(output),' in cell, cell
    return ast.literal_eval(re.search(r"overrides=(\[[^\]]*\])", cell)[1])


def test_the_main_job_submitted_to_a_connect_server_lost_mid_run_resumes_on_the_next_as_the_notebook_runs(
        server, notebook_kernel_run, tmp_path):
    """``./spark-submit.sh --remote sc://...``: the job's driver is a Connect client of the server. With the example
    notebook's settings, on a server of its own that is killed (SIGKILL, its whole process group) once weight has
    finished, the job ends within 60 s in one line naming the server and what is kept, exit status 1, the output's
    lock free; the same command on this module's server resumes after weight and must equal the notebook's run
    (conftest.py's ``notebook_kernel_run``: the notebook in a kernel, on a classic session of its own).
    """
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    environment["SPARKTC_LOG_DIR"] = str(tmp_path / "logs")
    # docs/notebooks.md's, with the notebook's settings
    words = shlex.split(example("connect-job").replace("\\\n", " "))
    assert words[1:3] == ["--remote", "sc://HOST:15002"] and words[-2:] == ["--output", "runs/synthetic"], words
    assert words[words.index("--config") + 1] == "conf/synthetic.toml", words
    output = tmp_path / "connect"

    def command(url: str) -> list[str]:
        return [*words[:2], url, *words[3:-2],
                *(argument for setting in notebook_overrides() for argument in ("--set", setting)),
                "--set", f"history.path={tmp_path / 'history'}", "--output", str(output)]

    process, url = start_server(tmp_path)
    try:
        job = subprocess.Popen(command(url), cwd=REPO, env=environment, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while not (output / "manifests" / "weight.json").exists():
                assert job.poll() is None and time.monotonic() < deadline, job.communicate()
                time.sleep(0.1)
            stop_server(process, (signal.SIGKILL,))
            lost = time.monotonic()
            stdout, stderr = job.communicate(timeout=90)
            ended = time.monotonic() - lost
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()
    finally:
        stop_server(process)
    errors = [line for line in stderr.splitlines() if line.startswith("sparktc: error:")]
    assert job.returncode == 1 and ended < 60, (ended, stderr[-3000:])
    assert len(errors) == 1 and errors[0].startswith(
        f"sparktc: error: the Spark Connect server at {url} stopped answering ("), stderr[-3000:]
    assert errors[0].endswith(f"the stages finished before it are kept in {output} (synthesize, ingest, tokenize, "
                              "weight): start the server, or give another, and run the same command again to resume "
                              "from there"), errors
    with open(output / ".sparktc.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: raises BlockingIOError while held
        fcntl.flock(lock, fcntl.LOCK_UN)
    done = [line.split()[1] for line in stdout.splitlines() if line.startswith("sparktc: ") and " out " in line]
    assert done == ["synthesize", "ingest", "tokenize", "weight"], stdout
    rerun = subprocess.run(command(server), cwd=REPO, capture_output=True, text=True, env=environment, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    skipped = [line.split()[1] for line in rerun.stdout.splitlines() if "up to date, skipped" in line]
    assert skipped == done, rerun.stdout
    done = [line.split()[1] for line in rerun.stdout.splitlines() if line.startswith("sparktc: ") and " out " in line]
    assert done == ["rank", "train", "evaluate"], rerun.stdout
    manifest = json.loads((output / "manifests" / "train.json").read_text())
    assert manifest["spark"]["master"] == "local[2,4]"  # the server's
    notebook = Path(notebook_kernel_run["run"])
    # The same configuration but where the run is recorded
    settings = [{name: values for name, values in json.loads((run / "manifests" / "synthesize.json").read_text())[
        "configuration"].items() if name != "history"} for run in (output, notebook)]
    assert settings[0] == settings[1]
    metrics = [figures(run) for run in (output, notebook)]
    assert metrics[0]["micro_f1"] > 0.3 and metrics[0] == metrics[1]


def thin_client_environment(tmp_path: Path) -> dict[str, str]:
    """A Connect client's environment: this checkout's sparktc, Spark's log under ``tmp_path``."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS", "SPARK_REMOTE")}
    return environment | {"PYTHONPATH": str(REPO), "SPARKTC_LOG_DIR": str(tmp_path / "logs")}


#: The pipeline job of a thin Connect client (jobs/pipeline.py on SPARK_REMOTE, as spark-submit --remote hands it).
JOB = [sys.executable, str(REPO / "jobs" / "pipeline.py"), "--config", "conf/synthetic.toml",
       *(argument for setting in SMALL_CORPUS for argument in ("--set", setting))]
#: The Python API's run on a Connect session of argv[1], into argv[2]: its SparktcError's line and status.
API_CLIENT = (
    "import sys\n"
    "from pyspark.sql import SparkSession\n"
    "import sparktc\n"
    "from sparktc.errors import SparktcError\n"
    "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()\n"
    "try:\n"
    "    sparktc.run_pipeline(spark, 'conf/synthetic.toml', sys.argv[2], verbose=False)\n"
    "except SparktcError as error:\n"
    "    print(f'sparktc: {error.heading}: {error}', file=sys.stderr)\n"
    "    sys.exit(error.exit_code)\n")


def test_a_connect_server_that_does_not_answer_is_refused_in_one_line(tmp_path) -> None:
    """Nothing listening at the address: the job and the API refuse before any work, in seconds, not after
    pyspark's 10 minutes of retries.
    """
    url = f"sc://127.0.0.1:{free_port()}"
    environment = thin_client_environment(tmp_path)
    for name, command, env in (
            ("job", [*JOB, "--output", str(tmp_path / "job")], environment | {"SPARK_REMOTE": url}),
            ("api", [sys.executable, "-c", API_CLIENT, url, str(tmp_path / "api")], environment)):
        began = time.monotonic()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and time.monotonic() - began < 30, (name, done.stderr[-2000:])
        assert len(lines) == 1 and lines[0].startswith(
            f"sparktc: configuration error: the Spark Connect server at {url} does not answer ("), (name, lines)
        assert lines[0].endswith("; start it or check the address (SparkSession.builder.remote, spark-submit "
                                 "--remote, SPARK_REMOTE)"), lines


#: A table corpus given as a DataFrame (``documents=``) on a Connect session of argv[1]: its ingest into argv[2], the
#: Parquet table argv[3] read by the server.
TABLE_CLIENT = (
    "import sys\n"
    "from pyspark.sql import SparkSession\n"
    "import sparktc\n"
    "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()\n"
    "sparktc.run_pipeline(spark, {'corpus': {'format': 'table', 'on_error': 'reject'}}, sys.argv[2],\n"
    "                     stages=['ingest'], documents=spark.read.parquet(sys.argv[3]), verbose=False)\n")


def test_a_table_corpus_through_connect_is_ingested_as_on_a_classic_session(server, spark, tmp_path) -> None:
    """The same rows, good and bad (a null id, a label repeated, a split of neither, an id met again), give the same
    documents, rejects and counts through a Connect session as through the suite's classic one.
    """
    rows = [{"id": f"d{k}", "text": f"oil {k}", "labels": ["crude"] if k % 2 else [], "split": ["train", "test"][k % 2]}
            for k in range(6)]
    rows += [{"id": None, "text": "x", "labels": [], "split": "train"},
             {"id": "b", "text": "x", "labels": ["a", "a"], "split": "test"},
             {"id": "c", "text": "x", "labels": [], "split": "dev"}, {**rows[0], "text": "again"}]
    (tmp_path / "table").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "table" / "part-0.parquet")
    client = subprocess.run([sys.executable, "-c", TABLE_CLIENT, server, str(tmp_path / "connect"),
                             str(tmp_path / "table")], cwd=REPO, capture_output=True, text=True, timeout=300,
                            env=thin_client_environment(tmp_path))
    assert client.returncode == 0, client.stderr[-3000:]
    sparktc.run_pipeline(spark, {"corpus": {"format": "table", "on_error": "reject"}}, str(tmp_path / "classic"),
                         stages=["ingest"], documents=spark.read.parquet(str(tmp_path / "table")), verbose=False)
    manifests = [json.loads((tmp_path / run / "manifests" / "ingest.json").read_text())
                 for run in ("connect", "classic")]
    assert [(m["rows_in"], m["rows_out"], m["set_aside"]) for m in manifests] == [(10, 6, {"rejected": 4})] * 2
    for name, key in (("documents", "doc_id"), ("rejects", "reason")):
        tables = [pd.read_parquet(tmp_path / run / name).sort_values(key).reset_index(drop=True)
                  for run in ("connect", "classic")]
        pd.testing.assert_frame_equal(tables[0], tables[1], obj=name)
