"""The ``sparktc`` command (also ``python -m sparktc``) and ``./spark-submit.sh`` of a clone: a job started through
the spark-submit that ships with pyspark, with sparktc's own environment, from any directory.

    sparktc run|classify|compare|history|export|synthesize [job arguments] [spark-submit options]

What both pass to spark-submit (:func:`submit`, the one home of it):

* ``PYSPARK_PYTHON`` and ``PYSPARK_DRIVER_PYTHON``: the running interpreter (the clone's ``.venv/bin/python``)
  unless set; a driver on this machine (not ``--deploy-mode cluster``) runs ``PYSPARK_DRIVER_PYTHON`` also when
  ``--conf spark.pyspark.python`` names the executors' interpreter (``./env/bin/python`` of an ``--archives``
  environment, which Spark would otherwise run for the driver too), unless ``spark.pyspark.driver.python`` is given;
* ``conf/spark-defaults.conf`` as ``--properties-file`` (unless one is given) and ``conf/log4j2.properties``,
  which sends Spark's log to a file per job, ``LOGS/<time>-<pid>-<job>.log`` (``SPARKTC_LOG_DIR`` or
  ``SPARKTC_LOG`` to change it): the stages print one line each, and a failure prints one ``sparktc: error:`` line
  that names this file (the job appends its trace to it);
* ``--master local[*,4]`` unless a master is given (every core; a failed task gets up to 4 attempts, as
  ``spark.task.maxFailures`` gives on a cluster); in local mode the driver JVM runs the serial collector and reads
  Spark's classes from ``jvm-classes-<key>.jsa``, which the first local job that succeeds writes as it exits (one
  job writes at a time; one started meanwhile neither reads nor writes it; ``SPARKTC_CLASS_ARCHIVE=0``: neither read
  nor written), and the driver, its JVM and the Python workers keep the memory they free for their next arrays
  (:data:`LOCAL_MALLOC`, each unless set);
* the library zipped with its bytecode and ``conf/``, passed with ``--py-files`` so that executors on a cluster
  import the same code: always from a clone (``build/sparktc.zip``), and from an installed package when the master
  is not local (in local mode the workers run this interpreter, which imports the installed package).

LOGS and the zip's folder are the clone's ``logs/`` and ``build/``, or for an installed package
``$XDG_CACHE_HOME/sparktc/`` (``~/.cache/sparktc/``). ``sparktc history`` needs no Spark: it runs in this
interpreter. ``sparktc run`` without ``--config`` runs the embedded default, the packaged ``synthetic``.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import marshal
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sparktc import packaged
from sparktc.errors import CONFIG_EXIT

#: The commands and the jobs (jobs/NAME.py) they start.
COMMANDS = {"run": "pipeline", "classify": "classify", "compare": "compare", "history": "history",
            "export": "export_libsvm", "synthesize": "synthesize"}
#: The jobs that start no Spark: run in this interpreter.
SPARK_FREE = {"history"}
#: spark-submit's options (``spark-submit --help``) and how many values each takes: taken out of the command's
#: arguments, wherever they are, and given to spark-submit; no job has an option of these names.
SUBMIT_OPTIONS = {
    **dict.fromkeys(["--master", "--remote", "--deploy-mode", "--name", "--jars", "--packages", "--exclude-packages",
                     "--repositories", "--py-files", "--files", "--archives", "--conf", "-c", "--properties-file",
                     "--driver-memory", "--driver-java-options", "--driver-library-path", "--driver-class-path",
                     "--executor-memory", "--proxy-user", "--driver-cores", "--total-executor-cores",
                     "--executor-cores", "--num-executors", "--principal", "--keytab", "--queue"], 1),
    **dict.fromkeys(["--supervise", "--verbose"], 0),
}
DEFAULT_MASTER = "local[*,4]"
DEFAULT_CONFIG = "synthetic"
USAGE = """usage: sparktc COMMAND [arguments] [spark-submit options]

Start a sparktc job through pyspark's spark-submit (default --master {master}).

