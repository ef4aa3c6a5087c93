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
   (:data:`METHODS`), under the /proc sampler of ``benchmarks/harness_measure.py``: wall and CPU-seconds of the whole
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
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import harness_tables
from benchmarks.harness import SAMPLE_SECONDS, HarnessError, harness_parser, relative, run_harness
from benchmarks.harness_pipeline import (
    DEFAULT_CORPUS,
    MASTER,
    corpus_refusal,
    figure,
    output_refusal,
    run,
    run_figures,
    selected,
)
from sparktc.runtime.markdown import markdown_table
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
MARKER = ".methods_rcv1"
WRITER = "benchmarks/methods_rcv1.py"
ROLES = ("jvm", "python_driver", "python_workers")


# --- arguments ---------------------------------------------------------------------------------


def selected_methods(text: str) -> list[str]:
    """The methods of ``--methods`` (comma-separated, in the order given)."""
    return selected(text, list(METHODS), "method(s)")


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
    for refusal in (corpus_refusal(arguments.corpus), output_refusal(arguments.output, MARKER, WRITER)):
        if refusal:
            parser.error(refusal)
    return arguments


# --- runs --------------------------------------------------------------------------------------

def pipeline_command(corpus: Path, run_dir: Path, overrides: Sequence[str] = ()) -> list[str]:
    """The pipeline command (conf/rcv1.toml with ``overrides``) on ``corpus`` into ``run_dir``."""
    return ["./spark-submit.sh", "--master", MASTER, "jobs/pipeline.py", "--config", "conf/rcv1.toml",
            "--set", f"corpus.path={relative(corpus)}", *(a for o in overrides for a in ("--set", o)),
            "--output", relative(run_dir)]


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


def headline(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record: ``sparktc.prepared`` (the corpus stages' run) and ``sparktc.METHOD``
    (:func:`run_figures`).
    """
    return {"sparktc": {"prepared": run_figures(result["prepared"]) if result.get("prepared") else {},
                        **{record["method"]: run_figures(record) for record in result["methods"]}}}


# --- the tables --------------------------------------------------------------------------------


def memory(record: Mapping[str, Any], stage: str) -> str:
    """The "driver JVM / Python driver / Python workers" peak-RSS cell of a stage."""
    peaks = figure(record, stage, "peak_rss_mb")
    if peaks is None:
        return harness_tables.DASH
    return " / ".join(harness_tables.megabytes(peaks.get(role)) for role in ROLES)


def corpus_cell(record: Mapping[str, Any]) -> str:
    """How ingest .. rank fared: skipped, or the first stage not skipped with its reason (the later ones repeat
    it: "ingest was recomputed (...)") and how the others fared.
    """
    states = record.get("corpus_stages", {})
    changed = [stage for stage, state in states.items() if not state.startswith("skipped")]
    if not states or not changed:
        return "skipped (current)" if states else harness_tables.DASH
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
            harness_tables.pair(figure(record, "train", "wall_seconds"), figure(record, "train", "cpu_seconds")),
            harness_tables.pair(figure(record, "evaluate", "wall_seconds"), figure(record, "evaluate", "cpu_seconds")),
            memory(record, "train"), memory(record, "evaluate"),
            harness_tables.pair(record["end_to_end_seconds"], record["cpu_seconds"]),
            harness_tables.f1(metrics.get("micro_f1")), harness_tables.f1(metrics.get("macro_f1")),
            corpus_cell(record), f"`{record['command']}`",
        ])
    header = ["method", "train wall / CPU (s)", "evaluate wall / CPU (s)",
              "train peak RSS (MB): driver JVM / Python driver / Python workers",
              "evaluate peak RSS (MB): driver JVM / Python driver / Python workers",
              "end to end wall / CPU (s)", "micro-F1", "macro-F1", "ingest .. rank", "command"]
    return markdown_table(header, rows)


def failures_section(methods: Sequence[Mapping[str, Any]]) -> str:
    """What failed: each failed method's cause, exit code and the last lines of its output, in markdown."""
    failed = [record for record in methods if record["failed"]]
    if not failed:
        return "No method failed."
    parts = []
    for record in failed:
        tail = "\n".join(record.get("tail", [])[-20:])
        parts.append(f"**{record['method']}** failed: {record['cause']} (exit code {record['returncode']}, "
                     f"after {harness_tables.seconds(record['end_to_end_seconds'])} s; full output: {record['log']}). "
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
        (f"`{prepared['command']}`: {harness_tables.seconds(prepared.get('end_to_end_seconds'))} s wall, "
         f"{harness_tables.seconds(prepared.get('cpu_seconds'))} CPU-seconds; {corpus_cell(prepared)}"
         if prepared else "not run"),
        "## Machine",
        harness_tables.machine_section(result),
    ]
    return harness_tables.document(parts, result)


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
