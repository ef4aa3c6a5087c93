r"""Yang & Liu's five classifiers at RCV1-v2 scale: what each one's train and evaluate stages cost.

    .venv/bin/python -m benchmarks.methods_rcv1 --output runs/methods-rcv1 \
        [--corpus runs/benchmark-rcv1/corpus-804414] [--methods svm,knn,llsf,nb,nnet] [--history DIR]

Run it from the repository root; the commands it starts run from there, exactly as a user would type them:

1. The corpus stages run once into OUTPUT/prepared: ``./spark-submit.sh --master local[2] jobs/pipeline.py
   --config conf/rcv1.toml --set corpus.path=CORPUS --output OUTPUT/prepared``. jobs/pipeline.py has no way to
   stop after rank, so this is the whole default pipeline (one-vs-rest SVM, threshold 0); run again, sparktc
   finds its stages current and skips them.
2. For each method, OUTPUT/prepared is copied to OUTPUT/methods/METHOD (modification times kept, so the
   manifests of ingest .. rank stay current) and the same command runs there with the method's overrides
   (:data:`METHODS`), under the /proc sampler of ``benchmarks/measure.py``: wall and CPU-seconds of the whole
   process tree and the peak RSS of the driver JVM, the Python driver and the Python workers, per stage
   segment. Whether ingest .. rank were skipped as current or recomputed (and why) is read from the run's
   output and manifests.
3. A method whose run fails (out of memory, say) is recorded as failed, with its cause and the last lines of
   its output, and the next method runs.
4. OUTPUT/methods_rcv1.json holds every figure raw, OUTPUT/methods_rcv1.md the table and the machine (printed
   too); each command's output is kept in OUTPUT/logs/, Spark's logs in OUTPUT/logs/spark/.

OUTPUT must be new, empty, or written by this script before (it holds OUTPUT/.methods_rcv1): like sparktc, the
benchmark never deletes or replaces what it did not write. Exit code 0 when every command succeeded, 1 when one
failed (the corpus stages failing stops the benchmark), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import recording, tables
from benchmarks.measure import Measured, parse_stage_line, run_measured
from benchmarks.rcv1_scale import (
    CORPUS_FILES,
    RCV1_DOCUMENTS,
    RCV1_VOCABULARY,
    REPO,
    SAMPLE_SECONDS,
    HarnessError,
    failure,
    failure_cause,
    harness_parser,
    process_summary,
    read_json,
    relative,
    rounded,
    run_harness,
    train_documents,
)
from sparktc.runtime.outputs import INCOMPLETE, LOCK

#: Yang & Liu's settings for each method (overrides of conf/rcv1.toml: their feature counts, k = 45, 500 singular
#: values, 64 hidden units); thresholds by SCutFBR.1 (LYRL2004) over 5-fold cross-validation on the training
#: documents, since plain SCut assigns a rare category to nearly every document when its folds' best cut is below
#: all-zero kNN scores. svm is LIBLINEAR's default solver.
METHODS: dict[str, tuple[str, ...]] = {
    "svm": ("train.thresholding=scutfbr",),
    "knn": ("train.method=knn", "train.knn.k=45", "select.top_k=2415", "train.thresholding=scutfbr"),
    "llsf": ("train.method=llsf", "select.top_k=2415", "train.llsf.k=500", "train.thresholding=scutfbr"),
    "nb": ("train.method=nb", "select.top_k=2000", "train.thresholding=scutfbr"),
    "nnet": ("train.method=nnet", "select.top_k=1000", "train.thresholding=scutfbr"),
}
MASTER = "local[2]"  # as benchmarks/rcv1_scale.py, so the figures sit beside docs/benchmarks/rcv1-scale.md's
DEFAULT_CORPUS = f"runs/benchmark-rcv1/corpus-{RCV1_DOCUMENTS}"
MARKER = ".methods_rcv1"
WRITER = "benchmarks/methods_rcv1.py"
CORPUS_STAGES = tables.STAGES[:4]
ROLES = ("jvm", "python_driver", "python_workers")
SKIPPED_LINE = re.compile(r"^sparktc: (?P<stage>\S+)\s+up to date, skipped")
SPARK_LOG = re.compile(r"\(the trace and Spark's log: (?P<path>[^)]+)\)")


# --- arguments ---------------------------------------------------------------------------------

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


def selected_methods(text: str) -> list[str]:
    """The methods of ``--methods`` (comma-separated, in the order given)."""
    return selected(text, list(METHODS), "method(s)")


def output_refusal(output: Path, marker: str = MARKER, writer: str = WRITER) -> str | None:
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


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked before anything runs: the corpus, the output and the methods."""
    parser = harness_parser(__doc__)
    parser.add_argument("--corpus", default=DEFAULT_CORPUS,
                        help=f"LYRL2004-format corpus directory (default {DEFAULT_CORPUS})")
    parser.add_argument("--output", required=True, help="directory for the runs, logs and methods_rcv1.json/.md")
    parser.add_argument("--methods", type=selected_methods, default=list(METHODS),
                        help=f"comma-separated methods to run (default {','.join(METHODS)})")
    arguments = parser.parse_args(argv)
    arguments.corpus, arguments.output = Path(arguments.corpus).resolve(), Path(arguments.output).resolve()
    for refusal in (corpus_refusal(arguments.corpus), output_refusal(arguments.output)):
        if refusal:
            parser.error(refusal)
    return arguments


