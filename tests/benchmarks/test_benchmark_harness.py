"""The RCV1-scale benchmark harness without Spark: the /proc sampler, stage segmentation, markdown tables."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from benchmarks import harness_tables
from benchmarks.harness import CORPUS_FILES, failure_cause, relative, train_documents
from benchmarks.harness_measure import (
    CpuGroup,
    Sample,
    TreeSampler,
    classify,
    run_measured,
    segment_bounds,
    summarize_segments,
)
from benchmarks.rcv1_scale import (
    aggregate,
    median_record,
    memory_configuration,
    memory_summary,
    plain_corpus,
    plan_runs,
    slug,
)
from sparktc.runtime.usage import ProcessStat, cpu_ticks_between, descendants, parse_stat, read_processes
from sparktc.tracking import history_table

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


def test_run_measured_counts_in_its_cgroup_the_cpu_of_a_process_that_outlives_the_command(tmp_path: Path):
    """A child that the command leaves behind (as pyspark's workers outlive the JVM) is counted to its last moment:
    the command's own cpuacct group, read once the group is empty. wait4's rusage of the root cannot see it.
    """
    probe = CpuGroup.create(f"sparktc-test-probe-{os.getpid()}")
    if probe is None:
        pytest.skip("no writable cgroup v1 cpuacct hierarchy on this machine")
    probe.close()
    burn = "import time\nb = time.process_time()\nwhile time.process_time() - b < 0.6:\n    pass\n"
    code = dedent(f"""\
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", {burn!r}], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
        print("left a child behind", flush=True)
        """)
    measured = run_measured([sys.executable, "-c", code], tmp_path, tmp_path / "log.txt", None, interval=0.05)
    assert measured.returncode == 0 and measured.cpu_source == "cgroup"
    assert measured.cpu_seconds >= 0.6
    assert not any(path.name.startswith(f"sparktc-benchmark-{os.getpid()}-") for path in CpuGroup.ROOT.iterdir())


def test_plain_corpus_uncompresses_each_gzipped_file_once_and_links_the_rest(tmp_path: Path):
    import gzip

    source = tmp_path / "corpus-10"
    source.mkdir()
    texts = {}
    for index, name in enumerate(CORPUS_FILES):
        texts[name] = f".I {index}\n.W\nterm{index} other\n\n".encode() * (index + 1)
        (source / name).write_bytes(gzip.compress(texts[name]) if name.endswith(".gz") else texts[name])
    corpus = {"size": 10, "path": str(source), "reused": True}
    plain = plain_corpus(tmp_path, corpus)
    assert plain["path"] == str(tmp_path / "corpus-10-plain") and plain["form"] == "plain"
    for name in CORPUS_FILES:
        assert (tmp_path / "corpus-10-plain" / name.removesuffix(".gz")).read_bytes() == texts[name]
    made = (tmp_path / "corpus-10-plain" / CORPUS_FILES[0].removesuffix(".gz")).stat().st_mtime_ns
    assert plain_corpus(tmp_path, corpus) == plain  # a second run reuses the files it made
    assert (tmp_path / "corpus-10-plain" / CORPUS_FILES[0].removesuffix(".gz")).stat().st_mtime_ns == made


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


def test_the_memory_configuration_runs_memory_runs_times_in_a_row():
    plan = plan_runs([100_000, 804_414], ["local[2]", "local[1]"], [804_414], 804_414, 1, 3)
    assert plan == [(100_000, "local[2]", 1), (804_414, "local[2]", 1), (804_414, "local[2]", 2),
                    (804_414, "local[2]", 3), (804_414, "local[1]", 1)]
    assert memory_configuration([100_000, 804_414], ["local[2]", "local[1]"], [804_414], 804_414) == (
        804_414, "local[2]")
    # the largest size of the plan, wherever it comes from; never fewer runs than --repeat
    assert memory_configuration([2_000], ["local[2]"], [3_000], 1_000) == (3_000, "local[2]")
    assert plan_runs([2_000], ["local[2]"], [2_000], 2_000, 2, 1) == [(2_000, "local[2]", 1), (2_000, "local[2]", 2)]
    assert plan_runs([2_000, 4_000], ["local[2]"], [], 2_000, 2, 3) == [
        (2_000, "local[2]", 1), (2_000, "local[2]", 2), (4_000, "local[2]", 1), (4_000, "local[2]", 2),
        (4_000, "local[2]", 3)]


# --- tables ----------------------------------------------------------------------------------

def record(size: int, master: str, walls: list[float], end_to_end: float, jvm: float = 1500.0) -> dict:
    stages = {"startup": {"wall_seconds": 3.0, "cpu_seconds": 4.0, "peak_rss_mb": {"jvm": 300.0, "python_driver": 60.0,
                                                                                    "python_workers": 0.0}}}
    for index, (name, wall) in enumerate(zip(harness_tables.STAGES, walls, strict=True)):
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
                 "peers_size": 804_414, "repeat": 1, "memory_runs": 3, "memory_size": 804_414},
    "corpora": [{"size": 100_000, "train_documents": 2_878, "seconds": 20.0, "reused": False, "command": "synth 1"},
                {"size": 804_414, "train_documents": 23_149, "seconds": 150.0, "reused": True, "command": "synth 2"}],
    "runs": [],
    "pipelines": [record(100_000, "local[2]", [1, 2, 3, 4, 5, 6], 30.0),
                  {**record(804_414, "local[2]", [10, 20, 30, 40, 50, 60], 240.0), "repeats": 3,
                   "peak_rss_mb_max": {"jvm": 1620.0, "python_driver": 125.0, "python_workers": 410.0,
                                       "total": 2200.0}},
                  record(804_414, "local[1]", [18, 38, 56, 78, 98, 116], 420.0, jvm=1800.0)],
    "memory": {"size": 804_414, "master": "local[2]", "planned": 3, "completed": 3, "failed": 0,
               "jvm_peak_rss_mb": [1500.0, 1620.0, 1480.0], "jvm_peak_rss_mb_max": 1620.0,
               "end_to_end_seconds": [238.0, 240.0, 251.0], "end_to_end_seconds_median": 240.0, "failures": []},
    "peers": {
        "single_process": [
            {"status": "ok", "size": 100_000, "end_to_end_seconds": 50.0, "cpu_seconds": 40.0,
             "peak_rss_mb": {"total": 700.0}, "command": "lean 1",
             "result": {"tool": "lean single-process Python + LIBLINEAR", "steps": {"read": 20.0, "train": 20.0},
                        "total_seconds": 40.0, "cpu_seconds": 39.0, "micro_f1": 0.8121, "macro_f1": 0.6126,
                        "peak_rss_mb": 650.0}},
            {"status": "ok", "size": 804_414, "end_to_end_seconds": 310.0, "cpu_seconds": 330.0,
             "peak_rss_mb": {"total": 5100.0}, "command": "lean 2",
             "result": {"tool": "lean single-process Python + LIBLINEAR",
                        "steps": {"read": 100.0, "weight": 50.0, "train": 120.0, "predict": 20.0, "evaluate": 10.0},
                        "total_seconds": 300.0, "cpu_seconds": 320.0, "micro_f1": 0.8, "macro_f1": 0.6,
                        "peak_rss_mb": 5000.0}}],
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


def test_sizes_table_puts_sparktc_stages_beside_the_lean_peer():
    header = ("| documents | ingest | tokenize | weight | rank | train | evaluate | end to end | "
              "driver JVM peak RSS (MB) | Python workers peak RSS (MB) | micro-F1 | macro-F1 | peer end to end | "
              "peer peak RSS (MB) | peer micro-F1 | peer macro-F1 | sparktc / peer wall | sparktc / peer CPU |\n")
    assert harness_tables.sizes_table(RESULT) == header + "|" + "---|" * 18 + "\n" + (
        "| 100,000 | 1.0 / 1.5 | 2.0 / 3.0 | 3.0 / 4.5 | 4.0 / 6.0 | 5.0 / 7.5 | 6.0 / 9.0 | 30.0 / 60.0 | "
        "1,500 | 405 | "
        "0.8123 | 0.6123 | 50.0 / 40.0 | 650 | 0.8121 | 0.6126 | 0.60 | 1.50 |\n"
        "| 804,414 | 10.0 / 15.0 | 20.0 / 30.0 | 30.0 / 45.0 | 40.0 / 60.0 | 50.0 / 75.0 | 60.0 / 90.0 | "
        "240.0 / 480.0 | "
        "1,620 | 410 | 0.8123 | 0.6123 | 310.0 / 330.0 | 5,000 | 0.8000 | 0.6000 | 0.77 | 1.45 |")
    assert harness_tables.synthesis_line(RESULT) == (
        "Corpus synthesis, separate from the pipeline figures: 100,000 documents (2,878 training): 20.0 s; "
        "804,414 documents (23,149 training): 150.0 s (reused; time of its original synthesis).")


def test_sizes_table_rows_where_one_side_is_missing():
    partial = copy.deepcopy(RESULT)
    partial["peers"]["single_process"] = [
        {"status": "skipped", "size": 100_000, "reason": "benchmarks/lean_peer.py does not exist yet: skipped"},
        {**RESULT["peers"]["single_process"][1], "size": 400_000}]
    lines = harness_tables.sizes_table(partial).splitlines()
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| 100,000", "| 400,000", "| 804,414"]
    assert lines[2].endswith("| 0.8123 | 0.6123 | — | — | — | — | — | — |")  # no peer at 100,000
    assert lines[3] == "| 400,000 | " + "— | " * 11 + "310.0 / 330.0 | 5,000 | 0.8000 | 0.6000 | — | — |"
    assert lines[4].endswith("| 0.8123 | 0.6123 | — | — | — | — | — | — |")
    assert harness_tables.sizes_table({**RESULT, "pipelines": [], "peers": {}}) == "not run"


def test_memory_section():
    assert harness_tables.memory_section(RESULT) == (
        "Memory runs: 804,414 documents on local[2], 3 runs in a row: driver JVM peak RSS 1,500 / 1,620 / 1,480 MB "
        "(max 1,620 MB); end to end 238.0 / 240.0 / 251.0 s (median of the successful runs 240.0 s); no run failed.")
    oom = "out of memory: java.lang.OutOfMemoryError: Java heap space"
    failed = {**RESULT, "memory": {**RESULT["memory"], "completed": 2, "failed": 1, "jvm_peak_rss_mb": [1500.0, 2300.0],
                                   "jvm_peak_rss_mb_max": 2300.0, "end_to_end_seconds": [238.0, 90.0],
                                   "end_to_end_seconds_median": 238.0,
                                   "failures": [{"repeat": 2, "out_of_memory": True, "log": "logs/p-2.log",
                                                 "cause": oom}]}}
    assert harness_tables.memory_section(failed) == (
        "Memory runs: 804,414 documents on local[2], 2 runs in a row (2 of the 3 planned): driver JVM peak RSS "
        "1,500 / 2,300 MB (max 2,300 MB); end to end 238.0 / 90.0 (failed) s (median of the successful runs 238.0 s); "
        "1 failed: run 2: out of memory: java.lang.OutOfMemoryError: Java heap space (logs/p-2.log).")
    assert harness_tables.memory_section({**RESULT, "memory": None}) == "Memory runs: not run."


def test_largest_table():
    lines = harness_tables.largest_table(RESULT).splitlines()
    assert lines[0] == "804,414 documents, local[2]:"
    assert lines[4] == "| startup | 3.0 | 4.0 | 1.33 | — | — | 300 | 60 | 0 |"
    assert lines[5] == "| ingest | 10.0 | 15.0 | 1.50 | 1,000 | 1,000 | 1,500 | 120 | 400 |"
    assert lines[10] == "| evaluate | 60.0 | 90.0 | 1.50 | 6,000 | 6,000 | 1,450 | 120 | 405 |"
    assert lines[11] == "| shutdown | 1.0 | 0.5 | 0.50 | — | — | 900 | 100 | 0 |"
    assert lines[12] == "| end to end | 240.0 | 480.0 | 2.00 | — | — | 1,500 | 120 | 405 |"
    assert [harness_tables.count(v) for v in (2000.0, 2000, 1999.5, None)] == ["2,000", "2,000", "1,999.5", "—"]


def test_speedup_table():
    assert harness_tables.speedup_table(RESULT, 804_414) == dedent("""\
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
    assert harness_tables.speedup_table(RESULT, 100_000) == "100,000 documents: not run"


def test_peers_table_and_ratios():
    text = harness_tables.peers_table(RESULT)
    assert ("| sparktc, local[2] | ingest 10.0, tokenize 20.0, weight 30.0, rank 40.0, train 50.0, evaluate 60.0 | "
            "50.0 (train stage) | 240.0 (end to end) | 0.8123 | 0.6123 | driver JVM 1,500, Python driver 120, "
            "Python workers 405 |") in text
    assert ("| lean single-process Python (benchmarks/lean_peer.py) | read 100.0, weight 50.0, train 120.0, "
            "predict 20.0, evaluate 10.0 | 120.0 | 300.0 (steps); 310.0 (command) | 0.8000 | 0.6000 | "
            "5,000 (its own ru_maxrss); sampled 5,100 |") in text
    assert ("| MLlib LinearSVC, local[2] | setup 30.0; 2 of 100 categories fitted, mean 15.0 per category | "
            "1,500.0 (extrapolated to 100) | 200.0 (command, 2 categories) | — | — | driver JVM 1,900, "
            "Python driver 90 |") in text
    assert "| C15 | 4,000 | 14.0 | 0.7000 | 0.8000 |" in text
    assert "Mean F1 over these categories: MLlib 0.5000, sparktc 0.6500." in text
    assert text.endswith("- MLlib extrapolated training / sparktc train stage: 30.00\n"
                         "- sparktc end to end / lean peer command: 0.77\n"
                         "- sparktc CPU-seconds / lean peer CPU-seconds: 1.45")


def test_an_older_record_with_one_single_process_peer_still_renders():
    old = copy.deepcopy(RESULT)
    old["peers"]["single_process"] = {key: value for key, value in RESULT["peers"]["single_process"][1].items()
                                      if key != "size"}
    assert harness_tables.lean_peer(old, 804_414)["end_to_end_seconds"] == 310.0
    assert harness_tables.lean_peer(old, 100_000) is None
    assert harness_tables.peer_ratios(old)["sparktc_over_single_wall"] == pytest.approx(240 / 310)


def test_peer_figures_fall_back_on_the_peers_own_record():
    peer = copy.deepcopy(RESULT["peers"]["single_process"][1])
    del peer["end_to_end_seconds"], peer["cpu_seconds"], peer["result"]["peak_rss_mb"]
    assert harness_tables.peer_figures(peer) == {"wall": 300.0, "cpu": 320.0, "rss": 5100.0, "micro_f1": 0.8,
                                         "macro_f1": 0.6, "steps": 300.0}
    assert set(harness_tables.peer_figures({"status": "skipped"}).values()) == {None}
    assert set(harness_tables.peer_figures(None).values()) == {None}


TARGET_ROWS = [
    "| end to end at 804,414 documents ≤ 180 s | 240.0 s | MISS |",
    ("| driver JVM peak RSS ≤ 2,048 MB on every one of the 3 memory runs at 804,414 documents (local[2]), "
     "no failed run | max 1,620 MB over 3 runs (1,500 / 1,620 / 1,480 MB), none failed | PASS |"),
    "| end to end at 804,414 ≤ 8.5 × end to end at 100,000 | 8.00 × | PASS |",
    "| MLlib extrapolated training / sparktc train stage ≥ 20 (at 804,414 documents) | 30.00 × | PASS |",
    ("| sparktc end to end on local[2] ≤ 1.5 × the lean peer's wall time at 804,414 documents (aim 0.8) | "
     "sparktc / peer = 0.77 (240.0 s / 310.0 s); aim 0.8: reached | PASS |"),
    ("| sparktc CPU-seconds (whole process tree) ≤ 2.5 × the lean peer's at 804,414 documents (aim 1.5) | "
     "sparktc / peer = 1.45 (480.0 CPU-s / 330.0 CPU-s); aim 1.5: reached | PASS |"),
    ("| micro- and macro-F1 each within 0.001 of the lean peer's at 804,414 documents | "
     "micro 0.8123 vs 0.8000 (Δ +0.0123), macro 0.6123 vs 0.6000 (Δ +0.0123) | MISS |"),
    "| end to end local[1] / local[2] ≥ 1.6 | 1.75 at 804,414 documents | PASS |",
    "| ingest local[1] / local[2] ≥ 1.7 | 1.80 at 804,414 documents | PASS |",
    "| weight local[1] / local[2] ≥ 1.7 | 1.87 at 804,414 documents | PASS |",
    "| train local[1] / local[2] ≥ 1.7 | 1.96 at 804,414 documents | PASS |",
    "| evaluate local[1] / local[2] ≥ 1.7 | 1.93 at 804,414 documents | PASS |",
    "| CPU-seconds per document past 804,414 documents ≤ 1.1 × at 804,414 | not run | not run |",
    "| driver JVM peak RSS past 804,414 documents ≤ 2,048 MB | not run | not run |",
]


def test_targets_pass_and_miss():
    assert harness_tables.targets_table(harness_tables.check_targets(RESULT)) == (
        "| target | measured | result |\n|---|---|---|\n" + "\n".join(TARGET_ROWS))


def with_peer(result: dict, **changes) -> dict:
    """``result`` with the lean peer's figures at 804,414 documents changed (wall, cpu, micro_f1, macro_f1)."""
    changed = copy.deepcopy(result)
    peer = changed["peers"]["single_process"][1]
    peer.update({key: changes[key] for key in ("end_to_end_seconds", "cpu_seconds") if key in changes})
    peer["result"].update({key: changes[key] for key in ("micro_f1", "macro_f1") if key in changes})
    return changed


def targets_by_name(result: dict) -> dict:
    names = ["end to end", "memory", "scaling", "mllib", "peer wall", "peer cpu", "f1", "speed-up",
             *(f"{stage} speed-up" for stage in harness_tables.SPEEDUP_STAGES), "cpu per document", "driver past rcv1"]
    return dict(zip(names, harness_tables.check_targets(result), strict=True))


def test_peer_targets_pass_and_miss_at_their_limits():
    # 240 / 160 = 1.5 exactly: PASS; 480 / 192 = 2.5 exactly: PASS; F1 differences of 0.001 exactly: PASS
    at_limits = targets_by_name(with_peer(RESULT, end_to_end_seconds=160.0, cpu_seconds=192.0, micro_f1=0.81134,
                                          macro_f1=0.61334))
    assert [at_limits[name]["status"] for name in ("peer wall", "peer cpu", "f1")] == ["PASS"] * 3
    assert at_limits["f1"]["measured"] == "micro 0.8123 vs 0.8113 (Δ +0.0010), macro 0.6123 vs 0.6133 (Δ -0.0010)"
    assert at_limits["f1"]["value"] == pytest.approx(0.001)
    fast = targets_by_name(with_peer(RESULT, end_to_end_seconds=300.0))
    assert fast["peer wall"]["measured"] == "sparktc / peer = 0.80 (240.0 s / 300.0 s); aim 0.8: reached"
    # just over each limit: MISS
    over = targets_by_name(with_peer(RESULT, end_to_end_seconds=159.0, cpu_seconds=191.0, micro_f1=0.81234,
                                     macro_f1=0.6112))
    assert [over[name]["status"] for name in ("peer wall", "peer cpu", "f1")] == ["MISS"] * 3
    assert over["peer wall"]["value"] == pytest.approx(240 / 159)
    assert over["peer cpu"]["measured"] == "sparktc / peer = 2.51 (480.0 CPU-s / 191.0 CPU-s); aim 1.5: not yet"
    assert over["f1"]["measured"] == "micro 0.8123 vs 0.8123 (Δ +0.0000), macro 0.6123 vs 0.6112 (Δ +0.0011)"


def test_speed_up_targets_per_stage_and_past_rcv1():
    slow_train = copy.deepcopy(RESULT)
    slow_train["pipelines"][2]["stages"]["train"]["wall_seconds"] = 84.0  # 84 / 50 = 1.68 < 1.7
    targets = targets_by_name(slow_train)
    assert targets["train speed-up"]["status"] == "MISS" and targets["train speed-up"]["value"] == pytest.approx(1.68)
    assert targets["speed-up"]["status"] == "PASS"
    bigger = copy.deepcopy(RESULT)
    # 4 x the documents at 4.4 x the CPU-seconds: per document 1.1 x exactly, PASS; the driver at 2,100 MB: MISS
    bigger["pipelines"].append({**record(3_217_656, "local[2]", [1, 2, 3, 4, 5, 6], 1000.0, jvm=2100.0),
                                "cpu_seconds": 480.0 * 4 * 1.1 * 3_217_656 / (4 * 804_414)})
    targets = targets_by_name(bigger)
    assert targets["cpu per document"]["status"] == "PASS"
    assert targets["cpu per document"]["target"] == \
        "CPU-seconds per document at 3,217,656 documents ≤ 1.1 × at 804,414"
    assert targets["cpu per document"]["measured"] == "1.10 × (656.4 against 596.7 CPU-µs per document)"
    assert targets["driver past rcv1"]["status"] == "MISS" and targets["driver past rcv1"]["measured"] == "2,100 MB"


def test_memory_target_pass_miss_and_not_run():
    def memory(**changes) -> dict:
        return targets_by_name({**RESULT, "memory": {**RESULT["memory"], **changes}})["memory"]

    assert memory()["status"] == "PASS" and memory()["value"] == 1620.0
    over = memory(jvm_peak_rss_mb=[1500.0, 2100.0, 1480.0], jvm_peak_rss_mb_max=2100.0)
    assert over["status"] == "MISS"
    assert over["measured"] == "max 2,100 MB over 3 runs (1,500 / 2,100 / 1,480 MB), none failed"
    assert memory(jvm_peak_rss_mb=[2048.0] * 3, jvm_peak_rss_mb_max=2048.0)["status"] == "PASS"
    failed = memory(failed=1, failures=[{"repeat": 3, "out_of_memory": True, "log": "x",
                                         "cause": "out of memory: java.lang.OutOfMemoryError: Java heap space"}])
    assert failed["status"] == "MISS"  # within the limit, but one run failed
    assert failed["measured"] == ("max 1,620 MB over 3 runs (1,500 / 1,620 / 1,480 MB), 1 failed (out of memory: "
                                  "java.lang.OutOfMemoryError: Java heap space)")
    # the benchmark stopped after two runs: not every run was checked
    partial = memory(completed=2, jvm_peak_rss_mb=[1500.0, 1620.0])
    assert partial["status"] == "not run"
    assert partial["measured"] == "max 1,620 MB over 2 of 3 runs (1,500 / 1,620 MB), none failed"
    assert memory(completed=2, jvm_peak_rss_mb=[1500.0, 2500.0], jvm_peak_rss_mb_max=2500.0)["status"] == "MISS"
    assert memory(completed=0, jvm_peak_rss_mb=[], jvm_peak_rss_mb_max=None)["measured"] == "not run"
    elsewhere = memory(size=400_000)
    assert elsewhere["status"] == "not run" and elsewhere["value"] is None
    assert elsewhere["measured"] == ("not run (memory runs at 400,000 documents: max 1,620 MB over 3 runs "
                                     "(1,500 / 1,620 / 1,480 MB), none failed)")
    no_record = targets_by_name({key: value for key, value in RESULT.items() if key != "memory"})["memory"]
    assert no_record["status"] == "not run" and "every one of the 3 memory runs" in no_record["target"]


def test_targets_not_run_and_skipped_peers():
    small = copy.deepcopy(RESULT)
    small["settings"].update(sizes=[20_000], speedup_sizes=[20_000], peers_size=20_000, memory_size=20_000)
    small["pipelines"] = [record(20_000, "local[2]", [1, 1, 1, 1, 1, 1], 12.0, jvm=700.0)]
    small["memory"] = {"size": 20_000, "master": "local[2]", "planned": 3, "completed": 3, "failed": 0,
                       "jvm_peak_rss_mb": [700.0, 690.0, 710.0], "jvm_peak_rss_mb_max": 710.0,
                       "end_to_end_seconds": [12.0, 11.0, 13.0], "end_to_end_seconds_median": 12.0, "failures": []}
    small["peers"] = {"single_process": [{"status": "skipped", "size": 20_000,
                                          "reason": "benchmarks/lean_peer.py does not exist"}],
                      "mllib": {"status": "skipped", "reason": "benchmarks/mllib_linearsvc.py does not exist"}}
    targets = harness_tables.check_targets(small)
    assert [t["status"] for t in targets] == ["not run"] * 14
    assert targets[0]["measured"] == "not run (largest run: 20,000 documents, 12.0 s)"
    assert targets[1]["measured"] == ("not run (memory runs at 20,000 documents: max 710 MB over 3 runs "
                                      "(700 / 690 / 710 MB), none failed)")
    assert [t["measured"] for t in targets[4:7]] == ["not run"] * 3  # no peer anywhere
    text = harness_tables.render(small)
    peer_row = "| lean single-process Python (benchmarks/lean_peer.py) | benchmarks/lean_peer.py does not exist | — |"
    assert peer_row in text
    assert "20,000 documents: not run" in text  # no local[1] run at the speed-up size
    # With the peer at 20,000 documents, the peer targets stay "not run" but show the figures there.
    small["peers"]["single_process"] = [{**RESULT["peers"]["single_process"][0], "size": 20_000}]
    targets = harness_tables.check_targets(small)
    assert [t["status"] for t in targets] == ["not run"] * 14
    assert targets[4]["measured"] == "not run (at 20,000 documents: sparktc / peer = 0.24 (12.0 s / 50.0 s))"
    assert targets[5]["measured"] == "not run (at 20,000 documents: sparktc / peer = 0.60 (24.0 CPU-s / 40.0 CPU-s))"
    assert targets[6]["measured"] == ("not run (at 20,000 documents: micro 0.8123 vs 0.8121 (Δ +0.0002), "
                                      "macro 0.6123 vs 0.6126 (Δ -0.0003))")


def test_peer_targets_not_run_when_sparktc_failed_every_memory_run():
    failed = copy.deepcopy(RESULT)
    failed["pipelines"] = [p for p in failed["pipelines"] if (p["size"], p["master"]) != (804_414, "local[2]")]
    targets = targets_by_name(failed)
    assert [targets[name]["status"] for name in ("peer wall", "peer cpu", "f1")] == ["not run"] * 3
    assert targets["peer wall"]["measured"] == "not run (at 100,000 documents: sparktc / peer = 0.60 (30.0 s / 50.0 s))"


def test_render_puts_everything_in_order():
    text = harness_tables.render(RESULT)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# sparktc at RCV1-v2 scale (synthetic LYRL2004-format corpora)",
                        "## Table 1. Sizes × stages: sparktc on local[2] beside the lean single-process Python "
                        "(benchmarks/lean_peer.py)",
                        "## Table 2. The largest run, segment by segment",
                        "## Table 3. Speed-up from a second core", "## Table 4. Peers",
                        "## Table 5. Scaling projection", "## Targets", "## Commands"]
    assert "- Machine: 2 cores (os.cpu_count()), 23.5 GB RAM, CPU AMD EPYC" in text
    command = "`.venv/bin/python benchmarks/rcv1_scale.py --output runs/x`"
    assert f"- Command (run from the repository root): {command}" in text
    elsewhere = harness_tables.machine_section({**RESULT, "cwd": "/home/me", "repository": "/work/main"})
    assert elsewhere.endswith(f"- Command (run from /home/me): {command}")
    assert "Times are medians over the runs (3 at 804,414 documents on local[2]), peak RSS the largest" in text
    assert harness_tables.memory_section(RESULT) in text and harness_tables.sizes_table(RESULT) in text
    assert "\n".join(TARGET_ROWS) in text
    assert text.endswith("- lean peer 100,000: `lean 1`\n- lean peer 804,414: `lean 2`\n")


