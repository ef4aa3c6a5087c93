"""What a notebook shows of an evaluated run (:class:`Evaluation`): the headline as HTML, the decision rule as the
report words it, the figures inline and the per-category table as a pandas DataFrame, from the files
:mod:`sparktc.evaluation.report` writes (:mod:`sparktc.apps.api` reads them back after a run).
"""

from __future__ import annotations

import base64
import html
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from sparktc.evaluation.report import CSV_HEADER, DASH, decision_lines, float_text, int_text
from sparktc.filesystem import local_path

__all__ = ["Evaluation", "per_category_frame", "rule_html", "summary_html"]

#: The headline's rows in a notebook: the measures the papers quote, micro and macro.
_HEADLINE = (("Precision", "precision"), ("Recall", "recall"), ("F1", "f1"))


def per_category_frame(csv_text: str, averaged: Sequence[str]) -> pd.DataFrame:
    """``per_category.csv`` (:func:`sparktc.evaluation.report.per_category_csv`) as a DataFrame: one row per
    category, the file's columns (:data:`sparktc.evaluation.report.CSV_HEADER`) and ``averaged``, whether the
    category is one of ``averaged``, the set the headline averages are taken over. Codes and names stay strings (a
    category named ``NA`` is no missing value); an empty P, R or F1 is NaN.
    """
    frame = pd.read_csv(io.StringIO(csv_text), dtype={"category": str, "name": str}, keep_default_na=False,
                        na_values={name: [""] for name in CSV_HEADER[-3:]})
    frame["averaged"] = frame["category"].isin(set(averaged))
    return frame


def _inline(line: str) -> str:
    """A line of report.md as HTML: escaped, its `code` spans kept."""
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(line, quote=False))


def rule_html(record: Mapping[str, Any], method_lines: Sequence[str]) -> str:
    """The decision rule as report.md's settings word it (the method with ``method_lines``, the thresholding, the
    search space), as an HTML list; ``record`` holds ``method``, ``thresholding`` and ``search_space`` as
    ``metrics.json`` does (:func:`sparktc.models.decision.decision_record`).
    """
    items = "".join(f"<li>{_inline(line.removeprefix('- '))}</li>" for line in decision_lines(record, method_lines))
    return f"<ul>{items}</ul>"


def _href(path: str) -> str:
    """Where a notebook's link to ``path`` points: a local path under the working directory (the notebook's, which
    its server serves) relative to it, any other path as it is.
    """
    local = local_path(path)
    if local is None:
        return path
    relative = os.path.relpath(local)
    return local if relative.startswith(os.pardir) else relative


def summary_html(metrics: Mapping[str, Any], method_lines: Sequence[str], figures: Mapping[str, bytes],
                 report: str) -> str:
    """An evaluated run as a notebook shows it: the headline (micro and macro precision, recall and F1 over the
    averaged categories, with the test documents, the set and the 0/0 convention), the decision rule
    (:func:`rule_html`), the ``figures`` inline (PNG bytes by path, as base64 ``<img>``) and a link to ``report``,
    report.md's path.
    """
    rows = "".join(f"<tr><th>{label}</th><td>{float_text(metrics.get(f'micro_{key}'), DASH)}</td>"
                   f"<td>{float_text(metrics.get(f'macro_{key}'), DASH)}</td></tr>" for label, key in _HEADLINE)
    scope = html.escape(f"{int_text(metrics.get('test_documents'), DASH)} test documents, "
                        f"{int_text(metrics.get('n_categories'), DASH)} categories averaged (set "
                        f"{metrics.get('averaged_over', DASH)}), "
                        f"zero_division = {metrics.get('zero_division', DASH)}")
    images = "".join(
        f'<img alt="{html.escape(path)}" title="{html.escape(path)}" style="max-width: 48%; margin-right: 1%" '
        f'src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">' for path, data in figures.items())
    return (f'<table><tr><th></th><th>Micro</th><th>Macro</th></tr>{rows}</table><p>{scope}</p>'
            f"<p><b>Decision rule</b></p>{rule_html(metrics, method_lines)}<div>{images}</div>"
            f'<p>The whole report: <a href="{html.escape(_href(report))}" target="_blank">'
            f"{html.escape(report)}</a></p>")


@dataclass(frozen=True, repr=False)
class Evaluation:
    """An evaluated run's reports as a notebook shows them, read once from its output: ``metrics.json``
    (``metrics``), the method's lines of the settings (``method_lines``: :func:`sparktc.models.registry.describe`),
    report.md's path, per_category.csv's text and the figures' PNG bytes by path, in the report's order.
    """

    metrics: dict[str, Any]
    method_lines: list[str]
    report: str
    per_category_csv: str
    figures: dict[str, bytes] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line: where the report is."""
        return f"Evaluation({self.report!r})"

    def per_category(self) -> pd.DataFrame:
        """The per-category table (:func:`per_category_frame`), ``averaged`` from the metrics' per-category rows."""
        averaged = [row["category"] for row in self.metrics.get("per_category") or []]
        return per_category_frame(self.per_category_csv, averaged)

    def html(self) -> str:
        """The run's headline, decision rule, figures and a link to report.md (:func:`summary_html`)."""
        return summary_html(self.metrics, self.method_lines, self.figures, self.report)
