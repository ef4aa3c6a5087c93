"""evaluate.close_predictions: each test document's predicted categories closed under the hierarchy, counted beside
the as-assigned ones where predictions are counted (:func:`sparktc.evaluation.counting.count_batch` with an ancestor
table, :func:`sparktc.evaluation.metrics.ancestor_table`).

* the ancestor table of a small hierarchy worked by hand, and its refusals;
* the closed counts against scikit-learn's multilabel_confusion_matrix and f1_score on predicted label matrices
  closed here by walking the parents in plain Python, batch by batch and summed;
* the refusal of a category set without a hierarchy, before anything is scored;
* the whole pipeline on the LYRL2004 fixtures (the hierarchy kept as the qrels give it, the top-level topics left
  out of the training qrels, so that leaves are predicted without their ancestors): metrics.json's ``closed``, the
  headline and report.md against scikit-learn on the run's own predictions closed here, and the run's
  contingency_tables.txt against its per_category.csv.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import lyrl2004_corpus, shared_data
from sklearn.metrics import f1_score, multilabel_confusion_matrix, precision_score, recall_score

from sparktc.apps.pipeline import run as run_stages
from sparktc.errors import InputError
from sparktc.evaluation.appendix_tables import CONTINGENCY_TABLES_TXT
from sparktc.evaluation.counting import Counts, contingency_table, count_batch, ranking_names
from sparktc.evaluation.metrics import ancestor_table, micro_average
from sparktc.evaluation.report import CLOSED_ROWS
from sparktc.experiment.config import load_config
from sparktc.runtime.runner import Tables
from sparktc.schemas import PREDICTIONS_SCHEMA
from sparktc.stages.evaluate import predict

KS = [1, 3]

# --- the ancestor table ---------------------------------------------------------------------------------------


def test_the_ancestor_table_of_a_hierarchy_worked_by_hand():
    # A > A1 > A11, A > A2; B > B1; X's parent Z is not a category of the run; Y is top-level
    codes = ["A", "A1", "A11", "A2", "B", "B1", "X", "Y"]
    parents = [None, "A", "A1", "A", np.nan, "B", "Z", None]
    np.testing.assert_array_equal(ancestor_table(codes, parents), [
        [0, -1, -1], [1, 0, -1], [2, 1, 0], [3, 0, -1], [4, -1, -1], [5, 4, -1], [6, -1, -1], [7, -1, -1]])
    assert ancestor_table(["a", "b"], [None, None]).shape == (2, 1)  # flat: nothing to close under
    assert ancestor_table([], []).shape == (0, 1)


def test_the_ancestor_table_refuses_cycles_duplicates_and_ragged_input():
    with pytest.raises(ValueError, match="cycle: A -> B -> A"):
        ancestor_table(["A", "B", "C"], ["B", "A", "A"])
    with pytest.raises(ValueError, match="cycle: S -> S"):
        ancestor_table(["S"], ["S"])
    with pytest.raises(ValueError, match="distinct"):
        ancestor_table(["A", "A"], [None, None])
    with pytest.raises(ValueError, match="2 categories and 1 parents"):
        ancestor_table(["A", "B"], [None])


# --- closed counts against scikit-learn -------------------------------------------------------------------------

#: A forest of 12 categories, 3 levels deep.
PARENT = {"r1": None, "r2": None, "a": "r1", "b": "r1", "c": "r2", "a1": "a", "a2": "a", "b1": "b", "c1": "c",
          "c2": "c", "c11": "c1", "s": None}
CODES = sorted(PARENT)


def closed_by_hand(predicted: list[str]) -> set[str]:
    """A predicted set with every ancestor added, walking PARENT (independent of ancestor_table)."""
    closed = set()
    for code in predicted:
        while code is not None:
            closed.add(code)
            code = PARENT[code]
    return closed


def batch(rows: list[tuple]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"doc_id": d, "labels": labels, "predicted": predicted, "top_categories": top,
          "top_scores": [float(-i) for i in range(len(top))]} for d, labels, predicted, top in rows],
        schema=PREDICTIONS_SCHEMA)


def random_rows(seed: int, n: int) -> list[tuple]:
    """Labels closed under PARENT (as RCV1-v2's topics), with now and then one outside the categories; predictions
    any distinct categories, often a leaf without its parent.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        labels = sorted(closed_by_hand(list(rng.choice(CODES, size=rng.integers(0, 3), replace=False))))
        labels += ["OUT"] * int(rng.random() < 0.1)
        predicted = sorted(rng.choice(CODES, size=rng.integers(0, 4), replace=False))
        rows.append((f"d{i:03d}", labels, predicted, list(rng.permutation(CODES)[:4])))
    return rows


def indicator(sets) -> np.ndarray:
    return np.array([[c in s for c in CODES] for s in sets], dtype=int)


def test_closed_counts_against_sklearn_on_label_matrices_closed_by_hand():
    rows = random_rows(1, 400)
    ancestors = ancestor_table(CODES, [PARENT[c] for c in CODES])
    counts = count_batch(batch(rows), pa.array(CODES), KS, ancestors)
    Y = indicator([set(labels) for _, labels, _, _ in rows])
    P = indicator([set(predicted) for _, _, predicted, _ in rows])
    closed = indicator([closed_by_hand(predicted) for _, _, predicted, _ in rows])
    assert (closed >= P).all() and closed.sum() > P.sum()
    categories = pd.DataFrame({"category": CODES, "name": CODES, "parent": [PARENT[c] for c in CODES],
                               "train_positives": 1})
    for counted, predictions in ((counts, P), (counts.closed(), closed)):
        table = contingency_table(categories, counted)
        matrices = multilabel_confusion_matrix(Y, predictions)  # per category [[tn, fp], [fn, tp]]
        np.testing.assert_array_equal(table["tp"], matrices[:, 1, 1])
        np.testing.assert_array_equal(table["fp"], matrices[:, 0, 1])
        np.testing.assert_array_equal(table["fn"], matrices[:, 1, 0])
        np.testing.assert_array_equal(table["tn"], matrices[:, 0, 0])
        micro = micro_average(table["tp"], table["fp"], table["fn"], table["tn"], 0.0)
        assert micro["f1"] == pytest.approx(f1_score(Y, predictions, average="micro", zero_division=0))
    # closing changes the decisions only: the labels and the ranking measures are the as-assigned ones
    np.testing.assert_array_equal(counts.closed().positives, counts.positives)
    np.testing.assert_array_equal(counts.closed().ranking, counts.ranking)
    plain = count_batch(batch(rows), pa.array(CODES), KS)
    for field in ("positives", "assigned", "tp", "ranking"):
        np.testing.assert_array_equal(getattr(plain, field), getattr(counts, field))
    assert plain.closed_assigned is None


def test_closed_counts_summed_over_batches_are_those_of_the_whole():
    rows = random_rows(2, 150)
    ancestors = ancestor_table(CODES, [PARENT[c] for c in CODES])
    whole = count_batch(batch(rows), pa.array(CODES), KS, ancestors)
    parts = [count_batch(batch(rows[start:start + 7]), pa.array(CODES), KS, ancestors) for start in range(0, 150, 7)]
    summed = sum(parts, Counts.zero(len(CODES), len(ranking_names(KS)), closed=True))
    for field in ("positives", "assigned", "tp", "ranking", "closed_assigned", "closed_tp"):
        np.testing.assert_array_equal(getattr(summed, field), getattr(whole, field))
    with pytest.raises(ValueError, match="closed"):
        summed + count_batch(batch(rows), pa.array(CODES), KS)
    with pytest.raises(ValueError, match="not counted"):
        Counts.zero(3, 2).closed()


def test_a_flat_ancestor_table_closes_nothing():
    rows = random_rows(3, 100)
    counts = count_batch(batch(rows), pa.array(CODES), KS, ancestor_table(CODES, [None] * len(CODES)))
    np.testing.assert_array_equal(counts.closed_assigned, counts.assigned)
    np.testing.assert_array_equal(counts.closed_tp, counts.tp)


# --- the refusal --------------------------------------------------------------------------------------------------


def test_a_category_set_without_a_hierarchy_is_refused_before_scoring(spark, tmp_path):
    """Only the categories table is there, flat (an industries run without rcv1.industries.hier, whose configuration
    cannot know it is flat): the refusal comes before the models are read. A format without hierarchies is refused
    when the configuration loads (tests/corpora/test_lyrl2004_category_sets.py).
    """
    run = tmp_path / "run"
    spark.createDataFrame(pd.DataFrame({"category": ["acq", "earn"], "name": ["acq", "earn"], "parent": [None, None],
                                        "train_positives": [3, 4], "test_positives": [1, 2]}),
                          "category string, name string, parent string, train_positives long, test_positives long") \
        .write.parquet(str(run / "categories"))
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={tmp_path}", "corpus.category_set=industries",
                                "evaluate.close_predictions=true"])
    with pytest.raises(InputError, match=r"evaluate\.close_predictions = true.*no hierarchy.*"
                                         r"Set evaluate\.close_predictions = false"):
        predict(spark, config, Tables(str(run), str(run)))


