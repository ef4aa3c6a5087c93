"""One Spark session per test process: local mode, small partitions, the project's interpreter.

The suite runs in two pytest-xdist processes (pyproject.toml); the runs several test files read
(Reuters-21578's pipeline, the small synthetic corpus) are made once for both (:func:`made_once`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import runpy
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


# Hand-written fixtures in the LYRL2004 format, stored under short names (the official names are
# reserved for the real files, which are never committed) and copied under the official names.
LYRL2004_FIXTURES = REPO / "tests" / "fixtures" / "lyrl2004"
LYRL2004_NAMES = {
    "train.dat": "lyrl2004_tokens_train.dat",
    "test_pt0.dat.gz": "lyrl2004_tokens_test_pt0.dat.gz",
    "rcv1-v2.topics.qrels": "rcv1-v2.topics.qrels",
}


#: The test files that take longest, longest first (a standalone cluster, a Spark Connect server, pipeline runs
#: under two layouts, spark-submit runs, killed drivers, ...; about 20 s to 4 minutes each in a 2-core run of the
#: suite), started first: xdist hands whole files to the workers (--dist loadfile) in collection order
#: (:func:`pytest_configure`), and one of these started last would leave the other worker idle. The other files,
#: shorter, follow in their usual order.
SLOWEST_FIRST = ("test_cluster.py", "test_fault_matrix.py", "test_connect.py", "test_determinism.py",
                 "test_recovery.py", "test_evaluation.py", "test_classify.py", "test_submit.py", "test_stages.py",
                 "test_methods.py",
                 "test_scores_meet_thresholds.py", "test_compare_agreement.py",
                 "test_bad_input.py", "test_synthetic_category_sets.py", "test_synthetic.py", "test_vector_corpora.py",
                 "test_llsf.py", "test_nnet.py", "test_weighting_schemes.py", "test_export_libsvm.py",
                 "test_lyrl2004_category_sets.py", "test_reuters21578_pipeline.py", "test_classifier.py",
                 "test_pipeline.py", "test_naive_bayes.py", "test_closed_predictions.py")


def pytest_configure(config: pytest.Config) -> None:
    """The ``spark`` marker (``pytest -m "not spark"`` runs the rest, which need no JVM); and xdist hands out
    the files in collection order (:func:`pytest_collection_modifyitems`), not by their number of tests, most
    first, which it does by default (--loadscope-reorder): that put slow files with few tests
    (test_cluster.py, test_submit.py) near the end of the queue.
    """
    config.addinivalue_line("markers", "spark: starts Spark (the session fixture, spark-submit or a cluster)")
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses the ``spark`` fixture, directly or through another fixture, is marked ``spark`` (a
    module that starts Spark otherwise marks itself). The files that start no JVM run first, while the class archive
    is written (:func:`pytest_sessionstart`); then the slowest files, then every other file in its usual order (tests
    keep their order).
    """
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    spark_files = {item.path for item in items if item.get_closest_marker("spark")}
    rank = {name: position for position, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: (item.path in spark_files, rank.get(item.path.name, len(rank))))


# --- The class archive of the tests' JVMs. Every JVM the suite starts on this clone's pyspark (the two sessions, the
# spark-submit jobs, the Connect server, the notebook's kernel, a standalone cluster's daemons and executors) reads
# Spark's classes from the archive that sparktc's local jobs write and read (sparktc/apps/submit.py:
# build/jvm-classes-<key>.jsa) instead of parsing and verifying them again: about 7 CPU-s less per JVM (a session that
# runs a pipeline: 17.1 -> 9.5 CPU-s, 2026-12-02). In a clone without one, the suite's first process has a small job
# write it (the README's main job through ``./spark-submit.sh`` on a small corpus, :func:`main_job`, whose outputs
# tests/apps/test_submit.py then checks) while the files that start no JVM run; the first test that starts Spark in
# each process waits for that job.

#: The process id of the job writing the class archive, for the test processes (set by the first one).
ARCHIVE_WRITER = "SPARKTC_TESTS_ARCHIVE_WRITER"
#: The folder of that job (:func:`main_job`): its output, logs, event log, history, stdout, stderr and exit status.
ARCHIVE_JOB_FOLDER = "SPARKTC_TESTS_ARCHIVE_JOB"
ARCHIVE_WAIT = 300  # seconds at most that a test waits for the archive's job before it starts Spark without it


