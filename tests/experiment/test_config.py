"""Configuration: a wrong key or value stops the job before Spark starts, naming the key, the value and the allowed
ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import get_type_hints

import pytest

from sparktc.apps import cli
from sparktc.corpora.synthetic import SHAPE_LIMITS, SyntheticShape
from sparktc.experiment.config import SECTIONS, ConfigError, load_config, parse_override
from sparktc.stages.synthesize import synthesize_stage

REPO = Path(__file__).resolve().parents[2]
REUTERS = ["corpus.format=reuters21578", f"corpus.path={REPO}"]


def settings_of_type(hint) -> list[str]:
    """Every section.key whose type hint is ``hint`` (float, int, list[float] ...)."""
    return [f"{section}.{key}" for section, cls in SECTIONS.items() for key, h in get_type_hints(cls).items()
            if h == hint]


def refused(overrides: list[str], path: str | None = None) -> str:
    with pytest.raises(ConfigError) as error:
        load_config(path, overrides)
    return str(error.value)


def test_project_configs_load() -> None:
    config = load_config(str(REPO / "conf" / "reuters21578.toml"),
                         [f"corpus.path={REPO.parent / 'shared' / 'data' / 'reuters21578'}"])
    assert (config.corpus.category_set, config.corpus.document_filter) == ("R90", "aptemod")
    own = config.train.liblinear
    assert own.solver == "l2r_l2loss_svc_dual" and own.C == 1.0 and own.bias == 1.0
    assert config.tokenize.stop_list == "smart"  # the packaged SMART list, read from the package (test_packaged.py)
    assert load_config(str(REPO / "conf" / "synthetic.toml")).synthesize.documents == 30000
    best = load_config(str(REPO / "conf" / "reuters21578-best.toml"), [f"corpus.path={REPO}"])
    assert best.train.thresholding == "scutfbr" and best.tokenize.title_terms  # what cross-validation picked
    assert best.tune.shared_fbr and best.tune.fbr == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["train.Cost=2"],
         "unknown key train.Cost; keys of [train]: method, thresholding, threshold, fbr, rcut_k, folds, seed, "
         "validation, fold_file, liblinear"),
        (["trian.C=2"], "unknown section [trian]"),
        (["train.liblinear.solver=svm"],
         "train.liblinear.solver = 'svm' is not allowed; allowed values: 'l2r_lr', 'l2r_l2loss_svc_dual'"),
        (["train.liblinear.C=0"], "train.liblinear.C = 0.0 is out of range; expected > 0"),
        (["train.liblinear.C=high"], "train.liblinear.C = 'high': expected float, got str"),
        (["corpus.category_set=R20"],
         "corpus.category_set = 'R20' is not allowed; allowed values: '', 'R10', 'R90', 'R115', 'topics', "
         "'industries', 'regions'"),
        (["select.top_k=10", "select.reduction_factor=0.5"], "set one, not both"),
        (["select.reduction_factor=1.0"], "select.reduction_factor = 1.0 is out of range; expected 0 <= xi < 1"),
        (["evaluate.zero_division=0.5"], "evaluate.zero_division = 0.5 is not allowed"),
        (["corpus.test_parts=[4]"], "corpus.test_parts = [4] is out of range"),
        (["spark.conf={sql.shuffle.partitions = 4}"], "keys start with 'spark.'"),
        (["tokenize.stop_list=/no/such/stop.list"],
         "tokenize.stop_list = '/no/such/stop.list': no such file or directory"),
        (["train"], "expected section.key=value"),
    ],
)
def test_bad_settings_are_named(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, REUTERS + overrides)
    assert message in str(error.value)


def test_corpus_must_be_named() -> None:
    with pytest.raises(ConfigError, match="corpus.format is not set"):
        load_config(None, [])
    with pytest.raises(ConfigError, match="corpus.path is not set"):
        load_config(None, ["corpus.format=jsonl"])
    with pytest.raises(ConfigError, match="corpus.path = '/no/such/dir': no such file or directory"):
        load_config(None, ["corpus.format=jsonl", "corpus.path=/no/such/dir"])


def test_overrides_are_toml_values_or_plain_strings() -> None:
    assert parse_override("train.liblinear.C=0.5") == ("train", "liblinear.C", 0.5)
    assert parse_override("train.folds=3") == ("train", "folds", 3)
    assert parse_override("corpus.test_parts=[0, 2]") == ("corpus", "test_parts", [0, 2])
    assert parse_override("corpus.path=/data/reut2") == ("corpus", "path", "/data/reut2")
    assert parse_override('spark.app_name="x=y"') == ("spark", "app_name", "x=y")
    config = load_config(None, REUTERS + ["train.liblinear.C=2", "train.liblinear.epsilon=1"])
    assert (config.train.liblinear.C, config.train.liblinear.epsilon) == (2.0, 1.0)


def test_a_job_stops_before_spark_starts_on_a_bad_key() -> None:
    """The job's exit code is 2 and its message names the key; no Spark session is created."""
    job = subprocess.run(
        [sys.executable, str(REPO / "jobs" / "train.py"), "--config", str(REPO / "conf" / "reuters21578.toml"),
         "--set", f"corpus.path={REPO}", "--set", "train.loss=hinge", "--output", "/tmp/never-written"],
        capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=60,
    )
    assert job.returncode == 2
    assert "sparktc: configuration error: unknown key train.loss" in job.stderr
    assert "SparkContext" not in job.stderr and not Path("/tmp/never-written").exists()


