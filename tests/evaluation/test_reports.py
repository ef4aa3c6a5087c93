"""Reports a person reads: per-category CSV, Markdown report, plots as PNG, SVG and PDF (no Spark)."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from sparktc.corpora.registry import corpus_title
from sparktc.evaluation.figures import FIGURE_DPI, FIGURE_SIZE, MAX_STACK_AREA, new_figure, rendered, style
from sparktc.evaluation.notebook import per_category_frame, summary_html
from sparktc.evaluation.report import (
    CSV_HEADER,
    F1_BY_BAND_PNG,
    F1_BY_TRAINING_FREQUENCY_PNG,
    FIGURE_FILES,
    lowess,
    per_category_csv,
    plot_f1_by_band,
    plot_f1_by_training_frequency,
    report_markdown,
)
from sparktc.models.decision import decision_record, rule_title
from sparktc.models.registry import describe


def markdown(metrics, table) -> str:
    """The report, its method lines worded by the method's module as the evaluate stage has them."""
    return report_markdown(metrics, table, describe(metrics.get("method") or {}))

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CONVENTION = ("P, R and F1 are 1 when their denominator is 0; F1 = 1 when TP = FP = FN = 0 "
              "(LYRL2004, Debole & Sebastiani)")


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 1.0


def _row(category, name, train, tp, fp, fn, n=500, band="1-10"):
    return {
        "category": category, "name": name, "train_positives": train, "test_positives": tp + fn,
        "tp": tp, "fp": fp, "fn": fn, "tn": n - tp - fp - fn,
        "precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn), "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "band": band, "averaged": train > 0,
    }


@pytest.fixture
def table() -> pd.DataFrame:
    # Deliberately unsorted; names with a comma, a slash, a quote and a pipe; a 0/0 category.
    rows = [
        _row("M14", "COMMODITY MARKETS", 1200, 90, 10, 12, band=">1000"),
        _row("C11", "STRATEGY/PLANS", 45, 10, 7, 9, band="11-100"),
        _row("E12", "MONETARY/ECONOMIC, POLICY", 8, 1, 2, 3),
        _row("G15", 'EUROPEAN "COMMUNITY" | EC', 150, 20, 3, 1, band="101-1000"),
        _row("GMIL", "MILLENNIUM ISSUES", 0, 0, 0, 0, band="0"),
        _row("C12", "LITIGATION", 3, 0, 1, 2),
    ]
    rng = np.random.default_rng(7)
    for j in range(30):
        tp, fp, fn = (int(v) for v in rng.integers(0, 30, size=3))
        rows.append(_row(f"X{j:02d}", f"synthetic {j}", int(rng.integers(1, 3000)), tp, fp, fn))
    return pd.DataFrame(rows)


def with_decision_record(metrics: dict) -> dict:
    """``metrics`` with the decision rule its settings describe, as the evaluate stage records it."""
    settings = metrics["settings"]
    return {**metrics, **decision_record(settings["train"], settings.get("tune", {}))}


