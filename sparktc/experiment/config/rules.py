"""The type-and-rule engine: a value checked against its section field's type hint, item by item, then against
the rule in the field's metadata, every refusal a :class:`~sparktc.errors.ConfigError` naming the key, the value
and what is allowed; a section built from checked values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from sparktc.errors import ConfigError
from sparktc.experiment.config.sections import SECTIONS
from sparktc.validation import setting_problem


def check_type(key: str, value: Any, expected: Any) -> Any:
    """``value`` as the type hint ``expected``: an integer where a float is expected becomes a float, every
    float must be finite, and each item of a ``list[...]`` or ``dict[str, ...]`` is checked under its own key.
    """
    container = get_origin(expected)
    if container is not None:
        if not isinstance(value, container):
            raise ConfigError(f"{key} = {value!r}: expected {container.__name__}, got {type(value).__name__}")
        item = get_args(expected)[-1]
        if container is list:
            return [check_type(f"{key}[{index}]", v, item) for index, v in enumerate(value)]
        return {name: check_type(f"{key}.{name}", v, item) for name, v in value.items()}
    if expected is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the floats
            number = math.inf
        if not math.isfinite(number):
            raise ConfigError(f"{key} = {value!r} is out of range; expected a finite number")
        return number
    if expected is int and isinstance(value, bool):
        raise ConfigError(f"{key} = {value!r}: expected an integer")
    if not isinstance(value, expected):
        raise ConfigError(f"{key} = {value!r}: expected {expected.__name__}, got {type(value).__name__}")
    return value


def check_value(key: str, value: Any, metadata: Mapping[str, Any]) -> None:
    """ConfigError unless ``value`` keeps the rule in ``metadata`` (:func:`sparktc.validation.setting_problem`)."""
    problem = setting_problem(key, value, metadata)
    if problem:
        raise ConfigError(problem)


def check_setting(section: str, key: str, value: Any, name: str, excluded: tuple = ()) -> Any:
    """``value`` for the setting ``section.key``, checked as a configuration's is (its type, then its field's rule,
    less the ``excluded`` values of its allowed ones) and named ``name`` in the ConfigError (:mod:`sparktc.ml`'s
    Params keep the settings' rules here).
    """
    metadata = dict({f.name: f for f in dataclasses.fields(SECTIONS[section])}[key].metadata)
    if excluded and "allowed" in metadata:
        metadata["allowed"] = tuple(v for v in metadata["allowed"] if v not in excluded)
    value = check_type(name, value, get_type_hints(SECTIONS[section])[key])
    check_value(name, value, metadata)
    return value


def section_of(name: str, values: Mapping[str, Any]) -> Any:
    """The section ``name`` of ``values``, each checked (an unknown key, its type, its rule) and the rest defaulted; a
    default that fails its rule (``corpus.format``) is a setting that must be given.
    """
    cls = SECTIONS[name]
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    checked = {}
    for key, value in values.items():
        if key not in fields:
            raise ConfigError(f"unknown key {name}.{key}; keys of [{name}]: {', '.join(fields)}")
        full = f"{name}.{key}"
        value = check_type(full, value, hints[key])
        check_value(full, value, fields[key].metadata)
        checked[key] = value
    instance = cls(**checked)
    for key, f in fields.items():  # a default that fails its rule (corpus.format) must be set
        if key not in checked:
            try:
                check_value(f"{name}.{key}", getattr(instance, key), f.metadata)
            except ConfigError:
                allowed = ", ".join(repr(a) for a in f.metadata.get("allowed", ()))
                raise ConfigError(f"{name}.{key} is not set; allowed values: {allowed}") from None
    return instance


def default_of(section: str, key: str) -> Any:
    """The default of ``section.key`` (a missing object for an unknown key, which validation refuses)."""
    found = {f.name: f for f in dataclasses.fields(SECTIONS[section])}.get(key)
    if found is None:
        return object()
    return found.default_factory() if found.default is dataclasses.MISSING else found.default


V = TypeVar("V")


def checked(check: Callable[..., V], *arguments: Any, **options: Any) -> V:
    """``check(*arguments, **options)`` (a :mod:`sparktc.validation` check of an argument), its ValueError a
    ConfigError: the Python API refuses a wrong argument as the command line refuses a wrong flag.
    """
    try:
        return check(*arguments, **options)
    except ValueError as error:
        raise ConfigError(str(error)) from None

