"""The examples' accounting (tests/docs_examples.py): every code block of the README and the guide is fenced and
marked, runs in a test or says what it needs, and every name a test asks for is on a page; the README stays a front
door of at most 200 lines. No Spark: the blocks themselves run in the tests that ask for them.

The same checks run on a small docs tree of their own, passing, and once broken in each way they catch.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import docs_examples
import pytest
from docs_examples import askers, blocks, documents, example, indented_code

#: What a block is named: lowercase words with hyphens.
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
README_LINES = 200
NAMED = ("example", "output")


def test_every_block_is_marked() -> None:
    unmarked = [f"{block.file}:{block.line}" for block in blocks() if block.kind is None]
    assert not unmarked, ("put <!-- example: NAME -->, <!-- needs: WHAT --> or <!-- output: NAME --> on the line "
                          f"above each of these fences: {unmarked}")


def test_names_are_lowercase_words_with_hyphens_and_unique_per_kind() -> None:
    counts = Counter((block.kind, block.name) for block in blocks() if block.kind in NAMED)
    assert not [f"{kind}: {name}" for kind, name in counts if not NAME.fullmatch(name)]
    assert not [f"{kind}: {name} ({count} blocks)" for (kind, name), count in counts.items() if count > 1]


def test_every_output_is_an_examples() -> None:
    examples = {block.name for block in blocks() if block.kind == "example"}
    assert not [f"{block.file}:{block.line} output: {block.name}" for block in blocks()
                if block.kind == "output" and block.name not in examples]


def test_every_example_and_output_is_asked_for_by_a_test() -> None:
    asked = askers()
    unasked = [f"{block.file}:{block.line} {block.kind}: {block.name}" for block in blocks()
               if block.kind in NAMED and (block.kind, block.name) not in asked]
    assert not unasked, f"no test asks for these (docs_examples.{'/'.join(NAMED)}): {unasked}"


def test_every_name_a_test_asks_for_is_on_a_page() -> None:
    marked = {(block.kind, block.name) for block in blocks()}
    assert not [f"{files}: {kind}('{name}')" for (kind, name), files in askers().items() if (kind, name) not in marked]


def test_code_blocks_are_fenced_not_indented() -> None:
    indented = [f"{path.relative_to(docs_examples.REPO)}:{line}" for path in documents()
                for line in indented_code(path.read_text())]
    assert not indented, f"code indented by four spaces, not fenced: {indented}"


def test_a_fence_in_a_list_is_indented_by_four_spaces() -> None:
    # With two, the mark above it ends the list item, and the block and the rest of the item leave the list.
    assert not [f"{block.file}:{block.line}" for block in blocks() if len(block.indent.expandtabs(4)) % 4]


def test_the_readme_is_at_most_200_lines() -> None:
    lines = len((docs_examples.REPO / "README.md").read_text().splitlines())
    assert lines <= README_LINES, f"README.md has {lines} lines: keep it a front door, and move the rest to docs/"


@pytest.mark.parametrize("name", ["test-command", "getting-started-test-command"])
def test_the_test_command_is_what_ci_runs(name: str) -> None:
    """The README's and the guide's test command is the last step of .ci/run, the script CI runs on a clean clone (its
    run is the suite itself, so the suite cannot run it again).
    """
    script = (docs_examples.REPO / ".ci" / "run").read_text().splitlines()
    steps = [line for line in script if line and not line.startswith("#")]
    assert example(name).strip() == steps[-1] == "make test"


CHECKS = [test_every_block_is_marked, test_names_are_lowercase_words_with_hyphens_and_unique_per_kind,
          test_every_output_is_an_examples, test_every_example_and_output_is_asked_for_by_a_test,
          test_every_name_a_test_asks_for_is_on_a_page, test_code_blocks_are_fenced_not_indented,
          test_a_fence_in_a_list_is_indented_by_four_spaces, test_the_readme_is_at_most_200_lines]

README = """\
# tiny

<!-- example: first-run -->
```bash
./spark-submit.sh jobs/pipeline.py --output runs/tiny
```

<!-- output: first-run -->
```text
micro-F1 0.8
```

- A list item whose block is indented with it:

    <!-- needs: a YARN cluster -->
    ```bash
    ./spark-submit.sh --master yarn jobs/pipeline.py
    ```

    and goes on.
"""
PAGE = """\
# A page

<!-- example: {name} -->
```python
print(1)
```

<!-- needs: a YARN cluster -->
~~~bash
spark-submit --master yarn
~~~

::: sparktc.ml
    options:
      show_root_heading: false
"""
#: A test file of the small tree: a wrapper as a test helper writes one, a direct call, a parametrized test.
TEST = """\
import pytest
from docs_examples import example, output


