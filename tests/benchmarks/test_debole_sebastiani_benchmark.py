"""The Debole & Sebastiani 2005 rerun (benchmarks/debole_sebastiani_2005.py) without Spark: the 48 setups, their
configurations, the published tables against the paper's text, Tables 3-4 from per-setup results, the markdown.
"""

from __future__ import annotations

import re
import statistics

import pytest
from conftest import REPO

from benchmarks.debole_sebastiani_2005 import (
    FUNCTIONS,
    INCONSISTENT_TABLE_4,
    LEARNERS,
    PUBLISHED_TABLE_3,
    PUBLISHED_TABLE_4,
    SUBSETS,
    TABLE_4_SLACK,
    build_record,
    corpus_overrides,
    learner_means,
    pipeline_command,
    render,
    setup_overrides,
    setups,
    table_3,
    table_4,
)
from sparktc.experiment.config import load_config


def paper() -> str:
    found = sorted((REPO.parent / "shared" / "seeds").glob("002_*.txt"))
    if not found:
        pytest.fail("Debole & Sebastiani 2005 not found in ../shared/seeds (clone the project beside ../shared)")
    return found[0].read_text()


def test_the_grid_is_debole_and_sebastianis_48_setups():
    grid = setups()
    assert len(grid) == 48 and len(set(grid)) == 48
    for learner in LEARNERS:
        mine = [s for s in grid if s.learner == learner]
        assert len(mine) == 16
        # tf-idf: 3 functions x 2 reductions + no selection; supervised: 3 functions x 3 reductions.
        assert sum(s.weighting == "tfidf" for s in mine) == 7
        assert {(s.function, s.reduction) for s in mine if s.weighting == "supervised"} == {
            (f, xi) for f in FUNCTIONS for xi in (0.9, 0.5, 0.0)}
    assert len({s.name for s in grid}) == 48


def test_every_setup_is_a_valid_configuration_of_what_the_paper_ran(tmp_path):
    corpus = str(REPO.parent / "shared" / "data" / "reuters21578")
    for setup in setups():
        config = load_config(str(REPO / "conf" / "reuters21578.toml"), setup_overrides(corpus, "R(90)", setup))
        assert (config.corpus.category_set, config.corpus.document_filter) == ("R90", "none")
        assert config.weight.scheme == setup.weighting
        assert (config.rank.score, config.rank.global_score) == (setup.function or "chi2", "max")
        assert config.select.reduction_factor == setup.reduction
        if setup.learner == "svm":
            assert (config.train.method, config.train.liblinear.solver, config.train.liblinear.C,
                    config.train.thresholding, config.train.threshold) == ("liblinear", "l2r_l1loss_svc_dual", 1.0,
                                                                           "fixed", 0.0)
        else:
            assert config.train.thresholding == "proportional"
            assert (config.train.rocchio.beta, config.train.rocchio.gamma) == (16.0, 4.0) \
                if setup.learner == "rocchio" else config.train.knn.k == 30
        assert pipeline_command("R(90)", setup).startswith("./spark-submit.sh jobs/pipeline.py")
    # The corpus stages a supervised setup trains on are its function's.
    assert "rank.score=ig" in corpus_overrides(corpus, "R(10)", "supervised", "ig")


def test_the_validation_set_is_held_out_for_the_tuned_learners_only():
    corpus = str(REPO.parent / "shared" / "data" / "reuters21578")
    for setup in setups():
        config = load_config(str(REPO / "conf" / "reuters21578.toml"),
                             setup_overrides(corpus, "R(10)", setup, 0.2, 3))
        tuned = setup.learner != "svm"  # SVM keeps its threshold 0: nothing to set on Va
        assert (config.train.validation, config.train.seed) == ((0.2, 3) if tuned else (0.0, 0))
        assert ("--set train.validation=0.2 --set train.seed=3" in pipeline_command("R(10)", setup, 0.2, 3)) == tuned
        assert setup_overrides(corpus, "R(10)", setup) == setup_overrides(corpus, "R(10)", setup, 0.0, 3)


def test_published_table_3_is_the_papers():
    text = paper()
    for subset, values in PUBLISHED_TABLE_3.items():
        line = re.search(rf"^{re.escape(subset)}\t(.*)$", text, re.M).group(1)
        assert [float(v) for v in line.split("\t")] == [values[k] for k in
                                                         ("micro_mean", "micro_sd", "macro_mean", "macro_sd")]
    # Table 4's headline entries, as the text quotes them.
    assert "$-53.1\\%$" in text and "$-7.6\\%$" in text and "$-0.3\\%$" in text and "$+5.5\\%$" in text


def test_table_4_is_table_3_put_through_the_formula_except_three_printed_entries():
    ours = table_4(PUBLISHED_TABLE_3)
    for measure, entries in PUBLISHED_TABLE_4.items():
        for (row, column), printed in entries.items():
            close = abs(ours[measure][(row, column)] - printed) <= TABLE_4_SLACK
            assert close == ((measure, row, column) not in INCONSISTENT_TABLE_4), (measure, row, column)
    assert ours["macro"][("R(10)", "R(90)")] == pytest.approx(100 * (.715 - .468) / .468)


def results_of(values: dict[str, list[tuple[float, float]]]) -> list[dict]:
    """Per subset, one (micro, macro) per setup of the grid, in order."""
    rows = []
    for subset, pairs in values.items():
        for setup, (micro, macro) in zip(setups(), pairs):
            rows.append({"subset": subset, "setup": setup.name, **setup._asdict(), "micro_f1": micro,
                         "macro_f1": macro})
    return rows


def test_tables_3_and_4_from_the_setups_and_the_markdown():
    values = {subset: [(0.7 + 0.004 * i + 0.01 * k, 0.4 + 0.007 * i - 0.02 * k) for i in range(48)]
              for k, subset in enumerate(SUBSETS)}
    results = results_of(values)
    means = table_3(results)
    for subset, pairs in values.items():
        micro = [p[0] for p in pairs]
        assert means[subset]["setups"] == 48
        assert means[subset]["micro_mean"] == pytest.approx(sum(micro) / 48)
        assert means[subset]["micro_sd"] == pytest.approx(statistics.stdev(micro))
    hardness = table_4(means)
    assert hardness["micro"][("R(10)", "R(115)")] == pytest.approx(
        100 * (means["R(10)"]["micro_mean"] - means["R(115)"]["micro_mean"]) / means["R(115)"]["micro_mean"])
    figure_7 = learner_means(results)
    svm = [r["micro_f1"] for r in results if r["learner"] == "svm" and r["subset"] == "R(90)"]
    assert figure_7["micro"]["svm"]["R(90)"] == pytest.approx(sum(svm) / 16)
    record = build_record(results, corpus="CORPUS", command="COMMAND", corpus_runs=12, train_documents=9603,
                          test_documents=3299, machine="2 cores", example_commands=["EXAMPLE"],
                          cost={"wall_seconds": 100.0, "cpu_seconds": 150.0, "peak_rss_mb": 2000.0,
                                "peak_rss_mb_by_role": {"jvm": 1000.0}})
    text = render(record)
    assert "| R(90) | 48 | " in text
    assert f"{means['R(90)']['micro_mean']:.3f} | 0.787 |" in text
    assert "144 train+evaluate runs" in text and "9,603 training" in text
    assert text.count("![Figure") == 7
