r"""RCV1-v2-scale benchmark: sparktc's pipeline on synthetic LYRL2004-format corpora of growing size.

    .venv/bin/python -m benchmarks.rcv1_scale --output runs/benchmark-rcv1 \
        [--sizes 100000,200000,400000,804414] [--masters "local[2],local[1]"] [--speedup-sizes 804414] \
        [--peers-size 804414] [--hierarchy ../shared/data/rcv1/rcv1.topics.hier.orig] [--repeat 1] \
        [--memory-runs 3] [--plain] [--event-logs] [--parallelism N] [--skip-mllib] [--history DIR]

(``make benchmark-rcv1`` runs it with these defaults.) Run it from the repository root; the commands it starts
run from the repository root, exactly as a user would type them:

1. For each size N, synthesize a corpus once into OUTPUT/corpus-N (reused when it is already there
   with all its files): ``./spark-submit.sh --master local[2] jobs/synthesize.py --config
   conf/synthetic.toml --set synthesize.documents=N --set synthesize.train_documents=T --set
   synthesize.vocabulary_size=47236 [--set synthesize.hierarchy=H] --output OUTPUT/corpus-N`` with
   T = round(23149 N / 804414), RCV1-v2's training share. Its time is recorded apart: it is data
   generation, not part of the pipeline. With ``--plain``, its gzipped files are uncompressed once into
   OUTPUT/corpus-N-plain, and everything below runs on those.
2. For each size on the first master, and on every master at the speed-up sizes, run
   ``./spark-submit.sh --master M jobs/pipeline.py --config conf/rcv1.toml --set corpus.path=OUTPUT/corpus-N
   --output OUTPUT/runs/N-M-r`` into a fresh directory, ``--repeat`` times. The largest size on the
   first master (804,414 documents, local[2] by default) is the memory configuration: it runs
   max(``--repeat``, ``--memory-runs``) times in a row, and a run of it that fails (out of memory, say)
   is recorded as failed instead of stopping the benchmark.
   With ``--parallelism N`` every run is planned for N cores (``--conf spark.default.parallelism=N`` before
   ``jobs/pipeline.py``), so that with ``--event-logs`` Table 5 replays a cluster's plan beside the measured
   local[1] and local[2] runs of that plan; on a machine of N cores or more, local[N] runs at the speed-up sizes too.
3. Meanwhile a thread samples the command's process tree from /proc every 0.2 s (see
   ``benchmarks/harness_measure.py``): CPU time and resident memory of the Spark JVM, the Python driver and
   the Python workers, cut into segments at the ``sparktc: <stage>`` lines. Where a cgroup v1
   ``cpuacct`` group can be made, each command runs in its own and every CPU figure is the group's
   exact count (each record's ``cpu_source`` says which).
4. After the pipeline runs of each size, run the lean single-process peer ``benchmarks/lean_peer.py``
   (one plain Python process, numpy + scipy + LIBLINEAR; recorded as the ``single_process`` peer) on
   the same corpus under the same sampler; at the peers size also ``benchmarks/mllib_linearsvc.py``
   (Spark MLlib LinearSVC on the first master's run directory, 8 categories timed and extrapolated).
   A peer script that does not exist is skipped with a message; one that fails stops the benchmark.
5. Write OUTPUT/benchmark.json (every figure, every run, raw) and OUTPUT/benchmark.md (the tables
   of ``benchmarks/harness_tables.py`` and the targets), and print the markdown. Each subprocess's output
   is kept in OUTPUT/logs/.

With ``--repeat R`` every pipeline configuration runs R times and the tables show medians of the
times (peak memory: the largest over the runs). With ``--history DIR``, as every benchmark built on
:func:`run_harness`, the run adds its record to that run history, and each pipeline run its own
(``benchmarks/harness_recording.py``; README, "Scheduled runs").
Exit code 0 when every command succeeded, 1 when one failed (a failed memory run is recorded and the
benchmark goes on; any other failure stops it; the partial results are written and the failing
command, with the last 40 lines of its output, is printed) or the run's record could not be added to
``--history``, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import harness_recording, harness_scaling, harness_tables
from benchmarks.harness import (
    CORPUS_FILES,
    PYTHON,
    RCV1_DOCUMENTS,
    RCV1_VOCABULARY,
    REPO,
    SAMPLE_SECONDS,
    HarnessError,
    corpus_is_complete,
    failure,
    failure_cause,
    harness_parser,
    measured,
    process_summary,
    read_json,
    relative,
    rounded,
    run_harness,
    train_documents,
)

SINGLE_PROCESS = "benchmarks/lean_peer.py"
MLLIB = "benchmarks/mllib_linearsvc.py"
MLLIB_CATEGORIES = 8


# --- the plan ----------------------------------------------------------------------------------


def plan_runs(sizes: Sequence[int], masters: Sequence[str], speedup_sizes: Sequence[int], peers_size: int,
              repeat: int, memory_runs: int = 1) -> list[tuple[int, str, int]]:
    """(size, master, repeat number) of every pipeline run, by size then master then repeat.

    Every size runs on the first master; the speed-up sizes on every master; the peers size on the
    first master (the MLlib peer reads that run's vectors). Each configuration runs ``repeat`` times
    in a row, the memory configuration (:func:`memory_configuration`) max(repeat, memory_runs) times.
    """
    wanted = {(size, masters[0]) for size in (*sizes, peers_size)}
    wanted |= {(size, master) for size in speedup_sizes for master in masters}
    order = {master: index for index, master in enumerate(masters)}
    memory = memory_configuration(sizes, masters, speedup_sizes, peers_size)
    return [(size, master, r) for size, master in sorted(wanted, key=lambda sm: (sm[0], order[sm[1]]))
            for r in range(1, (max(repeat, memory_runs) if (size, master) == memory else repeat) + 1)]


def memory_configuration(sizes: Sequence[int], masters: Sequence[str], speedup_sizes: Sequence[int],
                         peers_size: int) -> tuple[int, str]:
    """The configuration whose driver memory is checked run after run: the largest size on the first master."""
    return max((*sizes, *speedup_sizes, peers_size)), masters[0]


def slug(master: str) -> str:
    """A directory-friendly name for a master URL: local[2] -> local2."""
    return "".join(c for c in master if c.isalnum() or c in "-_") or "master"


# --- running commands --------------------------------------------------------------------------


def ensure_corpus(output: Path, size: int, master: str, hierarchy: str) -> dict[str, Any]:
    """Synthesize the corpus of ``size`` documents into OUTPUT/corpus-N, or reuse the one already there."""
    directory = output / f"corpus-{size}"
    record_file = output / f"corpus-{size}.json"
    command = [
        "./spark-submit.sh", "--master", master, "jobs/synthesize.py", "--config", "conf/synthetic.toml",
        "--set", f"synthesize.documents={size}", "--set", f"synthesize.train_documents={train_documents(size)}",
        "--set", f"synthesize.vocabulary_size={RCV1_VOCABULARY}",
        *(["--set", f"synthesize.hierarchy={hierarchy}"] if hierarchy else []),
        "--output", relative(directory),
    ]
    settings = {"documents": size, "train_documents": train_documents(size), "vocabulary_size": RCV1_VOCABULARY,
                "hierarchy": hierarchy or "generated"}
    if corpus_is_complete(directory, size):
        previous = json.loads(record_file.read_text()) if record_file.is_file() else {}
        if previous.get("settings", settings) != settings:
            raise HarnessError(f"{directory} was synthesized with {previous.get('settings')}, not {settings}; "
                               f"remove it or choose another --output")
        report = read_json(directory / "manifests" / "synthesize.json")
        print(f"rcv1_scale: reusing the corpus of {size:,} documents in {directory}", flush=True)
        return {**previous, "size": size, "path": str(directory), "reused": True,
                "train_documents": report["details"]["train_documents"],
                "seconds": previous.get("seconds"), "stage_seconds": report["seconds"],
                "command": previous.get("command", shlex.join(command))}
    shutil.rmtree(directory, ignore_errors=True)
    result = measured(command, output / "logs" / f"synthesize-{size}.log", "jobs/synthesize.py")
    report = read_json(directory / "manifests" / "synthesize.json")
    record = {"size": size, "path": str(directory), "reused": False, "settings": settings,
              "train_documents": report["details"]["train_documents"],
              "seconds": round(result.seconds, 3), "stage_seconds": report["seconds"],
              "cpu_seconds": round(result.cpu_seconds, 3), "peak_rss_mb": rounded(result.peak_rss_mb()),
              "details": report["details"], "command": shlex.join(command)}
    record_file.write_text(json.dumps(record, indent=2) + "\n")
    return record


def scaling_record(event_log: Path) -> dict[str, Any]:
    """A run's scaling projection from its Spark event log (:mod:`benchmarks.scaling`): per sparktc stage its tasks,
    task-seconds, serial driver seconds and the wall replayed at each of :data:`benchmarks.scaling.CORES` and at the
    run's own cores, with the application's measured wall beside the replay at its own cores.
    """
    application = harness_scaling.parse_events(harness_scaling.read_events(event_log))
    cores = sorted({*harness_scaling.CORES, *([application.cores] if application.cores else [])})
    lines = harness_scaling.project(application, cores)
    return {"event_log": str(event_log), "application_seconds": round(application.wall, 3), "cores": application.cores,
            "lines": [{"stage": line.label, "tasks": line.tasks, "task_seconds": round(line.task_seconds, 3),
                       "driver_seconds": round(line.driver_seconds, 3),
                       "walls": {str(n): round(wall, 3) for n, wall in line.walls.items()}} for line in lines]}


def run_pipeline(output: Path, corpus: dict[str, Any], master: str, repeat: int,
                 tolerate_failure: bool = False, event_logs: bool = False, parallelism: int = 0) -> dict[str, Any]:
    """One measured pipeline run on ``corpus``: per segment wall, CPU, rows and peak RSS; F1; with ``event_logs``,
    its Spark event log under OUTPUT/events and the scaling projection replayed from it (:func:`scaling_record`);
    with ``parallelism``, planned for that many cores (``--conf spark.default.parallelism=N``, whatever the master).

    A command that fails raises HarnessError, unless ``tolerate_failure`` (a memory run): then the run
    is returned as ``failed``, with its cause and what was measured until it ended.
    """
    size = corpus["size"]
    run_dir = output / "runs" / f"{size}-{slug(master)}-{repeat}"
    events = output / "events" / f"{size}-{slug(master)}-{repeat}"
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.rmtree(events, ignore_errors=True)
    command = ["./spark-submit.sh", "--master", master,
               *(["--conf", f"spark.default.parallelism={parallelism}"] if parallelism else []),
               "jobs/pipeline.py", "--config", "conf/rcv1.toml",
               "--set", f"corpus.path={relative(Path(corpus['path']))}", "--output", relative(run_dir)]
    if event_logs:
        command[-2:-2] = ["--set", f"spark.event_log={relative(events)}"]
    log = output / "logs" / f"pipeline-{size}-{slug(master)}-{repeat}.log"
    result = measured(command, log, "jobs/pipeline.py", check=not tolerate_failure)
    if result.returncode != 0:
        try:
            text = log.read_text(errors="replace")
        except OSError:
            text = "\n".join(result.tail)
        out_of_memory, cause = failure_cause(result.returncode, text)
        return {"size": size, "master": master, "repeat": repeat, "run_dir": str(run_dir),
                "command": shlex.join(command), "log": str(log), "failed": True, "returncode": result.returncode,
                "out_of_memory": out_of_memory, "cause": cause, "error": str(failure(command, log, result)),
                "end_to_end_seconds": round(result.seconds, 3), "cpu_seconds": round(result.cpu_seconds, 3),
                "peak_rss_mb": rounded(result.peak_rss_mb()), "samples": len(result.samples),
                "processes": process_summary(result), "tail": result.tail}
    stages: dict[str, dict[str, Any]] = {}
    for segment in result.segments():
        entry: dict[str, Any] = {"segment_seconds": round(segment.wall_seconds, 3),
                                 "cpu_seconds": round(segment.cpu_seconds, 3),
                                 "peak_rss_mb": rounded(segment.peak_rss_mb), "samples": segment.samples}
        report_file = run_dir / "manifests" / f"{segment.name}.json"
        if segment.name in harness_tables.STAGES:
            report = read_json(report_file)
            entry.update(wall_seconds=report["seconds"], rows_in=report["rows_in"], rows_out=report["rows_out"],
                         set_aside=report.get("set_aside", {}))
        else:
            entry["wall_seconds"] = entry["segment_seconds"]
        stages[segment.name] = entry
    missing = [stage for stage in harness_tables.STAGES if stage not in stages]
    if missing:
        raise HarnessError(f"{shlex.join(command)} exited 0 but printed no line for the stages {missing}")
    metrics = read_json(run_dir / "metrics.json")
    return {
        "size": size, "master": master, "repeat": repeat, "run_dir": str(run_dir), "command": shlex.join(command),
        "log": str(log), "failed": False,
        "end_to_end_seconds": round(result.seconds, 3), "cpu_seconds": round(result.cpu_seconds, 3),
        "cpu_source": result.cpu_source, "stages": stages, "peak_rss_mb": rounded(result.peak_rss_mb()),
        "metrics": {key: metrics.get(key) for key in ("micro_f1", "macro_f1", "n_categories", "test_documents")},
        "samples": len(result.samples), "processes": process_summary(result),
        **({"scaling": scaling_record(events)} if event_logs else {}),
    }


def median_record(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The median of the numeric figures of repeated (successful) runs of one configuration (the runs
    themselves listed); ``peak_rss_mb_max``: the largest peak RSS of each role over the runs.
    """
    def med(values: list[Any]) -> Any:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    first = runs[0]
    stages = {}
    for name, entry in first["stages"].items():
        entries = [run["stages"].get(name, {}) for run in runs]
        stages[name] = {key: ({role: med([e.get(key, {}).get(role) for e in entries]) for role in value}
                              if isinstance(value, dict) and key == "peak_rss_mb"
                              else med([e.get(key) for e in entries]) if isinstance(value, (int, float))
                              else value)
                        for key, value in entry.items()}
    return {
        "size": first["size"], "master": first["master"], "repeats": len(runs),
        "run_dirs": [run["run_dir"] for run in runs],
        "end_to_end_seconds": med([run["end_to_end_seconds"] for run in runs]),
        "end_to_end_seconds_all": [run["end_to_end_seconds"] for run in runs],
        "cpu_seconds": med([run["cpu_seconds"] for run in runs]),
        "stages": stages,
        "peak_rss_mb": {role: med([run["peak_rss_mb"].get(role) for run in runs]) for role in first["peak_rss_mb"]},
        "peak_rss_mb_max": {role: max((run["peak_rss_mb"].get(role) or 0.0 for run in runs), default=None)
                            for role in first["peak_rss_mb"]},
        "metrics": {key: med([run["metrics"].get(key) for run in runs]) for key in first["metrics"]},
        **({"scaling": first["scaling"]} if "scaling" in first else {}),  # the first run's replay, not a median
    }


def aggregate(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One median record per (size, master) over its successful runs, in the order the configurations first ran."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for run in runs:
        if not run.get("failed"):
            groups.setdefault((run["size"], run["master"]), []).append(run)
    return [median_record(group) for group in groups.values()]


def memory_summary(runs: Sequence[dict[str, Any]], size: int, master: str, planned: int) -> dict[str, Any]:
    """The memory runs (``size`` on ``master``), failed ones included: each one's driver JVM peak RSS and
    end to end time, the largest peak, the median time of the successful runs, and the failures.
    """
    mine = [run for run in runs if run["size"] == size and run["master"] == master]
    ok = [run["end_to_end_seconds"] for run in mine if not run.get("failed")]
    peaks = [run["peak_rss_mb"].get("jvm") for run in mine]
    return {
        "size": size, "master": master, "planned": planned, "completed": len(mine),
        "failed": sum(1 for run in mine if run.get("failed")),
        "jvm_peak_rss_mb": peaks, "jvm_peak_rss_mb_max": max((p for p in peaks if p is not None), default=None),
        "end_to_end_seconds": [run["end_to_end_seconds"] for run in mine],
        "end_to_end_seconds_median": statistics.median(ok) if ok else None,
        "failures": [{"repeat": run["repeat"], "out_of_memory": run.get("out_of_memory", False),
                      "cause": run.get("cause", ""), "log": run.get("log", "")} for run in mine if run.get("failed")],
    }


def run_peer(name: str, script: str, command: list[str], output_file: Path, output: Path, size: int,
             driver_script: str) -> dict[str, Any]:
    """Run one peer under the sampler; skipped (with a message) when its script does not exist."""
    if not (REPO / script).is_file():
        reason = f"{script} does not exist yet: skipped"
        print(f"rcv1_scale: {reason}", flush=True)
        return {"status": "skipped", "reason": reason, "size": size}
    output_file.unlink(missing_ok=True)
    log = output / "logs" / f"{name}-{size}.log"
    result = measured(command, log, driver_script)
    return {"status": "ok", "size": size, "command": shlex.join(command), "log": str(log),
            "end_to_end_seconds": round(result.seconds, 3), "cpu_seconds": round(result.cpu_seconds, 3),
            "cpu_source": result.cpu_source, "peak_rss_mb": rounded(result.peak_rss_mb()),
            "processes": process_summary(result), "result": read_json(output_file)}


def plain_corpus(output: Path, corpus: dict[str, Any]) -> dict[str, Any]:
    """``corpus`` with its files uncompressed into OUTPUT/corpus-N-plain (made once, then reused), for ``--plain``:
    the same documents as the gzipped files, read as users who keep them uncompressed read them. The other files
    (hierarchy, manifests) stay where they are and are read from there.
    """
    source, size = Path(corpus["path"]), corpus["size"]
    directory = output / f"corpus-{size}-plain"
    directory.mkdir(parents=True, exist_ok=True)
    for name in CORPUS_FILES:
        target = directory / name.removesuffix(".gz")
        if name.endswith(".gz") and not target.is_file():
            partial = target.with_name(target.name + ".partial")
            with gzip.open(source / name, "rb") as packed, open(partial, "wb") as unpacked:
                shutil.copyfileobj(packed, unpacked, 16 * 1024 * 1024)
            partial.rename(target)
        elif not name.endswith(".gz") and not target.exists():
            target.symlink_to(source / name)
    return {**corpus, "path": str(directory), "form": "plain", "gzipped": str(source)}


def run_lean_peer(output: Path, corpus: dict[str, Any]) -> dict[str, Any]:
    """The lean single-process peer on ``corpus`` (the corpus sparktc ran on)."""
    size = corpus["size"]
    peers_dir = output / "peers"
    peers_dir.mkdir(parents=True, exist_ok=True)
    single_file = peers_dir / f"lean_peer-{size}.json"
    module = SINGLE_PROCESS.removesuffix(".py").replace("/", ".")  # run as a module: it imports benchmarks.*
    return run_peer("lean_peer", SINGLE_PROCESS,
                    [PYTHON, "-m", module, "--corpus", relative(Path(corpus["path"])), "--output",
                     relative(single_file)], single_file, output, size, module)


def run_mllib(output: Path, size: int, master: str, run_dir: str | None) -> dict[str, Any]:
    """The MLlib peer on the vectors of ``run_dir`` (a successful pipeline run of ``size`` documents)."""
    if run_dir is None:
        reason = f"no successful pipeline run of {size:,} documents on {master} to read: skipped"
        print(f"rcv1_scale: {reason}", flush=True)
        return {"status": "skipped", "reason": reason, "size": size}
    peers_dir = output / "peers"
    peers_dir.mkdir(parents=True, exist_ok=True)
    mllib_file = peers_dir / f"mllib_linearsvc-{size}.json"
    return run_peer("mllib", MLLIB,
                    ["./spark-submit.sh", "--master", master, MLLIB, "--run", relative(Path(run_dir)), "--output",
                     relative(mllib_file), "--categories", str(MLLIB_CATEGORIES)], mllib_file, output, size, MLLIB)


# --- the machine -------------------------------------------------------------------------------


# --- main --------------------------------------------------------------------------------------

def integers(text: str) -> list[int]:
    """The argparse type of a list of corpus sizes: comma-separated integers >= 10 (underscores allowed)."""
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from error
    if not values or any(v < 10 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes >= 10, got {text!r}")
    return values


def masters(text: str) -> list[str]:
    """The argparse type of a list of Spark masters: comma-separated, at least one."""
    values = [part.strip() for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected at least one Spark master, e.g. local[2]")
    return values


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked: the output, the sizes, the masters, the speed-up and peers sizes, the hierarchy and
    the repetitions.
    """
    parser = harness_parser(__doc__)
    parser.add_argument("--output", required=True, help="directory for corpora, runs, logs and benchmark.json/.md")
    parser.add_argument("--sizes", type=integers, default=[100_000, 200_000, 400_000, RCV1_DOCUMENTS],
                        help="corpus sizes in documents (default 100000,200000,400000,804414)")
    parser.add_argument("--masters", type=masters, default=["local[2]", "local[1]"],
                        help='Spark masters; the first runs every size and the peers (default "local[2],local[1]")')
    parser.add_argument("--speedup-sizes", type=integers, default=[RCV1_DOCUMENTS],
                        help="sizes also run on the other masters (default 804414)")
    parser.add_argument("--peers-size", type=int, default=RCV1_DOCUMENTS,
                        help="size the MLlib peer runs at (default 804414); the lean single-process peer "
                             "runs at every size")
    parser.add_argument("--hierarchy", default="",
                        help="rcv1.topics.hier.orig to synthesize with (default: a generated tree of its shape)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per pipeline configuration; medians reported")
    parser.add_argument("--event-logs", action="store_true",
                        help="each pipeline run writes its Spark event log (OUTPUT/events) and benchmark.md adds "
                             "the scaling projection replayed from it, validated against the other masters' runs")
    parser.add_argument("--parallelism", type=int, default=0,
                        help="plan every pipeline run for N cores (--conf spark.default.parallelism=N), so that "
                             "with --event-logs the projection replays a cluster's plan (docs/design.md, How a plan "
                             "follows the cores); where the machine has N cores or more, local[N] runs too")
    parser.add_argument("--skip-mllib", action="store_true",
                        help="leave out the MLlib peer (about two minutes at 804,414 documents); the lean peer runs")
    parser.add_argument("--plain", action="store_true",
                        help="run sparktc and the peers on the corpus files uncompressed (made once beside each "
                             "synthesized corpus, OUTPUT/corpus-N-plain); default: the gzipped files as synthesized")
    parser.add_argument("--memory-runs", type=int, default=3,
                        help="runs in a row of the largest size on the first master, each one's driver memory "
                             "checked (default 3; at least --repeat)")
    arguments = parser.parse_args(argv)
    if arguments.repeat < 1:
        parser.error("--repeat must be >= 1")
    if arguments.memory_runs < 1:
        parser.error("--memory-runs must be >= 1")
    if arguments.parallelism < 0:
        parser.error("--parallelism must be >= 1 (0: Spark's own, the master's cores)")
    if arguments.parallelism and (os.cpu_count() or 1) >= arguments.parallelism \
            and f"local[{arguments.parallelism}]" not in arguments.masters:
        arguments.masters.append(f"local[{arguments.parallelism}]")  # measured beside its projection
    if arguments.peers_size < 10:
        parser.error("--peers-size must be >= 10")
    if arguments.hierarchy:
        hierarchy = Path(arguments.hierarchy).resolve()
        if not hierarchy.is_file():
            parser.error(f"--hierarchy {arguments.hierarchy}: no such file")
        arguments.hierarchy = str(hierarchy)
    return arguments


def summarized(result: dict[str, Any]) -> str:
    """benchmark.md, after adding to ``result`` the pipelines' aggregates, the memory summary and the targets."""
    result["pipelines"] = aggregate(result["runs"])
    settings = result["settings"]
    size, master = settings["memory_size"], settings["masters"][0]
    planned = sum(1 for entry in settings["plan"] if entry[0] == size and entry[1] == master)
    result["memory"] = memory_summary(result["runs"], size, master, planned)
    result["targets"] = harness_tables.check_targets(result)
    return harness_tables.render(result)


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record: per configuration ``sparktc.SIZE.MASTER``, the medians of sparktc's end
    to end wall and CPU-seconds, its largest peak memory and its F1; per size ``lean_peer.SIZE`` the same of the
    lean peer; MLlib's extrapolated training seconds and the ratios at the peers size
    (:func:`benchmarks.harness_tables.peer_ratios`).
    """
    pipelines = aggregate(result["runs"])
    figures: dict[str, Any] = {"sparktc": {}, "lean_peer": {}}
    for record in pipelines:
        figures["sparktc"][f"{record['size']}.{record['master']}"] = {
            "seconds": record["end_to_end_seconds"], "cpu_seconds": record["cpu_seconds"],
            "peak_memory_bytes": harness_recording.memory_bytes(record["peak_rss_mb_max"].get("total")),
            "micro_f1": record["metrics"].get("micro_f1"), "macro_f1": record["metrics"].get("macro_f1")}
    for peer in harness_tables.lean_peers(result):
        own = harness_tables.peer_figures(peer)
        figures["lean_peer"][str(peer["size"])] = {
            "seconds": own["wall"], "cpu_seconds": own["cpu"],
            "peak_memory_bytes": harness_recording.memory_bytes(own["rss"]),
            "micro_f1": own["micro_f1"], "macro_f1": own["macro_f1"]}
    mllib = result["peers"].get("mllib") or {}
    if mllib.get("status") == "ok":
        figures["mllib"] = {str(mllib["size"]): {
            "extrapolated_train_seconds": mllib["result"]["extrapolated_train_seconds"]}}
    figures["ratios"] = harness_tables.peer_ratios({**result, "pipelines": pipelines})
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Synthesize the corpora, run the planned pipelines and peers, and write benchmark.json and benchmark.md (module
    docstring); the exit code.
    """
    arguments = parse_arguments(argv)
    output = Path(arguments.output).resolve()
    plan = plan_runs(arguments.sizes, arguments.masters, arguments.speedup_sizes, arguments.peers_size,
                     arguments.repeat, arguments.memory_runs)
    memory_size, first = memory_configuration(arguments.sizes, arguments.masters, arguments.speedup_sizes,
                                              arguments.peers_size)
    sizes = sorted({size for size, _, _ in plan})
    settings = {"sizes": sorted(arguments.sizes), "masters": arguments.masters,
                "speedup_sizes": sorted(arguments.speedup_sizes), "peers_size": arguments.peers_size,
                "lean_peer_sizes": sizes, "hierarchy": arguments.hierarchy or "generated",
                "repeat": arguments.repeat, "plain": arguments.plain, "event_logs": arguments.event_logs,
                "parallelism": arguments.parallelism,
                "skip_mllib": arguments.skip_mllib,
                "memory_runs": arguments.memory_runs,
                "memory_size": memory_size,
                "sample_seconds": SAMPLE_SECONDS, "plan": [list(entry) for entry in plan]}

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        status, corpora = 0, {}
        for size in sizes:
            corpora[size] = ensure_corpus(output, size, first, arguments.hierarchy)
            if arguments.plain:
                corpora[size] = plain_corpus(output, corpora[size])
            result["corpora"].append(corpora[size])
            for _, master, repeat in (entry for entry in plan if entry[0] == size):
                run = run_pipeline(output, corpora[size], master, repeat,
                                   tolerate_failure=(size, master) == (memory_size, first),
                                   event_logs=arguments.event_logs, parallelism=arguments.parallelism)
                result["runs"].append(run)
                if run.get("failed"):
                    status = 1
                write()  # partial results survive a later failure
            result["peers"]["single_process"].append(run_lean_peer(output, corpora[size]))
            write()
        peers_run = next((run for run in result["runs"] if run["size"] == arguments.peers_size
                          and run["master"] == first and not run.get("failed")), None)
        if arguments.skip_mllib:
            result["peers"]["mllib"] = {"status": "skipped", "reason": "--skip-mllib", "size": arguments.peers_size}
        else:
            result["peers"]["mllib"] = run_mllib(output, arguments.peers_size, first,
                                                 peers_run["run_dir"] if peers_run else None)
        return status

    return run_harness("rcv1_scale", output, argv, settings, body, summarized, "benchmark", headline=headline,
                       corpora=[], runs=[], peers={"single_process": []})


if __name__ == "__main__":
    sys.exit(main())
