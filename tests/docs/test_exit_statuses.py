"""docs/trusted-runs.md's table of exit statuses against the code: the statuses it lists are those sparktc/errors.py
defines (and 0), and each meaning's error is the one that exits with the status the table gives. No Spark.
"""

from __future__ import annotations

import re

from conftest import REPO

from sparktc import errors
from sparktc.apps.export import ExportError
from sparktc.errors import ConfigError, InputError, exit_status
from sparktc.runtime.outputs import OutputBusyError, OutputError
from sparktc.runtime.resources import ResourceLimitError

#: How each row's meaning begins, and the exit status the code gives what it names.
MEANINGS = {
    "done": 0,
    "a runtime error": InputError.exit_code,
    "a configuration error": ConfigError.exit_code,
    "`jobs/history.py`: a regression": errors.REGRESSION_EXIT,
    "the output is held by another run": OutputBusyError.exit_code,
    "interrupted": exit_status(KeyboardInterrupt()),
}


def exit_status_table() -> dict[int, str]:
    """The '## Exit statuses' table of docs/trusted-runs.md: each status and its meaning."""
    text = (REPO / "docs" / "trusted-runs.md").read_text()
    section = text.split("\n## Exit statuses\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| ([^|]*) \|", section, re.M)
    assert rows, "no table rows under '## Exit statuses'"
    return {int(status): meaning.strip() for status, meaning in rows}


def test_the_table_lists_exactly_the_exit_statuses_the_code_defines() -> None:
    defined = {value for name, value in vars(errors).items() if name.endswith("_EXIT")}
    assert set(exit_status_table()) == {0} | defined


def test_each_meaning_in_the_table_exits_with_the_status_the_code_gives_it() -> None:
    table = exit_status_table()
    found = {start: [status for status, meaning in table.items() if meaning.startswith(start)]
             for start in MEANINGS}
    assert found == {start: [status] for start, status in MEANINGS.items()}
    # The errors that share a meaning: the output refused and the export refused are configuration errors, resources
    # a runtime error.
    assert {OutputError.exit_code, ExportError.exit_code} == {ConfigError.exit_code}
    assert ResourceLimitError.exit_code == InputError.exit_code
