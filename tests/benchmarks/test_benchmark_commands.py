"""The commands of the dated benchmark records (docs/benchmarks/*.md) as they stand, no Spark: each block runs in
bash with ``./spark-submit.sh`` and ``.venv/bin/python`` replaced by functions that only write down the words they
get (so its loops, functions, variables, ``&`` and redirections work as the reader's shell works them), and every
command written down is accepted by its program's own argument parser.

What cannot be checked without the long runs themselves: a corpus the record's run synthesized first (the
804,414-document synthetic RCV1-v2 shape) is given a stand-in, a directory of empty files with the corpus's names,
so the parsers' refusals of a missing corpus do not fire; each ``--output`` goes to a directory of the test's own
(the parsers refuse a non-empty one, and Reuters-21578's and Yang & Liu's benchmarks make it); the two benchmarks
whose parser sits in their ``main`` (``benchmarks/reuters21578.py``, ``benchmarks/yang_liu_1999.py``) run that
``main`` with the recorded run (``benchmarks.harness_recording.record_driver``) taken out, and ``jobs/history.py`` its
``main`` with the gate (``sparktc.apps.history_gate.run``) taken out. A ``[--plain]`` is checked with and without
``--plain``, and the ``...`` of a command shortened in prose is left out.
"""

from __future__ import annotations

import re
import runpy
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, SHARED_DATA
from docs_examples import example

from benchmarks import harness_recording, lyrl2004, methods_rcv1, rcv1_scale, reuters21578, text_scale, yang_liu_1999
from sparktc.apps.cli import parse_arguments as pipeline_arguments
from sparktc.corpora.lyrl2004 import QRELS_FILES
from sparktc.runtime import resources, task_memory

#: The programs the records call, and the shell function each stands in for while the block runs.
PROGRAMS = {"./spark-submit.sh": "spark_submit", ".venv/bin/python": "venv_python"}
#: spark-submit.sh's options the records give before the job, and the Spark settings sparktc reads from ``--conf``.
SPARK_OPTIONS = ("--master", "--conf")
SPARKTC_CONF = (resources.TASK_MEMORY, task_memory.SETTING)
MASTER = re.compile(r"local\[(\d+|\*)\]")
#: Where the records give a corpus path: an option, or a --set of the pipeline's.
CORPUS_OPTIONS = ("--corpus",)
CORPUS_SETTING = "corpus.path="
#: The harnesses whose parser is a function of their own (``parse_arguments``).
PARSED = {"benchmarks.text_scale": text_scale.parse_arguments, "benchmarks.rcv1_scale": rcv1_scale.parse_arguments,
          "benchmarks.methods_rcv1": methods_rcv1.parse_arguments, "benchmarks.lyrl2004": lyrl2004.parse_arguments}
#: The harnesses whose default corpus (no ``--corpus``) is one an earlier benchmark synthesizes.
DEFAULT_CORPUS = {"benchmarks.methods_rcv1": methods_rcv1, "benchmarks.lyrl2004": lyrl2004}
#: The benchmarks that parse in their ``main``, then hand their Spark work to the recorded run.
MAINS: dict[str, Callable[[list[str]], int]] = {"benchmarks.reuters21578": reuters21578.main,
                                                 "benchmarks.yang_liu_1999": yang_liu_1999.main}


