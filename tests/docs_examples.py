"""The code blocks of the README and the user guide (``README.md``, ``docs/**/*.md``), each named by the HTML
comment on the line above it, so that tests run a block as the reader sees it.

* ``<!-- example: NAME -->``: the block runs in the test suite; a test asks for it with ``example("NAME")``;
* ``<!-- needs: WHAT -->``: it cannot run on these machines, and WHAT says what it needs (the RCV1-v2 files, a YARN
  cluster, a container runtime);
* ``<!-- output: NAME -->``: what the example NAME prints or writes, shown to the reader; the test of NAME checks it
  with ``output("NAME")``.

Blocks are fenced, never indented. A block in a list item is nested by four spaces, its mark too, after a blank
line: MkDocs' Markdown nests a list's content by four, and a mark indented by two ends the item.

A test asks for a block by calling ``example``/``output`` with the name written out, or a function of its own that
passes its argument on to them (``command_words("first-run")``), or with a name from its ``pytest.mark.parametrize``
list or a ``for`` loop over a list of names (:func:`askers`).

``python tests/docs_examples.py`` lists every block: its file and line, its mark, and the tests that ask for it; and
every code block indented instead of fenced.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: A fenced block and the line before it (the mark, when there is one); a fence in a list item is indented with it.
FENCED = re.compile(r"^(?P<before>[^\n]*)\n(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<language>[\w+-]*)[^\n]*\n"
                    r"(?P<code>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!-- (?P<kind>example|needs|output): (?P<name>.+?) -->")
#: A line that opens a container whose content is indented: a list item, an admonition (``!!! note``, ``??? note``).
CONTAINER = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)]|!!!|\?\?\?\+?)(?:[ \t]|$)")
OPENING_FENCE = re.compile(r"^[ \t]*(```+|~~~+)")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, how it is marked (``kind`` None when it is not) and its text."""

    file: str  # relative to the repository
    line: int  # of the opening fence
    kind: str | None
    name: str
    language: str
    code: str  # without the indentation of its fence
    indent: str = ""  # of its fence: in a list item, four spaces (MkDocs' Markdown nests a list's content by four)


