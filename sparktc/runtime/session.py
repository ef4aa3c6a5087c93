"""Spark session construction shared by jobs and tests, what sparktc asks of a session of either kind (classic or
Spark Connect: its cores, master, settings), and the check of the interpreter a session's workers run.

A classic session answers through :mod:`sparktc.runtime.classic`; a Spark Connect one through ``spark.conf`` and, for
its cores, one tiny job.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import warnings
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sparktc.errors import ConfigError, SparktcError
from sparktc.runtime import classic, faults
from sparktc.runtime.parts import COMPRESSION

PARQUET_CODEC = "spark.sql.parquet.compression.codec"
#: Set (to 1) by the command that starts a driver Python first (sparktc/apps/submit.py, which names it too, as it
#: imports no pyspark): the session's JVM is ended and waited for as the driver exits.
JVM_WAIT = "SPARKTC_JVM_WAIT"
#: What sparktc's tasks import in the Python workers: Arrow batches and pandas (PySpark's Arrow path), the maths,
#: LIBLINEAR, scikit-learn's models and the Snowball stemmers (PyStemmer).
WORKER_MODULES = ("numpy", "scipy", "pyarrow", "pandas", "liblinear", "sklearn", "Stemmer")
#: Run by the workers' interpreter: its version, and the modules it cannot find (found, not imported: milliseconds).
_PROBE = ("import importlib.util, json, sys; print(json.dumps([list(sys.version_info[:2]), "
          "[m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]]))")
#: The interpreters found able to run sparktc's tasks in this process (a failure is asked again: it may be fixed).
_ABLE: set[str] = set()


class WorkerPythonError(SparktcError):
    """The interpreter the Spark workers start cannot run sparktc's tasks."""


#: How long a Spark Connect server has to answer before a run's first job (a job's, or the Python API's), and how
#: long pyspark retries, during a run, a server that stopped answering: its default policy retries for about 10
#: minutes (15 retries backing off to 60 s), these for at most ~21 s (7 retries backing off to 5 s, with jitter).
CONNECT_ANSWER_SECONDS = 15
CONNECT_RETRY = {"max_retries": 7, "max_backoff": 5000}


class ConnectServerError(ConfigError):
    """The Spark Connect server of the session does not answer before any work: refused like a tracking store that
    does not answer (a configuration error, exit 2).
    """


class ConnectLostError(SparktcError, RuntimeError):
    """The Spark Connect server stopped answering during a run (exit 1: a runtime failure; the run resumes)."""


def server_address(spark: Any) -> str:
    """A Connect session's server, ``sc://HOST:PORT`` (its token and other parameters left out)."""
    client = spark.client
    # pyspark's own channel builder knows the port; another (Databricks') may give only the host.
    return f"sc://{getattr(client._builder, 'endpoint', client.host)}"


def server_lost(error: BaseException) -> bool:
    """Whether ``error`` is a Spark Connect client's that the server is unreachable (gRPC UNAVAILABLE: refused,
    reset, or silent past gRPC's keepalive), after pyspark's retries.
    """
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    return isinstance(error, SparkConnectGrpcException) and error.getGrpcStatusCode().name == "UNAVAILABLE"


def _retry_policies(spark: Any, policies: list[Any]) -> list[Any]:
    """Give the Connect session's client ``policies``; the ones it had."""
    client = spark.client
    before = client.get_retry_policies()
    client.set_retry_policies(policies)
    return before


def check_server(spark: Any) -> None:
    """Refuse (:class:`ConnectServerError`), within :data:`CONNECT_ANSWER_SECONDS`, a Connect session whose server
    does not answer (nothing listening, a wrong address, a host that drops packets), before its first job: pyspark
    would retry the first job's calls for 10 minutes, silently. The probe asks the server's version, in a daemon
    thread, so that a call gRPC keeps waiting on cannot hold the caller or the process. Nothing on a classic session.
    """
    if classic.is_classic(spark):
        return
    from pyspark.sql.connect.client.retries import DefaultPolicy

    answer: list[BaseException | None] = []

    def probe() -> None:
        try:
            spark.version  # noqa: B018 (one AnalyzePlan call: no job)
            answer.append(None)
        except Exception as error:
            answer.append(error)

    _quiet_retries()
    # Retries over ~4 s (50 ms backing off 4 times to 2 s): a server still starting gets its chance.
    before = _retry_policies(spark, [DefaultPolicy(max_retries=4, max_backoff=2000)])
    thread = threading.Thread(target=probe, name="sparktc-connect-probe", daemon=True)
    thread.start()
    thread.join(CONNECT_ANSWER_SECONDS)
    if answer and answer[0] is None:
        _retry_policies(spark, before)
        return
    # No retries left to the session: its calls at exit (pyspark's clean-up) would wait for it 10 minutes.
    _retry_policies(spark, [])
    why = f"no answer within {CONNECT_ANSWER_SECONDS} s" if not answer else _reason(answer[0])
    raise ConnectServerError(f"the Spark Connect server at {server_address(spark)} does not answer ({why}); "
                             "start it or check the address (SparkSession.builder.remote, spark-submit --remote, "
                             "SPARK_REMOTE)")