commands:
  run         the whole experiment (jobs/pipeline.py); without --config, the embedded default ({default})
  classify    classify new documents with a run's model (jobs/classify.py)
  compare     significance tests between runs (jobs/compare.py)
  history     a run history's trend, regression gate and report; no Spark (jobs/history.py)
  export      a run's weighted vectors as LIBSVM files (jobs/export_libsvm.py)
  synthesize  a synthetic corpus in the LYRL2004 format (jobs/synthesize.py)

sparktc COMMAND --help shows the command's arguments, sparktc --version the versions.
Packaged configurations (--config NAME):
  {configurations}
"""


@dataclass(frozen=True)
class Home:
    """Where a submission takes its files from and puts its own: the sparktc package, the folder of ``conf/`` and
    ``jobs/``, the library's zip (also the folder of the JVM's class archive) and the logs.
    """

    package: Path
    data: Path
    zip: Path
    logs: Path

    @classmethod
    def clone(cls, root: str | os.PathLike[str]) -> Home:
        """A clone's: its ``sparktc/``, ``conf/`` and ``jobs/``, ``build/sparktc.zip`` and ``logs/``."""
        root = Path(root)
        return cls(root / "sparktc", root, root / "build" / "sparktc.zip", root / "logs")

    @classmethod
    def installed(cls) -> Home:
        """The running package's, whose data is inside it (a wheel) or beside it (an editable install of a clone:
        the clone's folders); an installed package's zip and logs go to the user's cache, the zip named after the
        installation, as several may share the cache.
        """
        package, data = Path(__file__).resolve().parents[1], Path(str(packaged.root()))
        if data != package:
            return cls.clone(data)
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sparktc"
        key = hashlib.sha256(str(package).encode()).hexdigest()[:12]
        return cls(package, package, cache / f"sparktc-{key}.zip", cache / "logs")


def write_zip(home: Home) -> Path:
    """The package zipped as ``sparktc/`` (each module with its bytecode) with ``conf/`` as ``sparktc/conf/``, as the
    wheel holds it; written aside and renamed into place, so that jobs submitted at the same time never read a
    half-written zip. A zip whose comment is the files' stamp (:func:`_stamp`: their names, sizes and modification
    times, and this Python's bytecode version) is theirs already and is kept: writing it took 0.7 CPU-s and up to
    2 s before every submit's JVM could start.
    """
    files = _zipped_files(home)
    stamp = _stamp(files)
    try:
        with zipfile.ZipFile(home.zip) as kept:
            if kept.comment == stamp:
                return home.zip
    except (OSError, zipfile.BadZipFile):
        pass  # none yet, or not a whole zip: written again
    home.zip.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=".sparktc-", suffix=".zip", dir=home.zip.parent)
    os.close(handle)
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, relative in files:
            archive.write(path, relative)
            if relative.endswith(".py"):
                # Its bytecode beside it (unchecked: the zip is written again whenever a source changes): Python
                # imports from a zip compile every module's source in every process (twice: zipimport's
                # get_filename and get_code), 0.3 CPU-s per driver or worker process; another Python
                # version falls back to the source.
                source = Path(path).read_bytes()
                code = compile(source, relative, "exec", dont_inherit=True)
                archive.writestr(relative + "c", importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little")
                                 + importlib.util.source_hash(source) + marshal.dumps(code))
        archive.comment = stamp
    os.chmod(partial, 0o644)
    os.replace(partial, home.zip)
    return home.zip


def _zipped_files(home: Home) -> list[tuple[str, str]]:
    """(path, name in the zip) of every file :func:`write_zip` zips, in order (no bytecode caches)."""
    folders = [(home.package, "sparktc")]
    if home.data != home.package:
        folders.append((home.data / "conf", "sparktc/conf"))
    files = []
    for top, prefix in folders:
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if not name.endswith(".pyc"):
                    path = os.path.join(folder, name)
                    files.append((path, f"{prefix}/{os.path.relpath(path, top)}"))
    return files


