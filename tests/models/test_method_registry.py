"""The method registry: every method is one registered ``Method``, declared by its own module, whose parameters
are its [train.NAME] table's keys with their meanings and rules; and no module but a method's own and the registry
names a method to branch on it, so that a new method is its module, one registration line, a configuration example
and its tests.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib

import pytest
from conftest import REPO
from reference import declaring, name_branches

from sparktc.experiment.config import SECTIONS, ConfigError, TrainConfig, TuneConfig, load_config, load_section
from sparktc.experiment.config.rules import setting_keys
from sparktc.models.method import FromSums, InTasks, Neighbours, PerCategory
from sparktc.models.registry import METHODS, RENAMED, describe, upgraded_method

PACKAGE = REPO / "sparktc"


METHOD_MODULES = declaring(PACKAGE / "models", "METHOD")
#: The modules that may name methods: each method's own and the registry.
NAMING_METHODS = {*METHOD_MODULES, PACKAGE / "models" / "registry.py"}


def test_every_method_module_is_registered_once_and_the_train_section_offers_them_all():
    assert sorted(f"{method.fitting.__module__}" for method in METHODS.values()) == sorted(
        f"sparktc.models.{path.stem}" for path in METHOD_MODULES)
    assert dataclasses.fields(TrainConfig)[0].metadata["allowed"] == tuple(METHODS)
    assert next(iter(METHODS)) == "liblinear" == TrainConfig().method  # the default


@pytest.mark.parametrize("name", list(METHODS))
def test_a_method_declares_parameters_that_are_train_keys_with_their_rules(name):
    method = METHODS[name]
    defaults = method.parameters()  # the defaults pass its own rules
    assert getattr(TrainConfig(), name) == defaults  # its [train.NAME] table
    for table in (method.parameters, method.search or method.parameters):
        assert all(field.metadata.get("doc") for field in dataclasses.fields(table))  # each field says what it is
    if method.search is not None:
        assert getattr(TuneConfig(), name) == method.search()
        assert set(method.searched) <= {field.name for field in dataclasses.fields(method.parameters)}
    rule = TrainConfig(method=name).decision_rule()
    assert rule.parameters == defaults and rule.spec is method
    shared_tune = {f"tune.{field.name}" for field in dataclasses.fields(TuneConfig)}
    assert set(method.unused) <= shared_tune and (method.unused_reason or not method.unused)
    assert set(method.variant) <= {field.name for field in dataclasses.fields(method.parameters)}
    fitting = method.fitting(defaults, 100)
    assert isinstance(fitting, PerCategory | Neighbours | FromSums | InTasks)
    assert method.joint(defaults) == isinstance(fitting, FromSums | InTasks)
    scores = method.score_range(defaults, True)
    assert scores.natural is None or scores.low <= scores.natural < scores.high or math.isinf(scores.low)
    lines = describe({"name": name, **defaults.record()})
    assert lines and lines[0].startswith(f"- Method: `{name}`") and "\u2014" not in "".join(lines)


def test_an_old_flat_key_is_refused_naming_its_new_key_and_read_where_stored(tmp_path):
    """Every name a setting had before each method owned its table is refused, in one line naming the new key; a
    bundle's stored [train] and [tune] and a record's method under the old names read as the new.
    """
    keys = {key for section in SECTIONS for key in setting_keys(section)}
    corpus = ["corpus.format=synthetic"]
    for old, new in RENAMED.items():
        assert new in keys and old not in keys
        value = "true" if new.rpartition(".")[2].startswith("shared_") else "1"
        with pytest.raises(ConfigError) as refused:
            load_config(None, [*corpus, f"{old}={value}"])
        table, _, key = new.rpartition(".")
        assert str(refused.value) == f"{old} is now {new}: write [{table}] {key} = {value} or --set {new}={value}"
    in_file = {"corpus": {"format": "synthetic"}, "train": {"knn_k": 30}}
    assert str(pytest.raises(ConfigError, load_config, in_file).value) == (
        "train.knn_k is now train.knn.k: write [train.knn] k = 30 or --set train.knn.k=30")
    stored = load_section("train", {"method": "knn", "knn_k": 7, "C": 0.5, "nb_model": "binary"})
    assert (stored.knn.k, stored.liblinear.C, stored.nb.model) == (7, 0.5, "binary")
    assert load_section("tune", {"C": [1.0], "nb_alpha": [0.1], "terms": [5]}).lists("liblinear").C == [1.0]
    assert upgraded_method({"name": "nb", "nb_alpha": 0.5, "nb_model": "binary"}) == {
        "name": "nb", "alpha": 0.5, "model": "binary"}


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_has_a_configuration_example_that_loads(name, tmp_path):
    examples = [path for path in sorted((REPO / "conf").glob("*.toml"))
                if tomllib.loads(path.read_text()).get("train", {}).get("method", "liblinear") == name]
    examples += [path for path in sorted((REPO / "benchmarks").glob("*.py")) if f"train.method={name}" in
                 path.read_text()]
    assert examples, f"no conf/*.toml nor benchmark with train.method = {name!r}"
    for path in (path for path in examples if path.suffix == ".toml"):
        assert load_config(str(path), [f"corpus.path={tmp_path}"]).train.method == name


def test_the_branch_finder_finds_method_branches():
    assert name_branches('if rule.method == "knn": pass', METHODS) == ["line 1: 'knn'"]
    assert name_branches('fit = {"llsf": a, "nnet": b}[rule.method]', METHODS) == ["line 1: 'llsf'", "line 1: 'nnet'"]
    assert name_branches('linear = method not in ("knn", "nnet")', METHODS) == ["line 1: 'knn'", "line 1: 'nnet'"]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_but_a_methods_own_and_the_registry_branches_on_a_method_name(path):
    if path in NAMING_METHODS:
        return
    assert name_branches(path.read_text(), METHODS) == [], f"{path.relative_to(REPO)} names methods"
