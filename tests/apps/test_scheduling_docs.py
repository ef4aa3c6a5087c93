"""The scheduling examples of docs/scheduled-runs.md as they stand (no Spark): every command the cron lines and the
Airflow DAG chain is one its job accepts, and every gate among them exits 3 on a history with a regression and 0 on
one without, which is what fails the cron line's `&&` and the DAG's task; the page's [history], [track] and
[progress] sections load as written; a tracking URI with nothing listening is refused as the page shows; and the
progress lines it shows are the ones sparktc draws.
"""

from __future__ import annotations

import ast
import re
import runpy
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA
from docs_examples import example, output
from histories import make, write

from benchmarks.text_scale import parse_arguments as text_scale_arguments
from sparktc.apps.cli import parse_arguments as pipeline_arguments
from sparktc.errors import CONFIG_EXIT, REGRESSION_EXIT, ConfigError
from sparktc.experiment.config import load_config
from sparktc.runtime.progress import JobTasks, loop_line, stage_line

CRON_LINES = [example("cron-nightly").strip(), example("cron-benchmark").strip()]
DAG = example("airflow-dag")
DAY, TS_NODASH = "2026-11-27", "20261127T020000"


def dag_commands(code: str) -> list[str]:
    """The DAG's bash commands, as Airflow renders them: its f-strings over its own constants, ``ts_nodash`` set."""
    tree = ast.parse(code)
    constants = {node.targets[0].id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)}
    commands = [eval(compile(ast.Expression(keyword.value), "scheduled-runs.md", "eval"), constants)  # noqa: S307
                for node in ast.walk(tree) if isinstance(node, ast.Call)
                for keyword in node.keywords if keyword.arg == "bash_command"]
    return [command.replace("{{ ts_nodash }}", TS_NODASH) for command in commands]


def steps(line: str, data: Path) -> list[list[str]]:
    r"""The commands a shell line chains with ``&&`` and ``||``, as words (cron's ``\\%`` and the date substituted,
    the ``cd`` and the redirections left out, ``/data`` under ``data`` and the corpus the shared one).
    """
    line = line.replace("$(date +\\%F)", DAY).replace("/data/sparktc/", f"{data}/sparktc/")
    line = line.replace("/data/reuters21578", str(SHARED_DATA / "reuters21578"))
    if re.match(r"[\d*]", line):  # a crontab line: the five time fields first
        fields = line.split(None, 5)
        assert all(re.fullmatch(r"[\d*,/-]+", field) for field in fields[:5]), line
        line = fields[5]
    found = []
    for part in re.split(r"&&|\|\|", line):
        words = shlex.split(part)
        kept = [word for i, word in enumerate(words)
                if not re.fullmatch(r"\d?>.*|&>.*", word) and not (i and words[i - 1] in (">", "2>"))]
        if kept and kept[0] not in ("cd", "cat"):
            found.append(kept)
    return found


def test_the_examples_are_there() -> None:
    assert len(CRON_LINES) == 2 and len(dag_commands(DAG)) == 2
    ast.parse(DAG)


@pytest.mark.parametrize("line", [*CRON_LINES, *dag_commands(DAG)], ids=["cron-nightly", "cron-benchmark",
                                                                          "dag-benchmark", "dag-gate"])
def test_each_command_is_accepted_and_each_gate_fails_on_a_regression(line: str, tmp_path: Path, monkeypatch,
                                                                      capsys) -> None:
    monkeypatch.chdir(REPO)  # as the line's `cd` into the checkout: its relative paths are the checkout's
    commands = steps(line, tmp_path / "data")
    assert commands, line
    for words in commands:
        program, arguments = words[0], words[1:]
        if program == "./spark-submit.sh":
            assert arguments[0] == "jobs/pipeline.py" and (REPO / arguments[0]).is_file()
            config, output, _ = pipeline_arguments("", arguments[1:])
            assert config.history.path == str(tmp_path / "data" / "sparktc" / "history")
            assert output.endswith(DAY) or output.endswith(TS_NODASH)
        elif arguments[:2] == ["-m", "benchmarks.text_scale"]:
            assert program == ".venv/bin/python"
            assert text_scale_arguments(arguments[2:]).history == str(tmp_path / "data" / "sparktc" / "history")
        else:
            assert program == ".venv/bin/python" and arguments[0] == "jobs/history.py", words
            gate(arguments, tmp_path, monkeypatch, capsys)