# --- issue 12: the configuration is checked completely before Spark starts


@pytest.mark.parametrize("key", settings_of_type(float))
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_every_float_setting_must_be_finite(key: str, value: str) -> None:
    """train.threshold = nan used to run to micro-F1 0; train.liblinear.C = inf and train.liblinear.bias = nan failed
    deep in training.
    """
    assert refused(REUTERS + [f"{key}={value}"]) == \
        f"{key} = {float(value)!r} is out of range; expected a finite number"


@pytest.mark.parametrize("key", settings_of_type(list[float]))
def test_every_number_in_a_float_list_must_be_finite(key: str) -> None:
    assert refused(REUTERS + [f"{key}=[0.5, nan]"]) == f"{key}[1] = nan is out of range; expected a finite number"
    assert refused(REUTERS + [f"{key}=[inf]"]) == f"{key}[0] = inf is out of range; expected a finite number"
    assert refused(REUTERS + [f"{key}=[0.5, true]"]) == f"{key}[1] = True: expected float, got bool"


def test_an_integer_beyond_the_floats_is_out_of_range() -> None:
    assert refused(REUTERS + [f"train.liblinear.C={10**400}"]) == \
        f"train.liblinear.C = {10**400} is out of range; expected a finite number"
    assert refused(REUTERS + [f"tune.liblinear.C=[{10**400}]"]) == \
        f"tune.liblinear.C[0] = {10**400} is out of range; expected a finite number"


