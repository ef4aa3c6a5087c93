"""Compare runs on the same test set with Yang & Liu's significance tests (REFERENCE.md section 6).

Two runs A and B: :func:`compare`. k >= 2 runs: :func:`compare_runs` compares every pair, in the
order given ((1, 2), (1, 3), ..., (k-1, k)), each by :func:`compare`, and :func:`write_comparisons`
writes Yang & Liu's Tables 2 and 3 with one row per pair and their Figures 4-5 with one curve per run
(:mod:`sparktc.evaluation.comparison_report`).

The s-test needs, for every document and category, whether the two runs' decisions differ and
which one is right: Spark joins the two ``predictions`` tables on doc_id and reduces each
document's label sets to three counts, so no decision reaches the driver. The S-, T- and T'-tests
use the per-category F1 of the two contingency tables, and the p-tests the micro-averaged
recall, precision and error.

Runs that agree (a run and its rerun; methods that make the same decisions on a small test set)
leave some tests nothing to test: their statistic is undefined (Yang & Liu 1999 section 4's
formulas need differing pairs, a non-zero variance, trials on both sides), which the files show as
"undefined" with the reason (:class:`sparktc.evaluation.significance.TestResult`'s ``reason``) and
Yang & Liu's "~". :func:`write_comparisons` computes every file before writing any, and publishes
them from a staging directory, so a failure never leaves a comparison.md linking files not written.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import uuid
from collections.abc import Sequence
from dataclasses import asdict

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparktc.corpora.registry import corpus_title
from sparktc.errors import InputError
from sparktc.evaluation import comparison_report
from sparktc.evaluation.category_sets import category_subsets
from sparktc.evaluation.figures import figure_file, figure_markdown
from sparktc.evaluation.metrics import EMPTY_F1, f1_score, micro_average
from sparktc.evaluation.significance import S_test, T_prime_test, T_test, TestResult, p_test, s_test
from sparktc.evaluation.summary import category_table, to_builtin
from sparktc.experiment.config import ConfigError, EvaluateConfig
from sparktc.filesystem import absolute, is_uri, local_path
from sparktc.models.decision import rule_title
from sparktc.runtime import storage
from sparktc.runtime.markdown import markdown_table
from sparktc.runtime.outputs import INCOMPLETE


class CompareError(InputError):
    """The two runs cannot be compared (different test documents, labels or categories)."""


def decision_counts(a: DataFrame, b: DataFrame, categories: list[str]) -> dict[str, int]:
    """Over the documents of both runs and ``categories``: decisions where A and B differ (n),
    where A is right and B wrong (k_a), and the documents only one run has.
    """
    keep = F.array(*[F.lit(c) for c in categories])
    left = a.select("doc_id", F.col("labels").alias("labels_a"), F.array_intersect("predicted", keep).alias("a"))
    right = b.select("doc_id", F.col("labels").alias("labels_b"), F.array_intersect("predicted", keep).alias("b"))
    joined = left.join(right, "doc_id", "full_outer")
    a_only = F.array_except("a", "b")
    b_only = F.array_except("b", "a")
    labels = F.array_intersect("labels_a", keep)
    # A says yes where B says no: A is right when the category is true; the reverse when B says yes.
    a_right = F.size(F.array_intersect(a_only, labels)) + F.size(F.array_except(b_only, labels))
    both = F.col("a").isNotNull() & F.col("b").isNotNull()
    row = joined.agg(
        F.sum(F.when(both, F.size(a_only) + F.size(b_only)).otherwise(0)).alias("n"),
        F.sum(F.when(both, a_right).otherwise(0)).alias("k_a"),
        F.sum(F.when(F.col("b").isNull(), 1).otherwise(0)).alias("only_a"),
        F.sum(F.when(F.col("a").isNull(), 1).otherwise(0)).alias("only_b"),
        F.sum(F.when(both & (F.array_sort("labels_a") != F.array_sort("labels_b")), 1)
              .otherwise(0)).alias("labels_differ"),
    ).first()
    return {key: int(row[key] or 0) for key in ("n", "k_a", "only_a", "only_b", "labels_differ")}


def _micro(table: pd.DataFrame) -> dict[str, float]:
    """Micro-averaged recall, precision and error with their numbers of trials (the p-tests' inputs; a
    rate with no trial is 0 and its p-test degenerate), and micro-F1, 1 when TP = FP = FN = 0.
    """
    tp, fp, fn, tn = (int(table[c].sum()) for c in ("tp", "fp", "fn", "tn"))
    rates = micro_average([tp], [fp], [fn], [tn], zero_division=0.0)
    return {
        "recall": rates["recall"], "positives": tp + fn,
        "precision": rates["precision"], "assigned": tp + fp,
        "error": rates["error"], "decisions": tp + fp + fn + tn,
        "f1": f1_score(tp, fp, fn, zero_division=EMPTY_F1),
    }


def compare(spark: SparkSession, run_a: str, run_b: str, settings: EvaluateConfig, corpus_format: str) -> dict:
    """All five tests of A against B, over the categories of ``settings.average_over``."""
    tables = [spark.read.parquet(storage.join(run, "contingency")).toPandas() for run in (run_a, run_b)]
    if sorted(tables[0]["category"]) != sorted(tables[1]["category"]):
        raise CompareError(f"{run_a} and {run_b} have different category sets; compare runs of the same corpus setup")
    subsets = category_subsets(tables[0], corpus_format, settings.subsets)
    if settings.average_over not in subsets:
        raise CompareError(f"evaluate.average_over = {settings.average_over!r} is not a set of these runs: "
                           f"{', '.join(subsets)}")
    categories = subsets[settings.average_over]
    table_a, table_b = (category_table(t, settings.zero_division, settings.bands, categories) for t in tables)
    table_a, table_b = (t[t["averaged"]].sort_values("category").reset_index(drop=True) for t in (table_a, table_b))

    counts = decision_counts(*(spark.read.parquet(storage.join(run, "predictions")) for run in (run_a, run_b)),
                             categories)
    if counts["only_a"] or counts["only_b"] or counts["labels_differ"]:
        raise CompareError(
            f"the runs were not evaluated on the same test documents: {counts['only_a']:,} only in {run_a}, "
            f"{counts['only_b']:,} only in {run_b}, {counts['labels_differ']:,} with different labels"
        )
    return pair_result(run_a, run_b, settings, len(categories), table_a, table_b, counts)


def pair_result(run_a: str, run_b: str, settings: EvaluateConfig, n_categories: int, table_a: pd.DataFrame,
                table_b: pd.DataFrame, counts: dict[str, int]) -> dict:
    """:func:`compare`'s record from what Spark counted (no Spark here): the two runs' averaged categories
    (:func:`sparktc.evaluation.summary.category_table` rows with ``tp``, ``fp``, ``fn``, ``tn`` and ``f1``, in
    the same order) and :func:`decision_counts`' ``n`` and ``k_a``. The tests are Yang & Liu 1999 section 4's
    (:mod:`sparktc.evaluation.significance`); an undefined statistic is null, as are its P-values, with its reason under
    ``undefined``.
    """
    micro_a, micro_b = _micro(table_a), _micro(table_b)
    f1_a, f1_b = table_a["f1"].to_numpy(), table_b["f1"].to_numpy()
    results: list[TestResult] = [
        s_test(counts["k_a"], counts["n"]),
        S_test(f1_a, f1_b),
        T_test(f1_a, f1_b),
        T_prime_test(f1_a, f1_b),
        p_test(micro_a["recall"], micro_b["recall"], micro_a["positives"], micro_b["positives"], "p-test (recall)",
               no_trials="no test document has one of these categories"),
        p_test(micro_a["precision"], micro_b["precision"], micro_a["assigned"], micro_b["assigned"],
               "p-test (precision)", no_trials="a run that assigns nothing has no precision"),
        p_test(micro_a["error"], micro_b["error"], micro_a["decisions"], micro_b["decisions"], "p-test (error)",
               higher_is_better=False, no_trials="no test decision"),
    ]
    return to_builtin({
        "run_a": run_a, "run_b": run_b, "averaged_over": settings.average_over, "n_categories": n_categories,
        "zero_division": settings.zero_division,
        "micro_f1": {"a": micro_a["f1"], "b": micro_b["f1"]},
        "macro_f1": {"a": float(np.mean(f1_a)), "b": float(np.mean(f1_b))},
        "decisions": counts, "tests": [as_record(result) for result in results],
    })


def as_record(result: TestResult) -> dict:
    """One test as comparison.json holds it: :class:`TestResult`'s fields but ``reason``, and ``undefined``,
    null for a defined statistic, else why it is undefined (``statistic`` and both P-values are then nan, null in
    JSON).
    """
    record = asdict(result)
    reason = record.pop("reason")
    return {**record, "undefined": reason or None}


def format_comparison(result: dict) -> str:
    """Yang & Liu Table 2 style: one line per test with its statistic, p-values and symbol. An undefined
    statistic (a degenerate test: Yang & Liu 1999 section 4 needs differences to test) and its P-values read
    "undefined", its symbol is "~" and its reason is noted below the table.
    """
    lines = [
        f"A = {result['run_a']}  (micro-F1 {_cell(result['micro_f1']['a'], '.4f')}, "
        f"macro-F1 {_cell(result['macro_f1']['a'], '.4f')})",
        f"B = {result['run_b']}  (micro-F1 {_cell(result['micro_f1']['b'], '.4f')}, "
        f"macro-F1 {_cell(result['macro_f1']['b'], '.4f')})",
        f"over {result['n_categories']} categories ({result['averaged_over']})",
        "",
        markdown_table([f"{'test':<20}", f"{'n':>10}", f"{'statistic':>10}", f"{'p (A > B)':>10}",
                        f"{'p (B > A)':>10}", "result"],
                       [[f"{test['name']:<20}", f"{test['n']:>10,}", _cell(test["statistic"], ".4f", 10),
                         _cell(test["p_value_a_better"], ".4g", 10), _cell(test["p_value_b_better"], ".4g", 10),
                         f"A {test['symbol']} B"] for test in result["tests"]], padded=True),
        "",
    ]
    lines.append("≫ / ≪: significant at p <= 0.01; > / <: at p <= 0.05; ~: not significant (Yang & Liu 1999, Table 2)")
    undefined = comparison_report.undefined_tests(result["tests"])
    if undefined:
        lines += ["", "Undefined statistics (shown ~: the data cannot show either run better):", ""]
        lines += [f"- {name}: {reason}" for name, reason in undefined]
    return "\n".join(lines)


def _cell(value: float | None, spec: str, width: int = 0) -> str:
    """``value`` formatted by ``spec`` right-aligned in ``width``, or "undefined" for null or NaN (comparison.json
    holds an undefined statistic and its P-values as null).
    """
    if value is None or not math.isfinite(value):
        return f"{'undefined':>{width}}"
    return f"{value:>{width}{spec}}"


def unevaluated(run: str) -> str:
    """Why ``run`` cannot be compared: it holds no metrics.json, the file an evaluation writes last."""
    return f"no metrics.json in {run}; run jobs/pipeline.py (or jobs/evaluate.py) there first"


def check_runs(runs: Sequence[str]) -> list[str]:
    """The runs' absolute paths, or :class:`ConfigError` (before Spark starts) for fewer than two runs,
    a directory given twice (local paths compared after resolving symbolic links, URIs as written) or a local
    run without metrics.json (:func:`unevaluated`; a URI's is looked for once Spark is up).
    """
    if len(runs) < 2:
        raise ConfigError(f"compare needs at least two runs; got {len(runs)}: give RUN_1 RUN_2 [... RUN_k]")
    paths = [absolute(run) for run in runs]
    seen: dict[str, int] = {}
    for i, path in enumerate(paths):
        key = path.rstrip("/") if is_uri(path) else os.path.realpath(path)
        if key in seen:
            raise ConfigError(f"run {seen[key] + 1} ({runs[seen[key]]}) and run {i + 1} ({runs[i]}) are the same "
                              "directory; give each run once")
        seen[key] = i
    for path in paths:
        local = local_path(path)
        if local is not None and not os.path.isfile(os.path.join(local, "metrics.json")):
            raise ConfigError(unevaluated(path))
    return paths


def run_names(runs: Sequence[str]) -> list[str]:
    """Each run's name: its directory's base name; runs whose base names coincide are named by as many
    trailing path components as make them distinct (``x/run``, ``y/run``), the same for the same paths.
    """
    parts = [[p for p in (run.split("://", 1)[-1] if is_uri(run) else os.path.normpath(run)).split("/") if p]
             for run in runs]
    depth = [1] * len(runs)
    while True:
        names = ["/".join(p[-d:]) or run for p, d, run in zip(parts, depth, runs)]
        counts = {name: names.count(name) for name in names}
        clashing = [i for i, name in enumerate(names) if counts[name] > 1 and depth[i] < len(parts[i])]
        if not clashing:
            return [name if counts[name] == 1 else run for name, run in zip(names, runs)]
        for i in clashing:
            depth[i] += 1


def pair_details(i: int, j: int) -> str:
    """Where the details of the pair of runs ``i`` and ``j`` (0-based) go in the comparison's output."""
    return f"pairs/{i + 1}_vs_{j + 1}.md"


def _f1_table(spark: SparkSession, run: str, settings: EvaluateConfig, corpus_format: str) -> pd.DataFrame:
    """The run's averaged categories with their training positives and F1 (the plot's input; categories-sized)."""
    contingency = spark.read.parquet(storage.join(run, "contingency")).toPandas()
    categories = category_subsets(contingency, corpus_format, settings.subsets)[settings.average_over]
    table = category_table(contingency, settings.zero_division, settings.bands, categories)
    return table[table["averaged"]].reset_index(drop=True)


def compare_runs(spark: SparkSession, runs: Sequence[str], settings: EvaluateConfig,
                 corpus_format: str) -> tuple[dict, dict[str, pd.DataFrame]]:
    """Every pair of ``runs`` (absolute paths, :func:`check_runs`) by :func:`compare`, in the order given.

    Returns the record written as comparison.json (``runs``: name and path of each, and ``rule``, its decision
    rule as the plot's legend names it (:func:`sparktc.models.decision.rule_title`, from its metrics.json); ``corpus``:
    the first run's corpus and category set as the plot's title names them
    (:func:`sparktc.corpora.registry.corpus_title`); ``pairs``: per pair the names ``a`` and ``b``, the file of its
    details and :func:`compare`'s ``result``) and per run name its averaged categories' training positives and F1,
    for the plot.
    """
    results = [compare(spark, runs[i], runs[j], settings, corpus_format)
               for i, j in itertools.combinations(range(len(runs)), 2)]
    record = comparison_record(runs, results)
    recorded = [json.loads(storage.read_text(spark, storage.join(run["path"], "metrics.json")))
                for run in record["runs"]]
    for run, metrics in zip(record["runs"], recorded):
        run["rule"] = rule_title(metrics)
    record["corpus"] = corpus_title(recorded[0].get("settings", {}).get("corpus") or {"format": corpus_format})
    tables = {run["name"]: _f1_table(spark, run["path"], settings, corpus_format) for run in record["runs"]}
    return record, tables


def comparison_record(runs: Sequence[str], results: Sequence[dict]) -> dict:
    """comparison.json (:func:`compare_runs`) from the runs' paths and :func:`compare`'s result of every pair,
    in the order of ``itertools.combinations`` ((1, 2), (1, 3), ..., (k-1, k)); no Spark.
    """
    names = run_names(runs)
    indices = list(itertools.combinations(range(len(runs)), 2))
    if len(results) != len(indices):
        raise ValueError(f"{len(runs)} runs make {len(indices)} pairs; got {len(results)} results")
    pairs = [{"a": names[i], "b": names[j], "details": pair_details(i, j), "result": result}
             for (i, j), result in zip(indices, results)]
    first = pairs[0]["result"]
    return {
        "runs": [{"name": name, "path": run} for name, run in zip(names, runs)],
        "averaged_over": first["averaged_over"], "n_categories": first["n_categories"],
        "zero_division": first["zero_division"], "plot": comparison_report.COMPARISON_PNG, "pairs": pairs,
    }


def _run_scores(record: dict) -> list[tuple[float, float]]:
    """Each run's micro- and macro-F1, from the first pair it is in."""
    scores = {}
    for pair in reversed(record["pairs"]):
        for side in ("a", "b"):
            scores[pair[side]] = (pair["result"]["micro_f1"][side], pair["result"]["macro_f1"][side])
    return [scores[run["name"]] for run in record["runs"]]


def format_comparisons(record: dict) -> str:
    """comparison.md: the runs, Yang & Liu's Table 2 (s-, S-, T-, T'-tests) and Table 3 (p-tests), one row
    per pair with the symbol of A against B, Figures 4-5 and the files with each pair's details.
    """
    lines = [f"# Comparison of {len(record['runs'])} runs", "",
             f"over {record['n_categories']} categories ({record['averaged_over']}), "
             f"0/0 counted as {record['zero_division']:g}", "",
             markdown_table(["#", "run", "micro-F1", "macro-F1", "path"],
                            [[number, run["name"], _cell(micro, ".4f"), _cell(macro, ".4f"), run["path"]]
                             for number, (run, (micro, macro)) in enumerate(zip(record["runs"], _run_scores(record)),
                                                                            1)], "rlrrl")]
    lines += ["", "## Table 2: statistical significance tests", "",
              comparison_report.significance_table(record["pairs"]), "",
              "## Table 3: p-tests on micro recall (miR), micro precision (miP) and error", "",
              comparison_report.p_test_table(record["pairs"]), "", comparison_report.LEGEND, ""]
    notes = comparison_report.undefined_notes(record["pairs"])
    lines += [notes, ""] if notes else []
    lines += ["## Figures 4-5: per-category F1 against training-set frequency", "",
              *figure_markdown("per-category F1 against training-set frequency, one curve per run", record["plot"]),
              "## Each pair's tests (statistics and P-values)", ""]
    lines += [f"- [{pair['a']} vs {pair['b']}]({pair['details']})" for pair in record["pairs"]]
    return "\n".join(lines)


#: The files a reader opens first, which name the others: published last and removed first, so that whenever
#: they are in the output, every file they link to is there and of the same comparison.
ENTRY_FILES = ("comparison.json", "comparison.md")


def comparison_files(record: dict, tables: dict[str, pd.DataFrame]) -> tuple[dict[str, bytes], str]:
    """Every file of the comparison by its path in the output (each pair's details, the plot, then
    :data:`ENTRY_FILES`), all computed before any is written; and what the job prints: each pair's
    details, then comparison.md.
    """
    text = format_comparisons(record)
    files: dict[str, bytes] = {}
    details = []
    for pair in record["pairs"]:
        table = format_comparison(pair["result"])
        files[pair["details"]] = (table + "\n").encode("utf-8")
        details += [f"## {pair['a']} vs {pair['b']}", "", table, ""]
    label = f"{record['corpus']}; " if record.get("corpus") else ""
    rules = {run["name"]: run["rule"] for run in record["runs"] if run.get("rule")}
    plot, _ = comparison_report.plot_f1_curves(
        tables, label=f"{label}{record['n_categories']} categories ({record['averaged_over']})", rules=rules)
    for fmt, data in plot.items():
        files[figure_file(record["plot"], fmt)] = data
    # allow_nan=False: JSON has no NaN; compare() writes an undefined statistic and P-values as null, with the reason
    files["comparison.json"] = (json.dumps(record, indent=2, allow_nan=False) + "\n").encode("utf-8")
    files["comparison.md"] = (text + "\n").encode("utf-8")
    return files, "\n".join(details + [text])


def write_comparisons(spark: SparkSession, output: str, record: dict, tables: dict[str, pd.DataFrame],
                      staging: str = "") -> str:
    """Publish the comparison into ``output`` (held by this job, :mod:`sparktc.runtime.outputs`) whole, and
    return what the job prints (:func:`comparison_files`).

    Every file is computed first, then written under ``staging`` (default: a new directory under the output's
    ``_incomplete``, which a later job holding the output removes if this one dies), and only then moved into
    place: a failure while computing or writing leaves an earlier comparison in ``output`` as it was. Moving
    in removes the earlier comparison.md and comparison.json first, then the files they link to (``pairs/``,
    the plot), and moves the new ones in in the reverse order, so an entry file is never there without every
    file it links to (a failure between the moves leaves no comparison.md: run the command again). When done,
    the output's ``_incomplete`` is removed, as at the end of a run's stages.
    """
    files, printed = comparison_files(record, tables)
    staging = staging or storage.join(output, INCOMPLETE, f"compare-{uuid.uuid4().hex}")
    storage.delete(spark, staging)
    try:
        for path, data in files.items():
            storage.write_bytes(spark, storage.join(staging, path), data)
        # one move per top-level name: pairs/ moves as a directory, so no pair of an earlier comparison stays
        linked = [name for name in dict.fromkeys(path.split("/", 1)[0] for path in files) if name not in ENTRY_FILES]
        for name in (*ENTRY_FILES, *linked):
            storage.delete(spark, storage.join(output, name))
        for name in (*linked, *ENTRY_FILES):
            storage.rename(spark, storage.join(staging, name), storage.join(output, name))
    except BaseException:
        with contextlib.suppress(Exception):  # the failure is what to tell; _incomplete is swept by the next job
            storage.delete(spark, staging)
        raise
    storage.delete(spark, storage.join(output, INCOMPLETE))  # the output is held: no other job stages there
    storage.delete(spark, staging)
    return printed
