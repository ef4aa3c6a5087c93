"""The method registry: every method is one registered ``Method``, declared by its own module, whose parameters
are the [train] keys with their rules; and no module but a method's own and the registry names a method to branch
on it, so that a new method is its module, one registration line, a configuration example and its tests.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib

import pytest
from conftest import REPO
from reference import declaring, name_branches

from sparktc.experiment.config import TrainConfig, TuneConfig, load_config
from sparktc.models.method import SEARCH_KEYS, FromSums, InTasks, Neighbours, PerCategory
from sparktc.models.registry import METHODS, describe, parameter_fields

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
    keys = {field.name: field for field in dataclasses.fields(TrainConfig)}
    defaults = method.parameters()  # the defaults pass its own rules
    for field in dataclasses.fields(method.parameters):
        assert keys[field.name].default == getattr(defaults, field.name)
        assert dict(keys[field.name].metadata) == dict(field.metadata)
    rule = TrainConfig(method=name).decision_rule()
    assert rule.parameters == defaults and rule.spec is method
    tune_keys = {f"tune.{field.name}" for field in dataclasses.fields(TuneConfig)}
    assert set(method.refused) <= tune_keys and (method.unused_reason or not method.refused)
    assert set(method.searched) <= set(SEARCH_KEYS) and set(method.variant) <= set(keys)
    fitting = method.fitting(defaults, 100)
    assert isinstance(fitting, PerCategory | Neighbours | FromSums | InTasks)
    assert method.joint(defaults) == isinstance(fitting, FromSums | InTasks)
    scores = method.score_range(defaults, True)
    assert scores.natural is None or scores.low <= scores.natural < scores.high or math.isinf(scores.low)
    lines = describe({"name": name, **defaults.record()})
    assert lines and lines[0].startswith(f"- Method: `{name}`") and "\u2014" not in "".join(lines)


def test_parameter_names_belong_to_one_method():
    names = [name for name, _, _ in parameter_fields()]
    assert len(names) == len(set(names))


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