def gate(arguments: list[str], tmp_path: Path, monkeypatch, capsys) -> None:
    """Run the gate (the job's main, in this process) on the history it names, first holding a run and its rerun
    0.06 worse in micro-F1 (exit 3), then one with the rerun as good (exit 0), as runs of the label or kind the gate
    selects.
    """
    history = Path(arguments[1])
    label = arguments[arguments.index("--label") + 1] if "--label" in arguments else ""
    kind = arguments[arguments.index("--kind") + 1] if "--kind" in arguments else "pipeline"
    job = runpy.run_path(str(REPO / arguments[0]))
    for name, micro_f1, status in (("worse", 0.80, REGRESSION_EXIT), ("same", 0.86, 0)):
        write(str(history / name), make("a", 1, label=label, kind=kind),
              make("b", 2, label=label, kind=kind, micro_f1=micro_f1))
        argv = [arguments[0], str(history / name), *arguments[2:]]
        if "--report" in argv:
            argv[argv.index("--report") + 1] = str(tmp_path / f"report-{name}")
        monkeypatch.setattr(sys, "argv", argv)
        assert job["main"]() == status
        out = capsys.readouterr().out
        assert ("REGRESSION run b: micro_f1 0.8600 -> 0.8000" in out) == (status == REGRESSION_EXIT), out


@pytest.mark.parametrize("block", [example("history-settings"), example("track-settings"),
                                   example("progress-settings")], ids=["history", "track", "progress"])
def test_each_settings_block_loads_as_written(block: str, tmp_path: Path) -> None:
    """The block added to conf/synthetic.toml loads, its /data paths under a folder of the test's own."""
    config = tmp_path / "conf.toml"
    (tmp_path / "data" / "sparktc").mkdir(parents=True)
    config.write_text((REPO / "conf" / "synthetic.toml").read_text() + "\n"
                      + block.replace("/data/", f"{tmp_path}/data/"))
    section = block.split("]", 1)[0].strip("[")
    loaded = getattr(load_config(str(config), []), section)
    written = tomllib.loads(block)[section]
    assert {key: getattr(loaded, key) for key in written} == {
        key: value.replace("/data/", f"{tmp_path}/data/") if isinstance(value, str) else value
        for key, value in written.items()}


def test_a_tracking_uri_with_nothing_listening_is_refused_as_the_page_shows() -> None:
    words = shlex.split(example("track-refused").replace("\\\n", " "))
    assert words[:2] == ["./spark-submit.sh", "jobs/pipeline.py"]
    with pytest.raises(ConfigError) as error:
        pipeline_arguments("", words[2:])
    assert error.value.exit_code == CONFIG_EXIT
    assert f"sparktc: {error.value.heading}: {error.value}" == output("track-refused").strip()


def test_the_progress_lines_shown_are_sparktcs() -> None:
    """The page's example lines (in its prose), drawn by the functions the progress thread and the driver's loops
    call.
    """
    shown = re.findall(r"`(sparktc: (?:evaluate|LLSF) [^`]+)`", (REPO / "docs" / "scheduled-runs.md").read_text())
    jobs = [JobTasks(12, 4, 8, False, 30.0), JobTasks(13, 3, 7, False, 20.0), JobTasks(14, 5, 16, True, 125 * 5 / 11)]
    assert shown == [stage_line("evaluate", jobs, 100.0), loop_line("LLSF fold models over 5,000 terms", 3, 5, 132.0)]
