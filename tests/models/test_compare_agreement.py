"""Comparisons that leave a test nothing to test, and comparisons published whole.

Yang & Liu 1999's tests (section 4) need differences: a run compared with its rerun has no differing
decision (s-test), no differing category F1 (S-, T-, T'-tests), and for a perfect run no variance in
the p-tests' proportions. Such a statistic is undefined; the comparison says so, with the reason, in
comparison.json (``statistic`` and both P-values null, ``undefined`` the reason) and in the Markdown ("undefined", the
symbol "~", the reason below the table), and the job ends with exit status 0.

* pure (no Spark): :func:`sparktc.apps.compare.pair_result` and the formatters on two identical perfect
  runs (every test undefined), on six synthesized runs standing for the six methods with the methods'
  characteristic degeneracies (two that agree, one that assigns nothing, one that differs from another in
  one category, one whose per-category F1 differences are equal), and JSON round trips;
* through Spark: the papers' six methods (:data:`METHOD_SETTINGS`) trained on tests/models/test_methods.py's
  prepared corpus and compared in one ``compare_runs`` call (15 pairs); jobs/compare.py in this process on
  a run and a copy of it; and publishing that fails part way (a write, a move) leaving the earlier
  comparison in place, or no entry file.
"""

from __future__ import annotations

import itertools
import json
import math
import runpy
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, made_once
from test_methods import corpus_config, prepared_corpus

from sparktc.apps import compare
from sparktc.apps.compare import (
    ENTRY_FILES,
    compare_runs,
    comparison_files,
    comparison_record,
    format_comparison,
    format_comparisons,
    pair_result,
    write_comparisons,
)
from sparktc.apps.pipeline import run as run_stages
from sparktc.evaluation.comparison_report import p_test_table, significance_table, undefined_notes, undefined_tests
from sparktc.experiment.config import EvaluateConfig
from sparktc.models.registry import METHODS
from sparktc.runtime import storage
from sparktc.runtime.outputs import INCOMPLETE, claim

TEST_NAMES = ["s-test", "S-test", "T-test", "T'-test", "p-test (recall)", "p-test (precision)", "p-test (error)"]
SETTINGS = EvaluateConfig()  # the defaults: average over train_positive, 0/0 counted as 1
#: The comparison's plot, as PNG, SVG and PDF.
PLOTS = ["f1_by_training_frequency.png", "f1_by_training_frequency.svg", "f1_by_training_frequency.pdf"]
AGREE = "no difference to test (the runs' decisions agree on every document and category)"
EQUAL_F1 = "no difference to test (every category's F1 is equal)"
NO_F1_DIFFERENCE = "fewer than 2 categories whose F1 differ (every category's F1 is equal)"


# --- pure: records made from decision matrices ------------------------------------------------------


def table_of(Y: np.ndarray, P: np.ndarray) -> pd.DataFrame:
    """Per category (columns of the test documents x categories matrices): the contingency table and F1
    (2TP / (2TP + FP + FN), 1 when that is 0/0, as evaluate.zero_division = 1).
    """
    tp, fp = (P & Y).sum(axis=0), (P & ~Y).sum(axis=0)
    fn, tn = (~P & Y).sum(axis=0), (~P & ~Y).sum(axis=0)
    denominator = 2 * tp + fp + fn
    f1 = np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 1.0)
    return pd.DataFrame({"category": [f"c{j}" for j in range(Y.shape[1])], "tp": tp, "fp": fp, "fn": fn, "tn": tn,
                         "f1": f1})


def result_of(name_a: str, name_b: str, Y: np.ndarray, P_a: np.ndarray, P_b: np.ndarray) -> dict:
    """compare()'s record of A against B, with the decision counts Spark would make, counted here."""
    differ = P_a != P_b
    counts = {"n": int(differ.sum()), "k_a": int((differ & (P_a == Y)).sum()), "only_a": 0, "only_b": 0,
              "labels_differ": 0}
    return pair_result(name_a, name_b, SETTINGS, Y.shape[1], table_of(Y, P_a), table_of(Y, P_b), counts)


