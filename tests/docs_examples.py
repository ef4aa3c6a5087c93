"""The code blocks of the README and the user guide (``README.md``, ``docs/**/*.md``), each named by the HTML
comment on the line above it, so that tests run a block as the reader sees it:

* ``<!-- example: NAME -->``: the block runs in the test suite; a test asks for it with ``example("NAME")``;
* ``<!-- needs: WHAT -->``: it cannot run on these machines, and WHAT says what it needs (the RCV1-v2 files, a YARN
  cluster, a container runtime);
* ``<!-- output: NAME -->``: what the example NAME prints or writes, shown to the reader; the test of NAME checks it
  with ``output("NAME")``.

``python tests/docs_examples.py`` lists every block: its file and line, its mark, and the tests that ask for it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: A fenced block and the line before it (the mark, when there is one).
FENCED = re.compile(r"^(?P<before>[^\n]*)\n(?P<fence>```+|~~~+)(?P<language>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=fence)[ \t]*$",
                    re.S | re.M)
MARK = re.compile(r"<!-- (?P<kind>example|needs|output): (?P<name>.+?) -->")
#: How a test asks for a block: example("NAME") or output("NAME").
ASKED = re.compile(r"""\b(example|output)\(\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, how it is marked (``kind`` None when it is not) and its text."""

    file: str  # relative to the repository
    line: int  # of the opening fence
    kind: str | None
    name: str
    language: str
    code: str


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
            found.append(Block(str(path.relative_to(REPO)), line, mark["kind"] if mark else None,
                               mark["name"] if mark else "", match["language"], match["code"]))
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


def askers() -> dict[tuple[str, str], list[str]]:
    """The test files that ask for each (kind, name), by the calls :data:`ASKED` finds."""
    asked: dict[tuple[str, str], list[str]] = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        for kind, name in ASKED.findall(path.read_text()):
            asked.setdefault((kind, name), []).append(str(path.relative_to(REPO)))
    return asked


if __name__ == "__main__":
    asked = askers()
    for block in blocks():
        how = {"example": "runs in " + ", ".join(asked.get(("example", block.name), ["NO TEST"])),
               "output": "checked by " + ", ".join(asked.get(("output", block.name), ["NO TEST"])),
               "needs": "not run here: needs " + block.name}.get(block.kind or "", "UNMARKED")
        print(f"{block.file}:{block.line}\t{block.kind or '-'}\t{block.name}\t{how}")
    sys.exit(0)
