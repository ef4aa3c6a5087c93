"""Part of the benchmark harness (:mod:`benchmarks.harness`): the figures as every benchmark's tables print them
(:func:`seconds`, :func:`f1`, :func:`count`, ...; the tables themselves are written by
:func:`sparktc.runtime.markdown.markdown_table`), and the tables and target checks of the RCV1-v2-scale benchmark
(``benchmarks/rcv1_scale.py``).

Pure functions of the result record that ``rcv1_scale.py`` writes to ``benchmark.json``:

* ``machine``: cores, memory_gb, cpu_model, python, java, pyspark, spark_defaults, load averages, git;
* ``command``: the command line that produced the record; ``settings``: sizes, masters, speedup_sizes,
  peers_size, hierarchy, repeat;
* ``corpora``: one record per size (size, train_documents, seconds of synthesis, reused);
* ``pipelines``: one record per (size, master), the median over its successful repeats:
  ``end_to_end_seconds``, ``cpu_seconds``, ``stages`` {name: {wall_seconds, cpu_seconds, rows_in,
  rows_out, peak_rss_mb {jvm, python_driver, python_workers, ...}}} for startup, the six stages and
  shutdown, ``peak_rss_mb`` of the whole run (median) and ``peak_rss_mb_max`` (largest over the runs),
  ``metrics`` {micro_f1, macro_f1};
* ``memory``: the memory runs (the largest size on the first master, run after run): size, master,
  planned, completed, failed, jvm_peak_rss_mb (each run's), jvm_peak_rss_mb_max, end_to_end_seconds
  (each run's), end_to_end_seconds_median (of the successful ones), failures [{repeat, out_of_memory,
  cause, log}];
* ``peers``: ``single_process``, the lean single-process peer (``benchmarks/lean_peer.py``), a list
  with one record per size, and ``mllib``, at the peers size; each record is {status, size,
  end_to_end_seconds, cpu_seconds, peak_rss_mb (sampled), result (the peer's own JSON)} or {status:
  "skipped", reason}. (An older record's ``single_process`` is one record, at the peers size.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sparktc.runtime.markdown import markdown_table

STAGES = ("ingest", "tokenize", "weight", "rank", "train", "evaluate")
SEGMENTS = ("startup", *STAGES, "shutdown")
FULL_SIZE = 804_414  # RCV1-v2 (LYRL2004): 23,149 training + 781,265 test documents
BASE_SIZE = 100_000
TARGET_END_TO_END_SECONDS = 180.0
TARGET_JVM_RSS_MB = 2048.0
TARGET_SCALING = 8.5
TARGET_MLLIB_RATIO = 20.0
# Issue 26 (per-core parity): the second core's speed-up end to end and in the stages of corpus-sized work.
TARGET_SPEEDUP = 1.6
TARGET_STAGE_SPEEDUP = 1.7
SPEEDUP_STAGES = ("ingest", "weight", "train", "evaluate")
TARGET_PEER_WALL_RATIO = 1.5  # sparktc end to end / the lean peer's, at FULL_SIZE
AIM_PEER_WALL_RATIO = 0.8
TARGET_PEER_CPU_RATIO = 2.5  # sparktc CPU-seconds / the lean peer's
AIM_PEER_CPU_RATIO = 1.5
TARGET_CPU_PER_DOCUMENT_GROWTH = 1.1  # CPU-seconds per document past FULL_SIZE / at FULL_SIZE
TARGET_F1_DIFFERENCE = 0.001  # |sparktc - lean peer|, micro- and macro-F1 each
PEER_LABEL = "lean single-process Python (benchmarks/lean_peer.py)"
DASH = "—"


def seconds(value: float | None) -> str:
    """Seconds with one decimal and thousands separators, or a dash."""
    return DASH if value is None else f"{value:,.1f}"


def ratio(value: float | None) -> str:
    """A ratio with two decimals, or a dash."""
    return DASH if value is None else f"{value:.2f}"


def f1(value: float | None) -> str:
    """An F1 with four decimals, or a dash."""
    return DASH if value is None else f"{value:.4f}"


def megabytes(value: float | None) -> str:
    """Megabytes rounded to whole ones, with thousands separators, or a dash."""
    return DASH if value is None else f"{value:,.0f}"


def count(value: float | None) -> str:
    """A count with thousands separators (a median of an even number of runs may be a float: 2000.0 -> 2,000)."""
    if value is None:
        return DASH
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"


def divide(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``; None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def baseline_master(result: dict[str, Any]) -> str:
    """The master every size runs on: the first of the result's masters."""
    return result["settings"]["masters"][0]


def pipeline(result: dict[str, Any], size: int, master: str) -> dict[str, Any] | None:
    """The (median) pipeline record of ``size`` documents on ``master``, if it was run."""
    for record in result.get("pipelines", []):
        if record["size"] == size and record["master"] == master:
            return record
    return None


