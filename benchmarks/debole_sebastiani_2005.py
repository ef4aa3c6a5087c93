r"""Debole & Sebastiani 2005's relative hardness of R(10), R(90) and R(115): their 48 setups per subset, rerun.

    .venv/bin/python -m benchmarks.debole_sebastiani_2005 --output runs/debole-sebastiani [--corpus DIR] \
        [--subsets R10,R90,R115] [--validation FRACTION [--seed SEED]]

Every combination of 3 learners (Rocchio beta 16 / gamma 4 and kNN k = 30, both with proportional thresholds
tuned on validation folds of the training documents; SVM at its default threshold 0) x 3 term-selection
functions (chi-square, information gain, gain ratio, globalized by f_max) x 3 reduction factors (0.9, 0.5, 0) x 2
weightings (tf-idf; supervised: idf replaced by the selection function's score), on Reuters-21578 ModApte with
every document kept for every subset. With tf-idf and no reduction the function plays no part, so there are
3 x (3 x 2 + 1) + 3 x 3 x 3 = 48 setups per subset (Debole & Sebastiani's count).

With ``--validation`` (Debole & Sebastiani's own procedure, which they do not size), Rocchio and kNN learn from
the training documents minus a validation set Va of that share of them, drawn with ``--seed``, and set their
proportional thresholds on Va (``train.validation``); SVM, with nothing to set, trains on all of them as before.

Per subset the corpus stages run once for tf-idf and once per supervised function (ingest and tokenize are
shared by copying); each setup runs train and evaluate on a copy of its corpus stages (OUTPUT/<subset>/<setup>),
in one Spark session, and is what its printed one-line pipeline command produces. Tables 3 (mean and standard
deviation over the 48 setups) and 4 (relative hardness) beside the published ones, the figures of their Figures
1-7, every setup's micro- and macro-F1, the grid's wall time, CPU-seconds and peak memory are written to
OUTPUT/debole_sebastiani_2005.md (printed), OUTPUT/debole_sebastiani_2005.json and OUTPUT/figures/.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks import harness_recording
from benchmarks.harness_measure import TreeSampler
from benchmarks.harness_pipeline import link_tables
from benchmarks.harness_tables import DASH, seconds
from sparktc.models.decision import CROSS_VALIDATED
from sparktc.runtime.markdown import markdown_table

REPO = Path(__file__).resolve().parents[1]
BASE = "conf/reuters21578.toml"

#: The subsets, Debole & Sebastiani's names: all ModApte documents kept for each (their footnote 4).
SUBSETS = {"R(10)": "R10", "R(90)": "R90", "R(115)": "R115"}
#: Their learners (section "Experiments") as sparktc settings: Rocchio and kNN with proportional thresholds on
#: validation data; SVMlight's defaults (linear kernel, hinge loss, C = 1 / mean(x'x) = 1 for unit vectors, a
#: bias), i.e. LIBLINEAR's L1-loss (hinge) dual solver with C = 1, a bias feature and the threshold 0.
LEARNERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rocchio": ("Rocchio", ("train.method=rocchio", "train.rocchio.beta=16", "train.rocchio.gamma=4",
                            "train.thresholding=proportional")),
    "knn": ("k-NN", ("train.method=knn", "train.knn.k=30", "train.thresholding=proportional")),
    "svm": ("SVM", ("train.method=liblinear", "train.liblinear.solver=l2r_l1loss_svc_dual", "train.liblinear.C=1",
                    "train.liblinear.bias=1", "train.thresholding=fixed", "train.threshold=0")),
}
FUNCTIONS = {"chi2": "χ²", "ig": "IG", "gr": "GR"}
REDUCTIONS = (0.9, 0.5, 0.0)
WEIGHTINGS = {"tfidf": "tf·idf", "supervised": "supervised"}

# --- Debole & Sebastiani 2005, as published (../shared/seeds/002_*.txt) ----------------------------------------
#: Table 3: mean and standard deviation over the 48 setups, micro- and macro-averaged F1.
PUBLISHED_TABLE_3 = {
    "R(10)": {"micro_mean": .852, "micro_sd": .048, "macro_mean": .715, "macro_sd": .097},
    "R(90)": {"micro_mean": .787, "micro_sd": .059, "macro_mean": .468, "macro_sd": .068},
    "R(115)": {"micro_mean": .784, "micro_sd": .062, "macro_mean": .494, "macro_sd": .118},
}
#: Table 4 as printed: how much easier the row subset proved than the column subset, in percent.
PUBLISHED_TABLE_4 = {
    "micro": {("R(10)", "R(90)"): 8.2, ("R(10)", "R(115)"): 8.6, ("R(90)", "R(10)"): -7.6,
              ("R(90)", "R(115)"): 0.3, ("R(115)", "R(10)"): -7.9, ("R(115)", "R(90)"): -0.3},
    "macro": {("R(10)", "R(90)"): 46.8, ("R(10)", "R(115)"): 44.6, ("R(90)", "R(10)"): -53.1,
              ("R(90)", "R(115)"): -5.2, ("R(115)", "R(10)"): -50.5, ("R(115)", "R(90)"): 5.5},
}
TARGET = 0.03  # the issue's tolerance on Table 3's means
#: Table 4's entries that are not Table 3's means put through :func:`table_4` (to within TABLE_4_SLACK points).
INCONSISTENT_TABLE_4 = {("macro", "R(10)", "R(90)"), ("macro", "R(90)", "R(10)"), ("macro", "R(115)", "R(10)")}
TABLE_4_SLACK = 0.2


class Setup(NamedTuple):
    """One experimental context: a learner, a weighting, a selection function (None: no selection with tf-idf,
    where the function plays no part) and a reduction factor.
    """

    learner: str
    weighting: str
    function: str | None
    reduction: float

    @property
    def name(self) -> str:
        """The setup's name, learner-weighting-function-xi<reduction> ('all' when no function selects), which names its
        run directory.
        """
        return f"{self.learner}-{self.weighting}-{self.function or 'all'}-xi{self.reduction:g}"

    @property
    def corpus(self) -> str:
        """The corpus stages it trains on: the tf-idf ones, or the supervised ones of its function."""
        return "tfidf" if self.weighting == "tfidf" else f"supervised-{self.function}"


def setups() -> list[Setup]:
    """Debole & Sebastiani's 48 setups of one subset, learner by learner."""
    found = []
    for learner in LEARNERS:
        for weighting in WEIGHTINGS:
            for function in FUNCTIONS:
                for reduction in REDUCTIONS:
                    if weighting == "tfidf" and reduction == 0.0:
                        continue
                    found.append(Setup(learner, weighting, function, reduction))
        found.append(Setup(learner, "tfidf", None, 0.0))
    return found


