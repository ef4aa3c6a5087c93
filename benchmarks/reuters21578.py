"""Reuters-21578 ModApte benchmark: every method of docs/benchmarks/reuters21578.md on R(10), R(90) (ApteMod) and
R(115).

    ./spark-submit.sh benchmarks/reuters21578.py --output runs/benchmark-reuters21578 [--corpus DIR] [--history DIR]

For each category set the corpus stages (ingest, tokenize, weight, rank) run once; each method then
runs train and evaluate on a copy of those outputs, in the same Spark session. Every row is the run
that its printed one-line command would produce (the stages are the same code); the table of
micro-/macro-F1 and training times is printed and written to OUTPUT/benchmark.md. With ``--history DIR`` the run
adds its record (kind ``benchmark:reuters21578``; figures ``SET.METHOD.micro_f1``, ``.macro_f1``,
``.train_seconds``) to that run history (:func:`benchmarks.harness_recording.record_driver`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # spark-submit puts benchmarks/, not the repository

from benchmarks import harness_recording
from benchmarks.harness_reuters import BASE, SETS, command
from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import load_config
from sparktc.runtime.markdown import markdown_table
from sparktc.runtime.session import build_session

REPO = Path(__file__).resolve().parents[1]
BEST = "conf/reuters21578-best.toml"
GRID = "[1.0, 1.33, 1.8, 2.5, 3.67, 6.0, 13.0]"

#: (figure name, row label, configuration, overrides) of each method.
METHODS = [
    ("svm", "SVM, threshold 0", BASE, []),
    ("svm_scutfbr", "SVM + SCutFBR.1", BASE, ["train.thresholding=scutfbr", "train.fbr=0.1"]),
    ("svm_weight_per_category", "cost-sensitive SVM (weight per category by 5-fold CV)", BASE,
     [f"tune.liblinear.positive_weight={GRID}"]),
    ("svm_weight_shared", "cost-sensitive SVM (one weight for all, by CV micro-F1)", BASE,
     [f"tune.liblinear.positive_weight={GRID}", "tune.liblinear.shared_positive_weight=true"]),
    ("best_by_cv", "best by CV (conf/reuters21578-best.toml)", BEST, []),
    ("rocchio", "Rocchio (beta 16, gamma 4) + SCut", BASE, ["train.method=rocchio", "train.thresholding=scut"]),
    ("knn", "kNN (k = 30) + SCut", BASE, ["train.method=knn", "train.thresholding=scut"]),
]
# REFERENCE.md section 7, shown beside the rows they compare with.
PUBLISHED = {
    ("R(90)", "SVM, threshold 0"): "Yang & Liu SVM (10k chi2 terms) .8599 / .5251",
    ("R(90)", "kNN (k = 30) + SCut"): "Yang & Liu kNN (k = 45) .8567 / .5242",
}
# Debole & Sebastiani's mean over their 48 setups, per category set.
DEBOLE_MEAN = {"R(10)": ".852 / .715", "R(90)": ".787 / .468", "R(115)": ".784 / .494"}


def headline(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of the benchmark's record: ``SET.METHOD`` (``R90.best_by_cv``) with micro-/macro-F1 and the
    training stage's wall seconds.
    """
    figures: dict[str, Any] = {}
    for row in rows:
        figures.setdefault(row["set"].strip("()").replace("(", ""), {})[row["key"]] = {
            key: row[key] for key in ("micro_f1", "macro_f1", "train_seconds")}
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Run every method on each category set and write the table to OUTPUT/benchmark.md (module docstring); the exit
    code.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     parents=[harness_recording.arguments()])
    parser.add_argument("--output", required=True)
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "data" / "reuters21578"))
    argv = list(sys.argv[1:] if argv is None else argv)
    arguments = parser.parse_args(argv)
    output = Path(arguments.output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    settings = {"corpus": arguments.corpus, "sets": list(SETS), "methods": [key for key, *_ in METHODS],
                "masters": ["local[*]"]}
    return harness_recording.record_driver("reuters21578", argv, output, REPO, settings,
                                           lambda: run_methods(arguments, output))


def run_methods(arguments: argparse.Namespace, output: Path) -> tuple[int, dict[str, Any], dict[str, bytes]]:
    """Every method on each category set: the exit status, the record's figures and the report files."""
    spark = build_session("sparktc-benchmark-reuters21578", {})
    rows = []
    for set_name, set_overrides in SETS.items():
        base = output / set_name.strip("()").replace("(", "") / "corpus-stages"
        corpus = [f"corpus.path={arguments.corpus}", *set_overrides]
        base_config = load_config(str(REPO / BASE), corpus)
        run_stages(spark, base_config, str(base), "ingest", "tokenize", "weight", "rank")
        for number, (key, method, config_file, overrides) in enumerate(METHODS, 1):
            run = base.parent / f"method-{number}"
            shutil.rmtree(run, ignore_errors=True)
            config = load_config(str(REPO / config_file), [*corpus, *overrides])
            # The corpus stages are shared unless the method's text processing differs (the best file's title terms).
            shared = all(getattr(config, name) == getattr(base_config, name) for name in ("tokenize", "weight", "rank"))
            if shared:
                shutil.copytree(base, run)
            else:
                run_stages(spark, config, str(run), "ingest", "tokenize", "weight", "rank")
            started = time.perf_counter()
            [report, _] = run_stages(spark, config, str(run), "train", "evaluate")
            train_seconds = time.perf_counter() - started
            metrics = json.loads((run / "metrics.json").read_text())
            rows.append({
                "set": set_name, "key": key, "method": method, "micro_f1": metrics["micro_f1"],
                "macro_f1": metrics["macro_f1"], "n_categories": metrics["n_categories"],
                "train_seconds": round(train_seconds, 1),
                "category_seconds": report["details"]["category_seconds_total"],
                "published": PUBLISHED.get((set_name, method), ""),
                "command": command(config_file, [*set_overrides, *overrides], f"runs/{run.parent.name}-{run.name}"),
            })
    spark.stop()
    cells = []
    for set_name in SETS:
        cells.append([set_name, "*Debole & Sebastiani, mean of 48 setups*", "", "", "", "", DEBOLE_MEAN[set_name]])
        cells += [[r["set"], r["method"], f"{r['micro_f1']:.4f}", f"{r['macro_f1']:.4f}", r["n_categories"],
                   r["train_seconds"], r["published"]] for r in rows if r["set"] == set_name]
    lines = [markdown_table(["set", "method", "micro-F1", "macro-F1", "categories", "train (s)",
                             "published (micro / macro)"], cells)]
    lines += ["", "Commands (CORPUS = the directory of reut2-*.sgm.gz):", ""]
    lines += [f"- {r['set']}, {r['method']}: `{r['command']}`" for r in rows]
    text = "\n".join(lines) + "\n"
    report = {"benchmark.md": text.encode("utf-8"), "benchmark.json": (json.dumps(rows, indent=2) + "\n").encode()}
    for name, content in report.items():
        (output / name).write_bytes(content)
    print(text)
    return 0, headline(rows), report


if __name__ == "__main__":
    sys.exit(main())