def test_scaling_section_replays_each_log_at_the_other_runs_cores_against_their_measured_walls():
    def projection(cores: int, measured: float, walls: dict[int, float]) -> dict:
        total = {"stage": "total", "tasks": 9, "task_seconds": 12.0, "driver_seconds": 3.0,
                 "walls": {str(n): wall for n, wall in walls.items()}}
        return {"application_seconds": measured, "cores": cores, "lines": [{**total, "stage": "ingest"}, total]}

    result = copy.deepcopy(RESULT)
    for record in result["pipelines"]:
        if record["size"] == 804_414:
            record["scaling"] = (projection(2, 40.0, {1: 66.0, 2: 41.0, 4: 30.0, 16: 25.0, 64: 25.0})
                                 if record["master"] == "local[2]" else
                                 projection(1, 60.0, {1: 61.0, 2: 44.0, 4: 33.0, 16: 28.0, 64: 28.0}))
    text = harness_tables.scaling_section(result)
    assert text.startswith("804,414 documents, the local[2] run's event log replayed:")
    assert "| total | 9 | 12.0 | 3.0 | 66.0 | 41.0 | 30.0 | 25.0 | 25.0 |" in text
    assert "| local[2] log at 1 core | local[1] | 60.0 | 66.0 | +10.0% |" in text
    assert "| local[1] log at 2 cores | local[2] | 40.0 | 44.0 | +10.0% |" in text
    assert "| local[2] log at 2 cores | local[2] | 40.0 | 41.0 | +2.5% |" in text
    assert harness_tables.scaling_section(RESULT) == "not run (run the harness with --event-logs)"


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
    runs[1]["peak_rss_mb"] = {**runs[1]["peak_rss_mb"], "jvm": 1900.0}
    median = median_record(runs)
    assert median["peak_rss_mb"]["jvm"] == 1500.0 and median["peak_rss_mb_max"]["jvm"] == 1900.0


