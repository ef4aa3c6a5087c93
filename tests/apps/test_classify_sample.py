"""The sample input for classify that ships in ``examples/classify-sample.jsonl``: ten short news-like texts (JSON
Lines, ``id`` and ``text``), classified with the model bundle of the suite's Reuters-21578 R(90) run as the guide
shows it (``jobs/classify.py --input examples/classify-sample.jsonl``, here in-process). Every text gets its
decisions and its best categories, and the counts add up: nothing is rejected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from conftest import REPO

from sparktc.apps.classify import SHOWN_DOCUMENTS, classify
from sparktc.experiment.bundle import load_bundle

SAMPLE = REPO / "examples" / "classify-sample.jsonl"
TOP_K = 5
#: The R(90) category each text was written about: it is among the text's best five.
ABOUT = {"sample-01": "earn", "sample-02": "acq", "sample-03": "crude", "sample-04": "wheat", "sample-05": "money-fx",
         "sample-06": "interest", "sample-07": "trade", "sample-08": "coffee", "sample-09": "gold",
         "sample-10": "ship"}


def test_the_sample_is_json_lines_of_an_id_and_a_text():
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert [set(record) for record in records] == [{"id", "text"}] * len(records)
    assert [record["id"] for record in records] == sorted(ABOUT)


def test_every_sample_text_gets_decisions_and_the_counts_add_up(spark, reuters21578_run, tmp_path, capsys):
    bundle = load_bundle(spark, str(Path(reuters21578_run[0]) / "model"))
    capsys.readouterr()
    report = classify(spark, bundle, str(SAMPLE), str(tmp_path / "classified"), output_format="jsonl", top_k=TOP_K,
                      shown=SHOWN_DOCUMENTS)
    printed = capsys.readouterr().out.splitlines()
    assert report.rows_in == report.rows_out + sum(report.set_aside.values()) == len(ABOUT)
    assert report.rows_out == len(ABOUT) and not report.set_aside

    def read(name: str) -> pd.DataFrame:
        parts = sorted((tmp_path / "classified" / name).glob("part-*.json"))
        return pd.concat([pd.read_json(part, lines=True, dtype={"doc_id": str}) for part in parts] or [pd.DataFrame()])

    predictions = read("predictions").set_index("doc_id").sort_index()
    assert read("rejects").empty
    assert list(predictions.index) == sorted(ABOUT)
    categories = set(bundle.categories["category"])
    for doc_id, row in predictions.iterrows():
        assert row["predicted"], f"{doc_id} is assigned no category"
        assert set(row["predicted"]) <= categories and len(row["predicted_names"]) == len(row["predicted"])
        assert len(row["top_categories"]) == len(row["top_scores"]) == TOP_K
        assert list(row["top_scores"]) == sorted(row["top_scores"], reverse=True)
        assert ABOUT[doc_id] in row["top_categories"], (doc_id, row["top_categories"])
    # The summary, read back from the JSON Lines written: every text's row and the documents of each category.
    start = printed.index("sparktc: 10 documents classified; the first 10 by doc id, with the categories assigned "
                          f"(and their scores when among the {TOP_K} best):")
    rows = [line.split(None, 1) for line in printed[start + 2:start + 12]]
    assert [(doc_id, sorted(shown.split()[0] for shown in categories.split(", "))) for doc_id, categories in rows] == [
        (doc_id, sorted(predictions.at[doc_id, "predicted"])) for doc_id in sorted(ABOUT)]
    assigned = predictions["predicted"].explode().value_counts()
    start = printed.index(f"sparktc: documents by category ({len(assigned)} categories, {assigned.sum()} assignments; "
                          "0 documents assigned none):")
    listed = printed[start + 2:start + 2 + len(assigned)]
    counts = {code: int(count) for code, count in (line.split() for line in listed)}
    assert counts == assigned.to_dict()