@pytest.fixture
def metrics() -> dict:
    return with_decision_record({
        "micro_precision": 0.81234, "micro_recall": 0.7, "micro_f1": 0.75123, "micro_fallout": 0.0123,
        "micro_overlap": 0.6, "micro_error": 0.02, "micro_accuracy": 0.98,
        "macro_precision": 0.66, "macro_recall": 0.55, "macro_f1": 0.58766, "macro_fallout": 0.01,
        "macro_overlap": 0.45, "macro_error": 0.021, "macro_accuracy": 0.979, "macro_star_f1": 0.6,
        "n_categories": 35, "zero_division": 1.0, "zero_division_convention": CONVENTION,
        "averaged_over": "train_positive", "test_documents": 500, "corpus": "lyrl2004",
        "averages": {
            "all": {"n_categories": 36, "micro_f1": 0.7511, "macro_f1": 0.5991},
            "train_positive": {"n_categories": 35, "micro_f1": 0.75123, "macro_f1": 0.58766},
            "test_positive": {"n_categories": 34, "micro_f1": 0.7513, "macro_f1": 0.5432},
        },
        "bands": [
            {"band": "0", "n_categories": 1, "micro_f1": 1.0, "macro_f1": 1.0},
            {"band": "1-10", "n_categories": 3, "micro_f1": 0.2, "macro_f1": 0.1},
            {"band": "11-100", "n_categories": 1, "micro_f1": 0.5, "macro_f1": 0.5},
            {"band": "101-1000", "n_categories": 1, "micro_f1": 0.9, "macro_f1": 0.9},
            {"band": ">1000", "n_categories": 30, "micro_f1": 0.8, "macro_f1": 0.6},
        ],
        "ranking": {f"{m}@{k}": round(0.1 * k + i / 100, 4)
                    for i, m in enumerate(("P", "R", "RP", "nDCG")) for k in (1, 3, 5)},
        "settings": {
            "train": {"solver": "l2r_l2loss_svc_dual", "C": 1.0, "epsilon": 0.0001, "bias": 1.0, "threshold": 0.0},
            "rank": {"global_score": "max"},
            "select": {"top_k": 5000, "reduction_factor": 0.0},
            "weight": {"scheme": "ltc"},
            "tokenize": {"stop_list": "", "stemmer": "porter"},
            "corpus": {"format": "lyrl2004", "path": "/data/rcv1"},
        },
    })


# ------------------------------------------------------------------------------------- CSV


def test_csv_round_trips_numbers_and_quoting(table):
    text = per_category_csv(table)
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_HEADER
    body = rows[1:]
    assert [r[0] for r in body] == sorted(table["category"])
    by_code = table.set_index("category")
    for r in body:
        assert len(r) == len(CSV_HEADER)
        src = by_code.loc[r[0]]
        assert r[1] == src["name"]
        assert [int(v) for v in r[2:8]] == [src[k] for k in
                                             ("train_positives", "test_positives", "tp", "fp", "fn", "tn")]
        for got, key in zip(r[8:], ("precision", "recall", "f1")):
            assert got == f"{src[key]:.4f}"
            assert float(got) == pytest.approx(src[key], abs=5e-5)
    # Quoting: a name with a comma is one quoted field; a name with a slash is left unquoted.
    assert '"MONETARY/ECONOMIC, POLICY"' in text
    assert "C11,STRATEGY/PLANS,45," in text
    assert '"EUROPEAN ""COMMUNITY"" | EC"' in text


def test_csv_zero_zero_category_and_missing_values(table):
    table = table.copy()
    table.loc[table["category"] == "X00", "precision"] = np.nan
    rows = {r[0]: r for r in csv.reader(io.StringIO(per_category_csv(table)))}
    assert rows["GMIL"][4:] == ["0", "0", "0", "500", "1.0000", "1.0000", "1.0000"]
    assert rows["X00"][8] == ""


def test_csv_names_missing_column(table):
    with pytest.raises(ValueError, match="tn"):
        per_category_csv(table.drop(columns=["tn"]))


# -------------------------------------------------------------------------------- Markdown


