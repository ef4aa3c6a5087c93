"""Evaluation results as the files a person reads: a per-category CSV, a Markdown report, two plots (each as PNG,
SVG and PDF); and
what a notebook shows of them (:class:`Evaluation`: the headline as HTML, the figures inline, the table as a
pandas DataFrame).

Pure functions, no Spark and no file-system access: each returns ``str`` or a plot's bytes and the
Spark layer writes them through Hadoop file systems (and reads them back for :class:`Evaluation`). Inputs
(REFERENCE.md sections 6 and 7):

``table``
    pandas DataFrame, one row per category, columns ``category, name, train_positives,
    test_positives, tp, fp, fn, tn, precision, recall, f1, band, averaged`` (``averaged``: the
    category is in the set the headline averages are taken over).
``metrics``
    dict of the run's averages: ``micro_*``/``macro_*`` for precision, recall, f1, fallout,
    overlap, error, accuracy; ``macro_star_f1``; ``n_categories``, ``zero_division``,
    ``zero_division_convention``, ``averaged_over``, ``test_documents``, ``corpus``, ``settings``
    (the nested configuration dict), ``method``, ``thresholding`` and ``search_space`` (the decision
    rule, :func:`sparktc.models.decision.decision_record`) and the optional ``averages`` (per averaging set),
    ``bands`` (per training-frequency band), ``ranking`` (P@K, R@K, RP@K, nDCG@K) and ``closed`` (the same
    micro and macro averages over the predictions closed under the hierarchy, ``evaluate.close_predictions``).
    Missing measures are shown as an em dash; missing optional sections are left out.

The plots are deterministic: fixed figure size and dpi, matplotlib's default style (a user's
``matplotlibrc`` is ignored), the Agg canvas used directly (pyplot and its global state are never
touched), no software or date in any file's metadata and SVG ids from a fixed salt, so two calls give
identical bytes in each format. The PNG is what report.md and notebooks show; the SVG (text kept as text) and
the PDF (TrueType fonts, which publishers accept where they refuse Type 3) are for papers.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sparktc.evaluation.appendix_tables import CONTINGENCY_TABLES_TXT
from sparktc.evaluation.metrics import MEASURE_LABELS
from sparktc.evaluation.training_decisions import training_decisions_lines
from sparktc.features.term_selection import FREQUENCY
from sparktc.features.text import ANALYZERS
from sparktc.filesystem import local_path

__all__ = [
    "CLOSED_ROWS",
    "CSV_HEADER",
    "Evaluation",
    "F1_BY_TRAINING_FREQUENCY_PNG",
    "F1_BY_BAND_PNG",
    "FIGURES",
    "FIGURE_FILES",
    "FIGURE_FORMATS",
    "FIGURE_SIZE",
    "FIGURE_DPI",
    "MAX_STACK_AREA",
    "ZERO_TRAIN_X",
    "figure_file",
    "figure_markdown",
    "per_category_csv",
    "per_category_frame",
    "report_markdown",
    "rule_html",
    "summary_html",
    "plot_f1_by_training_frequency",
    "plot_f1_by_band",
    "lowess",
]

#: Header of the per-category CSV: the table LYRL2004 publishes.
CSV_HEADER = ("category", "name", "train_positives", "test_positives", "TP", "FP", "FN", "TN", "P", "R", "F1")
#: The labels of the two rows of the report's table of closed predictions: the headline, then the closed.
CLOSED_ROWS = ("As assigned (headline)", "Closed under the hierarchy")
#: Relative names the Markdown report links to; the Spark layer writes the PNGs under them.
F1_BY_TRAINING_FREQUENCY_PNG = "f1_by_training_frequency.png"
F1_BY_BAND_PNG = "f1_by_band.png"
#: The plots, in the report's order, by their PNG's name.
FIGURES = (F1_BY_BAND_PNG, F1_BY_TRAINING_FREQUENCY_PNG)
#: The formats each plot is written in, by file suffix: the PNG first (report.md links it), then the vector forms.
FIGURE_FORMATS = ("png", "svg", "pdf")
#: Every plot is FIGURE_SIZE inches, about a page's text width (a figure spanning both columns of a two-column paper),
#: so its 10-point text prints at 10 points there; its PNG is FIGURE_DPI dots per inch: 1400 x 880 pixels.
FIGURE_SIZE = (7.0, 4.4)
FIGURE_DPI = 200
#: Categories drawn at one point of the F1 plot make one marker whose area grows with their number up to this many
#: single markers' areas; the number is written beside it.
MAX_STACK_AREA = 16
#: Where categories with no training positive are drawn on the log frequency axis.
ZERO_TRAIN_X = 0.5


def figure_file(png: str, fmt: str) -> str:
    """The name of plot ``png`` (one of :data:`FIGURES`) in format ``fmt`` (one of :data:`FIGURE_FORMATS`)."""
    return f"{png.removesuffix('.png')}.{fmt}"


#: Every plot's every file, in the report's order.
FIGURE_FILES = tuple(figure_file(png, fmt) for png in FIGURES for fmt in FIGURE_FORMATS)

_TABLE_COLUMNS = ("category", "name", "train_positives", "test_positives", "tp", "fp", "fn", "tn",
                  "precision", "recall", "f1")
_DASH = "\u2014"
_NOT_AVERAGED = "\u2020"  # dagger
#: The [rank] score functions as the report names them (Debole & Sebastiani 2005, Table 2).
SELECTION_FUNCTIONS = {"chi2": "chi-square", "ig": "information gain", "gr": "gain ratio",
                       FREQUENCY: "frequency (occurrences in the training documents)"}


# --------------------------------------------------------------------------------------------
# helpers


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def _float(value: Any, missing: str) -> str:
    return missing if _missing(value) else f"{float(value):.4f}"


def _int(value: Any, missing: str) -> str:
    return missing if _missing(value) else str(int(value))


def _check_table(table: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    absent = [c for c in columns if c not in table.columns]
    if absent:
        raise ValueError(f"the per-category table lacks columns {absent}; it has {list(table.columns)}")
    return table.sort_values("category", kind="stable", key=lambda s: s.astype(str)).reset_index(drop=True)


def _cell(value: Any) -> str:
    """Text for a Markdown table cell: pipes escaped, line breaks flattened."""
    text = "" if _missing(value) else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: Sequence[str]) -> list[str]:
    rule = {"l": "---", "r": "---:", "c": ":---:"}
    return [_row(header), _row([rule[a] for a in align]), *(_row(r) for r in rows)]


def _get(mapping: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(mapping, Mapping) or key not in mapping:
            return default
        mapping = mapping[key]
    return mapping


# --------------------------------------------------------------------------------------------
# CSV


def per_category_csv(table: pd.DataFrame) -> str:
    r"""The per-category table as CSV, as LYRL2004 publishes it, so any average can be recomputed.

    Header ``category,name,train_positives,test_positives,TP,FP,FN,TN,P,R,F1``; one row per
    category sorted by category code; counts as integers, P, R, F1 with 4 decimals (an empty
    field for a missing value); fields quoted only when needed (a name holding a comma or quote),
    lines ended by ``\n``. Raises ValueError if a column is missing.
    """
    rows = _check_table(table, _TABLE_COLUMNS)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(CSV_HEADER)
    for r in rows.itertuples(index=False):
        writer.writerow([
            r.category, "" if _missing(r.name) else r.name,
            _int(r.train_positives, ""), _int(r.test_positives, ""),
            _int(r.tp, ""), _int(r.fp, ""), _int(r.fn, ""), _int(r.tn, ""),
            _float(r.precision, ""), _float(r.recall, ""), _float(r.f1, ""),
        ])
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# Markdown

_MEASURES = tuple((label, name) for name, label in MEASURE_LABELS.items())
_RANKING_ROWS = ("P", "R", "RP", "nDCG")
_RANKING_KEY = re.compile(r"^(P|R|RP|nDCG)@(\d+)$")


def _settings_lines(settings: Any, metrics: Mapping[str, Any], method_lines: Sequence[str]) -> list[str]:
    s = settings if isinstance(settings, Mapping) else {}

    def val(*keys: str) -> str:
        v = _get(s, *keys)
        return _DASH if v is None or v == "" else f"`{v}`"

    select_k, select_xi = _get(s, "select", "top_k"), _get(s, "select", "reduction_factor")
    if select_k:
        kept = f"top {select_k} terms"
    elif select_xi:
        kept = f"reduction factor xi = {select_xi}"
    elif select_k is None and select_xi is None:
        kept = None
    else:
        kept = "all terms"
    function, score = _get(s, "rank", "score"), _get(s, "rank", "global_score")
    if kept is None and score is None:
        selection = _DASH
    else:
        name = SELECTION_FUNCTIONS.get(function or "chi2", function)  # runs before rank.score was a setting: chi2
        globalized = "" if function == FREQUENCY else f", global score `{score if score is not None else '?'}`"
        selection = f"{name}{globalized}, {kept or '?'}"
    min_df = _get(s, "select", "min_df")
    if min_df not in (None, 1):
        selection += f", of the terms in at least {min_df} training documents (`select.min_df`)"
    stop = _get(s, "tokenize", "stop_list")
    weight = _get(s, "tokenize", "title_weight")
    analyzer = ANALYZERS.get(_get(s, "tokenize", "analyzer"))  # the default, LYRL2004's recipe, goes unsaid
    terms = "".join(text for text, chosen in (
        (f", {analyzer.title} (`tokenize.analyzer = {analyzer.name}`)" if analyzer else "",
         analyzer not in (None, next(iter(ANALYZERS.values())))),
        (", word bigrams (`tokenize.ngrams = 2`)", _get(s, "tokenize", "ngrams") == 2),
        (", word bigrams and trigrams (`tokenize.ngrams = 3`)", _get(s, "tokenize", "ngrams") == 3),
        (f", title terms counted {weight} times (`tokenize.title_weight`)", weight not in (None, 1)),
        (", title terms as features of their own (`tokenize.title_terms`)", _get(s, "tokenize", "title_terms") is True),
    ) if chosen)
    lines = [
        *_decision_lines(metrics, method_lines),
        f"- Term selection: {selection}",
        f"- Weighting: {val('weight', 'scheme')}",
        f"- Text processing: stemmer {val('tokenize', 'stemmer')}, "
        f"stop list {'`' + str(stop) + '`' if stop else 'none'}{terms}",
        f"- zero_division: `{metrics.get('zero_division', _DASH)}`; averaged over: "
        f"`{metrics.get('averaged_over', _DASH)}`",
    ]
    corpus = _get(s, "corpus")
    if isinstance(corpus, Mapping):
        detail = [f"{k} `{corpus[k]}`" for k in ("format", "path", "category_set", "document_filter",
                                                  "test_parts") if corpus.get(k) not in (None, "", [])]
        if detail:
            lines.append("- Corpus: " + ", ".join(detail))
    return lines


def _decision_lines(metrics: Mapping[str, Any], method_lines: Sequence[str]) -> list[str]:
    """The method with its parameters (``method_lines``, which its module words: :func:`sparktc.models.registry.
    describe`), the thresholding with its, and the search space, as ``metrics.json`` records them
    (:func:`sparktc.models.decision.decision_record`; REFERENCE.md section 5). A record without them is read as
    the [train] defaults: a fixed threshold, nothing searched.
    """
    thresholding = metrics.get("thresholding") or {"name": "fixed"}
    space = metrics.get("search_space") or {}

    def val(values: Mapping[str, Any], key: str) -> str:
        v = values.get(key)
        return _DASH if v is None or v == "" else f"`{v}`"

    lines = list(method_lines)
    name = thresholding["name"]
    validation = thresholding.get("validation") or space.get("validation")
    cross_validation = (f"a validation set of {val({'v': validation}, 'v')} of the training documents (seed "
                        f"{val(thresholding, 'seed')}), held out from training (Debole & Sebastiani 2005)"
                        if validation else f"{val(thresholding, 'folds')}-fold cross-validation on the training "
                        f"documents (seed {val(thresholding, 'seed')})")
    lines.append(f"- Thresholding: {val(thresholding, 'name')}" + {
        "fixed": ", assign when the score exceeds the decision threshold",
        "scut": f", per-category thresholds by SCut over {cross_validation}",
        "scutfbr": f", per-category thresholds by SCutFBR over {cross_validation}, fbr {val(thresholding, 'fbr')}",
        "proportional": f", per-category thresholds assigning each category its training share of the validation "
                        f"documents over {cross_validation}",
        "pcut": ", each category assigned to its training share of the test documents",
        "rcut": f", the {val(thresholding, 'rcut_k')} best categories of each document",
    }.get(name, ""))
    if name == "fixed":
        lines.append(f"- Decision threshold: {val(thresholding, 'threshold')}")
    if space:
        searched = ", ".join(f"{key} `{value}`" for key, value in space.items()
                             if not key.startswith("shared_") and key not in ("folds", "seed", "validation"))
        objective = "macro-F1" if space.get("objective") == "macro_f1" else "micro-F1"
        shared = "".join(f"; one {name} for all categories, by cross-validated {objective}"
                         for key, name in (("shared_positive_weight", "positive weight"), ("shared_fbr", "fbr"),
                                           ("shared_C", "C"), ("shared_terms", "term count"))
                         if space.get(key))
        chooser = (f"on a validation set of {val(space, 'validation')} of the training documents" if validation
                   else f"by {val(space, 'folds')}-fold cross-validation")
        lines.append(f"- Search space ([tune], chosen per category {chooser}, seed {val(space, 'seed')}): "
                     f"{searched}{shared}")
    else:
        lines.append("- Search space ([tune]): none")
    return lines


def figure_markdown(alt: str, png: str) -> list[str]:
    """A plot in Markdown, ``alt`` its text: its PNG shown, its vector files linked below it."""
    vectors = ", ".join(f"[{fmt.upper()}]({figure_file(png, fmt)})" for fmt in FIGURE_FORMATS if fmt != "png")
    return [f"![{alt}]({png})", "", f"For papers: {vectors}.", ""]


def report_markdown(metrics: Mapping[str, Any], table: pd.DataFrame, method_lines: Sequence[str]) -> str:
    """A readable Markdown report of one evaluation (REFERENCE.md section 6).

    Sections, in order: title with the corpus; the 0/0 convention (a quoted line right under the
    title); the main table (micro and macro precision, recall, F1, fallout, overlap, error,
    accuracy and Macro*-F1); with ``metrics["closed"]``, micro and macro P, R, F1 as assigned and with the
    predictions closed under the hierarchy, one labelled row each (:data:`CLOSED_ROWS`); the averaging sets
    (skipped without ``metrics["averages"]``); the
    frequency bands with :data:`F1_BY_BAND_PNG` (skipped without ``metrics["bands"]``);
    the ranking measures, one column per K (skipped without ``metrics["ranking"]``); F1 against
    training-set frequency (:data:`F1_BY_TRAINING_FREQUENCY_PNG`); the per-category
    table with categories outside the averaged set marked by a dagger, naming the files that hold it whole
    (``per_category.csv`` and :data:`sparktc.evaluation.appendix_tables.CONTINGENCY_TABLES_TXT`); the key
    settings, first the method (``method_lines``: its module words them, from ``metrics["method"]``), thresholding
    and search space. Each plot's PNG is shown, its SVG and PDF linked below it (:func:`figure_markdown`).
    """
    rows = _check_table(table, _TABLE_COLUMNS)
    corpus = metrics.get("corpus") or _get(metrics, "settings", "corpus", "format") or "unknown corpus"
    zero = metrics.get("zero_division")
    convention = metrics.get("zero_division_convention") or "not stated"
    averaged_over = metrics.get("averaged_over", _DASH)
    out: list[str] = [f"# Text-categorization evaluation: {corpus}", ""]
    out += [
        f"> **0/0 convention: zero_division = {zero if zero is not None else _DASH}.** {convention}. "
        "Papers differ here (LYRL2004 and Debole & Sebastiani use 1, scikit-learn and LibMultiLabel "
        "use 0), so compare numbers only under the same convention.",
        "",
    ]
    summary = [
        f"- Test documents: {_int(metrics.get('test_documents'), _DASH)}",
        f"- Categories averaged: {_int(metrics.get('n_categories'), _DASH)} "
        f"(set `{averaged_over}`) of {len(rows)} in the per-category table",
    ]
    out += summary + [""]

    # main table
    out += [f"## Effectiveness (averaged over `{averaged_over}`)", ""]
    main_rows = [
        [label, _float(metrics.get(f"micro_{key}"), _DASH), _float(metrics.get(f"macro_{key}"), _DASH)]
        for label, key in _MEASURES
    ]
    main_rows.append(["Macro*-F1 (harmonic mean of macro-P and macro-R)", _DASH,
                      _float(metrics.get("macro_star_f1"), _DASH)])
    out += _md_table(["Measure", "Micro", "Macro"], main_rows, "lrr") + [""]

    closed = metrics.get("closed")
    if isinstance(closed, Mapping):
        out += ["## Predictions closed under the hierarchy", "",
                "Each test document's predicted categories with all their ancestors among the run's categories "
                "added (`evaluate.close_predictions`), counted over the same categories and documents; the "
                "as-assigned numbers stay the headline.", ""]
        keys = [f"{kind}_{m}" for kind in ("micro", "macro") for m in ("precision", "recall", "f1")]
        closed_rows = [[label, *(_float(values.get(key), _DASH) for key in keys)]
                       for label, values in zip(CLOSED_ROWS, (metrics, closed))]
        out += _md_table(["Predictions", "Micro-P", "Micro-R", "Micro-F1", "Macro-P", "Macro-R", "Macro-F1"],
                         closed_rows, "lrrrrrr") + [""]

    averages = metrics.get("averages")
    if isinstance(averages, Mapping) and averages:
        out += ["## Averaging sets", "",
                "Which categories are averaged matters (REFERENCE.md section 6); the headline set is "
                "in bold.", ""]
        set_rows = []
        for set_name, values in averages.items():
            values = values if isinstance(values, Mapping) else {}
            label = f"**{_cell(set_name)}**" if set_name == averaged_over else _cell(set_name)
            set_rows.append([label, _int(values.get("n_categories"), _DASH),
                             _float(values.get("micro_f1"), _DASH), _float(values.get("macro_f1"), _DASH)])
        out += _md_table(["Set", "#categories", "Micro-F1", "Macro-F1"], set_rows, "lrrr") + [""]

    bands = metrics.get("bands")
    if isinstance(bands, Sequence) and not isinstance(bands, str) and bands:
        out += ["## By training-set frequency band", "",
                "Categories grouped by their number of training positives (Lewis 1991; Yang & Liu 1999).",
                ""]
        band_rows = [[_cell(b.get("band")), _int(b.get("n_categories"), _DASH),
                      _float(b.get("micro_f1"), _DASH), _float(b.get("macro_f1"), _DASH)]
                     for b in bands if isinstance(b, Mapping)]
        out += _md_table(["Training positives", "#categories", "Micro-F1", "Macro-F1"], band_rows, "lrrr")
        out += ["", *figure_markdown("Micro- and macro-F1 by frequency band", F1_BY_BAND_PNG)]

    ranking = metrics.get("ranking")
    if isinstance(ranking, Mapping) and ranking:
        ks = sorted({int(m.group(2)) for m in map(_RANKING_KEY.match, ranking) if m})
        if ks:
            out += ["## Ranking measures", "",
                    "Per document, averaged over test documents (LibMultiLabel): P@K, R@K (0 for a "
                    "document without labels), RP@K = hits in top K / min(K, #relevant), nDCG@K.", ""]
            rank_rows = [[f"{name}@K"] + [_float(ranking.get(f"{name}@{k}"), _DASH) for k in ks]
                         for name in _RANKING_ROWS]
            out += _md_table(["Measure"] + [f"K = {k}" for k in ks], rank_rows, "l" + "r" * len(ks)) + [""]

    if metrics.get("cv_micro_f1") is not None:
        validated = (metrics.get("thresholding") or {}).get("validation") or \
            (metrics.get("search_space") or {}).get("validation")
        how = ("on the validation set held out from training (each category's chosen setting, scored by its model "
               "trained without it, at the thresholds set on it)" if validated else
               "(each category's chosen setting, its out-of-fold scores and thresholds)")
        out += ["## Cross-validation on the training documents", "",
                f"Micro-F1 of the cross-validated decisions {how}: {_float(metrics['cv_micro_f1'], _DASH)}. The "
                "figure to choose a configuration by; the test documents played no part in it.", ""]

    decisions = metrics.get("training_decisions")
    if isinstance(decisions, Mapping):
        lines = training_decisions_lines(decisions)
        if lines:
            out += ["## Decisions on the training documents", "",
                    f"The trained rule applied to its own {_int(decisions.get('documents'), _DASH)} training "
                    "documents:", ""] + [f"- **Warning:** {line}." for line in lines]
            for key, what in (("assign_nothing", "assigns none"), ("assign_everything", "assigns all")):
                if decisions.get(key):
                    out += [f"- Categories it {what} of: {', '.join(f'`{code}`' for code in decisions[key])}"]
            out += [""]

    out += ["## F1 against training-set frequency", "",
            *figure_markdown("Per-category F1 against training-set frequency", F1_BY_TRAINING_FREQUENCY_PNG)]

    out += ["## Per category", "",
            f"{_NOT_AVERAGED} = not in the averaged set `{averaged_over}`. The same table, with TN, is in "
            f"`per_category.csv`, and in the layout of LYRL2004's online appendix 15 in `{CONTINGENCY_TABLES_TXT}`.",
            ""]
    averaged = rows["averaged"] if "averaged" in rows.columns else pd.Series(True, index=rows.index)
    cat_rows = []
    for r, is_averaged in zip(rows.itertuples(index=False), averaged):
        mark = "" if (not _missing(is_averaged) and bool(is_averaged)) else f" {_NOT_AVERAGED}"
        cat_rows.append([
            _cell(r.category) + mark, _cell(r.name),
            _int(r.train_positives, _DASH), _int(r.test_positives, _DASH),
            _int(r.tp, _DASH), _int(r.fp, _DASH), _int(r.fn, _DASH),
            _float(r.precision, _DASH), _float(r.recall, _DASH), _float(r.f1, _DASH),
        ])
    out += _md_table(["Category", "Name", "Train+", "Test+", "TP", "FP", "FN", "P", "R", "F1"],
                     cat_rows, "llrrrrrrrr") + [""]

    out += ["## Settings", ""] + _settings_lines(metrics.get("settings"), metrics, method_lines) + [""]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# notebooks

#: The headline's rows in a notebook: the measures the papers quote, micro and macro.
_HEADLINE = (("Precision", "precision"), ("Recall", "recall"), ("F1", "f1"))


def per_category_frame(csv_text: str, averaged: Sequence[str]) -> pd.DataFrame:
    """``per_category.csv`` (:func:`per_category_csv`) as a DataFrame: one row per category, the file's columns
    (:data:`CSV_HEADER`) and ``averaged``, whether the category is one of ``averaged``, the set the headline averages
    are taken over. Codes and names stay strings (a category named ``NA`` is no missing value); an empty P, R or F1
    is NaN.
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
    items = "".join(f"<li>{_inline(line.removeprefix('- '))}</li>" for line in _decision_lines(record, method_lines))
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
    rows = "".join(f"<tr><th>{label}</th><td>{_float(metrics.get(f'micro_{key}'), _DASH)}</td>"
                   f"<td>{_float(metrics.get(f'macro_{key}'), _DASH)}</td></tr>" for label, key in _HEADLINE)
    scope = html.escape(f"{_int(metrics.get('test_documents'), _DASH)} test documents, "
                        f"{_int(metrics.get('n_categories'), _DASH)} categories averaged (set "
                        f"{metrics.get('averaged_over', _DASH)}), "
                        f"zero_division = {metrics.get('zero_division', _DASH)}")
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