def class_archive() -> Path:
    """This clone's class archive (sparktc.apps.submit), written or not."""
    from sparktc.apps import submit

    return submit.class_archive(REPO / "build", submit.spark_home_of_pyspark())


def jvm_options(serial_gc: bool = False) -> str:
    """The options of a JVM the tests start on this clone's pyspark: :data:`JIT_OPTIONS`, the serial collector
    (``serial_gc``: :data:`CHILD_JVM_OPTIONS`), and the class archive once it is written (a JVM that cannot map it, on
    another pyspark's jars, ignores it and says nothing).
    """
    from sparktc.apps.submit import QUIET_ARCHIVE, archive_written

    options = CHILD_JVM_OPTIONS if serial_gc else JIT_OPTIONS
    archive = class_archive()
    return f"{options} -XX:SharedArchiveFile={archive} {QUIET_ARCHIVE}" if archive_written(archive) else options


_archive_job: dict[str, Any] = {}


def pytest_sessionstart(session: pytest.Session) -> None:
    """In the suite's first process (xdist's controller, which starts the test processes after this hook), when the
    clone has no class archive and Spark tests may run: the archive's job, in the background, in a folder of its own.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") or ARCHIVE_WRITER in os.environ:
        return
    if "not spark" in (session.config.option.markexpr or "") or os.environ.get("SPARKTC_CLASS_ARCHIVE") == "0":
        return
    if class_archive().exists():
        return
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="sparktc-tests-class-archive-"))
    job = main_job(folder)
    os.environ[ARCHIVE_WRITER], os.environ[ARCHIVE_JOB_FOLDER] = str(job.pid), str(folder)
    _archive_job.update(process=job, folder=folder)


def main_job(folder: Path) -> subprocess.Popen:
    """The README's main command (``<!-- example: main-job -->``) as it stands, started in the background on
    :data:`SMALL_CORPUS` with two cores, its output (``run``), Spark's log (``logs``), an uncompressed event log
    (``events``, which tests/apps/test_submit.py reads; Spark compresses with zstd by default) and its history
    record (``history``) in ``folder``, nothing of the caller's Python path in its environment; its stdout, stderr
    and exit status land in ``folder`` as ``stdout``, ``stderr`` and ``status`` (written by a thread that reaps it).
    """
    import threading

    from docs_examples import example

    words = substituted(command_words(example("main-job")), {"runs/synthetic": str(folder / "run")})
    assert words[:2] == ["./spark-submit.sh", "jobs/pipeline.py"], words
    settings = [*SMALL_CORPUS, 'spark.conf={"spark.sql.shuffle.partitions" = "2", "spark.eventLog.compress" = "false"}',
                f"spark.event_log={folder / 'events'}", f"history.path={folder / 'history'}"]
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    environment["SPARKTC_LOG_DIR"] = str(folder / "logs")
    with open(folder / "stdout", "wb") as stdout, open(folder / "stderr", "wb") as stderr:
        job = subprocess.Popen([words[0], "--master", "local[2]", *words[1:], *(f"--set={one}" for one in settings)],
                               cwd=REPO, env=environment, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                               start_new_session=True)

    def reap() -> None:  # at once: the test processes poll its pid, then read its status
        status = job.wait()
        (folder / "status.part").write_text(str(status))
        (folder / "status.part").rename(folder / "status")

    threading.Thread(target=reap, daemon=True).start()
    return job


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The archive's job stopped if it has not finished (a short run: its partial archive is thrown away), and its
    folder removed.
    """
    job = _archive_job.pop("process", None)
    if job is None:
        return
    if job.poll() is None:
        os.killpg(job.pid, 9)
        job.wait()
        # what its JVM had written of the archive (named after the job's process, which spark-submit.sh replaces by
        # sparktc's Python): the job cannot remove it now
        from sparktc.apps.submit import partial_archive

        partial_archive(class_archive(), job.pid).unlink(missing_ok=True)
    shutil.rmtree(_archive_job.pop("folder"), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


_archive_waited: list[bool] = []


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the first test of this process that starts Spark: wait (at most :data:`ARCHIVE_WAIT` seconds) for the
    class archive's job, if one is running.
    """
    if _archive_waited or not item.get_closest_marker("spark"):
        return
    _archive_waited.append(True)
    writer = os.environ.get(ARCHIVE_WRITER)
    deadline = time.monotonic() + ARCHIVE_WAIT
    while writer and _alive(int(writer)) and time.monotonic() < deadline:
        time.sleep(0.5)


def selected(request: pytest.FixtureRequest, test: str) -> bool:
    """Whether the test function ``test`` of the requesting fixture's module runs in this session (not
    deselected, by -k for one): for module fixtures that start a subprocess early, only for a test that
    will wait for it.
    """
    return any(item.module is request.module and getattr(item, "originalname", item.name) == test
               for item in request.session.items)


def lyrl2004_fixture(name: str) -> Path:
    """The fixture file stored for the official LYRL2004 file ``name``."""
    stored = {official: short for short, official in LYRL2004_NAMES.items()}
    return LYRL2004_FIXTURES / stored[name]


def lyrl2004_corpus(directory: Path) -> Path:
    """Write the fixture corpus into ``directory`` under the official file names and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for short, official in LYRL2004_NAMES.items():
        shutil.copy(LYRL2004_FIXTURES / short, directory / official)
    return directory