def test_markdown_has_convention_measures_sets_bands_ranking_categories(metrics, table):
    text = markdown(metrics, table)
    lines = text.splitlines()
    assert lines[0] == "# Text-categorization evaluation: lyrl2004"
    convention_line = next(line for line in lines[:6] if "0/0 convention" in line)
    assert "zero_division = 1.0" in convention_line and CONVENTION in convention_line
    # Main table: micro and macro of every measure, and Macro*-F1.
    for label, micro, macro in (("Precision", "0.8123", "0.6600"), ("F1", "0.7512", "0.5877"),
                                ("Fallout", "0.0123", "0.0100"), ("Overlap", "0.6000", "0.4500"),
                                ("Error", "0.0200", "0.0210"), ("Accuracy", "0.9800", "0.9790")):
        assert f"| {label} | {micro} | {macro} |" in lines
    assert any(line.startswith("| Macro*-F1") and line.endswith("| 0.6000 |") for line in lines)
    # Averaging sets, headline set in bold.
    assert "| **train_positive** | 35 | 0.7512 | 0.5877 |" in lines
    assert "| all | 36 | 0.7511 | 0.5991 |" in lines
    assert "| test_positive | 34 | 0.7513 | 0.5432 |" in lines
    # Bands, and the links to both plots.
    assert "| >1000 | 30 | 0.8000 | 0.6000 |" in lines
    assert f"]({F1_BY_BAND_PNG})" in text and f"]({F1_BY_TRAINING_FREQUENCY_PNG})" in text
    # ... and below each, its vector files.
    assert "For papers: [SVG](f1_by_band.svg), [PDF](f1_by_band.pdf)." in lines
    assert "For papers: [SVG](f1_by_training_frequency.svg), [PDF](f1_by_training_frequency.pdf)." in lines
    # Ranking: K = 1, 3, 5 columns, one row per measure.
    assert "| Measure | K = 1 | K = 3 | K = 5 |" in lines
    assert "| nDCG@K | 0.1300 | 0.3300 | 0.5300 |" in lines
    assert "| RP@K | 0.1200 | 0.3200 | 0.5200 |" in lines
    # Every category, sorted, the not-averaged one marked; a pipe in a name is escaped.
    category_rows = [line for line in lines if line.startswith("| ") and line.split(" | ")[0][2:].rstrip(" \u2020")
                     in set(table["category"])]
    codes = [line.split(" | ")[0][2:].rstrip(" \u2020") for line in category_rows]
    assert codes == sorted(table["category"])
    assert "| GMIL \u2020 | MILLENNIUM ISSUES | 0 | 0 | 0 | 0 | 0 | 1.0000 | 1.0000 | 1.0000 |" in lines
    assert "| C11 | STRATEGY/PLANS | 45 | 19 | 10 | 7 | 9 |" in text
    assert 'EUROPEAN "COMMUNITY" \\| EC' in text
    # Settings.
    for expected in ("l2r_l2loss_svc_dual", "- C: `1.0`", "- Decision threshold: `0.0`",
                     "top 5000 terms", "- Weighting: `ltc`", "global score `max`"):
        assert expected in text


def test_markdown_states_the_method_thresholding_and_search_space_of_the_run(metrics, table):
    """Rocchio + SCut: its beta, gamma and folds, never LIBLINEAR's solver nor a fixed threshold."""
    metrics["settings"]["train"] = {"method": "rocchio", "solver": "l2r_l2loss_svc_dual", "C": 1.0, "threshold": 0.0,
                                    "thresholding": "scut", "folds": 5, "seed": 0, "fbr": 0.1,
                                    "rocchio_beta": 16.0, "rocchio_gamma": 4.0}
    metrics["settings"]["tune"] = {"C": [], "terms": [100, 0], "fbr": []}
    lines = markdown(with_decision_record(metrics), table).splitlines()
    settings = lines[lines.index("## Settings"):]
    assert "- Method: `rocchio`, w = beta * mean(positives) - gamma * mean(negatives), beta `16.0`, gamma `4.0`" \
        in settings
    assert ("- Thresholding: `scut`, per-category thresholds by SCut over `5`-fold cross-validation on the training "
            "documents (seed `0`)") in settings
    assert ("- Search space ([tune], chosen per category by `5`-fold cross-validation, seed `0`): terms `[100, 0]`"
            in settings)
    text = "\n".join(settings)
    assert "Solver" not in text and "l2r_l2loss_svc_dual" not in text and "threshold: `0.0`" not in text
    metrics["settings"]["train"].update(method="knn", knn_k=45, thresholding="rcut", rcut_k=2)
    metrics["settings"]["tune"] = {}
    text = markdown(with_decision_record(metrics), table)
    assert "- Method: `knn`, the summed similarities of the k = `45` nearest training documents" in text
    assert "- Thresholding: `rcut`, the `2` best categories of each document" in text
    assert "- Search space ([tune]): none" in text


