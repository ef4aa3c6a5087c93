"""``contingency_tables.txt``, the per-category contingency tables in the layout of LYRL2004's online appendix 15
(:mod:`sparktc.evaluation.appendix_tables`): against a table worked by hand under both 0/0 conventions, against
``per_category.csv`` written from the same table, read back with pandas, and its refusals (no Spark: the file an
evaluate run writes is checked in tests/evaluation/test_closed_predictions.py).
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from sparktc.evaluation.appendix_tables import CONTINGENCY_TABLES_TXT, HEADER, contingency_tables_text
from sparktc.evaluation.category_sets import category_subsets
from sparktc.evaluation.report import per_category_csv, report_markdown
from sparktc.evaluation.summary import assemble
from sparktc.models.decision import decision_record
from sparktc.models.registry import describe


def markdown(metrics, table) -> str:
    """The report, its method lines worded by the method's module as the evaluate stage has them."""
    return report_markdown(metrics, table, describe(metrics.get("method") or {}))

#: (category, training positives, TP, FP, FN, TN) over 100 test documents; "GMIL" has no training positive
#: (outside the averaged set train_positive), "C12" is 0/0 for P, R and F1, "crude oil" needs quoting.
HAND = [("C11", 10, 3, 1, 2, 94), ("E11", 7, 0, 2, 1, 97), ("C12", 4, 0, 0, 0, 100), ("GMIL", 0, 0, 0, 3, 97),
        ("crude oil", 12, 10, 0, 5, 85)]


def contingency(rows) -> pd.DataFrame:
    """The evaluate stage's contingency table (``sparktc.evaluation.counting.contingency_table``'s columns)."""
    return pd.DataFrame([{"category": code, "name": code.upper(), "parent": None, "train_positives": train,
                          "test_positives": tp + fn, "tp": tp, "fp": fp, "fn": fn, "tn": tn}
                         for code, train, tp, fp, fn, tn in rows])


def run_record(rows, zero_division: float) -> tuple[dict, pd.DataFrame]:
    """The metrics and the per-category table as the evaluate stage makes them (averaged over train_positive)."""
    table = contingency(rows)
    metrics, per_category = assemble(table, category_subsets(table, "jsonl"), "train_positive", zero_division,
                                     [10, 100, 1000], {})
    metrics.update(corpus="jsonl", test_documents=100,
                   **decision_record({"method": "liblinear", "thresholding": "scutfbr"}, {}))
    return metrics, per_category


def test_the_hand_worked_table_under_lyrl2004s_convention():
    # C11: P = 3/4, R = 3/5, F1 = 6/9. E11: 0/2, 0/1, 0/3. C12: 0/0 everywhere, so 1. GMIL: P = 0/0 = 1,
    # R = 0/3, F1 = 0/3. crude oil: 10/10, 10/15, 20/25. Averaged (all but GMIL): TP 13, FP 3, FN 8,
    # TN 376, micro P = 13/16, R = 13/21, F1 = 26/37; macro P = (3/4 + 0 + 1 + 1)/4 = 0.6875,
    # R = (3/5 + 0 + 1 + 2/3)/4 = 0.56667, F1 = (2/3 + 0 + 1 + 4/5)/4 = 0.61667.
    metrics, table = run_record(HAND, 1.0)
    assert contingency_tables_text(metrics, table) == "\n".join([
        "# sparktc per-category contingency tables, in the layout of LYRL2004's online appendix 15 (contingency "
        "tables, experimental results); the column layout is sparktc's",
        "# corpus jsonl; method liblinear; thresholding scutfbr; 100 test documents",
        f"# zero_division = 1.0: {metrics['zero_division_convention']}",
        "# averaged over train_positive: 4 of 5 categories; not averaged: GMIL",
        "category     TP  FP  FN   TN       P       R      F1",
        "C11           3   1   2   94  0.7500  0.6000  0.6667",
        "C12           0   0   0  100  1.0000  1.0000  1.0000",
        "E11           0   2   1   97  0.0000  0.0000  0.0000",
        "GMIL          0   0   3   97  1.0000  0.0000  0.0000",
        '"crude oil"  10   0   5   85  1.0000  0.6667  0.8000',
        "# micro-average over train_positive: TP 13 FP 3 FN 8 TN 376 P 0.8125 R 0.6190 F1 0.7027",
        "# macro-average over train_positive: P 0.6875 R 0.5667 F1 0.6167",
        "",
    ])
    assert metrics["micro_f1"] == pytest.approx(26 / 37) and metrics["macro_precision"] == pytest.approx(0.6875)


