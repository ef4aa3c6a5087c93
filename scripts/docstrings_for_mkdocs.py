"""A griffe extension for the API reference (mkdocs.yml): sparktc's docstrings, written to read well as plain text
(Sphinx cross-reference roles, ``::`` before an indented block, doctest lines), shown as Markdown renders them well;
and each Spark ML stage of :mod:`sparktc.ml` with a table of its Params, their defaults, getters and setters (many
are the mixins', which the reference shows on no class of its own) and docs, as ``explainParams()`` gives them (a
setting's doc is its field's meaning in its module: the one place it is written). Only what the site shows changes;
the docstrings themselves stay as they are.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe

from sparktc.runtime.markdown import markdown_table

#: A Sphinx role: :func:`sparktc.apps.api.classify` and the like, ``~`` keeping only the last name.
ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj):`~?([^`]+)`")
#: A paragraph's closing ``::``, which in reStructuredText makes the indented block after it literal (Markdown's
#: indented code block does that by itself).
LITERAL = re.compile(r"(?<=\S)::$", re.M)
#: A run of doctest lines (``>>>`` and their ``...`` continuations) outside an indented block: in Markdown they would
#: run together as one paragraph.
DOCTEST = re.compile(r"^(?:(?:>>>|\.\.\.)(?: [^\n]*)?\n?)+", re.M)
#: A Google-style section's title line (``Args:``, ``Example:``), where a docstring's description ends.
SECTION = re.compile(r"^(?:Args|Arguments|Example|Examples|Returns|Raises|Note|Notes):[ \t]*$", re.M)


def markdown(text: str) -> str:
    """``text`` with its Sphinx roles as inline code, its literal-block ``::`` as ``:`` and its doctest lines fenced."""
    text = LITERAL.sub(":", ROLE.sub(r"`\1`", text))
    return DOCTEST.sub(lambda run: "```pycon\n" + run[0].rstrip("\n") + "\n```\n", text)


def params_table(path: str) -> str:
    """The Params of the stage ``path`` names, if it is one of :mod:`sparktc.ml`'s (``sparktc.ml.methods.KNN``), as a
    Markdown table of each Param's name, default and doc; "" for anything else.
    """
    module, _, name = path.rpartition(".")
    if not module.startswith("sparktc.ml") or name not in importlib.import_module("sparktc.ml").__all__:
        return ""
    stage = getattr(importlib.import_module(module), name)()
    rows = []
    for param in stage.params:
        value = stage.getOrDefault(param) if stage.isDefined(param) else None
        shown = f"{type(value).__name__}()" if hasattr(value, "uid") else repr(value)
        accessors = [f"`{prefix}{param.name[:1].upper()}{param.name[1:]}`" for prefix in ("get", "set")
                     if hasattr(stage, f"{prefix}{param.name[:1].upper()}{param.name[1:]}")]
        rows.append([f"`{param.name}`", f"`{shown}`", " ".join(accessors), param.doc])
    return ("\n\nIts Params (`explainParams()`), set by keyword or by their setters (a Model's setters are those "
            "of what its transform reads):\n\n" + markdown_table(["Param", "default", "accessors", "meaning"], rows))


class DocstringsForMkdocs(griffe.Extension):
    """Rewrite every docstring with :func:`markdown` as it is loaded, a Spark ML stage's with its Params."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring, if it has one."""
        if obj.docstring is not None:
            text = markdown(obj.docstring.value)
            table = params_table(obj.path) if obj.is_class else ""
            if table:  # before the docstring's sections (Args, Example), in its description
                sections = SECTION.search(text)
                at = sections.start() if sections else len(text)
                text = text[:at].rstrip("\n") + table + "\n\n" + text[at:]
            obj.docstring.value = text
