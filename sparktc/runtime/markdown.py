r"""Markdown tables, the one writer every report, comparison, history and benchmark table goes through.

A table is GitHub-flavoured Markdown (the GFM spec's "Tables" extension): a header row, a delimiter row whose
colons say each column's alignment, then the rows; every row opens and closes with a pipe. A cell's text is
escaped so that it stays one cell of one row whatever it holds: a backslash doubled, a pipe written ``\|``, a line
break written as a space.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["ALIGNMENTS", "cell_text", "markdown_table"]

#: The delimiter row's cell per alignment letter: left (GFM's default), right, centre.
ALIGNMENTS = {"l": "---", "r": "---:", "c": ":---:"}


def cell_text(value: object) -> str:
    r"""``value`` as the text of one Markdown table cell: ``str(value)`` with ``\`` doubled, ``|`` escaped as
    ``\|`` and each line break (``\r\n``, ``\r``, ``\n``) replaced by a space.

    >>> cell_text("a|b\nc")
    'a\\|b c'
    """
    text = str(value).replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]], align: str = "", *,
                   padded: bool = False, spaced_rule: bool = False) -> str:
    r"""A Markdown table of ``header`` and ``rows``, its lines joined by newlines (no newline after the last).

    Each cell is written as :func:`cell_text` gives it. ``align`` has one letter per column, ``l`` (left, the
    default for a column it does not reach), ``r`` (right) or ``c`` (centre), which the delimiter row's colons say
    (:data:`ALIGNMENTS`). ``padded``: every column padded to its widest cell, by its alignment, and the delimiter
    row's dashes as wide, so the table also reads as plain text (a console, a ``.md`` file opened in an editor).
    ``spaced_rule``: the delimiter row's cells spaced as the other rows' are (``| --- |`` rather than ``|---|``);
    unpadded tables only. Raises ValueError for a row of another length than the header or an unknown letter.

    >>> print(markdown_table(["run", "F1"], [["a|b", "0.5"]], "lr"))
    | run | F1 |
    |---|---:|
    | a\|b | 0.5 |
    >>> print(markdown_table(["run", "F1"], [["a", "0.5"]], "lr", padded=True))
    | run |  F1 |
    |-----|----:|
    | a   | 0.5 |
    """
    texts = [[cell_text(value) for value in header]]
    for row in rows:
        texts.append([cell_text(value) for value in row])
        if len(texts[-1]) != len(header):
            raise ValueError(f"a row of {len(texts[-1])} cells under a header of {len(header)}: {list(row)}")
    letters = align.ljust(len(header), "l")
    unknown = set(letters) - set(ALIGNMENTS)
    if unknown or len(letters) != len(header):
        raise ValueError(f"align must be one letter of {'/'.join(ALIGNMENTS)} per column; got {align!r}")
    if padded:
        widths = [max(len(text[column]) for text in texts) for column in range(len(header))]
        texts = [[text.rjust(width) if letter == "r" else text.center(width) if letter == "c" else text.ljust(width)
                  for text, width, letter in zip(row, widths, letters)] for row in texts]
        rule = "|" + "|".join(_padded_rule(letter, width + 2) for letter, width in zip(letters, widths)) + "|"
    elif spaced_rule:
        rule = _row([ALIGNMENTS[letter] for letter in letters])
    else:
        rule = "|" + "|".join(ALIGNMENTS[letter] for letter in letters) + "|"
    return "\n".join([_row(texts[0]), rule, *(_row(row) for row in texts[1:])])


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _padded_rule(letter: str, width: int) -> str:
    """The delimiter cell of a padded column ``width`` characters wide, its colons at the aligned edges."""
    left, right = letter == "c", letter in "rc"
    return (":" if left else "") + "-" * (width - left - right) + (":" if right else "")
