"""The regression gate over a run history (:mod:`sparktc.tracking.trend`): baseline choice, what changed, the
tolerances and failed runs, over records built with RunRecord and read back from a history (no Spark).
"""

from __future__ import annotations

import json

import pytest
from histories import SETTINGS, make, with_setting, write

from sparktc.errors import ConfigError
from sparktc.tracking.trend import Tolerances, changes, checks, find, setting_changes, trend_rows


def test_the_default_baseline_is_the_previous_success_with_the_same_digests(tmp_path) -> None:
    records = write(str(tmp_path),
                    make("a", 1), make("b", 2, settings=with_setting("train.liblinear", "C", 0.5)),
                    make("c", 3, corpus="e" * 64), make("d", 4, exit_status=1, micro_f1=None, macro_f1=None),
                    make("e", 5, micro_f1=0.8599))
    [found] = checks(records)
    assert (found.run["run_id"], found.baseline["run_id"]) == ("e", "a")  # b: settings, c: corpus, d: failed
    assert found.changes.describe() == "nothing changed"
    assert found.regressions() == []
    assert [c.figure for c in found.comparisons] == ["micro_f1", "macro_f1", "seconds", "cpu_seconds",
                                                     "peak_memory_bytes"]
    assert found.comparisons[0].change() == f"{0.8599 - 0.86:+.4f}" == "-0.0001"


def test_a_run_without_a_same_digest_predecessor_has_no_baseline_and_says_what_differs(tmp_path) -> None:
    records = write(str(tmp_path), make("a", 1), make("b", 2, corpus="e" * 64),
                    make("c", 3, settings=with_setting("train.liblinear", "C", 0.001), micro_f1=0.70))
    [found] = checks(records)
    assert found.baseline is None and found.regressions() == []
    assert [(other["run_id"], what.describe()) for other, what in found.others] == [
        ("b", f"configuration changed: train.liblinear.C: 1.0 -> 0.001; corpus changed: eeeeeeee -> {'c' * 8}"),
        ("a", "configuration changed: train.liblinear.C: 1.0 -> 0.001"),
    ]
    assert "no baseline" in found.summary()[0] and records[2]["config_digest"][:8] in found.summary()[0]


def test_a_named_baseline_of_other_settings_names_each_changed_setting(tmp_path) -> None:
    records = write(str(tmp_path), make("20261125-a", 1), make("20261125-b", 2),
                    make("20261125-c", 3, settings=with_setting("train.liblinear", "C", 0.001), micro_f1=0.7012,
                         macro_f1=0.55, commit="2222222222bbbb"))
    [found] = checks(records, baseline="20261125-a")
    assert found.regressions() == [
        "REGRESSION run 20261125-c: micro_f1 0.8600 -> 0.7012 (-0.1588 > 0.002) vs baseline 20261125-a; "
        "code changed: 1111111111 -> 2222222222; configuration changed: train.liblinear.C: 1.0 -> 0.001"]
    # --all with a named baseline: every later run against it, the rerun within tolerance
    every = checks(records, baseline="20261125-a", every=True)
    assert [(c.run["run_id"], c.baseline["run_id"], len(c.regressions())) for c in every] == [
        ("20261125-b", "20261125-a", 0), ("20261125-c", "20261125-a", 1)]


def test_every_run_against_its_own_baseline(tmp_path) -> None:
    worse = with_setting("train.liblinear", "C", 0.001)
    records = write(str(tmp_path), make("a", 1), make("b", 2, settings=worse, micro_f1=0.70),
                    make("c", 3, micro_f1=0.80), make("d", 4, settings=worse, micro_f1=0.60))
    found = checks(records, every=True)
    assert [None if c.baseline is None else c.baseline["run_id"] for c in found] == [None, None, "a", "b"]
    assert [len(c.regressions()) for c in found] == [0, 0, 1, 1]
    assert found[3].regressions()[0].startswith("REGRESSION run d: micro_f1 0.7000 -> 0.6000 (-0.1000 > 0.002) vs "
                                                "baseline b")