@pytest.mark.parametrize("key", settings_of_type(int) + settings_of_type(list[int]))
@pytest.mark.parametrize("value", [2**63, -(2**63)])
def test_every_integer_setting_is_bounded(key: str, value: int) -> None:
    """No integer reaches numpy, LIBLINEAR or a Spark int column unbounded (train.folds = 10**30 failed in training)."""
    given = f"[{value}]" if key in settings_of_type(list[int]) else str(value)
    assert f"{key} = {given} is out of range; expected " in refused(REUTERS + [f"{key}={given}"])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["train.seed=-1"], "train.seed = -1 is out of range; expected an integer in [0, 4_294_967_295]"),
        (["synthesize.seed=-1"], "synthesize.seed = -1 is out of range; expected an integer in [0, 4_294_967_295]"),
        (["train.seed=4294967296"],
         "train.seed = 4294967296 is out of range; expected an integer in [0, 4_294_967_295]"),
        ([f"train.folds={10**30}"], f"train.folds = {10**30} is out of range; expected an integer in [2, 100]"),
        ([f"synthesize.documents={10**30}"],
         f"synthesize.documents = {10**30} is out of range; expected an integer in [10, 100_000_000]"),
        (["select.top_k=2147483648"],
         "select.top_k = 2147483648 is out of range; expected an integer in [0, 2_147_483_647] (0 keeps all terms)"),
        (["tune.terms=[0, 2147483648]"],
         "tune.terms = [0, 2147483648] is out of range; expected integers in [0, 2_147_483_647]"),
        (["train.rcut_k=1001"], "train.rcut_k = 1001 is out of range; expected an integer in [1, 1_000]"),
        (["evaluate.ranks=[1, 1]"],
         "evaluate.ranks = [1, 1] is out of range; expected distinct integers in [1, 1_000]"),
        (["train.rocchio.beta=0"], "train.rocchio.beta = 0.0 is out of range; expected > 0"),
        (["train.rocchio.gamma=-1"], "train.rocchio.gamma = -1.0 is out of range; expected >= 0"),
        (["train.liblinear.C=1e300", "train.liblinear.positive_weight=1e300"],
         "train.liblinear.C * train.liblinear.positive_weight = inf: LIBLINEAR's cost of positive documents must be a "
         "finite number"),
        (["tune.liblinear.C=[1, 1e300]", "tune.liblinear.positive_weight=[1e10]"],
         "tune.liblinear.C * tune.liblinear.positive_weight = inf: LIBLINEAR's cost of positive documents must be a "
         "finite number"),
        (["tune.terms=[0, true]"], "tune.terms[1] = True: expected an integer"),
        (["corpus.test_parts=[0, 0]"],
         "corpus.test_parts = [0, 0] is out of range; expected a non-empty list of distinct parts from 0, 1, 2, 3"),
        (["corpus.test_parts=[true]"], "corpus.test_parts[0] = True: expected an integer"),
        (['corpus.categories=["earn", "earn"]'],
         "corpus.categories = ['earn', 'earn'] is out of range; expected a list of distinct strings"),
        (["evaluate.subsets={core = [1]}"], "evaluate.subsets.core[0] = 1: expected str, got int"),
        (["tune.liblinear.C=2"], "tune.liblinear.C = 2: expected list, got int"),
    ],
    ids=["train_seed_negative", "synthesize_seed_negative", "seed_beyond_32_bits", "folds_huge", "documents_huge",
         "top_k_beyond_int", "terms_beyond_int", "rcut_k", "ranks_twice", "rocchio_beta_0", "rocchio_gamma_negative",
         "cost_overflow", "tuned_cost_overflow", "bool_in_int_list", "test_part_twice", "bool_test_part",
         "category_twice", "subset_member_type", "list_given_number"],
)
def test_bad_numbers_are_refused(overrides: list[str], message: str) -> None:
    assert refused(REUTERS + overrides) == message


def test_seeds_take_the_32_bit_range() -> None:
    config = load_config(None, REUTERS + ["train.seed=4294967295", "synthesize.seed=0"])
    assert (config.train.seed, config.synthesize.seed) == (2**32 - 1, 0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["synthesize.vocabulary_size=999"],
         "synthesize.vocabulary_size = 999 is out of range; expected an integer in [1_000, 2_000_000]"),
        (["synthesize.tokens_per_document=9"],
         "synthesize.tokens_per_document = 9 is out of range; expected an integer in [10, 5_000]"),
        (["synthesize.chunk_documents=10000001"],
         "synthesize.chunk_documents = 10000001 is out of range; expected an integer in [100, 10_000_000]"),
        (["synthesize.vocabulary_size=500"],
         "synthesize.vocabulary_size = 500 is out of range; expected an integer in [1_000, 2_000_000]"),
        (["synthesize.documents=100", "synthesize.train_documents=97"],
         "synthesize.train_documents = 97 must be at most synthesize.documents - 4 = 96, so that each of the 4 test "
         "files gets a document"),
    ],
    ids=["vocabulary", "tokens", "chunk", "vocabulary_500", "test_documents"],
)
def test_synthesize_settings_the_generator_refuses_are_refused_first(overrides: list[str], message: str) -> None:
    """SyntheticShape and synthesize() refused these in the synthesize stage, after Spark had started."""
    assert refused(["corpus.format=synthetic", *overrides]) == message


