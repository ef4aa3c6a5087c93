"""train.fold_file (sparktc.models.fold_file): its form checked before Spark starts, the folds it gives each
category, its refusals; and the settings of micromacro that cannot work.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO

from sparktc.errors import InputError
from sparktc.experiment.config import ConfigError, load_config
from sparktc.models.decision import decision_record
from sparktc.models.fold_file import fold_file_problem, read_fold_file


def write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def test_per_category_folds_follow_the_doc_ids_given(tmp_path) -> None:
    path = write(tmp_path / "folds.tsv", ["doc_id\tA\tB", "d1\t0\t2", "d2\t1\t1", "d3\t2\t0", "d4\t0\t1"])
    given = read_fold_file(path, 3)
    assert given.folds("A", ["d3", "d1", "d4", "d2"], 1).tolist() == [2, 0, 0, 1]
    assert given.folds("B", ["d1", "d2", "d3", "d4"], 1).tolist() == [2, 1, 0, 1]
    assert given.folds("C", ["d1", "d2", "d3", "d4"], 0) is None  # no positive: no class of LibMultiLabel's
    with pytest.raises(InputError, match="no column for category 'C' \\(2 training documents\\)"):
        given.folds("C", ["d1", "d2", "d3", "d4"], 2)
    with pytest.raises(InputError, match="no fold for 1 of the 5 training documents: d5"):
        given.folds("A", ["d1", "d2", "d3", "d4", "d5"], 1)
    with pytest.raises(InputError, match="1 doc ids that are not training documents: d4"):
        given.folds("A", ["d1", "d2", "d3"], 1)


def test_one_column_for_all_categories(tmp_path) -> None:
    given = read_fold_file(write(tmp_path / "folds.tsv", ["doc_id\t*", "a\t1", "b\t0"]), 2)
    assert given.folds("anything", ["b", "a"], 1).tolist() == [0, 1]


@pytest.mark.parametrize(("lines", "message"), [
    (["id\tA", "d1\t0"], "header starts ['id', 'A']"),
    (["doc_id\t*\tA", "d1\t0\t0"], "header starts"),
    (["doc_id\tA\tA", "d1\t0\t1", "d2\t1\t0"], "names categories more than once: A"),
    (["doc_id\tA", "d1\t0\t1"], "line 2 has 3 fields, the header 2"),
    (["doc_id\tA", "d1\tx"], "a fold is not an integer"),
    (["doc_id\tA", "d1\t0", "d2\t3"], "line 3 gives d2 fold 3 for A; with train.folds = 2 the folds are 0..1"),
    (["doc_id\tA", "d1\t0", "d2\t0"], "fold 1 of A has no document"),
    (["doc_id\tA", "d1\t0", "d2\t1", "d1\t1"], "doc id d1 has more than one line"),
    (["doc_id\tA"], "it has no document"),
])
def test_malformed_files_are_refused_naming_the_problem(tmp_path, lines, message) -> None:
    problem = fold_file_problem(write(tmp_path / "folds.tsv", lines), 2)
    assert problem is not None and message in problem


BASE = ["corpus.format=reuters21578", f"corpus.path={REPO}"]


def test_a_fold_file_is_checked_before_spark(tmp_path) -> None:
    good = write(tmp_path / "good.tsv", ["doc_id\t*", "a\t0", "b\t1", "c\t2"])
    config = load_config(None, [*BASE, "train.thresholding=micromacro", "train.folds=3", f"train.fold_file={good}"])
    assert config.train.fold_file == good and config.train.decision_rule().fold_file == good
    with pytest.raises(ConfigError, match="with train.folds = 2 the folds are 0..1"):
        load_config(None, [*BASE, "train.thresholding=scutfbr", "train.folds=2", f"train.fold_file={good}"])
    with pytest.raises(ConfigError, match="no such file"):
        load_config(None, [*BASE, "train.thresholding=scutfbr", f"train.fold_file={tmp_path / 'none.tsv'}"])


@pytest.mark.parametrize(("overrides", "message"), [
    (["train.thresholding=micromacro", "train.method=knn"],
     "train.thresholding = 'micromacro' with train.method = 'knn': micromacro thresholds the out-of-fold scores of "
     "one model per category; use train.thresholding = 'scutfbr'"),
    (["train.thresholding=micromacro", "train.method=llsf"], "use train.thresholding = 'scutfbr'"),
    (["train.thresholding=micromacro", "tune.liblinear.positive_weight=[1, 2]"],
     "tune.liblinear.positive_weight with train.thresholding = 'micromacro': it sets each category's threshold from "
     "the categories visited before, for one model each, and chooses nothing; remove the search, or use "
     "train.thresholding = 'scutfbr'"),
    (["train.fold_file=x.tsv"], "train.fold_file = 'x.tsv' with train.thresholding = 'fixed' and no [tune] search: "
                                "nothing is cross-validated; remove train.fold_file"),
    (["train.fold_file=x.tsv", "train.method=llsf", "train.thresholding=scut"],
     "train.fold_file with train.method = 'llsf': its folds are drawn for all categories at once (train.seed); "
     "remove train.fold_file"),
    (["train.fold_file=hdfs:///x.tsv", "train.thresholding=scut"], "a local file is needed"),
])
def test_settings_that_cannot_work_are_refused(overrides, message) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, [*BASE, *overrides])
    assert message in str(error.value)


def test_the_record_names_the_fold_file() -> None:
    record = decision_record({"method": "liblinear", "thresholding": "micromacro", "folds": 3, "seed": 0,
                              "fold_file": "/f.tsv"}, {})
    assert record["thresholding"] == {"name": "micromacro", "folds": 3, "seed": 0, "fold_file": "/f.tsv"}