def test_markdown_states_the_cross_validated_micro_f1(metrics, table):
    text = markdown({**metrics, "cv_micro_f1": 0.898023}, table)
    assert "## Cross-validation on the training documents" in text
    assert "its out-of-fold scores and thresholds): 0.8980. The figure to choose" in text


def test_markdown_without_optional_sections(metrics, table):
    for key in ("averages", "bands", "ranking", "macro_star_f1", "micro_fallout", "settings", "method",
                "thresholding", "search_space"):
        metrics.pop(key)
    text = markdown(metrics, table)
    assert "0/0 convention" in text and CONVENTION in text
    assert "## Averaging sets" not in text
    assert "## By training-set frequency band" not in text and F1_BY_BAND_PNG not in text
    assert "## Ranking measures" not in text
    assert "## Cross-validation on the training documents" not in text
    assert "| Fallout | \u2014 | 0.0100 |" in text
    assert "## Settings" in text and "- Solver: \u2014" in text
    for code in table["category"]:
        assert f"| {code}" in text


def test_markdown_empty_optional_sections_are_skipped(metrics, table):
    metrics.update(averages={}, bands=[], ranking={})
    text = markdown(metrics, table)
    assert "## Averaging sets" not in text and "## Ranking measures" not in text
    assert "## By training-set frequency band" not in text


# ------------------------------------------------------------------------------------ plots

SVG = "{http://www.w3.org/2000/svg}"
LABEL = "Reuters-21578 ModApte, R(90); SVM (LIBLINEAR -s 1), SCut"


def _decode(png: bytes) -> np.ndarray:
    import matplotlib.image

    assert png.startswith(PNG_SIGNATURE)
    return matplotlib.image.imread(io.BytesIO(png), format="png")


def _svg_texts(svg: bytes) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter(f"{SVG}text"))


EXPECTED_SHAPE = (round(FIGURE_SIZE[1] * FIGURE_DPI), round(FIGURE_SIZE[0] * FIGURE_DPI))


def embedded_fonts(pdf: bytes) -> list[bytes]:
    """The name of each font subset a PDF embeds, its subset tag (``ABCDEF+``) left off."""
    return re.findall(rb"/FontDescriptor /FontName /[A-Z]{6}\+(\S+)", pdf)


def check_formats(plot: dict[str, bytes], label: str) -> None:
    """The PNG at the promised size, the SVG valid XML of the figure's size in points, the PDF a PDF, none with a
    date or the software's name, the SVG's and PDF's titles and the SVG's drawn title naming ``label``.
    """
    assert list(plot) == ["png", "svg", "pdf"]
    image = _decode(plot["png"])
    assert image.shape[:2] == EXPECTED_SHAPE and image.std() > 0.01  # something was drawn
    assert b"Software" not in plot["png"] and b"matplotlib version" not in plot["png"]
    root = ET.fromstring(plot["svg"])
    assert root.tag == f"{SVG}svg"
    assert (root.get("width"), root.get("height")) == (f"{FIGURE_SIZE[0] * 72:g}pt", f"{FIGURE_SIZE[1] * 72:g}pt")
    assert label in root.find(f"{SVG}title").text
    assert label in [" ".join(t.itertext()).strip() for t in _svg_texts(plot["svg"])]  # drawn as text, not paths
    assert b"<dc:date>" not in plot["svg"] and b"Created with" not in plot["svg"]
    pdf = plot["pdf"]
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert b"/CreationDate" not in pdf and b"/Producer" not in pdf and b"/Creator" not in pdf
    assert b"/Subtype /Type3" not in pdf and b"/FontFile2" in pdf  # TrueType fonts embedded, as publishers ask
    embedded = embedded_fonts(pdf)
    assert embedded and len(embedded) == len(set(embedded)), embedded  # each font one subset, cut once
    escaped = label.replace("(", "\\(").replace(")", "\\)").encode()
    assert re.search(rb"/Title \(.*" + re.escape(escaped), pdf)


