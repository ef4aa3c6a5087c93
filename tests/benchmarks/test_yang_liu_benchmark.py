"""The Yang & Liu 1999 rerun (benchmarks/yang_liu_1999.py) without Spark: the published tables against the
paper's text, Table 1 rows from metrics.json, the pairs' orientation, Tables 2-3 side by side, the markdown.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pandas as pd
import pytest
from conftest import REPO, reuters21578_overrides

from benchmarks.yang_liu_1999 import (
    METHODS,
    PUBLISHED_TABLE_1,
    PUBLISHED_TABLE_2,
    PUBLISHED_TABLE_3,
    Method,
    agreement,
    build_record,
    compare_command,
    comparison_order,
    method_configs,
    pipeline_command,
    render,
    selected_methods,
    symbol_rows,
    table_1_row,
    table_3_rows,
)
from sparktc.evaluation.comparison_report import P_TESTS, SIGNIFICANCE_TESTS
from sparktc.evaluation.summary import assemble
from sparktc.experiment.config import ConfigError

TEST_NAMES = [name for _, name in (*SIGNIFICANCE_TESTS, *P_TESTS)]


def paper() -> str:
    """Yang & Liu 1999 as text (../shared/seeds); in CI a missing ../shared is a failure."""
    found = sorted((REPO.parent / "shared" / "seeds").glob("000_*.txt"))
    if not found:
        pytest.fail("Yang & Liu 1999 not found in ../shared/seeds (clone the project beside ../shared)")
    return found[0].read_text()


def as_extracted(published: dict[tuple[str, str], tuple[str, ...]]) -> str:
    """A published table as the seed's text extraction shows it: ≫ and < lost, ≪ as «, ~ as ".", no spaces."""
    glyphs = {"≫": "", ">": ">", "~": ".", "<": "", "≪": "«"}
    return "".join(METHODS[a].label + METHODS[b].label + "".join(glyphs[s] for s in symbols)
                   for (a, b), symbols in published.items())


def between(text: str, start: str, end: str) -> str:
    """The text after ``start`` up to ``end``, without whitespace."""
    begin = text.index(start) + len(start)
    return re.sub(r"\s", "", text[begin:text.index(end, begin)])


def metrics_of(rows: list[tuple[str, int, int, int, int]]) -> dict[str, Any]:
    """metrics.json's measures for hand-made contingency tables (category, TP, FP, FN, TN)."""
    contingency = pd.DataFrame(rows, columns=["category", "tp", "fp", "fn", "tn"]).assign(train_positives=1)
    metrics, _ = assemble(contingency, {"train_positive": [r[0] for r in rows]}, "train_positive", 1.0, (10,), {})
    return metrics


def pair(a: str, b: str, symbols: dict[str, str]) -> dict[str, Any]:
    """One pair of comparison.json: every test "~" unless ``symbols`` says otherwise."""
    tests = [{"name": name, "n": 10, "statistic": 0.0, "p_value_a_better": 0.5, "p_value_b_better": 0.5,
              "symbol": symbols.get(name, "~")} for name in TEST_NAMES]
    return {"a": a, "b": b, "details": "pairs/x.md", "result": {"tests": tests}}


# --- the published values are the paper's ---------------------------------------------------------------------

def test_published_table_1_is_the_papers():
    text = paper()
    found = re.findall(r"(SVM|KNN|LSF|NNet|NB) (\.\d+) (\.\d+) (\.\d+) (\.\d+) (\.\d+)",
                       text[text.index("Table1:"):])
    names = {"SVM": "svm", "KNN": "knn", "LSF": "llsf", "NNet": "nnet", "NB": "nb"}  # the extraction's spellings
    assert {names[name]: dict(zip(PUBLISHED_TABLE_1["svm"], map(float, values))) for name, *values in found} \
        == PUBLISHED_TABLE_1
    assert list(PUBLISHED_TABLE_1) == list(METHODS)
    assert {key: (row["miF1"], row["maF1"]) for key, row in PUBLISHED_TABLE_1.items()} == {
        "svm": (.8599, .5251), "knn": (.8567, .5242), "llsf": (.8498, .5008), "nnet": (.8287, .3765),
        "nb": (.7956, .3886)}


