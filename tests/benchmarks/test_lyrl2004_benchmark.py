"""The LYRL2004 benchmark's pure parts: arguments, refusals, the commands it runs, the markdown and the figures it
records (no Spark).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.harness import CORPUS_FILES
from benchmarks.lyrl2004 import MARKER, METHODS, WRITER, headline, parse_arguments, pipeline_command, render
from sparktc.corpora import lyrl2004
from sparktc.experiment.config import load_config
from sparktc.experiment.presets import PRESETS


def corpus(directory: Path, *sets: str) -> Path:
    directory.mkdir()
    for name in (*CORPUS_FILES, *(f"{lyrl2004.QRELS_FILES[s]}.gz" for s in sets)):
        (directory / name).write_text("")
    return directory


def test_defaults_are_the_three_sets_and_the_four_methods(tmp_path: Path):
    arguments = parse_arguments(["--corpus", str(corpus(tmp_path / "c", *lyrl2004.CATEGORY_SETS)),
                                 "--output", str(tmp_path / "out")])
    assert arguments.sets == ["topics", "industries", "regions"]
    assert arguments.methods == ["svm1", "svm2", "knn", "rocchio"]
    assert all(preset in PRESETS for preset in METHODS.values())


def test_a_corpus_without_a_sets_qrels_is_refused(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_arguments(["--corpus", str(corpus(tmp_path / "c", "topics")), "--output", str(tmp_path / "out"),
                         "--sets", "topics,regions"])
    assert exit_.value.code == 2
    assert "lacks rcv1-v2.regions.qrels; synthesize it again" in capsys.readouterr().err


def test_bad_names_and_foreign_outputs_are_refused(tmp_path: Path, capsys):
    good = corpus(tmp_path / "c", *lyrl2004.CATEGORY_SETS)
    for extra, message in ((["--sets", "topics,topics"], "category set(s) given twice: topics"),
                           (["--methods", "svm3"], "unknown method(s) svm3")):
        with pytest.raises(SystemExit):
            parse_arguments(["--corpus", str(good), "--output", str(tmp_path / "out"), *extra])
        assert message in capsys.readouterr().err
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit):
        parse_arguments(["--corpus", str(good), "--output", str(foreign)])
    assert f"was not written by {WRITER}" in capsys.readouterr().err
    (foreign / MARKER).write_text(json.dumps({"written_by": WRITER}))
    assert parse_arguments(["--corpus", str(good), "--output", str(foreign)]).output == foreign


def test_each_command_is_the_users_with_the_set_and_the_preset(tmp_path: Path):
    command = pipeline_command(tmp_path / "c", "industries", tmp_path / "run", "lyrl2004.svm1")
    assert command[:7] == ["./spark-submit.sh", "--master", "local[2]", "jobs/pipeline.py", "--config",
                           "conf/rcv1.toml", "--preset"]
    assert "corpus.category_set=industries" in command and command[-2:] == ["--output", str(tmp_path / "run")]
    # What the command asks for is a valid configuration: the preset and the set load together.
    config = load_config("conf/rcv1.toml", [f"corpus.path={tmp_path}", "corpus.category_set=industries"],
                         "lyrl2004.svm1")
    assert (config.corpus.category_set, config.train.thresholding) == ("industries", "scutfbr")
    assert "--preset" not in pipeline_command(tmp_path / "c", "topics", tmp_path / "run")


def record(category_set: str, method: str, micro: float | None, failed: bool = False) -> dict:
    return {"set": category_set, "method": method, "failed": failed, "command": f"cmd {category_set} {method}",
            "log": "log", "cause": "out of memory" if failed else None, "end_to_end_seconds": 100.0,
            "cpu_seconds": 180.0, "peak_rss_mb": {"total": 2048.0},
            "segments": {"train": {"wall_seconds": 50.0, "cpu_seconds": 90.0}},
            "metrics": None if failed else {"micro_f1": micro, "macro_f1": micro / 2, "n_categories": 101}}


def test_the_markdown_orders_runs_by_set_and_shows_published_topics_only():
    result = {"settings": {"corpus": "c", "sets": ["topics", "regions"], "methods": ["svm1", "knn"],
                           "masters": ["local[2]"]}, "command": "python -m benchmarks.lyrl2004",
              "runs": [record("regions", "one-vs-rest", 0.5), record("topics", "one-vs-rest", 0.8),
                       record("topics", "svm1", 0.82), record("regions", "knn", None, failed=True)],
              "machine": {"cores": 2, "memory_gb": 24.0, "cpu_model": "cpu", "python": "3.11", "java": "17",
                          "pyspark": "4"}}
    markdown = render(result)
    rows = [line for line in markdown.splitlines() if line.startswith("| topics") or line.startswith("| regions")]
    assert [row.split(" | ")[1] for row in rows] == ["one-vs-rest SVM, threshold 0", "SVM.1",
                                                     "one-vs-rest SVM, threshold 0", "k-NN (**failed**)"]
    assert "| 0.8200 | 0.4100 | 101 |" in rows[1] and rows[1].endswith("| 0.816 / 0.619 |")
    assert rows[3].endswith("| — |")
    assert "- regions k-NN: out of memory (full output: log)" in markdown
    assert "`--preset lyrl2004.svm1`" in markdown and "Differs from LYRL2004" in markdown


def test_the_records_figures_are_per_set_and_method():
    runs = [record("topics", "one-vs-rest", 0.8), record("topics", "svm1", 0.82), record("regions", "knn", None, True)]
    figures = headline({"runs": runs})["sparktc"]
    assert sorted(figures) == ["regions", "topics"] and figures["regions"] == {"knn": {}}
    assert figures["topics"]["svm1"] == {"seconds": 100.0, "cpu_seconds": 180.0, "peak_memory_bytes": 2048 * 2**20,
                                         "micro_f1": 0.82, "macro_f1": 0.41,
                                         "train": {"seconds": 50.0, "cpu_seconds": 90.0},
                                         "evaluate": {"seconds": None, "cpu_seconds": None}}
