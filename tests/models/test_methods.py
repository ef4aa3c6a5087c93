"""Rocchio, kNN and the thresholding strategies through the Spark stages (REFERENCE.md section 5).

One seeded JSON Lines corpus (160 training and 40 test documents, 5 categories) goes through
ingest -> tokenize -> weight -> rank once; then, each on its own copy of that output:

* Rocchio with SCut: the models' weights against beta * mean(positives) - gamma * mean(negatives)
  in numpy, their thresholds against brute-force SCut on exact out-of-fold Rocchio scores, and the
  predictions against "score > threshold" recomputed here;
* kNN (k = 5) with SCut: the predictions' top scores against a brute-force kNN over the stored
  unit vectors, and the thresholds against brute-force SCut over balanced folds of leave-one-out
  training scores;
* LIBLINEAR with SCutFBR and a small C search: the choices recorded per category;
* RCut (k = 2) and PCut: the LIBLINEAR models' predictions redone (evaluate's ``predict`` on copies
  of that run) with those strategies, which only act at prediction time;
* what ``metrics.json`` and ``report.md`` state of each run's method, thresholding and search space.

The training counts are chosen so that two categories have train_share * n_test exactly x.5 (the
rounding case of PCut). The runs happen once per module; the tests only read their tables.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow.dataset as ds
import pytest
from conftest import brute_force_scut, chi2_order, f1_of, invented_words, made_once
from scipy import sparse

from sparktc.apps.pipeline import run as run_stages
from sparktc.evaluation.metrics import f1_score
from sparktc.experiment.config import load_config
from sparktc.models.knn import selected_space
from sparktc.models.thresholds import balanced_folds, pcut_thresholds
from sparktc.runtime.runner import Tables
from sparktc.stages.evaluate import predict

CATEGORIES = ["acq", "crude", "earn", "grain", "trade"]
N_TRAIN, N_TEST = 160, 40
# Training positives per category; 50/160*40 = 12.5 and 18/160*40 = 4.5 are PCut's rounding case.
TRAIN_POSITIVES = {"acq": 50, "crude": 37, "earn": 62, "grain": 18, "trade": 29}
KNN_TERMS = (20, 60)  # kNN's candidate term counts
KNN_FBRS = (0.0, 0.9)  # and fbr values: plain SCut, and a fallback in most folds of the rare categories
KNN_K = 5
FOLDS, SEED = 5, 0  # train.folds and train.seed defaults


# --- the corpus and the runs ------------------------------------------------------------------------


def write_corpus(directory: Path, seed: int = 20240612) -> None:
    rng = np.random.default_rng(seed)
    pool = invented_words(rng, 380)
    general, topical = pool[:300], pool[300:]
    topic_words = {c: topical[16 * i: 16 * (i + 1)] for i, c in enumerate(CATEGORIES)}
    labels = [[] for _ in range(N_TRAIN + N_TEST)]
    for c in CATEGORIES:
        for i in rng.choice(N_TRAIN, size=TRAIN_POSITIVES[c], replace=False):
            labels[i].append(c)
    for i in range(N_TRAIN, N_TRAIN + N_TEST):
        labels[i] = [c for c in CATEGORIES if rng.random() < 0.3] or [str(rng.choice(CATEGORIES))]
    lines = {"train": [], "test": []}
    for i, doc_labels in enumerate(labels):
        tokens = list(rng.choice(general, size=25))
        for c in doc_labels:
            tokens += list(rng.choice(topic_words[c], size=int(rng.integers(1, 6))))
        tokens += list(rng.choice(topical, size=3))  # noise from any topic
        rng.shuffle(tokens)
        split = "train" if i < N_TRAIN else "test"
        lines[split].append(json.dumps({"id": f"d{i:04d}", "text": " ".join(tokens) + f" {i}.",
                                        "labels": sorted(doc_labels), "split": split}))
    directory.mkdir()
    for split, content in lines.items():
        (directory / f"{split}.jsonl").write_text("\n".join(content) + "\n")


def corpus_config(path: Path, *overrides: str):
    return load_config(None, ["corpus.format=jsonl", f"corpus.path={path}",
                              f"corpus.categories={json.dumps(CATEGORIES)}", *overrides])


def table_rows(path: str | Path) -> list[SimpleNamespace]:
    """The rows of a run's table (its ``split=`` partitions as a column), read with pyarrow, by doc id or category."""
    table = ds.dataset(path, format="parquet", partitioning="hive").to_table()
    return [SimpleNamespace(**row) for row in table.sort_by("doc_id" if "doc_id" in table.column_names
                                                             else "category").to_pylist()]


