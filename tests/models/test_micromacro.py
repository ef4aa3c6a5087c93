"""LibMultiLabel's micromacro-freq thresholding (sparktc.models.micromacro) against a direct transcription of
LibMultiLabel 0.10.0's ``_micromacro_one_label`` loop (linear.py; libmultilabel itself is not in the project's
environment): one cut at a time, ``obj >= best_obj``, the midpoint or nextafter at the ends, the mean over folds.
"""

from __future__ import annotations

import numpy as np
import pytest

from sparktc.models.micromacro import Totals, fold_cut, label_order, micromacro_thresholds, visiting_order


def transcribed_label(scores: np.ndarray, y: np.ndarray, fold: np.ndarray, folds: int, stats: dict) -> float:
    """LibMultiLabel's per-label loop, line by line, over given folds (its ``perm`` cut into thirds, here ``fold``);
    updates ``stats`` as it does and returns the mean of the fold thresholds.
    """
    thresholds = np.zeros(folds)
    tp_sum = fp_sum = fn_sum = 0
    stats["labels"] += 1

    def micro_plus_macro(tp, fp, fn):
        macro = np.nan_to_num((2 * tp) / (2 * tp + fp + fn)) / stats["labels"]
        micro = np.nan_to_num((2 * (tp + stats["tp"])) / (2 * (tp + stats["tp"]) + fp + fn + stats["fp"]
                                                         + stats["fn"]))
        return micro + macro

    signed = np.where(y, 1, -1)
    for f in range(folds):
        val_idx = np.flatnonzero(fold == f)
        wTx = scores[val_idx]
        sorted_wTx_index = np.argsort(wTx, kind="stable")
        sorted_wTx = wTx[sorted_wTx_index]
        prev = np.seterr("ignore")
        tp = np.sum(signed[val_idx] == 1)
        fp = val_idx.size - tp
        fn = 0
        best_obj = micro_plus_macro(tp, fp, fn)
        best_tp, best_fp, best_fn = tp, fp, fn
        cut = -1
        y_val = signed[val_idx]
        for i in range(val_idx.size):
            if y_val[sorted_wTx_index[i]] == -1:
                fp -= 1
            else:
                tp -= 1
                fn += 1
            obj = micro_plus_macro(tp, fp, fn)
            if obj >= best_obj:
                best_obj = obj
                best_tp, best_fp, best_fn = tp, fp, fn
                cut = i
        np.seterr(**prev)
        if cut == -1:
            thresholds[f] = np.nextafter(sorted_wTx[0], -np.inf)
        elif cut == val_idx.size - 1:
            thresholds[f] = np.nextafter(sorted_wTx[-1], np.inf)
        else:
            thresholds[f] = (sorted_wTx[cut] + sorted_wTx[cut + 1]) / 2
        tp_sum += best_tp
        fp_sum += best_fp
        fn_sum += best_fn
    stats["tp"] += tp_sum
    stats["fp"] += fp_sum
    stats["fn"] += fn_sum
    return thresholds.mean()


def random_labels(seed: int, n_labels: int, n_docs: int, folds: int, rounded: bool):
    rng = np.random.default_rng(seed)
    labels = []
    for j in range(n_labels):
        scores = rng.normal(size=n_docs) - 1
        if rounded:  # ties between validation scores
            scores = np.round(scores, 1)
        y = rng.random(n_docs) < rng.choice([0.0, 0.02, 0.1, 0.4])
        if j == 0:
            y[:] = False  # a label without positives
        y = y | (scores > 1.2) & (rng.random(n_docs) < 0.7)
        labels.append((scores, y, rng.permutation(np.arange(n_docs) % folds)))
    return labels


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rounded", [False, True])
def test_thresholds_equal_libmultilabels_loop(seed, rounded) -> None:
    folds = 3
    labels = random_labels(seed, 12, 40 + 17 * seed, folds, rounded)
    stats = {"tp": 0, "fp": 0, "fn": 0, "labels": 0}
    expected = [transcribed_label(scores, y, fold, folds, stats) for scores, y, fold in labels]
    found = micromacro_thresholds(labels, folds)
    assert [threshold for threshold, _ in found] == expected  # exactly: the same arithmetic
    for threshold, per_fold in found:
        assert threshold == per_fold.mean() and len(per_fold) == folds


def test_one_fold_by_hand() -> None:
    # Scores 1 < 2 < 3 < 4, labels -, +, -, +; no label visited before (micro = the label's own F1, macro = F1 / 1).
    # Cuts: all assigned F1 = 4/6; after 1: 4/5; after 2: 2/4; after 3: 2/3; none: 0. Best: after the first score.
    threshold, counts = fold_cut([3.0, 1.0, 4.0, 2.0], [False, False, True, True], Totals(labels=1))
    assert threshold == 1.5 and counts == (2, 1, 0)
    # Scores 1 < 2 < 3 < 4, labels +, -, -, +. Alone: all assigned 4/6 + 4/6 = 1.333, after 1: .8, after 2: 1.0,
    # after 3: 2/3 + 2/3 = 1.333, a tie, to the later cut: threshold 3.5. With 100 FN before (2 labels visited):
    # all assigned 4/106 + (4/6)/2 = .371 beats after 3: 2/103 + (2/3)/2 = .353, so everything is assigned.
    threshold, counts = fold_cut([1.0, 2.0, 3.0, 4.0], [True, False, False, True], Totals(labels=1))
    assert threshold == 3.5 and counts == (1, 0, 1)
    threshold, counts = fold_cut([1.0, 2.0, 3.0, 4.0], [True, False, False, True], Totals(0, 0, 100, 2))
    assert threshold == np.nextafter(1.0, -np.inf) and counts == (2, 2, 0)
    threshold, counts = fold_cut([3.0, 1.0, 4.0, 2.0], [False, False, False, False], Totals(5, 0, 0, 2))
    assert threshold == np.nextafter(4.0, np.inf) and counts == (0, 0, 0)  # no positive: assign none


def test_visiting_order_is_libmultilabels_expression() -> None:
    positives = np.array([3, 10, 3, 0, 7, 10, 3])
    assert visiting_order(positives).tolist() == np.flip(np.argsort(positives)).tolist()
    assert sorted(positives[visiting_order(positives)].tolist(), reverse=True) == \
        positives[visiting_order(positives)].tolist()


def test_label_order_is_numeric_for_integer_labels() -> None:
    assert label_order(["10", "9", "100", "0"]) == ["0", "9", "10", "100"]
    assert label_order(["GCAT", "C15", "E21"]) == ["C15", "E21", "GCAT"]
    assert label_order(["10", "9", "x"]) == ["10", "9", "x"]