def term_id_form(tokens: Mapping[str, Sequence[str]], training: Iterable[str]
                 ) -> tuple[list[str], dict[str, tuple[list[int], list[int], int]]]:
    """Documents' tokens in integer form (ingest's ``term_ids``, ``term_counts``, ``tokens_outside``), computed here
    from the tokens: the training terms (the tokens of the documents ``training`` names), sorted, and per document
    the positions among them of its tokens that are training terms, ascending, their counts, and how many of its
    tokens are not.
    """
    terms = sorted({token for doc_id in training for token in tokens[doc_id]})
    position = {term: i for i, term in enumerate(terms)}
    form = {}
    for doc_id, words in tokens.items():
        counted = Counter(words)
        pairs = sorted((position[token], n) for token, n in counted.items() if token in position)
        form[doc_id] = ([i for i, _ in pairs], [n for _, n in pairs],
                        sum(n for token, n in counted.items() if token not in position))
    return terms, form


def ingested_term_ids(spark, output: str) -> tuple[list[str], dict[str, tuple[list[int], list[int], int]]]:
    """What ingest wrote in ``output`` of documents in integer form, as :func:`term_id_form` gives it."""
    terms = [row.term for row in spark.read.parquet(f"{output}/terms").orderBy("term_id").collect()]
    documents = spark.read.parquet(f"{output}/documents").select("doc_id", "term_ids", "term_counts", "tokens_outside")
    return terms, {row.doc_id: (list(row.term_ids), list(row.term_counts), row.tokens_outside)
                   for row in documents.collect()}


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; missing data fails the test (in CI a missing ../shared is a failure)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"shared data not found: {path} (clone the project beside ../shared)")
    return path