def _stamp(files: Sequence[tuple[str, str]]) -> bytes:
    """What the zip of ``files`` is made from: a SHA-256 of their names, sizes and modification times (ns) and of
    this Python's bytecode version.
    """
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER)
    for path, relative in files:
        found = os.stat(path)
        digest.update(f"{relative}\0{found.st_size}\0{found.st_mtime_ns}\n".encode())
    return f"sparktc-sources-sha256:{digest.hexdigest()}".encode()


def _master(arguments: Sequence[str]) -> tuple[str, bool]:
    """The master the arguments give (``remote`` for a Spark Connect client: the server has the master), or the
    default; and whether they give one.
    """
    master, given, previous = DEFAULT_MASTER, False, ""
    for argument in arguments:
        if argument.startswith("--master="):
            master, given = argument.removeprefix("--master="), True
        elif argument == "--master":
            given = True
        elif argument == "--remote" or argument.startswith("--remote="):
            master, given = "remote", True
        if previous == "--master":
            master = argument
        previous = argument
    return master, given


def _confs(arguments: Sequence[str]) -> dict[str, str]:
    """The Spark properties the arguments set (``--conf``/``-c`` ``key=value``, also ``--conf=key=value``), with
    ``spark.submit.deployMode`` for ``--deploy-mode``.
    """
    confs: dict[str, str] = {}
    pending = ""
    for argument in arguments:
        if pending:
            option, value, pending = pending, argument, ""
        elif argument in ("--conf", "-c", "--deploy-mode"):
            pending = argument
            continue
        elif argument.startswith(("--conf=", "--deploy-mode=")):
            option, value = argument.split("=", 1)
        else:
            continue
        if option == "--deploy-mode":
            confs["spark.submit.deployMode"] = value
        else:
            key, _, setting = value.partition("=")
            confs[key] = setting
    return confs


#: A local driver JVM's compiler: C1 alone, no C2 (``-XX:TieredStopAtLevel=1``), with the code cache HotSpot reserves
#: when both run: C1 alone reserves 48 MB, which a long run fills, then sweeps and compiles the same methods again
#: (tests/conftest.py's ``JIT_OPTIONS``, measured on the suite's JVMs).
CLIENT_COMPILER = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
#: The JVM options that keep a JVM quiet about a class archive it cannot use (another Spark's jars, another Java).
QUIET_ARCHIVE = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: glibc's malloc settings of a local job's processes (the Python driver, its JVM and the Python workers it forks),
#: each unless set: arrays up to 32 MiB from the heap, not each from a fresh mapping; freed memory kept for the next
#: (up to 4 GiB), and the heap grown 256 MiB at a time. Every new mapping's pages fault in on first touch; the numpy
#: passes over a task's bytes allocate arrays of that size many times. 804,414 LYRL2004 documents, `local[2]`, four
#: alternating pairs: 50.2 -> 46.4 s wall and 84.0 -> 77.7 CPU-s on average; the lean peer, two pairs, 26.9 -> 25.9 s
#: (docs/benchmarks/rcv1-scale.md, fifth round).
LOCAL_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(4 << 30),
                "MALLOC_TOP_PAD_": str(256 << 20)}


def class_archive(folder: Path, spark_home: Path) -> Path:
    """The class archive of the local jobs of ``spark_home``'s Spark, in ``folder`` (the zip's): written or not."""
    return folder / f"jvm-classes-{class_archive_key(spark_home)}.jsa"


def partial_archive(archive: Path, pid: int) -> Path:
    """Where the job of process ``pid`` writes ``archive`` before renaming it into place."""
    return archive.with_name(f".{archive.stem}.{pid}.jsa")


def class_archive_key(spark_home: Path) -> str:
    """The key of the JVM's class archive: the ``java`` binary (its real path) and Spark's jars (their names), each
    with its size and modification time.
    """
    java = os.environ.get("JAVA_HOME") and os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    java = os.path.realpath(java or shutil.which("java") or "java")
    files = [(java, java), *sorted((path.name, str(path)) for path in (spark_home / "jars").glob("*"))]
    stats = [(name, *((os.stat(path).st_size, os.stat(path).st_mtime_ns) if os.path.exists(path) else ()))
             for name, path in files]
    return hashlib.sha256(repr(stats).encode()).hexdigest()[:10]