# --- the pipeline on the LYRL2004 fixtures ----------------------------------------------------------------------------

HIERARCHY = shared_data("rcv1", "rcv1.topics.hier.orig")
TOP = ("CCAT", "ECAT", "GCAT", "MCAT")
FIRST_TEST_ID = 26151


def topic_parents() -> dict[str, str | None]:
    """Each of the 103 topics and its parent (None under Root), read from the hierarchy file here."""
    parents = {}
    for line in HIERARCHY.read_text().splitlines():
        if line.strip():
            head = line.split("child-description:")[0]
            parent, child = head.split("child:")[0].split("parent:")[1].strip(), head.split("child:")[1].strip()
            if child != "Root":
                parents[child] = None if parent == "Root" else parent
    return parents


@pytest.fixture(scope="module")
def lyrl(spark, tmp_path_factory):
    """The pipeline on the LYRL2004 fixtures without the training documents' top-level topics (kept so: the
    hierarchy policy keep), RCut's two best categories per document, averaged over all 103 topics.
    """
    base = tmp_path_factory.mktemp("closed")
    corpus = lyrl2004_corpus(base / "corpus")
    qrels = corpus / "rcv1-v2.topics.qrels"
    kept = [line for line in qrels.read_text().splitlines()
            if not (line.split()[0] in TOP and int(line.split()[1]) < FIRST_TEST_ID)]
    qrels.write_text("\n".join(kept) + "\n")
    config = load_config(None, [
        "corpus.format=lyrl2004", f"corpus.path={corpus}", f"corpus.hierarchy={HIERARCHY}", "corpus.test_parts=[0]",
        "corpus.hierarchy_policy=keep", "train.thresholding=rcut", "train.rcut_k=2", "evaluate.average_over=all",
        "evaluate.close_predictions=true"])
    output = base / "run"
    run_stages(spark, config, str(output))
    return output


