"""The type-and-rule engine: a value checked against its section field's type hint, item by item, then against
the rule in the field's metadata, every refusal a :class:`~sparktc.errors.ConfigError` naming the key, the value
and what is allowed; a section built from checked values.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from sparktc.errors import ConfigError
from sparktc.experiment.config.sections import SECTIONS
from sparktc.models.registry import RENAMED
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


def table_class(section: str) -> type:
    """The dataclass of the table ``section``: a section (``train``) or a method's table in it (``train.knn``)."""
    first, *rest = section.split(".")
    cls = SECTIONS[first]
    for part in rest:
        cls = get_type_hints(cls)[part]
    return cls


def check_setting(section: str, key: str, value: Any, name: str, excluded: tuple = ()) -> Any:
    """``value`` for the setting ``section.key`` (``section`` a section or a method's table in one: ``train.knn``),
    checked as a configuration's is (its type, then its field's rule, less the ``excluded`` values of its allowed
    ones) and named ``name`` in the ConfigError (:mod:`sparktc.ml`'s Params keep the settings' rules here).
    """
    cls = table_class(section)
    metadata = dict({f.name: f for f in dataclasses.fields(cls)}[key].metadata)
    if excluded and "allowed" in metadata:
        metadata["allowed"] = tuple(v for v in metadata["allowed"] if v not in excluded)
    value = check_type(name, value, get_type_hints(cls)[key])
    check_value(name, value, metadata)
    return value


def toml_value(value: Any) -> str:
    """A value as the user writes it in TOML and ``--set`` (``true``, ``"binary"``, ``[1.0, 0.1]``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return f"[{', '.join(toml_value(item) for item in value)}]"
    return repr(value)


def renamed(key: str, value: Any) -> str | None:
    """The refusal of a setting given by its name before each method owned its table
    (:data:`sparktc.models.registry.RENAMED`), naming the new key ("train.C is now train.liblinear.C: write
    [train.liblinear] C = 0.5 or --set train.liblinear.C=0.5"); None for any other key.
    """
    new = RENAMED.get(key)
    if new is None:
        return None
    table, _, name = new.rpartition(".")
    shown = toml_value(value)
    return f"{key} is now {new}: write [{table}] {name} = {shown} or --set {new}={shown}"


def section_of(name: str, values: Mapping[str, Any]) -> Any:
    """The section ``name`` of ``values``, each checked (an unknown key, its type, its rule) and the rest defaulted; a
    default that fails its rule (``corpus.format``) is a setting that must be given. A method's table
    (``[train.knn]``) is checked as a section of its own.
    """
    return _table(name, SECTIONS[name], values)


def _table(name: str, cls: type, values: Mapping[str, Any]) -> Any:
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    checked = {}
    for key, value in values.items():
        full = f"{name}.{key}"
        if key not in fields:
            raise ConfigError(renamed(full, value) or f"unknown key {full}; keys of [{name}]: {', '.join(fields)}")
        if dataclasses.is_dataclass(hints[key]):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{full} = {value!r}: expected a [{full}] table")
            checked[key] = _table(full, hints[key], value)
            continue
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
    """The default of ``section.key`` (a method's table as a dict; a missing object for an unknown key, which
    validation refuses).
    """
    found = {f.name: f for f in dataclasses.fields(SECTIONS[section])}.get(key)
    if found is None:
        return object()
    value = found.default_factory() if found.default is dataclasses.MISSING else found.default
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


def setting_keys(section: str, cls: type | None = None) -> list[str]:
    """Every setting of ``section`` as ``section.key``, a method table's as ``section.table.key``."""
    cls = cls or SECTIONS[section]
    hints = get_type_hints(cls)
    return [key for f in dataclasses.fields(cls) for key in (
        setting_keys(f"{section}.{f.name}", hints[f.name]) if dataclasses.is_dataclass(hints[f.name])
        else [f"{section}.{f.name}"])]


def settings_table(section: str) -> str:
    """The settings of ``section`` (``train``, ``tune``) as a Markdown table: each key (a method's table's as
    ``train.knn.k``), its default, and its meaning and rule as its field declares them (the docs' settings reference,
    made from the fields by ``scripts/settings_reference.py`` when the site is built).
    """
    rows = ["| key | default | meaning |", "|---|---|---|"]
    for key in setting_keys(section):
        table, _, name = key.rpartition(".")
        found = {f.name: f for f in dataclasses.fields(table_class(table))}[name]
        default = found.default_factory() if found.default is dataclasses.MISSING else found.default
        metadata = found.metadata
        allowed = ("one of " + ", ".join(f"`{toml_value(a)}`" for a in metadata["allowed"])
                   if "allowed" in metadata else "")
        meaning, rule = metadata.get("doc", ""), metadata.get("description") or allowed
        words = "; ".join(part for part in (meaning, "" if rule in meaning else rule) if part)  # the rule said once
        rows.append(f"| `{key}` | `{toml_value(default)}` | {words.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


V = TypeVar("V")


def checked(check: Callable[..., V], *arguments: Any, **options: Any) -> V:
    """``check(*arguments, **options)`` (a :mod:`sparktc.validation` check of an argument), its ValueError a
    ConfigError: the Python API refuses a wrong argument as the command line refuses a wrong flag.
    """
    try:
        return check(*arguments, **options)
    except ValueError as error:
        raise ConfigError(str(error)) from None

