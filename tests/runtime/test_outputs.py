"""The output directory (sparktc/runtime/outputs.py): never over an input or the user's files, one run at a time.

No Spark here: local outputs are checked and held before a session starts. Each refusal is
asserted with its whole message, and with what it leaves on disk (nothing written).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import REPO

from sparktc.runtime.outputs import INCOMPLETE, LOCK, MARKER, OutputBusyError, OutputError, check_output, claim


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    directory = tmp_path / "corpus"
    directory.mkdir()
    (directory / "train.jsonl").write_text('{"id": 1, "text": "t", "labels": [], "split": "train"}\n')
    return directory


def refusal(output: str, inputs: dict[str, str], kind: str = "run") -> str:
    with pytest.raises(OutputError) as caught:
        check_output(output, inputs, kind)
    return str(caught.value)


def test_an_output_inside_equal_to_or_around_an_input_is_refused(corpus: Path, tmp_path: Path) -> None:
    inputs = {"corpus.path": str(corpus)}
    assert refusal(str(corpus / "out"), inputs) == \
        f"--output {corpus}/out is inside corpus.path {corpus}; write outputs outside the run's inputs"
    assert refusal(str(corpus), inputs) == \
        f"--output {corpus} is inside corpus.path {corpus}; write outputs outside the run's inputs"
    # The parent of the corpus: publishing `documents` there once deleted a user's own folder.
    assert refusal(str(tmp_path), inputs) == \
        f"--output {tmp_path} contains corpus.path {corpus}; write outputs outside the run's inputs"
    stop_list = tmp_path / "lists" / "smart.stop"
    stop_list.parent.mkdir()
    stop_list.write_text("a\n")
    assert "contains tokenize.stop_list" in refusal(str(tmp_path / "lists"), {"tokenize.stop_list": str(stop_list)})
    assert check_output(str(tmp_path / "elsewhere"), inputs) == str(tmp_path / "elsewhere")


def test_paths_are_compared_after_resolving_symbolic_links(corpus: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(corpus)
    output = tmp_path / "link" / "out"
    assert refusal(str(output), {"corpus.path": str(corpus)}).startswith(
        f"--output {output} is inside corpus.path {corpus}")
    assert refusal(str(corpus / "out"), {"corpus.path": str(tmp_path / "link")}).startswith(
        f"--output {corpus}/out is inside corpus.path {corpus}")


def test_root_home_and_a_regular_file_are_refused(tmp_path: Path) -> None:
    assert refusal("/", {}) == "--output / is the root directory; give a directory of its own, e.g. runs/NAME"
    home = os.path.expanduser("~")
    assert refusal(home, {}) == f"--output {home} is a home directory; give a directory of its own, e.g. runs/NAME"
    regular = tmp_path / "results.txt"
    regular.write_text("mine")
    assert refusal(str(regular), {}) == \
        f"--output {regular} is an existing file, not a directory; give a directory path"


def test_a_non_empty_directory_that_is_not_sparktcs_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "documents").mkdir(parents=True)
    (mine / "notes.txt").write_text("keep")
    message = refusal(str(mine), {})
    assert message == (f"--output {mine} is not empty (documents, notes.txt) and is not a sparktc output directory (no "
                       ".sparktc file): sparktc never writes over files it did not write; "
                       "give a new or empty directory")
    with pytest.raises(OutputError, match="is not a sparktc output directory"):
        with claim(str(mine)):
            pass
    assert sorted(p.name for p in mine.iterdir()) == ["documents", "notes.txt"]  # not even a lock file


def test_an_empty_or_new_directory_becomes_sparktcs(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for output in (tmp_path / "empty", tmp_path / "new" / "run"):
        with claim(str(check_output(str(output), {}))) as held:
            assert held.staging == f"{output}/{INCOMPLETE}/{held.run_id}"
        assert json.loads((output / MARKER).read_text())["kind"] == "run"
        holder = json.loads((output / LOCK).read_text())
        assert holder["pid"] == os.getpid() and holder["run_id"] == held.run_id
        check_output(str(output), {})  # ours now, and not empty: accepted


def test_runs_of_one_process_in_one_second_have_distinct_run_ids(tmp_path: Path) -> None:
    # A notebook's loop of small runs: each claim is a run, and the history names its record by the run id.
    run_ids = []
    for name in ("a", "b", "c"):
        with claim(str(tmp_path / name)) as held:
            run_ids.append(held.run_id)
    assert len(set(run_ids)) == 3
    assert all(run_id.split("Z-", 1)[1].startswith(f"{os.uname().nodename}-{os.getpid()}") for run_id in run_ids)


def test_a_training_run_is_not_a_classify_output_and_the_reverse(tmp_path: Path) -> None:
    run, classified = tmp_path / "run", tmp_path / "classified"
    with claim(str(run), "run"):
        pass
    with claim(str(classified), "classify"):
        pass
    assert refusal(str(run), {}, "classify") == (
        f"--output {run} holds a training run (jobs/pipeline.py); writing classify outputs there would replace its "
        "files: give another directory")
    assert refusal(str(classified), {}, "run").startswith(f"--output {classified} holds a classify output;")


def test_a_second_run_on_a_held_output_is_refused_naming_the_holder(tmp_path: Path) -> None:
    output = str(tmp_path / "run")
    with claim(output) as held:
        with pytest.raises(OutputBusyError) as caught:
            with claim(output):
                pass
    assert str(caught.value) == (
        f"--output {output} is in use by run {held.run_id} (host {held.holder.host}, process {os.getpid()}, started "
        f"{held.holder.started}: {held.holder.command}); two runs never share an output: wait for it to finish, "
        "or give another --output")
    with claim(output):  # released at the end of the first run
        pass


def test_a_held_input_is_told_as_the_input_not_as_the_output(tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    with claim(run) as held:
        with pytest.raises(OutputBusyError) as caught:
            with claim(run, "run", reads="RUN"):  # as jobs/export_libsvm.py holds the run it reads
                pass
    assert str(caught.value) == (
        f"RUN {run} (an input of this job) is in use by run {held.run_id} (host {held.holder.host}, process "
        f"{os.getpid()}, started {held.holder.started}: {held.holder.command}), which may be writing it; wait for "
        "that job to finish, then run this command again")


HOLD = textwrap.dedent("""
    import sys, time
    from sparktc.runtime.outputs import claim
    with claim(sys.argv[1]) as held:
        print(held.run_id, flush=True)
        time.sleep(600)
