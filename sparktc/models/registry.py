"""The classification methods sparktc trains, by their ``train.method`` name: one registration line each.

Each method's module declares it as ``METHOD`` (:class:`sparktc.models.method.Method`); everything that
depends on the method (the configuration's [train.NAME] and [tune.NAME] tables and checks, training, tuning,
scoring, the model bundle, the report) asks here. To add a method, write its module and add it to :data:`METHODS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparktc.models import knn, linear, llsf, naive_bayes, nnet, rocchio, sklearn_linear
from sparktc.models.method import Method

__all__ = ["METHODS", "RENAMED", "describe", "upgraded", "upgraded_method"]

#: The methods by name, the first the default.
METHODS: dict[str, Method] = {method.name: method for method in (
    linear.METHOD,
    rocchio.METHOD,
    knn.METHOD,
    llsf.METHOD,
    naive_bayes.METHOD,
    nnet.METHOD,
    sklearn_linear.METHOD,
)}


#: The settings of sparktc before each method owned its table (one flat [train] and [tune] for every method), by
#: their key then and now. The one place the old names live: a configuration that gives one is refused, naming the
#: new key (:mod:`sparktc.experiment.config`); a model bundle or a run record written before is read with them
#: mapped (:func:`upgraded`, :func:`upgraded_method`).
RENAMED: dict[str, str] = {
    **{f"train.{key}": f"train.liblinear.{key}" for key in ("solver", "C", "epsilon", "bias", "positive_weight",
                                                           "one_class")},
    "train.rocchio_beta": "train.rocchio.beta", "train.rocchio_gamma": "train.rocchio.gamma",
    "train.knn_k": "train.knn.k", "train.llsf_k": "train.llsf.k",
    "train.nb_alpha": "train.nb.alpha", "train.nb_model": "train.nb.model",
    **{f"train.nnet_{key}": f"train.nnet.{key}" for key in ("hidden", "epochs", "l2", "learning_rate")},
    "train.sklearn_C": "train.sklearn_linear.C", "train.sklearn_max_iter": "train.sklearn_linear.max_iter",
    **{f"tune.{key}": f"tune.liblinear.{key}" for key in ("C", "solver", "positive_weight", "shared_C",
                                                         "shared_positive_weight")},
    "tune.nb_alpha": "tune.nb.alpha",
}


def upgraded(section: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """A stored [train] or [tune] section (a bundle's, a record's) with the keys of :data:`RENAMED` moved to their
    method's table: ``{"C": 0.5}`` in [train] is ``{"liblinear": {"C": 0.5}}``.
    """
    moved: dict[str, Any] = {}
    for key, value in values.items():
        new = RENAMED.get(f"{section}.{key}")
        if new is None:
            moved[key] = dict(value) if isinstance(value, Mapping) else value
            continue
        _, method, name = new.split(".")
        moved.setdefault(method, {})[name] = value
    return moved


def upgraded_method(record: Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``method`` record (its name and parameters, :func:`sparktc.models.decision.decision_record`) with its
    parameters' old names (:data:`RENAMED`) replaced by their names in its table.
    """
    prefix = f"train.{record.get('name')}."
    names = {old.split(".", 1)[1]: new.removeprefix(prefix) for old, new in RENAMED.items() if new.startswith(prefix)}
    return {names.get(key, key): value for key, value in record.items()}


def describe(record: Mapping[str, Any]) -> list[str]:
    """``report.md``'s lines about the method of a run's record (name and parameters; no record: the default)."""
    record = upgraded_method(record or {"name": next(iter(METHODS))})
    method = METHODS.get(record["name"])
    if method is None:
        return [f"- Method: `{record['name']}`"]
    return method.describe(record)