# --------------------------------------------------------------------------------------------
# plots


def lowess(x: Sequence[float], y: Sequence[float], at: Sequence[float], frac: float = 0.5) -> np.ndarray:
    """Locally weighted linear regression (Cleveland's LOWESS, no robustness passes) in numpy.

    For each point of ``at``, fits a weighted straight line to the ``ceil(frac * n)`` nearest
    points of ``x`` with tricube weights and returns its value there; where those points share a
    single x value, their weighted mean. Raises ValueError for empty or unequal inputs.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    at = np.asarray(at, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or x.size == 0:
        raise ValueError(f"x and y must be non-empty 1-D arrays of one length; got {x.shape} and {y.shape}")
    if not 0.0 < frac <= 1.0:
        raise ValueError(f"frac must be in (0, 1]; got {frac}")
    k = max(2, min(x.size, int(math.ceil(frac * x.size))))
    fitted = np.empty(at.shape, dtype=np.float64)
    for i, x0 in enumerate(at.ravel()):
        distance = np.abs(x - x0)
        h = np.partition(distance, k - 1)[k - 1]
        if h <= 0:
            w = (distance <= 0).astype(np.float64)
        else:
            u = np.clip(distance / (h * 1.000001), 0.0, 1.0)
            w = (1.0 - u**3) ** 3
        total = w.sum()
        mean_x = (w * x).sum() / total
        mean_y = (w * y).sum() / total
        var_x = (w * (x - mean_x) ** 2).sum()
        if var_x <= 1e-12 * max(1.0, mean_x * mean_x) * total:
            fitted.flat[i] = mean_y
        else:
            slope = (w * (x - mean_x) * (y - mean_y)).sum() / var_x
            fitted.flat[i] = mean_y + slope * (x0 - mean_x)
    return fitted


def _new_figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGURE_SIZE, dpi=FIGURE_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


#: Per format, the metadata entries matplotlib would fill with its version or the date: left out, so the bytes
#: depend on the plot only.
_NO_STAMPS = {"png": {"Software": None}, "svg": {"Creator": None, "Date": None},
              "pdf": {"Creator": None, "Producer": None, "CreationDate": None}}


def _saved(figure, fmt: str, title: str = "") -> bytes:
    """``figure`` as ``fmt`` bytes, with ``title`` as the document's title (SVG and PDF; PNG: its ``Title`` text)."""
    buffer = io.BytesIO()
    metadata = {**_NO_STAMPS[fmt], **({"Title": title} if title else {})}
    figure.savefig(buffer, format=fmt, dpi=FIGURE_DPI, metadata=metadata)
    return buffer.getvalue()