def recorded(name: str, tmp_path: Path) -> list[list[str]]:
    """The commands the block ``name`` runs, as words, in order: the block run by bash in ``tmp_path`` (its
    redirections land there), its ``/tmp`` under ``tmp_path`` too (what its ``mkdir`` makes, its outputs).
    """
    log = tmp_path / "commands"
    # One write per command: a block's commands run at once (``&``) must not interleave their words in the log.
    shims = "".join(f'{shim}() {{ local line; line=$(printf "%q " {shlex.quote(program)} "$@"); '
                    f'printf "%s\\n" "$line" >> {shlex.quote(str(log))}; }}\n' for program, shim in PROGRAMS.items())
    code = example(name).replace("/tmp/", f"{tmp_path}/tmp/")
    for program, shim in PROGRAMS.items():
        code = code.replace(program, shim)
    done = subprocess.run(["bash", "-c", shims + code], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr  # every other program is the shell's own
    return [shlex.split(line) for line in log.read_text().splitlines()]


def corpus_stand_in(tmp_path: Path) -> Path:
    """A directory with the file names of a synthesized LYRL2004-format corpus (all three category sets), empty."""
    corpus = tmp_path / "corpus-stand-in"
    corpus.mkdir(exist_ok=True)
    for file in (*rcv1_scale.CORPUS_FILES, *(f"{qrels}.gz" for qrels in QRELS_FILES.values())):
        (corpus / file).touch()
    return corpus


def checkable(words: list[str], tmp_path: Path) -> list[str]:
    """``words`` with a stand-in for a corpus a long run would have written and each ``--output`` under
    ``tmp_path``.
    """
    kept = [word for word in words if word != "..."]
    for i, word in enumerate(kept[1:], 1):
        if kept[i - 1] in CORPUS_OPTIONS and not (REPO / word).exists():
            kept[i] = str(corpus_stand_in(tmp_path))
        elif kept[i - 1] == "--set" and word.startswith(CORPUS_SETTING) \
                and not (REPO / word.removeprefix(CORPUS_SETTING)).exists():
            kept[i] = CORPUS_SETTING + str(corpus_stand_in(tmp_path))
        elif kept[i - 1] == "--output":
            kept[i] = str(tmp_path / "output" / Path(word).name)
    return kept


def spark_job(words: list[str]) -> tuple[str, list[str]]:
    """The script a spark-submit.sh command runs and its arguments, after checking the options before it."""
    i = 0
    while words[i].startswith("--"):
        option, value = words[i], words[i + 1]
        assert option in SPARK_OPTIONS, option
        if option == "--master":
            assert MASTER.fullmatch(value), value
        else:
            assert value.split("=", 1)[0] in SPARKTC_CONF, value
        i += 2
    return words[i], words[i + 1:]


def check_benchmark(module: str, arguments: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark ``module`` accepts ``arguments``: its parser returns, or its main gets past it."""
    if module in DEFAULT_CORPUS and "--corpus" not in arguments:
        assert not (REPO / DEFAULT_CORPUS[module].DEFAULT_CORPUS).exists()  # else the stand-in would hide it
        monkeypatch.setattr(DEFAULT_CORPUS[module], "DEFAULT_CORPUS", str(corpus_stand_in(tmp_path)))
    if module in PARSED:
        assert PARSED[module](arguments).output
        return
    assert module in MAINS, f"no parser known for {module}"
    started: list[Any] = []
    monkeypatch.setattr(harness_recording, "record_driver", lambda *given: started.append(given) or 0)
    assert MAINS[module](arguments) == 0
    assert len(started) == 1  # the recorded run would have started


def check_history(arguments: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """jobs/history.py accepts ``arguments``: its main gets past its parser to the gate."""
    job = runpy.run_path(str(REPO / "jobs" / "history.py"))
    gated: list[Any] = []
    monkeypatch.setitem(job["main"].__globals__, "run", lambda *given: gated.append(given) or 0)
    monkeypatch.setattr("sys.argv", ["jobs/history.py", *arguments])
    assert job["main"]() == 0 and len(gated) == 1


def check(words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command ``words`` is one its program accepts (module docstring)."""
    program, arguments = words[0], checkable(words[1:], tmp_path)
    if program == "./spark-submit.sh":
        script, arguments = spark_job(arguments)
        assert (REPO / script).is_file(), script
        if script == "jobs/pipeline.py":
            config, output, _ = pipeline_arguments("", arguments)
            assert output.startswith(str(tmp_path)) and config.corpus.format
        else:
            check_benchmark(script.removesuffix(".py").replace("/", "."), arguments, tmp_path, monkeypatch)
    elif program == ".venv/bin/python" and arguments[0] == "-m":
        assert (REPO / f"{arguments[1].replace('.', '/')}.py").is_file(), arguments[1]
        check_benchmark(arguments[1], arguments[2:], tmp_path, monkeypatch)
    else:
        assert program == ".venv/bin/python" and arguments[0] == "jobs/history.py", words
        check_history(arguments[1:], monkeypatch)


@pytest.mark.parametrize("name", ["bench-reuters21578", "bench-yang-liu-1999", "bench-methods-rcv1",
                                  "bench-lyrl2004", "bench-text-scale", "bench-rcv1-scale",
                                  "bench-rcv1-scale-design-step", "bench-rcv1-scale-test-read-once",
                                  "bench-memory-task-cap", "bench-history-gate-reuters-r90",
                                  "bench-history-text-scale", "bench-history-mlflow", "bench-progress-804414"])
def test_each_command_is_accepted(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the records' commands run from the checkout: their relative paths are its
    commands = recorded(name, tmp_path)
    assert commands, name
    for words in commands:
        forms = [words] if "[--plain]" not in words else [
            [word for word in words if word != "[--plain]"], [word.strip("[]") for word in words]]
        for form in forms:
            check(form, tmp_path, monkeypatch)


def test_the_data_the_records_name_is_here() -> None:
    """The shared files the commands read as they stand: Reuters-21578, the SMART stop list, RCV1's hierarchy."""
    for path in ("reuters21578", "stopwords/smart_english.stop", "rcv1/rcv1.topics.hier.orig"):
        assert (SHARED_DATA / path).exists(), path