def test_published_tables_2_and_3_are_the_papers_as_its_text_shows_them():
    text = paper()
    assert between(text, "sysA sysB s-test S-test T-test T'-test", '\\"or') == as_extracted(PUBLISHED_TABLE_2)
    assert between(text, "sysA sysBmiRmiP error", "itmeansthat") == as_extracted(PUBLISHED_TABLE_3)


def test_published_table_3_points_the_way_table_1_does():
    """Every symbol of Table 3, its error column as printed, is ~ or points from the lower to the higher value."""
    for (a, b), symbols in PUBLISHED_TABLE_3.items():
        for column, symbol in zip(("miR", "miP", "error"), symbols):
            higher = PUBLISHED_TABLE_1[a][column] > PUBLISHED_TABLE_1[b][column]
            assert symbol == "~" or (symbol in "≫>") == higher, (a, b, column)


def test_both_tables_have_the_ten_pairs_and_the_comparison_order_gives_each_its_orientation():
    pairs = list(itertools.combinations(comparison_order(list(METHODS)), 2))
    assert len(pairs) == 10
    assert set(pairs) == set(PUBLISHED_TABLE_2) == set(PUBLISHED_TABLE_3)
    assert comparison_order(["svm", "llsf", "nb"]) == ["nb", "svm", "llsf"]


# --- Table 1 --------------------------------------------------------------------------------------------------

def test_table_1_row_from_a_hand_worked_contingency_table():
    # 2 categories x 10 test documents = 20 decisions; wrong: FP 1 + 2, FN 2 + 1 = 6.
    metrics = metrics_of([("a", 3, 1, 2, 4), ("b", 0, 2, 1, 7)])
    row = table_1_row(metrics)
    assert row == pytest.approx({"miR": 3 / 6, "miP": 3 / 6, "miF1": 0.5, "maF1": (6 / 9 + 0) / 2, "error": 6 / 20})


# --- settings -------------------------------------------------------------------------------------------------

def test_selected_methods_in_table_1_order_and_refusals():
    assert selected_methods("llsf, svm,knn") == ["svm", "knn", "llsf"]
    assert selected_methods(",".join(METHODS)) == list(METHODS)
    for text, message in (("svm,rocchio", "unknown method 'rocchio'"), ("svm,svm", "give each method once"),
                          ("svm", "at least two")):
        with pytest.raises(ConfigError, match=message):
            selected_methods(text)


def test_a_refused_method_is_named_before_spark():
    corpus = reuters21578_overrides()
    table = {**METHODS, "bogus": Method("Bogus", "bogus.preset", "")}
    configs = method_configs(corpus, ["svm", "knn", "llsf"], table)
    assert configs["svm"].tune.terms == [2000, 5000, 10000] and configs["svm"].train.thresholding == "scut"
    assert configs["knn"].train.knn.k == 45
    assert (configs["llsf"].tune.terms, configs["llsf"].train.llsf.k) == ([1000, 2415], 500)
    with pytest.raises(ConfigError, match=r"method bogus \(Bogus: --preset bogus.preset\): --preset unknown preset"):
        method_configs(corpus, ["svm", "bogus"], table)


def test_commands_are_the_pipeline_and_compare_commands():
    assert pipeline_command("svm") == (
        "./spark-submit.sh jobs/pipeline.py --config conf/reuters21578.toml --preset yang_liu1999.svm "
        "--set corpus.path=$CORPUS --set corpus.category_set=R90 --set corpus.document_filter=aptemod "
        "--output runs/yang-liu-svm")
    assert compare_command(["svm", "knn", "nb"]) == (
        "./spark-submit.sh jobs/compare.py runs/yang-liu-nb runs/yang-liu-svm runs/yang-liu-knn "
        "--output runs/yang-liu-comparison")