@pytest.mark.parametrize(("figure", "before", "after", "tolerances", "regressed"), [
    ("micro_f1", 0.86, 0.858, Tolerances(), False),  # a drop of exactly the tolerance is within it
    ("micro_f1", 0.86, 0.8579, Tolerances(), True),
    ("macro_f1", 0.55, 0.50, Tolerances(max_f1_drop=0.1), False),
    ("macro_f1", 0.55, 0.50, Tolerances(max_f1_drop=0.01), True),
    ("seconds", 100.0, 125.0, Tolerances(), False),
    ("seconds", 100.0, 126.0, Tolerances(), True),
    ("seconds", 100.0, 126.0, Tolerances(max_time_ratio=1.5), False),
    ("cpu_seconds", 100.0, 130.0, Tolerances(), True),
    ("cpu_seconds", 100.0, 130.0, Tolerances(max_cpu_ratio=1.3), False),
    ("peak_memory_bytes", 2**30, 2**30 * 3 // 2, Tolerances(), False),
    ("peak_memory_bytes", 2**30, 2**30 * 3 // 2 + 2**20, Tolerances(), True),
    ("peak_memory_bytes", 2**30, 2**30 * 3 // 2 + 2**20, Tolerances(max_memory_ratio=2), False),
])
def test_tolerances(tmp_path, figure: str, before: float, after: float, tolerances: Tolerances,
                    regressed: bool) -> None:
    records = write(str(tmp_path), make("a", 1, **{figure: before}), make("b", 2, **{figure: after}))
    [found] = checks(records, tolerances=tolerances)
    flagged = [c.figure for c in found.comparisons if c.regressed]
    assert flagged == ([figure] if regressed else [])
    assert len(found.regressions()) == regressed


def test_costs_measured_over_different_process_trees_are_not_compared(tmp_path) -> None:
    records = write(str(tmp_path), make("a", 1, cpu_seconds=100.0), make("b", 2, cpu_seconds=10.0,
                                                                        cpu_complete=False))
    [found] = checks(records)
    verdicts = {c.figure: c.verdict() for c in found.comparisons}
    assert verdicts["cpu_seconds"].startswith("not compared") and verdicts["peak_memory_bytes"].startswith("not")
    assert verdicts["seconds"] == "within"


def test_a_failed_run_is_a_regression_and_never_a_baseline(tmp_path) -> None:
    records = write(str(tmp_path), make("a", 1),
                    make("b", 2, exit_status=1, error="disk full", micro_f1=None, macro_f1=None),
                    make("c", 3))
    found = checks(records, run="b")
    assert found[0].regressions() == ["REGRESSION run b: failed (exit 1): disk full vs baseline a"]
    assert checks(records)[0].baseline["run_id"] == "a"
    with pytest.raises(ConfigError, match="a failed run is never a baseline"):
        checks(records, baseline="b")
    assert [len(c.regressions()) for c in checks(records, every=True)] == [0, 1, 0]


def test_runs_are_named_by_id_latest_or_a_unique_prefix(tmp_path) -> None:
    records = write(str(tmp_path), make("20261125T0600Z-h-1", 1), make("20261125T0700Z-h-2", 2),
                    make("20261126T0600Z-h-3", 3))
    assert [find(records, name) for name in ("latest", "first", "20261125T07", "20261125T0600Z-h-1")] == [2, 0, 1, 0]
    with pytest.raises(ConfigError, match="names 2 runs"):
        find(records, "20261125")
    with pytest.raises(ConfigError, match="no such run"):
        find(records, "2027")
    with pytest.raises(ConfigError, match="is the run checked"):
        checks(records, baseline="latest")


@pytest.mark.parametrize(("tolerances", "option"), [
    ({"max_f1_drop": -0.1}, "--max-f1-drop"), ({"max_f1_drop": 2.0}, "--max-f1-drop"),
    ({"max_time_ratio": 0.9}, "--max-time-ratio"), ({"max_cpu_ratio": float("nan")}, "--max-cpu-ratio"),
    ({"max_memory_ratio": float("inf")}, "--max-memory-ratio"),
])
def test_tolerances_out_of_range_are_refused(tolerances: dict[str, float], option: str) -> None:
    with pytest.raises(ConfigError, match=option):
        Tolerances(**tolerances)


def test_setting_changes_leave_out_where_a_run_is_recorded_and_go_into_tables() -> None:
    old = {"train": {"C": 1.0, "method": "svm"}, "spark": {"conf": {"spark.x": "1"}}, "history": {"path": "/a"},
           "progress": {"mode": "auto"}}
    new = {"train": {"C": 1.0, "method": "knn", "k": 30}, "spark": {"conf": {"spark.x": "2"}},
           "history": {"path": "/b"}, "progress": {"mode": "off"}}
    assert setting_changes(json.dumps(old), json.dumps(new)) == [
        "spark.conf.spark.x: 1 -> 2", "train.k: (unset) -> 30", "train.method: svm -> knn"]


def test_a_setting_added_at_its_default_keeps_the_baseline_and_is_named(tmp_path) -> None:
    # The code of run b added train.liblinear.tol (default 0.1) and changed train.liblinear.C's default: the digests,
    # over the settings away from each code's defaults, are the same, so b is compared with a, and the report says
    # how.
    old_defaults = {"train": {"method": "rocchio", "liblinear": {"C": 1.0}}}
    new_defaults = {"train": {"method": "rocchio", "liblinear": {"C": 0.5, "tol": 0.1}}}
    moved = {**SETTINGS, "corpus": {**SETTINGS["corpus"], "path": "/elsewhere"}}
    a, b = write(str(tmp_path), make("a", 1, defaults=old_defaults),
                 make("b", 2, settings={**moved, "train": {"method": "liblinear", "liblinear": {"C": 0.5, "tol": 0.1}}},
                      defaults=new_defaults, micro_f1=0.80, commit="2222222222bbbb"))
    assert a["config_digest"] == b["config_digest"]
    [found] = checks([a, b])
    assert found.baseline["run_id"] == "a"
    assert found.regressions()[0] == (
        "REGRESSION run b: micro_f1 0.8600 -> 0.8000 (-0.0600 > 0.002) vs baseline a; code changed: 1111111111 -> "
        "2222222222; defaults changed: train.liblinear.C: 1.0 -> 0.5, train.liblinear.tol: (unset) -> 0.1")
    # A setting away from the defaults is a change of configuration: no default baseline, and named.
    c = make("c", 3, settings={**SETTINGS, "train": {"method": "liblinear", "liblinear": {"C": 1.0, "tol": 0.1}}},
             defaults=new_defaults)
    assert c.config_digest != a["config_digest"]


def test_the_same_settings_under_another_digest_say_so(tmp_path) -> None:
    # A record digested over every setting (sparktc before b113c9c) and one over those away from the defaults.
    old, new = write(str(tmp_path), make("a", 1), make("b", 2, defaults={"train": {"liblinear": {"C": 1.0}}}))
    assert old["config_digest"] != new["config_digest"]
    assert changes(old, new).describe() == (
        f"configuration changed: digest {old['config_digest'][:8]} -> {new['config_digest'][:8]}, the settings the "
        "same: digested by another version (earlier ones digested every setting)")


def test_code_changes_name_the_commits_or_the_code_digests(tmp_path) -> None:
    a, b, c = write(str(tmp_path), make("a", 1, commit="1111111111aaaa+dirty"),
                    make("b", 2, commit="1111111111aaaa+dirty", code="f" * 64),
                    make("c", 3, commit="", code="f" * 64, master="local[4]"))
    assert changes(a, b).code == "1111111111+dirty (code dddddddd) -> 1111111111+dirty (code ffffffff)"
    assert changes(b, c).describe() == ("code changed: 1111111111+dirty -> code ffffffff; "
                                        "resources changed: master local[2] -> local[4]")


def test_trend_rows(tmp_path) -> None:
    records = write(str(tmp_path), make("a", 1, label="nightly", seconds=1234.56, peak_memory_bytes=3 * 2**30),
                    make("b", 2, exit_status=2, micro_f1=None, macro_f1=None, cpu_seconds=None,
                         peak_memory_bytes=None))
    assert trend_rows(records) == [
        {"started": "2026-11-25 07:00:00", "run": "a", "kind": "run", "label": "nightly", "code": "1111111111",
         "config": records[0]["config_digest"][:8], "corpus": "cccccccc", "status": "ok", "micro_F1": "0.8600",
         "macro_F1": "0.5500", "seconds": "1,234.6", "CPU_s": "150.0", "peak_MiB": "3,072"},
        {"started": "2026-11-25 08:00:00", "run": "b", "kind": "run", "label": "-", "code": "1111111111",
         "config": records[1]["config_digest"][:8], "corpus": "cccccccc", "status": "failed (exit 2)",
         "micro_F1": "-", "macro_F1": "-", "seconds": "100.0", "CPU_s": "-", "peak_MiB": "-"},
    ]


def test_a_benchmarks_figures_follow_the_rule_of_their_last_name(tmp_path) -> None:
    before = {"sparktc.micro_f1": 0.80, "sparktc.seconds": 100.0, "peer.seconds": 50.0,
              "sparktc.peak_memory_bytes": 2.0**30, "sparktc_over_peer.cpu": 2.0, "lean_peer.macro_f1": 0.6}
    after = {"sparktc.micro_f1": 0.79, "sparktc.seconds": 130.0, "peer.seconds": 55.0,
             "sparktc.peak_memory_bytes": 2.0**30, "sparktc_over_peer.cpu": 2.6, "mllib.seconds": 10.0}
    bench = {"kind": "benchmark:text_scale", "micro_f1": None, "macro_f1": None}
    records = write(str(tmp_path), make("a", 1, figures=before, **bench), make("b", 2, figures=after, **bench))
    [found] = checks(records)
    lines = {c.figure: c.line() for c in found.comparisons}
    assert lines["sparktc.micro_f1"] == "sparktc.micro_f1 0.8000 -> 0.7900 (-0.0100 > 0.002)"
    assert lines["sparktc.seconds"] == "sparktc.seconds 100.0 -> 130.0 (x1.30 > x1.25)"
    assert lines["peer.seconds"] == "peer.seconds 50.0 -> 55.0 (x1.10 <= x1.25)"
    assert lines["sparktc.peak_memory_bytes"] == "sparktc.peak_memory_bytes 1,024 MiB -> 1,024 MiB (x1.00 <= x1.5)"
    assert lines["sparktc_over_peer.cpu"] == ("sparktc_over_peer.cpu 2 -> 2.6 "
                                              "(not compared: no tolerance for it, shown only)")
    assert lines["lean_peer.macro_f1"] == "lean_peer.macro_f1 0.6000 -> - (not compared: not measured in both runs)"
    assert lines["mllib.seconds"] == "mllib.seconds - -> 10.0 (not compared: not measured in both runs)"
    assert [line.split(": ", 1)[1] for line in found.regressions()] == [
        "sparktc.micro_f1 0.8000 -> 0.7900 (-0.0100 > 0.002) vs baseline a",
        "sparktc.seconds 100.0 -> 130.0 (x1.30 > x1.25) vs baseline a"]
    # tree-measured figures are not compared between a run that measured the whole tree and one that did not
    records = write(str(tmp_path / "h2"), make("a", 1, figures=before, **bench),
                    make("b", 2, figures=before, cpu_complete=False, **bench))
    verdicts = {c.figure: c.verdict() for c in checks(records)[0].comparisons}
    assert verdicts["sparktc.peak_memory_bytes"].startswith("not compared: one run measured")
    assert verdicts["sparktc.seconds"] == "within"


def test_runs_of_another_kind_are_never_a_default_baseline_and_a_named_one_says_so(tmp_path) -> None:
    bench = {"kind": "benchmark:lyrl2004", "settings": {"benchmark": {"sets": ["topics"]}}}
    records = write(str(tmp_path), make("a", 1), make("b", 2, **bench), make("c", 3), make("d", 4, kind="other"))
    [alone] = checks(records, run="b")
    assert alone.baseline is None and alone.others == ()  # a, before it, is a run of another kind
    assert checks(records, run="c")[0].baseline["run_id"] == "a"
    assert checks(records)[0].baseline is None  # d: the same digests as a and c, but another kind
    # named, a run of another kind says so, and its settings, others altogether, only by their digest
    [named] = checks(records, run="b", baseline="a")
    assert named.changes.describe() == (f"kind changed: run -> benchmark:lyrl2004; configuration changed: digest "
                                        f"{records[0]['config_digest'][:8]} -> {records[1]['config_digest'][:8]}")
    assert trend_rows(records)[1]["kind"] == "benchmark:lyrl2004"
