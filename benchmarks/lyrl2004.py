"""LYRL2004's methods on its three category sets: SVM.1, SVM.2, k-NN and Rocchio on Topics, Industries and Regions.

    .venv/bin/python -m benchmarks.lyrl2004 --output runs/lyrl2004 [--corpus runs/benchmark-rcv1/corpus-804414]
        [--sets topics,industries,regions] [--methods svm1,svm2,knn,rocchio] [--history DIR]

Run it from the repository root; the commands it starts run from there, exactly as a user would type them:

1. Per category set, the corpus stages run once into OUTPUT/SET/prepared: ``./spark-submit.sh --master local[2]
   jobs/pipeline.py --config conf/rcv1.toml --set corpus.path=CORPUS --set corpus.category_set=SET --output ...``.
   That is the whole default pipeline, whose train and evaluate are a plain one-vs-rest linear SVM at threshold 0
   (LibMultiLabel's default): the table's "one-vs-rest" row.
2. Per method, OUTPUT/SET/prepared is copied to OUTPUT/SET/METHOD (the Parquet files hard-linked, the manifests
   copied with their times, so ingest .. rank are skipped as current) and the same command runs there with
   ``--preset lyrl2004.METHOD`` (:mod:`sparktc.experiment.presets`), under the /proc sampler of
   ``benchmarks/harness_measure.py``: wall and CPU-seconds of the whole process tree and peak RSS per stage segment.
3. OUTPUT/lyrl2004.json holds every figure raw, OUTPUT/lyrl2004.md the table of micro/macro-F1 (over each set's
   categories with at least one training positive, as LYRL2004 averages) and costs, and the machine (printed too).

A failed run is recorded with its cause, and the next one runs. OUTPUT must be new, empty, or written by this
script before (it holds OUTPUT/.lyrl2004). Exit code 0 when every command succeeded, 1 when one failed, 2 for bad
arguments.

The corpus is an RCV1-v2-shaped synthetic one (``jobs/synthesize.py`` writes the three sets' qrels, the industries
hierarchy and the regions list): its F1 figures rank the methods on that data, not on RCV1-v2. LYRL2004's
published topic figures (REFERENCE.md section 7) are printed beside the topics rows for orientation only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
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
    link_tables,
    output_refusal,
    run,
    run_figures,
    selected,
)
from sparktc.corpora import lyrl2004
from sparktc.experiment.presets import PRESETS
from sparktc.runtime.markdown import markdown_table
from sparktc.runtime.outputs import INCOMPLETE, LOCK

#: The methods: the prepared run's plain one-vs-rest, then LYRL2004's four as presets.
METHODS = {"svm1": "lyrl2004.svm1", "svm2": "lyrl2004.svm2", "knn": "lyrl2004.knn", "rocchio": "lyrl2004.rocchio"}
LABELS = {"one-vs-rest": "one-vs-rest SVM, threshold 0", "svm1": "SVM.1", "svm2": "SVM.2", "knn": "k-NN",
          "rocchio": "Rocchio"}
#: LYRL2004's topic figures (micro-F1, macro-F1; REFERENCE.md section 7: SVM.1 from its tables, k-NN and Rocchio
#: approximate) on the real RCV1-v2: for orientation beside a synthetic corpus, not a target.
PUBLISHED_TOPICS = {"svm1": (0.816, 0.619), "knn": (0.765, 0.560), "rocchio": (0.693, 0.504)}
MARKER = ".lyrl2004"
WRITER = "benchmarks/lyrl2004.py"


def set_files_refusal(corpus: Path, sets: Sequence[str]) -> str | None:
    """Why ``corpus`` cannot give the category sets ``sets`` (None when it can): a missing qrels file."""
    missing = [name for name in (lyrl2004.QRELS_FILES[s] for s in sets)
               if not (corpus / name).is_file() and not (corpus / f"{name}.gz").is_file()]
    if not missing:
        return None
    return (f"--corpus {corpus} lacks {', '.join(missing)}; synthesize it again with this version of sparktc "
            "(jobs/synthesize.py writes the qrels of all three category sets)")


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked before anything runs: the corpus, its category-set files, the output, the sets and the
    methods.
    """
    parser = harness_parser(__doc__)
    parser.add_argument("--corpus", default=DEFAULT_CORPUS,
                        help=f"LYRL2004-format corpus directory (default {DEFAULT_CORPUS})")
    parser.add_argument("--output", required=True, help="directory for the runs, logs and lyrl2004.json/.md")
    parser.add_argument("--sets", default=list(lyrl2004.CATEGORY_SETS),
                        type=lambda text: selected(text, lyrl2004.CATEGORY_SETS, "category set(s)"),
                        help=f"comma-separated category sets (default {','.join(lyrl2004.CATEGORY_SETS)})")
    parser.add_argument("--methods", default=list(METHODS),
                        type=lambda text: selected(text, list(METHODS), "method(s)"),
                        help=f"comma-separated methods (default {','.join(METHODS)})")
    arguments = parser.parse_args(argv)
    arguments.corpus, arguments.output = Path(arguments.corpus).resolve(), Path(arguments.output).resolve()
    for refusal in (corpus_refusal(arguments.corpus), set_files_refusal(arguments.corpus, arguments.sets),
                    output_refusal(arguments.output, MARKER, WRITER)):
        if refusal:
            parser.error(refusal)
    return arguments