def test_a_pdf_embeds_each_font_once_whatever_characters_it_draws():
    """Characters past the first 256 (the minus of a negative tick, a ≥) go into the same TrueType subset."""
    with style():
        figure = new_figure()
        axes = figure.add_subplot()
        axes.plot([-2, 0, 2], [-1, 0, 1])
        axes.set_xlabel("training documents ≥ 2")
        pdf = rendered(figure, "fonts")["pdf"]
    assert embedded_fonts(pdf) == [b"DejaVuSans"]


def test_the_figure_files_are_each_plot_in_each_format():
    assert FIGURE_FILES == ("f1_by_band.png", "f1_by_band.svg", "f1_by_band.pdf", "f1_by_training_frequency.png",
                            "f1_by_training_frequency.svg", "f1_by_training_frequency.pdf")


def test_f1_by_training_frequency_plot(table):
    plot = plot_f1_by_training_frequency(table, LABEL)
    check_formats(plot, LABEL)
    assert plot_f1_by_training_frequency(table, LABEL) == plot  # same bytes, every format: no date, no random id
    assert plot_f1_by_training_frequency(table.sample(frac=1.0, random_state=3), LABEL) == plot  # row order
    assert all(a != b for a, b in zip(plot.values(), plot_f1_by_training_frequency(table, "other").values()))


def test_f1_by_training_frequency_edge_cases(table):
    for small in (table.iloc[:0], table[table["train_positives"] == 0], table.iloc[:2]):
        assert _decode(plot_f1_by_training_frequency(small)["png"]).shape[:2] == EXPECTED_SHAPE


def test_categories_at_one_point_are_one_marker_with_their_number(table):
    # Rare categories pile up at F1 = 0: 5 at one training positive, 3 at none (drawn at x = 0.5), 2 at 4 with F1 = 1;
    # and one category with 40 at F1 = 0, alone there. The stacks' numbers, found from the table itself:
    rows = [_row(f"A{i}", "a", 1, 0, 1, 1) for i in range(5)] + [_row(f"Z{i}", "z", 0, 0, 0, 2) for i in range(3)]
    rows += [_row(f"B{i}", "b", 4, 1, 0, 0) for i in range(2)] + [_row("C", "c", 40, 0, 2, 0)]
    stacked = pd.concat([table, pd.DataFrame(rows)], ignore_index=True)
    sizes = stacked.groupby(["train_positives", "f1"]).size()
    expected = sorted(int(n) for n in sizes[sizes >= 2])
    assert expected == [2, 3, 5]  # the table's own categories sit at distinct points
    texts = _svg_texts(plot_f1_by_training_frequency(stacked, LABEL)["svg"])
    counts = [t for t in texts if re.fullmatch(r"\d+", (t.text or "").strip()) and t.get("x")]
    assert sorted(int(t.text) for t in counts) == expected  # each stack's number written, no single point's
    assert len({(t.get("x"), t.get("y")) for t in counts}) == len(expected)  # each beside its own stack
    legend = [" ".join(t.itertext()) for t in texts]
    assert "3 categories at one point (area grows with the number)" in legend
    assert MAX_STACK_AREA >= 5  # a stack of 5 is drawn larger than one of 3
    plain = _svg_texts(plot_f1_by_training_frequency(table, LABEL)["svg"])
    assert not any(re.fullmatch(r"\d+", (t.text or "").strip()) and t.get("x") for t in plain)  # no stack, no number
    assert "3 categories at one point (area grows with the number)" not in [" ".join(t.itertext()) for t in plain]


