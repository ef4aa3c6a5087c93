"""A griffe extension for the API reference (mkdocs.yml): sparktc's docstrings, written to read well as plain text
(Sphinx cross-reference roles, ``::`` before an indented block, doctest lines), shown as Markdown renders them well.
Only what the site shows changes; the docstrings themselves stay as they are.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: A Sphinx role: :func:`sparktc.apps.api.classify` and the like, ``~`` keeping only the last name.
ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj):`~?([^`]+)`")
#: A paragraph's closing ``::``, which in reStructuredText makes the indented block after it literal (Markdown's
#: indented code block does that by itself).
LITERAL = re.compile(r"(?<=\S)::$", re.M)
#: A run of doctest lines (``>>>`` and their ``...`` continuations) outside an indented block: in Markdown they would
#: run together as one paragraph.
DOCTEST = re.compile(r"^(?:(?:>>>|\.\.\.)(?: [^\n]*)?\n?)+", re.M)


def markdown(text: str) -> str:
    """``text`` with its Sphinx roles as inline code, its literal-block ``::`` as ``:`` and its doctest lines fenced."""
    text = LITERAL.sub(":", ROLE.sub(r"`\1`", text))
    return DOCTEST.sub(lambda run: "```pycon\n" + run[0].rstrip("\n") + "\n```\n", text)


class DocstringsForMkdocs(griffe.Extension):
    """Rewrite every docstring with :func:`markdown` as it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring, if it has one."""
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
