"""Evaluation results as the files a person reads: a per-category CSV, a Markdown report and two plots (each in
every one of :data:`sparktc.evaluation.figures.FIGURE_FORMATS`, drawn in the house style of
:mod:`sparktc.evaluation.figures`); a notebook shows them through :mod:`sparktc.evaluation.notebook`.

Pure functions, no Spark and no file-system access: each returns ``str`` or a plot's bytes and the
Spark layer writes them through Hadoop file systems. Inputs (REFERENCE.md sections 6 and 7):

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

The report's tables are written by :func:`sparktc.runtime.markdown.markdown_table`, which escapes a pipe or a line
break in a category's name or a set's.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparktc.evaluation.appendix_tables import CONTINGENCY_TABLES_TXT
from sparktc.evaluation.figures import (
    FIGURE_FORMATS,
    figure_file,
    figure_markdown,
    new_figure,
    rendered,
    scatter_stacks,
    style,
    title,
)
from sparktc.evaluation.metrics import MEASURE_LABELS
from sparktc.evaluation.training_decisions import training_decisions_lines
from sparktc.features.term_selection import FREQUENCY
from sparktc.features.text import ANALYZERS
from sparktc.runtime.markdown import markdown_table

__all__ = [
    "CLOSED_ROWS",
    "CSV_HEADER",
    "DASH",
    "F1_BY_TRAINING_FREQUENCY_PNG",
    "F1_BY_BAND_PNG",
    "FIGURES",
    "FIGURE_FILES",
    "SELECTION_FUNCTIONS",
    "ZERO_TRAIN_X",
    "decision_lines",
    "float_text",
    "int_text",
    "is_missing",
    "per_category_csv",
    "report_markdown",
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
#: Where categories with no training positive are drawn on the log frequency axis.
ZERO_TRAIN_X = 0.5
#: Every plot's every file, in the report's order.
FIGURE_FILES = tuple(figure_file(png, fmt) for png in FIGURES for fmt in FIGURE_FORMATS)

_TABLE_COLUMNS = ("category", "name", "train_positives", "test_positives", "tp", "fp", "fn", "tn",
                  "precision", "recall", "f1")
#: What a table shows for a missing value: an em dash.
DASH = "\u2014"
_NOT_AVERAGED = "\u2020"  # dagger
#: The [rank] score functions as the report names them (Debole & Sebastiani 2005, Table 2).
SELECTION_FUNCTIONS = {"chi2": "chi-square", "ig": "information gain", "gr": "gain ratio",
                       FREQUENCY: "frequency (occurrences in the training documents)"}


# --------------------------------------------------------------------------------------------
# helpers


def is_missing(value: Any) -> bool:
    """Whether ``value`` is missing: None, pandas' NA or NaT, or a NaN."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def float_text(value: Any, missing: str) -> str:
    """A measure as the report prints it, to 4 decimals; ``missing`` for a missing value."""
    return missing if is_missing(value) else f"{float(value):.4f}"


def int_text(value: Any, missing: str) -> str:
    """A count as the report prints it; ``missing`` for a missing value."""
    return missing if is_missing(value) else str(int(value))


def _check_table(table: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    absent = [c for c in columns if c not in table.columns]
    if absent:
        raise ValueError(f"the per-category table lacks columns {absent}; it has {list(table.columns)}")
    return table.sort_values("category", kind="stable", key=lambda s: s.astype(str)).reset_index(drop=True)


def _cell(value: Any) -> Any:
    """A Markdown table cell's value: a missing one empty (:func:`sparktc.runtime.markdown.cell_text` escapes it)."""
    return "" if is_missing(value) else value


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str) -> list[str]:
    return markdown_table(header, rows, align, spaced_rule=True).split("\n")


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
            r.category, "" if is_missing(r.name) else r.name,
            int_text(r.train_positives, ""), int_text(r.test_positives, ""),
            int_text(r.tp, ""), int_text(r.fp, ""), int_text(r.fn, ""), int_text(r.tn, ""),
            float_text(r.precision, ""), float_text(r.recall, ""), float_text(r.f1, ""),
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
        return DASH if v is None or v == "" else f"`{v}`"

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
        selection = DASH
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
        *decision_lines(metrics, method_lines),
        f"- Term selection: {selection}",
        f"- Weighting: {val('weight', 'scheme')}",
        f"- Text processing: stemmer {val('tokenize', 'stemmer')}, "
        f"stop list {'`' + str(stop) + '`' if stop else 'none'}{terms}",
        f"- zero_division: `{metrics.get('zero_division', DASH)}`; averaged over: "
        f"`{metrics.get('averaged_over', DASH)}`",
    ]
    corpus = _get(s, "corpus")
    if isinstance(corpus, Mapping):
        detail = [f"{k} `{corpus[k]}`" for k in ("format", "path", "category_set", "document_filter",
                                                  "test_parts") if corpus.get(k) not in (None, "", [])]
        if detail:
            lines.append("- Corpus: " + ", ".join(detail))
    return lines