def vectors(output: str, split: str):
    """(CSR matrix, label indicator) of one split, rows sorted by doc id (the training set's order)."""
    n_terms = ds.dataset(f"{output}/vocabulary", format="parquet").count_rows()
    rows = [r for r in table_rows(f"{output}/vectors") if r.split == split]
    indptr = np.cumsum([0] + [len(r.indices) for r in rows])
    X = sparse.csr_matrix((np.array([v for r in rows for v in r.values], dtype=np.float64),
                           np.array([i for r in rows for i in r.indices], dtype=np.int64), indptr),
                          shape=(len(rows), n_terms))
    Y = np.array([[c in r.labels for c in CATEGORIES] for r in rows], dtype=bool)
    return [r.doc_id for r in rows], X, Y


def read_run(output: str) -> SimpleNamespace:
    models = {r.category: r for r in table_rows(f"{output}/models")}
    predictions = table_rows(f"{output}/predictions")
    return SimpleNamespace(
        output=output, models=models, predictions=predictions,
        P=np.array([[c in r.predicted for c in CATEGORIES] for r in predictions], dtype=bool),
        thresholds=np.array([models[c].threshold for c in CATEGORIES]),
    )


def prepared_corpus(spark, tmp_path_factory) -> tuple[Path, Path]:
    """This module's JSON Lines corpus and its output through ingest -> rank, made once for the suite: the
    runs of this module, ``test_llsf``, ``test_nnet`` and ``test_naive_bayes`` copy the output and train on it.
    """

    def make(directory: Path) -> list[str]:
        directory.mkdir(parents=True, exist_ok=True)
        corpus, prepared = directory / "corpus", directory / "prepared"
        write_corpus(corpus)
        run_stages(spark, corpus_config(corpus), str(prepared), "ingest", "tokenize", "weight", "rank")
        return [str(corpus), str(prepared)]

    corpus, prepared = made_once(tmp_path_factory, "methods_prepared", make)
    return Path(corpus), Path(prepared)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("methods")
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    settings = {
        "rocchio": ["train.method=rocchio", "train.thresholding=scut"],
        "rocchio_proportional": ["train.method=rocchio", "train.thresholding=proportional"],
        "knn": ["train.method=knn", f"train.knn.k={KNN_K}", "train.thresholding=scut"],
        "knn_selected": ["train.method=knn", f"train.knn.k={KNN_K}", "train.thresholding=scutfbr",
                         f"tune.terms={list(KNN_TERMS)}", f"tune.fbr={list(KNN_FBRS)}"],
        "svm": ["train.thresholding=scutfbr", "tune.liblinear.C=[0.5, 2.0]", "tune.fbr=[0.1, 0.5]"],
    }
    outputs = {}
    for name, overrides in settings.items():
        outputs[name] = str(base / name)
        shutil.copytree(prepared, outputs[name])
        run_config = corpus_config(corpus, *overrides)
        run_stages(spark, run_config, outputs[name], "train", "evaluate")
    # RCut and PCut act at prediction time only: predict again on copies of the LIBLINEAR run
    # (evaluate's predict step; the contingency tables and reports on top are tested elsewhere).
    for name, overrides in (("rcut", ["train.thresholding=rcut", "train.rcut_k=2"]),
                            ("pcut", ["train.thresholding=pcut"])):
        outputs[name] = str(base / name)
        shutil.copytree(outputs["svm"], outputs[name])
        # Without tune.fbr, which moves SCutFBR's thresholds only (refused with another thresholding).
        predict(spark, corpus_config(corpus, settings["svm"][1], *overrides), Tables(outputs[name], outputs[name]))
    train_ids, X_train, Y_train = vectors(str(prepared), "train")
    test_ids, X_test, Y_test = vectors(str(prepared), "test")
    return SimpleNamespace(
        X_train=X_train, Y_train=Y_train, X_test=X_test, Y_test=Y_test, test_ids=test_ids,
        order=chi2_order(prepared), manifests={name: Path(output, "manifests", "train.json")
                                                               for name, output in outputs.items()},
        **{name: read_run(output) for name, output in outputs.items()},
    )