def corpus_overrides(corpus: str, subset: str, weighting: str, function: str | None) -> list[str]:
    """Overrides of conf/reuters21578.toml for a subset's corpus stages under one weighting."""
    overrides = [f"corpus.path={corpus}", f"corpus.category_set={SUBSETS[subset]}", "corpus.document_filter=none",
                 f"weight.scheme={weighting}", "rank.global_score=max"]
    return overrides + ([f"rank.score={function}"] if function else [])


def validation_overrides(setup: Setup, validation: float, seed: int) -> list[str]:
    """The overrides holding out a validation set Va of ``validation`` of the training documents (seed ``seed``)
    for a learner whose thresholds are tuned (Rocchio, kNN); none for SVM at threshold 0, or at ``validation`` 0.
    """
    tuned = any(o.removeprefix("train.thresholding=") in CROSS_VALIDATED for o in LEARNERS[setup.learner][1])
    return [f"train.validation={validation}", f"train.seed={seed}"] if validation and tuned else []


def setup_overrides(corpus: str, subset: str, setup: Setup, validation: float = 0.0, seed: int = 0) -> list[str]:
    """Every override of conf/reuters21578.toml that makes ``setup`` on ``subset`` (with a validation set: see
    :func:`validation_overrides`).
    """
    selection = [f"select.reduction_factor={setup.reduction}"] if setup.reduction else []
    return [*corpus_overrides(corpus, subset, setup.weighting, setup.function), *selection,
            *LEARNERS[setup.learner][1], *validation_overrides(setup, validation, seed)]


def pipeline_command(subset: str, setup: Setup, validation: float = 0.0, seed: int = 0) -> str:
    """The one-line pipeline command that reproduces ``setup`` on ``subset`` by itself, the corpus as ``$CORPUS``."""
    overrides = " ".join(f"--set {o}" for o in setup_overrides("$CORPUS", subset, setup, validation, seed))
    return (f"./spark-submit.sh jobs/pipeline.py --config {BASE} {overrides} "
            f"--output runs/{SUBSETS[subset]}-{setup.name}")