def _png(figure) -> bytes:
    return _saved(figure, "png")


def _rendered(figure, title: str) -> dict[str, bytes]:
    """``figure`` in every one of :data:`FIGURE_FORMATS`, by format, laid out once (by the first)."""
    rendered = {}
    for fmt in FIGURE_FORMATS:
        rendered[fmt] = _saved(figure, fmt, title)
        figure.set_layout_engine("none")  # the constrained layout is fixed: the other formats need not redo it
    return rendered


def _style():
    import matplotlib.style

    # svg.hashsalt: the SVG's element ids from a fixed salt, not a random one; svg.fonttype none: text stays text
    # (searchable, editable); pdf.fonttype 42: TrueType fonts, not Type 3
    return matplotlib.style.context(["default", {"svg.hashsalt": "sparktc", "svg.fonttype": "none",
                                                 "pdf.fonttype": 42}])


def _title(what: str, label: str) -> str:
    """A plot's title: what it shows, then ``label`` (the run: corpus, category set, method), wrapped to fit."""
    return "\n".join([what, *textwrap.wrap(label, 90)])


def _stacks(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct points of (x, y), in increasing order, with how many of the given points are at each."""
    points, counts = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
    return points[:, 0], points[:, 1], counts


def _scatter_stacks(ax, x: np.ndarray, y: np.ndarray, size: float, label: str = "", numbered: bool = True,
                    **style: Any) -> int:
    """Points at one place drawn as one marker whose area is ``size`` times their number (at most
    :data:`MAX_STACK_AREA`), that number written above it when it is 2 or more (and ``numbered``), and ``label``'s
    legend entry (if any) with one point's marker; the largest number.
    """
    px, py, counts = _stacks(x, y)
    areas = size * np.minimum(counts, MAX_STACK_AREA)
    ax.scatter(px, py, s=areas, **style)
    if label:
        ax.scatter([], [], s=size, label=label, **style)  # the legend's marker: one category's
    for xi, yi, n, area in zip(px, py, counts, areas):
        if numbered and n >= 2:
            ax.annotate(str(n), (xi, yi), xytext=(0, math.sqrt(area) / 2 + 1), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, color="0.2")
    return int(counts.max(initial=0))


def plot_f1_by_training_frequency(table: pd.DataFrame, label: str = "") -> dict[str, bytes]:
    """Per-category F1 against training-set frequency, log x axis, with a LOWESS curve, by format
    (:data:`FIGURE_FORMATS`).

    As in LYRL2004 and Yang & Liu 1999 Figs 4-5. Categories with at least one training positive
    are dots (filled when in the averaged set, hollow otherwise); categories with none cannot sit
    on a log axis and are drawn as red crosses at x = :data:`ZERO_TRAIN_X`, left of a dotted
    line, and left out of the curve. Categories at one point (the rare ones pile up at F1 = 0 and 1) are one
    marker whose area grows with their number, written above it: no point is moved, so a reader still reads
    each category's exact F1 and frequency. The curve is :func:`lowess` (frac 0.5) of F1 over
    log10(training positives), drawn when there are at least 3 distinct frequencies; it is
    clipped to [0, 1]. The title names ``label``, the run (corpus, category set, method). Size :data:`FIGURE_SIZE`
    at :data:`FIGURE_DPI`; identical bytes per input.
    """
    rows = _check_table(table, ("category", "train_positives", "f1"))
    train = pd.to_numeric(rows["train_positives"], errors="coerce").to_numpy(dtype=np.float64)
    f1 = pd.to_numeric(rows["f1"], errors="coerce").to_numpy(dtype=np.float64)
    if "averaged" in rows.columns:
        averaged = np.array([not _missing(v) and bool(v) for v in rows["averaged"]], dtype=bool)
    else:
        averaged = np.ones(len(rows), dtype=bool)
    known = ~np.isnan(train) & ~np.isnan(f1)
    positive = known & (train > 0)
    zero = known & (train <= 0)
    title = _title("Per-category F1 against training-set frequency", label)

    with _style():
        figure = _new_figure()
        ax = figure.add_subplot()
        stacked = 0
        if positive.any():
            on = positive & averaged
            off = positive & ~averaged
            if on.any():
                stacked = max(stacked, _scatter_stacks(ax, train[on], f1[on], 16, color="tab:blue", alpha=0.7,
                                                       linewidths=0, label=f"categories ({int(on.sum())})"))
            if off.any():
                stacked = max(stacked, _scatter_stacks(ax, train[off], f1[off], 16, facecolors="none",
                                                       edgecolors="tab:blue",
                                                       label=f"not averaged ({int(off.sum())})"))
            logx = np.log10(train[positive])
            if np.unique(logx).size >= 3:
                grid = np.linspace(logx.min(), logx.max(), 200)
                curve = np.clip(lowess(logx, f1[positive], grid, frac=0.5), 0.0, 1.0)
                ax.plot(10.0**grid, curve, color="tab:orange", linewidth=2.0, label="LOWESS (frac 0.5)")
        if zero.any():
            stacked = max(stacked, _scatter_stacks(
                ax, np.full(int(zero.sum()), ZERO_TRAIN_X), f1[zero], 20, marker="x", color="tab:red",
                label=f"0 training positives ({int(zero.sum())}), at x = {ZERO_TRAIN_X}"))
            ax.axvline(0.75, color="grey", linestyle=":", linewidth=1)
        if stacked >= 2:  # a legend entry saying what a marker's size and number mean
            ax.scatter([], [], s=16 * 3, color="0.6", linewidths=0,
                       label="3 categories at one point (area grows with the number)")
        if not (positive.any() or zero.any()):
            ax.text(0.5, 0.5, "no categories with an F1 value", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_xscale("log")
        right = float(train[positive].max()) * 2.0 if positive.any() else 10.0
        left = ZERO_TRAIN_X / 1.6 if zero.any() else (float(train[positive].min()) / 1.6 if positive.any() else 1.0)
        ax.set_xlim(left, max(right, left * 10))
        ax.set_ylim(-0.08, 1.12)  # room for the largest marker at F1 = 0 and a number above one at F1 = 1
        ax.set_yticks(np.linspace(0.0, 1.0, 6))
        ax.set_xlabel("training-set frequency (positive training documents, log scale)")
        ax.set_ylabel("F1 per category")
        ax.set_title(title, fontsize="medium")
        ax.grid(True, which="major", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="lower right", fontsize="x-small")
        return _rendered(figure, title)


def plot_f1_by_band(bands: Sequence[Mapping[str, Any]], label: str = "") -> dict[str, bytes]:
    """Grouped bars of micro- and macro-F1 per training-frequency band, in the given order, by format
    (:data:`FIGURE_FORMATS`).

    Each band dict has ``band`` (label), ``n_categories``, ``micro_f1``, ``macro_f1``; a missing
    F1 (e.g. a band without categories) draws no bar. The number of categories is written above
    each group. The title names ``label``, the run (corpus, category set, method). Size :data:`FIGURE_SIZE` at
    :data:`FIGURE_DPI`; identical bytes per input.
    """
    bands = [b for b in bands if isinstance(b, Mapping)]
    labels = [str(b.get("band", "?")) for b in bands]

    def values(key: str) -> np.ndarray:
        return np.array([np.nan if _missing(b.get(key)) else float(b[key]) for b in bands], dtype=np.float64)

    micro, macro = values("micro_f1"), values("macro_f1")
    counts = [b.get("n_categories") for b in bands]
    title = _title("Micro- and macro-F1 by training-frequency band (n = categories per band)", label)
    with _style():
        figure = _new_figure()
        ax = figure.add_subplot()
        if bands:
            x = np.arange(len(bands), dtype=np.float64)
            width = 0.38
            ax.bar(x - width / 2, np.nan_to_num(micro, nan=0.0), width, color="tab:blue", label="micro-F1")
            ax.bar(x + width / 2, np.nan_to_num(macro, nan=0.0), width, color="tab:orange", label="macro-F1")
            for xi, mi, ma, n in zip(x, micro, macro, counts):
                for offset, v in ((-width / 2, mi), (width / 2, ma)):
                    if not np.isnan(v):
                        ax.text(xi + offset, v + 0.01, f"{v:.3f}", ha="center", va="bottom", fontsize="x-small")
                top = np.nanmax([mi, ma, 0.0])
                ax.text(xi, top + 0.06, f"n = {_int(n, '?')}", ha="center", va="bottom", fontsize="small",
                        fontweight="bold")
            ax.set_xticks(x, labels)
            ax.legend(loc="upper center", ncols=2, fontsize="small")
        else:
            ax.text(0.5, 0.5, "no frequency bands", ha="center", va="center", transform=ax.transAxes)
        ax.set_ylim(0.0, 1.3)
        ax.set_yticks(np.linspace(0.0, 1.0, 6))
        ax.set_xlabel("training-set frequency band (positive training documents)")
        ax.set_ylabel("F1")
        ax.set_title(title, fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
        return _rendered(figure, title)