def _quiet_retries() -> None:
    """Leave out pyspark's ``[RETRIES_EXCEEDED]`` warning: sparktc says in its own line what the retries were for."""
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]", category=UserWarning)


def _reason(error: BaseException) -> str:
    """What a Connect call's failure says, in a line: the details of the gRPC error pyspark's message quotes
    (``failed to connect to all addresses; ... Connection refused``), else its first line.
    """
    text = str(error)
    quoted = re.search(r'details = "([^"]+)"', text)
    line = quoted[1] if quoted else next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line[:300] or type(error).__name__


@contextmanager
def bounded_retries(spark: Any, kept: Any) -> Iterator[None]:
    """A run's block on a Connect session: pyspark's retries of a server that stops answering bounded by
    :data:`CONNECT_RETRY` (~21 s), the session's own policies back afterwards; a server lost (:func:`server_lost`)
    ends the block in :class:`ConnectLostError`, whose message ends with ``kept()`` (what the run keeps, what to
    do), and leaves the session no retries, so that nothing more (stopping the session, pyspark's release threads
    at exit) waits for a server that is gone. Nothing on a classic session.
    """
    if classic.is_classic(spark):
        yield
        return
    from pyspark.sql.connect.client.retries import DefaultPolicy

    _quiet_retries()
    before = _retry_policies(spark, [DefaultPolicy(**CONNECT_RETRY)])
    try:
        yield
    except Exception as error:
        if not server_lost(error):
            raise
        before = []
        raise ConnectLostError(f"the Spark Connect server at {server_address(spark)} stopped answering "
                               f"({_reason(error)}); {kept()}") from error
    finally:
        _retry_policies(spark, before)


def build_session(
    app_name: str,
    conf: Mapping[str, str],
    log_level: str = "WARN",
    master: str | None = None,
) -> SparkSession:
    """Get or create the session; ``master`` is left to spark-submit unless given (tests). Spark writes Parquet
    with the codec of the tables the tasks write (:data:`sparktc.runtime.parts.COMPRESSION`) unless told otherwise.
    """
    builder = SparkSession.builder.appName(app_name)
    remote = submitted_remote()
    if remote is not None:  # spark-submit --remote: a Spark Connect client of that server
        builder = builder.remote(remote)
        # Checked before the session's settings reach the server: each is a call pyspark retries for 10 minutes.
        check_server(SparkSession.builder.remote(remote).getOrCreate())
    elif master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if PARQUET_CODEC not in conf and PARQUET_CODEC not in settings(session):
        session.conf.set(PARQUET_CODEC, COMPRESSION)  # the tables Spark writes, like those the tasks write
    if classic.is_classic(session):  # a Connect client cannot set the server's log level
        classic.set_log_level(session, log_level)
        if os.environ.get(JVM_WAIT) == "1":
            classic.wait_for_jvm_at_exit(session)
    return session


def submitted_remote() -> str | None:
    """The Spark Connect server this process was submitted to (``spark-submit --remote sc://...``, which hands its
    settings to the Python driver in ``PYSPARK_REMOTE_INIT_CONF_*``; or ``SPARK_REMOTE``), else None.
    """
    settings: dict[str, str] = {}
    for index in range(int(os.environ.get("PYSPARK_REMOTE_INIT_CONF_LEN", "0"))):
        settings |= json.loads(os.environ[f"PYSPARK_REMOTE_INIT_CONF_{index}"])
    return settings.get("spark.remote") or os.environ.get("SPARK_REMOTE")


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect client session (``SparkSession.builder.remote(...)``)."""
    return not classic.is_classic(spark)


def master(spark: SparkSession) -> str:
    """The session's master URL (``local[2]``, ``spark://...``, ``yarn``...)."""
    return classic.master(spark) if classic.is_classic(spark) else spark.conf.get("spark.master", "unknown")


def application_id(spark: SparkSession) -> str:
    """The Spark application's id (on Connect: the server's application)."""
    return classic.application_id(spark) if classic.is_classic(spark) else spark.conf.get("spark.app.id", "unknown")


def settings(spark: SparkSession) -> dict[str, str]:
    """The Spark settings in force: a classic application's start-up settings, and on either kind the session's."""
    found = classic.settings(spark) if classic.is_classic(spark) else {}
    return {**found, **spark.conf.getAll}


