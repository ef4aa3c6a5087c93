"""Part of the benchmark harness (:mod:`benchmarks.harness`): one pipeline command run and measured stage by stage
(:func:`run`: each segment's wall, CPU-seconds and peak memory, how the corpus stages fared, F1, and why it
failed), with what the benchmarks that run the pipeline on the RCV1-v2-scale corpus share: the master, the default
corpus and its refusal (:func:`corpus_refusal`), an output directory's refusal (:func:`output_refusal`), a
comma-separated choice (:func:`selected`), a run's headline figures (:func:`run_figures`) and the corpus stages'
tables hard-linked into another run (:func:`link_tables`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import harness_recording, harness_tables
from benchmarks.harness import (
    CORPUS_FILES,
    RCV1_DOCUMENTS,
    RCV1_VOCABULARY,
    REPO,
    SAMPLE_SECONDS,
    failure,
    failure_cause,
    process_summary,
    read_json,
    relative,
    rounded,
    train_documents,
)
from benchmarks.harness_measure import Measured, parse_stage_line, run_measured

MASTER = "local[2]"  # as benchmarks/rcv1_scale.py, so the figures sit beside docs/benchmarks/rcv1-scale.md's
DEFAULT_CORPUS = f"runs/benchmark-rcv1/corpus-{RCV1_DOCUMENTS}"
CORPUS_STAGES = harness_tables.STAGES[:4]
SKIPPED_LINE = re.compile(r"^sparktc: (?P<stage>\S+)\s+up to date, skipped")
SPARK_LOG = re.compile(r"\(the trace and Spark's log: (?P<path>[^)]+)\)")


def selected(text: str, known: Sequence[str], what: str) -> list[str]:
    """The comma-separated names of ``text`` (``what`` they are, for the messages), each in ``known`` and none
    twice, in the order given.
    """
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(unknown) or '(none given)'}; "
                                         f"known: {', '.join(known)}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"{what} given twice: {', '.join(repeated)}")
    return names


def output_refusal(output: Path, marker: str, writer: str) -> str | None:
    """Why the benchmark ``writer`` may not write into ``output`` (None when it may): an existing file, or a
    non-empty directory without its ``marker``.
    """
    if not output.exists():
        return None
    if not output.is_dir():
        return f"--output {output} is an existing file, not a directory"
    if not any(output.iterdir()):
        return None
    try:
        ours = json.loads((output / marker).read_text()).get("written_by") == writer
    except (OSError, ValueError, AttributeError):
        ours = False
    if ours:
        return None
    return (f"--output {output} is not empty and was not written by {writer} (no {marker} file): the benchmark "
            "never deletes or replaces what it did not write; give a new or empty directory")


def corpus_refusal(corpus: Path) -> str | None:
    """Why ``corpus`` is not a LYRL2004-format corpus (None when it is), with the command that makes one."""
    missing = [name for name in CORPUS_FILES
               if not (corpus / name).is_file() and not (corpus / name.removesuffix(".gz")).is_file()]
    if not missing:
        return None
    make = shlex.join(["./spark-submit.sh", "--master", MASTER, "jobs/synthesize.py", "--config", "conf/synthetic.toml",
                       "--set", f"synthesize.documents={RCV1_DOCUMENTS}",
                       "--set", f"synthesize.train_documents={train_documents(RCV1_DOCUMENTS)}",
                       "--set", f"synthesize.vocabulary_size={RCV1_VOCABULARY}",
                       "--set", "synthesize.hierarchy=../shared/data/rcv1/rcv1.topics.hier.orig",
                       "--output", relative(corpus)])
    return (f"--corpus {corpus} lacks {', '.join(missing)}; make an RCV1-v2-shaped synthetic corpus there "
            f"(as benchmarks/rcv1_scale.py does) with:\n  {make}")


def stage_status(events: Sequence[tuple[float, str]], reasons: Mapping[str, str]) -> dict[str, str]:
    """How each corpus stage fared in a run, from its ``sparktc:`` lines: skipped as current, recomputed (with
    ``reasons[stage]``, its manifest's ``recomputed_because``), or not reached.
    """
    skipped = {match["stage"] for _, line in events if (match := SKIPPED_LINE.match(line))}
    ran = {stage.stage for stage in (parse_stage_line(t, line) for t, line in events) if stage is not None}
    return {stage: "skipped (current)" if stage in skipped
            else f"recomputed ({reasons.get(stage, 'reason not recorded')})" if stage in ran else "not reached"
            for stage in CORPUS_STAGES}


def read_manifest(run_dir: Path, stage: str) -> dict[str, Any]:
    """The manifest of ``stage`` in ``run_dir``; empty when it is missing or unreadable."""
    try:
        return json.loads((run_dir / "manifests" / f"{stage}.json").read_text())
    except (OSError, ValueError):
        return {}


def segments(result: Measured, run_dir: Path) -> dict[str, dict[str, Any]]:
    """Each segment of a run (startup, the stages that ran, shutdown): wall, CPU-seconds, peak RSS, and for a
    stage its own time and rows from its manifest (``wall_seconds``; the segment's own span is kept too).
    """
    found = {}
    for segment in result.segments():
        entry: dict[str, Any] = {"wall_seconds": round(segment.wall_seconds, 3),
                                 "segment_seconds": round(segment.wall_seconds, 3),
                                 "cpu_seconds": round(segment.cpu_seconds, 3),
                                 "peak_rss_mb": rounded(segment.peak_rss_mb), "samples": segment.samples}
        manifest = read_manifest(run_dir, segment.name) if segment.name in harness_tables.STAGES else {}
        if manifest:
            entry.update(wall_seconds=manifest["seconds"], rows_in=manifest["rows_in"], rows_out=manifest["rows_out"])
        found[segment.name] = entry
    return found


def why_it_failed(result: Measured, log: Path) -> tuple[bool, str]:
    """(out of memory, cause) of a failed run, from its output and the Spark log its error line names."""
    text = log.read_text(errors="replace") if log.is_file() else "\n".join(result.tail)
    spark_log = next((Path(match["path"]) for match in SPARK_LOG.finditer(text)), None)
    if spark_log is not None and spark_log.is_file():
        text += "\n" + spark_log.read_text(errors="replace")
    out_of_memory, cause = failure_cause(result.returncode, text)
    error_line = next((line for line in reversed(result.tail) if line.startswith("sparktc: error")), None)
    if not out_of_memory and error_line:
        cause = f"{cause}: {error_line}"
    return out_of_memory, cause


def run(command: list[str], run_dir: Path, log: Path, harness: str = "methods_rcv1") -> dict[str, Any]:
    """One measured pipeline run: its segments, how the corpus stages fared, F1, and on failure its cause; the
    lines it prints start with ``harness``.
    """
    ran = harness_recording.as_run(command)
    print(f"{harness}: $ {shlex.join(ran)}", flush=True)
    result = run_measured(ran, REPO, log, "jobs/pipeline.py", interval=SAMPLE_SECONDS,
                          echo=lambda line: print(f"    {line}", flush=True))
    harness_recording.measured(log, result)
    reasons = {stage: read_manifest(run_dir, stage).get("recomputed_because", "") for stage in CORPUS_STAGES}
    record: dict[str, Any] = {
        "command": shlex.join(command), "run_dir": str(run_dir), "log": str(log), "returncode": result.returncode,
        "failed": result.returncode != 0, "end_to_end_seconds": round(result.seconds, 3),
        "cpu_seconds": round(result.cpu_seconds, 3), "peak_rss_mb": rounded(result.peak_rss_mb()),
        "segments": segments(result, run_dir), "corpus_stages": stage_status(result.events, reasons),
        "samples": len(result.samples), "processes": process_summary(result),
    }
    if result.returncode != 0:
        error = failure(ran, log, result)
        out_of_memory, cause = why_it_failed(result, log)
        record.update(out_of_memory=out_of_memory, cause=cause, error=str(error), tail=result.tail)
        print(f"{harness}: {error}\n{error.detail}", file=sys.stderr, flush=True)
        return record
    metrics = read_json(run_dir / "metrics.json")
    record["metrics"] = {key: metrics.get(key) for key in ("micro_f1", "macro_f1", "n_categories", "test_documents")}
    print(f"{harness}:   done in {result.seconds:.1f} s", flush=True)
    return record


def run_figures(record: Mapping[str, Any]) -> dict[str, Any]:
    """The headline figures of one pipeline run (:func:`run`): end to end wall and CPU-seconds, peak memory, F1, and
    the train and evaluate stages' own wall and CPU-seconds; none for a run that failed.
    """
    if record["failed"]:
        return {}
    metrics = record.get("metrics", {})
    return {"seconds": record["end_to_end_seconds"], "cpu_seconds": record["cpu_seconds"],
            "peak_memory_bytes": harness_recording.memory_bytes(record["peak_rss_mb"].get("total")),
            "micro_f1": metrics.get("micro_f1"), "macro_f1": metrics.get("macro_f1"),
            **{stage: {"seconds": figure(record, stage, "wall_seconds"),
                       "cpu_seconds": figure(record, stage, "cpu_seconds")} for stage in ("train", "evaluate")}}


def figure(record: Mapping[str, Any], stage: str, key: str) -> Any:
    """One figure (``key``) of a stage's segment in the record; None when the stage did not run."""
    return record.get("segments", {}).get(stage, {}).get(key)


def link_tables(source: str, target: str) -> None:
    """Copy a corpus-stages file into a setup's run: the Parquet tables' files hard-linked (stages never change a
    published file in place, they write new ones and rename), anything else (manifests, the lock) copied.
    """
    if "/manifests/" in source or Path(source).name.startswith(".sparktc"):
        shutil.copy2(source, target)
    else:
        os.link(source, target)
