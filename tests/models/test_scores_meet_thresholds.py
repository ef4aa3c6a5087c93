"""Each method's scores meet its thresholds, and the settings meet the data.

* Spark-free: every method's declared score range and natural fixed threshold
  (:func:`sparktc.models.decision.score_range`) against scores the method really gives; a fixed threshold
  outside the range (the naive Bayes mixture's default 0 among them) refused before Spark starts, naming the
  working alternative, for every method; :func:`sparktc.evaluation.training_decisions.training_decisions` and
  its sentences; :func:`sparktc.experiment.config.check_against_data` (folds against the training documents, RCut's
  k against the categories).
* Through Spark, on one tiny JSON Lines corpus: more folds than training documents refused as a configuration
  error naming ``train.folds`` right after ingest, before tokenize runs; a liblinear threshold above every
  decision value (accepted: its scores are unbounded) reported as a degenerate model on stderr, in the train
  manifest, ``metrics.json`` and ``report.md``.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, job_arguments, substituted
from docs_examples import example, output
from scipy import sparse

from sparktc.apps.cli import parse_arguments, tell
from sparktc.apps.pipeline import run as run_pipeline
from sparktc.errors import CONFIG_EXIT, SparktcError
from sparktc.evaluation.training_decisions import training_decisions, training_decisions_lines
from sparktc.experiment.config import SECTIONS, ConfigError, check_against_data, load_config
from sparktc.experiment.config.rules import setting_keys
from sparktc.models.decision import score_range
from sparktc.models.knn import knn_scores_from_neighbours, knn_topk
from sparktc.models.naive_bayes import log_posterior, mixture_nb
from sparktc.models.registry import METHODS

SYNTHETIC = "corpus.format=synthetic"


def method_settings(method: str) -> list[str]:
    # The mixture over selected terms: SCut over every term is refused (test_naive_bayes.py).
    return [f"train.method={method}"] + (["train.nb.model=mixture", "select.top_k=2000"] if method == "nb" else [])


# --- the score ranges, Spark-free ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_each_method_accepts_its_natural_threshold_or_names_one(method):
    rule = load_config(None, [SYNTHETIC, *method_settings(method), "train.thresholding=scut"]).train.decision_rule()
    scores = score_range(rule, nonnegative_features=True)
    if scores.natural is None:  # kNN: no natural threshold, any inside its range works
        assert method == "knn" and scores.low == 0 and scores.high == rule.parameters.k
        return
    assert scores.low <= scores.natural < scores.high
    config = load_config(None, [SYNTHETIC, *method_settings(method), f"train.threshold={scores.natural!r}"])
    assert config.train.threshold == scores.natural


@pytest.mark.parametrize(("settings", "message"), [
    (["train.method=nb"],  # the mixture's default: every posterior P(c|d) > 0 exceeds 0
     "train.method = 'nb' (train.nb.model = 'mixture') with train.thresholding = 'fixed' and train.threshold = 0 "
     "assigns every category to every document: the naive Bayes mixture's scores are posteriors 0 < P(c|d) <= 1, "
     "so every score exceeds 0; set train.threshold = 0.5 (P(c|d) > 1/2), or train.thresholding = 'scutfbr'"),
    (["train.method=nb", "train.threshold=1"], "assigns nothing"),
    (["train.method=knn", "train.knn.k=10", "train.threshold=10"],
     "assigns nothing: kNN's scores are sums of the similarities of k = 10 neighbours, between 0 and 10"),
    (["train.method=knn", "train.threshold=-0.5"],
     "assigns every category to every document: kNN's scores are sums of the similarities of k = 30 neighbours, "
     "between 0 and 30, so every score exceeds -0.5; set train.threshold in (0, 30)"),
    (["train.method=knn"],  # kNN alone: its default 0 is every category of any one neighbour (micro-F1 .43 before)
     "train.method = 'knn' with train.thresholding = 'fixed' and train.threshold = 0 assigns each document every "
     "category of any one of its k = 30 nearest neighbours (a category no neighbour has scores 0, one a neighbour "
     "has more): kNN's scores are sums of the similarities of k = 30 neighbours, between 0 and 30; set "
     "train.threshold in (0, 30), or train.thresholding = 'scutfbr' (thresholds tuned on the training documents)"),
    (["train.method=knn", "train.knn.k=45", "train.threshold=0"], "any one of its k = 45 nearest neighbours"),
    (["corpus.format=libsvm", "corpus.path=.", "weight.scheme=given", "train.method=knn", "train.threshold=-0.5"],
     "train.threshold = -0.5 assigns each document every category none of its k = 30 nearest neighbours has (its "
     "score is 0): kNN's scores are sums of the similarities of k = 30 neighbours, between -30 and 30; set "
     "train.threshold in (0, 30)"),
    (["train.method=rocchio", "train.rocchio.gamma=0", "train.threshold=-1"],
     "assigns every category to every document: Rocchio's scores are w'x >= 0 (gamma = 0 and no negative feature)"),
])
def test_a_fixed_threshold_outside_the_scores_is_refused_before_spark_starts(settings, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, [SYNTHETIC, *settings])
    assert message in str(error.value) and error.value.exit_code == CONFIG_EXIT
    assert "\n" not in str(error.value)


def test_the_methods_page_quotes_the_refusal_of_naive_bayes_alone_as_the_job_prints_it(tmp_path, capsys):
    """docs/methods.md's command (``naive-bayes-refused``), parsed by the job, stops before Spark starts with the one
    line its output block shows, exit status 2; ln 1/2, a log posterior's threshold, is refused alike.
    """
    job, arguments = job_arguments(example("naive-bayes-refused"))
    assert job == "jobs/pipeline.py"
    with pytest.raises(ConfigError) as error:
        parse_arguments("", substituted(arguments, {"runs/nb": str(tmp_path / "nb")}))
    assert tell(error.value) == CONFIG_EXIT == 2
    assert capsys.readouterr().err == " ".join(output("naive-bayes-refused").split()) + "\n"
    with pytest.raises(ConfigError, match="train.threshold = -0.693147 assigns every category to every document"):
        parse_arguments("", substituted(arguments, {"runs/nb": str(tmp_path / "nb")})
                        + ["--set", "train.threshold=-0.693147"])


def test_the_exit_status_table_says_which_configuration_errors_come_after_spark_started():
    """Exit status 2 is mostly "refused before Spark starts"; the settings only the data can refuse (this module's
    check_against_data, select.min_df in weight) come after ingest, and the table of docs/trusted-runs.md says so.
    """
    page = (REPO / "docs" / "trusted-runs.md").read_text()
    [row] = re.findall(r"\n\| 2 \| (.*) \|\n", page)
    assert "before Spark starts" in row
    for key, when in (("train.folds", "after ingest"), ("train.rcut_k", "after ingest"), ("select.min_df", "weight")):
        assert f"`{key}`" in row and when in row, (key, row)


@pytest.mark.parametrize("settings", [
    ["train.method=nb", "train.threshold=0.3"],
    ["train.method=nb", "train.nb.model=binary"],  # log odds: unbounded, 0 is natural
    ["train.method=nb", "train.thresholding=scut", "select.top_k=2000"],  # learned thresholds: never refused
    ["train.method=nb", "train.thresholding=rcut"],
    ["train.method=knn", "train.threshold=29.5"],
    ["train.method=knn", "train.threshold=0.5"],
    ["train.method=knn", "train.knn.k=1"],  # 1-NN: 0 is the nearest neighbour's categories
    ["train.method=knn", "train.thresholding=scutfbr"],  # the working alternative named
    ["train.method=rocchio", "train.threshold=-1"],  # gamma > 0: scores of either sign
    ["train.method=llsf", "train.threshold=1e6"],  # unbounded: the second line of defence reports it
])
def test_thresholds_within_the_scores_are_accepted(settings):
    load_config(None, [SYNTHETIC, *settings])


def test_given_vectors_may_have_negative_knn_scores_but_a_threshold_must_exceed_0():
    vectors = ["corpus.format=libsvm", "corpus.path=.", "weight.scheme=given", "train.method=knn"]
    assert load_config(None, [*vectors, "train.threshold=0.5"]).train.threshold == 0.5
    rule = load_config(None, [*vectors, "train.threshold=0.5"]).train.decision_rule()
    assert (score_range(rule, False).low, score_range(rule, True).low) == (-30.0, 0.0)


def test_knn_scores_a_category_no_neighbour_has_0_whatever_the_features():
    """What kNN's floor says, on scores it gives: with features of either sign, a category none of a document's k
    neighbours has scores exactly 0 (so a threshold below 0 assigns it), and one a neighbour has scores that
    neighbour's similarity, above 0 for a neighbour that shares a term (so a threshold of 0 assigns it).
    """
    rng = np.random.default_rng(8)
    X = sparse.random(40, 30, density=0.3, random_state=9, format="csr")
    X.data = rng.normal(size=X.nnz)  # given vectors: negative values too
    unit = sparse.csr_matrix(X.multiply(1 / np.sqrt(X.multiply(X).sum(axis=1)).clip(1e-12)))
    Y = rng.random((40, 6)) < 0.2
    neighbours, similarities = knn_topk(unit[:10], unit[10:], 3)
    scores = knn_scores_from_neighbours(neighbours, similarities, Y[10:])
    has = np.array([Y[10:][row].any(axis=0) for row in neighbours])
    assert np.all(scores[~has] == 0) and (~has).any()
    assert np.all(scores[has & np.all(similarities > 0, axis=1)[:, None]] > 0)


def test_the_declared_ranges_hold_for_the_scores_the_methods_give():
    rng = np.random.default_rng(3)
    X = sparse.random(60, 40, density=0.2, random_state=4, format="csr") * 5
    Y = rng.random((60, 4)) < 0.3
    # the naive Bayes mixture: posteriors, above 0 and at most 1 (Yang & Liu's NB)
    log_theta, log_prior = mixture_nb(np.asarray(X.T @ Y.astype(np.float64)), Y.sum(axis=0), 1.0)
    posterior = np.exp(log_posterior(np.asarray(X @ log_theta) + log_prior))
    rule = load_config(None, [SYNTHETIC, "train.method=nb", "train.thresholding=scutfbr"]).train.decision_rule()
    assert 0 <= posterior.min() and posterior.max() <= score_range(rule, True).high == 1.0
    # kNN over non-negative vectors: sums of k cosines in [0, 1]
    unit = sparse.csr_matrix(X.multiply(1 / np.sqrt(X.multiply(X).sum(axis=1)).clip(1e-12)))
    neighbours, similarities = knn_topk(unit, unit, 7)
    knn = knn_scores_from_neighbours(neighbours, similarities, Y)
    rule = load_config(None, [SYNTHETIC, "train.method=knn", "train.knn.k=7", "train.threshold=1"]).train \
        .decision_rule()
    assert score_range(rule, True).low <= knn.min() and knn.max() <= score_range(rule, True).high == 7


# --- the second line of defence, Spark-free ------------------------------------------------------------------


def test_training_decisions_name_the_categories_assigned_nothing_or_everything():
    codes = np.array(["a", "b", "c", "d", "e"], dtype=object)
    record = training_decisions(codes, np.array([0, 3, 10, 0, 0]), np.array([2, 3, 4, 1, 0]), documents=10)
    # e has no training positive: nothing to learn, so not reported
    assert record == {"documents": 10, "categories": 4, "assign_nothing": ["a", "d"], "assign_everything": ["c"],
                      "degenerate": False}
    lines = training_decisions_lines(record)
    assert lines == [
        "the decision rule assigns no training document to 2 of the 4 categories with a training positive (a, d); "
        "expect it to do the same on the test documents",
        "the decision rule assigns every training document to 1 of the 4 categories with a training positive (c); "
        "expect it to do the same on the test documents"]
    useful = training_decisions(codes, np.array([1, 3, 9, 2, 0]), np.array([2, 3, 4, 1, 0]), documents=10)
    assert training_decisions_lines(useful) == [] and not useful["degenerate"]


def test_a_rule_that_assigns_nothing_anywhere_is_degenerate():
    codes = np.array([f"c{i}" for i in range(8)], dtype=object)
    record = training_decisions(codes, np.zeros(8, dtype=np.int64), np.arange(1, 9), documents=40)
    assert record["degenerate"]
    [line] = training_decisions_lines(record)
    assert line.startswith("the decision rule assigns no training document to any of the 8 categories with a "
                           "training positive: the model is degenerate")
    everything = training_decisions(codes, np.full(8, 40), np.arange(1, 9), documents=40)
    assert everything["degenerate"] and "assigns every training document to each of the 8" in \
        training_decisions_lines(everything)[0]


# --- settings against the data, Spark-free ---------------------------------------------------------------------


@pytest.mark.parametrize("settings", [
    ["train.thresholding=scut", "train.folds=12"],
    ["train.thresholding=proportional", "train.folds=11"],
    ["tune.liblinear.C=[0.5, 1.0]", "train.folds=11"],  # a search cross-validates even under a fixed threshold
])
def test_more_folds_than_training_documents_is_a_configuration_error_naming_the_key(settings):
    config = load_config(None, [SYNTHETIC, *settings])
    with pytest.raises(ConfigError) as error:
        check_against_data(config, {"train_documents": 10, "categories": 3}, "counted by ingest in /run")
    assert str(error.value).startswith(f"train.folds = {config.train.folds} with 10 training documents "
                                       "(counted by ingest in /run)")
    assert "set train.folds <= 10 (LYRL2004 uses 5)" in str(error.value)
    check_against_data(config, {"train_documents": config.train.folds, "categories": 3}, "")


def test_folds_unused_are_not_checked_and_rcut_needs_fewer_than_the_categories():
    check_against_data(load_config(None, [SYNTHETIC, "train.folds=50"]), {"train_documents": 3, "categories": 2}, "")
    rcut = load_config(None, [SYNTHETIC, "train.thresholding=rcut", "train.rcut_k=3"])
    with pytest.raises(ConfigError, match=r"train.rcut_k = 3 with 3 categories \(x\): RCut would assign every "
                                          r"category to every document; set train.rcut_k < 3"):
        check_against_data(rcut, {"train_documents": 30, "categories": 3}, "x")
    check_against_data(rcut, {"train_documents": 30, "categories": 4}, "x")


# --- through Spark ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory) -> Path:
    """12 training and 8 test documents in three categories, as JSON Lines."""
    directory = tmp_path_factory.mktemp("tiny")
    rng = random.Random(5)
    words = {c: [f"{c}{i}" for i in range(6)] for c in ("alpha", "beta", "gamma")}
    with open(directory / "docs.jsonl", "w") as handle:
        for i in range(20):
            labels = rng.sample(sorted(words), rng.choice([1, 2]))
            text = " ".join(rng.choice(words[label]) for label in labels for _ in range(5))
            handle.write(json.dumps({"id": f"d{i}", "text": f"{text} common words here", "labels": labels,
                                     "split": "train" if i < 12 else "test"}) + "\n")
    return directory


def test_more_folds_than_training_documents_stops_the_run_after_ingest(spark, tiny_corpus, tmp_path):
    config = load_config(None, ["corpus.format=jsonl", f"corpus.path={tiny_corpus}", "train.thresholding=scutfbr",
                                "train.folds=20"])
    with pytest.raises(ConfigError) as error:
        run_pipeline(spark, config, str(tmp_path / "run"))
    assert str(error.value).startswith("train.folds = 20 with 12 training documents (counted by ingest in ")
    assert error.value.exit_code == CONFIG_EXIT  # docs/trusted-runs.md's exit-status table says 2 can come after ingest
    assert (tmp_path / "run" / "manifests" / "ingest.json").exists()
    assert not (tmp_path / "run" / "manifests" / "tokenize.json").exists()  # nothing heavy after ingest


def test_a_threshold_above_every_score_is_reported_as_a_degenerate_model(spark, tiny_corpus, ranked, tmp_path,
                                                                         capfd):
    config = load_config(None, ["corpus.format=jsonl", f"corpus.path={tiny_corpus}", "train.threshold=1e6"])
    shutil.copytree(ranked, tmp_path / "run")
    manifests = {m["stage"]: m for m in run_pipeline(spark, config, str(tmp_path / "run"))}
    err = capfd.readouterr().err
    assert ("sparktc: warning: train: the decision rule assigns no training document to any of the 3 categories "
            "with a training positive: the model is degenerate") in err
    found = manifests["train"]["details"]["training_decisions"]
    assert found == {"documents": 12, "categories": 3, "assign_nothing": ["alpha", "beta", "gamma"],
                     "assign_everything": [], "degenerate": True}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["training_decisions"] == found and metrics["micro_f1"] == 0.0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Decisions on the training documents" in report and "the model is degenerate" in report
    assert "Categories it assigns none of: `alpha`, `beta`, `gamma`" in report
    assert math.isclose(metrics["micro_recall"], 0.0)


# --- the settings table walked: no setting's value reaches the user as anything but a SparktcError ---------------

#: Values of every type and size, tried for every key: the configuration takes each or refuses it in one line.
HOSTILE = ['""', '"x"', "-1", "0", "1", "4294967296", "9223372036854775808", "1e308", "-1e308", "0.5", "true",
           "[]", '["x"]', "[0]", "[-1]", "[2147483648]", "{}", '{x = ["y"]}', '{x = []}']
#: Every data-facing setting at the extremes its rule allows, a few per run of the tiny corpus (a setting's
#: combinations are refused before Spark starts, see above), and what the run must end in: "ok" or a
#: SparktcError whose message starts with the key named.
EXTREME_RUNS = [
    (["train.liblinear.C=1e300", "train.liblinear.epsilon=1e300", "train.liblinear.bias=1e300",
      "train.liblinear.positive_weight=1e-300",
      "train.thresholding=scutfbr", "train.fbr=1", "train.folds=12", "train.seed=4294967295",
      "select.top_k=2147483647", "evaluate.ranks=[1000]", "evaluate.top_scores=1000", "evaluate.bands=[2147483647]",
      "evaluate.zero_division=0.0", "evaluate.average_over=test_positive", "evaluate.close_predictions=false"], "ok"),
    (["tune.liblinear.C=[1e-300, 1e300]", "tune.liblinear.positive_weight=[1e-300]",
      "tune.liblinear.solver=['l2r_lr', 'l1r_l2loss_svc']",
      "tune.terms=[2147483647, 1]", "tune.fbr=[0, 1]", "train.thresholding=scutfbr", "train.folds=2",
      "tune.liblinear.shared_positive_weight=false", "tune.shared_fbr=false", "train.liblinear.solver=l1r_lr"], "ok"),
    (["train.method=knn", "train.knn.k=2147483647", "select.reduction_factor=0.9999", "train.thresholding=proportional",
      "train.folds=12", "tune.objective=macro_f1"], "ok"),
    (["train.method=rocchio", "train.thresholding=scut", "train.validation=0.9999"], "ok"),
    (["train.method=knn", "train.knn.k=2147483647", "train.thresholding=scutfbr", "train.validation=1e-300"], "ok"),
    (["tune.liblinear.C=[0.5, 2]", "train.validation=0.5"], "ok"),
    (["train.method=llsf", "train.llsf.k=100000", "train.thresholding=rcut", "train.rcut_k=2"], "ok"),
    (["train.method=nb", "train.nb.model=mixture", "train.nb.alpha=1e-300", "train.threshold=1e-300"], "ok"),
    (["train.method=nb", "tune.nb.alpha=[1e-300, 1e300]", "train.thresholding=scut", "select.top_k=1"], "ok"),
    (["train.method=sklearn_linear", "train.sklearn_linear.C=1e300", "train.sklearn_linear.max_iter=1"], "ok"),
    (["train.method=sklearn_linear", "train.sklearn_linear.C=1e-300", "train.sklearn_linear.max_iter=1000000"], "ok"),
    (["train.method=rocchio", "train.rocchio.beta=1e300", "train.rocchio.gamma=1e300", "train.threshold=1e300"], "ok"),
    (["train.method=nnet", "train.nnet.hidden=10000", "train.nnet.epochs=3", "train.nnet.l2=1e300",
      "train.nnet.learning_rate=1e300"], "train.nnet.learning_rate"),
    (["evaluate.subsets={x = ['omega']}", "evaluate.average_over=x"], "evaluate.subsets.x"),
    (["tokenize.analyzer=sklearn", "tokenize.ngrams=3", "select.min_df=2", "rank.score=frequency", "select.top_k=1",
      "weight.scheme=sklearn"], "ok"),
    (["select.min_df=2147483647"], "select.min_df = 2,147,483,647 keeps no term"),
]
#: Data-facing keys not in EXTREME_RUNS, and why.
NOT_RUN = {"train.method": "a choice; every method runs in test_methods.py and above",
           "train.nb.model": "a choice; binary runs in test_naive_bayes.py",
           "train.thresholding": "a choice; each runs in test_methods.py and test_thresholds",
           "train.threshold": "refused outside a method's scores above; NB and Rocchio extremes run here",
           "tune.liblinear.shared_positive_weight": "true runs in test_shared_weight.py", "tune.shared_fbr": "likewise",
           "tune.liblinear.shared_C": "likewise", "tune.shared_terms": "likewise",
           "train.fold_file": "a file of folds; runs in test_micromacro_spark.py",
           "train.liblinear.one_class": "a choice; both run in test_linear.py"}
DATA_FACING = ("select", "train", "tune", "evaluate")


def every_key() -> list[str]:
    return [key for name in SECTIONS for key in setting_keys(name)]  # a method's table's too: train.knn.k


@pytest.mark.parametrize("key", every_key())
def test_every_setting_takes_any_value_or_refuses_it_in_one_line(key):
    for value in HOSTILE:
        try:
            load_config(None, [SYNTHETIC, f"{key}={value}"])
        except ConfigError as error:
            assert "\n" not in str(error) and str(error), (key, value)
            assert key in str(error) or key.split(".")[0] in str(error), (key, value, str(error))
        # anything else (a ValueError, a TypeError, ...) fails the test with its traceback


def test_every_data_facing_setting_is_run_at_its_extremes():
    run = {setting.split("=")[0] for settings, _ in EXTREME_RUNS for setting in settings}
    facing = {key for key in every_key() if key.split(".")[0] in DATA_FACING}
    assert facing - run - set(NOT_RUN) == set(), "a new data-facing setting: add its extremes to EXTREME_RUNS"


@pytest.fixture(scope="module")
def ranked(spark, tiny_corpus, tmp_path_factory) -> Path:
    """The tiny corpus through ingest -> rank, once (every extreme run and the degenerate threshold's run copy it and
    train from there).
    """
    output = tmp_path_factory.mktemp("extremes") / "ranked"
    run_pipeline(spark, load_config(None, ["corpus.format=jsonl", f"corpus.path={tiny_corpus}"]), str(output),
                 "ingest", "tokenize", "weight", "rank")
    return output


@pytest.mark.parametrize(("settings", "outcome"), EXTREME_RUNS, ids=[s[0].split("=")[0] for s, _ in EXTREME_RUNS])
def test_data_facing_settings_at_their_extremes_end_well(spark, tiny_corpus, ranked, tmp_path, settings, outcome):
    config = load_config(None, ["corpus.format=jsonl", f"corpus.path={tiny_corpus}", *settings])
    output = tmp_path / "run"
    shutil.copytree(ranked, output)
    try:
        run_pipeline(spark, config, str(output))
    except SparktcError as error:
        assert "\n" not in str(error) and str(error).startswith(outcome), str(error)
        return
    assert outcome == "ok"
    metrics = json.loads((output / "metrics.json").read_text())
    assert 0 <= metrics["micro_f1"] <= 1 and 0 <= metrics["macro_f1"] <= 1