def documents() -> list[Path]:
    """The README and every page under docs/, in a stable order."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks() -> list[Block]:
    """Every fenced block of :func:`documents`, marked or not."""
    found = []
    for path in documents():
        text = "\n" + path.read_text()
        for match in FENCED.finditer(text):
            mark = MARK.search(match["before"])
            line = text.count("\n", 0, match.start("fence"))
            code = re.sub(rf"^{re.escape(match['indent'])}", "", match["code"], flags=re.M)
            found.append(Block(str(path.relative_to(REPO)), line, mark["kind"] if mark else None,
                               mark["name"] if mark else "", match["language"], code, match["indent"]))
    return found


def _one(kind: str, name: str) -> str:
    matching = [block for block in blocks() if block.kind == kind and block.name == name]
    if len(matching) != 1:
        raise LookupError(f"{len(matching)} blocks are marked <!-- {kind}: {name} --> in the README and docs/, "
                          "not one")
    return matching[0].code


def example(name: str) -> str:
    """The code of the block marked ``<!-- example: NAME -->``."""
    return _one("example", name)


def output(name: str) -> str:
    """The text of the block marked ``<!-- output: NAME -->``."""
    return _one("output", name)


def indented_code(text: str) -> list[int]:
    """The lines (from 1) where ``text`` opens a code block by indentation (4 spaces or a tab after a blank line),
    outside fences and outside list items and admonitions, whose content is indented. The convention is fenced only.
    """
    found, fence, in_container, after_blank = [], "", False, True
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
            continue
        if not stripped:
            after_blank = True
            continue
        if opening := OPENING_FENCE.match(line):
            fence = opening[1]
        elif CONTAINER.match(line):
            in_container = True
        elif not line[0].isspace():
            # At the margin after a blank line: a paragraph, heading or table, which ends a list; without a blank
            # line it is a list item's lazy continuation.
            in_container = in_container and not after_blank
        elif after_blank and not in_container and line.expandtabs(4).startswith("    "):
            found.append(number)
        after_blank = False
    return found


def _called(node: ast.Call) -> str:
    """The name of the function ``node`` calls: ``example`` for ``example(...)`` and ``docs_examples.example(...)``."""
    return node.func.id if isinstance(node.func, ast.Name) else node.func.attr \
        if isinstance(node.func, ast.Attribute) else ""


def _strings(node: ast.expr) -> Iterator[str]:
    """The string constants of a list or tuple literal."""
    if isinstance(node, ast.List | ast.Tuple):
        yield from (element.value for element in node.elts
                    if isinstance(element, ast.Constant) and isinstance(element.value, str))


def _parametrized(function: ast.FunctionDef, parameter: str) -> Iterator[str]:
    """The string values ``pytest.mark.parametrize`` decorators of ``function`` give ``parameter``."""
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and _called(decorator) == "parametrize" and len(decorator.args) >= 2):
            continue
        names, values = decorator.args[0], decorator.args[1]
        if isinstance(names, ast.Constant) and isinstance(names.value, str):
            names = [name.strip() for name in names.value.split(",")]
        else:
            names = [element.value for element in getattr(names, "elts", []) if isinstance(element, ast.Constant)]
        if parameter not in names or not isinstance(values, ast.List | ast.Tuple):
            continue
        position = names.index(parameter)
        for value in values.elts:
            if isinstance(value, ast.Call) and _called(value) == "param":  # pytest.param(...)
                value = ast.Tuple(elts=value.args)
            if len(names) > 1:
                value = value.elts[position] if isinstance(value, ast.Tuple) and position < len(value.elts) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield value.value


def askers() -> dict[tuple[str, str], list[str]]:
    """The test files that ask for each (kind, name): calls of ``example``/``output``, or of a function that passes
    its parameter on to one of them (found across the test files, to any depth), with the name written out, taken
    from the calling test's ``pytest.mark.parametrize`` values, or from a ``for`` loop over a list literal.
    """
    files = {str(path.relative_to(REPO)): ast.parse(path.read_text())
             for path in sorted((REPO / "tests").rglob("*.py")) if path.name != Path(__file__).name}
    functions = [node for tree in files.values() for node in ast.walk(tree)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    kinds = {"example": "example", "output": "output"}  # a function's name -> the kind of block it asks for

    def passed_on(function: ast.FunctionDef) -> Iterator[tuple[str, str]]:
        """(parameter, kind) for each call in ``function`` that passes one of its parameters to an asking function."""
        parameters = {argument.arg for argument in function.args.args + function.args.kwonlyargs}
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and _called(node) in kinds and node.args \
                    and isinstance(node.args[0], ast.Name) and node.args[0].id in parameters:
                yield node.args[0].id, kinds[_called(node)]

    while new := {function.name: kind for function in functions if function.name not in kinds
                  for _, kind in passed_on(function)}:  # wrappers, then wrappers of wrappers
        kinds.update(new)

    asked: dict[tuple[str, str], list[str]] = {}

    def ask(kind: str, name: str, file: str) -> None:
        if file not in asked.setdefault((kind, name), []):
            asked[(kind, name)].append(file)

    for file, tree in files.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) in kinds and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                ask(kinds[_called(node)], node.args[0].value, file)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for parameter, kind in passed_on(node):
                    for name in _parametrized(node, parameter):
                        ask(kind, name, file)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Call) and _called(inner) in kinds and inner.args \
                            and isinstance(inner.args[0], ast.Name) and inner.args[0].id == node.target.id:
                        for name in _strings(node.iter):
                            ask(kinds[_called(inner)], name, file)
    return asked


if __name__ == "__main__":
    asked = askers()
    for block in blocks():
        how = {"example": "runs in " + ", ".join(asked.get(("example", block.name), ["NO TEST"])),
               "output": "checked by " + ", ".join(asked.get(("output", block.name), ["NO TEST"])),
               "needs": "not run here: needs " + block.name}.get(block.kind or "", "UNMARKED")
        print(f"{block.file}:{block.line}\t{block.kind or '-'}\t{block.name}\t{how}")
    for path in documents():
        for line in indented_code(path.read_text()):
            print(f"{path.relative_to(REPO)}:{line}\t-\t\tINDENTED: a code block by indentation, not fenced")
    sys.exit(0)