def test_synthesize_limits_are_the_generators() -> None:
    """The largest and smallest settings load_config accepts are shapes the generator accepts."""
    for bounds in (["synthesize.documents=100000000", "synthesize.train_documents=99999996",
                    "synthesize.seed=4294967295", "synthesize.vocabulary_size=2000000",
                    "synthesize.tokens_per_document=5000"],
                   ["synthesize.documents=10", "synthesize.train_documents=1", "synthesize.vocabulary_size=1000",
                    "synthesize.tokens_per_document=10"]):
        settings = load_config(None, ["corpus.format=synthetic", *bounds]).synthesize
        SyntheticShape(documents=settings.documents, train_documents=settings.train_documents, seed=settings.seed,
                       vocabulary_size=settings.vocabulary_size,
                       tokens_per_document=float(settings.tokens_per_document))


def test_synthesize_ranges_are_the_generators_one_definition() -> None:
    """Each shape setting's range in [synthesize] is SHAPE_LIMITS's (the seed's, every seed's range, lies within it)."""
    for key in ("documents", "train_documents", "vocabulary_size", "tokens_per_document"):
        _, low, high = SHAPE_LIMITS[key]
        for value in (int(low) - 1, int(high) + 1):
            assert refused(["corpus.format=synthetic", f"synthesize.{key}={value}"]) == (
                f"synthesize.{key} = {value} is out of range; expected an integer in [{int(low):_}, {int(high):_}]")
    _, low, high = SHAPE_LIMITS["seed"]
    assert low == 0 and high >= 2**32 - 1


def test_a_synthetic_vocabulary_too_small_stops_the_job_before_spark_starts(tmp_path, monkeypatch, capsys) -> None:
    """Exit 2 and the key named, as for every setting, not a failure inside the synthesize stage."""
    monkeypatch.setattr(cli, "session", lambda config: pytest.fail("Spark was started for a refused configuration"))
    output = tmp_path / "out"
    argv = ["--set", "corpus.format=synthetic", "--set", "synthesize.vocabulary_size=500", "--output", str(output)]
    assert cli.main("synthesize", lambda config, out: [(synthesize_stage(), config)], argv) == 2
    assert capsys.readouterr().err == ("sparktc: configuration error: synthesize.vocabulary_size = 500 "
                                       "is out of range; expected an integer in [1_000, 2_000_000]\n")
    assert not output.exists()


def test_a_config_file_starting_with_a_byte_order_mark_is_read_as_without_it(tmp_path: Path) -> None:
    plain = (REPO / "conf" / "synthetic.toml").read_bytes()
    marked = tmp_path / "marked.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain)
    assert load_config(str(marked)).as_dict() == load_config(str(REPO / "conf" / "synthetic.toml")).as_dict()