def failed_run(size: int, master: str, repeat: int, jvm: float, seconds: float) -> dict:
    return {"size": size, "master": master, "repeat": repeat, "failed": True, "out_of_memory": True,
            "cause": "out of memory: java.lang.OutOfMemoryError: Java heap space", "log": f"logs/{repeat}.log",
            "end_to_end_seconds": seconds, "cpu_seconds": 2 * seconds, "peak_rss_mb": {"jvm": jvm, "total": jvm + 100}}


def test_failed_runs_stay_out_of_the_medians_and_count_in_the_memory_summary():
    runs = [{**record(804_414, "local[2]", [1, 2, 3, 4, 5, 6], 240.0, jvm=1500.0), "repeat": 1, "run_dir": "r1"},
            failed_run(804_414, "local[2]", 2, 2300.0, 90.0),
            {**record(804_414, "local[2]", [1, 2, 3, 4, 5, 6], 250.0, jvm=1700.0), "repeat": 3, "run_dir": "r3"},
            {**record(804_414, "local[1]", [1, 2, 3, 4, 5, 6], 400.0, jvm=1800.0), "repeat": 1, "run_dir": "q1"}]
    medians = aggregate(runs)
    assert [(m["size"], m["master"], m["repeats"]) for m in medians] == [
        (804_414, "local[2]", 2), (804_414, "local[1]", 1)]
    assert medians[0]["end_to_end_seconds"] == 245.0 and medians[0]["peak_rss_mb_max"]["jvm"] == 1700.0
    assert memory_summary(runs, 804_414, "local[2]", 3) == {
        "size": 804_414, "master": "local[2]", "planned": 3, "completed": 3, "failed": 1,
        "jvm_peak_rss_mb": [1500.0, 2300.0, 1700.0], "jvm_peak_rss_mb_max": 2300.0,
        "end_to_end_seconds": [240.0, 90.0, 250.0], "end_to_end_seconds_median": 245.0,
        "failures": [{"repeat": 2, "out_of_memory": True, "cause": "out of memory: java.lang.OutOfMemoryError: "
                      "Java heap space", "log": "logs/2.log"}]}
    nothing = memory_summary([], 804_414, "local[2]", 3)
    assert nothing["completed"] == 0 and nothing["jvm_peak_rss_mb_max"] is None
    assert nothing["end_to_end_seconds_median"] is None
    # the summary and the target agree
    target = harness_tables.memory_target({**RESULT, "memory": memory_summary(runs, 804_414, "local[2]", 3)})
    assert target["status"] == "MISS" and target["value"] == 2300.0


