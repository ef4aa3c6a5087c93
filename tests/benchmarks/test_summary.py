"""The benchmarks' summary table (``benchmarks/summary.py``), without Spark: the committed tables are what the
committed records give, and the generator on records written here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import summary
from sparktc.tracking import history_table
from sparktc.tracking.record import RunRecord

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_tables_are_what_the_committed_records_give() -> None:
    files = summary.regenerated(str(REPO / summary.HISTORY))
    assert {path.relative_to(REPO).as_posix() for path in files} >= {"BENCHMARKS.md", "docs/benchmarks/index.md"}
    stale = [str(path.relative_to(REPO)) for path, text in files.items() if path.read_text() != text]
    assert not stale, f"run python -m benchmarks.summary: {stale} are not what {summary.HISTORY} gives"
    assert summary.main(["--check"]) == 0


def test_every_committed_record_is_a_benchmark_s_and_ended_well() -> None:
    records = summary.read(str(REPO / summary.HISTORY))
    names = {benchmark.name for benchmark in summary.BENCHMARKS}
    assert all(record["kind"].split(":", 1)[1] in names for record in records if record["kind"] != "pipeline")
    assert all(record["exit_status"] == 0 for record in records)


def record(name: str, started: str, figures: dict[str, Any], settings: dict[str, Any] | None = None,
           status: int = 0) -> RunRecord:
    """A finished record of benchmark ``name`` begun at ``started``, with ``figures``."""
    run = RunRecord.start(f"{started}-{name}", f"benchmark:{name}", {"benchmark": settings or {}},
                          label=f"benchmark:{name}", started=datetime.fromisoformat(started).replace(tzinfo=UTC))
    run.git_commit = "0123456789abcdef"
    run.add_figures(figures)
    return run.finish(status, "failed: x" if status else None)


def rows(text: str) -> dict[str, str]:
    """The table's rows by the benchmark's page."""
    found = {}
    for line in text.splitlines()[2:]:
        page = line.split("](", 1)[1].split(")", 1)[0]
        found.setdefault(page, line)
    return found


def test_the_table_shows_each_benchmark_s_latest_successful_record_or_says_there_is_none(tmp_path: Path) -> None:
    path = str(tmp_path / "history")
    figures = {"R90": {"best_by_cv": {"micro_f1": 0.8892, "macro_f1": 0.6626}, "svm": {"micro_f1": 0.8642,
                                                                                        "macro_f1": 0.4218}}}
    history_table.append(path, record("reuters21578", "2026-11-20T10:00:00", {"R90": {"svm": {"micro_f1": 0.5}}}))
    history_table.append(path, record("reuters21578", "2026-11-21T10:00:00", figures,
                                      {"sets": ["R(10)", "R(90)", "R(115)"]}))
    history_table.append(path, record("reuters21578", "2026-11-22T10:00:00", figures, status=1))  # failed: not shown
    history_table.append(path, record("ml_pipeline", "2026-11-21T11:00:00",
                                {"job": {"seconds": 25.5, "cpu_seconds": 40.2, "micro_f1": 0.8642}},
                                {"repeats": 1, "master": "local[2]"}))
    table = summary.table(summary.read(path), pages="docs/benchmarks/")
    found = rows(table)
    assert table.splitlines()[0] == "| benchmark | headline figures (latest record) | command | date | commit |"
    assert len(found) == len(summary.BENCHMARKS) - 1  # methods_rcv1 shares yang-liu-1999.md: the first row kept
    reuters = found["docs/benchmarks/reuters21578.md"]
    assert "R(90) 0.8892 / 0.6626" in reuters and "SVM at 0, R(90): 0.8642 / 0.4218" in reuters
    assert "| 2026-11-21 | `0123456` |" in reuters and "reduced" not in reuters
    assert "*reduced: repeats 1.*" in found["docs/benchmarks/spark-ml.md"]
    assert "job 25.5 s, 40 CPU-s, micro-F1 0.8642" in found["docs/benchmarks/spark-ml.md"]
    lyrl = found["docs/benchmarks/lyrl2004.md"]
    assert summary.NO_RECORD in lyrl and "`.venv/bin/python -m benchmarks.lyrl2004 --output runs/lyrl2004`" in lyrl
    assert all(len(line) <= 400 for line in table.splitlines())
    readme = summary.table(summary.read(path), commands=False)
    assert "command" not in readme.splitlines()[0] and "benchmarks.lyrl2004" not in readme


def test_only_the_text_between_the_markers_is_rewritten_and_a_file_without_them_is_left(tmp_path: Path) -> None:
    path = str(tmp_path / "history")
    history_table.append(path, record("ml_pipeline", "2026-11-21T11:00:00",
                                      {"peer": {"seconds": 2.0, "micro_f1": 0.86}}))
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "BENCHMARKS.md").write_text(f"# B\n\n{summary.SUMMARY_BEGIN}\nold\n{summary.SUMMARY_END}\n\nafter\n")
    (tmp_path / "README.md").write_text("# R\n\nno markers\n")
    files = summary.regenerated(path, tmp_path)
    assert list(files) == [tmp_path / "BENCHMARKS.md"]
    text = files[tmp_path / "BENCHMARKS.md"]
    assert text.startswith(f"# B\n\n{summary.SUMMARY_BEGIN}\n| benchmark |") and text.endswith(
        f"{summary.SUMMARY_END}\n\nafter\n")
    assert "peer 2.0 s, micro-F1 0.8600" in text and "old" not in text


def test_each_benchmark_s_figures_fill_its_cell() -> None:
    from benchmarks import debole_sebastiani_2005, ml_pipeline, reuters21578, yang_liu_1999

    reuters = reuters21578.headline([{"set": s, "key": "best_by_cv", "micro_f1": 0.9, "macro_f1": 0.6,
                                      "train_seconds": 8.0} for s in reuters21578.SETS])
    run = RunRecord.start("r", "benchmark:x", {})
    run.add_figures(reuters)
    assert "R(10) 0.9000 / 0.6000, R(90) 0.9000 / 0.6000, R(115) 0.9000 / 0.6000" in \
        summary.reuters21578_cell(run.figures)
    runs = {key: {"metrics": {"micro_f1": 0.86, "macro_f1": 0.5}, "train_seconds": 1.0, "evaluate_seconds": 2.0}
            for key in ("svm", "knn")}
    run = RunRecord.start("y", "benchmark:x", {})
    run.add_figures(yang_liu_1999.headline(runs))
    assert summary.yang_liu_cell(run.figures) == "micro / macro-F1 on R(90): svm 0.8600 / 0.5000, knn 0.8600 / 0.5000"
    run = RunRecord.start("d", "benchmark:x", {})
    run.add_figures(debole_sebastiani_2005.headline({
        "table_3": {"R(90)": {"setups": 48, "micro_mean": 0.787, "macro_mean": 0.468}},
        "cost": {"wall_seconds": 988.5, "cpu_seconds": 1483.0, "peak_rss_mb": 4827.0}}))
    assert summary.debole_cell(run.figures) == ("mean micro / macro-F1 of the 48 setups: R(90) 0.7870 / 0.4680; grid "
                                                "16.5 min, 1483 CPU-s, peak 4,827 MB")
    result = {"rows": [{"command": kind, "run": 1, "seconds": 2.0, "cpu_seconds": 1.5, "peak_mb": 100.0,
                        "micro_f1": 0.8642, "cpu_source": "proc"} for kind in ("job", "ml", "peer")]}
    run = RunRecord.start("m", "benchmark:x", {})
    run.add_figures(ml_pipeline.headline(result))
    assert summary.ml_pipeline_cell(run.figures).count("2.0 s, 2 CPU-s, peak 100 MB, micro-F1 0.8642") == 3
    assert json.loads(json.dumps(run.figures))  # plain numbers, as a record holds them


def test_each_benchmark_s_page_gets_every_figure_of_its_latest_record(tmp_path: Path) -> None:
    path = str(tmp_path / "history")
    history_table.append(path, record("reuters21578", "2026-11-21T10:00:00",
                                {"R90": {"svm": {"micro_f1": 0.8642, "train_seconds": 1.84},
                                         "knn": {"micro_f1": 0.8165, "macro_f1": 0.5802}}}, {"sets": ["R(90)"]}))
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    page = tmp_path / "docs" / "benchmarks" / "reuters21578.md"
    begin, end = summary.record_markers("reuters21578")
    page.write_text(f"# R\n\n{begin}\n{end}\n\n## Issue 4\n")
    ml = tmp_path / "docs" / "benchmarks" / "spark-ml.md"
    ml.write_text(f"# ML\n\n{chr(10).join(summary.record_markers('ml_pipeline'))}\n")
    files = summary.regenerated(path, tmp_path)
    lines = files[page].splitlines()
    assert lines[3].startswith("Latest record: run `2026-11-21T10:00:00-reuters21578`, 2026-11-21 10:00 UTC, commit "
                               "`0123456`")
    assert lines[4] == 'Settings: sets ["R(90)"].'
    assert lines[6:10] == ["| figures | micro f1 | train seconds | macro f1 |", "|---|---|---|---|",
                           "| R90.svm | 0.8642 | 1.8 | – |", "| R90.knn | 0.8165 | – | 0.5802 |"]
    assert lines[10:] == [end, "", "## Issue 4"]
    assert "No record yet: `.venv/bin/python -m benchmarks.ml_pipeline --output runs/benchmark-ml --history " \
           "benchmarks/history` adds one." in files[ml]