""")


def test_a_killed_holder_leaves_no_stuck_lock_and_its_staging_is_removed(tmp_path: Path) -> None:
    output = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(output)], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        run_id = holder.stdout.readline().strip()
        (output / INCOMPLETE / run_id / "train").mkdir(parents=True)  # what it was staging
        with pytest.raises(OutputBusyError, match=f"in use by run {run_id} .*process {holder.pid}"):
            with claim(str(output)):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    deadline = time.monotonic() + 10
    while True:  # the kernel releases the lock with the process
        try:
            with claim(str(output)) as held:
                assert held.run_id != run_id and not (output / INCOMPLETE).exists()
            break
        except OutputBusyError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_on_a_hadoop_file_system_the_lock_is_a_lease(spark, tmp_path: Path) -> None:
    """``file://`` goes through Hadoop as ``hdfs://`` and ``s3a://`` do: a lock file created only if absent,
    renewed while held, taken over once not renewed for LEASE_SECONDS, removed at the end.
    """
    from sparktc.runtime import outputs

    output = tmp_path / "run"
    uri = f"file://{output}"
    with claim(uri, "run", spark) as held:
        assert json.loads((output / LOCK).read_text())["run_id"] == held.run_id
        with pytest.raises(OutputBusyError, match=f"in use by run {held.run_id} "):
            with claim(uri, "run", spark):
                pass
    assert not (output / LOCK).exists() and json.loads((output / MARKER).read_text())["kind"] == "run"
    (output / LOCK).write_text('{"run_id": "gone"}')  # a holder that stopped renewing its lease
    stale = time.time() - outputs.LEASE_SECONDS - 5
    os.utime(output / LOCK, (stale, stale))
    with claim(uri, "run", spark) as held:
        assert json.loads((output / LOCK).read_text())["run_id"] == held.run_id
    with pytest.raises(OutputError, match="holds a training run"):
        with claim(uri, "classify", spark):
            pass


@pytest.mark.parametrize("name", ["run[2]", "run{a,b}", "run*", "run?"])
def test_an_output_spark_would_read_as_a_glob_pattern_is_refused(tmp_path, name):
    with pytest.raises(OutputError, match=r"which Spark reads as a glob pattern when it reads the outputs back"):
        check_output(str(tmp_path / name), {})
    assert not (tmp_path / name).exists()


def test_link_or_copy_hard_links_a_local_tree_and_replaces_the_target(spark, tmp_path):
    from sparktc.runtime import storage

    source = tmp_path / "documents"
    (source / "split=train").mkdir(parents=True)
    (source / "split=train" / "part-0.parquet").write_bytes(b"abc")
    (source / "_SUCCESS").write_bytes(b"")
    target = tmp_path / "tokens"
    (target / "stale").mkdir(parents=True)  # an earlier attempt's leftovers go
    storage.link_or_copy(spark, str(source), str(target))
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == [
        "_SUCCESS", "split=train", "split=train/part-0.parquet"]
    linked = target / "split=train" / "part-0.parquet"
    assert linked.stat().st_ino == (source / "split=train" / "part-0.parquet").stat().st_ino  # no byte copied
    assert linked.read_bytes() == b"abc"