def record_of(Y: np.ndarray, runs: dict[str, np.ndarray]) -> dict:
    paths = [f"/runs/{name}" for name in runs]
    results = [result_of(paths[i], paths[j], Y, runs[a], runs[b])
               for (i, a), (j, b) in itertools.combinations(enumerate(runs), 2)]
    return comparison_record(paths, results)


#: 8 test documents x 4 categories; categories 0 and 1 have two positives each.
LABELS = np.array([[1, 0, 0, 1], [1, 0, 1, 0], [0, 1, 0, 0], [0, 1, 1, 0],
                   [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0]], dtype=bool)


def flipped(P: np.ndarray, *cells: tuple[int, int]) -> np.ndarray:
    P = P.copy()
    for cell in cells:
        P[cell] = not P[cell]
    return P


def six_methods() -> dict[str, np.ndarray]:
    """Decisions standing for the six methods on a tiny test set, each pair of them a case the comparison must
    survive: knn agrees with liblinear everywhere; llsf differs from liblinear in one category only (one F1
    difference: no T-test); rocchio misses one positive of each of categories 0 and 1 (equal F1 differences
    against nnet: zero variance); nb assigns nothing (no precision); nnet is perfect.
    """
    liblinear = flipped(LABELS, (0, 0), (4, 3), (6, 2))
    return {"liblinear": liblinear, "rocchio": flipped(LABELS, (0, 0), (2, 1)), "knn": liblinear.copy(),
            "llsf": flipped(liblinear, (7, 2)), "nb": np.zeros_like(LABELS), "nnet": LABELS.copy()}


def named_tests(result: dict) -> dict[str, dict]:
    return {test["name"]: test for test in result["tests"]}


def assert_defined_or_said_why(result: dict) -> None:
    """Every test: a finite statistic and no reason, or a null statistic, null P-values, "~" and a reason."""
    assert [test["name"] for test in result["tests"]] == TEST_NAMES
    for test in result["tests"]:
        if test["undefined"] is None:
            assert isinstance(test["statistic"], float) and math.isfinite(test["statistic"]), test
        else:
            assert test["statistic"] is None and isinstance(test["undefined"], str) and test["undefined"], test
            assert (test["p_value_a_better"], test["p_value_b_better"], test["symbol"]) == (None, None, "~"), test