def check_settings(spark: SparkSession) -> None:
    """Refuse (ConfigError, before a job's first Spark work) a setting of the session that no run can work under
    (:func:`sparktc.runtime.faults.check`): spark-submit's ``--conf`` and ``spark.conf.set`` reach the session, not
    the configuration's check.
    """
    faults.check(settings(spark))


_CORES: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


#: Tasks per core of every corpus-sized job (ingest's byte ranges, and so weight's and evaluate's files; train's
#: category tasks): a second wave evens out tasks of unequal cost, where one task per core leaves cores idle behind
#: the slowest (docs/design.md, "How a plan follows the cores").
TASKS_PER_CORE = 2


def cores(spark: SparkSession) -> int:
    """Spark's default parallelism: the cores the executors offer. A Connect session has no SparkContext to ask: its
    ``spark.default.parallelism`` when set, else the partitions Spark gives a range (its leaf-node parallelism, the
    same default), counted by one tiny job and kept for the session.
    """
    if classic.is_classic(spark):
        return classic.default_parallelism(spark)
    if spark not in _CORES:
        given = spark.conf.get("spark.default.parallelism", None)
        _CORES[spark] = int(given) if given else int(
            spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).agg(F.max("p")).first()[0]) + 1
    return _CORES[spark]


def executors(spark: SparkSession) -> int:
    """Executors of the application (the driver itself in local mode); on Connect, ``spark.executor.instances`` when
    set, else 1 for a local master, else 0 (not known to a client).
    """
    if classic.is_classic(spark):
        return classic.executors(spark)
    given = spark.conf.get("spark.executor.instances", None)
    return int(given) if given else int(master(spark).startswith("local"))


@contextmanager
def labelled_jobs(spark: SparkSession, name: str, description: str) -> Iterator[None]:
    """The Spark jobs started inside labelled as stage ``name``'s: on a classic session its job group, described as
    ``description`` in the UI and the event log; on a Connect session the operation tag ``sparktc-<name>`` (Connect
    has no job groups), which the server's UI shows and ``spark.interruptTag`` stops.
    """
    if classic.is_classic(spark):
        with classic.labelled_jobs(spark, name, description):
            yield
        return
    tag = classic.job_group(name)
    spark.addTag(tag)
    try:
        yield
    finally:
        spark.removeTag(tag)


def local_workers_python(spark: SparkSession) -> str | None:
    """The interpreter the Python workers of a local-mode ``spark`` start: the driver's ``PYSPARK_PYTHON`` when the
    session started, else ``python3`` on the PATH (PySpark reads no other setting: ``spark.pyspark.python`` is
    spark-submit's). None on a cluster, whose workers run on other machines, and on Spark Connect (no SparkContext
    here: the server's workers are configured server-side).
    """
    return classic.workers_python(spark)


def python_problem(executable: str) -> str | None:
    """What keeps the interpreter ``executable`` from running sparktc's tasks for this driver (not found, another
    Python version, a module of :data:`WORKER_MODULES` missing), or None. Run in a subprocess with this process's
    environment, as local-mode workers inherit it.
    """
    try:
        done = subprocess.run([executable, "-c", _PROBE, *WORKER_MODULES], capture_output=True, text=True,
                              timeout=120, check=False)
    except OSError as error:  # not found, not executable
        return f"cannot be started ({error.strerror or error})"
    except subprocess.TimeoutExpired:
        return "did not answer within 2 minutes"
    try:
        version, missing = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError, TypeError):
        stderr = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "no output")
        return f"failed to run a Python probe ({stderr.strip()})"
    driver = list(sys.version_info[:2])
    if version != driver:
        return f"is Python {'.'.join(map(str, version))}, the driver Python {'.'.join(map(str, driver))}"
    if missing:
        return f"lacks {', '.join(missing)}"
    return None


def check_workers_python(spark: SparkSession) -> None:
    """Refuse, before the first Spark job, a local session whose workers would start an interpreter that cannot run
    sparktc's tasks (a notebook kernel without ``PYSPARK_PYTHON`` starts the system's ``python3``, and the first job
    fails in a hundred lines of Java); each interpreter is probed once per process.
    """
    executable = local_workers_python(spark)
    if executable is None or executable in _ABLE:
        return
    problem = python_problem(executable)
    if problem is not None:
        raise WorkerPythonError(
            f"the Spark workers' Python, {executable} (PYSPARK_PYTHON, else python3, when the session started), "
            f"{problem}: set PYSPARK_PYTHON={sys.executable}, this interpreter, before the session starts (in a "
            "notebook: os.environ[\"PYSPARK_PYTHON\"] = sys.executable before SparkSession.builder...getOrCreate(), "
            "or restart the kernel with it set)")
    _ABLE.add(executable)