def _wait(process: subprocess.Popen) -> int:
    """spark-submit's exit status; an interrupt (which reaches it too) waits for it to end."""
    while True:
        try:
            status = process.wait()
        except KeyboardInterrupt:
            continue
        return status if status >= 0 else 128 - status


def spark_home_of_pyspark() -> Path:
    """The Spark that ships with pyspark (its ``bin/spark-submit``, its ``jars/``)."""
    return Path(importlib.util.find_spec("pyspark").origin).parent


#: What to do where no Java is found: Spark's own launcher says only "JAVA_HOME is not set".
INSTALL_JAVA = ("install a Java runtime 17 or later (e.g. apt install openjdk-17-jre-headless) and put its java on "
                "the PATH, or set JAVA_HOME to its directory")


def java_problem(environment: Mapping[str, str]) -> str | None:
    """Why spark-submit could not start its JVM in ``environment``, as its launcher looks for one
    (``$JAVA_HOME/bin/java``, else ``java`` on the PATH), or None when it finds one (its version is Spark's to check).
    """
    home = environment.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not (java.is_file() and os.access(java, os.X_OK)):
            return (f"JAVA_HOME={home} holds no Java (no executable {java}); set JAVA_HOME to a Java 17+ installation "
                    "(the directory holding bin/java), or unset it to use the java on the PATH")
        return None
    if shutil.which("java", path=environment.get("PATH", os.defpath)) is None:
        return f"Spark needs Java, and none was found (JAVA_HOME is not set and no java is on the PATH): {INSTALL_JAVA}"
    return None