def test_a_config_file_that_cannot_be_read_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert refused([], str(tmp_path)) == f"--config {tmp_path} is a directory; expected a TOML file"
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes('[train]\nsolver = "caf\u00e9"\n'.encode("latin-1"))
    assert refused([], str(latin1)) == (f"--config {latin1}: not UTF-8 text (byte 21: b'\\xe9'); "
                                        "save it as UTF-8, as TOML requires")
    locked = tmp_path / "locked.toml"
    locked.write_text("[train]\n")

    def denied(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(Path, "read_bytes", denied)  # chmod does not stop root
    assert refused([], str(locked)) == f"--config {locked}: cannot be read: Permission denied"


@pytest.mark.parametrize("key", ["tokenize.stop_list", "corpus.hierarchy", "corpus.topic_names",
                                 "synthesize.hierarchy"])
def test_a_file_setting_naming_a_directory_is_refused(tmp_path: Path, key: str) -> None:
    """tokenize.stop_list naming a directory spent 7 minutes listing it before failing."""
    assert refused(REUTERS + [f"{key}={tmp_path}"]) == f"{key} = '{tmp_path}' is a directory; expected a file"


def test_directory_settings_naming_a_file_are_refused(tmp_path: Path) -> None:
    file = tmp_path / "reut2-000.sgm"
    file.write_text("")
    assert refused(["corpus.format=reuters21578", f"corpus.path={file}"]) == \
        f"corpus.path = '{file}' is a file; expected a directory"
    assert refused(REUTERS + [f"spark.event_log={file}"]) == \
        f"spark.event_log = '{file}' is a file; expected a directory"


def test_unreadable_and_remote_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stop_list = tmp_path / "stop.list"
    stop_list.write_text("the\n")
    # checked through Hadoop
    uris = ["corpus.hierarchy=hdfs://namenode:8020/rcv1", "tokenize.stop_list=s3a://bucket/dir/"]
    assert load_config(None, REUTERS + [f"tokenize.stop_list={stop_list}"]).tokenize.stop_list == str(stop_list)
    assert load_config(None, REUTERS + uris).corpus.hierarchy == "hdfs://namenode:8020/rcv1"
    monkeypatch.setattr(os, "access", lambda path, mode: path != str(stop_list))  # chmod does not stop root
    assert refused(REUTERS + [f"tokenize.stop_list={stop_list}"]) == \
        f"tokenize.stop_list = '{stop_list}': permission denied; the file must be readable"


KNN = "(kNN's term count and fbr are always chosen for all categories at once)"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["train.method=knn", "tune.fbr=[0.1, 0.5]"],
         "tune.fbr = [0.1, 0.5] with train.thresholding = 'fixed': fbr moves SCutFBR's thresholds only; set "
         "train.thresholding = 'scutfbr' or remove tune.fbr"),
        (["train.method=knn", "tune.shared_fbr=true", "tune.liblinear.solver=['l2r_lr']"],
         f"tune.shared_fbr = True: not used by train.method = 'knn' {KNN}; remove it"),
        (["tune.terms=[0, 100]", "select.top_k=100"],
         "tune.terms = [0, 100] and select.top_k = 100: tune.terms replaces the term selection; set one, not both"),
        (["tune.terms=[0, 100]", "select.reduction_factor=0.9"],
         "tune.terms = [0, 100] and select.reduction_factor = 0.9: tune.terms replaces the term selection; "
         "set one, not both"),
    ],
    ids=["knn_tune_fbr", "knn_shared_fbr", "terms_top_k", "terms_reduction"],
)
def test_settings_that_cannot_work_together_are_refused(overrides: list[str], message: str) -> None:
    """Before this check, kNN and Rocchio ignored these silently (kNN with a shared weight failed in training);
    tune.terms ignored select.
    """
    assert refused(REUTERS + overrides) == message


def test_another_methods_tables_are_kept_and_unused() -> None:
    """A file may hold several methods' tables and switch between them with --set train.method=...: only the
    method's own table reaches the decision rule, the record and the search.
    """
    config = load_config(None, [*REUTERS, "train.method=knn", "train.thresholding=scut", "train.knn.k=7",
                                "train.liblinear.C=0.5", "tune.liblinear.C=[1, 2]", "tune.nb.alpha=[0.1]"])
    assert config.train.liblinear.C == 0.5 and config.tune.liblinear.C == [1.0, 2.0]
    assert config.train.decision_rule().parameters.k == 7
    assert not hasattr(config.tune.lists("knn"), "C") and config.tune.lists("liblinear").C == [1.0, 2.0]


