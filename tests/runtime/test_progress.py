"""Progress lines (sparktc.runtime.progress): their text, the log mode's rate limit, the terminal's in-place line,
off, the default in a process that never configured (a Spark worker's), the models' driver loops, and a stage's
line from Spark's status tracker.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from conftest import REPO
from scipy import sparse

from sparktc.runtime import classic, progress
from sparktc.runtime.progress import JobTasks, ProgressLine, duration, loop, loop_line, stage_line, time_left


class Clock:
    """A clock the test sets."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def progress_off(monkeypatch: pytest.MonkeyPatch):
    """Every test starts and ends with progress off and the real clock, as an unconfigured process has them, and
    not under a spark-submit.sh started on a terminal.
    """
    monkeypatch.delenv(progress.TERMINAL_ENV, raising=False)
    progress.configure("off", 10.0)
    yield
    progress.configure("off", 10.0)


def test_durations_and_the_time_left_at_the_mean_rate_so_far() -> None:
    assert [duration(s) for s in (0, 59.4, 65, 3599, 3725)] == ["0s", "59s", "1m05s", "59m59s", "1h02m"]
    assert time_left(0, 5, 30.0) is None
    assert time_left(2, 5, 10.0) == pytest.approx(15.0)  # 5 s a unit, 3 to go
    assert time_left(5, 5, 10.0) == 0.0


def test_a_loop_line_and_a_stage_line() -> None:
    assert loop_line("LLSF fold models", 2, 5, 10.0) == "sparktc: LLSF fold models 2/5  10s elapsed, ~15s left"
    assert loop_line("x", 0, 5, 3.0) == "sparktc: x 0/5  3s elapsed, time left unknown"
    jobs = [JobTasks(3, 8, 8, False, 40.0), JobTasks(5, 30, 200, True, 60.0), JobTasks(4, 1, 4, True, 9.0)]
    # the current job is the latest running (5): 60 s for 30 tasks, 170 to go: 340 s
    assert stage_line("train", jobs, 125.0) == ("sparktc: train     2m05s  tasks 39/212 (3 jobs so far)  "
                                                "job 5: 30/200, ~5m40s left")


def test_the_log_mode_prints_nothing_before_the_interval_then_at_most_once_an_interval() -> None:
    stream = io.StringIO()
    line = ProgressLine(in_place=False, interval=10.0, stream=stream, started=100.0)
    for now in (101, 109.9, 110, 112, 119.9, 120, 121, 135):
        line.show(f"at {now}", now)
    assert stream.getvalue().splitlines() == ["at 110", "at 120", "at 135"]
    line.hide()  # nothing to erase in a log
    assert stream.getvalue().count("\n") == 3 and "\r" not in stream.getvalue()


def test_a_loop_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(progress, "clock", clock)
    progress.configure("auto", 10.0, stream)  # not a terminal: appended lines
    with loop("summing", 6) as step:
        for now in (4, 8, 12, 16, 20, 24):  # a step every 4 s
            clock.now = now
            step()
    assert stream.getvalue().splitlines() == ["sparktc: summing 3/6  12s elapsed, ~12s left",
                                              "sparktc: summing 6/6  24s elapsed, ~0s left"]


