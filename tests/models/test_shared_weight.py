"""One positive weight (or one fbr) for all categories, chosen by cross-validated micro-F1 (LibMultiLabel's
shared choice).
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REPO
from test_methods import corpus_config, prepared_corpus, table_rows

from sparktc.apps.pipeline import run as run_stages
from sparktc.evaluation.metrics import f1_score
from sparktc.experiment.config import ConfigError, load_config
from sparktc.models.tuning import ZERO_DIVISION, pooled_micro_f1, shared_value


def row(weight: float, tp: int, fp: int, fn: int) -> dict:
    return {"positive_weight": weight, "tp": tp, "fp": fp, "fn": fn, "cv_f1": f1_score(tp, fp, fn, ZERO_DIVISION)}


def test_micro_f1_sums_counts_over_categories() -> None:
    # Category a prefers weight 1 on its own (F1 .8 vs .75), category b weight 3 (.5 vs .8);
    # summed: weight 1 -> 2*9/(18+2+5) = .72, weight 3 -> 2*10/(20+4+2) = .769.
    searched = [[row(1.0, 8, 2, 2), row(3.0, 9, 4, 2)],
                [row(1.0, 1, 0, 3), row(3.0, 1, 0, 0)]]
    chosen, micro = shared_value(searched, "positive_weight")
    assert chosen == 3.0
    assert micro == pytest.approx({1.0: 18 / 25, 3.0: 20 / 26})


def test_the_runs_cross_validated_micro_f1_sums_each_categorys_chosen_counts() -> None:
    choices = [{"cv_counts": {"tp": 8, "fp": 2, "fn": 2}}, {"cv_counts": {"tp": 1, "fp": 0, "fn": 3}},
               {"cv_counts": None}]  # a category not cross-validated adds nothing
    assert pooled_micro_f1(choices) == pytest.approx(2 * 9 / (18 + 2 + 5))
    assert pooled_micro_f1([{"cv_counts": None}]) is None


def test_macro_f1_as_the_objective_averages_the_categories_f1() -> None:
    # Weight 1: F1 .8 and 2/5 = .4 (mean .6); weight 3: .75 and 1.0 (mean .875), micro .72 / .769 as above.
    searched = [[row(1.0, 8, 2, 2), row(3.0, 9, 4, 2)],
                [row(1.0, 1, 0, 3), row(3.0, 1, 0, 0)]]
    chosen, macro = shared_value(searched, "positive_weight", "macro_f1")
    assert chosen == 3.0 and macro == pytest.approx({1.0: (0.8 + 2 / 5) / 2, 3.0: (18 / 24 + 1.0) / 2})
    # The objectives disagree: category a's F1 outweighs b's in micro-F1, not in macro-F1.
    searched = [[row(1.0, 80, 0, 20), row(3.0, 70, 0, 30)], [row(1.0, 0, 0, 2), row(3.0, 1, 0, 1)]]
    assert shared_value(searched, "positive_weight")[0] == 1.0
    assert shared_value(searched, "positive_weight", "macro_f1")[0] == 3.0


def test_ties_keep_the_first_weight() -> None:
    assert shared_value([[row(1.0, 1, 1, 1), row(2.0, 1, 1, 1)]], "positive_weight")[0] == 1.0


def test_shared_weight_needs_a_weight_list_and_nothing_else_searched() -> None:
    base = ["corpus.format=reuters21578", f"corpus.path={REPO}", "tune.liblinear.shared_positive_weight=true"]
    with pytest.raises(ConfigError, match="needs tune.liblinear.positive_weight"):
        load_config(None, base)
    with pytest.raises(ConfigError, match="at most one value in tune.liblinear.C"):
        load_config(None, [*base, "tune.liblinear.positive_weight=[1, 2]", "tune.liblinear.C=[1, 2]"])
    assert load_config(None, [*base, "tune.liblinear.positive_weight=[1, 2]"]).tune.liblinear.shared_positive_weight


def test_one_fbr_for_all_categories_is_chosen_the_same_way() -> None:
    searched = [[{**row(1.0, 8, 2, 2), "fbr": 0.0}, {**row(1.0, 7, 0, 3), "fbr": 0.3}],
                [{**row(1.0, 1, 9, 0), "fbr": 0.0}, {**row(1.0, 0, 0, 1), "fbr": 0.3}]]
    chosen, micro = shared_value(searched, "fbr")
    assert chosen == 0.3  # 2*7/(14+0+4) = .778 against 2*9/(18+11+2) = .581
    assert micro == pytest.approx({0.0: 18 / 31, 0.3: 14 / 18})


def test_shared_fbr_needs_an_fbr_list_scutfbr_and_nothing_else_searched() -> None:
    base = ["corpus.format=reuters21578", f"corpus.path={REPO}", "tune.shared_fbr=true"]
    with pytest.raises(ConfigError, match="needs tune.fbr"):
        load_config(None, [*base, "train.thresholding=scutfbr"])
    with pytest.raises(ConfigError, match="at most one value in tune.liblinear.C, tune.liblinear.solver, "
                                          "tune.liblinear.positive_weight"):
        load_config(None, [*base, "train.thresholding=scutfbr", "tune.fbr=[0, 0.1]", "tune.terms=[10, 20]"])
    with pytest.raises(ConfigError, match="train.thresholding = 'scut'"):
        load_config(None, [*base, "train.thresholding=scut", "tune.fbr=[0, 0.1]"])
    with pytest.raises(ConfigError, match="tune.shared_fbr = True: not used by train.method = 'llsf'"):
        load_config(None, [*base, "train.thresholding=scutfbr", "tune.fbr=[0, 0.1]", "train.method=llsf"])
    with pytest.raises(ConfigError, match="train.nb.model = 'mixture': one model for all categories"):
        load_config(None, [*base, "train.thresholding=scutfbr", "tune.fbr=[0, 0.1]", "train.method=nb"])
    config = load_config(None, [*base, "train.thresholding=scutfbr", "tune.fbr=[0, 0.1]", "train.method=nb",
                                "train.nb.model=binary"])
    assert config.tune.shared_fbr


@pytest.mark.parametrize(("setting", "values", "column"), [
    ("positive_weight", [1.0, 4.0], "positive_weight"), ("C", [0.25, 4.0], "C"), ("terms", [20, 60], "features")])
def test_a_shared_setting_trains_every_category_with_the_value_chosen_by_micro_f1(spark, tmp_path_factory, setting,
                                                                                   values, column):
    """Through the train stage on tests/models/test_methods.py's prepared corpus: the first pass's cross-validated
    counts choose one value (the best micro-F1 of the manifest's, first on ties), and every category's model is
    trained with it.
    """
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)
    output = tmp_path_factory.mktemp(f"shared_{setting}") / "run"
    shutil.copytree(prepared, output)
    table = "tune." if setting == "terms" else "tune.liblinear."  # C and positive_weight are LIBLINEAR's
    run_stages(spark, corpus_config(corpus, f"{table}{setting}={values}", f"{table}shared_{setting}=true"),
               str(output), "train", "evaluate")
    shared = json.loads((output / "manifests" / "train.json").read_text())["details"][f"shared_{setting}"]
    micro = {float(value): f1 for value, f1 in shared["cv_micro_f1"].items()}
    assert list(micro) == values and shared["chosen"] == max(micro, key=lambda v: (micro[v], -values.index(v)))
    chosen = {getattr(row, column) for row in table_rows(output / "models")}
    assert chosen == {shared["chosen"]}
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["search_space"][f"shared_{setting}"] is True


@pytest.mark.parametrize(("overrides", "message"), [
    (["tune.liblinear.shared_C=true"], "tune.liblinear.shared_C = true needs tune.liblinear.C = [...] and at most one "
     "value in tune.liblinear.solver, tune.liblinear.positive_weight, tune.terms, tune.fbr"),
    (["tune.liblinear.C=[1, 2]", "tune.liblinear.shared_C=true", "tune.terms=[10, 0]", "tune.shared_terms=true"],
     "tune.liblinear.shared_C = true needs tune.liblinear.C = [...] and at most one value in"),
    (["tune.liblinear.C=[2]", "tune.liblinear.shared_C=true", "tune.shared_fbr=true", "tune.fbr=[0.1]",
      "train.thresholding=scutfbr"],
     "tune.shared_fbr and tune.liblinear.shared_C: share one setting, not both"),
    (["train.method=llsf", "tune.terms=[600, 0]", "tune.shared_terms=true"],
     "tune.shared_terms = true with train.method = 'llsf': one model for all categories always chooses one term "
     "count for all; remove it"),
    (["tune.shared_C=true"], "tune.shared_C is now tune.liblinear.shared_C: write [tune.liblinear] shared_C = true "
     "or --set tune.liblinear.shared_C=true"),
])
def test_one_c_or_term_count_for_all_needs_its_list_alone_and_a_method_that_uses_it(overrides, message) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, ["corpus.format=reuters21578", f"corpus.path={REPO}", *overrides])
    assert message in str(error.value)


def test_liblinears_shared_c_is_kept_and_shares_nothing_under_another_method() -> None:
    """[tune.liblinear] is LIBLINEAR's table: under Rocchio it is kept (one file may hold both methods' settings), and
    Rocchio's run searches and shares nothing of it.
    """
    config = load_config(None, ["corpus.format=reuters21578", f"corpus.path={REPO}", "train.method=rocchio",
                                "tune.liblinear.C=[1, 2]", "tune.liblinear.shared_C=true"])
    assert config.tune.liblinear.shared_C and config.tune.liblinear.C == [1.0, 2.0]
    lists = config.tune.lists("rocchio")
    assert not hasattr(lists, "C") and not hasattr(lists, "shared_C")