def table_rows(text: str) -> dict[str, list[str]]:
    """format_comparison's table: the cells of each test's row, by test name."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] in TEST_NAMES:
            rows[cells[0]] = cells
    return rows


def test_identical_perfect_runs_leave_every_test_undefined_with_its_reason():
    result = result_of("/runs/a", "/runs/a-rerun", LABELS, LABELS, LABELS.copy())
    tests = named_tests(result)
    assert_defined_or_said_why(result)
    assert {name: test["undefined"] for name, test in tests.items()} == {
        "s-test": AGREE, "S-test": EQUAL_F1, "T-test": NO_F1_DIFFERENCE, "T'-test": NO_F1_DIFFERENCE,
        "p-test (recall)": "pooled proportion is 1 (both runs' proportions are 1: no variance)",
        "p-test (precision)": "pooled proportion is 1 (both runs' proportions are 1: no variance)",
        "p-test (error)": "pooled proportion is 0 (both runs' proportions are 0: no variance)",
    }

    text = format_comparison(result)  # TypeError before: "{None:>10.4f}"
    rows = table_rows(text)
    assert list(rows) == TEST_NAMES
    for cells in rows.values():
        assert cells[2:] == ["undefined", "undefined", "undefined", "A ~ B"], cells
    notes = text[text.index("Undefined statistics"):].splitlines()
    assert [line for line in notes if line.startswith("- ")] == [f"- {name}: {tests[name]['undefined']}"
                                                                  for name in TEST_NAMES]
    assert "micro-F1 1.0000, macro-F1 1.0000" in text


def test_runs_that_agree_but_err_leave_the_sign_and_t_tests_undefined_and_the_p_tests_at_z_0():
    liblinear = six_methods()["liblinear"]
    tests = named_tests(result_of("/runs/a", "/runs/b", LABELS, liblinear, liblinear.copy()))
    assert [tests[name]["undefined"] for name in TEST_NAMES[:4]] == [AGREE, EQUAL_F1, NO_F1_DIFFERENCE,
                                                                     NO_F1_DIFFERENCE]
    for name in TEST_NAMES[4:]:  # equal proportions, strictly between 0 and 1: Z = 0, defined, not significant
        assert tests[name]["statistic"] == 0.0 and tests[name]["undefined"] is None
        assert tests[name]["p_value_a_better"] == tests[name]["p_value_b_better"] == 0.5
        assert tests[name]["symbol"] == "~"


def test_six_methods_every_pair_is_defined_or_says_why_and_renders():
    runs = six_methods()
    record = record_of(LABELS, runs)
    assert len(record["pairs"]) == 15
    for pair in record["pairs"]:
        assert_defined_or_said_why(pair["result"])
    pairs = {(pair["a"], pair["b"]): named_tests(pair["result"]) for pair in record["pairs"]}
    # each characteristic degeneracy, with its reason
    assert pairs["liblinear", "knn"]["s-test"]["undefined"] == AGREE
    assert pairs["liblinear", "knn"]["S-test"]["undefined"] == EQUAL_F1
    one = pairs["liblinear", "llsf"]
    assert one["S-test"]["undefined"] is None and one["S-test"]["n"] == 1
    assert one["T-test"]["undefined"] == "fewer than 2 categories whose F1 differ (only 1 does)"
    assert one["T'-test"]["undefined"] == "fewer than 2 categories whose F1 differ (only 1 does)"
    equal = pairs["rocchio", "nnet"]
    assert equal["T-test"]["undefined"].startswith("the F1 differences have zero variance")
    assert equal["T'-test"]["undefined"].startswith("the F1 ranks' differences have zero variance")
    for (a, b), tests in pairs.items():
        precision = tests["p-test (precision)"]["undefined"]
        if "nb" in (a, b):
            side = "n_a" if a == "nb" else "n_b"
            assert precision == f"no trials on one side ({side} = 0: a run that assigns nothing has no precision)"
        else:
            assert precision is None or precision.startswith("pooled proportion is 1")
    assert pairs["nb", "nnet"]["s-test"]["undefined"] is None  # nb is wrong on every positive nnet assigns

    text = format_comparisons(record)
    for table in (significance_table(record["pairs"]), p_test_table(record["pairs"])):
        assert table in text and len(table.splitlines()) == 2 + 15
    notes = undefined_notes(record["pairs"])
    assert notes in text and "- liblinear vs knn: s-test: " + AGREE in notes
    assert "- liblinear vs nb: " in notes and "p-test (precision): no trials on one side (n_b = 0" in notes
    for pair in record["pairs"]:
        rows = table_rows(format_comparison(pair["result"]))
        for test in pair["result"]["tests"]:
            assert (rows[test["name"]][2] == "undefined") == (test["undefined"] is not None)


def test_a_comparison_where_every_test_is_defined_has_no_notes():
    runs = six_methods()
    result = result_of("/runs/rocchio", "/runs/liblinear", LABELS, runs["rocchio"], runs["liblinear"])
    assert undefined_tests(result["tests"]) == [(name, result["tests"][i]["undefined"])
                                                for i, name in enumerate(TEST_NAMES)
                                                if result["tests"][i]["undefined"]]
    defined = flipped(LABELS, (0, 0), (1, 2), (3, 1), (5, 0), (2, 3), (6, 1))
    result = result_of("/runs/a", "/runs/b", LABELS, runs["liblinear"], defined)
    assert undefined_tests(result["tests"]) == []
    text = format_comparison(result)
    assert "undefined" not in text and "Undefined" not in text
    record = comparison_record(["/runs/a", "/runs/b"], [result])
    assert undefined_notes(record["pairs"]) == "" and "Undefined" not in format_comparisons(record)


def test_the_json_record_has_no_nan_keeps_the_reasons_and_reads_back_to_the_same_text():
    record = record_of(LABELS, {"a": LABELS, "a-rerun": LABELS.copy(), "nb": np.zeros_like(LABELS)})
    written = json.dumps(record, indent=2, allow_nan=False)  # ValueError on a NaN
    assert "NaN" not in written and "Infinity" not in written
    read = json.loads(written)
    assert read == record
    for test in read["pairs"][0]["result"]["tests"]:
        assert test["statistic"] is test["p_value_a_better"] is test["p_value_b_better"] is None and test["undefined"]
    assert format_comparisons(read) == format_comparisons(record)
    assert [format_comparison(p["result"]) for p in read["pairs"]] == [format_comparison(p["result"])
                                                                       for p in record["pairs"]]
    # a comparison.json written before the reasons were kept: a null statistic alone still reads "undefined"
    old = json.loads(written)
    for test in old["pairs"][0]["result"]["tests"]:
        del test["undefined"]
    assert set(table_rows(format_comparison(old["pairs"][0]["result"]))["s-test"]) >= {"undefined", "A ~ B"}
    assert f"- a vs a-rerun: {', '.join(TEST_NAMES)}: statistic undefined\n" in undefined_notes(old["pairs"])


def test_comparison_files_are_all_computed_before_any_is_written():
    record = record_of(LABELS, {"a": LABELS, "b": LABELS.copy(), "c": six_methods()["rocchio"]})
    tables = {run["name"]: pd.DataFrame({"train_positives": [3, 10, 30], "f1": [0.5, 0.8, 1.0]})
              for run in record["runs"]}
    files, printed = comparison_files(record, tables)
    assert list(files) == ["pairs/1_vs_2.md", "pairs/1_vs_3.md", "pairs/2_vs_3.md", *PLOTS, *ENTRY_FILES]
    assert json.loads(files["comparison.json"]) == record
    assert files["comparison.md"].decode() == format_comparisons(record) + "\n" and printed.endswith(
        format_comparisons(record))
    assert files["pairs/1_vs_2.md"].decode() == format_comparison(record["pairs"][0]["result"]) + "\n"


# --- through Spark: the six methods, a run and its copy, publishing that fails -------------------------------

#: Cheap settings of each method on tests/models/test_methods.py's corpus (160 training, 40 test documents).
METHOD_SETTINGS = {
    "liblinear": [],
    "rocchio": ["train.method=rocchio", "train.thresholding=scut"],
    "knn": ["train.method=knn", "train.knn.k=5", "train.thresholding=scut"],
    "llsf": ["train.method=llsf", "train.threshold=0.5", "select.top_k=60", "train.llsf.k=20"],
    "nb": ["train.method=nb", "train.nb.model=binary", "train.thresholding=scut"],
    "nnet": ["train.method=nnet", "train.thresholding=scut", "select.top_k=60", "train.nnet.hidden=8",
             "train.nnet.epochs=40", "train.nnet.learning_rate=0.01"],
}


@pytest.fixture(scope="module")
def method_runs(spark, tmp_path_factory) -> dict[str, str]:
    """Each of the six methods trained and evaluated on a copy of the shared prepared corpus (made once)."""
    corpus, prepared = prepared_corpus(spark, tmp_path_factory)

    def make(directory: Path) -> dict[str, str]:
        outputs = {}
        for method in METHOD_SETTINGS:
            outputs[method] = str(directory / method)
            shutil.copytree(prepared, outputs[method])
            run_stages(spark, corpus_config(corpus, *METHOD_SETTINGS[method]), outputs[method], "train", "evaluate")
        return outputs

    return made_once(tmp_path_factory, "compare_six_methods", make)


def test_the_compared_methods_are_the_papers_six_registered_ones():
    assert list(METHOD_SETTINGS) == list(METHODS)[:6] == ["liblinear", "rocchio", "knn", "llsf", "nb", "nnet"]


@pytest.fixture
def compare_job(spark, monkeypatch, capsys):
    """jobs/compare.py's main in this process, the suite's session standing in for the job's:
    (exit status, stdout, stderr) of ``RUN ... --output OUTPUT``.
    """
    monkeypatch.setattr("sparktc.runtime.session.build_session", lambda *arguments, **keywords: spark)
    monkeypatch.setattr(spark, "stop", lambda: None)  # the suite's session outlives each job
    main = runpy.run_path(str(REPO / "jobs" / "compare.py"))["main"]

    def run(*arguments: str) -> tuple[int, str, str]:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["jobs/compare.py", *arguments])
        status = main()
        out, err = capsys.readouterr()
        return status, out, err

    return run


def published(output: Path) -> dict[str, bytes]:
    """The comparison's files in ``output`` (Hadoop's .crc sidecars and the job's bookkeeping left out)."""
    return {str(path.relative_to(output)): path.read_bytes() for path in sorted(output.rglob("*"))
            if path.is_file() and not path.name.endswith(".crc") and not path.name.startswith(".sparktc")}