def test_a_loop_on_a_terminal_rewrites_one_line_and_erases_it(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, terminal = Clock(), Terminal()
    monkeypatch.setattr(progress, "clock", clock)
    progress.configure("auto", 1.0, terminal)
    with loop("epochs", 4) as step:
        for now in (0.5, 1, 1.5, 2):
            clock.now = now
            step()
    erase = "\x1b[K"
    assert terminal.getvalue() == (f"\rsparktc: epochs 2/4  1s elapsed, ~1s left{erase}"
                                   f"\rsparktc: epochs 3/4  2s elapsed, ~0s left{erase}"
                                   f"\rsparktc: epochs 4/4  2s elapsed, ~0s left{erase}"
                                   f"\r{erase}")


@pytest.mark.parametrize(("terminal_env", "in_place"), [("1", True), ("0", False)])
def test_auto_takes_spark_submit_s_word_for_the_terminal(monkeypatch: pytest.MonkeyPatch, terminal_env: str,
                                                         in_place: bool) -> None:
    # Under spark-submit the driver writes into the JVM's pipe, never a terminal; spark-submit.sh says what that
    # pipe ends in.
    clock, piped = Clock(), io.StringIO()
    monkeypatch.setattr(progress, "clock", clock)
    monkeypatch.setenv(progress.TERMINAL_ENV, terminal_env)
    progress.configure("auto", 1.0, piped)
    with loop("epochs", 2) as step:
        clock.now = 2
        step()
    assert ("\r" in piped.getvalue()) is in_place
    assert piped.getvalue().startswith("\rsparktc: epochs 1/2" if in_place else "sparktc: epochs 1/2")


def test_cleared_erases_the_line_before_the_stage_summary(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    clock, terminal = Clock(), Terminal()
    monkeypatch.setattr(progress, "clock", clock)
    progress.configure("tty", 1.0, terminal)
    with loop("epochs", 4) as step:
        clock.now = 2
        step()
        with progress.cleared():
            print("summary")
        assert terminal.getvalue().endswith("\r\x1b[K")
        cleared = terminal.getvalue()
    assert terminal.getvalue() == cleared  # nothing left to erase at the end
    assert capsys.readouterr().out == "summary\n"


def notebook_shows(stream: str) -> list[str]:
    """The lines a notebook's output area shows of a stream, as Jupyter renders a carriage return (and as a terminal
    does): back to the line's start, the text after it overwriting as many characters, the rest left; escapes are
    not interpreted (a notebook has none).
    """
    lines = []
    for raw in stream.split("\n"):
        line = ""
        for piece in raw.split("\r"):
            line = piece + line[len(piece):]
        lines.append(line)
    return lines


@pytest.mark.parametrize(("shell", "in_place"), [(SimpleNamespace(kernel=object()), True), (None, False),
                                                 (SimpleNamespace(), False)])  # a kernel's, none, a terminal's
def test_in_a_notebook_s_kernel_auto_draws_one_line_in_place_with_spaces(monkeypatch: pytest.MonkeyPatch, shell: Any,
                                                                         in_place: bool) -> None:
    clock, cell = Clock(), io.StringIO()  # a kernel's stderr is no terminal
    monkeypatch.setattr(progress, "clock", clock)
    monkeypatch.setitem(sys.modules, "IPython", SimpleNamespace(get_ipython=lambda: shell))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # not installed: the line is text
    monkeypatch.setenv("COLUMNS", "30")  # a terminal's width, which a notebook's lines need not fit
    progress.configure("auto", 1.0, cell)
    longer, shorter = "sparktc: epochs 0/4  2s elapsed, time left unknown", "sparktc: epochs 1/4  3s elapsed, ~9s left"
    with loop("epochs", 4) as step:
        clock.now = 2
        step(0)
        clock.now = 3
        step()
        shown = notebook_shows(cell.getvalue())
    if not in_place:
        assert shown == [longer, shorter, ""]
        return
    assert shown == [shorter.ljust(len(longer))] and "\x1b" not in cell.getvalue()
    assert notebook_shows(cell.getvalue()) == [" " * len(longer)]  # erased at the loop's end


def test_in_a_notebook_s_kernel_with_ipywidgets_the_progress_is_one_widget_per_cell(monkeypatch: pytest.MonkeyPatch
                                                                                     ) -> None:
    """The widgets are ipywidgets' own (the test extra has the notebook extra's; outside a kernel they are made and
    updated, with no front end to draw them), shown once per cell and updated in place: nothing is written to the
    stream.
    """
    import ipywidgets  # noqa: F401  (imported before IPython is stood in for below: it imports IPython's modules)

    clock, cell, shown = Clock(), io.StringIO(), []
    shell = SimpleNamespace(kernel=object(), execution_count=1)
    monkeypatch.setattr(progress, "clock", clock)
    monkeypatch.setattr(progress, "_display", shown.append)
    monkeypatch.setitem(sys.modules, "IPython", SimpleNamespace(get_ipython=lambda: shell))
    progress.configure("auto", 1.0, cell)
    with loop("epochs", 4) as step:
        clock.now = 2
        step(0)
        clock.now = 3
        step()
        [box] = shown
        bar, label = box.children
        assert (bar.value, label.value) == (0.25, "sparktc: epochs 1/4  3s elapsed, ~9s left")
        assert box.layout.display is None
    assert box.layout.display == "none"  # hidden at the loop's end
    with loop("folds", 2) as step:  # the same cell: the same widget, shown again
        clock.now = 5
        step(2)
        assert shown == [box] and box.layout.display is None and bar.value == 1.0
        assert label.value.startswith("sparktc: folds 2/2")
    shell.execution_count = 2  # the next cell gets a widget of its own
    with loop("epochs", 3) as step:
        clock.now = 8
        step()
    assert len(shown) == 2 and shown[1] is not box and shown[1].children[0].value == pytest.approx(1 / 3)
    assert cell.getvalue() == ""


#: Two cells of a notebook: a driver loop's progress with ipywidgets, then as where it is not installed.
KERNEL_CELLS = ["""
import time
from sparktc.runtime import progress
progress.configure("auto", 0.1)
with progress.loop("epochs", 3) as step:
    for _ in range(3):
        time.sleep(0.2)
        step()
""", """
import sys
sys.modules["ipywidgets"] = None  # as where it is not installed
progress.configure("auto", 0.1)
with progress.loop("folds", 2) as step:
    for _ in range(2):
        time.sleep(0.2)
        step()
"""]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_in_a_kernel_a_loop_s_progress_is_one_widget_or_without_ipywidgets_one_line(tmp_path) -> None:
    """A real kernel (ipykernel, nbclient's): the widget is displayed once in its cell, nothing streamed; its state
    (nbclient keeps the widgets' last state) is the loop's end, hidden. Without ipywidgets the line is text in place.
    """
    import nbformat
    from conftest import run_in_kernel

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in KERNEL_CELLS])
    run_in_kernel(notebook, tmp_path, {**os.environ, "PYTHONPATH": str(REPO)})
    widget, text = (cell.outputs for cell in notebook.cells)
    [shown] = widget
    assert shown.output_type == "display_data" and WIDGET_VIEW in shown.data
    states = notebook.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    box = states[shown.data[WIDGET_VIEW]["model_id"]]["state"]
    bar, label = (states[child.removeprefix("IPY_MODEL_")]["state"] for child in box["children"])
    assert (bar["value"], label["value"][:len("sparktc: epochs 3/3 ")]) == (1.0, "sparktc: epochs 3/3 ")
    assert states[box["layout"].removeprefix("IPY_MODEL_")]["state"]["display"] == "none"  # the loop has ended
    assert {output.output_type for output in text} == {"stream"} and not any(WIDGET_VIEW in str(o) for o in text)
    drawn = "".join(output.text for output in text)
    assert "\rsparktc: folds 2/2" in drawn and "\n" not in drawn  # one line, rewritten in place


