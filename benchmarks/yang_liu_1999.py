r"""Yang & Liu 1999's controlled comparison of SVM, kNN, LLSF, NNet and NB, rerun on Reuters-21578 R(90) ApteMod.

    ./spark-submit.sh benchmarks/yang_liu_1999.py --output runs/benchmark-yang-liu [--corpus DIR] \
        [--methods svm,knn,llsf,nnet,nb]

The corpus stages (ingest, tokenize, weight, rank) run once with conf/reuters21578.toml for R(90) ApteMod; each
method then runs train and evaluate on a copy of those outputs (OUTPUT/<method>), under its preset (``--preset
yang_liu1999.<method>``, :mod:`sparktc.experiment.presets`), in the same Spark session; sparktc.apps.compare then
runs the s-, S-, T-, T'- and p-tests on every pair of methods (OUTPUT/comparison). Our Table 1 (miR, miP, miF1,
maF1, error, train and evaluate times), Table 2 (s-, S-, T-, T'-tests), Table 3 (p-tests) and the figure
(per-category F1 against training-set frequency) are written beside the published ones to OUTPUT/yang_liu_1999.md
(printed) and OUTPUT/yang_liu_1999.json. Each method's run is what its printed one-line pipeline command produces.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # spark-submit puts benchmarks/, not the repository

from benchmarks import harness_recording
from benchmarks.harness import REPO
from benchmarks.harness_reuters import BASE, SETS, command
from benchmarks.harness_tables import DASH, seconds
from sparktc.apps.cli import tell
from sparktc.apps.compare import check_runs, compare_runs, write_comparisons
from sparktc.apps.pipeline import run as run_stages
from sparktc.evaluation.comparison_report import COMPARISON_PNG, LEGEND, P_TESTS, SIGNIFICANCE_TESTS, f1_curves
from sparktc.experiment.config import Config, ConfigError, load_config
from sparktc.experiment.presets import PRESETS
from sparktc.runtime.markdown import markdown_table
from sparktc.runtime.outputs import check_output, claim
from sparktc.runtime.session import build_session


class Method(NamedTuple):
    """One of Yang & Liu's methods: their name, its preset over conf/reuters21578.toml, their setting (section 5.1)."""

    label: str  # Yang & Liu's name
    preset: str  # sparktc.experiment.presets
    yang_liu: str  # their setting (section 5.1)

    @property
    def settings(self) -> list[str]:
        """The preset's settings as ``section.key=value`` (TOML values), as a run records them."""
        return [f"{key}={json.dumps(value)}" for key, value in PRESETS[self.preset].settings.items()]


#: The methods, in the order of Yang & Liu's Table 1, each run under its preset (the feature counts, Yang & Liu's
#: among them, and SCutFBR's fbr chosen by 5-fold cross-validation on the training documents).
METHODS: dict[str, Method] = {
    "svm": Method("SVM", "yang_liu1999.svm", "SVMlight, linear; 10,000 features"),
    "knn": Method("kNN", "yang_liu1999.knn", "k = 45; 2,415 features"),
    "llsf": Method("LLSF", "yang_liu1999.llsf", "500 singular values; 2,415 features"),
    "nnet": Method("NNet", "yang_liu1999.nnet", "64 hidden units; 1,000 features"),
    "nb": Method("NB", "yang_liu1999.nb", "multinomial mixture; 2,000 features"),
}
CATEGORY_SET = "R(90)"
#: compare_runs pairs run i with every later run j as "i vs j"; in this order every pair comes out as in
#: Yang & Liu's Tables 2-3 (NB first in its pairs, then SVM, kNN, LLSF, NNet), so their symbols read the same way.
PAIR_ORDER = ("nb", "svm", "knn", "llsf", "nnet")
#: Table 1's columns and the metrics.json measures they are; micro error = sum(FP + FN) / (test documents x
#: categories), Yang & Liu's "wrong assignments divided by the n x m assignments".
TABLE_1_MEASURES = {"miR": "micro_recall", "miP": "micro_precision", "miF1": "micro_f1", "maF1": "macro_f1",
                    "error": "micro_error"}