@pytest.mark.parametrize(("returncode", "output", "expected"), [
    (1, "INFO x\njava.lang.OutOfMemoryError: Java heap space\n\tat x", (True, "out of memory: "
                                                                        "java.lang.OutOfMemoryError: Java heap space")),
    (1, "Traceback\nMemoryError\n", (True, "out of memory: MemoryError")),
    (-9, "INFO nothing special", (True, "killed by SIGKILL (exit code -9; the kernel's out-of-memory killer, "
                                        "presumably)")),
    (137, "", (True, "killed by SIGKILL (exit code 137; the kernel's out-of-memory killer, presumably)")),
    (2, "sparktc: error: no such corpus", (False, "exit code 2")),
])
def test_failure_cause(returncode, output, expected):
    assert failure_cause(returncode, output) == expected



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


def test_a_failed_memory_run_is_recorded_and_any_other_failure_stops(tmp_path: Path, monkeypatch):
    from benchmarks import harness, rcv1_scale
    from benchmarks.harness_measure import Measured

    def fake_run_measured(command, cwd, log, driver_script, **options):
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("sparktc: ingest in 5 out 5 [1.0 s]\njava.lang.OutOfMemoryError: Java heap space\nbye\n")
        return Measured(command=list(command), returncode=1, start=10.0, end=15.5, events=[],
                        samples=[sample(11.0, 1.0, 900.0), sample(15.0, 4.0, 2100.0, workers=300.0)],
                        tail=["java.lang.OutOfMemoryError: Java heap space", "bye"], cpu_seconds=4.5)

    monkeypatch.setattr(harness, "run_measured", fake_run_measured)
    corpus = {"size": 2_000, "path": str(tmp_path / "corpus-2000")}
    run = rcv1_scale.run_pipeline(tmp_path, corpus, "local[2]", 2, tolerate_failure=True)
    assert run["failed"] is True and run["out_of_memory"] is True and run["returncode"] == 1
    assert run["cause"] == "out of memory: java.lang.OutOfMemoryError: Java heap space"
    assert run["end_to_end_seconds"] == 5.5 and run["cpu_seconds"] == 4.5
    assert run["peak_rss_mb"]["jvm"] == 2100.0 and run["peak_rss_mb"]["python_workers"] == 300.0
    assert run["log"] == str(tmp_path / "logs" / "pipeline-2000-local2-2.log")
    assert "command failed with exit code 1" in run["error"]
    with pytest.raises(rcv1_scale.HarnessError, match="command failed with exit code 1"):
        rcv1_scale.run_pipeline(tmp_path, corpus, "local[2]", 1)


