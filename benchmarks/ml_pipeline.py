"""Reuters-21578 R(90) three ways in the same run: the pipeline job, the README's Spark ML pipeline of
``sparktc.ml`` stages, and the lean single-process text peer, each its own command, alternating.

    .venv/bin/python -m benchmarks.ml_pipeline --output runs/benchmark-ml [--corpus ../shared/data/reuters21578] \
        [--repeats 2] [--master 'local[2]'] [--history DIR]

* job: ``./spark-submit.sh jobs/pipeline.py --config reuters21578 --set corpus.path=CORPUS --output ...``;
* ml: ``./spark-submit.sh benchmarks/ml_pipeline.py --documents DOCS`` (this file as the driver): the README's
  example over the texts the first job run ingested (its ``documents`` table: the same documents, read from
  Parquet), fitted on the training split, scored on the test split and evaluated by Spark ML's
  ``MultilabelClassificationEvaluator``;
* peer: ``benchmarks/text_peer.py`` on the same documents written once as JSON Lines (untimed), with the SMART
  stop list: LYRL2004's tokens, ltc and LIBLINEAR in one process.

Each command runs in a cpuacct group of its own where the machine allows it (:mod:`benchmarks.harness_measure`),
so CPU is that of the whole process tree: the JVM, the Python driver and Spark's Python workers. The table gives wall
seconds, CPU seconds, peak resident memory and micro-F1 of every run, and is written to OUTPUT/benchmark.md. With
``--history DIR``, as every benchmark built on :func:`benchmarks.harness.run_harness`, the run adds its record
(figures ``job``, ``ml``, ``peer``: each command's median wall and CPU-seconds, its largest peak memory and its
micro-F1) to that run history, and each job run its own.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # spark-submit puts benchmarks/, not the repository

from benchmarks import harness_recording
from benchmarks.harness import harness_parser, measured, run_harness
from sparktc.runtime.markdown import markdown_table

REPO = Path(__file__).resolve().parents[1]
STOP_LIST = REPO / "conf" / "stopwords" / "smart_english.stop"
MICRO_F1 = re.compile(r"micro-F1 (\d\.\d+)|micro P \S+\s+R \S+\s+F1 (\d\.\d+)")


def example(documents: str) -> None:
    """The README's Spark ML example (``tests/ml/test_pipeline.py`` runs it as written) on ``documents``."""
    from pyspark.ml import Pipeline
    from pyspark.ml.evaluation import MultilabelClassificationEvaluator
    from pyspark.sql import SparkSession

    from sparktc.ml import Analyzer, OneVsRestClassifier, TermSelector, TermWeighting

    spark = SparkSession.builder.appName("sparktc-benchmark-ml").getOrCreate()
    frame = spark.read.parquet(documents)
    train, test = frame.where("split = 'train'"), frame.where("split = 'test'")
    pipeline = Pipeline(stages=[
        Analyzer(inputCol="text", outputCol="terms", stopList="smart"),
        TermWeighting(inputCol="terms", outputCol="features", scheme="ltc"),
        TermSelector(featuresCol="features", outputCol="selected", score="chi2", topK=0),
        OneVsRestClassifier(featuresCol="selected", labelsCol="labels", liblinearC=1.0),
    ])
    began = time.perf_counter()
    model = pipeline.fit(train)
    fitted = time.perf_counter()
    scored = model.transform(test)
    micro_f1 = MultilabelClassificationEvaluator(metricName="microF1Measure").evaluate(scored)
    print(f"sparktc: ml fit {fitted - began:.1f} s, transform and evaluate {time.perf_counter() - fitted:.1f} s",
          flush=True)
    print(f"micro-F1 {micro_f1:.4f}", flush=True)
    spark.stop()


def write_jsonl(documents: Path, into: Path) -> None:
    """The job's documents as the text peer reads them: one {"id", "text", "labels", "split"} object per line."""
    import pyarrow.dataset as ds

    table = ds.dataset(documents, format="parquet", partitioning="hive").to_table(
        columns=["doc_id", "text", "labels", "split"]).to_pylist()
    into.mkdir(parents=True, exist_ok=True)
    with open(into / "r90.jsonl", "w") as out:
        for row in table:
            out.write(json.dumps({"id": row["doc_id"], "text": row["text"], "labels": row["labels"],
                                  "split": row["split"]}) + "\n")


