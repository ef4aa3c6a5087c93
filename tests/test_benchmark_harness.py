"""The RCV1-scale benchmark harness without Spark: the /proc sampler, stage segmentation, markdown tables."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from benchmarks import tables
from benchmarks.measure import (
    ProcessStat,
    Sample,
    TreeSampler,
    classify,
    cpu_ticks_between,
    descendants,
    parse_stat,
    read_processes,
    run_measured,
    segment_bounds,
    summarize_segments,
)
from benchmarks.rcv1_scale import median_record, plan_runs, slug, train_documents

MARKER = "sparktc-harness-test-child"
# Allocates and touches ~100 MB, burns ~0.2 s of CPU, says so, then sleeps until killed.
HOG = f"""
# {MARKER}
import time
block = bytearray(100 * 1024 * 1024)
for i in range(0, len(block), 4096):
    block[i] = 1
began = time.process_time()
while time.process_time() - began < 0.2:
    pass
print("ready", flush=True)
time.sleep(30)
"""


# --- /proc -----------------------------------------------------------------------------------

def test_parse_stat_takes_the_name_up_to_the_last_parenthesis():
    fields = ["S", "41"] + ["0"] * 9 + ["100", "20", "3", "4"] + ["0"] * 30
    parsed = parse_stat("1234 (a) (b)) " + " ".join(fields))
    assert parsed == ProcessStat(pid=1234, ppid=41, comm="a) (b)", own_ticks=120, children_ticks=7, start=0)
    assert parsed.ticks == 127
    fields[19] = "98765"
    assert parse_stat("7 (java) " + " ".join(fields)).start == 98765


def test_descendants_walks_children_by_parent_pid():
    table = {pid: ProcessStat(pid, ppid, "x", 0) for pid, ppid in [(1, 0), (10, 1), (11, 10), (12, 10), (13, 11),
                                                                    (20, 1), (21, 20)]}
    assert sorted(descendants(10, table)) == [10, 11, 12, 13]
    assert descendants(99, table) == []
    assert sorted(descendants([20, 11, 99, 21], table)) == [11, 13, 20, 21]


@pytest.mark.parametrize(("comm", "cmdline", "role"), [
    ("java", ("/usr/lib/jvm/java-17-openjdk-amd64/bin/java -cp /x/conf:/x/jars/* -Xmx2g "
              "org.apache.spark.deploy.SparkSubmit --master local[2] jobs/pipeline.py"), "jvm"),
    ("java", ("/usr/lib/jvm/java-17-openjdk-amd64/bin/java -Xmx128m -cp /x/jars/* org.apache.spark.launcher.Main "
              "org.apache.spark.deploy.SparkSubmit jobs/pipeline.py"), "other"),
    ("python", "/work/main/.venv/bin/python /work/main/jobs/pipeline.py --config conf/rcv1.toml", "python_driver"),
    ("python", "/work/main/.venv/bin/python -m pyspark.daemon pyspark.worker", "python_workers"),
    ("python3.11", "/usr/bin/python3.11 -m pyspark.worker", "python_workers"),
    ("bash", "bash ./spark-submit.sh --master local[2] jobs/pipeline.py --output runs/x", "other"),
    ("python", "/work/main/.venv/bin/python -c import sys", "other"),
])
def test_classify_names_the_role_of_each_process_of_a_run(comm, cmdline, role):
    assert classify(comm, cmdline, "jobs/pipeline.py") == role


def test_sampler_sees_the_memory_and_cpu_of_a_child_of_this_process():
    child = subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.PIPE, text=True)
    try:
        sampler = TreeSampler(os.getpid(), driver_script=MARKER)
        before = sampler.sample()
        assert child.stdout.readline().strip() == "ready"
        after = sampler.sample()
        child_ticks = read_processes()[child.pid].ticks
    finally:
        child.kill()
        child.wait()
    assert 95 <= after.rss_mb["python_driver"] < 400  # the child alone holds the role
    assert after.rss_mb["other"] > 10  # this test process: python, but not the driver script
    assert after.cpu_seconds - before.cpu_seconds >= 0.2
    assert child_ticks / os.sysconf("SC_CLK_TCK") >= 0.2
    assert after.processes >= 2 and [before, after] == sampler.samples



def fake_proc(root: Path, processes: list[tuple[int, int, str, str, int, int]]) -> str:
    """A /proc of (pid, ppid, comm, cmdline, own CPU ticks, RSS in MB) for the sampler to read."""
    for pid, ppid, comm, cmdline, ticks, rss_mb in processes:
        write_process(root, pid, ppid, comm, ticks, 0)
        (root / str(pid) / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode() + b"\0")
        (root / str(pid) / "statm").write_text(f"999 {rss_mb * 1024 * 1024 // os.sysconf('SC_PAGE_SIZE')} 0 0\n")
    return str(root)


def write_process(root: Path, pid: int, ppid: int, comm: str, own: int, children: int) -> None:
    """``root/PID/stat`` with utime = ``own``, cutime = ``children``, start time 1000 + pid."""
    fields = ["S", str(ppid)] + ["0"] * 9 + [str(own), "0", str(children), "0"] + ["0"] * 4 + [str(1000 + pid)]
    (root / str(pid)).mkdir(parents=True, exist_ok=True)
    (root / str(pid) / "stat").write_text(f"{pid} ({comm}) " + " ".join(fields + ["0"] * 20) + "\n")


def test_sampler_roles_skip_a_spawning_jvm_child_follow_orphans_and_keep_cpu(tmp_path: Path):
    java = "/usr/bin/java -cp jars/* org.apache.spark.deploy.SparkSubmit jobs/pipeline.py"
    daemon = "/venv/bin/python -m pyspark.daemon pyspark.worker"
    proc = fake_proc(tmp_path, [
        (1, 0, "init", "/sbin/init", 0, 1),
        (100, 1, "bash", "bash ./spark-submit.sh jobs/pipeline.py", 10, 3),
        (101, 100, "java", java, 1000, 1200),
        (102, 101, "java", java, 0, 1200),  # vfork-ed to run chmod: the JVM's own memory
        (103, 101, "python", "/venv/bin/python /repo/jobs/pipeline.py --output x", 200, 150),
        (104, 101, "python", daemon, 50, 40),
        (105, 104, "python", daemon, 300, 200),
        (106, 104, "python", daemon, 300, 210),
        (200, 1, "java", java, 5000, 3000),  # another user's Spark job: not in the tree
    ])
    tick = 1 / os.sysconf("SC_CLK_TCK")
    sampler = TreeSampler(100, "jobs/pipeline.py", proc=proc)
    first = sampler.sample()
    assert first.rss_mb == {"jvm": 1200, "python_driver": 150, "python_workers": 450, "other": 3}
    assert first.processes == 7 and first.cpu_seconds == pytest.approx(1860 * tick)
    # The workers end without the daemon waiting for them (they vanish with their time); the JVM has
    # reaped its chmod child; the daemon, re-parented to init, still belongs to the run and goes on.
    for pid in (102, 105, 106):
        shutil.rmtree(tmp_path / str(pid))
    write_process(tmp_path, 101, 100, "java", 1005, 0)
    write_process(tmp_path, 104, 1, "python", 80, 40)
    second = sampler.sample()
    assert second.processes == 4 and second.rss_mb["python_workers"] == 40 and second.rss_mb["jvm"] == 1200
    assert second.cpu_seconds == pytest.approx((1860 + 5 + 30) * tick)
    # bash reaps the JVM, which had reaped the driver and used 5 more ticks since it was last seen.
    for pid in (101, 103):
        shutil.rmtree(tmp_path / str(pid))
    write_process(tmp_path, 100, 1, "bash", 10, 1005 + 200 + 5)
    third = sampler.sample()
    assert third.processes == 2 and third.cpu_seconds == pytest.approx((1860 + 5 + 30 + 5) * tick)

def stat(pid: int, ppid: int, own: int, children: int = 0, start: int = 1) -> ProcessStat:
    return ProcessStat(pid, ppid, "p", own_ticks=own, children_ticks=children, start=start)


def test_cpu_ticks_between_counts_every_process_once():
    before = {1: stat(1, 0, 10), 2: stat(2, 1, 20), 3: stat(3, 2, 30)}
    # 1 reaped 2, which had reaped 3 and used 2 more ticks (3: 3 more); and a child too short-lived to be seen (9)
    after = {1: stat(1, 0, 11, children=(20 + 2) + (30 + 3) + 9)}
    assert cpu_ticks_between(before, after) == 1 + 2 + 3 + 9
    assert cpu_ticks_between({}, before) == 60  # first seen: all they have used
    assert cpu_ticks_between(before, {}) == 0  # vanished: they keep what was counted


def test_cpu_ticks_between_with_children_nobody_waited_for_and_recycled_pids():
    before = {1: stat(1, 0, 10), 4: stat(4, 1, 40), 5: stat(5, 0, 100)}
    # 4 ended without 1 waiting for it (SIGCHLD ignored): 1's children time does not grow, 4 keeps its 40
    after = {1: stat(1, 0, 12), 5: stat(5, 0, 4, start=2), 6: stat(6, 5, 1, children=2)}
    assert cpu_ticks_between(before, after) == 2 + 4 + 3  # 5 is a new process with a recycled pid

def test_run_measured_reads_stage_lines_as_they_come_and_times_the_tree(tmp_path: Path):
    code = dedent("""\
        import time
        began, wall = time.process_time(), time.monotonic()
        while time.process_time() - began < 0.2:
            pass
        print(f"sparktc: burn      in          3  out          2  set aside: x 1  [{time.monotonic() - wall:.2f} s]",
              flush=True)
        print("something else", flush=True)
        time.sleep(0.1)
        """)
    echoed: list[str] = []
    measured = run_measured([sys.executable, "-c", code], tmp_path, tmp_path / "log.txt", driver_script="-c",
                            interval=0.05, echo=echoed.append)
    assert measured.returncode == 0
    assert len(echoed) == 1 and echoed[0].startswith("sparktc: burn      in          3  out          2  set aside")
    assert (tmp_path / "log.txt").read_text().endswith("something else\n")
    assert measured.tail[-1] == "something else"
    assert 0.2 <= measured.cpu_seconds <= measured.seconds + 0.5
    names = [segment.name for segment in measured.segments()]
    assert names == ["startup", "burn", "shutdown"]
    burn = measured.segments()[1]
    assert burn.cpu_seconds >= 0.15 and burn.peak_rss_mb["python_driver"] > 5
    assert sum(s.wall_seconds for s in measured.segments()) == pytest.approx(measured.seconds)


def test_run_measured_reports_a_failing_command_with_its_output(tmp_path: Path):
    code = "import sys; print('\\n'.join(f'line {i}' for i in range(100))); sys.exit(3)"
    measured = run_measured([sys.executable, "-c", code], tmp_path, tmp_path / "log.txt", None, tail_lines=40)
    assert measured.returncode == 3
    assert measured.tail == [f"line {i}" for i in range(60, 100)]


# --- segmentation ----------------------------------------------------------------------------

EVENTS = [
    (1.0, "some log line"),
    (9.5, "sparktc: ingest    in     20,000  out     20,000  [4.5 s]"),
    (12.0, "sparktc: tokenize  in     20,000  out     19,990  set aside: empty 10  [2.4 s]"),
    (12.5, "not a stage: sparktc: in the middle"),
    (20.0, "sparktc: train     in        103  out        103  [7.0 s]"),
]


def test_segment_bounds_cut_the_run_at_the_stage_lines():
    assert segment_bounds(EVENTS, start=0.0, end=23.0) == [
        ("startup", 0.0, 5.0), ("ingest", 5.0, 9.5), ("tokenize", 9.5, 12.0), ("train", 12.0, 20.0),
        ("shutdown", 20.0, 23.0)]


def test_segment_bounds_without_stage_lines_and_with_a_stage_longer_than_the_run():
    assert segment_bounds([(1.0, "hello")], 0.0, 3.0) == [("run", 0.0, 3.0)]
    assert segment_bounds([(2.0, "sparktc: ingest in 1 out 1 [9.0 s]")], 0.5, 3.0) == [
        ("startup", 0.5, 0.5), ("ingest", 0.5, 2.0), ("shutdown", 2.0, 3.0)]


def sample(t: float, cpu: float, jvm: float, driver: float = 50.0, workers: float = 0.0) -> Sample:
    return Sample(t=t, cpu_seconds=cpu, rss_mb={"jvm": jvm, "python_driver": driver, "python_workers": workers,
                                                 "other": 1.0}, processes=4)


def test_summarize_segments_gives_cpu_differences_and_peak_rss_per_role():
    samples = [sample(0.2, 0.1, 100), sample(4.8, 3.0, 400), sample(6.0, 4.0, 700, workers=300),
               sample(9.5, 9.0, 650, workers=200), sample(11.0, 11.0, 900), sample(12.0, 12.5, 800),
               sample(20.0, 30.0, 1200, workers=500), sample(22.0, 31.0, 300)]
    segments = summarize_segments(segment_bounds(EVENTS, 0.0, 23.0), samples, final_cpu_seconds=32.0)
    assert [(s.name, s.wall_seconds, s.cpu_seconds, s.samples) for s in segments] == [
        ("startup", 5.0, 3.0, 2), ("ingest", 4.5, 6.0, 2), ("tokenize", 2.5, 3.5, 3), ("train", 8.0, 17.5, 2),
        ("shutdown", 3.0, 2.0, 2)]
    assert [s.peak_rss_mb["jvm"] for s in segments] == [400, 700, 900, 1200, 1200]
    assert [s.peak_rss_mb["python_workers"] for s in segments] == [0, 300, 200, 500, 500]
    assert segments[1].peak_rss_mb["total"] == 700 + 50 + 300 + 1


def test_a_segment_without_samples_takes_the_last_sample_before_it():
    segments = summarize_segments([("a", 0.0, 1.0), ("b", 1.0, 1.1)], [sample(0.5, 1.0, 300)])
    assert segments[1].peak_rss_mb["jvm"] == 300 and segments[1].samples == 0 and segments[1].cpu_seconds == 0.0


# --- plan and medians ------------------------------------------------------------------------

def test_plan_runs_every_size_on_the_first_master_and_the_speedup_sizes_on_all():
    assert plan_runs([40_000, 20_000], ["local[2]", "local[1]"], [20_000], 60_000, 2) == [
        (20_000, "local[2]", 1), (20_000, "local[2]", 2), (20_000, "local[1]", 1), (20_000, "local[1]", 2),
        (40_000, "local[2]", 1), (40_000, "local[2]", 2), (60_000, "local[2]", 1), (60_000, "local[2]", 2)]
    assert train_documents(804_414) == 23_149 and train_documents(100_000) == 2_878 and train_documents(100) == 3
    assert slug("local[2]") == "local2"


# --- tables ----------------------------------------------------------------------------------

def record(size: int, master: str, walls: list[float], end_to_end: float, jvm: float = 1500.0) -> dict:
    stages = {"startup": {"wall_seconds": 3.0, "cpu_seconds": 4.0, "peak_rss_mb": {"jvm": 300.0, "python_driver": 60.0,
                                                                                    "python_workers": 0.0}}}
    for index, (name, wall) in enumerate(zip(tables.STAGES, walls, strict=True)):
        stages[name] = {"wall_seconds": wall, "cpu_seconds": 1.5 * wall, "rows_in": 1000 * (index + 1),
                        "rows_out": 1000 * (index + 1), "peak_rss_mb": {"jvm": jvm - 10 * index, "python_driver": 120.0,
                                                                          "python_workers": 400.0 + index}}
    stages["shutdown"] = {"wall_seconds": 1.0, "cpu_seconds": 0.5, "peak_rss_mb": {"jvm": 900.0, "python_driver": 100.0,
                                                                                     "python_workers": 0.0}}
    return {"size": size, "master": master, "end_to_end_seconds": end_to_end, "cpu_seconds": 2 * end_to_end,
            "stages": stages, "peak_rss_mb": {"jvm": jvm, "python_driver": 120.0, "python_workers": 405.0,
                                              "total": jvm + 600},
            "metrics": {"micro_f1": 0.81234, "macro_f1": 0.61234}}


RESULT = {
    "command": ".venv/bin/python benchmarks/rcv1_scale.py --output runs/x",
    "machine": {"cores": 2, "memory_gb": 23.5, "cpu_model": "AMD EPYC", "python": "3.11.7", "java": "openjdk 17",
                "pyspark": "4.3.0", "spark_defaults": {"spark.driver.memory": "2g"}, "load_start": "0.10",
                "load_end": "1.50", "git": "commit abc1234"},
    "settings": {"sizes": [100_000, 804_414], "masters": ["local[2]", "local[1]"], "speedup_sizes": [804_414],
                 "peers_size": 804_414, "repeat": 1},
    "corpora": [{"size": 100_000, "train_documents": 2_878, "seconds": 20.0, "reused": False, "command": "synth 1"},
                {"size": 804_414, "train_documents": 23_149, "seconds": 150.0, "reused": True, "command": "synth 2"}],
    "runs": [],
    "pipelines": [record(100_000, "local[2]", [1, 2, 3, 4, 5, 6], 30.0),
                  record(804_414, "local[2]", [10, 20, 30, 40, 50, 60], 240.0),
                  record(804_414, "local[1]", [18, 38, 56, 78, 98, 116], 420.0, jvm=1800.0)],
    "peers": {
        "single_process": {"status": "ok", "end_to_end_seconds": 310.0, "peak_rss_mb": {"total": 5100.0},
                           "result": {"tool": "single-process", "steps": {"read": 100.0, "weight": 50.0, "train": 120.0,
                                                                          "predict": 20.0, "evaluate": 10.0},
                                      "total_seconds": 300.0, "micro_f1": 0.8, "macro_f1": 0.6, "peak_rss_mb": 5000.0}},
        "mllib": {"status": "ok", "end_to_end_seconds": 200.0, "peak_rss_mb": {"jvm": 1900.0, "python_driver": 90.0},
                  "result": {"tool": "MLlib LinearSVC", "categories_timed": 2, "categories_total": 100,
                             "seconds_per_category_mean": 15.0, "extrapolated_train_seconds": 1500.0,
                             "setup_seconds": 30.0,
                             "per_category": [{"category": "C15", "train_positives": 4000, "seconds": 14.0,
                                               "f1_mllib": 0.7, "f1_sparktc": 0.8},
                                              {"category": "E11", "train_positives": 30, "seconds": 16.0,
                                               "f1_mllib": 0.3, "f1_sparktc": 0.5}]}},
    },
}


def test_sizes_table():
    header = ("| documents | ingest | tokenize | weight | rank | train | evaluate | pipeline sum | end to end | "
              "micro-F1 | macro-F1 | × documents | × end to end |\n")
    assert tables.sizes_table(RESULT) == header + dedent("""\
        |---|---|---|---|---|---|---|---|---|---|---|---|---|
        | 100,000 | 1.0 | 2.0 | 3.0 | 4.0 | 5.0 | 6.0 | 21.0 | 30.0 | 0.8123 | 0.6123 | 1.00 | 1.00 |
        | 804,414 | 10.0 | 20.0 | 30.0 | 40.0 | 50.0 | 60.0 | 210.0 | 240.0 | 0.8123 | 0.6123 | 8.04 | 8.00 |""")
    assert tables.synthesis_line(RESULT) == (
        "Corpus synthesis, separate from the pipeline figures: 100,000 documents (2,878 training): 20.0 s; "
        "804,414 documents (23,149 training): 150.0 s (reused; time of its original synthesis).")


def test_largest_table():
    lines = tables.largest_table(RESULT).splitlines()
    assert lines[0] == "804,414 documents, local[2]:"
    assert lines[4] == "| startup | 3.0 | 4.0 | 1.33 | — | — | 300 | 60 | 0 |"
    assert lines[5] == "| ingest | 10.0 | 15.0 | 1.50 | 1,000 | 1,000 | 1,500 | 120 | 400 |"
    assert lines[10] == "| evaluate | 60.0 | 90.0 | 1.50 | 6,000 | 6,000 | 1,450 | 120 | 405 |"
    assert lines[11] == "| shutdown | 1.0 | 0.5 | 0.50 | — | — | 900 | 100 | 0 |"
    assert lines[12] == "| end to end | 240.0 | 480.0 | 2.00 | — | — | 1,500 | 120 | 405 |"


def test_speedup_table():
    assert tables.speedup_table(RESULT, 804_414) == dedent("""\
        804,414 documents:

        | stage | local[1] (s) | local[2] (s) | speed-up local[1] / local[2] |
        |---|---|---|---|
        | ingest | 18.0 | 10.0 | 1.80 |
        | tokenize | 38.0 | 20.0 | 1.90 |
        | weight | 56.0 | 30.0 | 1.87 |
        | rank | 78.0 | 40.0 | 1.95 |
        | train | 98.0 | 50.0 | 1.96 |
        | evaluate | 116.0 | 60.0 | 1.93 |
        | pipeline sum | 404.0 | 210.0 | 1.92 |
        | end to end | 420.0 | 240.0 | 1.75 |""")
    assert tables.speedup_table(RESULT, 100_000) == "100,000 documents: not run"


def test_peers_table_and_ratios():
    text = tables.peers_table(RESULT)
    assert ("| sparktc, local[2] | ingest 10.0, tokenize 20.0, weight 30.0, rank 40.0, train 50.0, evaluate 60.0 | "
            "50.0 (train stage) | 240.0 (end to end) | 0.8123 | 0.6123 | driver JVM 1,500, Python driver 120, "
            "Python workers 405 |") in text
    assert ("| single-process | read 100.0, weight 50.0, train 120.0, predict 20.0, evaluate 10.0 | 120.0 | "
            "300.0 (steps); 310.0 (command) | 0.8000 | 0.6000 | 5,000 (its own ru_maxrss); sampled 5,100 |") in text
    assert ("| MLlib LinearSVC, local[2] | setup 30.0; 2 of 100 categories fitted, mean 15.0 per category | "
            "1,500.0 (extrapolated to 100) | 200.0 (command, 2 categories) | — | — | driver JVM 1,900, "
            "Python driver 90 |") in text
    assert "| C15 | 4,000 | 14.0 | 0.7000 | 0.8000 |" in text
    assert "Mean F1 over these categories: MLlib 0.5000, sparktc 0.6500." in text
    assert text.endswith("- MLlib extrapolated training / sparktc train stage: 30.00\n"
                         "- single-process total / sparktc end to end: 1.25")


def test_targets_pass_and_miss():
    assert tables.targets_table(tables.check_targets(RESULT)) == dedent("""\
        | target | measured | result |
        |---|---|---|
        | end to end at 804,414 documents ≤ 180 s | 240.0 s | MISS |
        | driver JVM peak RSS at 804,414 documents ≤ 2,048 MB | 1,500 MB | PASS |
        | end to end at 804,414 ≤ 8.5 × end to end at 100,000 | 8.00 × | PASS |
        | MLlib extrapolated training / sparktc train stage ≥ 20 (at 804,414 documents) | 30.00 × | PASS |
        | sparktc end to end ≤ single-process total (at 804,414 documents) | single-process / sparktc = 1.25 | PASS |
        | end to end local[1] / local[2] ≥ 1.7 | 1.75 at 804,414 documents | PASS |""")


def test_targets_not_run_and_skipped_peers():
    small = copy.deepcopy(RESULT)
    small["settings"].update(sizes=[20_000], speedup_sizes=[20_000], peers_size=20_000)
    small["pipelines"] = [record(20_000, "local[2]", [1, 1, 1, 1, 1, 1], 12.0, jvm=700.0)]
    small["peers"] = {"single_process": {"status": "skipped", "reason": "benchmarks/single_process.py does not exist"},
                      "mllib": {"status": "skipped", "reason": "benchmarks/mllib_linearsvc.py does not exist"}}
    targets = tables.check_targets(small)
    assert [t["status"] for t in targets] == ["not run"] * 6
    assert targets[0]["measured"] == "not run (largest run: 20,000 documents, 12.0 s)"
    assert targets[1]["measured"] == "not run (largest run: 20,000 documents, 700 MB)"
    text = tables.render(small)
    assert "| single-process | benchmarks/single_process.py does not exist | — | — | — | — | — |" in text
    assert "20,000 documents: not run" in text  # no local[1] run at the speed-up size


def test_render_puts_everything_in_order():
    text = tables.render(RESULT)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# sparktc at RCV1-v2 scale (synthetic LYRL2004-format corpora)",
                        "## Table 1. Wall seconds per stage, local[2]",
                        "## Table 2. The largest run, segment by segment",
                        "## Table 3. Speed-up from a second core", "## Table 4. Peers", "## Targets", "## Commands"]
    assert "- Machine: 2 cores (os.cpu_count()), 23.5 GB RAM, CPU AMD EPYC" in text
    command = "`.venv/bin/python benchmarks/rcv1_scale.py --output runs/x`"
    assert f"- Command (run from the repository root): {command}" in text
    elsewhere = tables.machine_section({**RESULT, "cwd": "/home/me", "repository": "/work/main"})
    assert elsewhere.endswith(f"- Command (run from /home/me): {command}")


def test_median_record_of_repeats():
    runs = []
    for end_to_end, scale in ((30.0, 1.0), (36.0, 1.2), (33.0, 1.1)):
        run = record(100_000, "local[2]", [scale * w for w in (1, 2, 3, 4, 5, 6)], end_to_end)
        runs.append({**run, "repeat": len(runs) + 1, "run_dir": f"r{len(runs) + 1}"})
    median = median_record(runs)
    assert median["repeats"] == 3 and median["run_dirs"] == ["r1", "r2", "r3"]
    assert median["end_to_end_seconds"] == 33.0 and median["end_to_end_seconds_all"] == [30.0, 36.0, 33.0]
    assert median["stages"]["train"]["wall_seconds"] == pytest.approx(5.5)
    assert median["stages"]["train"]["peak_rss_mb"]["jvm"] == 1460.0
    assert median["metrics"]["micro_f1"] == 0.81234



def test_a_failing_command_is_an_error_naming_it_with_its_last_40_lines(tmp_path: Path, monkeypatch):
    from benchmarks import rcv1_scale

    code = "import sys; print('\\n'.join(f'line {i}' for i in range(100))); sys.exit(3)"
    with pytest.raises(rcv1_scale.HarnessError) as failure:
        rcv1_scale.measured([sys.executable, "-c", code], tmp_path / "logs" / "x.log", None)
    message = str(failure.value)
    assert "command failed with exit code 3" in message and str(tmp_path / "logs" / "x.log") in message
    assert "last 40 lines" in failure.value.detail and failure.value.detail.endswith("line 60\n" + "\n".join(
        f"line {i}" for i in range(61, 100)))
    assert "line 59" not in failure.value.detail


def test_a_missing_peer_script_is_skipped_with_a_message(tmp_path: Path, capsys):
    from benchmarks import rcv1_scale

    peer = rcv1_scale.run_peer("nothing", "benchmarks/no_such_peer.py", ["false"], tmp_path / "x.json", tmp_path, 10,
                               "benchmarks/no_such_peer.py")
    assert peer == {"status": "skipped", "reason": "benchmarks/no_such_peer.py does not exist yet: skipped", "size": 10}
    assert "benchmarks/no_such_peer.py does not exist yet" in capsys.readouterr().out