def test_a_run_compared_with_its_copy_exits_0_and_says_why_each_test_is_undefined(method_runs, compare_job,
                                                                                  tmp_path):
    """The user's case: jobs/compare.py RUN RUN2 over a run and its rerun (identical figures)."""
    run = Path(method_runs["liblinear"])
    rerun = tmp_path / "liblinear-rerun"
    shutil.copytree(run, rerun)
    output = tmp_path / "comparison"
    status, out, err = compare_job(str(run), str(rerun), "--output", str(output))
    assert status == 0, err
    assert sorted(published(output)) == sorted(["comparison.json", "comparison.md", *PLOTS, "pairs/1_vs_2.md"])
    assert not (output / INCOMPLETE).exists()
    record = json.loads((output / "comparison.json").read_text())
    tests = named_tests(record["pairs"][0]["result"])
    assert record["pairs"][0]["result"]["decisions"]["n"] == 0
    assert (tests["s-test"]["statistic"], tests["s-test"]["undefined"], tests["s-test"]["symbol"]) == (None, AGREE,
                                                                                                      "~")
    assert [tests[name]["undefined"] for name in TEST_NAMES[1:4]] == [EQUAL_F1, NO_F1_DIFFERENCE, NO_F1_DIFFERENCE]
    assert_defined_or_said_why(record["pairs"][0]["result"])
    details = (output / "pairs" / "1_vs_2.md").read_text()
    assert details == format_comparison(record["pairs"][0]["result"]) + "\n" and details in out + "\n"
    assert table_rows(details)["s-test"][2] == "undefined" and f"- s-test: {AGREE}" in details
    markdown = (output / "comparison.md").read_text()
    assert markdown == format_comparisons(record) + "\n"
    assert f"- liblinear vs liblinear-rerun: s-test: {AGREE}" in markdown and "](pairs/1_vs_2.md)" in markdown