def pipeline_command(corpus: Path, category_set: str, run_dir: Path, preset: str = "") -> list[str]:
    """The pipeline command (conf/rcv1.toml, ``preset`` if any) on ``category_set`` of ``corpus`` into ``run_dir``."""
    return ["./spark-submit.sh", "--master", MASTER, "jobs/pipeline.py", "--config", "conf/rcv1.toml",
            *(["--preset", preset] if preset else []), "--set", f"corpus.path={relative(corpus)}",
            "--set", f"corpus.category_set={category_set}", "--output", relative(run_dir)]


def run_method(output: Path, corpus: Path, category_set: str, name: str) -> dict[str, Any]:
    """Link the set's prepared run into OUTPUT/SET/NAME and run the pipeline there with the method's preset."""
    prepared, run_dir = output / category_set / "prepared", output / category_set / name
    shutil.rmtree(run_dir, ignore_errors=True)  # inside OUTPUT, which is this script's: an earlier run of it
    shutil.copytree(prepared, run_dir, copy_function=link_tables, ignore=shutil.ignore_patterns(LOCK, INCOMPLETE))
    command = pipeline_command(corpus, category_set, run_dir, METHODS[name])
    record = run(command, run_dir, output / "logs" / f"{category_set}-{name}.log", harness="lyrl2004")
    return {"set": category_set, "method": name, "preset": METHODS[name], **record}


def published(record: Mapping[str, Any]) -> str:
    """LYRL2004's published "micro / macro-F1" of the record's method on Topics, or a dash where the paper has none."""
    figures = PUBLISHED_TOPICS.get(record["method"]) if record["set"] == "topics" else None
    return harness_tables.DASH if figures is None else f"{figures[0]:.3f} / {figures[1]:.3f}"


def results_table(records: Sequence[Mapping[str, Any]]) -> str:
    """The markdown table of every run: F1, categories averaged, the train, evaluate and end-to-end times, peak RSS and
    the published figures.
    """
    rows = []
    for record in records:
        metrics = record.get("metrics") or {}
        rows.append([
            record["set"], LABELS[record["method"]] + (" (**failed**)" if record["failed"] else ""),
            harness_tables.f1(metrics.get("micro_f1")), harness_tables.f1(metrics.get("macro_f1")),
            str(metrics.get("n_categories", harness_tables.DASH)),
            harness_tables.pair(figure(record, "train", "wall_seconds"), figure(record, "train", "cpu_seconds")),
            harness_tables.pair(figure(record, "evaluate", "wall_seconds"), figure(record, "evaluate", "cpu_seconds")),
            harness_tables.pair(record["end_to_end_seconds"], record["cpu_seconds"]),
            harness_tables.megabytes((record.get("peak_rss_mb") or {}).get("total")), published(record),
        ])
    header = ["category set", "method", "micro-F1", "macro-F1", "categories averaged", "train wall / CPU (s)",
              "evaluate wall / CPU (s)", "end to end wall / CPU (s)", "peak RSS (MB)",
              "LYRL2004 on RCV1-v2 (micro / macro)"]
    return markdown_table(header, rows)


