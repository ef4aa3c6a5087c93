"""micromacro over a fold file, end to end through the train and evaluate stages on tests/models/test_methods.py's
prepared corpus: the stored thresholds are LibMultiLabel's loop (transcribed in test_micromacro.py) over out-of-fold
scores computed here, with LIBLINEAR directly, over the folds the file gives.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from test_methods import CATEGORIES, corpus_config, prepared_corpus, read_run, vectors
from test_micromacro import transcribed_label

from sparktc.apps.pipeline import run as run_stages
from sparktc.errors import InputError
from sparktc.models.linear import BinaryProblems

FOLDS = 3


def prepared_run(spark, tmp_path_factory, name: str):
    """A copy of the prepared corpus (up to rank) to train in: the corpus, the directory holding the copy ``run``,
    that run and the training documents' ids, X and Y.
    """
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    base = tmp_path_factory.mktemp(name)
    output = base / "run"
    shutil.copytree(prepared, output)
    return corpus, base, output, *vectors(str(prepared), "train")


@pytest.mark.spark
def test_micromacro_over_a_fold_file_sets_libmultilabels_thresholds(spark, tmp_path_factory) -> None:
    corpus, base, output, doc_ids, X, Y = prepared_run(spark, tmp_path_factory, "micromacro")
    rng = np.random.default_rng(7)
    folds = {category: rng.permutation(np.arange(len(doc_ids)) % FOLDS) for category in CATEGORIES}
    order = rng.permutation(len(doc_ids))  # the file's lines in any order
    fold_file = base / "folds.tsv"
    fold_file.write_text("doc_id\t" + "\t".join(CATEGORIES) + "\n" + "".join(
        f"{doc_ids[i]}\t" + "\t".join(str(folds[c][i]) for c in CATEGORIES) + "\n" for i in order))
    run_stages(spark, corpus_config(corpus, "train.thresholding=micromacro", f"train.folds={FOLDS}",
                                    f"train.fold_file={fold_file}"), str(output), "train", "evaluate")

    positives = Y.sum(axis=0)
    visited = [CATEGORIES[j] for j in np.flip(np.argsort(positives))]  # CATEGORIES is in string order
    stats = {"tp": 0, "fp": 0, "fn": 0, "labels": 0}
    expected = {}
    for category in visited:
        y, fold = Y[:, CATEGORIES.index(category)], folds[category]
        scores = np.empty(len(y))
        for f in range(FOLDS):
            held = fold == f
            w, b = BinaryProblems(X[~held], 1.0).train(y[~held], "l2r_l2loss_svc_dual", C=1.0, epsilon=0.0001)
            scores[held] = X[held] @ w + b
        expected[category] = transcribed_label(scores, y, fold, FOLDS, stats)
    run = read_run(str(output))
    assert {c: run.models[c].threshold for c in CATEGORIES} == pytest.approx(expected, rel=1e-9, abs=1e-12)
    details = json.loads((output / "manifests" / "train.json").read_text())["details"]
    assert details["visiting_order"] == visited
    assert 0 < details["cv_micro_f1"] <= 1
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["thresholding"]["fold_file"] == str(fold_file)


@pytest.mark.spark
def test_a_fold_file_missing_training_documents_is_refused_naming_them(spark, tmp_path_factory) -> None:
    corpus, base, output, doc_ids, _, _ = prepared_run(spark, tmp_path_factory, "fold_file_missing")
    fold_file = base / "folds.tsv"
    fold_file.write_text("doc_id\t*\n" + "".join(f"{d}\t{i % 2}\n" for i, d in enumerate(doc_ids[1:])))
    with pytest.raises(InputError, match=f"^train.fold_file has no fold for 1 of the {len(doc_ids)} training "
                                        f"documents: {doc_ids[0]}"):
        run_stages(spark, corpus_config(corpus, "train.thresholding=scutfbr", "train.folds=2",
                                        f"train.fold_file={fold_file}"), str(output), "train")
