r"""A calibrated blend of LIBLINEAR and kNN scores, measured on a finished run's tables (no Spark).

    .venv/bin/python -m benchmarks.svm_knn_blend --run RUN --config conf/reuters21578.toml \
        [--set train.thresholding=scutfbr ...] [--knn-k 45] [--knn-terms 2415] [--output DIR]

RUN is the output of ``jobs/pipeline.py`` with that configuration (its ``vectors``, ``term_ranks`` and
``categories``). Per category with training positives, on the training documents only:

* LIBLINEAR's out-of-fold decision values over the thresholding's folds (balanced for positives, as
  :func:`sparktc.models.tuning.fit_category` makes them), with the [train] solver, C and bias;
* kNN's leave-one-out scores (the summed cosine similarities of the k nearest other training documents with the
  category, over the ``--knn-terms`` best-ranked terms, as the train stage's kNN);
* each member's Platt sigmoid and, per mixing weight alpha, the SCut/SCutFBR threshold of the blend of their
  log-odds alpha l_svm + (1 - alpha) l_knn (``--scale probability``: of their probabilities) and its cross-validated
  counts (:func:`sparktc.models.calibration.blend_candidates`).

One alpha for all categories is the one of best cross-validated micro-F1 (first on ties). The test documents are
then scored by the models of all training documents, calibrated and blended the same way. Each member alone,
thresholded on its raw scores as the pipeline does, is measured too (it reproduces the pipeline's figures), and
every alpha's test figures are shown for analysis, never to choose by.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sparktc.evaluation.metrics import macro_average, micro_average
from sparktc.experiment.config import Config, load_config
from sparktc.experiment.tables import term_order
from sparktc.features.matrix import TrainingSet, load_training_set
from sparktc.features.term_selection import top_terms
from sparktc.models.calibration import LOG_ODDS, SCALES, BlendedCategory, blend_candidates
from sparktc.models.decision import DecisionRule
from sparktc.models.knn import knn_scores_from_neighbours, knn_topk, selected_space
from sparktc.models.thresholds import balanced_folds
from sparktc.models.tuning import ZERO_DIVISION, Candidate, candidates, pooled_micro_f1, shared_value
from sparktc.runtime.markdown import markdown_table
from sparktc.runtime.parts import read_small

ALPHAS = tuple(round(0.1 * step, 1) for step in range(11))


def liblinear_scores(rule: DecisionRule, candidate: Candidate, train: TrainingSet, test: TrainingSet, codes: list[str],
                     folds: list[NDArray[np.int64]]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Training documents x categories out-of-fold decision values, and the test documents' from each category's
    model of all training documents (every term), of LIBLINEAR's ``candidate``.
    """
    trainer = rule.spec.fitting(rule.parameters, 0).trainer
    full = trainer(rule.parameters, train.X, (train.X, None))
    out_of_fold, on_test = np.zeros((train.X.shape[0], len(codes))), np.zeros((test.X.shape[0], len(codes)))
    for j, code in enumerate(codes):
        y = train.positives(code)
        for fold in range(rule.folds):
            held = folds[j] == fold
            w, b = trainer(rule.parameters, train.X[~held], None)(y[~held], candidate)
            out_of_fold[held, j] = train.X[held] @ w + b
        w, b = full(y, candidate)
        on_test[:, j] = test.X @ w + b
    return out_of_fold, on_test