@pytest.fixture(scope="module")
def six_compared(spark, method_runs) -> tuple[dict, dict]:
    """(record, tables) of the six methods compared in one ``compare_runs`` call (15 pairs)."""
    return compare_runs(spark, [method_runs[method] for method in METHOD_SETTINGS], SETTINGS, "jsonl")


def test_six_methods_compared_in_one_call(spark, six_compared, tmp_path):
    """All 15 pairs of the six methods on the small corpus: none crashes, every test is defined
    or says why, and the files are computed and published.
    """
    record, tables = six_compared
    assert [(p["a"], p["b"]) for p in record["pairs"]] == list(itertools.combinations(METHOD_SETTINGS, 2))
    for pair in record["pairs"]:
        assert_defined_or_said_why(pair["result"])
    output = tmp_path / "six"
    with claim(str(output), "compare") as held:
        printed = write_comparisons(spark, held.output, record, tables, storage.join(held.staging, "compare"))
    assert json.loads((output / "comparison.json").read_text()) == record
    assert (output / "comparison.md").read_text() == format_comparisons(record) + "\n"
    assert format_comparisons(record) in printed
    assert len(significance_table(record["pairs"]).splitlines()) == 2 + 15
    assert sorted(published(output)) == sorted(["comparison.json", "comparison.md", *PLOTS,
                                                *(pair["details"] for pair in record["pairs"])])