def submit(home: Home, arguments: Sequence[str], ship: bool = True) -> int:
    """Run the job of ``arguments`` (spark-submit options, the job file, the job's arguments) with the environment of
    the module docstring; ``ship``: pass the zip with ``--py-files`` even in local mode.

    A driver on this machine (not ``--deploy-mode cluster``) is started Python first, as ``pyspark`` and a notebook
    start theirs: this process is replaced by the job's interpreter, whose session starts spark-submit's JVM with
    these options (``PYSPARK_SUBMIT_ARGS``), so the job reads and checks its configuration and output before any JVM
    starts (a refusal in about a second, not after spark-submit's JVM has started), and its standard error is this
    command's (spark-submit's JVM would pipe the driver's into its own standard output); a Spark Connect client
    (``--remote``) starts no JVM at all. ``--deploy-mode cluster``, or an option :data:`SUBMIT_OPTIONS` does not
    know before the job, goes to spark-submit itself. A local job that writes the JVM's class archive runs as a
    child instead (the archive kept only if it succeeds): its exit status then. Exit status 2, with one line, where
    no Java is found (:func:`java_problem`).
    """
    arguments = list(arguments)
    master, has_master = _master(arguments)
    remote = master == "remote"
    problem = None if remote else java_problem(os.environ)
    if problem is not None:
        print(f"sparktc: configuration error: {problem}", file=sys.stderr)
        return CONFIG_EXIT
    spark_home = spark_home_of_pyspark()
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ[name] = os.environ.get(name) or sys.executable
    # Spark's own log goes to a file per job, not to the console.
    logs = Path(os.environ.get("SPARKTC_LOG_DIR") or home.logs)
    logs.mkdir(parents=True, exist_ok=True)
    job = next((Path(argument).stem for argument in arguments if argument.endswith(".py")), "job")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    log = os.environ.get("SPARKTC_LOG") or str(logs / f"{stamp}-{os.getpid()}-{job}.log")
    os.environ["SPARKTC_LOG"] = log
    conf = home.data / "conf"
    java_options = f"-Dlog4j2.configurationFile=file:{conf / 'log4j2.properties'} -Dsparktc.log={log}"
    options = [] if has_master else ["--master", master]
    if not any(argument == "--properties-file" or argument.startswith("--properties-file=")
               for argument in arguments):
        options += ["--properties-file", str(conf / "spark-defaults.conf")]
    local = master.startswith("local")
    confs = _confs(arguments)
    job_at = None if confs.get("spark.submit.deployMode") == "cluster" else _job_index(arguments)
    if remote and job_at is not None:
        return _connect_client(home, arguments, job_at, [*options, *arguments[:job_at]])
    if job_at is None and ("spark.pyspark.python" in confs and "spark.pyspark.driver.python" not in confs
                           and confs.get("spark.submit.deployMode") != "cluster"):
        # Spark runs spark.pyspark.python for the driver too, before PYSPARK_DRIVER_PYTHON.
        options += ["--conf", f"spark.pyspark.driver.python={os.environ['PYSPARK_DRIVER_PYTHON']}"]
    shipped = write_zip(home) if ship or not local else None
    if shipped is not None:
        options += ["--py-files", str(shipped)]
    archive = partial = writing = None
    if local:
        # In local mode nothing needs to be reachable from other hosts: bind to loopback only.
        os.environ["SPARK_LOCAL_IP"] = os.environ.get("SPARK_LOCAL_IP") or "127.0.0.1"
        for name, value in LOCAL_MALLOC.items():
            os.environ.setdefault(name, value)
        # The driver JVM is the whole cluster, started afresh by every job: the serial collector (the Python workers
        # do the corpus-sized work; G1's threads cost CPU for a 1g heap), and the classes of Spark, Scala and Hadoop
        # read from a class-data-sharing archive instead of parsed and verified again (docs/benchmarks/rcv1-scale.md,
        # "The fixed cost of a run"). The first local job that succeeds writes the archive as it exits, to a name of
        # its own, then renames it into place; a JVM that cannot use it ignores it (-Xlog:cds off: nothing printed).
        # And the client compiler only (tier 1): the JVM schedules and moves small results, the optimizing compiler's
        # threads took 10.4 of its 15.8 CPU-s in a 200,000-document run, 1.35 of 7.1 with C1 alone (docs/design.md).
        archive = class_archive(home.zip.parent, spark_home)
        java_options += f" -XX:+UseSerialGC {CLIENT_COMPILER} {QUIET_ARCHIVE}"
        if os.environ.get("SPARKTC_CLASS_ARCHIVE") == "0":  # neither read nor written (a small or read-only cache)
            pass
        else:
            if not archive_written(archive):
                archive.parent.mkdir(parents=True, exist_ok=True)
                # One writer at a time: a JVM that writes the archive runs slower and spends about 20 CPU-s writing it
                # as it exits (measured 2026-11-29), so jobs started beside the writer run without one.
                writing = _archive_lock(archive.with_name(f".{archive.stem}.lock"))
                if writing is not None and archive_written(archive):  # the last writer ended meanwhile
                    writing.close()
                    writing = None
            if archive_written(archive):
                java_options += f" -XX:SharedArchiveFile={archive}"
            elif writing is not None:
                partial = partial_archive(archive, os.getpid())
                java_options += f" -XX:ArchiveClassesAtExit={partial}"
    submit_options = ["--conf", f"spark.driver.extraJavaOptions={java_options}", *options]
    if job_at is None:
        # Spark pipes the Python driver's stderr into spark-submit's stdout: tell the driver when that is a terminal,
        # so its progress line is rewritten in place there (sparktc/runtime/progress.py).
        os.environ["SPARKTC_TERMINAL"] = "1" if sys.stdout.isatty() else "0"
        command = [str(spark_home / "bin" / "spark-submit"), *submit_options, *arguments]
    else:
        os.environ[SUBMIT_ARGS] = shlex.join([*submit_options, *arguments[:job_at], "pyspark-shell"])
        os.environ[JVM_WAIT] = "1"
        command = _driver(arguments[job_at:], shipped)
    sys.stdout.flush()
    if partial is None:
        os.execv(command[0], command)
    status = _wait(subprocess.Popen(command))
    # Kept from a job that succeeded only: one refused at the door has loaded few of the classes, and a JVM killed
    # by a signal may have left it half written.
    if status == 0 and archive_written(partial):
        os.replace(partial, archive)
    else:
        partial.unlink(missing_ok=True)
    writing.close()  # the lock goes with it (and with this process, however it ends)
    return status