def test_the_zero_division_0_convention_shows_in_the_0_0_rows():
    metrics, table = run_record(HAND, 0.0)
    lines = contingency_tables_text(metrics, table).splitlines()
    assert lines[2].startswith("# zero_division = 0.0: P, R and F1 are 0 when their denominator is 0")
    assert "C12           0   0   0  100  0.0000  0.0000  0.0000" in lines
    assert "GMIL          0   0   3   97  0.0000  0.0000  0.0000" in lines
    # macro P = (3/4 + 0 + 0 + 1)/4, F1 = (2/3 + 0 + 0 + 4/5)/4; the micro table does not change
    assert lines[-1] == "# macro-average over train_positive: P 0.4375 R 0.3167 F1 0.3667"
    assert lines[-2] == "# micro-average over train_positive: TP 13 FP 3 FN 8 TN 376 P 0.8125 R 0.6190 F1 0.7027"


def random_rows(seed: int, n: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    rows = []
    for j in range(n):
        tp, fp, fn = (int(v) for v in rng.integers(0, 40, size=3) * (rng.random(3) < 0.8))
        rows.append((f"c{j:03d}", int(rng.integers(0, 3) * rng.integers(0, 500)), tp, fp, fn, 1000 - tp - fp - fn))
    return rows


@pytest.mark.parametrize("zero_division", [1.0, 0.0])
def test_every_number_is_per_category_csvs(zero_division):
    metrics, table = run_record(random_rows(5, 60), zero_division)
    text = contingency_tables_text(metrics, table)
    csv_rows = list(csv.DictReader(io.StringIO(per_category_csv(table))))
    body = [line.split() for line in text.splitlines() if not line.startswith("#")]
    assert tuple(body[0]) == HEADER
    assert [row[0] for row in body[1:]] == [row["category"] for row in csv_rows]
    for fields, row in zip(body[1:], csv_rows):
        assert fields[1:] == [row[key] for key in ("TP", "FP", "FN", "TN", "P", "R", "F1")], row["category"]
    # the footer is metrics.json's micro and macro averages and the summed tables of the averaged categories
    averaged = table[table["averaged"]]
    micro, macro = text.splitlines()[-2:]
    assert micro.endswith(f"TP {averaged['tp'].sum()} FP {averaged['fp'].sum()} FN {averaged['fn'].sum()} "
                          f"TN {averaged['tn'].sum()} P {metrics['micro_precision']:.4f} "
                          f"R {metrics['micro_recall']:.4f} F1 {metrics['micro_f1']:.4f}")
    assert macro.endswith(f"P {metrics['macro_precision']:.4f} R {metrics['macro_recall']:.4f} "
                          f"F1 {metrics['macro_f1']:.4f}")


def test_pandas_reads_the_table_back_quoted_codes_included():
    rows = HAND + [('say "when"', 3, 1, 1, 1, 97), ("#hash", 2, 0, 1, 0, 99)]
    metrics, table = run_record(rows, 1.0)
    read = pd.read_csv(io.StringIO(contingency_tables_text(metrics, table)), sep=r"\s+", comment="#",
                       dtype={"category": str})
    assert list(read.columns) == list(HEADER)
    ordered = table.sort_values("category").reset_index(drop=True)
    assert read["category"].tolist() == ordered["category"].tolist()
    for column, key in zip(HEADER[1:5], ("tp", "fp", "fn", "tn")):
        assert read[column].tolist() == ordered[key].tolist()
    for column, key in zip(HEADER[5:], ("precision", "recall", "f1")):
        np.testing.assert_allclose(read[column], ordered[key], atol=5e-5)


def test_the_report_names_the_file():
    metrics, table = run_record(HAND, 1.0)
    assert f"`{CONTINGENCY_TABLES_TXT}`" in markdown(metrics, table)
    assert CONTINGENCY_TABLES_TXT == "contingency_tables.txt"


def test_refusals_name_what_is_missing():
    metrics, table = run_record(HAND, 1.0)
    with pytest.raises(ValueError, match="'tn'"):
        contingency_tables_text(metrics, table.drop(columns=["tn"]))
    with pytest.raises(ValueError, match="zero_division"):
        contingency_tables_text({k: v for k, v in metrics.items() if k != "zero_division"}, table)
    broken = table.copy()
    broken.loc[0, "f1"] = np.nan
    with pytest.raises(ValueError, match="missing measure"):
        contingency_tables_text(metrics, broken)
    negative = table.copy()
    negative.loc[0, "fp"] = -1
    with pytest.raises(ValueError, match="counts"):
        contingency_tables_text(metrics, negative)