def test_closed_averages_against_sklearn_on_the_runs_predictions(lyrl):
    metrics = json.loads((lyrl / "metrics.json").read_text())
    parents = topic_parents()
    codes = sorted(parents)
    assert metrics["n_categories"] == len(codes) == 103 and metrics["closed"]["n_categories"] == 103

    def closed(predicted) -> set[str]:
        found = set()
        for code in predicted:
            while code is not None:
                found.add(code)
                code = parents[code]
        return found

    predictions = pd.read_parquet(lyrl / "predictions").sort_values("doc_id")
    Y = np.array([[c in set(labels) for c in codes] for labels in predictions["labels"]], dtype=int)
    P = np.array([[c in set(predicted) for c in codes] for predicted in predictions["predicted"]], dtype=int)
    closed_P = np.array([[c in closed(predicted) for c in codes] for predicted in predictions["predicted"]], dtype=int)
    assert closed_P.sum() > P.sum()  # leaves were predicted without their ancestors
    for record, predicted in ((metrics, P), (metrics["closed"], closed_P)):
        for kind in ("micro", "macro"):
            for name, score in (("precision", precision_score), ("recall", recall_score), ("f1", f1_score)):
                expected = score(Y, predicted, average=kind, zero_division=1.0)
                assert record[f"{kind}_{name}"] == pytest.approx(expected, abs=1e-12), (kind, name)
    matrices = multilabel_confusion_matrix(Y, closed_P)
    rows = {row["category"]: row for row in metrics["closed"]["per_category"]}
    assert [(rows[c]["tp"], rows[c]["fp"], rows[c]["fn"], rows[c]["tn"]) for c in codes] == \
        [(m[1, 1], m[0, 1], m[1, 0], m[0, 0]) for m in matrices]
    assert metrics["micro_f1"] != metrics["closed"]["micro_f1"]
    # the closed record has the headline's structure, bar the ranking measures (closing leaves them as they are)
    assert set(metrics["closed"]) == {"micro_precision", "micro_recall", "micro_f1", "micro_fallout", "micro_overlap",
                                      "micro_error", "micro_accuracy", "macro_precision", "macro_recall", "macro_f1",
                                      "macro_fallout", "macro_overlap", "macro_error", "macro_accuracy",
                                      "macro_star_f1", "n_categories", "zero_division", "zero_division_convention",
                                      "averaged_over", "categories_listed", "averages", "bands", "per_category"}
    assert set(metrics["closed"]["averages"]) == set(metrics["averages"])


def test_the_report_shows_both_labelled_and_the_contingency_file_agrees_with_the_csv(lyrl):
    metrics = json.loads((lyrl / "metrics.json").read_text())
    report = (lyrl / "report.md").read_text()
    assert "## Predictions closed under the hierarchy" in report
    for label, record in zip(CLOSED_ROWS, (metrics, metrics["closed"])):
        cells = [f"{record[f'{kind}_{m}']:.4f}" for kind in ("micro", "macro") for m in ("precision", "recall", "f1")]
        assert f"| {label} | " + " | ".join(cells) + " |" in report
    csv_rows = list(csv.DictReader(io.StringIO((lyrl / "per_category.csv").read_text())))
    body = [line.split() for line in Path(lyrl, CONTINGENCY_TABLES_TXT).read_text().splitlines()
            if not line.startswith("#")][1:]
    assert body == [[row[k] for k in ("category", "TP", "FP", "FN", "TN", "P", "R", "F1")] for row in csv_rows]
    assert len(body) == 103
