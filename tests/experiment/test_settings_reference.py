"""The settings reference of docs/methods.md: every [train] and [tune] setting, a method's table's too, with its
default and its meaning, made from the configuration's fields by the site's hook (scripts/settings_reference.py).
"""

from __future__ import annotations

import dataclasses
import importlib.util

import pytest
import yaml
from conftest import REPO

from sparktc.experiment.config import settings_table, table_class
from sparktc.experiment.config.rules import setting_keys, toml_value


@pytest.mark.parametrize("section", ["train", "tune"])
def test_every_setting_has_a_meaning_and_a_row_of_the_reference(section: str) -> None:
    rows = {row.split(" | ")[0].strip("| `"): row for row in settings_table(section).splitlines()[2:]}
    keys = setting_keys(section)
    assert list(rows) == keys and any(key.count(".") == 2 for key in keys)  # the methods' tables' keys too
    for key in keys:
        table, _, name = key.rpartition(".")
        found = {f.name: f for f in dataclasses.fields(table_class(table))}[name]
        doc = found.metadata.get("doc", "")
        assert doc, f"{key} has no meaning: give its field metadata=meaning(...)"
        default = found.default_factory() if found.default is dataclasses.MISSING else found.default
        assert f"| `{toml_value(default)}` | {doc.replace('|', chr(92) + '|')}" in rows[key]


def test_the_methods_page_shows_both_tables_when_the_site_is_built() -> None:
    spec = importlib.util.spec_from_file_location("settings_reference", REPO / "scripts" / "settings_reference.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (REPO / "docs" / "methods.md").read_text()
    built = hook.on_page_markdown(page)
    assert settings_table("train") in built and settings_table("tune") in built and "<!-- settings:" not in built
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text().split("\nplugins:")[0])
    assert "scripts/settings_reference.py" in config["hooks"]