def test_parallelism_plans_every_run_for_that_many_cores_and_adds_local_n_where_the_machine_has_them(
        tmp_path: Path, monkeypatch):
    from benchmarks import harness, rcv1_scale
    from benchmarks.harness_measure import Measured

    commands = []

    def fake_run_measured(command, cwd, log, driver_script, **options):
        commands.append(list(command))
        return Measured(command=list(command), returncode=1, start=0.0, end=1.0, events=[], samples=[], tail=[],
                        cpu_seconds=1.0)

    monkeypatch.setattr(harness, "run_measured", fake_run_measured)
    rcv1_scale.run_pipeline(tmp_path, {"size": 10, "path": str(tmp_path)}, "local[2]", 1, tolerate_failure=True,
                            parallelism=16)
    assert commands[0][:6] == ["./spark-submit.sh", "--master", "local[2]", "--conf", "spark.default.parallelism=16",
                               "jobs/pipeline.py"]
    for machine_cores, masters in ((2, ["local[2]", "local[1]"]), (16, ["local[2]", "local[1]", "local[16]"])):
        monkeypatch.setattr(rcv1_scale.os, "cpu_count", lambda cores=machine_cores: cores)
        arguments = rcv1_scale.parse_arguments(["--output", str(tmp_path), "--parallelism", "16"])
        assert arguments.masters == masters and arguments.parallelism == 16
    with pytest.raises(SystemExit):
        rcv1_scale.parse_arguments(["--output", str(tmp_path), "--parallelism", "-1"])


