"""The LibMultiLabel benchmark's pure parts (benchmarks/libmultilabel.py, benchmarks/libmultilabel_corpus.py):
arguments and refusals, the commands it runs, the figures it reads, the Reuters-21578 text corpus it writes, the
comparison of decisions and vocabularies, and the table. No Spark, no network, no LibMultiLabel.
"""

from __future__ import annotations

import bz2
import csv
import dataclasses
import gzip
import json
import re
import stat
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO, SHARED_DATA

from benchmarks import harness_libmultilabel_corpus as corpus_module
from benchmarks import libmultilabel as bench
from benchmarks.harness import HarnessError
from benchmarks.harness_text_corpus import TextModel, TextShape, generate_block
from sparktc.corpora.records import Document
from sparktc.experiment.config import load_config


def corpus(directory: Path, *names: str) -> Path:
    directory.mkdir()
    for name in names:
        (directory / name).write_text("")
    return directory


# --- arguments ---------------------------------------------------------------------------------

def test_the_default_is_a_small_synthetic_corpus_and_every_method(tmp_path):
    arguments = bench.parse_arguments(["--output", str(tmp_path / "out"), "--venv", str(tmp_path / "venv")])
    assert arguments.documents == bench.DEFAULT_DOCUMENTS and arguments.corpus is None
    assert arguments.methods == ["1vsrest", "thresholding", "cost_sensitive", "cost_sensitive_micro"]