class Failing:
    """``storage.write_bytes`` or ``storage.rename`` that raises on its ``nth`` call."""

    def __init__(self, real, nth: int):
        self.real, self.nth, self.calls = real, nth, 0

    def __call__(self, *arguments):
        self.calls += 1
        if self.calls == self.nth:
            raise OSError(f"injected failure on call {self.nth}")
        return self.real(*arguments)


@pytest.fixture(scope="module")
def two_comparisons(spark, method_runs, six_compared) -> tuple[tuple[dict, dict], tuple[dict, dict]]:
    """(record, tables) of two runs, and of the six."""
    runs = [method_runs[method] for method in ("liblinear", "rocchio")]
    return compare_runs(spark, runs, SETTINGS, "jsonl"), six_compared


@pytest.fixture(scope="module")
def published_files(two_comparisons) -> dict[int, tuple[dict[str, bytes], str]]:
    """:func:`comparison_files` of each of ``two_comparisons``, by its record's id: computed once for the module (the
    plots, drawn in three formats, are most of its time), for the tests of publishing, which need the files, not a
    new drawing of them.
    """
    return {id(record): comparison_files(record, tables) for record, tables in two_comparisons}


# six runs write 20 files (15 pairs, 3 plots, 2 entry files), the last comparison.md; they move in as 6 names (pairs/,
# the plots, then the entry files), the 5th comparison.json
@pytest.mark.parametrize("failing, nth", [("write_bytes", 1), ("write_bytes", 3), ("write_bytes", 20),
                                          ("rename", 1), ("rename", 2), ("rename", 5)])
def test_publishing_that_fails_leaves_the_earlier_comparison_or_no_entry_file(spark, two_comparisons, published_files,
                                                                              tmp_path, monkeypatch, failing, nth):
    """A failure while the files are written aside leaves the earlier comparison as it was; one while they are
    moved into place leaves no comparison.md or comparison.json (never one that links files not written). The
    files are the module's (``published_files``): what is tested is how they are written and moved.
    """
    (first, first_tables), (second, second_tables) = two_comparisons
    monkeypatch.setattr(compare, "comparison_files", lambda record, tables: published_files[id(record)])
    output = tmp_path / "comparison"
    with claim(str(output), "compare") as held:
        write_comparisons(spark, held.output, first, first_tables, storage.join(held.staging, "compare"))
    before = published(output)
    assert sorted(before) == sorted(["comparison.json", "comparison.md", *PLOTS, "pairs/1_vs_2.md"])

    injected = Failing(getattr(storage, failing), nth)
    monkeypatch.setattr(storage, failing, injected)
    with claim(str(output), "compare") as held, pytest.raises(OSError, match="injected failure"):
        write_comparisons(spark, held.output, second, second_tables, storage.join(held.staging, "compare"))
    assert injected.calls == nth
    after = published(output)
    if failing == "write_bytes":
        assert after == before  # nothing of the new comparison reached the output
    else:
        assert not any(name in after for name in ENTRY_FILES), sorted(after)
    assert not any((output / INCOMPLETE).rglob("*.md"))  # the staged files are gone

    monkeypatch.setattr(storage, failing, injected.real)
    with claim(str(output), "compare") as held:  # the same command again publishes the whole comparison
        write_comparisons(spark, held.output, second, second_tables, storage.join(held.staging, "compare"))
    files, _ = published_files[id(second)]
    assert published(output) == files


def test_a_first_comparison_that_fails_while_written_leaves_no_files(spark, two_comparisons, compare_job,
                                                                     method_runs, tmp_path, monkeypatch):
    """Through the job: the third file's write fails, the job says so in one line (exit status 1) and the
    output holds no comparison (it is removed, as a first run's output that published nothing).
    """
    monkeypatch.setattr(storage, "write_bytes", Failing(storage.write_bytes, 3))
    output = tmp_path / "comparison"
    status, out, err = compare_job(method_runs["liblinear"], method_runs["rocchio"], "--output", str(output))
    assert status == 1 and "sparktc: error: injected failure on call 3" in err, err
    assert out == "" and not output.exists()
