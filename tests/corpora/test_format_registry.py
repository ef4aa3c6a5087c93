"""The corpus-format registry: every format the configuration allows is one registered ``CorpusFormat``, declared
by its own module, with a configuration example; and no module but a format's own and the registry names a format
to branch on it (a comparison, a table or a tuple of format names), so that a new format is its module, one
registration line, a configuration example and its tests.
"""

from __future__ import annotations

import dataclasses
import tomllib

import pytest
from conftest import REPO
from reference import declaring, name_branches

from sparktc.corpora.formats import ASSEMBLIES, TABLE
from sparktc.corpora.registry import CLASSIFY_READERS, FORMATS
from sparktc.experiment.config import CorpusConfig, load_config

PACKAGE = REPO / "sparktc"


FORMAT_MODULES = declaring(PACKAGE / "corpora", "FORMAT")
#: The modules that may name formats: each format's own and the registry.
NAMING_FORMATS = {*FORMAT_MODULES, PACKAGE / "corpora" / "registry.py"}


def test_every_allowed_format_is_registered_under_its_name():
    [allowed] = [f.metadata["allowed"] for f in dataclasses.fields(CorpusConfig) if f.name == "format"]
    assert list(allowed) == list(FORMATS) == ["reuters21578", "lyrl2004", "lyrl2004_vectors", "jsonl", "libsvm",
                                              "libmultilabel_text", "table", "synthetic"]
    assert all(name == fmt.name for name, fmt in FORMATS.items())


def test_every_format_module_is_registered_once():
    registry = (PACKAGE / "corpora" / "registry.py").read_text()
    for path in FORMAT_MODULES:
        assert registry.count(f"    {path.stem}.FORMAT,\n") == 1, path.stem
    assert len(FORMAT_MODULES) == len(FORMATS)


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_format_says_how_it_is_read(name):
    fmt = FORMATS[name]
    if fmt.written_as:  # synthesized, then read as the format it is written in
        assert fmt.written_as in FORMATS and not FORMATS[fmt.written_as].written_as
        assert fmt.names is None and fmt.reader is None and not fmt.assembly
        return
    if fmt.assembly == TABLE:  # Spark reads the table: no files of the format's to list or parse
        assert fmt.names is None and fmt.reader is None and fmt.hint and fmt.settings and fmt.settings_problem
        assert not fmt.category_sets and not fmt.tokenized and fmt.tokenized_by is not None
        return
    assert fmt.assembly in ASSEMBLIES and fmt.names and fmt.hint and fmt.reader
    assert fmt.default_category_set in (*fmt.category_sets, "") and bool(fmt.default_category_set) == bool(
        fmt.category_sets)
    assert not fmt.vectors or fmt.tokenized  # a vector's tokens are its features
    assert fmt.chosen_sets is None or fmt.category_sets
    if fmt.classify is not None:
        assert CLASSIFY_READERS[name] is fmt.classify


def test_the_facts_the_formats_had_before_the_registry():
    """The tables the registry replaced (records.VECTOR_FORMATS and TOKENIZED_FORMATS, config.LYRL2004_FORMATS and
    HIERARCHICAL_FORMATS, ingest's CLEAN_PATH_FORMATS, the defaults of category_set_of) hold as they were.
    """
    def having(fact):
        return [name for name, fmt in FORMATS.items() if fact(fmt)]

    assert having(lambda fmt: fmt.vectors) == ["lyrl2004_vectors", "libsvm"]
    assert having(lambda fmt: fmt.tokenized and not fmt.written_as) == ["lyrl2004", "lyrl2004_vectors", "libsvm"]
    assert having(lambda fmt: fmt.hierarchical) == ["lyrl2004", "lyrl2004_vectors", "synthetic"]
    assert having(lambda fmt: fmt.assembly == "qrels") == ["lyrl2004", "lyrl2004_vectors"]
    assert having(lambda fmt: fmt.assembly in ("qrels", "labelled")) == ["lyrl2004", "lyrl2004_vectors", "jsonl",
                                                                          "libsvm", "libmultilabel_text"]
    assert {name: fmt.default_category_set for name, fmt in FORMATS.items()} == {
        "reuters21578": "R90", "lyrl2004": "topics", "lyrl2004_vectors": "topics", "jsonl": "", "libsvm": "",
        "libmultilabel_text": "", "table": "", "synthetic": "topics"}
    assert FORMATS["reuters21578"].averaging_sets == ("R(10)", "R(90)", "R(115)")
    assert list(CLASSIFY_READERS) == ["lyrl2004", "jsonl", "libmultilabel_text", "text"]


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_has_a_configuration_example_that_loads(name, tmp_path):
    examples = [path for path in sorted((REPO / "conf").glob("*.toml"))
                if tomllib.loads(path.read_text()).get("corpus", {}).get("format") == name]
    assert examples, f"no conf/*.toml with corpus.format = {name!r}"
    for path in examples:
        assert load_config(str(path), [f"corpus.path={tmp_path}"]).corpus.format == name


def format_branches(source: str) -> list[str]:
    return name_branches(source, FORMATS)


def test_the_branch_finder_finds_branches():
    assert format_branches('if corpus.format == "reuters21578": pass') == ["line 1: 'reuters21578'"]
    assert format_branches('x = fmt not in ("lyrl2004", "synthetic")') == ["line 1: 'lyrl2004'", "line 1: 'synthetic'"]
    assert format_branches('READERS = {"jsonl": read}') == ["line 1: 'jsonl'"]
    assert format_branches('CLEAN = (*TOKENIZED, "jsonl")') == ["line 1: 'jsonl'"]
    assert format_branches('def f(input_format: str = "jsonl"): return input_format') == []
    assert format_branches('OUTPUTS = ("parquet", "jsonl")\n__all__ = ["jsonl", "libsvm"]') == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_but_a_formats_own_and_the_registry_branches_on_a_format_name(path):
    if path in NAMING_FORMATS:
        return
    assert format_branches(path.read_text()) == [], f"{path.relative_to(REPO)} names corpus formats"