def test_f1_by_band_plot(metrics):
    plot = plot_f1_by_band(metrics["bands"], LABEL)
    check_formats(plot, LABEL)
    assert plot_f1_by_band(metrics["bands"], LABEL) == plot
    bands = [dict(b) for b in metrics["bands"]]
    bands[1]["micro_f1"] = None  # a band without a micro value draws no bar
    assert plot_f1_by_band(bands, LABEL)["png"] != plot["png"]
    assert _decode(plot_f1_by_band([])["png"]).shape[:2] == EXPECTED_SHAPE


def test_a_figure_title_names_corpus_category_set_and_decision_rule():
    assert corpus_title({"format": "reuters21578", "category_set": "R90"}) == "Reuters-21578 ModApte, R(90)"
    assert corpus_title({"format": "reuters21578", "category_set": ""}) == "Reuters-21578 ModApte, R(90)"  # default
    assert corpus_title({"format": "reuters21578", "document_filter": "aptemod", "category_set": "R10"}) \
        == "Reuters-21578 ApteMod, R(10)"
    assert corpus_title({"format": "lyrl2004", "category_set": "industries"}) == "RCV1-v2 (LYRL2004), industries"
    assert corpus_title({"format": "lyrl2004_vectors"}) == "RCV1-v2 (LYRL2004 vectors), topics"
    assert corpus_title({"format": "libsvm", "path": "/data/eurlex/"}) == "eurlex (LIBSVM)"
    assert corpus_title({"format": "jsonl", "path": ""}) == "JSON lines"
    train = {"method": "liblinear", "solver": "l2r_l2loss_svc_dual", "thresholding": "scut", "folds": 5, "seed": 1}
    assert rule_title(decision_record(train, {})) == "SVM (LIBLINEAR -s 1), SCut"
    assert rule_title(decision_record({**train, "solver": "l2r_lr", "thresholding": "fixed", "threshold": 0.0},
                                      {})) == "logistic regression (LIBLINEAR -s 0), fixed threshold 0"
    assert rule_title(decision_record({**train, "thresholding": "scutfbr", "fbr": 0.1},
                                      {"solver": ["l2r_lr", "l2r_l2loss_svc_dual"]})) == "LIBLINEAR, SCutFBR (fbr 0.1)"
    assert rule_title(decision_record({"method": "nb", "nb_model": "mixture", "thresholding": "rcut", "rcut_k": 1},
                                      {})) == "naive Bayes (mixture), RCut (k = 1)"
    assert rule_title(decision_record({"method": "knn", "thresholding": "micromacro"}, {})) == "kNN, micromacro-freq"
    assert rule_title({"method": {"name": "gone"}, "thresholding": {"name": "pcut"}}) == "gone, PCut"


def test_lowess_recovers_a_line_and_handles_ties():
    x = np.linspace(0.0, 3.0, 40)
    assert lowess(x, 0.2 * x + 0.1, [0.0, 1.5, 3.0], frac=0.3) == pytest.approx([0.1, 0.4, 0.7])
    assert lowess([1.0, 1.0, 1.0], [0.2, 0.4, 0.6], [1.0]) == pytest.approx([0.4])
    with pytest.raises(ValueError):
        lowess([], [], [0.0])


def test_markdown_states_the_title_and_bigram_settings(metrics, table):
    assert "- Text processing: stemmer `porter`, stop list none\n" in markdown(metrics, table)
    metrics["settings"]["tokenize"].update(ngrams=2, title_weight=3, title_terms=True)
    assert ("- Text processing: stemmer `porter`, stop list none, word bigrams (`tokenize.ngrams = 2`), title terms "
            "counted 3 times (`tokenize.title_weight`), title terms as features of their own (`tokenize.title_terms`)"
            "\n") in markdown(metrics, table)


