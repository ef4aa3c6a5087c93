"""sparktc's modules import one another without a circle (issue 40: ``runtime``'s progress -> runner ->
stage_report -> progress was the one).

The graph is read from the source with :mod:`ast`: each module's imports of sparktc modules at its top level and in
its ``if TYPE_CHECKING:`` blocks (a circle there is a circle in the design, even when Python never follows it).
Imports inside functions are left out: they are the deliberate late ones (a worker's dependency, a heavy library).
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "sparktc"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(path: Path) -> set[str]:
    """The sparktc modules ``path`` imports at its top level and under ``if TYPE_CHECKING:``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.body)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:  # `from sparktc.runtime import storage` imports the module storage
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {module for module in found if module in MODULES and module != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle a depth-first walk of ``graph`` closes, each as the modules along it, first one repeated."""
    state: dict[str, str] = {}
    path: list[str] = []
    found: list[list[str]] = []

    def walk(module: str) -> None:
        state[module], _ = "open", path.append(module)
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                found.append([*path[path.index(other):], other])
            elif other not in state:
                walk(other)
        state[module], _ = "done", path.pop()

    for module in sorted(graph):
        if module not in state:
            walk(module)
    return found


def test_the_graph_reader_finds_a_circle_and_a_relative_import():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    assert "sparktc.runtime.stage_report" in imported(MODULES["sparktc.runtime.runner"])
    assert "sparktc.runtime.progress" in imported(MODULES["sparktc.runtime.stage_report"])


def test_no_module_imports_itself_back():
    graph = {name: imported(path) for name, path in MODULES.items()}
    assert circles(graph) == []