def test_settings_that_work_together_load() -> None:
    rocchio = load_config(None, REUTERS + ["train.method=rocchio", "train.thresholding=scutfbr", "tune.terms=[0, 100]",
                                           "tune.fbr=[0.1, 0.5]"])
    assert rocchio.tune.terms == [0, 100] and rocchio.tune.fbr == [0.1, 0.5]
    knn = load_config(None, REUTERS + ["train.method=knn", "train.thresholding=scutfbr", "train.knn.k=45"])
    assert knn.train.knn.k == 45


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["corpus.format=jsonl", f"corpus.path={REPO}", "evaluate.average_over=R(10)"],
         "evaluate.average_over = 'R(10)' is not allowed with corpus.format = 'jsonl'; allowed values: "
         "'train_positive', 'test_positive', 'all'"),
        ([*REUTERS, "evaluate.average_over=branch:CCAT"],
         "evaluate.average_over = 'branch:CCAT' is not allowed with corpus.format = 'reuters21578'; allowed values: "
         "'train_positive', 'test_positive', 'all', 'R(10)', 'R(90)', 'R(115)'"),
        ([*REUTERS, "evaluate.subsets={all = ['earn']}"],
         "evaluate.subsets.all: 'all' is the name of a built-in category set; choose another"),
        ([*REUTERS, "evaluate.subsets={core = []}", "evaluate.average_over=core"],
         "evaluate.subsets = {'core': []} is out of range; expected a table of name = [category, ...], no list empty"),
    ],
    ids=["reuters_set_of_jsonl", "branch_of_reuters", "subset_hides_all", "empty_subset"],
)
def test_average_over_names_a_set_the_corpus_has(overrides: list[str], message: str) -> None:
    """The evaluate stage failed on these after training ("not a category set of this run", "selects no category")."""
    assert refused(overrides) == message


def test_hierarchy_sets_are_allowed_for_hierarchical_corpora() -> None:
    for average_over in ("leaves", "branch:CCAT", "depth:2"):
        assert load_config(None, ["corpus.format=synthetic", f"evaluate.average_over={average_over}"])
    assert refused([*REUTERS, "evaluate.average_over=depth:1"]).startswith(
        "evaluate.average_over = 'depth:1' is not allowed with corpus.format = 'reuters21578'")
    assert load_config(None, [*REUTERS, "evaluate.subsets={core = ['earn']}", "evaluate.average_over=core"])


def test_sparktc_spark_keys_must_be_known() -> None:
    assert refused(REUTERS + ['spark.conf={"spark.sparktc.runtime.faults" = "train:0:exit"}']) == \
        "unknown key 'spark.sparktc.runtime.faults' in spark.conf; sparktc's own keys: spark.sparktc.fault, " \
        "spark.sparktc.driver_fault, spark.sparktc.task_memory_log, spark.sparktc.task_memory"
    assert refused(REUTERS + ['spark.conf={"spark.sparktc.fault" = "train:0:exit,trian:0:exit"}']) == (
        "spark.conf 'spark.sparktc.fault' = 'train:0:exit,trian:0:exit' is not allowed; expected "
        "'<point>:<partition>:<mode>' (several separated by commas) with point synthesize, parse, tokenize, weight, "
        "rank, train, score and mode exit, raise, memory")
    assert refused(REUTERS + ['spark.conf={"spark.sparktc.driver_fault" = "train:publish:explode"}']) == (
        "spark.conf 'spark.sparktc.driver_fault' = 'train:publish:explode' is not allowed; expected "
        "'<stage>:<point>:<mode>' with point start, publish, manifest and mode kill, raise, disk-full")
    conf = {"spark.sparktc.fault": "score:3:raise", "spark.anything.else": 1}
    assert load_config(None, REUTERS + ['spark.conf={"spark.sparktc.fault" = "score:3:raise", '
                                        '"spark.anything.else" = 1}']).spark.conf == conf


