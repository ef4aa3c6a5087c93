"""Evaluation, reports and run comparison, each checked against an independent computation here.

Two runs on one seeded JSON Lines corpus that differ only in the decision threshold (run A:
train.threshold = 0, run B: train.threshold = -0.3), plus run A re-evaluated with
evaluate.zero_division = 0 (on a copy of its output). (train.liblinear.C = 0.05 would assign no category at
all on this corpus, which is the degenerate comparison tested at the end.)

* ``contingency`` against scikit-learn's multilabel_confusion_matrix on the collected predictions;
* metrics.json (micro/macro P, R, F1, fallout, overlap, error, accuracy, Macro*-F1, every averaging
  set, the training-frequency bands) against scikit-learn and numpy on the same predictions;
* the ranking measures against a brute-force per-document P@K, R@K, RP@K, nDCG@K from scores
  recomputed here from ``models`` and the test ``vectors`` (REFERENCE.md section 6);
* report.md, per_category.csv and the two PNG plots;
* compare: decision counts brute-forced over (document, category) decisions, the s-, S-, T-, T'-
  and p-tests against sparktc.evaluation.significance on values computed here, the Table-2 lines, the refusal
  of runs on different test documents, three runs (A, B and an oracle made from A's tables) as the three
  pairwise comparisons with Yang & Liu's Tables 2-3 and the F1-by-frequency curves, jobs/compare.py
  on the suite's session (three runs), and its refusals before Spark starts (one run, a run given twice, a run
  without metrics.json).

The corpus has a category with a few training positives and no test positive (``gold``, a 0/0
category in both runs), one with test positives but no training positive (``ship``,
never predicted), one that labels nothing (``zinc``) and a test document with no label.
"""

from __future__ import annotations

import csv
import io
import json
import math
import runpy
import shutil
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import REPO, invented_words, prepared_job, run_prepared
from pyspark.sql import functions as F
from scipy import sparse
from sklearn.metrics import hamming_loss, jaccard_score, multilabel_confusion_matrix, precision_recall_fscore_support

from sparktc.apps.compare import (
    CompareError,
    compare,
    compare_runs,
    comparison_files,
    decision_counts,
    format_comparison,
    format_comparisons,
    run_names,
)
from sparktc.apps.pipeline import run as run_stages
from sparktc.evaluation import significance
from sparktc.evaluation.comparison_report import f1_curves, p_test_table, plot_f1_curves, significance_table
from sparktc.experiment.config import load_config

# --- a seeded JSONL corpus (same construction as tests/stages/test_stages.py, with more edge cases) -------

TOPICS = ["acq", "crude", "earn", "grain", "trade"]
RARE = "gold"        # a few training positives, no test positive: 0/0 when never predicted
ONLY_TEST = "ship"   # test positives, no training positive: never predicted
NEVER = "zinc"       # listed in corpus.categories, labels no document
CATEGORIES = sorted([*TOPICS, RARE, ONLY_TEST, NEVER])
N_TRAIN, N_TEST = 160, 40
UNLABELLED = f"d{N_TRAIN + N_TEST - 1:04d}"  # the last test document has no label
KS = (1, 3, 5)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def write_corpus(directory: Path, seed: int = 20240611) -> list[dict]:
    rng = np.random.default_rng(seed)
    pool = invented_words(rng, 400)
    general, topical = pool[:300], pool[300:]
    topic_words = {c: topical[15 * i: 15 * (i + 1)] for i, c in enumerate([*TOPICS, RARE])}
    noise = topical[: 15 * len(TOPICS)]  # never the rare category's words
    records = []
    for i in range(N_TRAIN + N_TEST):
        split = "train" if i < N_TRAIN else "test"
        doc_id = f"d{i:04d}"
        tokens = list(rng.choice(general, size=25))
        if doc_id == UNLABELLED:
            labels: list[str] = []
        else:
            labels = [c for c in TOPICS if rng.random() < 0.3] or [str(rng.choice(TOPICS))]
            if split == "train" and i % 30 == 0:
                labels.append(RARE)
            for c in labels:
                tokens += list(rng.choice(topic_words[c], size=int(rng.integers(2, 7))))
            tokens += list(rng.choice(noise, size=2))
            if split == "test" and i % 7 == 0:
                labels.append(ONLY_TEST)
        rng.shuffle(tokens)
        records.append({"id": doc_id, "text": " ".join(tokens) + f" {i} Reuters.", "labels": labels, "split": split})
    directory.mkdir()
    for split in ("train", "test"):
        (directory / f"{split}.jsonl").write_text(
            "\n".join(json.dumps(r) for r in records if r["split"] == split) + "\n")
    return records


def corpus_config(path: Path, *overrides: str):
    return load_config(None, ["corpus.format=jsonl", f"corpus.path={path}",
                              f"corpus.categories={json.dumps(CATEGORIES)}", *overrides])