def decision_lines(metrics: Mapping[str, Any], method_lines: Sequence[str]) -> list[str]:
    """The method with its parameters (``method_lines``, which its module words: :func:`sparktc.models.registry.
    describe`), the thresholding with its, and the search space, as ``metrics.json`` records them
    (:func:`sparktc.models.decision.decision_record`; REFERENCE.md section 5). A record without them is read as
    the [train] defaults: a fixed threshold, nothing searched.
    """
    thresholding = metrics.get("thresholding") or {"name": "fixed"}
    space = metrics.get("search_space") or {}

    def val(values: Mapping[str, Any], key: str) -> str:
        v = values.get(key)
        return DASH if v is None or v == "" else f"`{v}`"

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
    averaged_over = metrics.get("averaged_over", DASH)
    out: list[str] = [f"# Text-categorization evaluation: {corpus}", ""]
    out += [
        f"> **0/0 convention: zero_division = {zero if zero is not None else DASH}.** {convention}. "
        "Papers differ here (LYRL2004 and Debole & Sebastiani use 1, scikit-learn and LibMultiLabel "
        "use 0), so compare numbers only under the same convention.",
        "",
    ]
    summary = [
        f"- Test documents: {int_text(metrics.get('test_documents'), DASH)}",
        f"- Categories averaged: {int_text(metrics.get('n_categories'), DASH)} "
        f"(set `{averaged_over}`) of {len(rows)} in the per-category table",
    ]
    out += summary + [""]

    # main table
    out += [f"## Effectiveness (averaged over `{averaged_over}`)", ""]
    main_rows = [
        [label, float_text(metrics.get(f"micro_{key}"), DASH), float_text(metrics.get(f"macro_{key}"), DASH)]
        for label, key in _MEASURES
    ]
    main_rows.append(["Macro*-F1 (harmonic mean of macro-P and macro-R)", DASH,
                      float_text(metrics.get("macro_star_f1"), DASH)])
    out += _md_table(["Measure", "Micro", "Macro"], main_rows, "lrr") + [""]

    closed = metrics.get("closed")
    if isinstance(closed, Mapping):
        out += ["## Predictions closed under the hierarchy", "",
                "Each test document's predicted categories with all their ancestors among the run's categories "
                "added (`evaluate.close_predictions`), counted over the same categories and documents; the "
                "as-assigned numbers stay the headline.", ""]
        keys = [f"{kind}_{m}" for kind in ("micro", "macro") for m in ("precision", "recall", "f1")]
        closed_rows = [[label, *(float_text(values.get(key), DASH) for key in keys)]
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
            set_rows.append([label, int_text(values.get("n_categories"), DASH),
                             float_text(values.get("micro_f1"), DASH), float_text(values.get("macro_f1"), DASH)])
        out += _md_table(["Set", "#categories", "Micro-F1", "Macro-F1"], set_rows, "lrrr") + [""]

    bands = metrics.get("bands")
    if isinstance(bands, Sequence) and not isinstance(bands, str) and bands:
        out += ["## By training-set frequency band", "",
                "Categories grouped by their number of training positives (Lewis 1991; Yang & Liu 1999).",
                ""]
        band_rows = [[_cell(b.get("band")), int_text(b.get("n_categories"), DASH),
                      float_text(b.get("micro_f1"), DASH), float_text(b.get("macro_f1"), DASH)]
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
            rank_rows = [[f"{name}@K"] + [float_text(ranking.get(f"{name}@{k}"), DASH) for k in ks]
                         for name in _RANKING_ROWS]
            out += _md_table(["Measure"] + [f"K = {k}" for k in ks], rank_rows, "l" + "r" * len(ks)) + [""]

    if metrics.get("cv_micro_f1") is not None:
        validated = (metrics.get("thresholding") or {}).get("validation") or \
            (metrics.get("search_space") or {}).get("validation")
        how = ("on the validation set held out from training (each category's chosen setting, scored by its model "
               "trained without it, at the thresholds set on it)" if validated else
               "(each category's chosen setting, its out-of-fold scores and thresholds)")
        out += ["## Cross-validation on the training documents", "",
                f"Micro-F1 of the cross-validated decisions {how}: {float_text(metrics['cv_micro_f1'], DASH)}. The "
                "figure to choose a configuration by; the test documents played no part in it.", ""]

    decisions = metrics.get("training_decisions")
    if isinstance(decisions, Mapping):
        lines = training_decisions_lines(decisions)
        if lines:
            out += ["## Decisions on the training documents", "",
                    f"The trained rule applied to its own {int_text(decisions.get('documents'), DASH)} training "
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
        mark = "" if (not is_missing(is_averaged) and bool(is_averaged)) else f" {_NOT_AVERAGED}"
        cat_rows.append([
            _cell(r.category) + mark, _cell(r.name),
            int_text(r.train_positives, DASH), int_text(r.test_positives, DASH),
            int_text(r.tp, DASH), int_text(r.fp, DASH), int_text(r.fn, DASH),
            float_text(r.precision, DASH), float_text(r.recall, DASH), float_text(r.f1, DASH),
        ])
    out += _md_table(["Category", "Name", "Train+", "Test+", "TP", "FP", "FN", "P", "R", "F1"],
                     cat_rows, "llrrrrrrrr") + [""]

    out += ["## Settings", ""] + _settings_lines(metrics.get("settings"), metrics, method_lines) + [""]
    return "\n".join(out)


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


def plot_f1_by_training_frequency(table: pd.DataFrame, label: str = "") -> dict[str, bytes]:
    """Per-category F1 against training-set frequency, log x axis, with a LOWESS curve, by format
    (:data:`sparktc.evaluation.figures.FIGURE_FORMATS`).

    As in LYRL2004 and Yang & Liu 1999 Figs 4-5. Categories with at least one training positive
    are dots (filled when in the averaged set, hollow otherwise); categories with none cannot sit
    on a log axis and are drawn as red crosses at x = :data:`ZERO_TRAIN_X`, left of a dotted
    line, and left out of the curve. Categories at one point (the rare ones pile up at F1 = 0 and 1) are one
    marker whose area grows with their number, written above it: no point is moved, so a reader still reads
    each category's exact F1 and frequency. The curve is :func:`lowess` (frac 0.5) of F1 over
    log10(training positives), drawn when there are at least 3 distinct frequencies; it is
    clipped to [0, 1]. The title names ``label``, the run (corpus, category set, method). In the house style
    (:mod:`sparktc.evaluation.figures`): identical bytes per input.
    """
    rows = _check_table(table, ("category", "train_positives", "f1"))
    train = pd.to_numeric(rows["train_positives"], errors="coerce").to_numpy(dtype=np.float64)
    f1 = pd.to_numeric(rows["f1"], errors="coerce").to_numpy(dtype=np.float64)
    if "averaged" in rows.columns:
        averaged = np.array([not is_missing(v) and bool(v) for v in rows["averaged"]], dtype=bool)
    else:
        averaged = np.ones(len(rows), dtype=bool)
    known = ~np.isnan(train) & ~np.isnan(f1)
    positive = known & (train > 0)
    zero = known & (train <= 0)
    heading = title("Per-category F1 against training-set frequency", label)

    with style():
        figure = new_figure()
        ax = figure.add_subplot()
        stacked = 0
        if positive.any():
            on = positive & averaged
            off = positive & ~averaged
            if on.any():
                stacked = max(stacked, scatter_stacks(ax, train[on], f1[on], 16, color="tab:blue", alpha=0.7,
                                                       linewidths=0, label=f"categories ({int(on.sum())})"))
            if off.any():
                stacked = max(stacked, scatter_stacks(ax, train[off], f1[off], 16, facecolors="none",
                                                       edgecolors="tab:blue",
                                                       label=f"not averaged ({int(off.sum())})"))
            logx = np.log10(train[positive])
            if np.unique(logx).size >= 3:
                grid = np.linspace(logx.min(), logx.max(), 200)
                curve = np.clip(lowess(logx, f1[positive], grid, frac=0.5), 0.0, 1.0)
                ax.plot(10.0**grid, curve, color="tab:orange", linewidth=2.0, label="LOWESS (frac 0.5)")
        if zero.any():
            stacked = max(stacked, scatter_stacks(
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
        ax.set_title(heading, fontsize="medium")
        ax.grid(True, which="major", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="lower right", fontsize="x-small")
        return rendered(figure, heading)


def plot_f1_by_band(bands: Sequence[Mapping[str, Any]], label: str = "") -> dict[str, bytes]:
    """Grouped bars of micro- and macro-F1 per training-frequency band, in the given order, by format
    (:data:`sparktc.evaluation.figures.FIGURE_FORMATS`).

    Each band dict has ``band`` (label), ``n_categories``, ``micro_f1``, ``macro_f1``; a missing
    F1 (e.g. a band without categories) draws no bar. The number of categories is written above
    each group. The title names ``label``, the run (corpus, category set, method). In the house style
    (:mod:`sparktc.evaluation.figures`): identical bytes per input.
    """
    bands = [b for b in bands if isinstance(b, Mapping)]
    labels = [str(b.get("band", "?")) for b in bands]

    def values(key: str) -> np.ndarray:
        return np.array([np.nan if is_missing(b.get(key)) else float(b[key]) for b in bands], dtype=np.float64)

    micro, macro = values("micro_f1"), values("macro_f1")
    counts = [b.get("n_categories") for b in bands]
    heading = title("Micro- and macro-F1 by training-frequency band (n = categories per band)", label)
    with style():
        figure = new_figure()
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
                ax.text(xi, top + 0.06, f"n = {int_text(n, '?')}", ha="center", va="bottom", fontsize="small",
                        fontweight="bold")
            ax.set_xticks(x, labels)
            ax.legend(loc="upper center", ncols=2, fontsize="small")
        else:
            ax.text(0.5, 0.5, "no frequency bands", ha="center", va="center", transform=ax.transAxes)
        ax.set_ylim(0.0, 1.3)
        ax.set_yticks(np.linspace(0.0, 1.0, 6))
        ax.set_xlabel("training-set frequency band (positive training documents)")
        ax.set_ylabel("F1")
        ax.set_title(heading, fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
        return rendered(figure, heading)
