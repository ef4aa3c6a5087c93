"""The one Markdown table writer (:mod:`sparktc.runtime.markdown`): escaping, alignment, padding, and the tables of
the reports written through it as they were written before it.
"""

from __future__ import annotations

import pytest

from sparktc.runtime.markdown import cell_text, markdown_table


def test_a_pipe_a_backslash_and_a_line_break_stay_inside_their_cell() -> None:
    assert cell_text("a|b") == "a\\|b"
    assert cell_text("C:\\x|y") == "C:\\\\x\\|y"
    assert cell_text("two\nlines\r\nand\rmore") == "two lines and more"
    table = markdown_table(["name", "F1"], [["EUROPEAN | EC", 0.5]])
    assert table.splitlines()[2] == "| EUROPEAN \\| EC | 0.5 |"
    # split on the pipes a Markdown reader takes for cell borders: two cells, the escaped pipe inside the first
    row = table.splitlines()[2].strip("|").replace("\\|", "\0").split("|")
    assert [cell.strip().replace("\0", "|") for cell in row] == ["EUROPEAN | EC", "0.5"]


def test_the_delimiter_row_says_each_columns_alignment() -> None:
    assert markdown_table(["a", "b", "c", "d"], [], "lrc") == "| a | b | c | d |\n|---|---:|:---:|---|"
    assert markdown_table(["a", "b"], [["1", "2"]], "lr", spaced_rule=True) == (
        "| a | b |\n| --- | ---: |\n| 1 | 2 |")


def test_a_padded_table_reads_as_aligned_columns() -> None:
    assert markdown_table(["run", "F1", "mid"], [["a", "0.5", "x"], ["bb", "0.25", "yyy"]], "lrc", padded=True) == (
        "| run |   F1 | mid |\n"
        "|-----|-----:|:---:|\n"
        "| a   |  0.5 |  x  |\n"
        "| bb  | 0.25 | yyy |")


@pytest.mark.parametrize(("header", "rows", "align"), [(["a"], [["1", "2"]], ""), (["a", "b"], [], "lx"),
                                                       (["a"], [], "lr")])
def test_a_row_of_another_width_or_an_unknown_alignment_is_refused(header, rows, align) -> None:
    with pytest.raises(ValueError):
        markdown_table(header, rows, align)


def test_the_reports_tables_are_the_bytes_they_were() -> None:
    """The tables the report, the comparison, the history and the benchmarks wrote by hand before the writer, as
    they wrote them, where no cell holds a pipe.
    """
    from benchmarks import svm_knn_blend
    from sparktc.apps.history_gate import table_markdown
    from sparktc.evaluation.comparison_report import significance_table
    from sparktc.evaluation.report import report_markdown

    tests = [{"name": name, "symbol": symbol} for name, symbol in (("s-test", "≫"), ("S-test", ">"), ("T-test", "~"),
                                                                  ("T'-test", "<"))]
    assert significance_table([{"a": "svm", "b": "knn", "result": {"tests": tests}}]) == (
        "| sysA vs sysB | s-test | S-test | T-test | T'-test |\n|---|:---:|:---:|:---:|:---:|\n"
        "| svm vs knn | ≫ | > | ~ | < |")
    assert table_markdown([{"run": "a", "micro_F1": "0.8600"}, {"run": "b", "micro_F1": "-"}]) == (
        "| run | micro_F1 |\n|---|---|\n| a | 0.8600 |\n| b | - |")
    figures = {"cv_micro_f1": 0.5, "micro_f1": 0.6, "macro_f1": 0.4}
    assert svm_knn_blend.render({"liblinear_alone": figures, "knn_alone": figures, "knn_k": 30, "scale": "log_odds",
                                 "chosen_alpha": 0.5, "per_alpha": {0.5: figures}}).splitlines()[:3] == [
        "| candidate | cross-validated micro-F1 | test micro-F1 | test macro-F1 |", "|---|---|---|---|",
        "| LIBLINEAR alone | 0.5000 | 0.6000 | 0.4000 |"]
    import pandas as pd

    table = pd.DataFrame([{"category": "C1", "name": "A | B", "train_positives": 3, "test_positives": 2, "tp": 1,
                           "fp": 0, "fn": 1, "tn": 8, "precision": 1.0, "recall": 0.5, "f1": 2 / 3, "averaged": True}])
    text = report_markdown({"micro_f1": 0.5, "averaged_over": "all"}, table, [])
    assert "| Measure | Micro | Macro |\n| --- | ---: | ---: |\n" in text
    assert "| Category | Name | Train+ | Test+ | TP | FP | FN | P | R | F1 |\n" \
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n" \
           "| C1 | A \\| B | 3 | 2 | 1 | 0 | 1 | 1.0000 | 0.5000 | 0.6667 |" in text