@pytest.mark.parametrize(("setting", "message"), [
    ('corpus.categories=[" earn"]', "category code ' earn' in corpus.categories has white space at its start"),
    ('corpus.categories=["earn", ""]', "category code '' in corpus.categories is empty; give the category a name"),
    ('evaluate.subsets={core = ["acq", "trade\\u00a0x"]}', "category code 'trade\\xa0x' in evaluate.subsets.core"),
])
def test_listed_category_codes_follow_the_readers_label_rule(setting, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, ["corpus.format=jsonl", "corpus.path=.", setting])
    assert str(error.value).startswith(message)


def test_title_and_bigram_settings_need_raw_texts_and_titles() -> None:
    config = load_config(None, [*REUTERS, "tokenize.ngrams=2", "tokenize.title_weight=3", "tokenize.title_terms=true"])
    assert (config.tokenize.ngrams, config.tokenize.title_weight, config.tokenize.title_terms) == (2, 3, True)
    jsonl = ["corpus.format=jsonl", f"corpus.path={REPO}"]
    assert load_config(None, [*jsonl, "tokenize.ngrams=2"]).tokenize.ngrams == 2
    assert refused([*jsonl, "tokenize.ngrams=2", "tokenize.title_terms=true"]) == (
        "tokenize.title_terms = true with corpus.format = 'jsonl': its documents have no title to count apart; "
        "formats with titles: reuters21578. Leave tokenize.title_weight = 1 and tokenize.title_terms = false")
    assert refused(["corpus.format=synthetic", "tokenize.ngrams=2"]) == (
        "tokenize.ngrams = 2 with corpus.format = 'synthetic': its documents come tokenized, and tokenize passes "
        "their tokens through as given; leave the tokenize settings at their defaults, or use a corpus of raw texts")
    assert load_config(None, [*jsonl, "tokenize.ngrams=3"]).tokenize.features().ngrams == 3
    assert refused([*REUTERS, "tokenize.ngrams=4"]).startswith("tokenize.ngrams = 4")
    assert refused(["corpus.format=synthetic", "tokenize.analyzer=sklearn"]).startswith(
        "tokenize.analyzer = sklearn with corpus.format = 'synthetic': its documents come tokenized")


# --- issue 38: [history] settings that cannot work, refused before Spark starts (the tracker: tests/tracking/)


def test_history_settings_that_cannot_work_are_refused(tmp_path: Path) -> None:
    file = tmp_path / "history.parquet"
    file.write_bytes(b"PAR1")
    assert refused([*REUTERS, f"history.path={file}"]) == (
        f"history.path = '{file}' is a file; the history is a directory of run records (made when missing): give a "
        "directory path")
    assert refused([*REUTERS, f"history.path={file}/history"]) == (
        f"history.path = '{file}/history': {file} is a file, so the history's directory cannot be made there; give "
        "a directory path")
    assert refused([*REUTERS, "history.path=/proc/sparktc/history"]).startswith(
        "history.path = '/proc/sparktc/history': the directory /proc (where /proc/sparktc/history would be made) "
        "cannot be written (")
    assert refused([*REUTERS, 'history.path="  "']) == (
        "history.path = '  ' is out of range; expected a directory or a URI, or \"\" for none (not blank)")
    for label in ("nightly\nREGRESSION", "a\tb", "bell\x07"):
        assert refused([*REUTERS, f"history.label={label}"]) == (
            f"history.label = {label!r} is out of range; expected printable characters only (no newline, tab or "
            "other control character)")
    made = load_config(None, [*REUTERS, f"history.path={tmp_path}/new/history", "history.label=nightly r90"])
    assert (made.history.path, made.history.label) == (f"{tmp_path}/new/history", "nightly r90")
    assert load_config(None, [*REUTERS, "history.path=s3://bucket/history"]).history.path == "s3://bucket/history"
    assert not (tmp_path / "new").exists()  # made by the run's first record, not by the check