def test_markdown_states_scikit_learns_features(metrics, table):
    assert "- Term selection: chi-square, global score `max`, top 5000 terms\n" in markdown(metrics, table)
    metrics["settings"]["tokenize"].update(analyzer="sklearn", ngrams=3)
    metrics["settings"]["rank"].update(score="frequency")
    metrics["settings"]["select"].update(top_k=20000, min_df=3)
    text = markdown(metrics, table)
    assert ("- Term selection: frequency (occurrences in the training documents), top 20000 terms, of the terms in at "
            "least 3 training documents (`select.min_df`)\n") in text
    assert ("- Text processing: stemmer `porter`, stop list none, scikit-learn's default analyzer (`tokenize.analyzer "
            "= sklearn`), word bigrams and trigrams (`tokenize.ngrams = 3`)\n") in text
    metrics["settings"]["tokenize"].update(analyzer="lyrl2004", ngrams=1)
    assert "- Text processing: stemmer `porter`, stop list none\n" in markdown(metrics, table)


def test_the_per_category_frame_keeps_codes_and_names_as_strings_and_reads_an_empty_score_as_nan() -> None:
    text = "\n".join([",".join(CSV_HEADER), "NA,NA,3,2,1,0,1,10,1.0000,0.5000,0.6667", "N2,,0,0,0,0,0,13,,,",
                      '007,"oil, gas",1,1,1,1,0,11,0.5000,1.0000,0.6667']) + "\n"
    frame = per_category_frame(text, ["NA", "007"])
    assert frame["category"].tolist() == ["NA", "N2", "007"] and frame["name"].tolist() == ["NA", "", "oil, gas"]
    assert frame["TN"].tolist() == [10, 13, 11] and frame["F1"].isna().tolist() == [False, True, False]
    assert frame["averaged"].tolist() == [True, False, True]


def test_the_notebook_summary_escapes_what_it_shows(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    metrics = {"micro_f1": 0.5, "macro_f1": 0.25, "averaged_over": "<all>", "method": {"name": "rocchio"},
               **decision_record({"method": "rocchio", "thresholding": "rcut", "rcut_k": 2}, {})}
    page = summary_html(metrics, describe(metrics["method"]), {"<a>.png": PNG_SIGNATURE},
                        str(tmp_path / "run" / "report.md"))
    assert "<td>0.5000</td><td>0.2500</td>" in page and "set &lt;all&gt;" in page and 'alt="&lt;a&gt;.png"' in page
    assert "<li>Thresholding: <code>rcut</code>, the <code>2</code> best categories of each document</li>" in page
    assert '<a href="run/report.md"' in page and 'src="data:image/png;base64,iVBORw0KGgo="' in page


def test_plots_drawn_together_are_the_plots_drawn_one_after_the_other(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparktc.evaluation import figures

    bands = [{"band": "1-10", "n_categories": 3, "micro_f1": 0.5, "macro_f1": 0.25},
             {"band": "11+", "n_categories": 2, "micro_f1": 0.75, "macro_f1": None}]
    plots = [lambda: plot_f1_by_band(bands, "forked"), lambda: plot_f1_by_band(bands[:1], "here")]
    alone = [plot() for plot in plots]
    parent = figures.os.getpid()
    drawn_in = [lambda: {"pid": str(figures.os.getpid()).encode()}, lambda: {"pid": str(figures.os.getpid()).encode()}]
    monkeypatch.setattr(figures.os, "sched_getaffinity", lambda pid: {0, 1})  # two cores, whatever this machine has
    assert figures.drawn_together(plots) == alone
    forked, here = (int(files["pid"]) for files in figures.drawn_together(drawn_in))
    assert here == parent != forked
    with pytest.raises(RuntimeError, match=r"(?s)in the process forked for it:.*ZeroDivisionError"):
        figures.drawn_together([lambda: 1 / 0, lambda: {}])
    monkeypatch.setattr(figures.os, "sched_getaffinity", lambda pid: {0})  # one core: no fork
    assert [int(files["pid"]) for files in figures.drawn_together(drawn_in)] == [parent, parent]