class NoSpark:
    """A session no watch may touch."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"progress off, yet the watch used spark.{name}")


def test_off_prints_nothing_and_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, terminal = Clock(), Terminal()
    monkeypatch.setattr(progress, "clock", clock)
    progress.configure("off", 1.0, terminal)
    threads = threading.active_count()
    with progress.stages(NoSpark())("train"):
        assert threading.active_count() == threads
        with loop("epochs", 3) as step:
            for now in (5, 10, 15):
                clock.now = now
                step()
    assert terminal.getvalue() == ""


def test_a_process_that_never_configured_prints_nothing() -> None:
    """A Spark worker running a model's loop (NNet's epochs in a task) never configured: off, not auto."""
    script = ("import itertools\n"
              "from sparktc.runtime import progress\n"
              "progress.clock = itertools.count(0, 100).__next__\n"
              "with progress.loop('epochs', 3) as step:\n"
              "    step(); step(); step()\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "" and result.stdout == ""


def test_a_refused_mode() -> None:
    with pytest.raises(ValueError, match="auto, tty, log, off"):
        progress.configure("verbose", 1.0)


class Tracker:
    """Spark's status tracker answering from tables (pyspark.StatusTracker's methods)."""

    def __init__(self, jobs: dict[int, tuple[list[int], str]], stages: dict[int, tuple[int, int]]):
        self.jobs, self.stages = jobs, stages

    def getJobInfo(self, job: int) -> Any:  # noqa: N802 - pyspark's name
        stage_ids, status = self.jobs[job]
        return type("Job", (), {"stageIds": stage_ids, "status": status})

    def getStageInfo(self, stage: int) -> Any:  # noqa: N802 - pyspark's name
        if stage not in self.stages:
            return None  # forgotten by Spark
        total, done = self.stages[stage]
        return type("Stage", (), {"numTasks": total, "numCompletedTasks": done})


def test_a_jobs_tasks_running_and_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker({1: ([1, 2], "RUNNING"), 2: ([3, 4], "SUCCEEDED")},
                      {1: (10, 10), 2: (4, 1), 3: (6, 6), 4: (8, 0)})
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    assert classic.stage_tasks(spark, 1) == (True, 11, 14)
    assert classic.stage_tasks(spark, 2) == (False, 6, 14)
    # On the line, a finished job's skipped stage (4: never ran) is not in its total.
    line, stop = ProgressLine(False, 0.01, io.StringIO(), 0.0), threading.Event()
    jobs = {1: classic.stage_tasks(spark, 1), 2: classic.stage_tasks(spark, 2)}
    shown: list[list[JobTasks]] = []
    monkeypatch.setattr(progress, "stage_line", lambda stage, tasks, elapsed: shown.append(tasks) or stop.set() or "")
    progress._watch("train", lambda: jobs, line, stop)
    assert [(job.done, job.total, job.running) for job in shown[0]] == [(11, 14, True), (6, 6, False)]


def test_a_job_that_has_ended_is_asked_for_its_tasks_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage's jobs at each poll: the tracker is asked for a running job's tasks every time, an ended job's
    (finished or failed) only until it is seen ended; a job of the stage's group from before is never counted.
    """
    tracker = Tracker({1: ([1], "SUCCEEDED"), 2: ([2], "RUNNING"), 3: ([3], "RUNNING")},
                      {1: (4, 4), 2: (4, 1), 3: (2, 0)})
    group = [1]  # job 1: another run's, in this session
    asked: list[int] = []
    real_stage_tasks = classic.stage_tasks
    monkeypatch.setattr(classic, "job_ids", lambda spark, stage: set(group))
    monkeypatch.setattr(classic, "stage_tasks", lambda spark, job: asked.append(job) or real_stage_tasks(spark, job))
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    with progress._jobs_of(spark, "train") as jobs:
        group += [2]
        assert jobs() == {2: (True, 1, 4)}
        tracker.jobs[2], tracker.stages[2] = ([2], "FAILED"), (4, 3)
        group += [3]
        assert jobs() == {2: (False, 3, 4), 3: (True, 0, 2)}
        tracker.stages[2] = (4, 4)  # never asked again
        assert jobs() == jobs() == {2: (False, 3, 4), 3: (True, 0, 2)}
    assert asked == [2, 2, 3, 3, 3]