def read_run(spark, output: str, records: list[dict]) -> SimpleNamespace:
    """Everything a test reads of one run, collected to the driver (the tables are tiny)."""
    predictions = spark.read.parquet(f"{output}/predictions").orderBy("doc_id").collect()
    models = {r.category: r for r in spark.read.parquet(f"{output}/models").collect()}
    n_terms = spark.read.parquet(f"{output}/vocabulary").count()
    rows = spark.read.parquet(f"{output}/vectors").filter(F.col("split") == "test").orderBy("doc_id").collect()
    indptr = np.cumsum([0] + [len(r.indices) for r in rows])
    X = sparse.csr_matrix((np.array([v for r in rows for v in r.values], dtype=np.float64),
                           np.array([i for r in rows for i in r.indices], dtype=np.int64), indptr),
                          shape=(len(rows), n_terms))
    W = np.column_stack([np.asarray(models[c].weights, dtype=np.float64) for c in CATEGORIES])
    scores = np.asarray(X @ W) + np.array([models[c].bias for c in CATEGORIES])
    return SimpleNamespace(
        output=output,
        predictions=predictions,
        doc_ids=[r.doc_id for r in predictions],
        Y=indicator([r.labels for r in predictions]),
        P=indicator([r.predicted for r in predictions]),
        contingency=spark.read.parquet(f"{output}/contingency").orderBy("category").toPandas(),
        metrics=json.loads((Path(output) / "metrics.json").read_text()),
        vector_ids=[r.doc_id for r in rows],
        vector_labels=[list(r.labels) for r in rows],
        scores=scores,
        train_positives=Counter(c for r in records if r["split"] == "train" for c in set(r["labels"])),
    )


def indicator(lists) -> np.ndarray:
    return np.array([[c in row for c in CATEGORIES] for row in lists], dtype=int)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """Run ingest -> ... -> rank once; train + evaluate with threshold 0 (A) and -0.3 (B); A again with
    zero_division 0.
    """
    base = tmp_path_factory.mktemp("evaluation")
    corpus = base / "corpus"
    records = write_corpus(corpus)
    out_a, out_b, out_a0 = (str(base / name) for name in ("run_a", "run_b", "run_a_zero0"))
    config_a = corpus_config(corpus)
    config_b = corpus_config(corpus, "train.threshold=-0.3")
    config_a0 = corpus_config(corpus, "evaluate.zero_division=0")
    run_stages(spark, config_a, out_a, "ingest", "tokenize", "weight", "rank")
    shutil.copytree(out_a, out_b)  # the same vectors and term ranks; B differs in train.threshold only
    for config, output in ((config_a, out_a), (config_b, out_b)):
        run_stages(spark, config, output, "train", "evaluate")
    shutil.copytree(out_a, out_a0)  # evaluate overwrites its outputs: re-evaluate a copy of A
    run_stages(spark, config_a0, out_a0, "evaluate")
    return SimpleNamespace(
        base=base, records=records, config_a=config_a, config_b=config_b,
        a=read_run(spark, out_a, records), b=read_run(spark, out_b, records), a0=read_run(spark, out_a0, records),
    )


def the_run(runs, name: str) -> tuple[SimpleNamespace, float]:
    return {"a": (runs.a, 1.0), "b": (runs.b, 1.0), "a0": (runs.a0, 0.0)}[name]


def column(code: str) -> int:
    return CATEGORIES.index(code)