#: How a driver started Python first hands spark-submit's options to the JVM its session starts (pyspark's
#: ``launch_gateway``, as the ``pyspark`` shell does).
SUBMIT_ARGS = "PYSPARK_SUBMIT_ARGS"
#: Set for a driver started Python first: it waits for its JVM to end as it exits, so the command ends when the JVM
#: has (its class archive written) and leaves no JVM behind (``sparktc.runtime.session.JVM_WAIT``, named here too:
#: this module imports no pyspark).
JVM_WAIT = "SPARKTC_JVM_WAIT"
#: How spark-submit hands a Spark Connect client its settings (pyspark's connect session reads its ``spark.sql.*``).
REMOTE_INIT_CONF = "PYSPARK_REMOTE_INIT_CONF"
#: What a Spark Connect client imports beyond pyspark (the ``connect`` extra).
CONNECT_MODULES = ("grpc", "grpc_status", "google.rpc")


def _job_index(arguments: Sequence[str]) -> int | None:
    """Where the job file is in ``arguments`` (after spark-submit's options, :data:`SUBMIT_OPTIONS`), or None when an
    option before it is not one of those (spark-submit's to read) or no job is given.
    """
    waiting = 0
    for index, argument in enumerate(arguments):
        if waiting:
            waiting -= 1
        elif argument.split("=", 1)[0] in SUBMIT_OPTIONS:
            waiting = 0 if "=" in argument else SUBMIT_OPTIONS[argument]
        elif argument.startswith("-"):
            return None
        else:
            return index if argument.endswith(".py") else None
    return None


def _driver(job: Sequence[str], shipped: Path | None) -> list[str]:
    """The command of the job's driver started Python first: ``PYSPARK_DRIVER_PYTHON JOB.py [arguments]``, with the
    library's zip, when one is shipped (always from a clone), first on its path, as spark-submit puts it there: the
    zip holds each module's bytecode, where a clone's sources would be compiled again by every process (driver and
    Python workers, which inherit the path) wherever ``PYTHONDONTWRITEBYTECODE`` is set (0.3 CPU-s each); and
    ``PYTHONHASHSEED=0`` unless set.
    """
    if shipped is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shipped), os.environ.get("PYTHONPATH")]))
    # As spark-submit's PythonRunner gives its driver (and Spark every Python worker): the same string hashes, so the
    # same set and dict orders, in every run. Without it the README's main command took 2-8 CPU-s more in 3 pairs
    # against the same code submitted through spark-submit; with it, the same within the machine's noise.
    os.environ.setdefault("PYTHONHASHSEED", "0")
    return [os.environ["PYSPARK_DRIVER_PYTHON"], *job]


def _connect_client(home: Home, arguments: Sequence[str], job_at: int, submit_options: Sequence[str]) -> int:
    """``--remote sc://...``: the job's driver is a Spark Connect client, started with no JVM, its settings (the
    properties file's and ``--conf``'s) handed over as spark-submit hands them (:data:`REMOTE_INIT_CONF`); this
    process replaced by it. Exit status 2, with one line, where the client's packages are not installed.
    """
    if os.path.realpath(os.environ["PYSPARK_DRIVER_PYTHON"]) == os.path.realpath(sys.executable) and any(
            importlib.util.find_spec(module) is None for module in CONNECT_MODULES):
        install = (f"{sys.executable} -m pip install '.[connect]' in a clone" if home.data != home.package
                   else "pip install 'sparktc[connect]'")
        print("sparktc: configuration error: --remote makes the job a Spark Connect client, which needs pyspark's "
              f"connect packages (grpcio, grpcio-status, googleapis-common-protos): install them ({install})",
              file=sys.stderr)
        return CONFIG_EXIT
    settings: dict[str, str] = {}
    previous = ""
    for argument in submit_options:
        if previous == "--properties-file":
            settings |= properties(Path(argument))
        elif argument.startswith("--properties-file="):
            settings |= properties(Path(argument.partition("=")[2]))
        elif previous == "--remote":
            settings["spark.remote"] = argument
        elif argument.startswith("--remote="):
            settings["spark.remote"] = argument.partition("=")[2]
        previous = argument
    settings |= {key: value for key, value in _confs(submit_options).items() if key != "spark.submit.deployMode"}
    os.environ[f"{REMOTE_INIT_CONF}_LEN"] = "1"
    os.environ[f"{REMOTE_INIT_CONF}_0"] = json.dumps(settings)
    command = _driver(arguments[job_at:], write_zip(home) if home.data != home.package else None)
    sys.stdout.flush()
    os.execv(command[0], command)
    raise AssertionError("unreachable: os.execv returns only by raising")