def test_a_corpus_needs_plain_files_and_says_how_to_get_them(tmp_path, capsys):
    given = corpus(tmp_path / "c", "train.svm.bz2", "test.svm.bz2")
    with pytest.raises(SystemExit) as exit_:
        bench.parse_arguments(["--corpus", str(given), "--output", str(tmp_path / "out")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "has no train.svm or test.svm" in error and "bunzip2 -k" in error
    plain = corpus(tmp_path / "plain", "train.svm", "test.svm")
    assert bench.parse_arguments(["--corpus", str(plain), "--output", str(tmp_path / "o")]).documents is None


def test_corpus_and_documents_exclude_each_other(tmp_path):
    with pytest.raises(SystemExit):
        bench.parse_arguments(["--corpus", str(tmp_path), "--documents", "1000", "--output", str(tmp_path / "o")])


def test_the_projects_own_environment_is_refused_for_libmultilabel(tmp_path, capsys):
    for venv in (REPO / ".venv", Path(sys.prefix)):
        with pytest.raises(SystemExit):
            bench.parse_arguments(["--output", str(tmp_path / "out"), "--venv", str(venv)])
        assert "overwrite its liblinear-official" in capsys.readouterr().err


def test_an_output_of_someone_else_is_refused(tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.txt").write_text("mine")
    assert "was not written by benchmarks/libmultilabel.py" in bench.output_refusal(tmp_path / "theirs")
    (tmp_path / "ours").mkdir()
    (tmp_path / "ours" / bench.MARKER).write_text(json.dumps({"written_by": bench.WRITER}))
    (tmp_path / "ours" / "libmultilabel.md").write_text("earlier")
    assert bench.output_refusal(tmp_path / "ours") is None
    assert bench.output_refusal(tmp_path / "new") is None


@pytest.mark.parametrize("text", ["1vsrest,1vsrest", "tree", ""])
def test_bad_methods_are_refused(text):
    with pytest.raises(Exception, match="expected distinct methods"):
        bench.selected_methods(text)


# --- methods and commands ----------------------------------------------------------------------

def test_every_counterpart_is_valid_sparktc_settings_and_says_whether_it_is_the_same_algorithm(tmp_path):
    def config_of(method: bench.Method):
        return load_config(str(REPO / "conf" / "libsvm.toml"), [f"corpus.path={tmp_path}", *method.overrides])

    for method in bench.METHODS.values():
        config = config_of(method)
        own = config.train.liblinear
        assert (own.C, own.bias, own.epsilon) == (1.0, 1.0, 0.0001)
        assert config.evaluate.zero_division == 0.0
    assert [m.same_algorithm for m in bench.METHODS.values()] == [True, True, True, True]
    assert [m.takes_folds for m in bench.METHODS.values()] == [False, True, True, True]
    tuned = config_of(bench.METHODS["cost_sensitive"])
    assert tuned.tune.liblinear.positive_weight == [1, 1.33, 1.8, 2.5, 3.67, 6, 13]  # LibMultiLabel's param_space
    assert tuned.train.folds == 3 and tuned.train.threshold == 0.0 and tuned.train.liblinear.one_class == "liblinear"
    shared = config_of(bench.METHODS["cost_sensitive_micro"])
    assert shared.tune.liblinear.shared_positive_weight
    assert shared.tune.liblinear.positive_weight == tuned.tune.liblinear.positive_weight
    assert config_of(bench.METHODS["thresholding"]).train.thresholding == "micromacro"


def test_every_text_counterpart_is_valid_sparktc_settings_with_libmultilabels_features(tmp_path):
    for tfidf in bench.TFIDF.values():
        for method in bench.METHODS.values():
            config = load_config(str(REPO / bench.FORMATS["text"].config),
                                 [f"corpus.path={tmp_path}", *tfidf.overrides, *method.overrides])
            assert (config.corpus.format, config.weight.scheme, config.tokenize.analyzer) == \
                ("libmultilabel_text", "sklearn", "sklearn")
            assert (config.tokenize.stemmer, config.tokenize.stop_list) == ("none", "")
            own = config.train.liblinear
            assert (own.C, own.bias, own.epsilon) == (1.0, 1.0, 0.0001)
            assert (config.evaluate.zero_division, config.evaluate.average_over) == (0.0, "train_positive")
    # the tutorial's TfidfVectorizer(max_features=20000, min_df=3, ngram_range=(1, 3))
    tutorial = load_config(str(REPO / bench.FORMATS["text"].config),
                           [f"corpus.path={tmp_path}", *bench.TFIDF["tutorial"].overrides])
    assert (tutorial.tokenize.ngrams, tutorial.select.min_df, tutorial.rank.score, tutorial.select.top_k) == \
        (3, 3, "frequency", 20000)
    default = load_config(str(REPO / bench.FORMATS["text"].config), [f"corpus.path={tmp_path}"])
    assert (default.tokenize.ngrams, default.select.min_df, default.select.top_k) == (1, 1, 0)


def test_the_commands_are_the_normal_ones(tmp_path):
    method = bench.METHODS["thresholding"]
    ours = bench.sparktc_command(tmp_path / "c", tmp_path / "run", method, tmp_path / "folds.tsv")
    assert ours[:4] == ["./spark-submit.sh", "jobs/pipeline.py", "--config", "conf/libsvm.toml"]
    assert "train.thresholding=micromacro" in ours and ours[-2:] == ["--output", str(tmp_path / "run")]
    assert f"train.fold_file={tmp_path / 'folds.tsv'}" in ours
    files = (tmp_path / "c" / "train.svm", tmp_path / "c" / "test.svm")
    theirs = bench.peer_command(tmp_path / "venv", files, tmp_path / "r.json", tmp_path / "d.npz", method,
                                tmp_path / "folds.tsv")
    assert theirs[:3] == [str(tmp_path / "venv" / "bin" / "python"), "-I", bench.PEER]  # -I: no benchmarks/ on path
    assert theirs[theirs.index("--options") + 1] == "-s 1 -c 1 -B 1 -e 0.0001"
    assert theirs[theirs.index("--method") + 1] == "thresholding"
    assert theirs[theirs.index("--folds") + 1] == str(tmp_path / "folds.tsv")
    assert theirs[theirs.index("--train") + 1] == str(files[0]) and "--format" not in theirs  # svm: the peer's default


def test_a_peer_record_of_the_same_command_is_reused(tmp_path):
    method, corpus_dir = bench.METHODS["thresholding"], tmp_path / "c"
    files = (corpus_dir / "train.svm", corpus_dir / "test.svm")
    record, decisions, folds = tmp_path / "r.json", tmp_path / "d.npz", tmp_path / "f.tsv"
    same = {"train": str(corpus_dir / "train.svm"), "test": str(corpus_dir / "test.svm"), "method": "thresholding",
            "options": bench.OPTIONS, "seed": bench.PEER_SEED}
    identity = bench.peer_identity(files, method)
    record.write_text(json.dumps(same))
    decisions.write_text("")
    assert bench.reusable_peer(record, [decisions, folds], identity) is None  # no folds yet
    folds.write_text("")
    assert bench.reusable_peer(record, [decisions, folds], identity) == same
    record.write_text(json.dumps({**same, "seed": 1}))
    assert bench.reusable_peer(record, [decisions, folds], identity) is None
    # a text run's record is its tf-idf setting's only
    text = (corpus_dir / "train.txt", corpus_dir / "test.txt")
    default = {**same, "train": str(text[0]), "test": str(text[1]), "format": "txt", "tfidf": "default",
               "vocabulary_from": None}
    record.write_text(json.dumps(default))
    for name, expected in (("default", default), ("tutorial", None)):
        identity = bench.peer_identity(text, method, bench.TFIDF[name])
        assert bench.reusable_peer(record, [decisions], identity) == expected
    record.write_text(json.dumps({**default, "vocabulary_from": "sparktc.txt"}))  # features over another vocabulary
    assert bench.reusable_peer(record, [decisions], bench.peer_identity(text, method, bench.TFIDF["default"])) is None


def fake_python(venv: Path, versions: dict) -> None:
    """A stand-in interpreter that answers the version query with ``versions``."""
    (venv / "bin").mkdir(parents=True)
    script = venv / "bin" / "python"
    script.write_text(f"#!/bin/sh\necho '{json.dumps(versions)}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_an_existing_environment_must_hold_the_pinned_versions(tmp_path):
    pinned = {"python": "3.11.7", "libmultilabel": "0.10.0", "liblinear-multicore": "2.50.0", "scipy": "1.13.1",
              "numpy": "2.2.6"}
    fake_python(tmp_path / "good", pinned)
    record = bench.ensure_venv(tmp_path / "good", tmp_path / "venv.log")
    assert record["created"] is False and record["versions"] == pinned
    fake_python(tmp_path / "bad", pinned | {"scipy": "1.17.1"})
    with pytest.raises(HarnessError, match="give another --venv"):
        bench.ensure_venv(tmp_path / "bad", tmp_path / "venv.log")


# --- figures and decisions ---------------------------------------------------------------------

def test_figures_are_read_from_each_tools_own_output():
    metrics = {"micro_f1": 0.8, "macro_f1": 0.5, "n_categories": 101, "zero_division": 0.0,
               "ranking": {"P@1": 0.9, "P@3": 0.7, "P@5": 0.5, "R@1": 0.3}}
    assert bench.sparktc_figures(metrics) == {"micro_f1": 0.8, "macro_f1": 0.5, "P@1": 0.9, "P@3": 0.7, "P@5": 0.5,
                                              "labels": 101, "zero_division": 0.0, "cv_micro_f1": None}
    assert bench.sparktc_figures({**metrics, "cv_micro_f1": 0.7})["cv_micro_f1"] == 0.7
    record = {"metrics": {"Micro-F1": 0.8, "Macro-F1": 0.5, "P@1": 0.9, "P@3": 0.7, "P@5": 0.5}, "labels": 101}
    assert bench.peer_figures(record) == bench.sparktc_figures(metrics)


def test_sparktcs_decisions_are_rows_of_test_svm_and_integer_labels(tmp_path):
    table = pa.table({"doc_id": ["test.svm:1", "test.svm:3", "test.svm:2"],
                      "predicted": pa.array([["5", "17"], [], None], pa.list_(pa.string()))})
    (tmp_path / "predictions").mkdir()
    pq.write_table(table, tmp_path / "predictions" / "part-0.parquet")
    rows, labels = bench.sparktc_decisions(tmp_path / "predictions")
    assert rows.tolist() == [0, 0] and labels.tolist() == [5, 17]


def test_decisions_are_compared_pair_by_pair():
    ours = (np.array([0, 0, 1, 2]), np.array([5, 17, 5, 3]))
    theirs = (np.array([0, 1, 1, 2]), np.array([5, 5, 9, 4]))
    assert bench.compare_decisions(ours, theirs) == {
        "sparktc_positive": 4, "libmultilabel_positive": 4, "only_sparktc": 2, "only_libmultilabel": 2,
        "differing": 4, "documents": 3, "labels": 4}
    same = bench.compare_decisions(ours, ours)
    assert same["differing"] == same["documents"] == same["labels"] == 0


def test_figures_agree_when_equal_to_four_decimals():
    assert bench.agree(0.80081, 0.80084) is True
    assert bench.agree(0.80081, 0.80096) is False
    assert bench.agree(None, 0.5) is None


# --- the table ---------------------------------------------------------------------------------

def method_record(name: str, differing: int) -> dict:
    method = bench.METHODS[name]
    figures = {"micro_f1": 0.8008, "macro_f1": 0.5172, "P@1": 0.95, "P@3": 0.8, "P@5": 0.55, "labels": 101,
               "zero_division": 0.0}
    side = {"wall_seconds": 10.0, "cpu_seconds": 12.5, "peak_rss_mb": {"total": 1234.0}, "figures": figures}
    return {"run": name, "method": name, "libmultilabel": method.libmultilabel, "sparktc_counterpart": method.sparktc,
            "overrides": list(method.overrides), "same_algorithm": method.same_algorithm,
            "differences": method.differences, "sparktc": side, "peer": {**side, "wall_seconds": 5.0},
            "decisions": {"sparktc_positive": 1000, "libmultilabel_positive": 1001, "only_sparktc": 0,
                          "only_libmultilabel": differing, "differing": differing, "documents": differing,
                          "labels": min(differing, 1)},
            "f1_agree_4_decimals": {"micro_f1": True, "macro_f1": True}}


def test_the_table_sets_both_tools_side_by_side():
    result = {"settings": {"corpus": "/tmp/c", "documents_note": "given", "masters": ["local[*,4]"]},
              "venv": {"path": "/v", "versions": {"libmultilabel": "0.10.0"}},
              "machine": {"cores": 2, "memory_gb": 23.5, "cpu_model": "x", "python": "3.11.7", "java": "17",
                          "pyspark": "4.3.0"},
              "command": "cmd", "methods": [method_record("1vsrest", 0), method_record("thresholding", 1)]}
    markdown = bench.render(result)
    rows = [line for line in markdown.splitlines() if line.startswith("| 1vsrest") or line.startswith("| thresh")]
    assert len(rows) == 2
    assert "| yes | 0.8008 / 0.8008 | 0.5172 / 0.5172 |" in rows[0]
    assert "| 5.0 / 10.0 | 12.5 / 12.5 | 1,234 / 1,234 | 0 (equal; 1,000 positive) | yes / yes |" in rows[0]
    assert "| yes |" in rows[1] and "train.thresholding=micromacro" in rows[1]
    assert "1 of 1,001 positive (1 LibMultiLabel only, 0 sparktc only; 1 documents, 1 labels)" in rows[1]
    assert "The same algorithm over the same folds" in markdown and "F1 = 0 at 0/0" in markdown


def test_the_records_figures_are_each_runs_costs_f1_and_differing_decisions():
    reused = method_record("thresholding", 3)
    reused["peer"] = {**reused["peer"], "cpu_seconds": None}  # a reused peer record: its CPU was not sampled
    figures = bench.headline({"methods": [method_record("1vsrest", 0), reused]})
    assert figures["1vsrest"] == {
        "sparktc": {"seconds": 10.0, "cpu_seconds": 12.5, "peak_memory_bytes": 1234 * 2**20, "micro_f1": 0.8008,
                    "macro_f1": 0.5172},
        "libmultilabel": {"seconds": 5.0, "cpu_seconds": 12.5, "peak_memory_bytes": 1234 * 2**20,
                          "micro_f1": 0.8008, "macro_f1": 0.5172},
        "decisions": {"differing": 0}}
    assert figures["thresholding"]["libmultilabel"]["cpu_seconds"] is None
    assert figures["thresholding"]["decisions"] == {"differing": 3}
    assert bench.headline({"methods": []}) == {}


# --- the text mode: arguments and commands -----------------------------------------------------

def test_the_text_mode_writes_reuters_with_both_tfidf_settings_by_default(tmp_path):
    arguments = bench.parse_arguments(["--format", "text", "--output", str(tmp_path / "out"),
                                       "--venv", str(tmp_path / "venv")])
    assert arguments.format.config == "conf/libmultilabel_text.toml" and arguments.corpus is None
    assert arguments.reuters == bench.DEFAULT_REUTERS.resolve() and arguments.category_set == "R90"
    assert arguments.tfidf == ["default", "tutorial"] and arguments.documents is None
    chosen = bench.parse_arguments(["--format", "text", "--reuters", str(tmp_path), "--category-set", "R10",
                                    "--tfidf", "tutorial", "--output", str(tmp_path / "o")])
    assert (chosen.reuters, chosen.category_set, chosen.tfidf) == (tmp_path, "R10", ["tutorial"])
    synthetic = bench.parse_arguments(["--format", "text", "--documents", "500", "--output", str(tmp_path / "o")])
    assert (synthetic.documents, synthetic.reuters, synthetic.category_set) == (500, None, None)


@pytest.mark.parametrize(("argv", "message"), [
    (["--documents", "1000", "--category-set", "R10"], "--documents generates its own"),
    (["--tfidf", "default,default"], "expected distinct tf-idf settings"),
    (["--corpus", "C", "--category-set", "R10"], "--category-set chooses the labels written from --reuters"),
    (["--reuters", "MISSING"], "is not a directory: give the one holding Reuters-21578 files"),
])
def test_text_options_that_cannot_work_are_refused(tmp_path, capsys, argv, message):
    (tmp_path / "C").mkdir()
    argv = [str(tmp_path / a) if a in ("C", "MISSING") else a for a in argv]
    with pytest.raises(SystemExit) as exit_:
        bench.parse_arguments(["--format", "text", *argv, "--output", str(tmp_path / "out")])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--tfidf", "default"], ["--reuters", "."], ["--category-set", "R90"]])
def test_text_options_are_refused_for_libsvm_files(tmp_path, capsys, option):
    with pytest.raises(SystemExit):
        bench.parse_arguments([*option, "--output", str(tmp_path / "out")])
    assert "are for --format text" in capsys.readouterr().err


def test_a_text_corpus_may_be_compressed_but_each_file_once(tmp_path):
    text = bench.FORMATS["text"]
    packed = corpus(tmp_path / "packed", "train.txt.bz2", "test.txt.gz")
    assert bench.corpus_refusal(packed, text) is None
    assert bench.corpus_files(packed, text) == (packed / "train.txt.bz2", packed / "test.txt.gz")
    both = corpus(tmp_path / "both", "train.txt", "train.txt.gz", "test.txt")
    assert "holds train.txt, train.txt.gz: keep one form" in bench.corpus_refusal(both, text)
    assert "has no test.txt (plain or .gz, .bz2)" in bench.corpus_refusal(corpus(tmp_path / "half", "train.txt"), text)


def test_the_text_commands_carry_the_tfidf_setting_on_both_sides(tmp_path):
    method, tfidf = bench.METHODS["cost_sensitive"], bench.TFIDF["tutorial"]
    ours = bench.sparktc_command(tmp_path / "c", tmp_path / "run", method, tmp_path / "f.tsv", bench.FORMATS["text"],
                                 tfidf)
    assert ours[:4] == ["./spark-submit.sh", "jobs/pipeline.py", "--config", "conf/libmultilabel_text.toml"]
    sets = [ours[i + 1] for i, a in enumerate(ours) if a == "--set"]
    assert sets == [f"corpus.path={tmp_path / 'c'}", *tfidf.overrides, *method.overrides,
                    f"train.fold_file={tmp_path / 'f.tsv'}"]
    files = (tmp_path / "c" / "train.txt.gz", tmp_path / "c" / "test.txt")
    theirs = bench.peer_command(tmp_path / "venv", files, tmp_path / "r.json", tmp_path / "d.npz", method,
                                tmp_path / "f.tsv", tfidf, tmp_path / "v.txt")
    assert theirs[theirs.index("--format") + 1] == "txt" and theirs[theirs.index("--tfidf") + 1] == "tutorial"
    assert theirs[theirs.index("--vocabulary") + 1] == str(tmp_path / "v.txt")
    assert theirs[theirs.index("--train") + 1] == str(files[0])


# --- the text mode: the corpus -----------------------------------------------------------------

def document(doc_id: str, split: str | None, labels: tuple[str, ...], text: str) -> Document:
    return Document(doc_id=doc_id, split=split, labels=labels, text=text, tokens=None, source="reut2-000.sgm",
                    line=1)


def test_a_line_replaces_the_formats_separators_and_refuses_what_it_cannot_hold():
    assert corpus_module.libmultilabel_line("7", ["earn", "acq"], "TITLE\nBody\twith\r\ncuts") == \
        "7\tearn acq\tTITLE Body with  cuts\n"
    assert corpus_module.libmultilabel_line("8", [], "") == "8\t\t\n"
    for doc_id, labels in (("7", ["money fx"]), ("7", ["x\u00a0y"]), ("7 8", ["earn"]), ("", ["earn"])):
        with pytest.raises(ValueError, match="empty or holds white space"):
            corpus_module.libmultilabel_line(doc_id, labels, "text")


def test_the_corpus_keeps_the_sets_labels_and_every_document_as_libmultilabel_reads_it(tmp_path):
    documents = [document("1", "train", ("earn", "acq"), "Profit\tup\n"), document("2", "train", ("corn",), "Corn"),
                 document("3", "train", (), "no topic"), document("4", "test", ("acq", "gold"), "Bid"),
                 document("5", "test", ("corn",), "Maize")]
    record = corpus_module.write_corpus(documents, tmp_path / "out", "R90")
    # R(90): categories with a training and a test document, here acq and corn
    assert record["categories"] == 2
    train = "1\tacq\tProfit up \n2\tcorn\tCorn\n3\t\tno topic\n"
    assert (tmp_path / "out" / "train.txt").read_text() == train
    assert (tmp_path / "out" / "test.txt").read_text() == "4\tacq\tBid\n5\tcorn\tMaize\n"
    assert record["files"]["train.txt"] == {"documents": 3, "without_label": 1, "positives": 2,
                                            "texts_with_replacements": 1, "bytes": len(train)}
    assert json.loads((tmp_path / "out" / "corpus.json").read_text()) == record
    # LibMultiLabel's reader (libmultilabel.linear.data_utils._read_libmultilabel_format, 0.10.0)
    read = pd.read_csv(tmp_path / "out" / "train.txt", sep="\t", header=None, on_bad_lines="warn",
                       quoting=csv.QUOTE_NONE).fillna("").astype(str)
    assert read.values.tolist() == [["1", "acq", "Profit up "], ["2", "corn", "Corn"], ["3", "", "no topic"]]
    with pytest.raises(ValueError, match="expected one of R10, R90, R115"):
        corpus_module.write_corpus(documents, tmp_path / "other", "R91")


def test_the_modapte_documents_are_those_of_the_sgml_attributes(tmp_path):
    source = SHARED_DATA / "reuters21578" / "reut2-000.sgm.gz"
    (tmp_path / "reuters").mkdir()
    (tmp_path / "reuters" / source.name).symlink_to(source)
    (tmp_path / "reuters" / "README.txt").write_text("not a corpus file")
    documents = corpus_module.modapte_documents(tmp_path / "reuters")
    tags = re.findall(r'<REUTERS TOPICS="([A-Z]+)" LEWISSPLIT="([A-Z-]+)"[^>]*NEWID="(\d+)"',
                      gzip.decompress(source.read_bytes()).decode("latin-1"))
    expected = [(newid, split.lower()) for topics, split, newid in tags if topics == "YES" and split != "NOT-USED"]
    assert [(d.doc_id, d.split) for d in documents] == expected and len(expected) > 500


def test_the_synthetic_text_is_text_corpuss_documents_one_a_line(tmp_path):
    shape = TextShape(documents=60, words=40, labels=12, roots=1_000)
    record = corpus_module.write_synthetic(shape, tmp_path / "out")
    block = generate_block(TextModel(shape), shape, 0)  # 60 < one block's documents
    lines = {split: (tmp_path / "out" / name).read_text().split("\n")[:-1]
             for split, name in corpus_module.FILES.items()}
    separators = re.compile("[\t\n\r]")
    expected = {split: ["\t".join([str(i), " ".join(labels), separators.sub(" ", text)])
                        for i, s, labels, text in zip(block.ids, block.splits, block.labels, block.texts, strict=True)
                        if s == split] for split in corpus_module.FILES}
    assert any("\n" in text for text in block.texts)  # the generator writes paragraph breaks
    assert lines == expected and len(lines["train"]) == shape.train_documents
    assert record["files"]["test.txt"]["documents"] == 60 - shape.train_documents
    assert corpus_module.synthetic_is_complete(shape, tmp_path / "out")
    assert not corpus_module.synthetic_is_complete(dataclasses.replace(shape, documents=61), tmp_path / "out")
    with open(tmp_path / "out" / "test.txt", "a") as handle:
        handle.write("more\n")
    assert not corpus_module.synthetic_is_complete(shape, tmp_path / "out")


def test_a_damaged_collection_is_refused_naming_the_record(tmp_path):
    (tmp_path / "reut2-000.sgm").write_text('<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="1">\n<TEXT>cut')
    with pytest.raises(ValueError, match=r"1 record\(s\) .* cannot be read \(reut2-000.sgm:1 \(doc 1\)"):
        corpus_module.modapte_documents(tmp_path)
    with pytest.raises(ValueError, match="holds no Reuters-21578 files"):
        corpus_module.modapte_documents(tmp_path / "missing")


# --- the text mode: decisions, rows and vocabularies -------------------------------------------

def test_sparktcs_assignments_are_matched_to_libmultilabels_rows_by_id(tmp_path):
    table = pa.table({"doc_id": ["12", "7", "30"],
                      "predicted": pa.array([["acq", "earn"], None, ["corn"]], pa.list_(pa.string()))})
    (tmp_path / "predictions").mkdir()
    pq.write_table(table, tmp_path / "predictions" / "part-0.parquet")
    ours = bench.sparktc_assignments(tmp_path / "predictions")
    assert ours[0].tolist() == ["12", "12", "30"] and ours[1].tolist() == ["acq", "earn", "corn"]
    ids = np.array(["7", "30", "12"])  # LibMultiLabel's test rows
    theirs = (np.array([2, 1, 0]), np.array(["acq", "corn", "ship"]))
    # the pairs each side has, independently: (doc id, label)
    mine = set(zip(ours[0].tolist(), ours[1].tolist(), strict=True))
    peer = {(ids[row], label) for row, label in zip(theirs[0].tolist(), theirs[1].tolist(), strict=True)}
    differing = mine ^ peer
    assert bench.compare_named_decisions(ours, theirs, ids) == {
        "sparktc_positive": len(mine), "libmultilabel_positive": len(peer), "only_sparktc": len(mine - peer),
        "only_libmultilabel": len(peer - mine), "differing": len(differing),
        "documents": len({d for d, _ in differing}), "labels": len({c for _, c in differing})}
    assert bench.rows_of(np.array(["30", "7", "30"]), ids).tolist() == [1, 0, 1]


def test_ids_that_cannot_be_matched_stop_the_comparison():
    with pytest.raises(HarnessError, match=r"holds 1 id\(s\) more than once \(7\)"):
        bench.rows_of(np.array(["7"]), np.array(["7", "8", "7"]))
    with pytest.raises(HarnessError, match=r"2 document\(s\) LibMultiLabel did not read as test documents \(007, 9\)"):
        bench.rows_of(np.array(["007", "8", "9"]), np.array(["7", "8"]))
    with pytest.raises(HarnessError, match="did not read"):
        bench.rows_of(np.array(["1"]), np.array([], dtype=str))


def test_two_column_rows_are_lines_only_when_every_line_was_read(tmp_path):
    (tmp_path / "train.txt").write_text("a\tx\nb\ty")  # no newline at the end: 2 lines
    with gzip.open(tmp_path / "test.txt.gz", "wt") as handle:
        handle.write("a\tx\n\nb\ty\n")
    with bz2.open(tmp_path / "t.txt.bz2", "wt") as handle:
        handle.write("a\tx\n" * 3)
    assert [bench.line_count(tmp_path / n) for n in ("train.txt", "test.txt.gz", "t.txt.bz2")] == [2, 3, 3]
    files = (tmp_path / "train.txt", tmp_path / "test.txt.gz")
    assert bench.row_refusal(files, {"train_documents": 2, "test_documents": 2, "columns": [3, 3]}) is None
    assert "has 2 columns and 3 lines, of which LibMultiLabel read 2 rows" in bench.row_refusal(
        files, {"train_documents": 2, "test_documents": 2, "columns": [2, 2]})
    assert bench.row_refusal(files, {"train_documents": 2, "test_documents": 3, "columns": [2, 2]}) is None


def test_vocabularies_are_compared_term_by_term(tmp_path):
    (tmp_path / "v.txt").write_text("bank of\nrate\nzeta\n")
    theirs = bench.read_terms(tmp_path / "v.txt")
    assert theirs == ["bank of", "rate", "zeta"]
    assert bench.compare_vocabularies(["rate", "alpha", "bank of", "beta"], theirs, examples=1) == {
        "sparktc": 4, "libmultilabel": 3, "common": 2, "only_sparktc": 2, "only_libmultilabel": 1,
        "only_sparktc_examples": ["alpha"], "only_libmultilabel_examples": ["zeta"]}


def test_the_text_table_adds_the_tfidf_setting_and_the_vocabularies():
    runs = []
    for tfidf in ("default", "tutorial"):
        record = method_record("1vsrest", 0)
        overrides = list(bench.TFIDF[tfidf].overrides)
        vocabulary = bench.compare_vocabularies(["a", "b", "c"], ["a", "b", "d", "e"] if tfidf == "tutorial" else
                                                ["a", "b", "c"])
        runs.append({**record, "run": f"{tfidf}-1vsrest", "tfidf": tfidf, "overrides": overrides,
                     "vocabulary": vocabulary})
    result = {"settings": {"format": "text", "corpus": "/tmp/r90", "documents_note": "Reuters-21578 ModApte",
                           "tfidf": ["default", "tutorial"], "masters": ["local[*,4]"]},
              "venv": {"path": "/v", "versions": {"libmultilabel": "0.10.0"}},
              "machine": {"cores": 2, "memory_gb": 23.5, "cpu_model": "x", "python": "3.11.7", "java": "17",
                          "pyspark": "4.3.0"},
              "command": "cmd", "methods": runs}
    markdown = bench.render(result)
    assert markdown.startswith("# LibMultiLabel beside sparktc on the same LibMultiLabel-format text files")
    assert "| tf-idf / method (LibMultiLabel / sparktc) |" in markdown
    assert "--config conf/libmultilabel_text.toml" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith(("| default / ", "| tutorial / "))]
    assert rows[0].startswith("| default / 1vsrest / conf/libmultilabel_text.toml |")
    assert rows[0].endswith("| 3 / 3 | 0 / 0 |")
    assert "select.top_k=20000" in rows[1] and rows[1].endswith("| 4 / 3 | 2 / 1 |")
    assert "- tutorial-1vsrest: only in LibMultiLabel 2 ('d', 'e', ...), only in sparktc 1 ('c', ...)" in markdown
    assert "- **tutorial**: LibMultiLabel linear.Preprocessor(tfidf_params={'max_features': 20000" in markdown
    assert markdown.count("- **1vsrest**:") == 1  # each method described once