# --- Yang & Liu 1999, as published ------------------------------------------------------------------------------
# Tables 2-3 from ../shared/seeds/000_*.txt, whose text extraction drops the glyphs ≫ and <, shows ≪ as « and ~
# as "."; each dropped symbol is the one pointing the way Table 1's values do (≫ where A's value is higher, <
# where it is lower), which their section 5.3 confirms (s-test: SVM > kNN ≫ {LLSF, NNet} ≫ NB).

#: Table 1: R(90) ApteMod, 90 categories, 3,019 test documents.
PUBLISHED_TABLE_1: dict[str, dict[str, float]] = {
    "svm": {"miR": .8120, "miP": .9137, "miF1": .8599, "maF1": .5251, "error": .00365},
    "knn": {"miR": .8339, "miP": .8807, "miF1": .8567, "maF1": .5242, "error": .00385},
    "llsf": {"miR": .8507, "miP": .8489, "miF1": .8498, "maF1": .5008, "error": .00414},
    "nnet": {"miR": .7842, "miP": .8785, "miF1": .8287, "maF1": .3765, "error": .00447},
    "nb": {"miR": .7688, "miP": .8245, "miF1": .7956, "maF1": .3886, "error": .00544},
}
#: Table 2, in its row order: sysA, sysB -> s-, S-, T-, T'-test.
PUBLISHED_TABLE_2: dict[tuple[str, str], tuple[str, ...]] = {
    ("svm", "knn"): (">", "~", "~", "~"),
    ("svm", "llsf"): ("≫", "~", "~", "~"),
    ("knn", "llsf"): ("≫", "~", "~", "~"),
    ("svm", "nnet"): ("≫", "≫", "≫", "≫"),
    ("knn", "nnet"): ("≫", "≫", "≫", "≫"),
    ("llsf", "nnet"): ("~", "≫", "≫", "≫"),
    ("nb", "knn"): ("≪", "≪", "≪", "≪"),
    ("nb", "llsf"): ("≪", "≪", "≪", "≪"),
    ("nb", "svm"): ("≪", "≪", "≪", "≪"),
    ("nb", "nnet"): ("≪", "~", "~", "~"),
}
#: Table 3 as printed: sysA, sysB -> miR, miP, error. Its error column follows the error rate itself (SVM ≪ LLSF:
#: SVM's error is lower; their text reads it "SVM better"); sparktc's symbol says which run is better.
PUBLISHED_TABLE_3: dict[tuple[str, str], tuple[str, ...]] = {
    ("svm", "knn"): ("≪", "≫", "~"),
    ("svm", "llsf"): ("≪", "≫", "≪"),
    ("knn", "llsf"): ("<", "≫", "<"),
    ("svm", "nnet"): ("≫", "≫", "≪"),
    ("knn", "nnet"): ("≫", "~", "≪"),
    ("llsf", "nnet"): ("≫", "≪", "<"),
    ("nb", "knn"): ("≪", "≪", "≫"),
    ("nb", "llsf"): ("≪", "≪", "≫"),
    ("nb", "svm"): ("≪", "≪", "≫"),
    ("nb", "nnet"): ("~", "≪", "≫"),
}
#: A symbol read the other way round (Table 3's error column: by the rate as printed, by "better" in sparktc).
REVERSED = {"≫": "≪", ">": "<", "~": "~", "<": ">", "≪": "≫"}


# --- pure functions: settings, tables, markdown ------------------------------------------------------------------

def selected_methods(text: str) -> list[str]:
    """The methods of ``--methods`` (comma-separated), in Table 1's order; ConfigError for an unknown or repeated
    name, or fewer than two (the tables compare pairs).
    """
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in METHODS]
    if unknown:
        raise ConfigError(f"--methods: unknown method {', '.join(map(repr, unknown))}; methods: {', '.join(METHODS)}")
    if len(set(names)) != len(names):
        raise ConfigError(f"--methods {text!r}: give each method once")
    if len(names) < 2:
        raise ConfigError(f"--methods {text!r}: give at least two of {', '.join(METHODS)}; the tables compare pairs")
    return [key for key in METHODS if key in names]


def comparison_order(methods: Sequence[str]) -> list[str]:
    """``methods`` in the order they are given to compare_runs (:data:`PAIR_ORDER`)."""
    return sorted(methods, key=PAIR_ORDER.index)


def corpus_overrides(corpus: str) -> list[str]:
    """The corpus overrides of the comparison: ``corpus`` as the path, and the R(90) category set."""
    return [f"corpus.path={corpus}", *SETS[CATEGORY_SET]]