def counts(Y: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(tp, fp, fn, tn) per column from scikit-learn's multilabel_confusion_matrix."""
    m = multilabel_confusion_matrix(Y, P)
    return m[:, 1, 1], m[:, 0, 1], m[:, 1, 0], m[:, 0, 0]


def ratio(numerator, denominator, zero_division: float) -> np.ndarray:
    numerator, denominator = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    return np.array([n / d if d else zero_division for n, d in zip(numerator.ravel(), denominator.ravel())])


def sklearn_measures(Y: np.ndarray, P: np.ndarray, codes: list[str], zero_division: float) -> dict[str, float]:
    """Every headline measure over the categories ``codes``, from scikit-learn and per-label confusion matrices."""
    cols = [column(c) for c in codes]
    y, p = Y[:, cols], P[:, cols]
    out: dict[str, float] = {}
    for average in ("micro", "macro"):
        precision, recall, f1, _ = precision_recall_fscore_support(y, p, average=average, zero_division=zero_division)
        out.update({f"{average}_precision": precision, f"{average}_recall": recall, f"{average}_f1": f1})
        out[f"{average}_overlap"] = jaccard_score(y, p, average=average, zero_division=zero_division)
    if not y.any() and not p.any():
        # scikit-learn 1.9 returns 1.0 whatever zero_division when y_true and y_pred are both all
        # zero; REFERENCE.md section 6's convention (every ratio here is 0/0) gives zero_division.
        out.update({f"{a}_{m}": zero_division for a in ("micro", "macro")
                    for m in ("precision", "recall", "f1", "overlap")})
    tp, fp, fn, tn = counts(y, p)
    n = y.shape[0]
    out["micro_fallout"] = ratio([fp.sum()], [(fp + tn).sum()], zero_division)[0]
    out["macro_fallout"] = ratio(fp, fp + tn, zero_division).mean()
    out["micro_error"] = hamming_loss(y, p)
    out["macro_error"] = np.mean((fp + fn) / n)
    out["micro_accuracy"] = (tp + tn).sum() / (n * len(cols))
    out["macro_accuracy"] = np.mean((tp + tn) / n)
    mp, mr = out["macro_precision"], out["macro_recall"]
    out["macro_star_f1"] = 2 * mp * mr / (mp + mr) if mp + mr else 0.0
    return {key: float(value) for key, value in out.items()}


def sklearn_per_category(Y: np.ndarray, P: np.ndarray, zero_division: float) -> dict[str, np.ndarray]:
    precision, recall, f1, _ = precision_recall_fscore_support(Y, P, average=None, zero_division=zero_division)
    return {"precision": precision, "recall": recall, "f1": f1}


def band_of(train_positives: int) -> str:
    """The default bands (edges 10, 100, 1000) written out by hand."""
    for low, high, label in ((0, 0, "0"), (1, 10, "1-10"), (11, 100, "11-100"), (101, 1000, "101-1000")):
        if low <= train_positives <= high:
            return label
    return ">1000"


def averaged_set(run) -> list[str]:
    return [c for c in CATEGORIES if run.train_positives[c] > 0]


# --- the corpus and the runs do what the tests below rely on ---------------------------------------


def test_predictions_are_the_test_documents_with_their_corpus_labels(runs):
    expected = {r["id"]: sorted(r["labels"]) for r in runs.records if r["split"] == "test"}
    for run in (runs.a, runs.b, runs.a0):
        assert {r.doc_id: sorted(r.labels) for r in run.predictions} == expected
        assert run.vector_ids == run.doc_ids
        assert run.metrics["test_documents"] == N_TEST


def test_the_corpus_has_the_edge_cases(runs):
    a, b = runs.a, runs.b
    assert averaged_set(a) == sorted([*TOPICS, RARE])
    assert 3 <= a.train_positives[RARE] <= 10 and a.Y[:, column(RARE)].sum() == 0
    assert a.train_positives[ONLY_TEST] == 0 and a.Y[:, column(ONLY_TEST)].sum() > 0
    assert a.Y[:, column(NEVER)].sum() == 0 and a.train_positives[NEVER] == 0
    assert a.Y[a.doc_ids.index(UNLABELLED)].sum() == 0
    for run in (a, b):
        # gold is 0/0 (TP = FP = FN = 0) in both runs, so the convention moves the averages
        assert run.P[:, column(RARE)].sum() == 0
        assert run.P[:, [column(ONLY_TEST), column(NEVER)]].sum() == 0
        assert 0.3 < sklearn_measures(run.Y, run.P, TOPICS, 1.0)["micro_f1"] < 1.0
    assert (a.P != b.P).sum() > 10  # the two runs decide differently, so comparing them means something


# --- 1. contingency tables and averages ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "b"])
def test_contingency_equals_multilabel_confusion_matrix(runs, name):
    run, _ = the_run(runs, name)
    table = run.contingency
    assert table["category"].tolist() == CATEGORIES
    tp, fp, fn, tn = counts(run.Y, run.P)
    assert table["tp"].tolist() == tp.tolist()
    assert table["fp"].tolist() == fp.tolist()
    assert table["fn"].tolist() == fn.tolist()
    assert table["tn"].tolist() == tn.tolist()
    assert table["test_positives"].tolist() == run.Y.sum(axis=0).tolist()
    assert table["train_positives"].tolist() == [run.train_positives[c] for c in CATEGORIES]


@pytest.mark.parametrize("name", ["a", "b", "a0"])
def test_headline_measures_equal_sklearn(runs, name):
    run, zero_division = the_run(runs, name)
    metrics = run.metrics
    averaged = averaged_set(run)
    assert metrics["averaged_over"] == "train_positive"
    assert metrics["n_categories"] == len(averaged) and metrics["categories_listed"] == len(CATEGORIES)
    assert metrics["zero_division"] == zero_division
    for key, value in sklearn_measures(run.Y, run.P, averaged, zero_division).items():
        assert metrics[key] == pytest.approx(value, abs=1e-12), key
    # per_category rows: the averaged categories with their counts and scores
    per = sklearn_per_category(run.Y, run.P, zero_division)
    tp, fp, fn, tn = counts(run.Y, run.P)
    assert [r["category"] for r in metrics["per_category"]] == averaged
    for row in metrics["per_category"]:
        j = column(row["category"])
        assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (tp[j], fp[j], fn[j], tn[j])
        for measure in ("precision", "recall", "f1"):
            assert row[measure] == pytest.approx(per[measure][j], abs=1e-12), (row["category"], measure)


@pytest.mark.parametrize("name", ["a", "b", "a0"])
def test_averages_over_each_category_set_equal_sklearn(runs, name):
    run, zero_division = the_run(runs, name)
    test_positive = [c for c in CATEGORIES if run.Y[:, column(c)].sum() > 0]
    sets = {"all": CATEGORIES, "train_positive": averaged_set(run), "test_positive": test_positive}
    assert test_positive == sorted([*TOPICS, ONLY_TEST])
    averages = run.metrics["averages"]
    assert set(averages) == set(sets)
    for set_name, codes in sets.items():
        expected = sklearn_measures(run.Y, run.P, codes, zero_division)
        assert averages[set_name]["n_categories"] == len(codes)
        for key in ("micro_precision", "micro_recall", "micro_f1", "macro_precision", "macro_recall", "macro_f1"):
            assert averages[set_name][key] == pytest.approx(expected[key], abs=1e-12), (set_name, key)


@pytest.mark.parametrize("name", ["a", "b", "a0"])
def test_bands_partition_the_averaged_categories_by_training_positives(runs, name):
    run, zero_division = the_run(runs, name)
    by_band: dict[str, list[str]] = {}
    for code in sorted(averaged_set(run), key=lambda c: run.train_positives[c]):
        by_band.setdefault(band_of(run.train_positives[code]), []).append(code)
    assert list(by_band) == ["1-10", "11-100"]  # gold alone in 1-10
    bands = run.metrics["bands"]
    assert [b["band"] for b in bands] == list(by_band)
    assert sum(b["n_categories"] for b in bands) == len(averaged_set(run))
    for band in bands:
        codes = by_band[band["band"]]
        expected = sklearn_measures(run.Y, run.P, codes, zero_division)
        assert band["n_categories"] == len(codes)
        assert band["micro_f1"] == pytest.approx(expected["micro_f1"], abs=1e-12), band
        assert band["macro_f1"] == pytest.approx(expected["macro_f1"], abs=1e-12), band


def test_zero_division_zero_changes_the_convention_and_the_values(runs):
    a, a0 = runs.a, runs.a0
    assert a0.contingency.equals(a.contingency)
    assert (a0.P == a.P).all()
    assert a0.metrics["ranking"] == a.metrics["ranking"]
    convention_1, convention_0 = a.metrics["zero_division_convention"], a0.metrics["zero_division_convention"]
    assert "F1 = 1 when TP = FP = FN = 0" in convention_1 and "LYRL2004" in convention_1
    assert "F1 = 0 when TP = FP = FN = 0" in convention_0 and "scikit-learn" in convention_0
    # gold is 0/0: its P, R, F1 are 1 under one convention and 0 under the other; micro is unchanged
    gold_1 = next(r for r in a.metrics["per_category"] if r["category"] == RARE)
    gold_0 = next(r for r in a0.metrics["per_category"] if r["category"] == RARE)
    assert (gold_1["precision"], gold_1["recall"], gold_1["f1"], gold_1["overlap"]) == (1.0, 1.0, 1.0, 1.0)
    assert (gold_0["precision"], gold_0["recall"], gold_0["f1"], gold_0["overlap"]) == (0.0, 0.0, 0.0, 0.0)
    n = len(averaged_set(a))
    assert a.metrics["macro_f1"] - a0.metrics["macro_f1"] == pytest.approx(1 / n, abs=1e-12)
    assert a0.metrics["micro_f1"] == pytest.approx(a.metrics["micro_f1"], abs=1e-15)
    # over test_positive only ship's precision is 0/0 (never predicted): macro-P drops by 1/6, F1 stays
    test_1, test_0 = a.metrics["averages"]["test_positive"], a0.metrics["averages"]["test_positive"]
    assert test_1["macro_precision"] - test_0["macro_precision"] == pytest.approx(1 / 6, abs=1e-12)
    for key in ("micro_precision", "micro_recall", "micro_f1", "macro_recall", "macro_f1"):
        assert test_0[key] == test_1[key], key
    # the band holding gold alone is all 0/0: F1 1 under one convention, 0 under the other
    assert [(b["band"], b["micro_f1"], b["macro_f1"]) for b in a.metrics["bands"]][0] == ("1-10", 1.0, 1.0)
    assert [(b["band"], b["micro_f1"], b["macro_f1"]) for b in a0.metrics["bands"]][0] == ("1-10", 0.0, 0.0)


# --- 2. ranking measures ------------------------------------------------------------------------------


def brute_force_ranking(scores: np.ndarray, labels: list[list[str]], ks=KS,
                        ties_reversed: bool = False) -> dict[str, float]:
    """LibMultiLabel's P@K, R@K, RP@K, nDCG@K one document at a time.

    Equal scores are ranked by category code (or by reversed code with ``ties_reversed``): ship
    and zinc have no training positive, so both score exactly their bias in every document.
    """
    sums = Counter()
    tie = -1 if ties_reversed else 1
    for row, truth in zip(scores, labels):
        ranked = [CATEGORIES[j] for j in sorted(range(len(CATEGORIES)), key=lambda j: (-row[j], tie * j))]
        relevant = set(truth)
        for k in ks:
            hits = [ranked[r] in relevant for r in range(k)]
            sums[f"P@{k}"] += sum(hits) / k
            if relevant:  # R, RP and nDCG are 0 for a document without labels
                sums[f"R@{k}"] += sum(hits) / len(relevant)
                sums[f"RP@{k}"] += sum(hits) / min(k, len(relevant))
                dcg = sum(1 / math.log2(r + 2) for r in range(k) if hits[r])
                ideal = sum(1 / math.log2(r + 2) for r in range(min(k, len(relevant))))
                sums[f"nDCG@{k}"] += dcg / ideal
    return {f"{m}@{k}": sums[f"{m}@{k}"] / len(labels) for m in ("P", "R", "RP", "nDCG") for k in ks}


@pytest.mark.parametrize("name", ["a", "b"])
def test_ranking_measures_equal_a_brute_force_from_models_and_vectors(runs, name):
    run, _ = the_run(runs, name)
    expected = brute_force_ranking(run.scores, run.vector_labels)
    assert expected == brute_force_ranking(run.scores, run.vector_labels, ties_reversed=True)  # ties do not matter
    assert set(run.metrics["ranking"]) == set(expected)
    for key, value in expected.items():
        assert run.metrics["ranking"][key] == pytest.approx(value, abs=1e-12), key
    assert 0.3 < expected["P@1"] < 1.0 and expected["R@5"] > expected["R@1"]
    # the unlabelled document scores 0 on R, RP and nDCG but still counts in the mean
    row = run.vector_ids.index(UNLABELLED)
    without = brute_force_ranking(np.delete(run.scores, row, axis=0),
                                  [labels for i, labels in enumerate(run.vector_labels) if i != row])
    assert expected["R@3"] == pytest.approx(without["R@3"] * (N_TEST - 1) / N_TEST, abs=1e-12)


# --- 3. reports -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "a0"])
def test_reports_are_written_and_agree_with_the_contingency(runs, name):
    run, zero_division = the_run(runs, name)
    output = Path(run.output)
    report = (output / "report.md").read_text()
    assert f"0/0 convention: zero_division = {zero_division}" in report
    assert run.metrics["zero_division_convention"] in report
    assert f"F1 = {int(zero_division)} when TP = FP = FN = 0" in report
    assert f"{run.metrics['micro_f1']:.4f}" in report and f"{run.metrics['macro_f1']:.4f}" in report

    rows = list(csv.DictReader(io.StringIO((output / "per_category.csv").read_text())))
    assert [r["category"] for r in rows] == CATEGORIES
    per = sklearn_per_category(run.Y, run.P, zero_division)
    for row, contingency in zip(rows, run.contingency.itertuples()):
        j = column(row["category"])
        assert (int(row["TP"]), int(row["FP"]), int(row["FN"]), int(row["TN"])) == \
            (contingency.tp, contingency.fp, contingency.fn, contingency.tn)
        assert int(row["train_positives"]) == run.train_positives[row["category"]]
        assert int(row["test_positives"]) == run.Y[:, j].sum()
        for field, measure in (("P", "precision"), ("R", "recall"), ("F1", "f1")):
            assert float(row[field]) == pytest.approx(per[measure][j], abs=5e-5), (row["category"], field)
    for name_ in ("f1_by_training_frequency.png", "f1_by_band.png"):
        data = (output / name_).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 1000, name_
        assert f"]({name_})" in report


# --- 4. compare ------------------------------------------------------------------------------------------


def brute_force_decisions(a, b, codes: list[str]) -> tuple[int, int]:
    """(n, k_a): (document, category) decisions where A and B differ, and those where A is right."""
    labels = {r.doc_id: set(r.labels) for r in a.predictions}
    predicted_b = {r.doc_id: set(r.predicted) for r in b.predictions}
    n = k_a = 0
    for row in a.predictions:
        for code in codes:
            says_a, says_b = code in row.predicted, code in predicted_b[row.doc_id]
            if says_a != says_b:
                n += 1
                k_a += says_a == (code in labels[row.doc_id])
    return n, k_a


def test_decision_counts_equal_a_brute_force(spark, runs):
    read = lambda run: spark.read.parquet(f"{run.output}/predictions")  # noqa: E731
    for codes in (averaged_set(runs.a), CATEGORIES, ["acq", ONLY_TEST]):
        got = decision_counts(read(runs.a), read(runs.b), codes)
        n, k_a = brute_force_decisions(runs.a, runs.b, codes)
        assert got == {"n": n, "k_a": k_a, "only_a": 0, "only_b": 0, "labels_differ": 0}, codes
        reverse = decision_counts(read(runs.b), read(runs.a), codes)
        assert (reverse["n"], reverse["k_a"]) == (n, n - k_a)
    assert brute_force_decisions(runs.a, runs.b, averaged_set(runs.a))[0] > 12  # the normal approximation


def assert_same_result(got: dict, want: significance.TestResult) -> None:
    assert got["name"] == want.name and got["n"] == want.n and got["symbol"] == want.symbol, (got, want)
    for key in ("statistic", "p_value_a_better", "p_value_b_better"):
        expected = getattr(want, key)
        if math.isnan(expected):
            assert got[key] is None, (got, key)
        else:
            assert got[key] == pytest.approx(expected, rel=1e-9, abs=1e-12), (got, key)


def expected_tests(a, b, zero_division: float) -> list[significance.TestResult]:
    codes = averaged_set(a)
    cols = [column(c) for c in codes]
    n, k_a = brute_force_decisions(a, b, codes)
    f1 = [sklearn_per_category(run.Y, run.P, zero_division)["f1"][cols] for run in (a, b)]
    micro = []
    for run in (a, b):
        tp, fp, fn, tn = (x.sum() for x in counts(run.Y[:, cols], run.P[:, cols]))
        micro.append({"recall": (tp / (tp + fn), tp + fn), "precision": (tp / (tp + fp), tp + fp),
                      "error": ((fp + fn) / (tp + fp + fn + tn), tp + fp + fn + tn)})
    tests = [significance.s_test(k_a, n), significance.S_test(*f1), significance.T_test(*f1),
             significance.T_prime_test(*f1)]
    for measure in ("recall", "precision", "error"):
        (p_a, n_a), (p_b, n_b) = micro[0][measure], micro[1][measure]
        tests.append(significance.p_test(p_a, p_b, int(n_a), int(n_b), f"p-test ({measure})",
                                         higher_is_better=measure != "error"))
    return tests


@pytest.fixture(scope="module")
def comparison(spark, runs):
    return compare(spark, runs.a.output, runs.b.output, runs.config_a.evaluate, "jsonl")


def test_compare_tests_equal_the_significance_functions_on_values_computed_here(runs, comparison):
    a, b = runs.a, runs.b
    codes = averaged_set(a)
    n, k_a = brute_force_decisions(a, b, codes)
    assert comparison["decisions"] == {"n": n, "k_a": k_a, "only_a": 0, "only_b": 0, "labels_differ": 0}
    assert comparison["n_categories"] == len(codes) and comparison["averaged_over"] == "train_positive"
    assert comparison["micro_f1"]["a"] == pytest.approx(a.metrics["micro_f1"], abs=1e-12)
    assert comparison["micro_f1"]["b"] == pytest.approx(b.metrics["micro_f1"], abs=1e-12)
    assert comparison["macro_f1"]["a"] == pytest.approx(a.metrics["macro_f1"], abs=1e-12)
    assert comparison["macro_f1"]["b"] == pytest.approx(b.metrics["macro_f1"], abs=1e-12)
    expected = expected_tests(a, b, 1.0)
    assert [t["name"] for t in comparison["tests"]] == [
        "s-test", "S-test", "T-test", "T'-test", "p-test (recall)", "p-test (precision)", "p-test (error)"]
    for got, want in zip(comparison["tests"], expected):
        assert_same_result(got, want)
    # the s-test uses the normal approximation here (n > 12): z = (k - n/2) / (sqrt(n)/2)
    assert comparison["tests"][0]["statistic"] == pytest.approx((k_a - 0.5 * n) / (0.5 * math.sqrt(n)), abs=1e-12)


def test_format_comparison_has_a_table_2_line_per_test(comparison):
    text = format_comparison(comparison)
    lines = text.splitlines()
    for test in comparison["tests"]:
        line = next(candidate for candidate in lines if candidate.startswith(f"| {test['name']} "))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == test["name"]
        assert int(cells[1].replace(",", "")) == test["n"]
        assert cells[5] == f"A {test['symbol']} B"
        assert test["symbol"] in ("≫", ">", "~", "<", "≪")
    assert "≫ / ≪: significant at p <= 0.01" in text
    assert f"over {comparison['n_categories']} categories (train_positive)" in text


def test_compare_refuses_runs_on_different_test_documents(spark, runs, tmp_path):
    other = tmp_path / "b_minus_one"
    predictions = spark.read.parquet(f"{runs.b.output}/predictions")
    dropped = runs.b.doc_ids[3]
    predictions.filter(F.col("doc_id") != dropped).write.parquet(str(other / "predictions"))
    shutil.copytree(f"{runs.b.output}/contingency", other / "contingency")
    with pytest.raises(CompareError, match="not evaluated on the same test documents") as caught:
        compare(spark, runs.a.output, str(other), runs.config_a.evaluate, "jsonl")
    assert f"1 only in {runs.a.output}" in str(caught.value)
    assert f"0 only in {other}" in str(caught.value)


@pytest.fixture(scope="module")
def oracle(spark, runs, tmp_path_factory) -> str:
    """A third run, made from run A's tables: it predicts every document's labels (F1 = 1 everywhere)."""
    directory = tmp_path_factory.mktemp("third") / "run_oracle"
    spark.read.parquet(f"{runs.a.output}/predictions").withColumn("predicted", F.col("labels")) \
        .write.parquet(str(directory / "predictions"))
    spark.read.parquet(f"{runs.a.output}/contingency").select(
        "category", "name", "parent", "train_positives", "test_positives",
        F.col("test_positives").cast("long").alias("tp"), F.lit(0).cast("long").alias("fp"),
        F.lit(0).cast("long").alias("fn"), (F.lit(N_TEST) - F.col("test_positives")).cast("long").alias("tn"),
    ).write.parquet(str(directory / "contingency"))
    shutil.copy(f"{runs.a.output}/metrics.json", directory / "metrics.json")  # the job asks each run for one
    return str(directory)


@pytest.fixture(scope="module")
def three_runs(spark, runs, oracle):
    return compare_runs(spark, [runs.a.output, runs.b.output, oracle], runs.config_a.evaluate, "jsonl")


def test_comparing_three_runs_is_the_three_pairwise_comparisons(runs, comparison, oracle, three_runs):
    record, tables = three_runs
    paths = [runs.a.output, runs.b.output, oracle]
    # each run's rule, from its metrics.json (the oracle's is a copy of A's), as the plot's legend names it
    svm = "SVM (LIBLINEAR -s 1), fixed threshold"
    assert record["runs"] == [{"name": "run_a", "path": runs.a.output, "rule": f"{svm} 0"},
                              {"name": "run_b", "path": runs.b.output, "rule": f"{svm} -0.3"},
                              {"name": "run_oracle", "path": oracle, "rule": f"{svm} 0"}]
    assert record["corpus"] == "corpus (JSON lines)"  # a format with its own labels: the corpus directory's name
    assert [(p["a"], p["b"], p["details"]) for p in record["pairs"]] == [
        ("run_a", "run_b", "pairs/1_vs_2.md"), ("run_a", "run_oracle", "pairs/1_vs_3.md"),
        ("run_b", "run_oracle", "pairs/2_vs_3.md")]
    assert record["pairs"][0]["result"] == comparison
    # the pairs with the oracle: compare()'s record, every value computed here as for A against B
    right = SimpleNamespace(predictions=[SimpleNamespace(doc_id=r.doc_id, labels=r.labels, predicted=r.labels)
                                         for r in runs.a.predictions], Y=runs.a.Y, P=runs.a.Y)
    for pair, (i, run) in zip(record["pairs"][1:], [(0, runs.a), (1, runs.b)]):
        result = pair["result"]
        assert set(result) == set(comparison)
        n, k_a = brute_force_decisions(run, right, averaged_set(run))
        assert (result["run_a"], result["run_b"], result["decisions"]) == (
            paths[i], oracle, {"n": n, "k_a": k_a, "only_a": 0, "only_b": 0, "labels_differ": 0})
        assert {key: result[key] for key in ("averaged_over", "n_categories", "zero_division")} == {
            key: comparison[key] for key in ("averaged_over", "n_categories", "zero_division")}
        assert result["micro_f1"] == pytest.approx({"a": run.metrics["micro_f1"], "b": 1.0}, abs=1e-12)
        assert result["macro_f1"] == pytest.approx({"a": run.metrics["macro_f1"], "b": 1.0}, abs=1e-12)
        assert [t["name"] for t in result["tests"]] == [t["name"] for t in comparison["tests"]]
        for got, want in zip(result["tests"], expected_tests(run, right, 1.0)):
            assert_same_result(got, want)
            assert got["undefined"] is None, got
    assert (record["averaged_over"], record["n_categories"]) == ("train_positive", len(averaged_set(runs.a)))
    # the oracle is right on every decision: every run is significantly worse on the s-test and error p-test
    for pair in record["pairs"][1:]:
        tests = {t["name"]: t for t in pair["result"]["tests"]}
        assert tests["s-test"]["symbol"] == "≪" and tests["p-test (error)"]["symbol"] == "≪"
    assert sorted(tables) == ["run_a", "run_b", "run_oracle"]
    for name, run in (("run_a", runs.a), ("run_b", runs.b)):
        assert sorted(tables[name]["category"]) == averaged_set(run)


def test_tables_2_and_3_have_a_row_per_pair_with_its_symbols(three_runs):
    record, _ = three_runs
    text = format_comparisons(record)
    for title, columns in (("## Table 2", ["s-test", "S-test", "T-test", "T'-test"]),
                           ("## Table 3", ["p-test (recall)", "p-test (precision)", "p-test (error)"])):
        lines = text[text.index(title):].splitlines()
        header = next(line for line in lines if line.startswith("| sysA vs sysB"))
        rows = lines[lines.index(header) + 2: lines.index(header) + 2 + len(record["pairs"])]
        assert len(header.strip("|").split("|")) == 1 + len(columns)
        for row, pair in zip(rows, record["pairs"]):
            cells = [c.strip() for c in row.strip("|").split("|")]
            symbols = {t["name"]: t["symbol"] for t in pair["result"]["tests"]}
            assert cells == [f"{pair['a']} vs {pair['b']}", *(symbols[c] for c in columns)]
    assert "| run_a vs run_oracle | ≪ |" in text
    assert "](f1_by_training_frequency.png)" in text and "](pairs/2_vs_3.md)" in text
    assert "For papers: [SVG](f1_by_training_frequency.svg), [PDF](f1_by_training_frequency.pdf)." in text
    for number, run in enumerate(record["runs"], 1):
        assert f"| {number} | {run['name']} |" in text


def test_the_f1_plot_has_one_curve_per_run_of_mean_f1_by_frequency_interval(runs, three_runs):
    _, tables = three_runs
    plot, curves = plot_f1_curves(tables)
    assert list(plot) == ["png", "svg", "pdf"] and plot["png"].startswith(PNG_SIGNATURE)
    assert plot == plot_f1_curves(tables)[0]  # same bytes in every format
    assert list(curves) == ["run_a", "run_b", "run_oracle"]
    assert all(curve.equals(f1_curves(tables)[name]) for name, curve in curves.items())
    for name, run in (("run_a", runs.a), ("run_b", runs.b), ("run_oracle", None)):
        curve = curves[name]
        assert curve["n_categories"].sum() == len(averaged_set(runs.a))  # every averaged category trains
        assert (np.diff(curve["frequency"]) > 0).all() and (curve["low"] <= curve["frequency"]).all()
        assert (curve["frequency"] <= curve["high"] * (1 + 1e-12)).all()
        macro = 1.0 if run is None else run.metrics["macro_f1"]
        assert np.average(curve["f1"], weights=curve["n_categories"]) == pytest.approx(macro, abs=1e-12)
    # each interval's point is its categories' mean F1, recomputed here
    table = tables["run_a"]
    for row in curves["run_a"].itertuples():
        inside = (table["train_positives"] >= row.low * (1 - 1e-12)) & (table["train_positives"] <= row.high)
        assert row.n_categories == int(inside.sum()) and row.f1 == pytest.approx(table["f1"][inside].mean())


def test_compare_refuses_fewer_than_two_runs_a_run_given_twice_and_a_run_not_evaluated(runs, tmp_path, monkeypatch,
                                                                                     capsys):
    main = runpy.run_path(str(REPO / "jobs" / "compare.py"))["main"]
    linked = tmp_path / "link_to_a"
    linked.symlink_to(runs.a.output)
    missing = tmp_path / "no_such_run"
    for arguments, message in (([runs.a.output], "compare needs at least two runs; got 1"),
                               ([runs.a.output, runs.b.output, str(linked)], "are the same directory"),
                               ([runs.a.output, str(missing)], f"no metrics.json in {missing}; run jobs/pipeline.py")):
        monkeypatch.setattr(sys, "argv", ["jobs/compare.py", *arguments, "--output", str(tmp_path / "out")])
        assert main() == 2  # refused before Spark starts
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("sparktc: configuration error: ") and message in err[0], err
    assert not (tmp_path / "out").exists()
    assert run_names(["/x/one/run", "/y/one/run", "/z/other"]) == ["x/one/run", "y/one/run", "other"]


def test_compare_job_writes_the_tables_the_plot_and_every_pair(spark, runs, comparison, oracle, three_runs, tmp_path,
                                                               monkeypatch, capsys):
    """The job (jobs/compare.py, its arguments parsed and checked as before its session starts, its work on the
    suite's session: a job's own session and spark-submit are tests/apps/test_submit.py's) compares three runs
    (comparison.json keeps every pair under ``pairs``, each pair's Table-2 lines are ``pairs/I_vs_J.md``, as
    comparison.md was for two runs).
    """
    output = tmp_path / "comparison"
    job = prepared_job("jobs/compare.py", [runs.a.output, runs.b.output, oracle, "--output", str(output)], monkeypatch)
    capsys.readouterr()
    run_prepared(spark, job)
    out = capsys.readouterr().out

    table = format_comparison(comparison)
    assert table in out
    written = json.loads((output / "comparison.json").read_text())
    assert written["pairs"][0]["result"] == comparison
    assert (output / "pairs" / "1_vs_2.md").read_text() == table + "\n"

    record, tables = three_runs
    assert written == record
    assert (output / "comparison.md").read_text() == format_comparisons(record) + "\n"
    assert significance_table(record["pairs"]) in out and p_test_table(record["pairs"]) in out
    for pair in record["pairs"]:
        assert (output / pair["details"]).read_text() == format_comparison(pair["result"]) + "\n"
    plots = {name: data for name, data in comparison_files(record, tables)[0].items() if name.startswith("f1_by")}
    assert sorted(plots) == ["f1_by_training_frequency.pdf", "f1_by_training_frequency.png",
                             "f1_by_training_frequency.svg"]
    for name, data in plots.items():
        assert (output / name).read_bytes() == data
    title = ET.fromstring(plots["f1_by_training_frequency.svg"]).find("{http://www.w3.org/2000/svg}title").text
    assert title.endswith(f"\ncorpus (JSON lines); {record['n_categories']} categories (train_positive)")
    assert "run_b: SVM (LIBLINEAR -s 1), fixed threshold -0.3 (" in plots["f1_by_training_frequency.svg"].decode()


def test_compare_with_a_run_that_assigns_nothing_reports_the_precision_p_test_as_degenerate(spark, runs, tmp_path):
    """A run that assigns no category (train.liblinear.C = 0.05 does this on this corpus) has no assigned
    positives, so the precision p-test has n_b = 0: significance.py's convention for a statistic
    that is undefined is nan, both P-values nan (null in JSON) and "~", and the other six tests are well defined.
    """
    a = runs.a
    nothing = tmp_path / "assigns_nothing"
    spark.read.parquet(f"{a.output}/predictions").withColumn("predicted", F.array().cast("array<string>")) \
        .write.parquet(str(nothing / "predictions"))
    spark.read.parquet(f"{a.output}/contingency").select(
        "category", "name", "parent", "train_positives", "test_positives",
        F.lit(0).cast("long").alias("tp"), F.lit(0).cast("long").alias("fp"),
        F.col("test_positives").cast("long").alias("fn"),
        (F.lit(N_TEST) - F.col("test_positives")).cast("long").alias("tn"),
    ).write.parquet(str(nothing / "contingency"))
    cols = [column(c) for c in averaged_set(a)]
    assigned, hits = int(a.P[:, cols].sum()), int((a.P * a.Y)[:, cols].sum())

    result = compare(spark, a.output, str(nothing), runs.config_a.evaluate, "jsonl")  # raises ValueError today

    tests = {t["name"]: t for t in result["tests"]}
    assert_same_result(tests["s-test"], significance.s_test(hits, assigned))
    precision = tests["p-test (precision)"]
    assert (precision["statistic"], precision["p_value_a_better"], precision["p_value_b_better"],
            precision["symbol"]) == (None, None, None, "~")