def test_documents(metrics: Mapping[str, Any]) -> int:
    """A run's test documents: every category's contingency table counts each of them once."""
    first = metrics["per_category"][0]
    return first["tp"] + first["fp"] + first["fn"] + first["tn"]


def table_3(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per subset: mean and sample standard deviation (n - 1) of micro- and macro-F1 over its setups."""
    found = {}
    for subset in SUBSETS:
        rows = [r for r in results if r["subset"] == subset]
        if len(rows) < 2:
            continue
        found[subset] = {"setups": len(rows)}
        for measure in ("micro", "macro"):
            values = [r[f"{measure}_f1"] for r in rows]
            found[subset][f"{measure}_mean"] = statistics.fmean(values)
            found[subset][f"{measure}_sd"] = statistics.stdev(values)
    return found


def table_4(means: Mapping[str, Mapping[str, float]]) -> dict[str, dict[tuple[str, str], float]]:
    """Relative hardness, Debole & Sebastiani's Table 4: 100 (mean(row) - mean(column)) / mean(column)."""
    return {measure: {(row, column): 100 * (means[row][f"{measure}_mean"] - means[column][f"{measure}_mean"])
                      / means[column][f"{measure}_mean"]
                      for row in means for column in means if row != column}
            for measure in ("micro", "macro")}


def curves(results: Sequence[Mapping[str, Any]], weighting: str, reduction: float) -> dict[str, Any]:
    """One of Figures 1-6: per learner and measure, one curve per selection function over the subsets."""
    found: dict[str, Any] = {}
    for learner in LEARNERS:
        for measure in ("micro", "macro"):
            panel = {}
            for r in results:
                if (r["learner"], r["weighting"], r["reduction"]) == (learner, weighting, reduction):
                    panel.setdefault(r["function"] or "none", {})[r["subset"]] = r[f"{measure}_f1"]
            found[f"{learner}/{measure}"] = panel
    return found


def learner_means(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Figure 7: per measure, learner and subset, the mean over the learner's setups."""
    return {measure: {learner: {subset: statistics.fmean(values) for subset in SUBSETS
                                if (values := [r[f"{measure}_f1"] for r in results
                                               if r["learner"] == learner and r["subset"] == subset])}
                      for learner in LEARNERS}
            for measure in ("micro", "macro")}


FIGURES = {1: ("tfidf", 0.9), 2: ("tfidf", 0.5), 3: ("tfidf", 0.0), 4: ("supervised", 0.9), 5: ("supervised", 0.5),
           6: ("supervised", 0.0)}


def plot_figures(results: Sequence[Mapping[str, Any]], directory: Path) -> list[str]:
    """Figures 1-7 as PNG files (Debole & Sebastiani's layout: rows Rocchio, k-NN, SVM; columns micro, macro)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    subsets = [s for s in SUBSETS if any(r["subset"] == s for r in results)]
    written = []
    for number, (weighting, reduction) in FIGURES.items():
        panels = curves(results, weighting, reduction)
        figure, axes = plt.subplots(3, 2, figsize=(8, 9), sharex=True)
        for row, learner in enumerate(LEARNERS):
            for column, measure in enumerate(("micro", "macro")):
                axis = axes[row][column]
                for function, points in sorted(panels[f"{learner}/{measure}"].items()):
                    label = FUNCTIONS.get(function, "no selection")
                    axis.plot(subsets, [points.get(s) for s in subsets], marker="o", label=label)
                axis.set_title(f"{LEARNERS[learner][0]}, {measure}-F1", fontsize=9)
                axis.set_ylim(0, 1)
                axis.legend(fontsize=7)
        figure.suptitle(f"Figure {number}: {WEIGHTINGS[weighting]}, reduction factor {reduction:g}")
        figure.tight_layout()
        path = directory / f"figure-{number}.png"
        figure.savefig(path, dpi=90)
        plt.close(figure)
        written.append(str(path))
    means = learner_means(results)
    ours = table_3(results)
    figure, axes = plt.subplots(1, 2, figsize=(9, 4))
    for column, measure in enumerate(("micro", "macro")):
        axis = axes[column]
        for learner, points in means[measure].items():
            axis.plot(subsets, [points.get(s) for s in subsets], marker="o", label=LEARNERS[learner][0])
        axis.plot(subsets, [ours[s][f"{measure}_mean"] if s in ours else None for s in subsets], "k--",
                  label="all setups (ours)")
        axis.plot(subsets, [PUBLISHED_TABLE_3[s][f"{measure}_mean"] for s in subsets], "k:", marker="x",
                  label="all setups (D&S Table 3)")
        axis.set_title(f"{measure}-F1", fontsize=9)
        axis.set_ylim(0, 1)
        axis.legend(fontsize=7)
    figure.suptitle("Figure 7: means per learner over weightings, functions and reduction factors")
    figure.tight_layout()
    path = directory / "figure-7.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return [*written, str(path)]


def _f(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def render(record: Mapping[str, Any]) -> str:
    """debole_sebastiani_2005.md: Tables 3-4 beside the published ones, the figures, every setup, the costs."""
    ours3, published3 = record["table_3"], PUBLISHED_TABLE_3
    rows3 = []
    for subset in SUBSETS:
        if subset not in ours3:
            continue
        cells = [subset, str(ours3[subset]["setups"])]
        for measure in ("micro", "macro"):
            mean, published = ours3[subset][f"{measure}_mean"], published3[subset][f"{measure}_mean"]
            cells += [_f(mean), _f(published), f"{mean - published:+.3f}", _f(ours3[subset][f"{measure}_sd"]),
                      _f(published3[subset][f"{measure}_sd"])]
        rows3.append(cells)
    header3 = ["subset", "setups", "micro mean", "D&S", "diff", "micro sd", "D&S",
               "macro mean", "D&S", "diff", "macro sd", "D&S"]
    ours4 = {measure: {tuple(key.split(" vs ")): value for key, value in values.items()}
             for measure, values in record["table_4"].items()}
    rows4 = []
    subsets = [s for s in SUBSETS if s in ours3]
    for row in subsets:
        cells = [row]
        for measure in ("micro", "macro"):
            for column in subsets:
                published = PUBLISHED_TABLE_4[measure].get((row, column))
                cells.append(DASH if row == column else f"{ours4[measure][(row, column)]:+.1f}% ({published:+.1f}%)")
        rows4.append(cells)
    header4 = ["", *(f"micro vs {s}" for s in subsets), *(f"macro vs {s}" for s in subsets)]
    setup_rows = []
    for by_subset in record["setups"].values():
        first = next(iter(by_subset.values()))
        setup_rows.append([LEARNERS[first["learner"]][0], WEIGHTINGS[first["weighting"]],
                           FUNCTIONS.get(first["function"], "—"), f"{first['reduction']:g}",
                           *(f"{_f(by_subset[s]['micro_f1'])} / {_f(by_subset[s]['macro_f1'])}"
                             if s in by_subset else DASH for s in subsets)])
    cost = record["cost"]
    within = [f"{s} {m}" for s in subsets for m in ("micro", "macro")
              if abs(ours3[s][f"{m}_mean"] - published3[s][f"{m}_mean"]) <= TARGET]
    lines = [
        "# Debole & Sebastiani 2005 rerun: the relative hardness of Reuters-21578 R(10), R(90), R(115)", "",
        f"Reuters-21578 ModApte, every document kept for every subset ({record['train_documents']:,} training and "
        f"{record['test_documents']:,} test documents); F1 with 0/0 counted as 1, as Debole & Sebastiani do, averaged "
        "over each subset's categories. Learners, selection functions (f_max), reduction factors and weightings: "
        "every combination, 48 setups per subset (module docstring of benchmarks/debole_sebastiani_2005.py).", "",
        (f"Validation set (Debole & Sebastiani's procedure): Rocchio and kNN learn from the training documents minus "
         f"a held-out {record['validation']:g} of them (seed {record['seed']}), and set their proportional thresholds "
         "on it; SVM (threshold 0) learns from all of them." if record.get("validation") else
         "Rocchio's and kNN's proportional thresholds are set on 5 cross-validation folds of the training "
         "documents, the models trained on all of them."), "",
        "## Table 3: mean and standard deviation over the setups (ours, Debole & Sebastiani's beside)", "",
        markdown_table(header3, rows3), "",
        f"Within {TARGET} of the published mean: {', '.join(within) or 'none'} "
        f"({len(within)} of {2 * len(subsets)}). Standard deviations are sample ones (n - 1).", "",
        "## Table 4: relative hardness, 100 (mean(row) - mean(column)) / mean(column) (published in brackets)", "",
        markdown_table(header4, rows4), "",
        "Debole & Sebastiani's Table 4 is not always their Table 3 put through this formula: from their Table 3 means, "
        "R(10) against R(90) macro is +52.8% (printed +46.8%), R(90) against R(10) macro -34.5% (printed -53.1%) and "
        "R(115) against R(10) macro -30.9% (printed -50.5%); their other nine entries are the formula's to within "
        f"{TABLE_4_SLACK} points (their means were rounded for Table 3).", "",
        "## Figures 1-7", "",
        "Debole & Sebastiani print these as plots without their values, so there is nothing to set beside them but "
        "Table 3's means (drawn in Figure 7).", "",
        *(f"![Figure {number}](figures/figure-{number}.png)" for number in range(1, 8)), "",
        "## Every setup: micro-F1 / macro-F1", "",
        markdown_table(["learner", "weighting", "function", "xi", *subsets], setup_rows), "",
        "## Cost", "",
        f"The whole grid ({record['runs']} train+evaluate runs and {record['corpus_runs']} corpus-stage runs) took "
        f"{seconds(cost['wall_seconds'])} s wall, {seconds(cost['cpu_seconds'])} CPU-seconds (the process tree: "
        f"Python driver, JVM, Python workers), peak resident memory {cost['peak_rss_mb']:,.0f} MB "
        f"(JVM {cost['peak_rss_mb_by_role'].get('jvm', 0):,.0f}, Python driver "
        f"{cost['peak_rss_mb_by_role'].get('python_driver', 0):,.0f}, Python workers "
        f"{cost['peak_rss_mb_by_role'].get('python_workers', 0):,.0f}), on {record['machine']}.", "",
        "Per setup, train and evaluate seconds are in debole_sebastiani_2005.json. Each setup is what its command "
        "produces (CORPUS = the directory of reut2-*.sgm.gz), e.g.:", "",
        *(f"- `{command}`" for command in record["example_commands"]), "",
        f"This rerun: `{record['command']}`",
    ]
    return "\n".join(lines) + "\n"


def build_record(results: Sequence[Mapping[str, Any]], **fields: Any) -> dict[str, Any]:
    """Everything the markdown shows, JSON-ready (tuples as "row vs column" keys)."""
    means = table_3(results)
    hardness = table_4(means)
    by_setup: dict[str, dict[str, Any]] = {}
    for r in results:
        by_setup.setdefault(r["setup"], {})[r["subset"]] = r
    return {**fields, "table_3": means,
            "table_4": {m: {f"{row} vs {column}": v for (row, column), v in values.items()}
                        for m, values in hardness.items()},
            "figures": {str(n): curves(results, *spec) for n, spec in FIGURES.items()} | {"7": learner_means(results)},
            "setups": by_setup, "runs": len(results)}


def headline(record: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of the benchmark's record: Table 3 by subset (``R90.micro_mean``, ...) and the whole grid's cost
    (``cost.seconds``, ``cost.cpu_seconds``, ``cost.peak_memory_bytes``: the process tree's).
    """
    cost = record["cost"]
    return {**{SUBSETS[subset]: values for subset, values in record["table_3"].items()},
            "cost": {"seconds": cost["wall_seconds"], "cpu_seconds": cost["cpu_seconds"],
                     "peak_memory_bytes": harness_recording.memory_bytes(cost["peak_rss_mb"])}}


# --- the Spark part ------------------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """Run the 48 setups on each chosen subset and write the tables and figures (module docstring); the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     parents=[harness_recording.arguments()])
    parser.add_argument("--output", required=True)
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "data" / "reuters21578"))
    parser.add_argument("--subsets", default="R10,R90,R115", help="comma-separated, from R10, R90, R115")
    parser.add_argument("--validation", type=float, default=0.0,
                        help="Va's share of the training documents for Rocchio and kNN (train.validation); 0: "
                             "thresholds on cross-validation folds")
    parser.add_argument("--seed", type=int, default=0, help="train.seed of Va's draw (with --validation)")
    argv = list(sys.argv[1:] if argv is None else argv)
    arguments = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from sparktc.apps.cli import tell
    from sparktc.apps.pipeline import run as run_stages
    from sparktc.experiment.config import ConfigError, load_config
    from sparktc.runtime.session import build_session

    names = {code: name for name, code in SUBSETS.items()}
    chosen = [names.get(code.strip()) for code in arguments.subsets.split(",")]
    if None in chosen:
        print(f"--subsets {arguments.subsets!r}: choose from {', '.join(names)}", file=sys.stderr)
        return 2
    corpus = str(Path(arguments.corpus).resolve())
    base = str(REPO / BASE)
    grid = setups()
    try:  # every refusal before Spark starts
        configs = {(subset, setup): load_config(base, setup_overrides(corpus, subset, setup, arguments.validation,
                                                                      arguments.seed))
                   for subset in chosen for setup in grid}
    except ConfigError as error:
        return tell(error)
    output = Path(arguments.output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    settings = {"corpus": corpus, "subsets": [SUBSETS[subset] for subset in chosen], "setups": len(grid),
                "validation": arguments.validation, "seed": arguments.seed, "master": "local[*]"}

    def run_grid() -> tuple[int, dict[str, Any], dict[str, bytes]]:
        """The grid on every chosen subset: the exit status, the record's figures and the report files."""
        sampler = TreeSampler(os.getpid(), "benchmarks.debole_sebastiani_2005", interval=0.5)
        sampler.start()
        started = time.perf_counter()
        spark = build_session("sparktc-benchmark-debole-sebastiani-2005", {})
        results, corpus_runs, documents = [], 0, {}
        for subset in chosen:
            root = output / SUBSETS[subset]
            for weighting, function in [("tfidf", None), *(("supervised", f) for f in FUNCTIONS)]:
                stages = root / ("tfidf" if function is None else f"supervised-{function}") / "corpus-stages"
                shutil.rmtree(stages, ignore_errors=True)
                config = load_config(base, corpus_overrides(corpus, subset, weighting, function))
                if function is None:
                    manifests = run_stages(spark, config, str(stages), "ingest", "tokenize", "weight", "rank")
                    documents = {m["stage"]: m for m in manifests}["weight"]["details"]
                else:  # ingest and tokenize as for tf-idf: copied, then weight and rank with this function's scores
                    shutil.copytree(root / "tfidf" / "corpus-stages", stages)
                    run_stages(spark, config, str(stages), "weight", "rank")
                corpus_runs += 1
            for setup in grid:
                run = root / setup.name
                shutil.rmtree(run, ignore_errors=True)
                shutil.copytree(root / setup.corpus / "corpus-stages", run, copy_function=link_tables)
                train, evaluate = run_stages(spark, configs[(subset, setup)], str(run), "train", "evaluate")
                metrics = json.loads((run / "metrics.json").read_text())
                results.append({"subset": subset, "setup": setup.name, **setup._asdict(),
                                "micro_f1": metrics["micro_f1"], "macro_f1": metrics["macro_f1"],
                                "n_categories": metrics["n_categories"], "test_documents": test_documents(metrics),
                                "train_seconds": train["seconds"],
                                "evaluate_seconds": evaluate["seconds"], "path": str(run)})
        spark.stop()
        wall = time.perf_counter() - started
        sampler.stop()
        samples = sampler.samples
        by_role = {role: max(s.rss_mb[role] for s in samples) for role in samples[0].rss_mb}
        cost = {"wall_seconds": wall, "cpu_seconds": samples[-1].cpu_seconds - samples[0].cpu_seconds,
                "peak_rss_mb": max(sum(s.rss_mb.values()) for s in samples), "peak_rss_mb_by_role": by_role}
        rerun = shlex.join([".venv/bin/python", "-m", "benchmarks.debole_sebastiani_2005", *argv])
        record = build_record(
            results, corpus=corpus, command=rerun, cost=cost, corpus_runs=corpus_runs,
            train_documents=documents["train_documents"], test_documents=results[0]["test_documents"],
            machine=f"{os.cpu_count()} cores", validation=arguments.validation, seed=arguments.seed,
            example_commands=[pipeline_command(chosen[0], s, arguments.validation, arguments.seed) for s in grid[:1]])
        plot_figures(results, output / "figures")
        report = harness_recording.report_files(output, "debole_sebastiani_2005", record, render(record))
        return 0, headline(record), report

    return harness_recording.record_driver("debole_sebastiani_2005", argv, output, REPO, settings, run_grid)


if __name__ == "__main__":
    sys.exit(main())
