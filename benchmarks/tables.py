"""Markdown tables and target checks of the RCV1-v2-scale benchmark (``benchmarks/rcv1_scale.py``).

Pure functions of the result record that ``rcv1_scale.py`` writes to ``benchmark.json``:

* ``machine``: cores, memory_gb, cpu_model, python, java, pyspark, spark_defaults, load averages, git;
* ``command``: the command line that produced the record; ``settings``: sizes, masters, speedup_sizes,
  peers_size, hierarchy, repeat;
* ``corpora``: one record per size (size, train_documents, seconds of synthesis, reused);
* ``pipelines``: one record per (size, master), the median over repeats: ``end_to_end_seconds``,
  ``cpu_seconds``, ``stages`` {name: {wall_seconds, cpu_seconds, rows_in, rows_out, peak_rss_mb
  {jvm, python_driver, python_workers, ...}}} for startup, the six stages and shutdown,
  ``peak_rss_mb`` of the whole run, ``metrics`` {micro_f1, macro_f1};
* ``peers``: ``single_process`` and ``mllib``, each {status, size, end_to_end_seconds, peak_rss_mb,
  result (the peer's own JSON)} or {status: "skipped", reason}.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

STAGES = ("ingest", "tokenize", "weight", "rank", "train", "evaluate")
SEGMENTS = ("startup", *STAGES, "shutdown")
FULL_SIZE = 804_414  # RCV1-v2 (LYRL2004): 23,149 training + 781,265 test documents
BASE_SIZE = 100_000
TARGET_END_TO_END_SECONDS = 180.0
TARGET_JVM_RSS_MB = 2048.0
TARGET_SCALING = 8.5
TARGET_MLLIB_RATIO = 20.0
TARGET_SPEEDUP = 1.7
DASH = "—"


def seconds(value: float | None) -> str:
    return DASH if value is None else f"{value:,.1f}"


def ratio(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def f1(value: float | None) -> str:
    return DASH if value is None else f"{value:.4f}"


def megabytes(value: float | None) -> str:
    return DASH if value is None else f"{value:,.0f}"


def count(value: int | None) -> str:
    return DASH if value is None else f"{value:,}"


def divide(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table: header row, separator, rows."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def baseline_master(result: dict[str, Any]) -> str:
    return result["settings"]["masters"][0]


def pipeline(result: dict[str, Any], size: int, master: str) -> dict[str, Any] | None:
    """The (median) pipeline record of ``size`` documents on ``master``, if it was run."""
    for record in result.get("pipelines", []):
        if record["size"] == size and record["master"] == master:
            return record
    return None


def sizes_run(result: dict[str, Any], master: str) -> list[int]:
    return sorted(record["size"] for record in result.get("pipelines", []) if record["master"] == master)


def stage_value(record: dict[str, Any] | None, stage: str, key: str) -> Any:
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


def sizes_table(result: dict[str, Any]) -> str:
    """Table 1: wall seconds per stage for every size at the baseline master, F1 and growth."""
    master = baseline_master(result)
    sizes = sizes_run(result, master)
    smallest = pipeline(result, sizes[0], master) if sizes else None
    rows = []
    for size in sizes:
        record = pipeline(result, size, master)
        metrics = record.get("metrics", {})
        rows.append([count(size), *(seconds(stage_value(record, s, "wall_seconds")) for s in STAGES),
                     seconds(pipeline_sum(record)), seconds(record["end_to_end_seconds"]),
                     f1(metrics.get("micro_f1")), f1(metrics.get("macro_f1")),
                     ratio(size / sizes[0]),
                     ratio(divide(record["end_to_end_seconds"], smallest["end_to_end_seconds"] if smallest else None))])
    return table(["documents", *STAGES, "pipeline sum", "end to end", "micro-F1", "macro-F1",
                  "× documents", "× end to end"], rows)


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
    return f"{count(sizes[-1])} documents, {master}:\n\n" + table(header, rows)


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
    return f"{count(size)} documents:\n\n" + table(header, rows)


def peers_table(result: dict[str, Any]) -> str:
    """Table 4: sparktc, the single-process peer and MLlib side by side at the peers size, and the ratios."""
    settings = result["settings"]
    size, master = settings["peers_size"], baseline_master(result)
    record = pipeline(result, size, master)
    peers = result.get("peers", {})
    single, mllib = peers.get("single_process", {}), peers.get("mllib", {})
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
    if single.get("status") == "ok":
        own = single["result"]
        steps = ", ".join(f"{name} {seconds(value)}" for name, value in own["steps"].items())
        memory = (f"{megabytes(own.get('peak_rss_mb'))} (its own ru_maxrss); sampled "
                  f"{megabytes(single['peak_rss_mb'].get('total'))}")
        rows.append([own["tool"], steps, seconds(own["steps"].get("train")),
                     f"{seconds(own['total_seconds'])} (steps); {seconds(single['end_to_end_seconds'])} (command)",
                     f1(own["micro_f1"]), f1(own["macro_f1"]), memory])
    else:
        rows.append(["single-process", single.get("reason", "not run"), DASH, DASH, DASH, DASH, DASH])
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
    text = f"{count(size)} documents:\n\n" + table(header, rows)
    if mllib.get("status") == "ok":
        per_category = mllib["result"]["per_category"]
        text += "\n\nMLlib on its timed categories, beside sparktc's F1 for the same categories:\n\n" + table(
            ["category", "training positives", "MLlib fit (s)", "F1 MLlib", "F1 sparktc"],
            [[c["category"], count(c["train_positives"]), seconds(c["seconds"]), f1(c["f1_mllib"]), f1(c["f1_sparktc"])]
             for c in per_category])
        mean_mllib = mean([c["f1_mllib"] for c in per_category])
        mean_sparktc = mean([c["f1_sparktc"] for c in per_category])
        text += f"\n\nMean F1 over these categories: MLlib {f1(mean_mllib)}, sparktc {f1(mean_sparktc)}."
    ratios = peer_ratios(result)
    text += ("\n\n- MLlib extrapolated training / sparktc train stage: " + ratio(ratios["mllib_over_sparktc_train"])
             + "\n- single-process total / sparktc end to end: " + ratio(ratios["single_over_sparktc_end_to_end"]))
    return text


def mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def peer_ratios(result: dict[str, Any]) -> dict[str, float | None]:
    """MLlib's extrapolated training over sparktc's train stage; single-process total over sparktc end to end."""
    record = pipeline(result, result["settings"]["peers_size"], baseline_master(result))
    peers = result.get("peers", {})
    single, mllib = peers.get("single_process", {}), peers.get("mllib", {})
    train = stage_value(record, "train", "wall_seconds")
    end_to_end = record["end_to_end_seconds"] if record else None
    extrapolated = mllib["result"]["extrapolated_train_seconds"] if mllib.get("status") == "ok" else None
    total = single["result"]["total_seconds"] if single.get("status") == "ok" else None
    return {"mllib_over_sparktc_train": divide(extrapolated, train),
            "single_over_sparktc_end_to_end": divide(total, end_to_end)}


def verdict(value: float | None, passes: bool) -> str:
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

    value = peak(full, None, "jvm")
    note = "" if full or not largest else f" (largest run: {count(largest['size'])} documents, " \
        f"{megabytes(peak(largest, None, 'jvm'))} MB)"
    targets.append({"target": f"driver JVM peak RSS at {count(FULL_SIZE)} documents ≤ {TARGET_JVM_RSS_MB:,.0f} MB",
                    "value": value, "measured": (f"{megabytes(value)} MB" if value is not None else "not run") + note,
                    "status": verdict(value, value is not None and value <= TARGET_JVM_RSS_MB)})

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

    value = ratios["single_over_sparktc_end_to_end"]
    targets.append({"target": f"sparktc end to end ≤ single-process total (at {peers_size} documents)",
                    "value": value,
                    "measured": f"single-process / sparktc = {ratio(value)}" if value is not None else "not run",
                    "status": verdict(value, value is not None and value >= 1.0)})

    masters = settings["masters"]
    value, where = None, ""
    if "local[1]" in masters and "local[2]" in masters:
        for size in sorted(settings["speedup_sizes"], reverse=True):
            one, two = pipeline(result, size, "local[1]"), pipeline(result, size, "local[2]")
            if one and two:
                value = divide(one["end_to_end_seconds"], two["end_to_end_seconds"])
                where = f" at {count(size)} documents"
                break
    targets.append({"target": f"end to end local[1] / local[2] ≥ {TARGET_SPEEDUP}",
                    "value": value, "measured": f"{ratio(value)}{where}" if value is not None else "not run",
                    "status": verdict(value, value is not None and value >= TARGET_SPEEDUP)})
    return targets


def targets_table(targets: Sequence[dict[str, Any]]) -> str:
    return table(["target", "measured", "result"], [[t["target"], t["measured"], t["status"]] for t in targets])


def commands_section(result: dict[str, Any]) -> str:
    """Every command the harness ran, in order."""
    lines = [f"- synthesize {count(c['size'])}: `{c['command']}`" for c in result.get("corpora", [])]
    lines += [f"- pipeline {count(r['size'])}, {r['master']}, repeat {r['repeat']}: `{r['command']}`"
              for r in result.get("runs", [])]
    for name, peer in result.get("peers", {}).items():
        if peer.get("command"):
            lines.append(f"- {name}: `{peer['command']}`")
    return "\n".join(lines)


def render(result: dict[str, Any]) -> str:
    """The whole benchmark.md."""
    master = baseline_master(result)
    settings = result["settings"]
    repeat = settings.get("repeat", 1)
    median = f" Each figure is the median of {repeat} runs." if repeat > 1 else ""
    parts = [
        "# sparktc at RCV1-v2 scale (synthetic LYRL2004-format corpora)",
        machine_section(result),
        f"## Table 1. Wall seconds per stage, {master}",
        (f"Each stage's own time (manifests/<stage>.json); pipeline sum = the six stages; end to end = the whole "
         f"`./spark-submit.sh jobs/pipeline.py` command from spawn to exit (JVM start-up and shutdown included); "
         f"× = ratio to the smallest size.{median}"),
        sizes_table(result),
        synthesis_line(result),
        "## Table 2. The largest run, segment by segment",
        ("startup = spawn until ingest begins; shutdown = after the last stage line until exit. CPU = utime + "
         "stime of the whole process tree (reaped children included) from /proc. Peak RSS = the largest of the "
         "samples taken every 0.2 s during the segment (VmRSS); Python workers = the sum over pyspark's daemon "
         "and the workers it forks, so pages they share are counted in each of them."),
        largest_table(result),
        "## Table 3. Speed-up from a second core",
    ]
    parts += [speedup_table(result, size) for size in settings["speedup_sizes"]] or ["not run"]
    parts += ["## Table 4. Peers", peers_table(result),
              "## Targets", targets_table(result.get("targets") or check_targets(result)),
              "## Commands", commands_section(result)]
    if result.get("error"):
        parts.insert(1, f"**The benchmark stopped early:** {result['error']}")
    return "\n\n".join(parts) + "\n"
