"""The benchmarks' import rule: a benchmark imports no other benchmark, only the harness (``benchmarks/harness.py``
and the ``benchmarks/harness_*.py`` modules, :mod:`benchmarks.harness`), and the harness imports no benchmark.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

BENCHMARKS = REPO / "benchmarks"
MODULES = sorted(path.stem for path in BENCHMARKS.glob("*.py") if path.stem != "__init__")


def is_harness(module: str) -> bool:
    """Whether ``module`` (a name under benchmarks/) is part of the harness."""
    return module == "harness" or module.startswith("harness_")


def benchmark_imports(path: Path) -> set[str]:
    """The modules of benchmarks/ that ``path`` imports, however it imports them (at the top or inside a function)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] == "benchmarks":
                found.update(parts[1:2] or [alias.name for alias in node.names])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names
                         if alias.name.startswith("benchmarks.") and "." in alias.name)
    return found


def test_the_rule_sees_an_import_of_another_benchmark(tmp_path: Path) -> None:
    source = tmp_path / "example.py"
    source.write_text("from benchmarks import harness, rcv1_scale\nimport benchmarks.lean_peer\n\n"
                      "def f():\n    from benchmarks.harness_tables import DASH\n")
    assert benchmark_imports(source) == {"harness", "rcv1_scale", "lean_peer", "harness_tables"}


@pytest.mark.parametrize("module", MODULES)
def test_a_benchmark_imports_only_the_harness(module: str) -> None:
    others = {name for name in benchmark_imports(BENCHMARKS / f"{module}.py") if not is_harness(name)}
    assert not others, f"benchmarks/{module}.py imports {sorted(others)}: move what it shares into the harness"


def test_the_harness_is_what_the_benchmarks_share() -> None:
    """Every harness module is used by a benchmark or another harness module: the harness holds no dead part."""
    used = set().union(*(benchmark_imports(BENCHMARKS / f"{module}.py") for module in MODULES))
    assert {module for module in MODULES if is_harness(module)} <= used
