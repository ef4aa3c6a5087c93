"""Loading a configuration: a TOML file (or a packaged configuration, or a dict of sections), a paper's preset,
then ``--set section.key=value`` overrides in order, every section checked (:mod:`~sparktc.experiment.config.rules`),
then the settings together (:mod:`~sparktc.experiment.config.checks`) and the local paths
(:mod:`~sparktc.experiment.config.paths`), all before Spark starts.
"""

from __future__ import annotations

import copy
import os
import sys
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from sparktc import packaged
from sparktc.errors import ConfigError
from sparktc.experiment.config.checks import check_combinations
from sparktc.experiment.config.paths import resolve_paths
from sparktc.experiment.config.rules import checked, default_of, section_of, setting_keys
from sparktc.experiment.config.sections import SECTIONS, Config
from sparktc.experiment.presets import PRESET_SECTIONS, PRESETS, SET, apply_preset, attribute
from sparktc.models.registry import upgraded
from sparktc.validation import check_path, check_string, check_strings


def parse_override(text: str) -> tuple[str, str, Any]:
    """``section.key=value`` (or ``section.table.key=value``, a method's table: ``train.knn.k=30``) to its section,
    key (``knn.k``) and value; the value is read as TOML, else taken as a plain string.
    """
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected section.key=value")
    dotted, raw = text.split("=", 1)
    parts = dotted.strip().split(".")
    if len(parts) not in (2, 3) or not all(parts):
        raise ConfigError(f"--set {text!r}: the key must be section.key or section.table.key, e.g. train.folds=5 or "
                          "train.liblinear.C=0.5")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return parts[0], ".".join(parts[1:]), value


def _put(override: str, values: dict[str, Any], key: str, value: Any) -> None:
    """``values[key] = value``, a dotted ``key`` (``knn.k``) into its table, made when missing."""
    *tables, name = key.split(".")
    for table in tables:
        values = values.setdefault(table, {})
        if not isinstance(values, dict):
            raise ConfigError(f"--set {override!r}: {table} is a setting, not a table")
    values[name] = value


def _setting(raw: Mapping[str, Any], key: str) -> Any:
    """The value ``raw`` (TOML tables by section) gives the setting ``key`` (``train.knn.k``), else its default."""
    section, name, *rest = key.split(".")
    value = raw.get(section, {}).get(name, default_of(section, name))
    for part in rest:  # a method's table: its given value, else the table's default
        value = value.get(part, default_of(section, name).get(part)) if isinstance(value, Mapping) else object()
    return value


def _settings(prefix: str, values: Mapping[str, Any]) -> list[str]:
    """The settings ``values`` gives, as dotted keys under ``prefix``: a table's (``[train.knn]``) one level down."""
    return [key for name, value in values.items() for key in (
        _settings(f"{prefix}.{name}", value) if isinstance(value, Mapping) else [f"{prefix}.{name}"])]


def _read_toml(path: str) -> dict[str, Any]:
    """The settings in the TOML file ``path``, or in the packaged configuration of that name when no such file exists
    (:func:`sparktc.packaged.configuration`); a file that cannot be read or parsed is a ConfigError naming it.
    """
    try:
        data = packaged.configuration(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"--config {path}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"--config {path} is a directory; expected a TOML file") from None
    except OSError as error:  # permission denied, an I/O error ...
        raise ConfigError(f"--config {path}: cannot be read: {error.strerror or error}") from None
    try:
        # A byte-order mark (Windows' Notepad writes one) is read past, not refused: tomllib reports it as an "invalid
        # statement at line 1, column 1" that no one can see, and TOML 1.0 only asks for UTF-8, which it still is.
        return tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"--config {path}: not UTF-8 text "
                          f"(byte {error.start}: {data[error.start:error.start + 1]!r}); "
                          "save it as UTF-8, as TOML requires") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {path}: not valid TOML: {error}") from None


def check_overrides(overrides: Sequence[str], preset: str) -> tuple[tuple[str, ...], str]:
    """``overrides`` and ``preset`` as given, or ConfigError unless the overrides are a list or tuple of strings (a
    bare string is refused, not read letter by letter) and the preset a string.
    """
    return (checked(check_strings, "overrides", overrides),
            checked(check_string, "preset", preset, "a preset's name, or \"\""))