def sizes_run(result: dict[str, Any], master: str) -> list[int]:
    """The corpus sizes the pipeline ran at on ``master``, ascending."""
    return sorted(record["size"] for record in result.get("pipelines", []) if record["master"] == master)


def stage_value(record: dict[str, Any] | None, stage: str, key: str) -> Any:
    """One figure (``key``) of ``stage`` in a pipeline record; None when the record or the stage is missing."""
    if record is None or stage not in record["stages"]:
        return None
    return record["stages"][stage].get(key)


def pipeline_sum(record: dict[str, Any] | None) -> float | None:
    """Sum of the six stages' own wall times (None unless all six reported)."""
    values = [stage_value(record, stage, "wall_seconds") for stage in STAGES]
    return None if any(v is None for v in values) else sum(values)


def peak(record: dict[str, Any] | None, stage: str | None, role: str) -> float | None:
    """Peak RSS (MB) of ``role`` in one stage, or over the whole run when ``stage`` is None."""
    if record is None:
        return None
    source = record.get("peak_rss_mb", {}) if stage is None else record["stages"].get(stage, {}).get("peak_rss_mb", {})
    return source.get(role)


def peak_max(record: dict[str, Any] | None, role: str) -> float | None:
    """The largest peak RSS (MB) of ``role`` over the runs of a configuration (one run: its peak)."""
    if record is None:
        return None
    return record.get("peak_rss_mb_max", record.get("peak_rss_mb", {})).get(role)


def pair(wall: float | None, cpu: float | None) -> str:
    """A "wall / CPU" cell."""
    return DASH if wall is None and cpu is None else f"{seconds(wall)} / {seconds(cpu)}"


# --- the lean single-process peer ------------------------------------------------------------------

