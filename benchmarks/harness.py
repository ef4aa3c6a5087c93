"""The benchmark harness: what every benchmark that runs commands does around its own runs, and the one module of
``benchmarks/`` (with the other ``benchmarks.harness_*`` modules) that a benchmark imports.

* :func:`run_harness` is a benchmark's ``main`` around its body: the output directory, the result record (the
  command, the machine: :func:`machine_info`), OUTPUT/STEM.json and STEM.md written however the run ends, and its
  record in the run history with ``--history`` (:mod:`benchmarks.harness_recording`); :func:`harness_parser` is
  the command-line parser every such benchmark starts from.
* :func:`measured` runs one command from the repository root under the ``/proc`` sampler
  (:mod:`benchmarks.harness_measure`), printing its lines, and :class:`HarnessError` names a failed command with
  the tail of its output (:func:`failure`, :func:`failure_cause`).
* The synthetic RCV1-v2-scale corpus the benchmarks share: its sizes (:data:`RCV1_DOCUMENTS`,
  :func:`train_documents`), its files (:data:`CORPUS_FILES`, :func:`corpus_is_complete`).

The other parts: :mod:`benchmarks.harness_measure` (a command's process tree measured),
:mod:`benchmarks.harness_recording` (a benchmark's run recorded in the run history and MLflow),
:mod:`benchmarks.harness_tables` (the figures as the tables print them; the RCV1-scale tables and targets),
:mod:`benchmarks.harness_pipeline` (a pipeline run measured stage by stage), :mod:`benchmarks.harness_text_corpus`
(the synthetic raw-text corpus), :mod:`benchmarks.harness_libmultilabel_corpus` (the corpora LibMultiLabel and sparktc
read alike), :mod:`benchmarks.harness_peer` (the single-process peers' LIBLINEAR core),
:mod:`benchmarks.harness_scaling` (a Spark event log replayed on N cores) and :mod:`benchmarks.harness_reuters` (the
Reuters-21578 driver benchmarks' sets and commands). No benchmark imports another benchmark
(``tests/benchmarks/test_harness_imports.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import harness_recording
from benchmarks.harness_measure import Measured, run_measured
from sparktc.corpora.synthetic import QRELS_FILE, TEST_FILES, TRAIN_FILE
from sparktc.corpora.synthetic_categories import HIERARCHY_FILE

REPO = Path(__file__).resolve().parents[1]
RCV1_DOCUMENTS = 804_414
RCV1_TRAIN_DOCUMENTS = 23_149
RCV1_VOCABULARY = 47_236
CORPUS_FILES = (TRAIN_FILE, *TEST_FILES, QRELS_FILE, HIERARCHY_FILE)
PYTHON = ".venv/bin/python"
SAMPLE_SECONDS = 0.2


class HarnessError(RuntimeError):
    """A command of the benchmark failed; ``detail`` holds the command and the tail of its output."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


def harness_parser(description: str) -> argparse.ArgumentParser:
    """The command-line parser of a benchmark built on :func:`run_harness`: its ``description`` (the module
    docstring, as written) and the options every harness takes (:func:`benchmarks.harness_recording.arguments`:
    ``--history DIR``), which :func:`run_harness` reads from the command line it records.
    """
    return argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
                                   parents=[harness_recording.arguments()])


