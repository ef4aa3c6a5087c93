"""One corpus, one answer, in every labelled format that can carry it: the same documents written as JSON Lines, as
LibMultiLabel text (an id column, the test file gzipped) and, as the LibMultiLabel text run's weighted vectors
exported by jobs/export_libsvm.py, as multi-label LIBSVM, run through the pipeline with the default settings.

The corpus has documents whose text is empty or white space only, in training and in test, with labels: every
format keeps them (LibMultiLabel's reader keeps them too: pandas reads an empty field as ""), so each run counts
the same test documents, and each such test document, without a term, is scored by the models' biases alone (its
labels missed unless a bias passes the threshold). Checked against the corpus as written: the test documents
counted, the empty ones among the predictions with what their biases assign; and across the runs: micro- and
macro-F1 and every category's contingency table.

Not carried: the LYRL2004 token files (a `.W` without tokens is an empty record there, rejected, and their
categories are RCV1's) and the Reuters-21578 SGML (its category sets are Reuters' own).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import invented_words

from sparktc.apps.export import export_libsvm
from sparktc.apps.pipeline import run as run_stages
from sparktc.experiment.config import load_config
from sparktc.runtime.outputs import claim

LABELS = ["acq", "crude", "earn", "grain"]
#: Documents without words, with their split and labels (ids as written in every format).
EMPTY = {"r3": ("train", ["earn"], ""), "r8": ("train", ["acq", "grain"], "  "),
         "s2": ("test", ["crude"], ""), "s5": ("test", ["earn", "grain"], " \u3000 ")}
N_TRAIN, N_TEST = 60, 30


def documents() -> list[dict]:
    """60 training and 30 test documents: each label owns a few words, a document draws from its labels' and from
    noise; one training and one test document have no label; :data:`EMPTY` have no words.
    """
    rng = np.random.default_rng(38)
    words = invented_words(rng, 60)
    owned = {label: words[6 * k:6 * k + 6] for k, label in enumerate(LABELS)}
    noise = words[6 * len(LABELS):]
    made = []
    for split, prefix, n in (("train", "r", N_TRAIN), ("test", "s", N_TEST)):
        for d in range(n):
            doc_id = f"{prefix}{d}"
            if doc_id in EMPTY:
                _, labels, text = EMPTY[doc_id]
            else:
                labels = [] if d == 11 else sorted(set(rng.choice(LABELS, size=rng.integers(1, 3))))
                chosen = [w for label in labels for w in rng.choice(owned[label], size=4)]
                chosen += list(rng.choice(noise, size=rng.integers(3, 8)))
                text = " ".join(str(w) for w in rng.permutation(chosen)) + "."
            made.append({"id": doc_id, "text": text, "labels": list(labels), "split": split})
    return made


def write_jsonl(directory: Path) -> None:
    with open(directory / "corpus.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(document) + "\n" for document in documents())


def write_libmultilabel_text(directory: Path) -> None:
    for split, name in (("train", "train.txt"), ("test", "test.txt.gz")):
        lines = "".join(f"{d['id']}\t{' '.join(d['labels'])}\t{d['text']}\n" for d in documents()
                        if d["split"] == split).encode()
        (directory / name).write_bytes(gzip.compress(lines, mtime=0) if name.endswith(".gz") else lines)


def pipeline(spark, corpus: Path, output: Path, settings: list[str]) -> Path:
    run_stages(spark, load_config(None, [f"corpus.path={corpus}", *settings]), str(output))
    return output


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory) -> dict[str, Path]:
    """The corpus through the pipeline in each format, by format: the runs' outputs."""
    root = tmp_path_factory.mktemp("every_format")
    made = {}
    for fmt, write in (("jsonl", write_jsonl), ("libmultilabel_text", write_libmultilabel_text)):
        corpus = root / f"{fmt}_corpus"
        corpus.mkdir()
        write(corpus)
        made[fmt] = pipeline(spark, corpus, root / fmt, [f"corpus.format={fmt}"])
    with claim(str(made["libmultilabel_text"]), "run"):
        export_libsvm(spark, str(made["libmultilabel_text"]), str(root / "libsvm_corpus"))
    made["libsvm"] = pipeline(spark, root / "libsvm_corpus", root / "libsvm",
                              ["corpus.format=libsvm", "weight.scheme=given"])
    return made


def metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text())


def contingency(run: Path, names: dict[str, str] | None = None) -> pd.DataFrame:
    """The run's contingency tables by category name (``names``: the LIBSVM export's numbers to the names)."""
    table = pd.read_parquet(run / "contingency")
    if names:
        table["category"] = table["category"].map(names)
    return table.set_index("category").sort_index()[["test_positives", "tp", "fp", "fn", "tn"]]


def test_every_format_counts_every_document_the_empty_ones_too(runs):
    for fmt, run in runs.items():
        ingest = json.loads((run / "manifests" / "ingest.json").read_text())
        assert ingest["rows_in"] == ingest["rows_out"] == N_TRAIN + N_TEST, fmt  # nothing rejected
        assert metrics(run)["test_documents"] == N_TEST, fmt
    predictions = pd.read_parquet(runs["jsonl"] / "predictions").set_index("doc_id")
    assert len(predictions) == N_TEST and {"s2", "s5"} <= set(predictions.index)


def test_a_test_document_without_words_gets_what_the_biases_alone_assign(runs):
    """No term: every score is the model's bias, so it gets the categories whose bias exceeds the threshold, and its
    other labels count as missed (false negatives).
    """
    for fmt in ("jsonl", "libmultilabel_text"):
        models = pd.read_parquet(runs[fmt] / "models").set_index("category")
        by_bias = sorted(models.index[models["bias"] > models["threshold"]])
        predictions = pd.read_parquet(runs[fmt] / "predictions").set_index("doc_id")
        for doc_id in ("s2", "s5"):
            assert sorted(predictions.loc[doc_id, "predicted"]) == by_bias, (fmt, doc_id)
            assert sorted(predictions.loc[doc_id, "labels"]) == EMPTY[doc_id][1], (fmt, doc_id)


def test_every_format_gives_the_same_metrics_and_contingency_tables(runs):
    names = json.loads((runs["libmultilabel_text"].parent / "libsvm_corpus" / "export.json").read_text())["labels"]
    expected = contingency(runs["jsonl"])
    assert sorted(expected.index) == LABELS
    assert expected["test_positives"].sum() == sum(len(d["labels"]) for d in documents() if d["split"] == "test")
    assert 0 < metrics(runs["jsonl"])["micro_f1"] < 1  # the empty test documents' labels are missed
    for fmt, run in runs.items():
        got = metrics(run)
        for key in ("micro_f1", "macro_f1", "micro_precision", "micro_recall"):
            assert got[key] == metrics(runs["jsonl"])[key], (fmt, key)
        pd.testing.assert_frame_equal(contingency(run, names if fmt == "libsvm" else None), expected, obj=fmt)