def test_main_runs_the_lean_peer_at_every_size_and_the_memory_runs_in_a_row(tmp_path: Path, monkeypatch):
    from benchmarks import harness, rcv1_scale

    calls = []

    def fake_corpus(output, size, master, hierarchy):
        calls.append(("corpus", size))
        return {"size": size, "path": str(output / f"corpus-{size}"), "train_documents": size // 30, "seconds": 1.0,
                "reused": False, "command": f"synth {size}"}

    def fake_pipeline(output, corpus, master, repeat, tolerate_failure=False, event_logs=False, parallelism=0):
        size = corpus["size"]
        calls.append(("pipeline", size, master, repeat, tolerate_failure))
        if (size, master, repeat) == (40_000, "local[2]", 2):
            return {**failed_run(size, master, repeat, 2300.0, 9.0), "command": "pipeline failed"}
        run = record(size, master, [1, 2, 3, 4, 5, 6], 20.0 + repeat, jvm=1000.0 + repeat)
        return {**run, "repeat": repeat, "run_dir": f"runs/{size}-{slug(master)}-{repeat}", "command": "pipeline"}

    def fake_peer(name, script, command, output_file, output, size, driver_script):
        calls.append(("peer", name, size, command[command.index("--run") + 1] if "--run" in command else None))
        own = {"tool": name, "steps": {"read": 1.0}, "total_seconds": 10.0, "cpu_seconds": 9.0, "micro_f1": 0.8,
               "macro_f1": 0.6, "peak_rss_mb": 300.0}
        if name == "mllib":
            own = {**RESULT["peers"]["mllib"]["result"]}
        return {"status": "ok", "size": size, "command": " ".join(command), "end_to_end_seconds": 11.0,
                "cpu_seconds": 10.0, "peak_rss_mb": {"total": 320.0, "jvm": 0.0, "python_driver": 0.0}, "result": own}

    monkeypatch.setattr(rcv1_scale, "ensure_corpus", fake_corpus)
    monkeypatch.setattr(rcv1_scale, "run_pipeline", fake_pipeline)
    monkeypatch.setattr(rcv1_scale, "run_peer", fake_peer)
    monkeypatch.setattr(harness, "machine_info", lambda: copy.deepcopy(RESULT["machine"]))
    status = rcv1_scale.main(["--output", str(tmp_path), "--sizes", "20000,40000", "--masters", "local[2],local[1]",
                              "--speedup-sizes", "40000", "--peers-size", "40000",
                              "--history", str(tmp_path / "history")])
    assert status == 1  # a memory run failed; the benchmark went on
    assert calls == [
        ("corpus", 20_000), ("pipeline", 20_000, "local[2]", 1, False), ("peer", "lean_peer", 20_000, None),
        ("corpus", 40_000), ("pipeline", 40_000, "local[2]", 1, True), ("pipeline", 40_000, "local[2]", 2, True),
        ("pipeline", 40_000, "local[2]", 3, True), ("pipeline", 40_000, "local[1]", 1, False),
        ("peer", "lean_peer", 40_000, None), ("peer", "mllib", 40_000, "runs/40000-local2-1")]
    result = json.loads((tmp_path / "benchmark.json").read_text())
    assert result["settings"]["memory_runs"] == 3 and result["settings"]["memory_size"] == 40_000
    assert result["settings"]["lean_peer_sizes"] == [20_000, 40_000]
    assert [peer["size"] for peer in result["peers"]["single_process"]] == [20_000, 40_000]
    assert result["memory"]["completed"] == 3 and result["memory"]["failed"] == 1
    assert result["memory"]["jvm_peak_rss_mb"] == [1001.0, 2300.0, 1003.0]
    assert result["memory"]["end_to_end_seconds_median"] == 22.0
    full = [p for p in result["pipelines"] if (p["size"], p["master"]) == (40_000, "local[2]")][0]
    assert full["repeats"] == 2 and full["peak_rss_mb_max"]["jvm"] == 1003.0
    markdown = (tmp_path / "benchmark.md").read_text()
    assert "| 20,000 | 1.0 / 1.5 |" in markdown and "| 40,000 | 1.0 / 1.5 |" in markdown
    assert "Memory runs: 40,000 documents on local[2], 3 runs in a row: driver JVM peak RSS 1,001 / 2,300 / 1,003 MB" \
        in markdown
    assert "1 failed: run 2: out of memory: java.lang.OutOfMemoryError: Java heap space (logs/2.log)." in markdown
    assert "The benchmark stopped early" not in markdown
    # 804,414 documents were not run; the MLlib and speed-up targets take the sizes that were (as before)
    assert [t["status"] for t in result["targets"]] == ["not run"] * 3 + ["PASS"] + ["not run"] * 3 + ["MISS"] * 5 + [
        "not run"] * 2
    # the run's record: the medians of the successful runs per configuration, the peers, the ratios at the peers size
    [recorded] = history_table.read(str(tmp_path / "history")).to_pylist()
    assert (recorded["kind"], recorded["exit_status"], recorded["master"]) == (
        "benchmark:rcv1_scale", 1, "local[2],local[1]")
    figures = dict(recorded["figures"])
    assert {name: figures[f"sparktc.40000.local[2].{name}"] for name in ("seconds", "cpu_seconds", "micro_f1")} == {
        "seconds": 22.0, "cpu_seconds": 44.0, "micro_f1": 0.81234}  # repeats 1 and 3 (21 and 23 s); 2 failed
    assert figures["sparktc.40000.local[2].peak_memory_bytes"] == 1603 * 2**20  # the largest: repeat 3, 1003 + 600 MB
    assert figures["sparktc.40000.local[1].seconds"] == 21.0 and figures["sparktc.20000.local[2].seconds"] == 21.0
    assert {name: figures[f"lean_peer.20000.{name}"] for name in ("seconds", "cpu_seconds", "peak_memory_bytes")} == {
        "seconds": 11.0, "cpu_seconds": 10.0, "peak_memory_bytes": 300 * 2**20}  # its own ru_maxrss before sampled
    assert figures["mllib.40000.extrapolated_train_seconds"] == 1500.0
    assert figures["ratios.sparktc_over_single_wall"] == 2.0 and figures["ratios.mllib_over_sparktc_train"] == 300.0