# --- runs --------------------------------------------------------------------------------------

def pipeline_command(corpus: Path, run_dir: Path, overrides: Sequence[str] = ()) -> list[str]:
    """The pipeline command (conf/rcv1.toml with ``overrides``) on ``corpus`` into ``run_dir``."""
    return ["./spark-submit.sh", "--master", MASTER, "jobs/pipeline.py", "--config", "conf/rcv1.toml",
            "--set", f"corpus.path={relative(corpus)}", *(a for o in overrides for a in ("--set", o)),
            "--output", relative(run_dir)]


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
        manifest = read_manifest(run_dir, segment.name) if segment.name in tables.STAGES else {}
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
    ran = recording.as_run(command)
    print(f"{harness}: $ {shlex.join(ran)}", flush=True)
    result = run_measured(ran, REPO, log, "jobs/pipeline.py", interval=SAMPLE_SECONDS,
                          echo=lambda line: print(f"    {line}", flush=True))
    recording.measured(log, result)
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


def run_method(output: Path, corpus: Path, name: str) -> dict[str, Any]:
    """Copy the prepared run to OUTPUT/methods/NAME and run the pipeline there with the method's settings."""
    run_dir = output / "methods" / name
    shutil.rmtree(run_dir, ignore_errors=True)  # inside OUTPUT, which is this script's: an earlier run of it
    began = time.monotonic()
    # copy2 keeps modification times: sparktc then takes the outputs for unchanged without hashing them again.
    shutil.copytree(output / "prepared", run_dir, ignore=shutil.ignore_patterns(LOCK, INCOMPLETE))
    copy_seconds = round(time.monotonic() - began, 1)
    print(f"methods_rcv1: {name}: copied {relative(output / 'prepared')} to {relative(run_dir)} in "
          f"{copy_seconds} s", flush=True)
    record = run(pipeline_command(corpus, run_dir, METHODS[name]), run_dir, output / "logs" / f"{name}.log")
    return {"method": name, "overrides": list(METHODS[name]), "copy_seconds": copy_seconds, **record}


def run_figures(record: Mapping[str, Any]) -> dict[str, Any]:
    """The headline figures of one pipeline run (:func:`run`): end to end wall and CPU-seconds, peak memory, F1, and
    the train and evaluate stages' own wall and CPU-seconds; none for a run that failed.
    """
    if record["failed"]:
        return {}
    metrics = record.get("metrics", {})
    return {"seconds": record["end_to_end_seconds"], "cpu_seconds": record["cpu_seconds"],
            "peak_memory_bytes": recording.memory_bytes(record["peak_rss_mb"].get("total")),
            "micro_f1": metrics.get("micro_f1"), "macro_f1": metrics.get("macro_f1"),
            **{stage: {"seconds": figure(record, stage, "wall_seconds"),
                       "cpu_seconds": figure(record, stage, "cpu_seconds")} for stage in ("train", "evaluate")}}


