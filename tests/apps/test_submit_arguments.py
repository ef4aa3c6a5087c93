"""The ``sparktc`` command's arguments (no Spark): the job each command starts, spark-submit's options taken from
anywhere after it, the embedded default for ``run``, and what it refuses.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

from sparktc.apps import submit
from sparktc.apps.submit import COMMANDS, SUBMIT_OPTIONS, Home


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list:
    """What :func:`submit.main` hands to spark-submit (:func:`submit.submit`) or runs in this interpreter."""
    calls: list = []
    monkeypatch.setattr(submit, "submit", lambda home, arguments, ship: calls.append(("submit", arguments, ship)) or 0)

    def execv(program: str, arguments: list[str]) -> None:
        calls.append(("python", arguments[1:]))
        raise Replaced  # os.execv does not return

    monkeypatch.setattr(submit.os, "execv", execv)
    return calls


class Replaced(Exception):
    """The process replaced by another program."""


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands :func:`submit.submit` replaces this process by (``os.execv``, which raises :class:`Replaced`)."""
    replaced: list[list[str]] = []

    def execv(program: str, arguments: list[str]) -> None:
        replaced.append(arguments)
        raise Replaced

    monkeypatch.setattr(submit.os, "execv", execv)
    return replaced


def unset(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """The environment variables ``names`` removed for the test, and whatever :func:`submit.submit` sets them to
    undone after it (``delenv`` alone restores nothing of a variable that was not set: submit's values would reach
    the process's later tests, a later spark-submit job's log going to this test's folder).
    """
    for name in names:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def test_spark_submit_options_anywhere_go_before_the_job(submitted: list) -> None:
    assert submit.main(["classify", "--model", "m", "--master", "yarn", "--input", "d.jsonl", "--conf=a=b",
                        "--output", "o", "--verbose", "--executor-memory", "4g"]) == 0
    [(kind, arguments, ship)] = submitted
    assert (kind, ship) == ("submit", False)  # the installed package is zipped only for a master that is not local
    assert arguments == ["--master", "yarn", "--conf=a=b", "--verbose", "--executor-memory", "4g",
                         str(REPO / "jobs" / "classify.py"), "--model", "m", "--input", "d.jsonl", "--output", "o"]


def test_run_without_a_configuration_runs_the_embedded_default(submitted: list) -> None:
    submit.main(["run", "--output", "out"])
    submit.main(["run", "--config=reuters21578", "--output", "out"])
    assert [arguments[1:] for _, arguments, _ in submitted] == [["--config", "synthetic", "--output", "out"],
                                                                 ["--config=reuters21578", "--output", "out"]]
    assert submitted[0][1][0] == str(REPO / "jobs" / "pipeline.py")


def test_history_and_help_run_in_this_interpreter(submitted: list, capsys: pytest.CaptureFixture) -> None:
    for arguments in (["history", "runs/history", "--all"], ["export", "--help"]):
        with pytest.raises(Replaced):
            submit.main(arguments)
    assert submitted == [("python", [str(REPO / "jobs" / "history.py"), "runs/history", "--all"]),
                         ("python", [str(REPO / "jobs" / "export_libsvm.py"), "--help"])]
    assert submit.main(["history", "runs/history", "--master", "yarn"]) == 2
    assert capsys.readouterr().err == ("sparktc: error: sparktc history runs no Spark; spark-submit options are not "
                                       "taken (--master yarn)\n")


def test_every_command_has_its_job_and_no_job_option_is_spark_submits() -> None:
    jobs = REPO / "jobs"
    assert all((jobs / f"{job}.py").is_file() for job in COMMANDS.values())
    options = {word.strip("\"'") for path in [*jobs.glob("*.py"), *(REPO / "sparktc" / "apps").glob("*.py")]
               for line in path.read_text().splitlines() if "add_argument(" in line
               for word in line.split("add_argument(", 1)[1].split(",") if word.strip().startswith(("\"-", "'-"))}
    assert "--output" in options and not options & set(SUBMIT_OPTIONS)


def test_a_clone_keeps_its_build_and_logs(tmp_path: Path) -> None:
    assert Home.installed() == Home(REPO / "sparktc", REPO, REPO / "build" / "sparktc.zip", REPO / "logs")
    home = Home.clone(tmp_path)
    assert (home.package, home.data, home.zip, home.logs) == (tmp_path / "sparktc", tmp_path,
                                                              tmp_path / "build" / "sparktc.zip", tmp_path / "logs")


@pytest.mark.parametrize(("given", "drivers"), [
    (["--conf", "spark.pyspark.python=./env/bin/python"], None),
    (["--conf=spark.pyspark.python=./env/bin/python"], None),
    (["--deploy-mode", "cluster", "--conf", "spark.pyspark.python=./env/bin/python"], []),
    (["--class", "x.Y", "--conf", "spark.pyspark.python=./env/bin/python"], ["/driver/bin/python"]),
    (["--class", "x.Y", "-c", "spark.pyspark.python=./env/bin/python", "--conf", "spark.pyspark.driver.python=/opt/py"],
     ["/opt/py"]),
    ([], None),
])
def test_a_driver_here_runs_its_own_python_when_the_executors_python_is_named(
        given: list[str], drivers: list[str] | None, commands: list, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver on this machine starts Python first: ``PYSPARK_DRIVER_PYTHON`` runs the job, and spark-submit's options
    (``--conf spark.pyspark.python=./env/bin/python``, an --archives environment's, for the executors) go to the JVM
    its session starts (``drivers`` None). Through spark-submit itself (an option sparktc does not know before the
    job), Spark would run ``spark.pyspark.python`` for the driver too, a path that exists only in the executors'
    directories: the driver keeps ``PYSPARK_DRIVER_PYTHON``, unless the driver's interpreter is given or the driver
    runs in the cluster.
    """
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/driver/bin/python")
    unset(monkeypatch, "PYSPARK_PYTHON", "SPARKTC_LOG", "SPARKTC_LOG_DIR", "SPARKTC_TERMINAL", "PYSPARK_SUBMIT_ARGS",
          "SPARKTC_JVM_WAIT", "PYTHONPATH", "PYTHONHASHSEED", *submit.LOCAL_MALLOC)  # submit sets them
    home = Home(REPO / "sparktc", REPO, tmp_path / "sparktc.zip", tmp_path / "logs")
    with pytest.raises(Replaced):
        submit.submit(home, ["--master", "spark://127.0.0.1:7077", *given, "job.py", "--output", "o"], ship=False)
    [command] = commands
    if drivers is None:
        assert command == ["/driver/bin/python", "job.py", "--output", "o"]
        words = shlex.split(submit.os.environ["PYSPARK_SUBMIT_ARGS"])
        assert words[-1] == "pyspark-shell" and words[-1 - len(given):-1] == given
        assert words[words.index("--master") + 1] == "spark://127.0.0.1:7077" and "--py-files" in words
        assert submit.os.environ["SPARKTC_JVM_WAIT"] == "1" and submit.os.environ["PYTHONHASHSEED"] == "0"
        assert submit.os.environ["PYTHONPATH"].split(":")[0] == str(tmp_path / "sparktc.zip")  # as spark-submit puts it
        assert not set(submit.LOCAL_MALLOC) & set(submit.os.environ)  # a cluster's processes keep their own
        return
    assert Path(command[0]).name == "spark-submit" and command[-3:] == ["job.py", "--output", "o"]
    assert [value.removeprefix("spark.pyspark.driver.python=") for value in command
            if value.startswith("spark.pyspark.driver.python=")] == drivers


def test_a_connect_client_starts_no_jvm_and_gets_the_settings_spark_submit_would_hand_it(
        commands: list, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/driver/bin/python")
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java needed
    unset(monkeypatch, "JAVA_HOME", "PYSPARK_PYTHON", "SPARKTC_LOG", "SPARKTC_LOG_DIR", "PYSPARK_REMOTE_INIT_CONF_LEN",
          "PYSPARK_REMOTE_INIT_CONF_0", "PYTHONPATH", "PYTHONHASHSEED")
    (tmp_path / "extra.conf").write_text("# mine\n! also\nspark.sql.a  1\nspark.sql.b=two words \nspark.sql.c: \\\n"
                                         "   continued\n\n")
    home = Home(REPO / "sparktc", REPO, tmp_path / "sparktc.zip", tmp_path / "logs")
    with pytest.raises(Replaced):
        submit.submit(home, ["--remote", "sc://127.0.0.1:15002", "--conf", "spark.sql.d=4", "job.py", "--output", "o"])
    assert commands == [["/driver/bin/python", "job.py", "--output", "o"]]
    settings = json.loads(submit.os.environ["PYSPARK_REMOTE_INIT_CONF_0"])
    assert submit.os.environ["PYSPARK_REMOTE_INIT_CONF_LEN"] == "1"
    assert settings == {**submit.properties(REPO / "conf" / "spark-defaults.conf"), "spark.remote": "sc://127.0.0.1:15002",
                        "spark.sql.d": "4"}
    assert settings["spark.sql.shuffle.partitions"] == "16"
    with pytest.raises(Replaced):
        submit.submit(home, ["--remote=sc://h:1", "--properties-file", str(tmp_path / "extra.conf"), "job.py"])
    assert json.loads(submit.os.environ["PYSPARK_REMOTE_INIT_CONF_0"]) == {
        "spark.sql.a": "1", "spark.sql.b": "two words", "spark.sql.c": "continued", "spark.remote": "sc://h:1"}
    # Without the connect extra's packages: refused in one line, nothing started.
    find_spec = submit.importlib.util.find_spec
    monkeypatch.setattr(submit.importlib.util, "find_spec",
                        lambda name, *rest: None if name == "grpc_status" else find_spec(name, *rest))
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", submit.sys.executable)
    assert submit.submit(home, ["--remote", "sc://h:1", "job.py"]) == 2
    assert capsys.readouterr().err == (
        "sparktc: configuration error: --remote makes the job a Spark Connect client, which needs pyspark's connect "
        "packages (grpcio, grpcio-status, googleapis-common-protos): install them "
        f"({submit.sys.executable} -m pip install '.[connect]' in a clone)\n")
    assert len(commands) == 2


def test_a_wrong_setting_is_refused_on_stderr_before_any_jvm_starts(tmp_path: Path) -> None:
    """The README's launcher (./spark-submit.sh) with a setting that cannot work: exit 2 with the reason on standard
    error, nothing on standard output, nothing written, and no JVM (it would take seconds to start).
    """
    java = tmp_path / "jdk" / "bin" / "java"  # a Java that says when it is started
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\ntouch {tmp_path / 'java-started'}\nexit 1\n")
    java.chmod(0o755)
    environment = submit.os.environ | {"JAVA_HOME": str(tmp_path / "jdk"), "SPARKTC_LOG_DIR": str(tmp_path / "logs")}
    done = subprocess.run([str(REPO / "spark-submit.sh"), "jobs/pipeline.py", "--config", "conf/synthetic.toml",
                           "--set", "train.liblinear.C=-1", "--output", str(tmp_path / "out")],
                          cwd=REPO, capture_output=True, text=True, env=environment, timeout=60)
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith("sparktc: configuration error: train.liblinear.C"), done.stderr
    assert not (tmp_path / "java-started").exists()
    assert not (tmp_path / "out").exists()


def test_one_local_job_at_a_time_writes_the_class_archive(commands: list, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A local job on a checkout without the archive writes it (its driver runs as a child, the archive renamed into
    place when it succeeds: the driver waits for its JVM to write it); one started while another writes it neither
    reads nor writes one (it replaces itself by the driver); once written, every job reads it.
    """

    def java_options() -> list[str]:  # what the driver's session gives spark-submit's JVM
        [setting] = [word for word in shlex.split(submit.os.environ["PYSPARK_SUBMIT_ARGS"])
                     if word.startswith("spark.driver.extraJavaOptions=")]
        return setting.split()

    class Finished:  # the writer's spark-submit: its JVM writes the partial archive as it exits
        def __init__(self, command: list[str]) -> None:
            commands.append(command)
            [option] = [word for word in java_options() if word.startswith("-XX:ArchiveClassesAtExit=")]
            Path(option.partition("=")[2]).write_bytes(b"classes")

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(submit.subprocess, "Popen", Finished)
    unset(monkeypatch, "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARKTC_LOG", "SPARKTC_LOG_DIR", "SPARKTC_TERMINAL",
          "SPARK_LOCAL_IP", "SPARKTC_CLASS_ARCHIVE", "PYSPARK_SUBMIT_ARGS", "SPARKTC_JVM_WAIT", "PYTHONPATH",
          "PYTHONHASHSEED", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1048576")  # the user's own setting
    home = Home(REPO / "sparktc", REPO, tmp_path / "sparktc.zip", tmp_path / "logs")
    key = submit.class_archive_key(submit.spark_home_of_pyspark())

    def options() -> list[str]:
        return [word.partition("=")[0] for word in java_options() if word.startswith("-XX:")]

    other = open(tmp_path / f".jvm-classes-{key}.lock", "ab")  # noqa: SIM115 (another job writing: its lock)
    submit.fcntl.flock(other, submit.fcntl.LOCK_EX | submit.fcntl.LOCK_NB)
    with pytest.raises(Replaced):
        submit.submit(home, ["--master", "local[2]", "job.py"], ship=False)
    assert options() == ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel", "-XX:ReservedCodeCacheSize"]
    # A local job's processes keep the memory they free for their next arrays, unless the user says otherwise.
    assert {name: submit.os.environ[name] for name in submit.LOCAL_MALLOC} == {
        "MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(4 << 30), "MALLOC_TOP_PAD_": "1048576"}
    other.close()
    assert submit.submit(home, ["--master", "local[2]", "job.py"], ship=False) == 0
    assert options() == ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel", "-XX:ReservedCodeCacheSize",
                         "-XX:ArchiveClassesAtExit"]
    assert [path.name for path in tmp_path.glob("*.jsa")] == [f"jvm-classes-{key}.jsa"]
    with pytest.raises(Replaced):
        submit.submit(home, ["--master", "local[2]", "job.py"], ship=False)
    assert options() == ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel", "-XX:ReservedCodeCacheSize",
                         "-XX:SharedArchiveFile"]


def test_no_java_is_named_before_spark_submit_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    # Spark's launcher would say only "JAVA_HOME is not set"; nothing is started, nothing written.
    started = []
    monkeypatch.setattr(submit.os, "execv", lambda *arguments: started.append(arguments))
    monkeypatch.setattr(submit.subprocess, "Popen", lambda *arguments, **options: started.append(arguments))
    unset(monkeypatch, "JAVA_HOME", "SPARKTC_LOG", "SPARKTC_LOG_DIR")
    monkeypatch.setenv("PATH", str(tmp_path))  # no java there
    home = Home.clone(str(tmp_path / "clone"))
    assert submit.submit(home, ["jobs/pipeline.py", "--output", "out"]) == 2
    assert capsys.readouterr().err == (
        "sparktc: configuration error: Spark needs Java, and none was found (JAVA_HOME is not set and no java is on "
        "the PATH): install a Java runtime 17 or later (e.g. apt install openjdk-17-jre-headless) and put its java on "
        "the PATH, or set JAVA_HOME to its directory\n")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert submit.submit(home, ["jobs/pipeline.py", "--output", "out"]) == 2
    assert capsys.readouterr().err == (
        f"sparktc: configuration error: JAVA_HOME={tmp_path}/jdk holds no Java "
        f"(no executable {tmp_path}/jdk/bin/java); set JAVA_HOME to a Java 17+ installation (the directory holding "
        "bin/java), or unset it to use the java on "
        "the PATH\n")
    assert started == [] and not (tmp_path / "clone").exists()


def test_a_java_on_the_path_or_under_java_home_is_found(tmp_path: Path) -> None:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    assert submit.java_problem({"JAVA_HOME": str(tmp_path / "jdk"), "PATH": ""}) is None
    assert submit.java_problem({"PATH": str(java.parent)}) is None
    java.chmod(0o644)
    assert "holds no Java" in submit.java_problem({"JAVA_HOME": str(tmp_path / "jdk"), "PATH": ""})


def test_the_version_and_the_usage_go_where_they_are_asked_for(capsys: pytest.CaptureFixture) -> None:
    from importlib.metadata import version

    import sparktc

    assert submit.main(["--version"]) == 0
    assert capsys.readouterr().out == (f"sparktc {sparktc.__version__} (pyspark {version('pyspark')}, "
                                       f"Python {submit.sys.version.split()[0]})\n")
    assert submit.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: sparktc COMMAND")
    assert submit.main([]) == 2  # no command: the usage is the error's
    assert capsys.readouterr().err.startswith("usage: sparktc COMMAND")