def lean_peers(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The lean peer's records, one per size it was run (or skipped) at."""
    single = result.get("peers", {}).get("single_process")
    if not single:
        return []
    if isinstance(single, dict):  # an older record: one run, at the peers size
        return [{**single, "size": single.get("size", result["settings"]["peers_size"])}]
    return list(single)


def lean_peer(result: dict[str, Any], size: int) -> dict[str, Any] | None:
    """The lean peer's record at ``size`` (ok or skipped), None when it was not run there."""
    return next((peer for peer in lean_peers(result) if peer.get("size") == size), None)


def peer_figures(peer: dict[str, Any] | None) -> dict[str, float | None]:
    """The lean peer's wall and CPU seconds (its whole command, from the same sampler as sparktc's; its own
    step total and CPU when the command's are missing), peak RSS (its own ru_maxrss, else the sampled peak)
    and micro/macro-F1; all None unless it ran.
    """
    if not peer or peer.get("status") != "ok":
        return dict.fromkeys(("wall", "cpu", "rss", "micro_f1", "macro_f1", "steps"))
    own = peer.get("result", {})
    wall = peer.get("end_to_end_seconds")
    cpu = peer.get("cpu_seconds")
    rss = own.get("peak_rss_mb")
    return {"wall": wall if wall is not None else own.get("total_seconds"),
            "cpu": cpu if cpu is not None else own.get("cpu_seconds"),
            "rss": rss if rss is not None else peer.get("peak_rss_mb", {}).get("total"),
            "micro_f1": own.get("micro_f1"), "macro_f1": own.get("macro_f1"), "steps": own.get("total_seconds")}


def comparison(result: dict[str, Any], size: int) -> dict[str, Any]:
    """The sparktc run on the baseline master against the lean peer at ``size``: sparktc / peer for wall and CPU,
    sparktc - peer for micro- and macro-F1 (None where either side is missing).
    """
    record = pipeline(result, size, baseline_master(result))
    peer = peer_figures(lean_peer(result, size))
    metrics = record.get("metrics", {}) if record else {}

    def difference(key: str) -> float | None:
        mine, theirs = metrics.get(key), peer[key]
        return None if mine is None or theirs is None else mine - theirs

    return {"size": size, "record": record, "peer": peer,
            "wall": record["end_to_end_seconds"] if record else None,
            "cpu": record.get("cpu_seconds") if record else None,
            "wall_ratio": divide(record["end_to_end_seconds"] if record else None, peer["wall"]),
            "cpu_ratio": divide(record.get("cpu_seconds") if record else None, peer["cpu"]),
            "micro_f1_difference": difference("micro_f1"), "macro_f1_difference": difference("macro_f1")}


def document(parts: list[str], result: Mapping[str, Any]) -> str:
    """A benchmark's markdown from its ``parts`` (title first), with the error that stopped it, if any, under
    the title.
    """
    if result.get("error"):
        parts = [parts[0], f"**The benchmark stopped early:** {result['error']}", *parts[1:]]
    return "\n\n".join(parts) + "\n"


def machine_section(result: dict[str, Any]) -> str:
    """Where and how the figures were measured."""
    machine, settings = result["machine"], result["settings"]
    masters = settings["masters"]
    others = ", ".join(masters[1:])
    spark = f"master {masters[0]}" + (f" (speed-up runs: {others})" if others else "")
    cwd = result.get("cwd")
    where = cwd if cwd and cwd != result.get("repository") else "the repository root"
    defaults = ", ".join(f"{key} {value}" for key, value in machine.get("spark_defaults", {}).items())
    lines = [
        (f"- Machine: {machine['cores']} cores (os.cpu_count()), {machine['memory_gb']:.1f} GB RAM, "
         f"CPU {machine['cpu_model']}"),
        f"- Software: Python {machine['python']}, Java {machine['java']}, pyspark {machine['pyspark']}",
        f"- Spark: {spark}; conf/spark-defaults.conf: {defaults}",
        f"- Load average (1 min) at start / end: {machine.get('load_start', DASH)} / {machine.get('load_end', DASH)}",
        (f"- Code: {machine.get('git', DASH)}; started {result.get('started_utc', DASH)}, "
         f"harness wall time {seconds(result.get('harness_seconds'))} s"),
        f"- Command (run from {where}): `{result['command']}`",
    ]
    return "\n".join(lines)


def table_sizes(result: dict[str, Any]) -> list[int]:
    """The sizes of the main table: every size sparktc or the lean peer ran at."""
    peers = {peer["size"] for peer in lean_peers(result) if peer.get("status") == "ok"}
    return sorted(set(sizes_run(result, baseline_master(result))) | peers)


def sizes_table(result: dict[str, Any]) -> str:
    """Table 1, sizes × stages: sparktc on the baseline master (wall / CPU of each stage and end to end, peak
    RSS, F1) beside the lean peer on the same corpus (wall / CPU, peak RSS, F1) and sparktc / peer.
    """
    rows = []
    for size in table_sizes(result):
        versus = comparison(result, size)
        record, peer = versus["record"], versus["peer"]
        metrics = record.get("metrics", {}) if record else {}
        rows.append([count(size),
                     *(pair(stage_value(record, s, "wall_seconds"), stage_value(record, s, "cpu_seconds"))
                       for s in STAGES),
                     pair(versus["wall"], versus["cpu"]),
                     megabytes(peak_max(record, "jvm")), megabytes(peak_max(record, "python_workers")),
                     f1(metrics.get("micro_f1")), f1(metrics.get("macro_f1")),
                     pair(peer["wall"], peer["cpu"]), megabytes(peer["rss"]), f1(peer["micro_f1"]),
                     f1(peer["macro_f1"]), ratio(versus["wall_ratio"]), ratio(versus["cpu_ratio"])])
    header = ["documents", *STAGES, "end to end", "driver JVM peak RSS (MB)", "Python workers peak RSS (MB)",
              "micro-F1", "macro-F1", "peer end to end", "peer peak RSS (MB)", "peer micro-F1", "peer macro-F1",
              "sparktc / peer wall", "sparktc / peer CPU"]
    return markdown_table(header, rows) if rows else "not run"


def memory_section(result: dict[str, Any]) -> str:
    """The memory runs: each one's driver JVM peak RSS and time, the largest peak, the failures."""
    memory = result.get("memory")
    if not memory or not memory.get("completed"):
        return "Memory runs: not run."
    completed, planned = memory["completed"], memory.get("planned", memory["completed"])
    failed_repeats = {f["repeat"] for f in memory.get("failures", [])}
    times = " / ".join(seconds(t) + (" (failed)" if index + 1 in failed_repeats else "")
                       for index, t in enumerate(memory["end_to_end_seconds"]))
    runs = f"{completed} runs in a row" + (f" ({completed} of the {planned} planned)" if completed < planned else "")
    text = (f"Memory runs: {count(memory['size'])} documents on {memory['master']}, {runs}: driver JVM peak RSS "
            f"{' / '.join(megabytes(p) for p in memory['jvm_peak_rss_mb'])} MB (max "
            f"{megabytes(memory['jvm_peak_rss_mb_max'])} MB); end to end {times} s (median of the successful "
            f"runs {seconds(memory.get('end_to_end_seconds_median'))} s); ")
    if not memory.get("failed"):
        return text + "no run failed."
    return text + f"{memory['failed']} failed: " + "; ".join(
        f"run {f['repeat']}: {f['cause']}" + (f" ({f['log']})" if f.get("log") else "")
        for f in memory["failures"]) + "."


def synthesis_line(result: dict[str, Any]) -> str:
    """How long generating each corpus took (not part of any pipeline figure)."""
    parts = []
    for corpus in result.get("corpora", []):
        note = " (reused; time of its original synthesis)" if corpus.get("reused") else ""
        parts.append(f"{count(corpus['size'])} documents ({count(corpus['train_documents'])} training): "
                     f"{seconds(corpus.get('seconds'))} s{note}")
    return "Corpus synthesis, separate from the pipeline figures: " + ("; ".join(parts) if parts else "none") + "."


def largest_table(result: dict[str, Any]) -> str:
    """Table 2: every segment of the largest run at the baseline master: wall, CPU, rows, peak RSS by role."""
    master = baseline_master(result)
    sizes = sizes_run(result, master)
    if not sizes:
        return "not run"
    record = pipeline(result, sizes[-1], master)
    rows = []
    for name in SEGMENTS:
        if name not in record["stages"]:
            continue
        entry = record["stages"][name]
        wall, cpu = entry.get("wall_seconds"), entry.get("cpu_seconds")
        rows.append([name, seconds(wall), seconds(cpu), ratio(divide(cpu, wall)),
                     count(entry.get("rows_in")), count(entry.get("rows_out")),
                     *(megabytes(peak(record, name, role)) for role in ("jvm", "python_driver", "python_workers"))])
    wall, cpu = record["end_to_end_seconds"], record.get("cpu_seconds")
    rows.append(["end to end", seconds(wall), seconds(cpu), ratio(divide(cpu, wall)), DASH, DASH,
                 *(megabytes(peak(record, None, role)) for role in ("jvm", "python_driver", "python_workers"))])
    header = ["segment", "wall (s)", "CPU (s)", "CPU / wall", "rows in", "rows out",
              "driver JVM peak RSS (MB)", "Python driver peak RSS (MB)", "Python workers peak RSS (MB)"]
    return f"{count(sizes[-1])} documents, {master}:\n\n" + markdown_table(header, rows)


def speedup_table(result: dict[str, Any], size: int) -> str:
    """Table 3 for one size: wall seconds per stage on every master and speed-up = other / baseline."""
    masters = result["settings"]["masters"]
    base, others = masters[0], masters[1:]
    records = {master: pipeline(result, size, master) for master in masters}
    if records[base] is None or not any(records[m] for m in others):
        return f"{count(size)} documents: not run"

    def value(master: str, name: str) -> float | None:
        record = records[master]
        if record is None:
            return None
        if name == "pipeline sum":
            return pipeline_sum(record)
        if name == "end to end":
            return record["end_to_end_seconds"]
        return stage_value(record, name, "wall_seconds")

    rows = []
    for name in (*STAGES, "pipeline sum", "end to end"):
        cells = [seconds(value(m, name)) for m in (*others, base)]
        cells += [ratio(divide(value(m, name), value(base, name))) for m in others]
        rows.append([name, *cells])
    header = ["stage", *(f"{m} (s)" for m in (*others, base)), *(f"speed-up {m} / {base}" for m in others)]
    return f"{count(size)} documents:\n\n" + markdown_table(header, rows)


def peers_table(result: dict[str, Any]) -> str:
    """Table 4: sparktc, the single-process peer and MLlib side by side at the peers size, and the ratios."""
    settings = result["settings"]
    size, master = settings["peers_size"], baseline_master(result)
    record = pipeline(result, size, master)
    single, mllib = lean_peer(result, size), result.get("peers", {}).get("mllib") or {}
    rows = []
    if record is not None:
        steps = ", ".join(f"{s} {seconds(stage_value(record, s, 'wall_seconds'))}" for s in STAGES)
        metrics = record.get("metrics", {})
        memory = (f"driver JVM {megabytes(peak(record, None, 'jvm'))}, Python driver "
                  f"{megabytes(peak(record, None, 'python_driver'))}, Python workers "
                  f"{megabytes(peak(record, None, 'python_workers'))}")
        train = seconds(stage_value(record, "train", "wall_seconds"))
        rows.append([f"sparktc, {master}", steps, f"{train} (train stage)",
                     f"{seconds(record['end_to_end_seconds'])} (end to end)", f1(metrics.get("micro_f1")),
                     f1(metrics.get("macro_f1")), memory])
    else:
        rows.append([f"sparktc, {master}", "not run", DASH, DASH, DASH, DASH, DASH])
    if single and single.get("status") == "ok":
        own = single["result"]
        steps = ", ".join(f"{name} {seconds(value)}" for name, value in own["steps"].items())
        memory = (f"{megabytes(own.get('peak_rss_mb'))} (its own ru_maxrss); sampled "
                  f"{megabytes(single['peak_rss_mb'].get('total'))}")
        rows.append([PEER_LABEL, steps, seconds(own["steps"].get("train")),
                     f"{seconds(own['total_seconds'])} (steps); {seconds(single['end_to_end_seconds'])} (command)",
                     f1(own["micro_f1"]), f1(own["macro_f1"]), memory])
    else:
        rows.append([PEER_LABEL, (single or {}).get("reason", "not run"), DASH, DASH, DASH, DASH, DASH])
    if mllib.get("status") == "ok":
        own = mllib["result"]
        steps = (f"setup {seconds(own['setup_seconds'])}; {own['categories_timed']} of {own['categories_total']} "
                 f"categories fitted, mean {seconds(own['seconds_per_category_mean'])} per category")
        memory = (f"driver JVM {megabytes(mllib['peak_rss_mb'].get('jvm'))}, Python driver "
                  f"{megabytes(mllib['peak_rss_mb'].get('python_driver'))}")
        rows.append([f"{own['tool']}, {master}", steps,
                     f"{seconds(own['extrapolated_train_seconds'])} (extrapolated to {own['categories_total']})",
                     f"{seconds(mllib['end_to_end_seconds'])} (command, {own['categories_timed']} categories)",
                     DASH, DASH, memory])
    else:
        rows.append(["MLlib LinearSVC", mllib.get("reason", "not run"), DASH, DASH, DASH, DASH, DASH])
    header = ["tool", "timed steps (s)", "training (s)", "total (s)", "micro-F1", "macro-F1", "peak RSS (MB)"]
    text = f"{count(size)} documents:\n\n" + markdown_table(header, rows)
    if mllib.get("status") == "ok":
        per_category = mllib["result"]["per_category"]
        text += "\n\nMLlib on its timed categories, beside sparktc's F1 for the same categories:\n\n" + markdown_table(
            ["category", "training positives", "MLlib fit (s)", "F1 MLlib", "F1 sparktc"],
            [[c["category"], count(c["train_positives"]), seconds(c["seconds"]), f1(c["f1_mllib"]), f1(c["f1_sparktc"])]
             for c in per_category])
        mean_mllib = mean([c["f1_mllib"] for c in per_category])
        mean_sparktc = mean([c["f1_sparktc"] for c in per_category])
        text += f"\n\nMean F1 over these categories: MLlib {f1(mean_mllib)}, sparktc {f1(mean_sparktc)}."
    ratios = peer_ratios(result)
    text += ("\n\n- MLlib extrapolated training / sparktc train stage: " + ratio(ratios["mllib_over_sparktc_train"])
             + "\n- sparktc end to end / lean peer command: " + ratio(ratios["sparktc_over_single_wall"])
             + "\n- sparktc CPU-seconds / lean peer CPU-seconds: " + ratio(ratios["sparktc_over_single_cpu"]))
    return text


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values present; None when none is."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def peer_ratios(result: dict[str, Any]) -> dict[str, float | None]:
    """At the peers size: MLlib's extrapolated training over sparktc's train stage; sparktc over the lean
    peer for wall (end to end / its command) and CPU-seconds.
    """
    size = result["settings"]["peers_size"]
    record = pipeline(result, size, baseline_master(result))
    mllib = result.get("peers", {}).get("mllib") or {}
    train = stage_value(record, "train", "wall_seconds")
    extrapolated = mllib["result"]["extrapolated_train_seconds"] if mllib.get("status") == "ok" else None
    versus = comparison(result, size)
    return {"mllib_over_sparktc_train": divide(extrapolated, train),
            "sparktc_over_single_wall": versus["wall_ratio"], "sparktc_over_single_cpu": versus["cpu_ratio"]}


def verdict(value: float | None, passes: bool) -> str:
    """A target's status: PASS or MISS, "not run" without a value."""
    return "not run" if value is None else ("PASS" if passes else "MISS")


def check_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets, each with its measured value (None when the run it needs is missing) and PASS / MISS / not run."""
    master = baseline_master(result)
    settings = result["settings"]
    full, base = pipeline(result, FULL_SIZE, master), pipeline(result, BASE_SIZE, master)
    sizes = sizes_run(result, master)
    largest = pipeline(result, sizes[-1], master) if sizes else None
    targets = []

    value = full["end_to_end_seconds"] if full else None
    note = "" if full or not largest else f" (largest run: {count(largest['size'])} documents, " \
        f"{seconds(largest['end_to_end_seconds'])} s)"
    targets.append({"target": f"end to end at {count(FULL_SIZE)} documents ≤ {TARGET_END_TO_END_SECONDS:.0f} s",
                    "value": value, "measured": (f"{seconds(value)} s" if value is not None else "not run") + note,
                    "status": verdict(value, value is not None and value <= TARGET_END_TO_END_SECONDS)})

    targets.append(memory_target(result))

    value = divide(full["end_to_end_seconds"], base["end_to_end_seconds"]) if full and base else None
    targets.append({"target": f"end to end at {count(FULL_SIZE)} ≤ {TARGET_SCALING} × end to end at {count(BASE_SIZE)}",
                    "value": value, "measured": f"{ratio(value)} ×" if value is not None else "not run",
                    "status": verdict(value, value is not None and value <= TARGET_SCALING)})

    ratios = peer_ratios(result)
    peers_size = count(settings["peers_size"])
    value = ratios["mllib_over_sparktc_train"]
    targets.append({"target": f"MLlib extrapolated training / sparktc train stage ≥ {TARGET_MLLIB_RATIO:.0f} "
                              f"(at {peers_size} documents)",
                    "value": value, "measured": f"{ratio(value)} ×" if value is not None else "not run",
                    "status": verdict(value, value is not None and value >= TARGET_MLLIB_RATIO)})

    targets += peer_targets(result)

    targets += speedup_targets(result)
    targets += beyond_rcv1_targets(result)
    return targets


def speedup_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """local[1] / local[2] at the largest speed-up size run on both: end to end, then each of SPEEDUP_STAGES."""
    settings = result["settings"]
    one = two = None
    if "local[1]" in settings["masters"] and "local[2]" in settings["masters"]:
        for size in sorted(settings["speedup_sizes"], reverse=True):
            one, two = pipeline(result, size, "local[1]"), pipeline(result, size, "local[2]")
            if one and two:
                break
    where = f" at {count(two['size'])} documents" if one and two else ""
    checks = [("end to end", TARGET_SPEEDUP,
               divide(one["end_to_end_seconds"], two["end_to_end_seconds"]) if one and two else None)]
    checks += [(stage, TARGET_STAGE_SPEEDUP, divide(stage_value(one, stage, "wall_seconds"),
                                                    stage_value(two, stage, "wall_seconds")) if one and two else None)
               for stage in SPEEDUP_STAGES]
    return [{"target": f"{what} local[1] / local[2] ≥ {target}", "value": value,
             "measured": f"{ratio(value)}{where}" if value is not None else "not run",
             "status": verdict(value, value is not None and value >= target)} for what, target, value in checks]


def beyond_rcv1_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Past RCV1-v2's size (the largest size run above FULL_SIZE): CPU-seconds per document within
    TARGET_CPU_PER_DOCUMENT_GROWTH of FULL_SIZE's, and the driver JVM still within TARGET_JVM_RSS_MB: nothing on
    the driver grows with the corpus.
    """
    master = baseline_master(result)
    full = pipeline(result, FULL_SIZE, master)
    larger = [size for size in sizes_run(result, master) if size > FULL_SIZE]
    big = pipeline(result, larger[-1], master) if larger else None
    at = f"at {count(big['size'])} documents" if big else f"past {count(FULL_SIZE)} documents"
    growth = (divide(big["cpu_seconds"] / big["size"], full["cpu_seconds"] / FULL_SIZE)
              if big and full and big.get("cpu_seconds") and full.get("cpu_seconds") else None)
    measured = "not run" if growth is None else (
        f"{ratio(growth)} × ({big['cpu_seconds'] / big['size'] * 1e6:,.1f} against "
        f"{full['cpu_seconds'] / FULL_SIZE * 1e6:,.1f} CPU-µs per document)")
    rss = peak_max(big, "jvm") if big else None
    return [
        {"target": f"CPU-seconds per document {at} ≤ {TARGET_CPU_PER_DOCUMENT_GROWTH} × at {count(FULL_SIZE)}",
         "value": growth, "measured": measured,
         "status": verdict(growth, growth is not None and growth <= TARGET_CPU_PER_DOCUMENT_GROWTH + 1e-12)},
        {"target": f"driver JVM peak RSS {at} ≤ {TARGET_JVM_RSS_MB:,.0f} MB", "value": rss,
         "measured": f"{megabytes(rss)} MB" if rss is not None else "not run",
         "status": verdict(rss, rss is not None and rss <= TARGET_JVM_RSS_MB)},
    ]


def memory_target(result: dict[str, Any]) -> dict[str, Any]:
    """Driver JVM peak RSS ≤ 2,048 MB on every memory run at FULL_SIZE, none of them failed.

    MISS as soon as one run went over or failed; PASS when all the planned runs completed within the
    limit; not run otherwise (no memory run at FULL_SIZE, or the benchmark stopped before the last one).
    """
    settings = result["settings"]
    memory = result.get("memory") or {}
    planned = memory.get("planned") or max(settings.get("repeat", 1), settings.get("memory_runs", 1))
    target = (f"driver JVM peak RSS ≤ {TARGET_JVM_RSS_MB:,.0f} MB on every one of the {planned} memory runs at "
              f"{count(FULL_SIZE)} documents ({baseline_master(result)}), no failed run")
    completed, failed, value = memory.get("completed", 0), memory.get("failed", 0), memory.get("jvm_peak_rss_mb_max")
    if not completed:
        return {"target": target, "value": None, "measured": "not run", "status": "not run"}
    runs = f"{completed} runs" if completed >= planned else f"{completed} of {planned} runs"
    peaks = " / ".join(megabytes(p) for p in memory.get("jvm_peak_rss_mb", []))
    failures = (f"{failed} failed ({'; '.join(f['cause'] for f in memory.get('failures', []))})" if failed
                else "none failed")
    described = f"max {megabytes(value)} MB over {runs} ({peaks} MB), {failures}"
    if memory.get("size") != FULL_SIZE:
        return {"target": target, "value": None, "status": "not run",
                "measured": f"not run (memory runs at {count(memory['size'])} documents: {described})"}
    over = value is not None and value > TARGET_JVM_RSS_MB
    status = "MISS" if over or failed else ("PASS" if completed >= planned and value is not None else "not run")
    return {"target": target, "value": value, "failed": failed, "measured": described, "status": status}


def peer_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets of sparktc against the lean peer at FULL_SIZE: wall ratio, CPU ratio, F1 differences.

    When either side did not run at FULL_SIZE, the target is not run and its measured text gives the
    figure at the largest other size where both ran, if any.
    """
    master = baseline_master(result)
    at = f"at {count(FULL_SIZE)} documents"
    versus = comparison(result, FULL_SIZE)
    both = [v for v in (comparison(result, size) for size in table_sizes(result))
            if v["record"] is not None and v["peer"]["wall"] is not None and v["size"] != FULL_SIZE]
    elsewhere = both[-1] if both else None

    def wall_text(v: dict[str, Any]) -> str | None:
        if v["wall_ratio"] is None:
            return None
        return f"sparktc / peer = {ratio(v['wall_ratio'])} ({seconds(v['wall'])} s / {seconds(v['peer']['wall'])} s)"

    def cpu_text(v: dict[str, Any]) -> str | None:
        if v["cpu_ratio"] is None:
            return None
        return (f"sparktc / peer = {ratio(v['cpu_ratio'])} ({seconds(v['cpu'])} CPU-s / "
                f"{seconds(v['peer']['cpu'])} CPU-s)")

    def f1_gap(v: dict[str, Any]) -> float | None:
        differences = (v["micro_f1_difference"], v["macro_f1_difference"])
        return None if None in differences else max(abs(d) for d in differences)

    def f1_text(v: dict[str, Any]) -> str | None:
        if f1_gap(v) is None:
            return None
        metrics = v["record"].get("metrics", {})
        return (f"micro {f1(metrics.get('micro_f1'))} vs {f1(v['peer']['micro_f1'])} "
                f"(Δ {v['micro_f1_difference']:+.4f}), macro {f1(metrics.get('macro_f1'))} vs "
                f"{f1(v['peer']['macro_f1'])} (Δ {v['macro_f1_difference']:+.4f})")

    def measured(text: Callable[[dict[str, Any]], str | None]) -> str:
        if text(versus) is not None:
            return text(versus)  # type: ignore[return-value]
        there = text(elsewhere) if elsewhere else None
        return "not run" + (f" (at {count(elsewhere['size'])} documents: {there})" if elsewhere and there else "")

    wall, cpu, gap = versus["wall_ratio"], versus["cpu_ratio"], f1_gap(versus)

    def aim(value: float | None, goal: float) -> str:
        return "" if value is None else f"; aim {goal}: " + ("reached" if value <= goal + 1e-12 else "not yet")

    return [
        {"target": f"sparktc end to end on {master} ≤ {TARGET_PEER_WALL_RATIO} × the lean peer's wall time {at} "
                   f"(aim {AIM_PEER_WALL_RATIO})",
         "value": wall, "measured": measured(wall_text) + aim(wall, AIM_PEER_WALL_RATIO),
         "status": verdict(wall, wall is not None and wall <= TARGET_PEER_WALL_RATIO + 1e-12)},
        {"target": f"sparktc CPU-seconds (whole process tree) ≤ {TARGET_PEER_CPU_RATIO} × the lean peer's {at} "
                   f"(aim {AIM_PEER_CPU_RATIO})",
         "value": cpu, "measured": measured(cpu_text) + aim(cpu, AIM_PEER_CPU_RATIO),
         "status": verdict(cpu, cpu is not None and cpu <= TARGET_PEER_CPU_RATIO + 1e-12)},
        {"target": f"micro- and macro-F1 each within {TARGET_F1_DIFFERENCE} of the lean peer's {at}",
         "value": gap, "measured": measured(f1_text),
         "status": verdict(gap, gap is not None and gap <= TARGET_F1_DIFFERENCE + 1e-9)},
    ]


def targets_table(targets: Sequence[dict[str, Any]]) -> str:
    """The markdown table of the targets: each one, what was measured and its status."""
    return markdown_table(["target", "measured", "result"],
                          [[t["target"], t["measured"], t["status"]] for t in targets])


def commands_section(result: dict[str, Any]) -> str:
    """Every command the harness ran, in order."""
    lines = [f"- synthesize {count(c['size'])}: `{c['command']}`" for c in result.get("corpora", [])]
    lines += [f"- pipeline {count(r['size'])}, {r['master']}, repeat {r['repeat']}: `{r['command']}`"
              for r in result.get("runs", [])]
    for peer in lean_peers(result):
        if peer.get("command"):
            lines.append(f"- lean peer {count(peer['size'])}: `{peer['command']}`")
    mllib = result.get("peers", {}).get("mllib") or {}
    if mllib.get("command"):
        lines.append(f"- mllib {count(mllib['size'])}: `{mllib['command']}`")
    return "\n".join(lines)


def cpu_source(result: dict[str, Any]) -> str:
    """Where the CPU figures come from: every command's own cpuacct cgroup (exact), or the /proc sampler."""
    sources = {run.get("cpu_source", "proc") for run in result.get("runs", [])}
    return "from each command's own cpuacct cgroup, exact" if sources == {"cgroup"} else "from /proc"


def scaling_section(result: dict[str, Any]) -> str:
    """Table 5 (with ``--event-logs``): per size, the baseline master's run replayed on 1 to 64 cores
    (:mod:`benchmarks.scaling`), and the validation: each run's measured application wall beside the replay of every
    run of that size at its cores (a local[1] log replayed on 2 cores against the measured local[2] run, and back).
    """
    parts = []
    for size in sizes_run(result, baseline_master(result)):
        records = [record for record in result.get("pipelines", []) if record["size"] == size and "scaling" in record]
        base = next((record for record in records if record["master"] == baseline_master(result)), None)
        if base is None:
            continue
        lines = base["scaling"]["lines"]
        cores = [n for n in (1, 2, 4, 16, 64) if str(n) in lines[-1]["walls"]]
        header = ["stage", "tasks", "task-s", "driver s", *(f"{n} core{'s' * (n > 1)}" for n in cores)]
        rows = [[line["stage"], count(line["tasks"]), seconds(line["task_seconds"]), seconds(line["driver_seconds"]),
                 *(seconds(line["walls"][str(n)]) for n in cores)] for line in lines]
        checks = []
        for measured_run in records:
            own = measured_run["scaling"]
            for replayed in records:
                wall = replayed["scaling"]["lines"][-1]["walls"].get(str(own["cores"]))
                if wall is not None:
                    checks.append([f"{replayed['master']} log at {own['cores']} core{'s' * (own['cores'] > 1)}",
                                   measured_run["master"], seconds(own["application_seconds"]), seconds(wall),
                                   f"{100 * (wall / own['application_seconds'] - 1):+.1f}%"])
        planned = result["settings"].get("parallelism")
        plan = f" (planned for {planned} cores: spark.default.parallelism={planned})" if planned else ""
        parts.append(f"{count(size)} documents, the {base['master']} run's event log{plan} replayed:\n\n"
                     + markdown_table(header, rows)
                     + "\n\nValidation (the application's wall, Spark's start to its end, beside the replay):\n\n"
                     + markdown_table(["replayed", "measured run", "measured s", "replayed s", "difference"], checks))
    return "\n\n".join(parts) or "not run (run the harness with --event-logs)"


def render(result: dict[str, Any]) -> str:
    """The whole benchmark.md."""
    master = baseline_master(result)
    settings = result["settings"]
    repeat = settings.get("repeat", 1)
    memory = result.get("memory") or {}
    runs = [f"{repeat} of each configuration"] if repeat > 1 else []
    if memory.get("completed", 0) > repeat:
        runs.append(f"{memory['completed']} at {count(memory['size'])} documents on {memory['master']}")
    median = (f" Times are medians over the runs ({', '.join(runs)}), peak RSS the largest over them."
              if runs else "")
    parts = [
        "# sparktc at RCV1-v2 scale (synthetic LYRL2004-format corpora)",
        machine_section(result),
        f"## Table 1. Sizes × stages: sparktc on {master} beside the {PEER_LABEL}",
        ("Each time cell is wall seconds / CPU-seconds. sparktc: a stage's wall time is its own "
         "(manifests/<stage>.json), its CPU the whole process tree's (JVM, Python driver and workers, reaped "
         f"children included, {cpu_source(result)}) over the stage's segment of the run; end to end = the whole "
         "`./spark-submit.sh jobs/pipeline.py` command from spawn to exit (JVM start-up and shutdown included). "
         f"Peer: the {PEER_LABEL} on the same corpus in the same harness run, its whole command "
         "(interpreter start included) measured by the same sampler; its peak RSS is its own ru_maxrss. "
         f"sparktc / peer above 1: sparktc takes longer or uses more CPU.{median}"),
        sizes_table(result),
        memory_section(result),
        synthesis_line(result),
        "## Table 2. The largest run, segment by segment",
        ("startup = spawn until ingest begins; shutdown = after the last stage line until exit. CPU = utime + "
         f"stime of the whole process tree (reaped children included), {cpu_source(result)}. Peak RSS = the "
         "largest of the samples taken every 0.2 s during the segment (VmRSS); Python workers = the sum over "
         "pyspark's daemon and the workers it forks, so pages they share are counted in each of them."
         + (" Each figure is the median over the runs." if runs else "")),
        largest_table(result),
        "## Table 3. Speed-up from a second core",
    ]
    parts += [speedup_table(result, size) for size in settings["speedup_sizes"]] or ["not run"]
    parts += ["## Table 4. Peers", peers_table(result),
              "## Table 5. Scaling projection", scaling_section(result),
              "## Targets", targets_table(result.get("targets") or check_targets(result)),
              "## Commands", commands_section(result)]
    return document(parts, result)