def run_harness(module: str, output: Path, argv: Sequence[str] | None, settings: dict[str, Any],
                body: Callable[[dict[str, Any], Callable[[], str]], int], render: Callable[[dict[str, Any]], str],
                stem: str, marker: tuple[str, str] = ("", ""),
                headline: Callable[[dict[str, Any]], dict[str, Any]] | None = None, **collections: Any) -> int:
    """What every benchmark's ``main`` does around its own runs.

    Make ``output`` (marked as its writer's with the file ``marker`` = (name, writer), when given) and send
    spark-submit.sh's logs under it; start the result (the command, where it ran, the machine, ``settings`` and
    the empty ``collections`` the runs fill); run ``body(result, write)``, which returns the exit status and calls
    ``write()`` to keep partial results; record a :class:`HarnessError` as the result's error (exit status 1);
    and always end with the load and the harness's own wall and CPU time in OUTPUT/STEM.json, ``render``'s
    markdown in OUTPUT/STEM.md, and the markdown printed. With ``--history DIR`` (:func:`harness_parser`), the
    run's record, with the figures of ``headline(result)``, is then added to that history, however the run ended
    (:mod:`benchmarks.harness_recording`; exit status 1 when it cannot be).
    """
    output.mkdir(parents=True, exist_ok=True)
    name, writer = marker
    if name and not (output / name).is_file():
        (output / name).write_text(json.dumps({"written_by": writer}) + "\n")
    os.environ.setdefault("SPARKTC_LOG_DIR", str(output / "logs" / "spark"))  # read by spark-submit.sh
    began = time.monotonic()
    argv = list(sys.argv[1:] if argv is None else argv)
    recorder = harness_recording.Recorder.of(module, argv, output, REPO)
    result: dict[str, Any] = {
        "command": shlex.join([PYTHON, "-m", f"benchmarks.{module}", *argv]), "cwd": os.getcwd(),
        "repository": str(REPO), "started_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(), "settings": settings, **collections,
    }

    def write() -> str:
        markdown = render(result)
        (output / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
        (output / f"{stem}.md").write_text(markdown)
        return markdown

    status, failure = 0, None
    try:
        with harness_recording.active(recorder):
            status = body(result, write)
    except HarnessError as error:
        result["error"] = str(error)
        detail = f"\n{error.detail}" if error.detail else ""
        print(f"{module}: error: {error}{detail}", file=sys.stderr, flush=True)
        status, failure = 1, error
    except BaseException as error:  # recorded below as what ended the run, then raised on
        failure = error
        raise
    finally:
        result["machine"]["load_end"] = load_average()
        seconds = time.monotonic() - began
        result["harness_seconds"] = round(seconds, 1)
        own = os.times()
        result["harness_own_cpu_seconds"] = round(own.user + own.system, 2)  # the sampler's cost
        markdown = write()
        if recorder is not None:
            report = {f"{stem}.json": (output / f"{stem}.json").read_bytes(), f"{stem}.md": markdown.encode("utf-8")}
            status = recorder.keep(settings, status, failure, lambda: headline(result) if headline else {},
                                   harness_recording.own_usage(seconds), report)
    print(markdown)
    print(f"{module}: wrote {output / f'{stem}.json'} and {output / f'{stem}.md'}", flush=True)
    return status


def train_documents(size: int) -> int:
    """RCV1-v2's training share of ``size`` documents (23,149 of 804,414), at least 1."""
    return max(1, round(RCV1_TRAIN_DOCUMENTS * size / RCV1_DOCUMENTS))


def relative(path: Path) -> str:
    """``path`` relative to the repository when inside it (shorter commands), else absolute."""
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def measured(command: list[str], log: Path, driver_script: str | None, check: bool = True,
             harness: str = "rcv1_scale") -> Measured:
    """Run ``command`` from the repository root under the /proc sampler, its lines printed after ``harness``;
    raise HarnessError if it fails (with ``check``; else the caller looks at the exit code).
    """
    command = harness_recording.as_run(command)
    print(f"{harness}: $ {shlex.join(command)}   (load {load_average()})", flush=True)
    result = run_measured(command, REPO, log, driver_script, interval=SAMPLE_SECONDS,
                          echo=lambda line: print(f"    {line}", flush=True))
    harness_recording.measured(log, result)
    if result.returncode != 0:
        error = failure(command, log, result)
        if check:
            raise error
        print(f"{harness}: {error}\n{error.detail}", file=sys.stderr, flush=True)
        return result
    print(f"{harness}:   done in {result.seconds:.1f} s, {result.cpu_seconds:.1f} CPU-s", flush=True)
    return result


def failure(command: list[str], log: Path, result: Measured) -> HarnessError:
    """The error naming a failed command, with the last lines of its output."""
    tail = "\n".join(result.tail)
    return HarnessError(
        f"command failed with exit code {result.returncode}: {shlex.join(command)} (full output: {log})",
        f"command (run from {REPO}):\n  {shlex.join(command)}\nexit code {result.returncode}; "
        f"last {len(result.tail)} lines of its output (all of it in {log}):\n{tail}")


OUT_OF_MEMORY = ("java.lang.OutOfMemoryError", "MemoryError", "Cannot allocate memory",
                 "GC overhead limit exceeded", "insufficient memory")


def failure_cause(returncode: int, output: str) -> tuple[bool, str]:
    """(whether it ran out of memory, why it failed) from a failed command's exit code and output."""
    for line in output.splitlines():
        for marker in OUT_OF_MEMORY:
            if marker in line:
                return True, f"out of memory: {line.strip()[:200]}"
    if returncode in (-9, 137):
        return True, f"killed by SIGKILL (exit code {returncode}; the kernel's out-of-memory killer, presumably)"
    return False, f"exit code {returncode}"


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; HarnessError when it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise HarnessError(f"cannot read {path}: {error}") from error


def corpus_is_complete(directory: Path, size: int) -> bool:
    """Whether ``directory`` holds all the files of a synthesized corpus of ``size`` documents."""
    report = directory / "manifests" / "synthesize.json"
    if not all((directory / name).is_file() for name in CORPUS_FILES) or not report.is_file():
        return False
    try:
        return json.loads(report.read_text()).get("rows_out") == size
    except ValueError:
        return False


def rounded(values: dict[str, float], digits: int = 1) -> dict[str, float]:
    """``values`` with each one rounded to ``digits`` decimals."""
    return {key: round(value, digits) for key, value in values.items()}


def process_summary(result: Measured) -> list[dict[str, Any]]:
    """Each distinct (role, command line) seen in the tree, with how many processes had it: to check the roles."""
    seen: dict[tuple[str, str], int] = {}
    for role, cmdline in result.commands.values():
        seen[(role, cmdline[:160])] = seen.get((role, cmdline[:160]), 0) + 1
    return [{"role": role, "processes": n, "cmdline": cmdline} for (role, cmdline), n in sorted(seen.items())]


def first_line(command: list[str]) -> str:
    """The first line a command prints (stdout, else stderr), or why it could not run."""
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def proc_field(path: str, key: str) -> str:
    """The value of the first ``key: value`` line of a /proc file."""
    try:
        with open(path) as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name.strip() == key:
                    return value.strip()
    except OSError:
        pass
    return "unknown"


def load_average() -> str:
    """The one-minute load average of the machine, "unknown" without /proc."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def spark_defaults() -> dict[str, str]:
    """conf/spark-defaults.conf as spark-submit.sh passes it."""
    values = {}
    for line in (REPO / "conf" / "spark-defaults.conf").read_text().splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and not line.lstrip().startswith("#"):
            values[parts[0]] = parts[1].strip()
    return values


def machine_info() -> dict[str, Any]:
    """Cores, memory, CPU, and the versions the jobs run with (the project's .venv, the java Spark uses)."""
    versions = first_line([PYTHON, "-c",
                           "import platform, pyspark; print(platform.python_version(), pyspark.__version__)"])
    python, _, pyspark = versions.partition(" ")
    java_home = os.environ.get("JAVA_HOME")
    java = first_line([os.path.join(java_home, "bin", "java") if java_home else "java", "-version"])
    memory_kb = proc_field("/proc/meminfo", "MemTotal").split()[0]
    git = first_line(["git", "rev-parse", "--short", "HEAD"])
    try:
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                                    capture_output=True, text=True, timeout=60, check=False).stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        dirty = False
    return {
        "cores": os.cpu_count(), "memory_gb": int(memory_kb) / 1024 / 1024 if memory_kb.isdigit() else 0.0,
        "cpu_model": proc_field("/proc/cpuinfo", "model name"), "python": python, "pyspark": pyspark or "unknown",
        "java": java, "platform": platform.platform(), "spark_defaults": spark_defaults(), "load_start": load_average(),
        "git": f"commit {git}" + (" with uncommitted changes to tracked files" if dirty else ""),
    }