def words(name):
    return example(name).split()


def test_first_run():
    assert words("first-run") and output("first-run")


@pytest.mark.parametrize(("name", "n"), [("second", 1), pytest.param("third", 2)])
def test_pages(name, n):
    assert example(name)
"""


def small_tree(root: Path) -> None:
    (root / "docs" / "guide").mkdir(parents=True)
    (root / "tests" / "apps").mkdir(parents=True)
    (root / "README.md").write_text(README)
    (root / "docs" / "second.md").write_text(PAGE.format(name="second"))
    (root / "docs" / "guide" / "third.md").write_text(PAGE.format(name="third"))
    (root / "tests" / "apps" / "test_tiny.py").write_text(TEST)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    small_tree(tmp_path)
    monkeypatch.setattr(docs_examples, "REPO", tmp_path)
    return tmp_path


def test_the_helper_reads_the_small_tree(tree: Path) -> None:
    assert [(block.file, block.line, block.kind, block.name, block.language) for block in blocks()] == [
        ("README.md", 4, "example", "first-run", "bash"), ("README.md", 9, "output", "first-run", "text"),
        ("README.md", 16, "needs", "a YARN cluster", "bash"),
        ("docs/guide/third.md", 4, "example", "third", "python"),
        ("docs/guide/third.md", 9, "needs", "a YARN cluster", "bash"),
        ("docs/second.md", 4, "example", "second", "python"),
        ("docs/second.md", 9, "needs", "a YARN cluster", "bash")]
    first = "first-run"  # a name in a variable: the real tree's accounting does not take this file as asking for it
    assert docs_examples.example(first) == "./spark-submit.sh jobs/pipeline.py --output runs/tiny\n"
    assert docs_examples.output(first) == "micro-F1 0.8\n"
    assert blocks()[2].code == "./spark-submit.sh --master yarn jobs/pipeline.py\n"  # the list's indent taken off
    assert askers() == {("example", name): ["tests/apps/test_tiny.py"] for name in ("first-run", "second", "third")
                        } | {("output", "first-run"): ["tests/apps/test_tiny.py"]}


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_checks_pass_on_the_small_tree(tree: Path, check) -> None:
    check()


LIST_FENCE = ("    <!-- needs: a YARN cluster -->\n    ```bash\n    ./spark-submit.sh --master yarn jobs/pipeline.py\n"
              "    ```")
#: One way to break the small tree for each check: its edits (file, old text, new text) and the check that fails.
BROKEN = {
    "an unmarked block": ([("docs/second.md", "<!-- needs: a YARN cluster -->\n", "")], test_every_block_is_marked),
    "a name with capitals": ([("docs/second.md", "example: second", "example: Second"),
                              ("tests/apps/test_tiny.py", '("second", 1)', '("Second", 1)')],
                             test_names_are_lowercase_words_with_hyphens_and_unique_per_kind),
    "a name twice": ([("docs/second.md", "example: second", "example: third"),
                      ("tests/apps/test_tiny.py", '("second", 1), ', "")],
                     test_names_are_lowercase_words_with_hyphens_and_unique_per_kind),
    "an output of no example": ([("README.md", "output: first-run", "output: last-run"),
                                 ("tests/apps/test_tiny.py", 'output("first-run")', 'output("last-run")')],
                                test_every_output_is_an_examples),
    "an example no test asks for": ([("tests/apps/test_tiny.py", '("second", 1), ', "")],
                                    test_every_example_and_output_is_asked_for_by_a_test),
    "a test asking for a block no page has": ([("docs/guide/third.md", "example: third", "needs: a third machine")],
                                              test_every_name_a_test_asks_for_is_on_a_page),
    "a block indented, not fenced": ([("README.md", "# tiny\n", "# tiny\n\n    make test\n")],
                                     test_code_blocks_are_fenced_not_indented),
    "a fence in a list indented by two": ([("README.md", LIST_FENCE, LIST_FENCE.replace("    ", "  "))],
                                          test_a_fence_in_a_list_is_indented_by_four_spaces),
    "a README of 201 lines": ([("README.md", "# tiny\n", "# tiny\n" + "\n" * 190)],
                              test_the_readme_is_at_most_200_lines),
}


@pytest.mark.parametrize("broken", BROKEN)
def test_each_check_fails_on_the_small_tree_broken_its_way_and_only_that_check(tree: Path, broken: str) -> None:
    edits, failing = BROKEN[broken]
    for file, old, new in edits:
        text = (tree / file).read_text()
        assert old in text
        (tree / file).write_text(text.replace(old, new, 1))
    for check in CHECKS:
        if check is failing:
            with pytest.raises(AssertionError):
                check()
        else:
            check()