def headline(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record: ``sparktc.prepared`` (the corpus stages' run) and ``sparktc.METHOD``
    (:func:`run_figures`).
    """
    return {"sparktc": {"prepared": run_figures(result["prepared"]) if result.get("prepared") else {},
                        **{record["method"]: run_figures(record) for record in result["methods"]}}}


# --- the tables --------------------------------------------------------------------------------

def figure(record: Mapping[str, Any], stage: str, key: str) -> Any:
    """One figure (``key``) of a stage's segment in the record; None when the stage did not run."""
    return record.get("segments", {}).get(stage, {}).get(key)


def memory(record: Mapping[str, Any], stage: str) -> str:
    """The "driver JVM / Python driver / Python workers" peak-RSS cell of a stage."""
    peaks = figure(record, stage, "peak_rss_mb")
    return tables.DASH if peaks is None else " / ".join(tables.megabytes(peaks.get(role)) for role in ROLES)


def corpus_cell(record: Mapping[str, Any]) -> str:
    """How ingest .. rank fared: skipped, or the first stage not skipped with its reason (the later ones repeat
    it: "ingest was recomputed (...)") and how the others fared.
    """
    states = record.get("corpus_stages", {})
    changed = [stage for stage, state in states.items() if not state.startswith("skipped")]
    if not states or not changed:
        return "skipped (current)" if states else tables.DASH
    later = [f"{stage} {states[stage].split(' (', 1)[0]}" for stage in changed[1:]]
    return "; ".join([f"{changed[0]} {states[changed[0]]}", *([", ".join(later)] if later else [])])


def methods_table(methods: Sequence[Mapping[str, Any]]) -> str:
    """The markdown table of every method: train and evaluate times and memory, end-to-end time, F1, how the corpus
    stages fared and the command.
    """
    rows = []
    for record in methods:
        metrics = record.get("metrics", {})
        rows.append([
            record["method"] + (" (**failed**)" if record["failed"] else ""),
            tables.pair(figure(record, "train", "wall_seconds"), figure(record, "train", "cpu_seconds")),
            tables.pair(figure(record, "evaluate", "wall_seconds"), figure(record, "evaluate", "cpu_seconds")),
            memory(record, "train"), memory(record, "evaluate"),
            tables.pair(record["end_to_end_seconds"], record["cpu_seconds"]),
            tables.f1(metrics.get("micro_f1")), tables.f1(metrics.get("macro_f1")),
            corpus_cell(record), f"`{record['command']}`",
        ])
    header = ["method", "train wall / CPU (s)", "evaluate wall / CPU (s)",
              "train peak RSS (MB): driver JVM / Python driver / Python workers",
              "evaluate peak RSS (MB): driver JVM / Python driver / Python workers",
              "end to end wall / CPU (s)", "micro-F1", "macro-F1", "ingest .. rank", "command"]
    return tables.table(header, rows)


def failures_section(methods: Sequence[Mapping[str, Any]]) -> str:
    """What failed: each failed method's cause, exit code and the last lines of its output, in markdown."""
    failed = [record for record in methods if record["failed"]]
    if not failed:
        return "No method failed."
    parts = []
    for record in failed:
        tail = "\n".join(record.get("tail", [])[-20:])
        parts.append(f"**{record['method']}** failed: {record['cause']} (exit code {record['returncode']}, "
                     f"after {tables.seconds(record['end_to_end_seconds'])} s; full output: {record['log']}). "
                     f"Last lines of its output:\n\n```\n{tail}\n```")
    return "\n\n".join(parts)


def render(result: Mapping[str, Any]) -> str:
    """The whole methods_rcv1.md."""
    prepared = result.get("prepared") or {}
    cores = result["machine"].get("cores")
    parts = [
        "# Yang & Liu's five methods at RCV1-v2 scale",
        (f"Corpus: `{result['settings']['corpus']}`. Each method ran `jobs/pipeline.py` on a copy of one run of the "
         "corpus stages, whose ingest .. rank were to be skipped as current (column \"ingest .. rank\" says whether "
         "they were). A stage's wall time is its own (manifests/<stage>.json); CPU-seconds are the whole process "
         "tree's (JVM, Python driver and workers, from /proc) over the stage's segment of the run; peak RSS is the "
         f"largest of the samples taken every {SAMPLE_SECONDS} s during the segment (Python workers: the sum over "
         "pyspark's daemon and its workers). End to end: the whole command, JVM start-up and the skipped stages' "
         f"checks included. Spark {MASTER} on {cores} cores; the load averages below show whether other work "
         "ran beside it (the benchmark alone keeps about 2 busy); times are from one run each."),
        methods_table(result.get("methods", [])),
        "## Failures",
        failures_section(result.get("methods", [])),
        "## Corpus stages",
        (f"`{prepared['command']}`: {tables.seconds(prepared.get('end_to_end_seconds'))} s wall, "
         f"{tables.seconds(prepared.get('cpu_seconds'))} CPU-seconds; {corpus_cell(prepared)}"
         if prepared else "not run"),
        "## Machine",
        tables.machine_section(result),
    ]
    return tables.document(parts, result)


# --- main --------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """Run the corpus stages once, then every chosen method on a copy, and write methods_rcv1.json and methods_rcv1.md
    (module docstring); the exit code.
    """
    arguments = parse_arguments(argv)
    output: Path = arguments.output
    settings = {"corpus": relative(arguments.corpus), "methods": arguments.methods, "masters": [MASTER],
                "overrides": {name: list(METHODS[name]) for name in arguments.methods},
                "sample_seconds": SAMPLE_SECONDS}

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        status = 0
        prepared_dir = output / "prepared"
        result["prepared"] = run(pipeline_command(arguments.corpus, prepared_dir), prepared_dir,
                                 output / "logs" / "prepared.log")
        if result["prepared"]["failed"]:
            raise HarnessError(result["prepared"]["error"])
        write()
        for name in arguments.methods:
            result["methods"].append(run_method(output, arguments.corpus, name))
            status |= int(result["methods"][-1]["failed"])
            write()  # partial results survive a later crash
        return status

    return run_harness("methods_rcv1", output, argv, settings, body, render, "methods_rcv1", marker=(MARKER, WRITER),
                       headline=headline, methods=[])


if __name__ == "__main__":
    sys.exit(main())