# --- Tables 2 and 3 -------------------------------------------------------------------------------------------

def test_every_pair_has_a_row_in_the_papers_order_ours_where_run():
    pairs = [pair("svm", "knn", {"s-test": "≫"}), pair("svm", "llsf", {}), pair("knn", "llsf", {})]
    rows = symbol_rows(pairs, PUBLISHED_TABLE_2, SIGNIFICANCE_TESTS)
    assert [(row["a"], row["b"]) for row in rows] == list(PUBLISHED_TABLE_2)
    assert rows[0]["ours"]["s-test"]["symbol"] == "≫" and rows[0]["published"]["s-test"] == ">"
    assert [row["ours"]["T'-test"] is None for row in rows] == [False] * 3 + [True] * 7
    # s-test: ours ≫, ~, ~ against their >, ≫, ≫; the macro tests "~" as published
    assert agreement(rows) == {"s-test": [0, 3], "S-test": [3, 3], "T-test": [3, 3], "T'-test": [3, 3]}


def test_table_3_reads_the_published_error_as_sparktc_does_and_keeps_it_as_printed():
    rows = table_3_rows([pair("svm", "llsf", {"p-test (error)": "≫"})])
    row = next(row for row in rows if (row["a"], row["b"]) == ("svm", "llsf"))
    assert row["printed"] == {"miR": "≪", "miP": "≫", "error": "≪"}
    assert row["published"] == {"miR": "≪", "miP": "≫", "error": "≫"}
    assert agreement(rows)["error"] == [1, 1]


# --- the record and the markdown ------------------------------------------------------------------------------

def test_the_record_and_markdown_put_ours_beside_the_published():
    metrics = metrics_of([("a", 3, 1, 2, 4), ("b", 0, 2, 1, 7)])
    runs = {key: {"path": f"/out/{key}", "metrics": metrics, "train_seconds": 2.0, "evaluate_seconds": 1.0}
            for key in ("svm", "knn", "llsf")}
    comparison = {"pairs": [pair("svm", "knn", {}), pair("svm", "llsf", {}), pair("knn", "llsf", {})]}
    record = build_record("/corpus", "./spark-submit.sh benchmarks/yang_liu_1999.py --output /out", runs,
                          {"ingest": 5.0, "rank": 1.0}, comparison, {"svm": []}, 3.0)
    assert record["methods"] == ["svm", "knn", "llsf"]
    assert (record["n_categories"], record["test_documents"]) == (2, 10)
    assert [row["method"] for row in record["table_1"]] == list(METHODS)
    assert record["table_1"][0]["ours"]["error"] == pytest.approx(0.3)
    assert record["table_1"][3]["ours"] is None  # NNet, not run
    text = render(record)
    assert "| SVM | 0.5000 | 0.8120 | 0.5000 | 0.9137 | 0.5000 | 0.8599 | 0.3333 | 0.5251 | 0.30000 | 0.00365 | " \
           "2.0 | 1.0 |" in text
    assert "| NNet | — | 0.7842 |" in text
    for a, b in PUBLISHED_TABLE_2:  # every pair, in both tables
        assert text.count(f"| {METHODS[a].label} | {METHODS[b].label} |") == 2
    assert "| SVM | kNN | ~ | > | ~ | ~ | ~ | ~ | ~ | ~ |" in text
    assert "| NB | SVM | — | ≪ | — | ≪ | — | ≪ |" in text  # Table 3: NB's higher error, read as sparktc reads it
    assert "s-test 0 of 3" in text and "error 1 of 3" in text
    assert "![per-category F1 against training-set frequency, one curve per method]" \
           "(comparison/f1_by_training_frequency.png)" in text
    assert f"- SVM: `{pipeline_command('svm')}`" in text
    assert f"- the comparison: `{compare_command(['svm', 'knn', 'llsf'])}`" in text
    assert "ingest 5.0, rank 1.0 s" in text