def knn_scores(train: TrainingSet, test: TrainingSet, labels: NDArray[np.bool_], order: NDArray[np.int64], k: int,
               terms: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The kNN member's leave-one-out training scores and the test documents' scores, over the ``terms`` best terms."""
    columns = top_terms(order, terms)
    space = selected_space(train.X, columns)
    loo = knn_topk(space, space, k, exclude_self=np.arange(space.shape[0]))
    tested = knn_topk(selected_space(test.X, columns), space, k)
    return knn_scores_from_neighbours(*loo, labels), knn_scores_from_neighbours(*tested, labels)


def decision_figures(decided: NDArray[np.bool_], truth: NDArray[np.bool_]) -> dict[str, float]:
    """Micro- and macro-F1 of test decisions (documents x categories), 0/0 counted as ``ZERO_DIVISION``."""
    tp = (decided & truth).sum(axis=0)
    fp, fn = (decided & ~truth).sum(axis=0), (~decided & truth).sum(axis=0)
    tn = len(truth) - tp - fp - fn
    return {"micro_f1": micro_average(tp, fp, fn, tn, ZERO_DIVISION)["f1"],
            "macro_f1": macro_average(tp, fp, fn, tn, ZERO_DIVISION)["f1"]}


def member_alone(rule: DecisionRule, train_scores: NDArray[np.float64], test_scores: NDArray[np.float64],
                 labels: NDArray[np.bool_], truth: NDArray[np.bool_], folds: list[NDArray[np.int64]]) -> dict:
    """One member thresholded on its raw scores as the pipeline does: cross-validated micro-F1 and test figures."""
    chosen, decided = [], np.zeros(truth.shape, dtype=np.bool_)
    for j in range(labels.shape[1]):
        threshold, counted = rule.learned_threshold(train_scores[:, j], labels[:, j], folds[j], rule.fbr)
        chosen.append({"cv_counts": counted})
        decided[:, j] = test_scores[:, j] > threshold
    return {"cv_micro_f1": pooled_micro_f1(chosen), **decision_figures(decided, truth)}


def blended_test(blends: list[BlendedCategory], svm_test: NDArray[np.float64], knn_test: NDArray[np.float64],
                 alpha: float) -> NDArray[np.bool_]:
    """The test decisions of the blend at ``alpha``: each category's blended score above its threshold."""
    return np.column_stack([blended.scores(svm_test[:, j], knn_test[:, j], alpha) > blended.row(alpha)["threshold"]
                            for j, blended in enumerate(blends)])


def measure(run: Path, config: Config, knn_k: int, knn_terms: int, alphas: Sequence[float] = ALPHAS,
            scale: str = LOG_ODDS) -> dict[str, Any]:
    """Each member alone and the blend at every alpha of ``alphas`` on the run's tables under ``config``'s decision
    rule (module docstring): cross-validated micro-F1 and test micro- and macro-F1, and the alpha chosen.
    """
    began = time.perf_counter()
    rule = config.train.decision_rule()
    if not rule.cross_validated:
        raise ValueError("the blend's thresholds are cross-validated: give train.thresholding = scut or scutfbr")
    space = candidates(rule, config.tune.lists(config.train.method), 0)
    if set(rule.spec.searched) != {"solver", "C", "positive_weight"} or len(space) != 1:
        raise ValueError("the first member is one LIBLINEAR model: train.method = liblinear and empty [tune] lists")
    n_terms = read_small(str(run / "vocabulary"), ["term_id"]).num_rows
    categories = read_small(str(run / "categories"), ["category", "train_positives"]).to_pandas()
    codes = sorted(categories.loc[categories["train_positives"] > 0, "category"])
    train = load_training_set(str(run / "vectors" / "split=train"), n_terms)
    test = load_training_set(str(run / "vectors" / "split=test"), n_terms)
    labels = np.column_stack([train.positives(code) for code in codes])
    truth = np.column_stack([test.positives(code) for code in codes])
    folds = [balanced_folds(labels[:, j], rule.folds, rule.seed) for j in range(len(codes))]

    svm_train, svm_test = liblinear_scores(rule, space[0], train, test, codes, folds)
    knn_train, knn_test = knn_scores(train, test, labels, term_order(str(run / "term_ranks"), config), knn_k,
                                     knn_terms)
    blends = [blend_candidates(svm_train[:, j], knn_train[:, j], labels[:, j], folds[j], alphas, rule, rule.fbr,
                               scale) for j in range(len(codes))]
    alpha, micro = shared_value([blended.searched for blended in blends], "alpha")
    return {
        "knn_k": knn_k, "knn_terms": knn_terms, "scale": scale,
        "liblinear_alone": member_alone(rule, svm_train, svm_test, labels, truth, folds),
        "knn_alone": member_alone(rule, knn_train, knn_test, labels, truth, folds),
        "chosen_alpha": alpha,
        "per_alpha": {a: {"cv_micro_f1": micro[a], **decision_figures(blended_test(blends, svm_test, knn_test, a),
                                                                       truth)} for a in alphas},
        "training_documents": int(train.X.shape[0]), "test_documents": int(test.X.shape[0]),
        "categories": len(codes), "seconds": round(time.perf_counter() - began, 1),
    }


def render(result: dict[str, Any]) -> str:
    """The measured rows as a markdown table, the chosen alpha marked."""
    rows = [("LIBLINEAR alone", result["liblinear_alone"]), (f"kNN alone (k = {result['knn_k']})", result["knn_alone"])]
    scale = result["scale"].replace("_", "-")
    rows += [(f"blend of {scale}, alpha = {a}{' (chosen)' if a == result['chosen_alpha'] else ''}", figures)
             for a, figures in result["per_alpha"].items()]
    return markdown_table(["candidate", "cross-validated micro-F1", "test micro-F1", "test macro-F1"],
                          [[name, f"{figures['cv_micro_f1']:.4f}", f"{figures['micro_f1']:.4f}",
                            f"{figures['macro_f1']:.4f}"] for name, figures in rows])


def main() -> None:
    """Measure the blend (module docstring), print its table and write it as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, help="a finished jobs/pipeline.py output directory")
    parser.add_argument("--config", required=True)
    parser.add_argument("--set", action="append", default=[], dest="overrides", metavar="KEY=VALUE")
    parser.add_argument("--knn-k", type=int, default=45, help="kNN's k (Yang & Liu's 45)")
    parser.add_argument("--knn-terms", type=int, default=2415,
                        help="kNN's term count (2,415: chosen by the yang_liu1999.knn preset's cross-validation)")
    parser.add_argument("--scale", choices=SCALES, default=LOG_ODDS,
                        help="mix the members' calibrated log-odds (default) or probabilities")
    parser.add_argument("--output", help="write blend.json here")
    args = parser.parse_args()
    try:
        result = measure(Path(args.run), load_config(args.config, args.overrides), args.knn_k, args.knn_terms,
                         scale=args.scale)
    except ValueError as error:
        parser.error(str(error))
    print(render(result))
    print(f"{result['seconds']} s; alpha {result['chosen_alpha']} chosen by cross-validated micro-F1")
    if args.output:
        Path(args.output).mkdir(parents=True, exist_ok=True)
        record = {"run": args.run, "config": args.config, "overrides": args.overrides, **result,
                  "per_alpha": {str(a): figures for a, figures in result["per_alpha"].items()}}
        (Path(args.output) / "blend.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