def load_config(path: str | os.PathLike[str] | Mapping[str, Any] | None, overrides: Sequence[str] = (),
                preset: str = "", documents: bool = False) -> Config:
    """Read a TOML file (or take a dict of sections, as a notebook gives them; or nothing), replace its [select],
    [train] and [tune] by ``preset``'s when one is named
    (:mod:`sparktc.experiment.presets`; the settings it drops are told on stderr), apply overrides in order, and
    validate everything. Under a preset, a refusal that names a setting only the preset gave says where each
    setting it names came from, and advises on what the user wrote (:func:`sparktc.experiment.presets.attribute`).
    A ``path`` that is not a ``str``, an ``os.PathLike``, a mapping or None, ``overrides`` that are not a list or
    tuple of strings (a bare string included) and a ``preset`` that is not a string are ConfigErrors naming them.
    ``documents``: the corpus is a DataFrame given beside the configuration (:func:`sparktc.run_pipeline`'s
    ``documents=``), so a table corpus needs no corpus.path.
    """
    if path is not None and not isinstance(path, Mapping):
        # checked here, as callers other than the command line (the Python API) give any object
        path = checked(check_path, "config", path, also=", a dict of sections or None")
    overrides, preset = check_overrides(overrides, preset)
    if isinstance(path, Mapping):
        raw: dict[str, Any] = {name: dict(values) if isinstance(values, Mapping) else values
                               for name, values in copy.deepcopy(dict(path)).items()}
        path = "(the given dict)"
    else:
        raw = {} if path is None else _read_toml(path)
    # Where each setting's value comes from, so that a refusal under a preset never blames the user for its settings.
    origins = {key: f"--config {path}" for section, values in raw.items() if isinstance(values, dict)
               for key in _settings(section, values)}
    if preset:
        try:
            given, raw = raw, apply_preset(raw, preset)
        except KeyError as error:
            raise ConfigError(f"--preset {error.args[0]}") from None
        origins = {key: origin for key, origin in origins.items() if key.split(".")[0] not in PRESET_SECTIONS}
        origins |= {key: f"--preset {preset}" for key in PRESETS[preset].settings}
        dropped = [key for section in PRESET_SECTIONS for key in _settings(section, given.get(section) or {})
                   if _setting(raw, key) != _setting(given, key)]
        if dropped:
            print(f"sparktc: --preset {preset} replaces [{'], ['.join(PRESET_SECTIONS)}] of {path}, whose "
                  f"{', '.join(dropped)} it does not keep", file=sys.stderr)
    for override in overrides:
        section, key, value = parse_override(override)
        raw.setdefault(section, {})
        if not isinstance(raw[section], dict):
            raise ConfigError(f"--set {override!r}: [{section}] is not a section")
        _put(override, raw[section], key, value)
        origins[f"{section}.{key}"] = SET
    for name, values in raw.items():
        if name not in SECTIONS:
            raise ConfigError(f"unknown section [{name}]; sections: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{name} = {values!r}: expected a [{name}] table")
    try:
        config = Config(**{name: section_of(name, raw.get(name, {})) for name in SECTIONS})
        check_combinations(config)
    except ConfigError as error:
        if not preset:
            raise
        known = {key for name in SECTIONS for key in setting_keys(name)}
        message = attribute(str(error), origins, preset, known)
        if message == str(error):
            raise
        raise ConfigError(message) from None
    return resolve_paths(config, documents)


def load_section(name: str, values: Mapping[str, Any], overrides: Sequence[str] = ()) -> Any:
    """One section from stored values (e.g. a run's recorded settings, a model bundle's; [train] and [tune] stored
    before each method owned its table read with their keys mapped, :func:`sparktc.models.registry.upgraded`) plus
    ``name.key=value`` overrides.
    """
    merged = upgraded(name, values) if name in ("train", "tune") else dict(values)
    for override in overrides:
        section, key, value = parse_override(override)
        if section != name:
            raise ConfigError(f"--set {override!r}: only [{name}] settings apply here")
        _put(override, merged, key, value)
    return section_of(name, merged)