def test_main_passes_plain_event_logs_and_skip_mllib_to_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchmarks import harness, rcv1_scale

    calls: list[tuple] = []
    monkeypatch.setattr(rcv1_scale, "ensure_corpus", lambda output, size, master, hierarchy: {
        "size": size, "path": str(output / f"corpus-{size}"), "train_documents": size // 30, "seconds": 1.0,
        "reused": True, "command": f"synth {size}"})
    monkeypatch.setattr(rcv1_scale, "plain_corpus", lambda output, corpus: calls.append(("plain", corpus["size"]))
                        or {**corpus, "path": corpus["path"] + "-plain", "form": "plain"})

    def fake_pipeline(output, corpus, master, repeat, tolerate_failure=False, event_logs=False, parallelism=0):
        calls.append(("pipeline", corpus["path"], master, event_logs))
        run = record(corpus["size"], master, [1, 2, 3, 4, 5, 6], 20.0, jvm=1000.0)
        return {**run, "repeat": repeat, "run_dir": f"runs/{corpus['size']}-{slug(master)}-{repeat}", "command": "x"}

    def fake_peer(name, script, command, output_file, output, size, driver_script):
        calls.append(("peer", name, command[command.index("--corpus") + 1] if "--corpus" in command else None))
        return {"status": "ok", "size": size, "command": " ".join(command), "end_to_end_seconds": 11.0,
                "cpu_seconds": 10.0, "peak_rss_mb": {"total": 320.0}, "result": {
                    "tool": name, "steps": {"read": 1.0}, "total_seconds": 10.0, "cpu_seconds": 9.0,
                    "micro_f1": 0.8, "macro_f1": 0.6, "peak_rss_mb": 300.0}}

    monkeypatch.setattr(rcv1_scale, "run_pipeline", fake_pipeline)
    monkeypatch.setattr(rcv1_scale, "run_peer", fake_peer)
    monkeypatch.setattr(harness, "machine_info", lambda: copy.deepcopy(RESULT["machine"]))
    assert rcv1_scale.main(["--output", str(tmp_path), "--sizes", "20000", "--masters", "local[2]",
                            "--speedup-sizes", "20000", "--peers-size", "20000", "--memory-runs", "1",
                            "--plain", "--event-logs", "--skip-mllib"]) == 0
    plain = str(tmp_path / "corpus-20000-plain")
    assert calls == [("plain", 20_000), ("pipeline", plain, "local[2]", True),
                     ("peer", "lean_peer", relative(Path(plain)))]
    result = json.loads((tmp_path / "benchmark.json").read_text())
    assert result["peers"]["mllib"] == {"status": "skipped", "reason": "--skip-mllib", "size": 20_000}
    assert (result["settings"]["plain"], result["settings"]["event_logs"], result["settings"]["skip_mllib"]) == \
        (True, True, True)