def test_the_start_up_settings_are_read_once_per_spark_context() -> None:
    reads = []

    class Context:
        def getConf(self) -> Any:  # noqa: N802 - pyspark's name
            reads.append(1)
            return SimpleNamespace(getAll=lambda: [("spark.master", "local[2]"), ("spark.app.name", "t")])

    spark, other = SimpleNamespace(sparkContext=Context()), SimpleNamespace(sparkContext=Context())
    found = classic.settings(spark)
    found["spark.master"] = "changed by the caller"
    assert classic.settings(spark) == {"spark.master": "local[2]", "spark.app.name": "t"} and len(reads) == 1
    assert classic.settings(other) == classic.settings(spark) and len(reads) == 2


def test_nnet_counts_its_epochs_and_learns_what_scikit_learn_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    from sparktc.models.nnet import fit_network

    stream = io.StringIO()
    monkeypatch.setattr(progress, "clock", itertools.count(0, 100).__next__)  # every epoch 100 s after the last
    progress.configure("log", 1.0, stream)
    rng = np.random.default_rng(3)
    X = sparse.random(120, 20, density=0.3, random_state=3, format="csr")
    Y = rng.random((120, 3)) < 0.3
    network = fit_network(X, Y, np.arange(20), 6, 15, 1e-4, 1e-3, 7)
    lines = stream.getvalue().splitlines()
    assert len(lines) == network.iterations > 1
    assert lines[-1].startswith(f"sparktc: NNet epochs (at most) over 20 terms {network.iterations}/15 ")
    plain = MLPClassifier(hidden_layer_sizes=(6,), activation="logistic", solver="adam", alpha=1e-4,
                          learning_rate_init=1e-3, max_iter=15, random_state=7, shuffle=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain.fit(X, Y.astype(np.int64))
    np.testing.assert_array_equal(network.W1, plain.coefs_[0])
    np.testing.assert_array_equal(network.b2, plain.intercepts_[1])


def test_llsf_fold_models_count_their_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparktc.models.llsf import fold_models, gram_sums, llsf_weights

    stream = io.StringIO()
    monkeypatch.setattr(progress, "clock", itertools.count(0, 100).__next__)
    progress.configure("log", 1.0, stream)
    rng = np.random.default_rng(5)
    X, Y = rng.random((40, 6)), (rng.random((40, 2)) < 0.4).astype(float)
    fold = np.arange(40) % 4
    G, XY, _ = gram_sums(X, Y, fold, 4)
    models = fold_models(G, XY, 3)
    assert [line.split("  ")[0] for line in stream.getvalue().splitlines()] == [
        f"sparktc: LLSF fold models over 6 terms {f}/4" for f in range(1, 5)]
    kept = fold != 2  # fold 2's model, from the other folds' documents directly
    np.testing.assert_allclose(models[2], llsf_weights(X[kept].T @ X[kept], X[kept].T @ Y[kept], 3), atol=1e-10)


def test_a_stage_with_a_slow_job_prints_its_tasks(spark, capsys: pytest.CaptureFixture) -> None:
    from sparktc.runtime.stage_report import stage

    stream = io.StringIO()
    progress.configure("log", 0.5, stream)
    with progress.stages(spark)("slowtest"), stage(spark, "slowtest"):
        spark.sparkContext.parallelize(range(4), 4).foreach(lambda _: time.sleep(1.5))
    lines = stream.getvalue().splitlines()
    found = [re.fullmatch(r"sparktc: slowtest\s+\S+  tasks (\d)/4 \(1 job so far\)  job \d+: (\d)/4, .* left.*", line)
             for line in lines]
    assert lines and all(found), lines
    assert all(int(match[1]) == int(match[2]) <= 4 for match in found)
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("sparktc-progress")]
    assert capsys.readouterr().out.startswith("sparktc: slowtest  in")