def properties(path: Path) -> dict[str, str]:
    """The settings of a Spark properties file (Java's format, as spark-submit reads ``--properties-file``: ``key
    value``, ``key=value`` or ``key: value`` per line; ``#`` and ``!`` comments; a trailing backslash continues a line).
    """
    settings: dict[str, str] = {}
    logical = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip() if not logical else line.lstrip()
        if not logical and (not stripped or stripped[0] in "#!"):
            continue
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            logical += stripped[:-1]
            continue
        logical += stripped
        key, value = re.match(r"([^\s=:]+)\s*[=:]?\s*(.*)", logical).groups()
        settings[key] = value.strip()
        logical = ""
    return settings


def archive_written(archive: Path) -> bool:
    """Whether the class archive is in place (renamed there whole by the job that wrote it)."""
    return archive.exists() and archive.stat().st_size > 0


def _archive_lock(path: Path) -> IO[bytes] | None:
    """``path`` opened and locked for this process alone (``flock``), or None if another process holds it."""
    handle = open(path, "ab")  # noqa: SIM115 (held until the job ends)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def clone(root: str, arguments: Sequence[str]) -> int:
    """``./spark-submit.sh [spark-submit options] JOB.py [job arguments]`` of the clone at ``root``."""
    return submit(Home.clone(root), arguments)


def main(argv: Sequence[str] | None = None) -> int:
    """``sparktc COMMAND [arguments] [spark-submit options]``: the command's job through :func:`submit` (history in
    this interpreter); exit status 2 for an unknown command.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):  # asked for: on standard output; for want of a command: on stderr
        print(USAGE.format(master=DEFAULT_MASTER, default=DEFAULT_CONFIG,
                           configurations=", ".join(packaged.configurations())), end="",
              file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv == ["--version"]:
        from sparktc import __version__

        print(f"sparktc {__version__} (pyspark {_pyspark_version()}, Python {sys.version.split()[0]})")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"sparktc: error: unknown command {command!r}; commands: {', '.join(COMMANDS)} "
              "(sparktc --help)", file=sys.stderr)
        return 2
    home = Home.installed()
    job = str(home.data / "jobs" / f"{COMMANDS[command]}.py")
    submit_options, job_arguments = _split(rest)
    if command == "run" and not any(argument == "--config" or argument.startswith("--config=")
                                    for argument in job_arguments):
        job_arguments = ["--config", DEFAULT_CONFIG, *job_arguments]
    if command in SPARK_FREE or any(argument in ("-h", "--help") for argument in job_arguments):
        if submit_options and command in SPARK_FREE:
            print(f"sparktc: error: sparktc {command} runs no Spark; spark-submit options are not taken "
                  f"({' '.join(submit_options)})", file=sys.stderr)
            return 2
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, job, *job_arguments])
    return submit(home, [*submit_options, job, *job_arguments], ship=False)


def _pyspark_version() -> str:
    """The installed pyspark's version, read without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:
        return "not installed"


def _split(arguments: Sequence[str]) -> tuple[list[str], list[str]]:
    """spark-submit's options (:data:`SUBMIT_OPTIONS`, with their values) and the job's arguments, in order."""
    submit_options: list[str] = []
    job_arguments: list[str] = []
    waiting = 0
    for argument in arguments:
        if waiting:
            submit_options.append(argument)
            waiting -= 1
        elif argument.split("=", 1)[0] in SUBMIT_OPTIONS:
            submit_options.append(argument)
            waiting = 0 if "=" in argument else SUBMIT_OPTIONS[argument]
        else:
            job_arguments.append(argument)
    return submit_options, job_arguments
