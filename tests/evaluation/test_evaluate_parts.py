"""The evaluate stage's one-pass counts (:func:`sparktc.evaluation.counting.count_batch`) against a
contingency table worked by hand, scikit-learn's multilabel_confusion_matrix, the ranking measures of
:mod:`sparktc.evaluation.ranking` document by document, and the Spark reductions (explode, array_intersect)
evaluate used before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from reference import hits_from_rankings
from sklearn.metrics import multilabel_confusion_matrix

from sparktc.evaluation.counting import FIXED_POINT, Counts, contingency_table, count_batch, ranking_names
from sparktc.evaluation.ranking import ranking_measures
from sparktc.schemas import PREDICTIONS_SCHEMA

CODES = ["A", "B", "C", "D"]
KS = [1, 2, 3]


def batch(rows: list[tuple]) -> pa.RecordBatch:
    """Predictions (doc_id, labels, predicted, top_categories); top scores made up, decreasing."""
    return pa.RecordBatch.from_pylist(
        [{"doc_id": d, "labels": labels, "predicted": predicted, "top_categories": top,
          "top_scores": [float(-i) for i in range(len(top))]} for d, labels, predicted, top in rows],
        schema=PREDICTIONS_SCHEMA)


#: Five documents, by hand. "X" is a label outside the categories; d2 lists B twice; d4 has no label;
#: d5's ranking is shorter than the largest cut-off.
HAND = [
    ("d1", ["A", "B"], ["A"], ["A", "C", "B"]),
    ("d2", ["B", "B", "X"], ["B", "C"], ["B", "C", "A"]),
    ("d3", ["C"], [], ["A", "B", "C"]),
    ("d4", [], ["D"], ["D", "A", "B"]),
    ("d5", ["A", "D"], ["A", "D"], ["D", "A"]),
]


def test_counts_of_a_batch_worked_by_hand():
    counts = count_batch(batch(HAND), pa.array(CODES), KS)
    assert counts.documents == 5
    # A: labelled d1 d5, assigned d1 d5. B: labelled d1 d2 d2 (explode counts each), assigned d2.
    # C: labelled d3, assigned d2. D: labelled d5, assigned d4 d5.
    np.testing.assert_array_equal(counts.positives, [2, 3, 1, 1])
    np.testing.assert_array_equal(counts.assigned, [2, 1, 1, 2])
    np.testing.assert_array_equal(counts.tp, [2, 1, 0, 1])
    table = contingency_table(pd.DataFrame({"category": CODES, "name": list("abcd"), "parent": None,
                                            "train_positives": [7, 6, 5, 4]}), counts)
    assert table.to_dict("list") == {
        "category": CODES, "name": list("abcd"), "parent": [None] * 4, "train_positives": [7, 6, 5, 4],
        "test_positives": [2, 3, 1, 1], "tp": [2, 1, 0, 1], "fp": [0, 0, 1, 1], "fn": [0, 2, 1, 0],
        "tn": [3, 2, 3, 3]}
    assert all(table[c].dtype == np.int64 for c in ("test_positives", "tp", "fp", "fn", "tn"))
    # Relevant (distinct labels) 2, 2 (B, X), 1, 0, 2; hits at ranks: d1 1,3; d2 1; d3 3; d4 none; d5 1,2.
    averages = counts.ranking_averages(KS)
    assert averages["P@1"] == pytest.approx(3 / 5)
    assert averages["P@2"] == pytest.approx((1 / 2 + 1 / 2 + 0 + 0 + 2 / 2) / 5)
    assert averages["R@3"] == pytest.approx((2 / 2 + 1 / 2 + 1 / 1 + 0 + 2 / 2) / 5)
    assert averages["RP@2"] == pytest.approx((1 / 2 + 1 / 2 + 0 + 0 + 2 / 2) / 5)
    idcg2 = 1 + 1 / np.log2(3)
    assert averages["nDCG@2"] == pytest.approx((1 / idcg2 + 1 / idcg2 + 0 + 0 + 1) / 5)


def test_labels_outside_the_categories_and_categories_never_seen():
    counts = count_batch(batch([("d", ["X", "Y"], ["A"], ["A", "B", "C"])]), pa.array(["A", "Z"]), KS)
    np.testing.assert_array_equal(counts.positives, [0, 0])
    np.testing.assert_array_equal(counts.assigned, [1, 0])
    np.testing.assert_array_equal(counts.tp, [0, 0])
    assert counts.ranking_averages(KS)["R@3"] == 0.0  # two relevant categories, none ranked
    empty = count_batch(batch([]), pa.array(CODES), KS)
    assert empty.documents == 0 and not empty.positives.any() and not empty.ranking.any()
    assert empty.ranking_averages(KS) == {name: 0.0 for name in ranking_names(KS)}


def random_rows(rng, n: int, codes: list[str]) -> list[tuple]:
    rows = []
    for i in range(n):
        labels = list(rng.choice(codes + ["OUT"], size=rng.integers(0, 4), replace=False))
        predicted = sorted(rng.choice(codes, size=rng.integers(0, 3), replace=False))
        top = list(rng.permutation(codes)[:5])
        rows.append((f"d{i:03d}", labels, predicted, top))
    return rows


def test_counts_match_sklearn_and_the_ranking_measures_document_by_document():
    rng = np.random.default_rng(3)
    codes = [f"c{j}" for j in range(7)]
    rows = random_rows(rng, 300, codes)
    counts = count_batch(batch(rows), pa.array(codes), [1, 3, 5])
    Y = np.array([[c in labels for c in codes] for _, labels, _, _ in rows])
    P = np.array([[c in predicted for c in codes] for _, _, predicted, _ in rows])
    matrices = multilabel_confusion_matrix(Y, P)  # per category [[tn, fp], [fn, tp]]
    np.testing.assert_array_equal(counts.tp, matrices[:, 1, 1])
    np.testing.assert_array_equal(counts.assigned - counts.tp, matrices[:, 0, 1])
    np.testing.assert_array_equal(counts.positives - counts.tp, matrices[:, 1, 0])
    np.testing.assert_array_equal(counts.documents - counts.positives - counts.assigned + counts.tp, matrices[:, 0, 0])
    hits, relevant = hits_from_rankings([top for *_, top in rows], [labels for _, labels, _, _ in rows], 5)
    values = ranking_measures(hits, relevant, [1, 3, 5])
    expected = [int(np.rint(values[name] * FIXED_POINT).astype(np.int64).sum()) for name in ranking_names([1, 3, 5])]
    assert counts.ranking.tolist() == expected


def test_sums_over_batches_are_those_of_the_whole_to_the_bit():
    rng = np.random.default_rng(5)
    codes = [f"c{j}" for j in range(6)]
    whole = batch(random_rows(rng, 250, codes))
    once = count_batch(whole, pa.array(codes), KS)
    for size in (1, 7, 100):
        parts = [count_batch(whole.slice(start, size), pa.array(codes), KS) for start in range(0, len(whole), size)]
        summed = sum(reversed(parts), Counts.zero(len(codes), len(ranking_names(KS))))
        assert summed.documents == once.documents
        for field in ("positives", "assigned", "tp", "ranking"):
            np.testing.assert_array_equal(getattr(summed, field), getattr(once, field))
        assert summed.ranking_averages(KS) == once.ranking_averages(KS)


def test_the_contingency_table_is_that_of_sparks_explode_and_array_intersect(spark):
    """The reductions evaluate ran in Spark before it counted in one pass, on the same predictions."""
    rng = np.random.default_rng(11)
    codes = [f"c{j}" for j in range(5)]
    rows = random_rows(rng, 120, codes) + HAND
    predictions = spark.createDataFrame([tuple(row.values()) for row in batch(rows).to_pylist()],
                                        from_arrow_schema(PREDICTIONS_SCHEMA))
    categories = pd.DataFrame({"category": codes, "name": codes, "parent": "root", "train_positives": 1})
    n = predictions.count()

    def per_category(column, name: str):
        return predictions.select(F.explode(column).alias("category")).groupBy("category").agg(F.count("*").alias(name))

    spark_table = (
        spark.createDataFrame(categories).join(per_category(F.col("labels"), "positives"), "category", "left")
        .join(per_category(F.col("predicted"), "assigned"), "category", "left")
        .join(per_category(F.array_intersect("labels", "predicted"), "tp"), "category", "left")
        .fillna(0, ["positives", "assigned", "tp"])
        .select("category", F.col("positives").alias("test_positives"), "tp",
                (F.col("assigned") - F.col("tp")).alias("fp"), (F.col("positives") - F.col("tp")).alias("fn"),
                (F.lit(n) - F.col("positives") - F.col("assigned") + F.col("tp")).alias("tn"))
        .orderBy("category").toPandas()
    )
    counts = count_batch(batch(rows), pa.array(codes), KS)
    ours = contingency_table(categories, counts)[["category", "test_positives", "tp", "fp", "fn", "tn"]]
    pd.testing.assert_frame_equal(ours, spark_table, check_dtype=False)