def presets_section(methods: Sequence[str]) -> str:
    """One markdown bullet per method: its preset, what the preset is and how it differs from LYRL2004."""
    return "\n".join(f"- **{LABELS[name]}** (`--preset {METHODS[name]}`): {PRESETS[METHODS[name]].description}. "
                     f"Differs from LYRL2004: {PRESETS[METHODS[name]].differs}." for name in methods)


def render(result: Mapping[str, Any]) -> str:
    """The whole lyrl2004.md."""
    records = [r for s in result["settings"]["sets"] for r in result["runs"] if r["set"] == s]
    failed = [r for r in records if r["failed"]]
    parts = [
        "# LYRL2004's methods on Topics, Industries and Regions",
        (f"Corpus: `{result['settings']['corpus']}` (synthetic, RCV1-v2-shaped). F1 is averaged over each set's "
         "categories with at least one training positive; 0/0 counts as F1 = 1 (LYRL2004). A stage's wall time is "
         "its own; CPU-seconds are the whole process tree's; peak RSS is the largest sum, over the run, of the driver "
         f"JVM, the Python driver and the Python workers, sampled every {SAMPLE_SECONDS} s. Spark {MASTER} on "
         f"{result['machine'].get('cores')} cores, one run each."),
        results_table(records),
        "## The methods",
        presets_section(result["settings"]["methods"]),
        "## Failures",
        "\n".join(f"- {r['set']} {LABELS[r['method']]}: {r.get('cause')} (full output: {r['log']})" for r in failed)
        or "No run failed.",
        "## Commands",
        "\n".join(f"- `{r['command']}`" for r in records),
        "## Machine",
        harness_tables.machine_section(result),
    ]
    return harness_tables.document(parts, result)


def headline(result: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record: ``sparktc.SET.METHOD`` for each run, the one-vs-rest one included
    (:func:`benchmarks.methods_rcv1.run_figures`).
    """
    figures: dict[str, Any] = {}
    for record in result["runs"]:
        figures.setdefault(record["set"], {})[record["method"]] = run_figures(record)
    return {"sparktc": figures}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every chosen method on every chosen category set and write lyrl2004.json and lyrl2004.md (module docstring);
    the exit code.
    """
    arguments = parse_arguments(argv)
    output: Path = arguments.output
    settings = {"corpus": relative(arguments.corpus), "sets": arguments.sets, "methods": arguments.methods,
                "masters": [MASTER],
                "presets": {name: dict(PRESETS[METHODS[name]].settings) for name in arguments.methods}}

    def body(result: dict[str, Any], write: Callable[[], str]) -> int:
        status = 0
        for category_set in arguments.sets:
            prepared = output / category_set / "prepared"
            record = run(pipeline_command(arguments.corpus, category_set, prepared), prepared,
                         output / "logs" / f"{category_set}-prepared.log", harness="lyrl2004")
            result["runs"].append({"set": category_set, "method": "one-vs-rest", "preset": "", **record})
            if record["failed"]:
                raise HarnessError(f"the corpus stages of {category_set} failed: {record.get('cause')}")
            write()
            for name in arguments.methods:
                result["runs"].append(run_method(output, arguments.corpus, category_set, name))
                status |= int(result["runs"][-1]["failed"])
                write()  # partial results survive a later crash
        return status

    return run_harness("lyrl2004", output, argv, settings, body, render, "lyrl2004", marker=(MARKER, WRITER),
                       headline=headline, runs=[])


if __name__ == "__main__":
    sys.exit(main())