def method_configs(corpus: list[str], methods: Sequence[str],
                   table: Mapping[str, Method] = METHODS) -> dict[str, Config]:
    """Each method's configuration; ConfigError naming the method whose settings are refused."""
    configs = {}
    for key in methods:
        method = table[key]
        try:
            configs[key] = load_config(str(REPO / BASE), corpus, preset=method.preset)
        except ConfigError as error:
            raise ConfigError(f"method {key} ({method.label}: --preset {method.preset}): {error}") from error
    return configs


def pipeline_command(key: str) -> str:
    """The one-line pipeline command whose run is the method's (CORPUS: the reut2-*.sgm.gz directory)."""
    return command(BASE, SETS[CATEGORY_SET], f"runs/yang-liu-{key}", preset=METHODS[key].preset)


def compare_command(methods: Sequence[str]) -> str:
    """The one-line compare command over the runs of ``methods``, in comparison order."""
    runs = " ".join(f"runs/yang-liu-{key}" for key in comparison_order(methods))
    return f"./spark-submit.sh jobs/compare.py {runs} --output runs/yang-liu-comparison"


def table_1_row(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Table 1's measures of one run, from its metrics.json."""
    return {column: metrics[key] for column, key in TABLE_1_MEASURES.items()}


def n_test_documents(metrics: Mapping[str, Any]) -> int:
    """The run's test documents: every category's contingency table counts each of them once."""
    first = metrics["per_category"][0]
    return first["tp"] + first["fp"] + first["fn"] + first["tn"]


def symbol_rows(pairs: Sequence[Mapping[str, Any]], published: Mapping[tuple[str, str], Sequence[str]],
                columns: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row per published pair, in the paper's order: our test records (comparison.json's, None for a pair not
    run) and the published symbols, by column header.
    """
    ours = {(pair["a"], pair["b"]): {test["name"]: test for test in pair["result"]["tests"]} for pair in pairs}
    headers = [header for header, _ in columns]
    return [{"a": a, "b": b,
             "ours": {header: ours[(a, b)][name] if (a, b) in ours else None for header, name in columns},
             "published": dict(zip(headers, symbols))}
            for (a, b), symbols in published.items()]


def table_3_rows(pairs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Table 3's rows, the published error symbol read as sparktc reads it (A ≫ B: A's error significantly lower),
    the symbols as printed kept under ``printed``.
    """
    rows = symbol_rows(pairs, PUBLISHED_TABLE_3, P_TESTS)
    for row in rows:
        row["printed"] = dict(row["published"])
        row["published"]["error"] = REVERSED[row["published"]["error"]]
    return rows


def agreement(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Per column: [pairs where our symbol is the published one, pairs compared]."""
    counts: dict[str, list[int]] = {}
    for row in rows:
        for header, test in row["ours"].items():
            count = counts.setdefault(header, [0, 0])
            if test is not None:
                count[0] += test["symbol"] == row["published"][header]
                count[1] += 1
    return counts


def build_record(corpus: str, command_line: str, runs: Mapping[str, Mapping[str, Any]],
                 stage_seconds: Mapping[str, float], comparison: Mapping[str, Any],
                 curves: Mapping[str, Any], compare_seconds: float) -> dict[str, Any]:
    """Every figure of the rerun beside the published ones (yang_liu_1999.json). ``runs``: per method run, its
    metrics.json (``metrics``), ``train_seconds``, ``evaluate_seconds`` and ``path``; ``comparison``: what
    compare_runs returned (comparison.json); ``curves``: the figure's points per run (f1_curves).
    """
    methods = [key for key in METHODS if key in runs]
    first = runs[methods[0]]["metrics"]
    table_2 = symbol_rows(comparison["pairs"], PUBLISHED_TABLE_2, SIGNIFICANCE_TESTS)
    table_3 = table_3_rows(comparison["pairs"])
    return {
        "corpus": corpus, "category_set": CATEGORY_SET, "command": command_line, "methods": methods,
        "n_categories": first["n_categories"], "test_documents": n_test_documents(first),
        "averaged_over": first["averaged_over"], "zero_division": first["zero_division"],
        "corpus_stage_seconds": dict(stage_seconds),
        "runs": {key: {"label": METHODS[key].label, "preset": METHODS[key].preset, "settings": METHODS[key].settings,
                       "yang_liu_setting": METHODS[key].yang_liu, "path": runs[key]["path"],
                       "command": pipeline_command(key), "train_seconds": runs[key]["train_seconds"],
                       "evaluate_seconds": runs[key]["evaluate_seconds"]}
                 for key in methods},
        "table_1": [{"method": key, "ours": table_1_row(runs[key]["metrics"]) if key in runs else None,
                     "published": PUBLISHED_TABLE_1[key]} for key in METHODS],
        "table_2": table_2, "table_2_agreement": agreement(table_2),
        "table_3": table_3, "table_3_agreement": agreement(table_3),
        "comparison": {"path": "comparison", "command": compare_command(methods), "seconds": compare_seconds},
        "figure": {"path": f"comparison/{COMPARISON_PNG}", "curves": dict(curves)},
    }


def _value(value: float | None, digits: int) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def _table_1(record: Mapping[str, Any]) -> str:
    header = ["method"]
    for column in TABLE_1_MEASURES:
        header += [column, "Y&L"]
    rows = []
    for row in record["table_1"]:
        run = record["runs"].get(row["method"], {})
        cells = [METHODS[row["method"]].label]
        for column in TABLE_1_MEASURES:
            digits = 5 if column == "error" else 4
            cells += [_value(row["ours"] and row["ours"][column], digits), _value(row["published"][column], digits)]
        rows.append([*cells, seconds(run.get("train_seconds")), seconds(run.get("evaluate_seconds"))])
    return markdown_table([*header, "train (s)", "evaluate (s)"], rows)


def _symbols(rows: Sequence[Mapping[str, Any]], agreed: Mapping[str, Sequence[int]]) -> str:
    headers = list(rows[0]["published"])
    cells = [[METHODS[row["a"]].label, METHODS[row["b"]].label,
              *itertools.chain.from_iterable(
                  (row["ours"][h]["symbol"] if row["ours"][h] else DASH, row["published"][h]) for h in headers)]
             for row in rows]
    lines = [markdown_table(["sysA", "sysB", *itertools.chain.from_iterable((h, "Y&L") for h in headers)], cells), "",
             "Same symbol as Yang & Liu: " + ", ".join(f"{h} {agreed[h][0]} of {agreed[h][1]}" for h in headers)
             + " pairs compared."]
    return "\n".join(lines)


def render(record: Mapping[str, Any]) -> str:
    """yang_liu_1999.md: the three tables and the figure beside the published ones, the times and the commands."""
    stages = ", ".join(f"{stage} {seconds(value)}" for stage, value in record["corpus_stage_seconds"].items())
    settings = [[METHODS[key].label, f"`--preset {run['preset']}`: " + " ".join(f"`{o}`" for o in run["settings"]),
                 run["yang_liu_setting"]] for key, run in record["runs"].items()]
    lines = [
        f"# Yang & Liu 1999 rerun: Reuters-21578 {record['category_set']} ApteMod", "",
        f"{record['n_categories']} categories ({record['averaged_over']}), {record['test_documents']:,} test "
        "documents (Yang & Liu: 90 and 3,019); ltc weights (raw term frequencies for NB), chi-square term ranks, "
        "per-category SCut or SCutFBR thresholds, feature counts and fbr all chosen by 5-fold cross-validation on "
        f"the training documents (settings below); 0/0 counted as {record['zero_division']:g}. "
        f"Corpus: {record['corpus']}.", "",
        "## Table 1: performance summary (ours, Yang & Liu's beside)", "",
        _table_1(record), "",
        "error = wrong decisions / (test documents x categories), micro-averaged as Yang & Liu define it. Times: each "
        "stage's wall time in this run (train includes the cross-validation of thresholds, and of SVM's term count); "
        f"corpus stages, run once for all methods: {stages} s; the comparison: "
        f"{seconds(record['comparison']['seconds'])} s.", "",
        "## Table 2: statistical significance tests (ours, Yang & Liu's beside)", "",
        _symbols(record["table_2"], record["table_2_agreement"]), "",
        LEGEND + "; — : a method not run.", "",
        "## Table 3: p-tests on micro recall, micro precision and error (ours, Yang & Liu's beside)", "",
        _symbols(record["table_3"], record["table_3_agreement"]), "",
        "Yang & Liu print their error column by the error rate itself (SVM ≪ LLSF: SVM's error is lower); it is "
        "shown here as sparktc reads it, A ≫ B when A's error is significantly lower (as printed: yang_liu_1999.json, "
        "`printed`).", "",
        "## Figure: per-category F1 against training-set frequency (Yang & Liu Figures 4-5)", "",
        f"![per-category F1 against training-set frequency, one curve per method]({record['figure']['path']})", "",
        f"Its points are in yang_liu_1999.json (`figure`); each pair's statistics and P-values in "
        f"{record['comparison']['path']}/comparison.md and {record['comparison']['path']}/pairs/.", "",
        "## Settings and commands", "",
        markdown_table(["method", "here (a preset over conf/reuters21578.toml)", "Yang & Liu"], settings), "",
        "Each run is what its command produces (CORPUS = the directory of reut2-*.sgm.gz):", "",
        *(f"- {run['label']}: `{run['command']}`" for run in record["runs"].values()),
        f"- the comparison: `{record['comparison']['command']}`", "",
        f"This rerun: `{record['command']}`",
    ]
    return "\n".join(lines) + "\n"


# --- the Spark part ------------------------------------------------------------------------------------------------

def headline(runs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of the benchmark's record, per method (``svm``, ``knn``, ...): micro-/macro-F1 and the train and
    evaluate stages' wall seconds.
    """
    return {key: {"micro_f1": run["metrics"]["micro_f1"], "macro_f1": run["metrics"]["macro_f1"],
                  "train_seconds": run["train_seconds"], "evaluate_seconds": run["evaluate_seconds"]}
            for key, run in runs.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen methods on R(90), compare them and write the tables (module docstring); the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     parents=[harness_recording.arguments()])
    parser.add_argument("--output", required=True)
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "data" / "reuters21578"))
    parser.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, from {', '.join(METHODS)}")
    argv = list(sys.argv[1:] if argv is None else argv)
    arguments = parser.parse_args(argv)
    corpus = corpus_overrides(arguments.corpus)
    try:  # every refusal before Spark starts
        methods = selected_methods(arguments.methods)
        base = load_config(str(REPO / BASE), corpus)
        configs = method_configs(corpus, methods)
    except ConfigError as error:
        return tell(error)
    output = Path(arguments.output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    settings = {"corpus": arguments.corpus, "methods": list(methods), "master": "local[*]"}

    def run_methods() -> tuple[int, dict[str, Any], dict[str, bytes]]:
        """The methods, then their comparison: the exit status, the record's figures and the report files."""
        spark = build_session("sparktc-benchmark-yang-liu-1999", {})
        stages = output / "corpus-stages"
        manifests = run_stages(spark, base, str(stages), "ingest", "tokenize", "weight", "rank")
        runs = {}
        for key in methods:
            run = output / key
            shutil.rmtree(run, ignore_errors=True)
            shutil.copytree(stages, run)
            train, evaluate = run_stages(spark, configs[key], str(run), "train", "evaluate")
            runs[key] = {"path": str(run), "metrics": json.loads((run / "metrics.json").read_text()),
                         "train_seconds": train["seconds"], "evaluate_seconds": evaluate["seconds"]}
        started = time.perf_counter()
        paths = check_runs([runs[key]["path"] for key in comparison_order(methods)])
        target = check_output(str(output / "comparison"), {f"RUN_{i}": path for i, path in enumerate(paths, 1)},
                              "compare")
        with claim(target, "compare", spark) as held:
            comparison, tables = compare_runs(spark, paths, base.evaluate, base.corpus.format)
            write_comparisons(spark, held.output, comparison, tables)
        compare_seconds = time.perf_counter() - started
        spark.stop()
        curves = {name: curve.to_dict("records") for name, curve in f1_curves(tables).items()}
        rerun = shlex.join(["./spark-submit.sh", str(Path(__file__).resolve().relative_to(REPO)), *argv])
        record = build_record(arguments.corpus, rerun, runs,
                              {m["stage"]: m["seconds"] for m in manifests}, comparison, curves, compare_seconds)
        report = harness_recording.report_files(output, "yang_liu_1999", record, render(record))
        return 0, headline(runs), report

    return harness_recording.record_driver("yang_liu_1999", argv, output, REPO, settings, run_methods)


if __name__ == "__main__":
    sys.exit(main())