def made_once(tmp_path_factory, name: str, make: Callable[[Path], Any]) -> Any:
    """``make(directory)``'s result (JSON), made by the first test process that asks for it: the
    xdist workers share their base directory's parent, so the others wait on a lock and read it.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    result = root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if make() fails
        if not result.exists():
            result.write_text(json.dumps(make(root / name)))
        return json.loads(result.read_text())


#: The JIT of the tests' JVMs: the first tier only, and the code cache the JVM reserves when both tiers run.
#: - They run many small jobs, not long ones: the optimizing tier's compilations cost them about a quarter (this
#:   process's session) to a half (a standalone cluster's JVMs) of their CPU time.
#: - With the first tier only, the JVM reserves a 48 MB code cache, which a session running hundreds of queries
#:   fills: it then sweeps the cache and compiles the same methods again. 240 MB took the session's JVM of six
#:   Spark test files (345 tests) from 126-135 to 98-104 CPU-s, the sweeper from 13 CPU-s to none, and the
#:   files' whole process tree from 261-275 to 232-240 CPU-s.
JIT_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
#: The options of the JVMs the tests start themselves (spark-submit drivers; a standalone cluster's master,
#: workers and executors): the JIT's, and the serial collector (heaps of 1-2 GB, small jobs), which took another
#: 8% off the CPU time of tests/apps/test_cluster.py's cluster.
CHILD_JVM_OPTIONS = f"{JIT_OPTIONS} -XX:+UseSerialGC"
#: The plan each SQL execution's start event describes, for Spark's UI and event log (no test reads it): the plain
#: tree, not the "formatted" default, which Spark writes for every query and every adaptive re-plan. It took six
#: Spark test files (345 tests) from 222.7-230.8 to 217.0-217.2 CPU-s.
EXPLAIN_MODE = ("spark.sql.ui.explainMode", "simple")
#: PySpark's DataFrame call sites off, as conf/spark-defaults.conf has them for the jobs (its comment says why).
DATAFRAME_DEBUGGING = ("spark.python.sql.dataFrameDebugging.enabled", "false")


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from sparktc.runtime.session import build_session

    session = build_session(
        app_name="sparktc-tests",
        master="local[2,4]",  # up to 4 attempts per task, as on a cluster
        conf={
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.extraJavaOptions": jvm_options(),
            EXPLAIN_MODE[0]: EXPLAIN_MODE[1],
            DATAFRAME_DEBUGGING[0]: DATAFRAME_DEBUGGING[1],
        },
        log_level="ERROR",
    )
    yield session
    session.stop()


def command_words(code: str) -> list[str]:
    """The words of a shell block's code (``docs_examples.example("NAME")``), its lines joined at their trailing
    backslashes and split as the shell splits them.
    """
    return shlex.split(code.replace("\\\n", " "), comments=True)


def job_arguments(code: str) -> tuple[str, list[str]]:
    """The job and its arguments of a block ``./spark-submit.sh JOB ARGUMENTS`` (its code), with the repository's files
    it names (conf/..., examples/...) made absolute, so that they run from any directory.
    """
    words = command_words(code)
    assert words[0] == "./spark-submit.sh" and words[1].endswith(".py"), words
    return words[1], [str(REPO / word) if word.startswith(("conf/", "examples/")) else word for word in words[2:]]


def substituted(words: Sequence[str], paths: Mapping[str, str]) -> list[str]:
    """``words`` with each path of ``paths`` replaced, as a word of its own or as the value of ``--set key=PATH``:
    a block's data and outputs, moved to the test's.
    """
    def replaced(word: str) -> str:
        key, equals, value = word.rpartition("=")
        return paths[word] if word in paths else f"{key}={paths[value]}" if equals and value in paths else word

    return [replaced(word) for word in words]


def reuters21578_arguments(output: str | Path, corpus: str | Path | None = None) -> list[str]:
    """The arguments of the R(90) command in the README (``<!-- example: reuters21578 -->``) for jobs/pipeline.py,
    the corpus taken from ../shared/data wherever the tests run (or ``corpus``: :func:`reuters21578_subset`) and the
    output ``output``.
    """
    from docs_examples import example

    job, arguments = job_arguments(example("reuters21578"))
    assert job == "jobs/pipeline.py"
    return substituted(arguments, {"../shared/data/reuters21578": str(corpus or shared_data("reuters21578")),
                                   "runs/reuters21578": str(output)})


def reuters21578_overrides(corpus: str | Path | None = None) -> list[str]:
    """The settings of the README's R(90) command (its ``--set`` values), which point conf/reuters21578.toml at the
    real corpus in ../shared/data (or at ``corpus``).
    """
    arguments = reuters21578_arguments("runs/reuters21578", corpus)
    return [value for option, value in zip(arguments, arguments[1:]) if option == "--set"]


@pytest.fixture(scope="session")
def reuters21578_run(spark, tmp_path_factory) -> tuple[str, dict]:
    """The README's R(90) command (Reuters-21578 R(90) ApteMod, :func:`reuters21578_arguments`) as the job parses
    it, run in local mode in this session once for the suite: (output directory, each stage's manifest by stage
    name). tests/stages/test_reuters21578_pipeline.py checks it against the published figures.
    """
    from sparktc.apps.cli import parse_arguments
    from sparktc.apps.pipeline import run as run_pipeline

    def make(output: Path) -> list:
        config, held, force = parse_arguments("the README's R(90) command", reuters21578_arguments(output))
        return [held, {m["stage"]: m for m in run_pipeline(spark, config, held, force=force)}]

    output, reports = made_once(tmp_path_factory, "reuters21578", make)
    return output, reports


#: Three of Reuters-21578's 22 files, 3,000 of its documents: reut2-011 training documents, reut2-014 the last
#: ModApte training documents and the first test ones, reut2-015 test documents only. The deployment tests (a
#: standalone cluster, Spark Connect) run the README's R(90) command on them, as it stands but for corpus.path,
#: against the same command in local mode (:func:`reuters21578_subset_run`); the whole corpus runs once, in local
#: mode (:func:`reuters21578_run`).
REUTERS21578_SUBSET = ("reut2-011.sgm.gz", "reut2-014.sgm.gz", "reut2-015.sgm.gz")


@pytest.fixture(scope="session")
def reuters21578_subset(tmp_path_factory) -> Path:
    """A directory holding the files of :data:`REUTERS21578_SUBSET` (links to ../shared/data's), made once."""
    def make(directory: Path) -> str:
        directory.mkdir()
        for name in REUTERS21578_SUBSET:
            (directory / name).symlink_to(shared_data("reuters21578", name))
        return str(directory)

    return Path(made_once(tmp_path_factory, "reuters21578_subset", make))


@pytest.fixture(scope="session")
def reuters21578_subset_run(spark, reuters21578_subset: Path, tmp_path_factory) -> tuple[str, dict]:
    """The README's R(90) command on :func:`reuters21578_subset` (``reuters21578_arguments(output, subset)``), as the
    job parses it, run in local mode in this session once for the suite: (output directory, each stage's manifest by
    stage name). The standalone cluster's run (tests/apps/test_cluster.py) and Spark Connect's
    (tests/apps/test_connect.py) must equal it.
    """
    from sparktc.apps.cli import parse_arguments
    from sparktc.apps.pipeline import run as run_pipeline

    def make(output: Path) -> list:
        config, held, force = parse_arguments("the README's R(90) command on a subset",
                                              reuters21578_arguments(output, reuters21578_subset))
        return [held, {m["stage"]: m for m in run_pipeline(spark, config, held, force=force)}]

    output, reports = made_once(tmp_path_factory, "reuters21578_subset_run", make)
    return output, reports


def prepared_job(job: str, arguments: Sequence[str], monkeypatch: pytest.MonkeyPatch):
    """What ``jobs/JOB.py ARGUMENTS`` would run (a :class:`sparktc.apps.cli.Job`): the job run as a script, its own
    argument parsing and checks made as before its Spark session would start, without starting it (the suite's
    session runs the work: :func:`run_prepared`).
    """
    from sparktc.apps import cli

    prepared = []
    monkeypatch.setattr(cli, "run_job", lambda prepare: prepared.append(prepare()) or 0)
    monkeypatch.setattr(sys, "argv", [str(REPO / job), *arguments])
    with pytest.raises(SystemExit) as ended:
        runpy.run_path(str(REPO / job), run_name="__main__")
    assert ended.value.code == 0 and len(prepared) == 1
    return prepared[0]


def run_prepared(spark, job) -> None:
    """A job :func:`prepared_job` gave, run as :func:`sparktc.apps.cli.run_job` runs it, on ``spark``."""
    from sparktc.runtime.outputs import claim

    with claim(job.output, job.kind, reads=job.reads) as held:
        job.work(spark, held)


@dataclass(frozen=True)
class PackedEnv:
    """The packed environment of docs/clusters.md (``scripts/pack-env.sh``, as ``make pack`` builds it)."""

    archive: Path  # what --archives ships: the environment without pyspark's jars
    env: Path  # the environment it packs, whole: sparktc installed from its wheel, the pinned dependencies
    wheel: Path  # that wheel
    seconds: float  # to build them

    @property
    def python(self) -> Path:
        return self.env / "bin" / "python"


@pytest.fixture(scope="session")
def packed_env(tmp_path_factory) -> PackedEnv:
    """The packed environment, built once for the suite, by whichever test process asks first (about 40 CPU-s,
    most of it pip installing the pinned dependencies): tests/apps/test_package.py runs the installed ``sparktc``
    command from the environment and reads the wheel, tests/apps/test_cluster.py runs a standalone cluster's
    driver from the environment and its executors from the archive.
    """
    def make(directory: Path) -> list:
        directory.mkdir(exist_ok=True)
        archive, env, wheels = directory / "env.tar.gz", directory / "env", directory / "wheel"
        began = time.monotonic()
        # gzip level 0: the same files as make pack's level 1, in 6 fewer CPU-s, and unpacked faster by the executors.
        build = subprocess.run([str(REPO / "scripts" / "pack-env.sh"), "--keep-env", str(env), "--keep-wheel",
                                str(wheels), "--compress-level", "0", str(archive)],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
        assert build.returncode == 0, build.stderr[-4000:]
        [wheel] = wheels.glob("sparktc-*.whl")
        return [str(archive), str(env), str(wheel), time.monotonic() - began]

    archive, env, wheel, seconds = made_once(tmp_path_factory, "packed_env", make)
    return PackedEnv(Path(archive), Path(env), Path(wheel), seconds)


def conf_run(spark, tmp_path_factory, conf: str, write_corpus: Callable[[Path], Any],
             name: str) -> tuple[Path, Path, dict[str, dict]]:
    """A corpus written by ``write_corpus`` run through the pipeline with conf/``conf`` (the module fixtures of a
    format's end-to-end tests): the corpus, the output and the stages' manifests by stage.
    """
    from sparktc.apps.pipeline import run as run_stages
    from sparktc.experiment.config import load_config

    corpus = tmp_path_factory.mktemp(f"{name}_corpus")
    write_corpus(corpus)
    output = tmp_path_factory.mktemp(f"{name}_run") / "run"
    config = load_config(str(REPO / "conf" / conf), [f"corpus.path={corpus}"])
    return corpus, output, {m["stage"]: m for m in run_stages(spark, config, str(output))}


def run_table(output: str | Path, name: str, key: str):
    """A run's table ``name`` read with pyarrow (no Spark job), sorted by ``key``; ``models`` without ``seconds``
    (wall time, the one column that may differ between two runs).
    """
    import pyarrow.parquet as pq

    table = pq.read_table(Path(output, name))
    return (table.drop_columns(["seconds"]) if name == "models" else table).sort_by(key)


def assert_same_tables(output: str | Path, reference: str | Path) -> None:
    """The models, predictions and contingency tables of run ``output`` are ``reference``'s, column for column and
    row for row.
    """
    for name, key in (("models", "category"), ("predictions", "doc_id"), ("contingency", "category")):
        written, expected = run_table(output, name, key), run_table(reference, name, key)
        assert written.schema == expected.schema, name
        assert written.to_pylist() == expected.to_pylist(), name


def invented_words(rng, count: int) -> list[str]:
    """``count`` distinct made-up words (consonant-vowel syllables), sorted, for seeded test corpora."""
    letters, vowels = list("bcdfghjklmnpqrstvwxz"), list("aeiou")
    words: set[str] = set()
    while len(words) < count:
        syllables = rng.integers(2, 4)
        words.add("".join(rng.choice(letters) + rng.choice(vowels) for _ in range(syllables)) + rng.choice(letters))
    return sorted(words)


def chi2_order(run: str | Path) -> np.ndarray:
    """The term ids of a run's ``term_ranks`` from the best chi2_max down (the default [rank]), ties by term id."""
    import pandas as pd

    from sparktc.features.term_selection import rank_order

    ranks = pd.read_parquet(Path(run) / "term_ranks")
    return rank_order(ranks["term_id"].to_numpy(), ranks["chi2_max"].to_numpy())


def f1_of(scores, y, threshold) -> float:
    """Reference F1 of "score > threshold" (one threshold, or one per document); 0 when 2TP + FP + FN = 0."""
    import numpy as np

    assigned = scores > threshold
    tp = np.count_nonzero(assigned & y)
    denominator = np.count_nonzero(assigned) + np.count_nonzero(y)
    return 2 * tp / denominator if denominator else 0.0


def brute_force_scut(scores, y) -> tuple[float, float]:
    """O(n^2) reference SCut: every candidate threshold (top score, midpoints, below the lowest) rated
    by its decisions; ties in F1 go to the smallest |t|, then the larger t (sparktc.models.thresholds.scut's rule).
    """
    import numpy as np

    distinct = np.unique(scores)[::-1]
    thresholds = [distinct[0], *((a + b) / 2 for a, b in zip(distinct[:-1], distinct[1:])),
                  np.nextafter(distinct[-1], -np.inf)]
    f1, _, t = max((f1_of(scores, y, t), -abs(t), t) for t in thresholds)
    return float(t), f1


#: The small corpus of the recovery and determinism tests: synthetic, in the LYRL2004 format.
SMALL_CORPUS = ["synthesize.documents=1200", "synthesize.train_documents=400", "synthesize.vocabulary_size=1000",
                "synthesize.chunk_documents=300", "synthesize.seed=7"]


@pytest.fixture(scope="session")
def small_corpus(spark, tmp_path_factory) -> Path:
    """A 1,200-document LYRL2004-format corpus (400 training documents) written by the synthesize stage."""
    from sparktc.apps.pipeline import OWNERS
    from sparktc.experiment.config import load_config
    from sparktc.runtime.outputs import claim
    from sparktc.runtime.runner import run_stages
    from sparktc.stages.synthesize import synthesize_stage

    def make(directory: Path) -> str:
        with claim(str(directory / "corpus")) as held:
            run_stages(spark, [(synthesize_stage(), load_config(None, ["corpus.format=synthetic", *SMALL_CORPUS]))],
                       held, OWNERS)
        return str(directory / "corpus")

    return Path(made_once(tmp_path_factory, "small", make))


def reseal_bundle(bundle: Path, description: dict) -> None:
    """Write ``bundle``/bundle.json as ``description`` with the digest of itself a training run records (SHA-256 of
    its other keys as canonical JSON, computed here with hashlib), behind Hadoop's back (its ``.crc`` removed, as an
    editor leaves it): bundle.json edited on purpose, by someone who knows the bundle format.
    """
    body = {key: value for key, value in description.items() if key != "digest"}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()
    (bundle / ".bundle.json.crc").unlink(missing_ok=True)
    (bundle / "bundle.json").write_text(json.dumps({**body, "digest": digest}, indent=2))


def flip_bytes(file: Path, count: int = 40) -> None:
    """Invert ``count`` bytes in the middle of ``file``, written in place: its size stays the same."""
    with file.open("r+b") as handle:
        handle.seek(file.stat().st_size // 2)
        middle = handle.read(count)
        handle.seek(-len(middle), os.SEEK_CUR)
        handle.write(bytes(b ^ 0xFF for b in middle))


def run_in_kernel(notebook: Any, folder: Path, environment: dict[str, str]) -> Any:
    """``notebook`` (nbformat's) executed headless (nbclient) in a kernel of this Python with ``environment``, its
    working directory ``folder/work`` (made, empty), its kernel spec under ``folder/kernels``: the notebook with its
    outputs (and the widgets' state in its metadata).
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    (folder / "work").mkdir()
    kernels = folder / "kernels" / "sparktc"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "sparktc's Python", "language": "python"}))
    manager = AsyncKernelManager(kernel_name="sparktc",
                                 kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels.parent)]))
    NotebookClient(notebook, km=manager, timeout=600, resources={"metadata": {"path": str(folder / "work")}}
                   ).execute(env=environment)
    return notebook


def execute_notebook(folder: Path, environment: dict[str, str], after: str = "") -> Any:
    """``examples/notebook.ipynb`` executed headless (:func:`run_in_kernel`) with ``environment``, in
    ``folder/work``, a directory of nothing (the notebook runs from any), its temporary directory ``folder/tmp``
    (``TMPDIR``: the notebook writes its run there), then ``after``, when given, as a last code cell in the same
    kernel: the notebook with its outputs, also written to ``folder/executed.ipynb`` (to look at when a test fails).
    """
    import nbformat

    (folder / "tmp").mkdir()
    notebook = nbformat.read(REPO / "examples" / "notebook.ipynb", as_version=4)
    if after:
        notebook.cells.append(nbformat.v4.new_code_cell(after))
    run_in_kernel(notebook, folder, environment | {"TMPDIR": str(folder / "tmp")})
    nbformat.write(notebook, folder / "executed.ipynb")
    return notebook


def cell_outputs(notebook: Any, start: str) -> list[dict]:
    """The outputs of the code cell whose source starts with ``start``."""
    [cell] = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.startswith(start)]
    return cell.outputs


# --- The example notebook and docs/notebooks.md's notebook block, run once in one kernel: tests/apps/test_api.py
# checks both, tests/apps/test_connect.py compares the main job run through Spark Connect with the notebook's run.

def kernel_submit_args() -> str:
    """The kernel's ``PYSPARK_SUBMIT_ARGS``, split as a shell would: settings a kernel could start with, none of them
    PYSPARK_PYTHON; two cores and few shuffle partitions, as the suite's session, to keep the run short.
    """
    return ("--master local[2] --conf spark.sql.shuffle.partitions=4 --conf spark.ui.enabled=false "
            "--conf {}={} ".format(*EXPLAIN_MODE) +
            f"--conf 'spark.driver.extraJavaOptions={jvm_options()}' pyspark-shell")


#: Run after the page's block, in its kernel: what the tests read of it (the block's names; its predictions written
#: to an absolute path: the kernel's JVM resolves relative ones against its own working directory, not the cell's).
NOTEBOOK_BLOCK_EPILOGUE = """
import json as _json
predictions.write.parquet(os.path.abspath("predictions"))
_json.dump({"output": result.output, "exit_status": result.record.exit_status, "run_id": result.record.run_id,
            "stages": [s["stage"] for s in result.record.stages], "metrics": result.metrics,
            "recorded_micro_f1": result.record.metrics["micro_f1"],
            "C": result.record.config["train"]["liblinear"]["C"],
            "texts": [row.doc_id for row in texts.collect()], "repr": repr(result), "html": result._repr_html_(),
            "per_category": result.per_category().to_dict("records"), "figures": result.figures,
            "model_repr": repr(model), "model_html": model._repr_html_()}, open("facts.json", "w"))
"""


def kernel_environment() -> dict[str, str]:
    """This process's environment as a plain Jupyter kernel started from the project's venv has it: without
    PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON (this checkout's sparktc on the path).
    """
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS")}
    return environment | {"PYTHONPATH": str(REPO), "PYSPARK_SUBMIT_ARGS": kernel_submit_args()}


@pytest.fixture(scope="session")
def notebook_kernel_run(tmp_path_factory) -> dict[str, Any]:
    """``examples/notebook.ipynb`` executed headless (:func:`execute_notebook`) in a kernel whose environment has no
    PYSPARK_PYTHON (:func:`kernel_environment`), then docs/notebooks.md's ``notebook`` block as it stands, in a last
    cell of the same kernel, from a folder of its own (``block``): one kernel and one JVM for both, the block's
    session the notebook's. Made once for the suite: ``notebook`` (the executed notebook, as JSON), ``run`` (the
    notebook's run, in its temporary directory), ``block`` (the block's folder), ``stdout`` (what the block printed) and
    ``facts`` (what :data:`NOTEBOOK_BLOCK_EPILOGUE` read of the block's run).
    """
    import nbformat
    from docs_examples import example

    def make(directory: Path) -> dict[str, Any]:
        block, layout = directory / "block", directory / "layout"
        block.mkdir(parents=True)
        layout.mkdir()
        code = f"import os\nos.chdir({str(block)!r})\n{example('notebook')}{NOTEBOOK_BLOCK_EPILOGUE}"
        notebook = execute_notebook(layout, kernel_environment(), after=code)
        stdout = "".join(output.text for output in notebook.cells[-1].outputs
                         if output.output_type == "stream" and output.name == "stdout")
        return {"notebook": nbformat.writes(notebook), "run": str(layout / "tmp" / "sparktc-notebook"),
                "block": str(block), "stdout": stdout, "facts": json.loads((block / "facts.json").read_text())}

    return made_once(tmp_path_factory, "notebook_kernel_run", make)