def headline(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record, per command (``job``, ``ml``, ``peer``): the medians of its runs' wall
    and CPU-seconds, their largest peak memory and the last run's micro-F1.
    """
    figures: dict[str, Any] = {}
    for kind in dict.fromkeys(row["command"] for row in result["rows"]):
        rows = [row for row in result["rows"] if row["command"] == kind]
        figures[kind] = {"seconds": statistics.median(row["seconds"] for row in rows),
                         "cpu_seconds": statistics.median(row["cpu_seconds"] for row in rows),
                         "peak_memory_bytes": harness_recording.memory_bytes(max(row["peak_mb"] for row in rows)),
                         "micro_f1": rows[-1]["micro_f1"]}
    return figures


def render(result: Mapping[str, Any]) -> str:
    """benchmark.md: every run's wall and CPU seconds, peak memory and micro-F1, and how its CPU was counted."""
    table = markdown_table(["command", "run", "wall s", "CPU s", "peak MB", "micro-F1"],
                           [[r["command"], r["run"], f"{r['seconds']:.1f}", f"{r['cpu_seconds']:.1f}",
                             f"{r['peak_mb']:.0f}", f"{r['micro_f1']:.4f}"] for r in result["rows"]])
    sources = sorted({row["cpu_source"] for row in result["rows"]})
    text = table + f"\n\nCPU counted by: {', '.join(sources)}; master {result['settings']['master']}.\n"
    return text + (f"\n**The benchmark stopped early:** {result['error']}\n" if result.get("error") else "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison (or, with --documents, the Spark ML example as a driver); the exit code."""
    parser = harness_parser(__doc__)
    parser.add_argument("--output", help="a new directory for the runs, logs and benchmark.md")
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "data" / "reuters21578"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--documents", help=argparse.SUPPRESS)  # the ml command's driver
    arguments = parser.parse_args(argv)
    if arguments.documents:
        example(arguments.documents)
        return 0
    if not arguments.output:
        parser.error("--output is required")
    output = Path(arguments.output).resolve()
    submit = [str(REPO / "spark-submit.sh"), "--master", arguments.master]
    settings = {"corpus": arguments.corpus, "repeats": arguments.repeats, "master": arguments.master}

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        def run(kind: str, index: int, command: list[str]) -> None:
            log = output / "logs" / f"{kind}-{index}.log"
            done = measured(command, log, None, harness="ml_pipeline")
            found = MICRO_F1.findall(log.read_text())  # the job's headline comes before its per-category table
            micro_f1 = float(next(value for value in found[-1] if value)) if found else float("nan")
            result["rows"].append({"command": kind, "run": index, "seconds": done.seconds,
                                   "cpu_seconds": done.cpu_seconds, "peak_mb": done.peak_rss_mb()["total"],
                                   "micro_f1": micro_f1, "cpu_source": done.cpu_source})
            write()

        documents = output / "job-1" / "documents"
        for index in range(1, arguments.repeats + 1):
            run("job", index, [*submit, "jobs/pipeline.py", "--config", "reuters21578", "--set",
                               f"corpus.path={arguments.corpus}", "--output", str(output / f"job-{index}")])
            if index == 1:
                write_jsonl(documents, output / "jsonl")
            run("ml", index, [*submit, "benchmarks/ml_pipeline.py", "--documents", str(documents)])
            run("peer", index, [sys.executable, "-m", "benchmarks.text_peer", "--corpus", str(output / "jsonl"),
                                "--output", str(output / f"peer-{index}.json"), "--stop-list", str(STOP_LIST)])
        return 0

    return run_harness("ml_pipeline", output, argv, settings, body, render, "benchmark", headline=headline, rows=[])


if __name__ == "__main__":
    sys.exit(main())