# --- independent computations ----------------------------------------------------------------------


def cv_scut(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Mean of the folds' SCut thresholds; F1 with each fold at the mean of the other folds' thresholds."""
    folds = balanced_folds(y, FOLDS, SEED)
    per_fold = np.array([brute_force_scut(scores[folds == f], y[folds == f])[0] for f in range(FOLDS)])
    others = np.array([np.delete(per_fold, f).mean() for f in range(FOLDS)])
    return float(per_fold.mean()), f1_of(scores, y, others[folds])


def rocchio(X, y, beta: float = 16.0, gamma: float = 4.0) -> np.ndarray:
    dense = X.toarray()
    return beta * dense[y].mean(axis=0) - gamma * dense[~y].mean(axis=0)


def brute_force_knn(similarities: np.ndarray, Y_train: np.ndarray, k: int) -> np.ndarray:
    """Per query row: the k most similar training documents (ties to the lower row), similarities summed per
    category.
    """
    scores = np.zeros((similarities.shape[0], Y_train.shape[1]))
    for q, row in enumerate(similarities):
        nearest = sorted(range(len(row)), key=lambda j: (-row[j], j))[:k]
        for j in nearest:
            scores[q] += row[j] * Y_train[j]
    return scores


def linear_scores(runs, run) -> np.ndarray:
    W = np.column_stack([np.asarray(run.models[c].weights, dtype=np.float64) for c in CATEGORIES])
    return np.asarray(runs.X_test @ W) + np.array([run.models[c].bias for c in CATEGORIES])


# --- the tests ------------------------------------------------------------------------------------


def test_corpus_has_the_planned_training_counts(runs):
    assert runs.X_train.shape[0] == N_TRAIN and runs.X_test.shape[0] == N_TEST
    assert dict(zip(CATEGORIES, runs.Y_train.sum(axis=0).tolist())) == TRAIN_POSITIVES
    # unit rows: dot product = cosine
    assert np.allclose(np.sqrt(np.asarray(runs.X_train.multiply(runs.X_train).sum(axis=1))), 1.0)
    for run in (runs.rocchio, runs.knn, runs.svm):
        assert sorted(run.models) == CATEGORIES
        assert [run.models[c].train_positives for c in CATEGORIES] == list(TRAIN_POSITIVES.values())


def test_rocchio_weights_are_the_centroid_formula(runs):
    for j, c in enumerate(CATEGORIES):
        model = runs.rocchio.models[c]
        assert model.method == "rocchio"
        np.testing.assert_allclose(np.asarray(model.weights), rocchio(runs.X_train, runs.Y_train[:, j]),
                                   rtol=1e-9, atol=1e-12, err_msg=c)
        assert model.bias == 0.0


def rocchio_out_of_fold(runs, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The balanced folds of a category's labels ``y`` and each training document's Rocchio score from the model
    of the other folds, computed with numpy.
    """
    folds = balanced_folds(y, FOLDS, SEED)
    scores = np.empty(N_TRAIN)
    for f in range(FOLDS):
        held = folds == f
        scores[held] = runs.X_train[held] @ rocchio(runs.X_train[~held], y[~held])
    return folds, scores


def test_rocchio_thresholds_are_scut_over_exact_out_of_fold_scores(runs):
    for j, c in enumerate(CATEGORIES):
        y = runs.Y_train[:, j]
        _, scores = rocchio_out_of_fold(runs, y)
        threshold, cv_f1 = cv_scut(scores, y)
        model = runs.rocchio.models[c]
        assert model.threshold == pytest.approx(threshold, abs=1e-9), c
        assert model.cv_f1 == pytest.approx(cv_f1, abs=1e-12), c


def test_rocchio_proportional_thresholds_are_those_of_exact_out_of_fold_scores(runs):
    from test_proportional import cv_proportional

    run = runs.rocchio_proportional
    for j, c in enumerate(CATEGORIES):
        y = runs.Y_train[:, j]
        folds, scores = rocchio_out_of_fold(runs, y)
        expected, counts = cv_proportional(scores, y, folds, FOLDS)
        assert run.models[c].threshold == pytest.approx(expected, abs=1e-9), c
        assert run.models[c].cv_f1 == pytest.approx(f1_score(**counts, zero_division=1.0), abs=1e-12), c
    np.testing.assert_array_equal(run.P, linear_scores(runs, run) > run.thresholds)


def test_rocchio_predictions_are_the_scores_above_threshold(runs):
    scores = linear_scores(runs, runs.rocchio)
    assert [r.doc_id for r in runs.rocchio.predictions] == runs.test_ids
    np.testing.assert_array_equal(runs.rocchio.P, scores > runs.rocchio.thresholds)
    assert runs.rocchio.P.any() and not runs.rocchio.P.all()
    top = np.array([r.top_scores for r in runs.rocchio.predictions])
    np.testing.assert_allclose(top, -np.sort(-scores, axis=1), rtol=0, atol=1e-9)


def test_knn_top_scores_equal_a_brute_force_knn(runs):
    expected = brute_force_knn((runs.X_test @ runs.X_train.T).toarray(), runs.Y_train, KNN_K)
    got = np.array([r.top_scores for r in runs.knn.predictions])
    np.testing.assert_allclose(got, -np.sort(-expected, axis=1), rtol=0, atol=1e-12)
    for row, prediction in zip(expected, runs.knn.predictions):
        if len(np.unique(row)) == len(row):  # the ranking of the categories is unambiguous
            assert list(prediction.top_categories) == [CATEGORIES[j] for j in np.argsort(-row)]
    np.testing.assert_array_equal(runs.knn.P, expected > runs.knn.thresholds)
    assert runs.knn.P.any() and not runs.knn.P.all()
    assert all(not np.any(runs.knn.models[c].weights) for c in CATEGORIES)


def test_knn_thresholds_are_scut_over_leave_one_out_training_scores(runs):
    similarities = (runs.X_train @ runs.X_train.T).toarray()
    np.fill_diagonal(similarities, -np.inf)  # leave one out: a document is not its own neighbour
    loo = brute_force_knn(similarities, runs.Y_train, KNN_K)
    for j, c in enumerate(CATEGORIES):
        threshold, cv_f1 = cv_scut(loo[:, j], runs.Y_train[:, j])
        model = runs.knn.models[c]
        assert model.threshold == pytest.approx(threshold, abs=1e-9), c
        assert model.cv_f1 == pytest.approx(cv_f1, abs=1e-12), c
        choices = json.loads(model.choices)
        assert (choices["k"], choices["cv_f1"], choices["terms"], choices["searched"]) == (KNN_K, model.cv_f1, 0, [])


def _similarities(X_query, X_train, columns: np.ndarray) -> np.ndarray:
    """Cosine similarities over the selected terms, as sparse products of the renormalized selections
    (:func:`selected_space`, checked against numpy in test_knn): over few terms many documents tie, and the
    same products keep the ties exact so that the brute force breaks them as sparktc does.
    """
    return (selected_space(X_query, columns) @ selected_space(X_train, columns).T).toarray()


def test_knn_chooses_one_term_count_and_fbr_by_micro_f1_and_scores_the_renormalized_selection(runs):
    """The kNN method over the selected terms compares renormalized vectors; the term count and SCutFBR's fbr are
    one pair for all categories, the candidate whose leave-one-out SCutFBR decisions have the best micro-F1.
    """
    micro, thresholds = {}, {}
    for terms in KNN_TERMS:
        similarities = _similarities(runs.X_train, runs.X_train, np.sort(runs.order[:terms]))
        np.fill_diagonal(similarities, -np.inf)
        loo = brute_force_knn(similarities, runs.Y_train, KNN_K)
        for fbr in KNN_FBRS:
            tp = fp = fn = 0
            thresholds[terms, fbr] = []
            for j in range(len(CATEGORIES)):
                y = runs.Y_train[:, j]
                folds = balanced_folds(y, FOLDS, SEED)
                per_fold = []
                for f in range(FOLDS):  # SCutFBR: the fold's SCut, or its top score when its F1 is below fbr
                    t, f1 = brute_force_scut(loo[folds == f, j], y[folds == f])
                    per_fold.append(t if f1 >= fbr else loo[folds == f, j].max())
                per_fold = np.array(per_fold)
                decided = loo[:, j] > np.array([np.delete(per_fold, f).mean() for f in range(FOLDS)])[folds]
                tp, fp, fn = tp + (decided & y).sum(), fp + (decided & ~y).sum(), fn + (~decided & y).sum()
                thresholds[terms, fbr].append(per_fold.mean())
            micro[terms, fbr] = 2 * tp / (2 * tp + fp + fn)
    assert len(set(micro.values())) > 1  # the candidates differ: the choice means something
    chosen = max(micro, key=lambda pair: micro[pair])
    details = json.loads(runs.manifests["knn_selected"].read_text())["details"]
    assert (details["shared_terms"]["chosen"], details["shared_fbr"]["chosen"]) == chosen
    assert details["shared_terms"]["cv_micro_f1"] == pytest.approx(
        {f"{terms}/{fbr}": value for (terms, fbr), value in micro.items()})
    columns = np.sort(runs.order[:chosen[0]])
    expected = brute_force_knn(_similarities(runs.X_test, runs.X_train, columns), runs.Y_train, KNN_K)
    run = runs.knn_selected
    np.testing.assert_allclose(np.array([r.top_scores for r in run.predictions]),
                               -np.sort(-expected, axis=1)[:, :len(CATEGORIES)], atol=1e-9)
    np.testing.assert_array_equal(run.P, expected > run.thresholds)
    for j, c in enumerate(CATEGORIES):
        assert run.models[c].features == chosen[0]
        assert run.models[c].threshold == pytest.approx(thresholds[chosen][j], abs=1e-9), c


def test_rcut_predicts_exactly_the_two_top_scoring_categories(runs):
    scores = linear_scores(runs, runs.rcut)
    assert (runs.rcut.P.sum(axis=1) == 2).all()
    for row, predicted in zip(scores, runs.rcut.P):
        assert set(np.flatnonzero(predicted)) == set(np.argsort(-row, kind="stable")[:2])


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


def test_pcut_assigns_the_training_share_of_the_test_documents(runs):
    scores = linear_scores(runs, runs.pcut)
    assert (scores == linear_scores(runs, runs.svm)).all()  # the same models, thresholded differently
    wrong = {}
    for j, c in enumerate(CATEGORIES):
        wanted = round_half_up(TRAIN_POSITIVES[c] / N_TRAIN * N_TEST)
        assigned = runs.pcut.P[:, j]
        ranked = np.sort(scores[:, j])[::-1]
        distinct_at_cut = wanted in (0, N_TEST) or ranked[wanted - 1] > ranked[wanted]
        # Whatever is assigned is the top of the ranking.
        if assigned.any() and not assigned.all():
            assert scores[assigned, j].min() > scores[~assigned, j].max(), c
        if distinct_at_cut:
            if assigned.sum() != wanted:
                wrong[c] = (TRAIN_POSITIVES[c] / N_TRAIN * N_TEST, wanted, int(assigned.sum()))
        else:
            assert assigned.sum() <= wanted, c
    # category: (train_share * n_test, round half up, documents assigned). sparktc.models.thresholds.pcut_thresholds
    # and the evaluate stage's pcut_thresholds_of_documents both round half up (pcut_counts).
    assert wrong == {}
    share = np.array([TRAIN_POSITIVES[c] / N_TRAIN for c in CATEGORIES])
    np.testing.assert_array_equal(runs.pcut.P, scores > pcut_thresholds(scores, share))


def test_svm_scutfbr_records_its_choices_and_tunes_thresholds(runs):
    space = [(C, fbr) for C in (0.5, 2.0) for fbr in (0.1, 0.5)]
    for c in CATEGORIES:
        model = runs.svm.models[c]
        choices = json.loads(model.choices)
        assert {"solver", "C", "positive_weight", "terms", "fbr", "cv_f1", "searched"} <= set(choices)
        assert choices["cv_f1"] == model.cv_f1 and 0 < model.cv_f1 <= 1
        assert (choices["solver"], choices["C"], choices["positive_weight"]) == (model.solver, model.C,
                                                                                 model.positive_weight)
        assert [(s["C"], s["fbr"]) for s in choices["searched"]] == space
        f1s = [s["cv_f1"] for s in choices["searched"]]
        best = choices["searched"][int(np.argmax(f1s))]
        assert (choices["C"], choices["fbr"], choices["cv_f1"]) == (best["C"], best["fbr"], best["cv_f1"])
    assert any(runs.svm.models[c].threshold != 0 for c in CATEGORIES)
    scores = linear_scores(runs, runs.svm)
    np.testing.assert_array_equal(runs.svm.P, scores > runs.svm.thresholds)


def test_metrics_and_report_state_the_method_thresholding_and_search_space(runs):
    """The Rocchio + SCut run's records say Rocchio and SCut, never LIBLINEAR's solver nor a threshold of 0."""
    metrics = json.loads(Path(runs.rocchio.output, "metrics.json").read_text())
    assert metrics["method"] == {"name": "rocchio", "beta": 16.0, "gamma": 4.0}
    assert metrics["thresholding"] == {"name": "scut", "folds": FOLDS, "seed": SEED}
    assert metrics["search_space"] == {}
    report = Path(runs.rocchio.output, "report.md").read_text()
    settings = report[report.index("## Settings"):]
    assert ("- Method: `rocchio`, w = beta * mean(positives) - gamma * mean(negatives), beta `16.0`, gamma `4.0`"
            in settings)
    assert "- Thresholding: `scut`, per-category thresholds by SCut over `5`-fold cross-validation" in settings
    assert "- Search space ([tune]): none" in settings
    assert "Solver" not in report and "l2r_l2loss_svc_dual" not in report and "Decision threshold" not in report
    knn = json.loads(Path(runs.knn.output, "metrics.json").read_text())
    assert (knn["method"], knn["thresholding"]["name"]) == ({"name": "knn", "k": KNN_K}, "scut")
    svm = json.loads(Path(runs.svm.output, "metrics.json").read_text())
    assert svm["method"]["name"] == "liblinear" and svm["method"]["C"] == [0.5, 2.0]
    assert svm["thresholding"] == {"name": "scutfbr", "fbr": [0.1, 0.5], "folds": FOLDS, "seed": SEED}
    assert svm["search_space"] == {"C": [0.5, 2.0], "fbr": [0.1, 0.5], "folds": FOLDS, "seed": SEED}
    assert "- Search space ([tune], chosen per category by `5`-fold cross-validation, seed `0`): C `[0.5, 2.0]`, " \
        "fbr `[0.1, 0.5]`" in Path(runs.svm.output, "report.md").read_text()
