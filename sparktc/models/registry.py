"""The classification methods sparktc trains, by their ``train.method`` name: one registration line each.

Each method's module declares it as ``METHOD`` (:class:`sparktc.models.method.Method`); everything that
depends on the method (the configuration's [train] keys and checks, training, tuning, scoring, the model
bundle, the report) asks here. To add a method, write its module and add it to :data:`METHODS`.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any

from sparktc.models import knn, linear, llsf, naive_bayes, nnet, rocchio, sklearn_linear
from sparktc.models.method import Method

__all__ = ["METHODS", "describe", "parameter_fields"]

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


def parameter_fields() -> list[tuple[str, Any, dataclasses.Field]]:
    """Every method's parameters as ``dataclasses.make_dataclass`` takes fields (name, type, field with its
    default and rule), in registry order: the method-specific keys of the [train] section. A name is one
    method's only, since the section is flat.
    """
    owner: dict[str, str] = {}
    fields = []
    for method in METHODS.values():
        hints = typing.get_type_hints(method.parameters)
        for field in dataclasses.fields(method.parameters):
            if field.name in owner:
                raise ValueError(f"train.{field.name} is a parameter of both {owner[field.name]!r} and "
                                 f"{method.name!r}; give one of them another name")
            owner[field.name] = method.name
            fields.append((field.name, hints[field.name], dataclasses.field(default=field.default,
                                                                            metadata=field.metadata)))
    return fields


def describe(record: Mapping[str, Any]) -> list[str]:
    """``report.md``'s lines about the method of a run's record (name and parameters; no record: the default)."""
    record = record or {"name": next(iter(METHODS))}
    method = METHODS.get(record["name"])
    if method is None:
        return [f"- Method: `{record['name']}`"]
    return method.describe(record)
