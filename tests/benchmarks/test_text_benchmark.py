"""The raw-text benchmark's parts (benchmarks/text_corpus.py, benchmarks/text_peer.py): a deterministic corpus that
sparktc's JSON Lines reader accepts whole, a peer whose tokens are sparktc's Analyzer's, and the figures
benchmarks/text_scale.py records.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from conftest import shared_data

from benchmarks import harness_text_corpus, text_peer, text_scale
from sparktc.corpora.files import read_lines
from sparktc.corpora.jsonl import parse_jsonl
from sparktc.corpora.records import Document
from sparktc.features.text import Analyzer, parse_stop_list

SHAPE = harness_text_corpus.TextShape(documents=5_000, words=40)


def test_the_corpus_depends_on_its_shape_only_and_sparktc_reads_every_line(tmp_path: Path) -> None:
    one = harness_text_corpus.write_corpus(tmp_path / "one", SHAPE, files=1)
    three = harness_text_corpus.write_corpus(tmp_path / "three", SHAPE, files=3)
    assert [f["documents"] for f in three["files"]] == [2_000, 2_000, 1_000]  # whole blocks of 2,000
    lines = b"".join((tmp_path / "three" / f["file"]).read_bytes() for f in three["files"])
    assert lines == (tmp_path / "one" / "part-000.jsonl").read_bytes()
    assert harness_text_corpus.corpus_is_complete(tmp_path / "three", SHAPE, 3, False)
    assert not harness_text_corpus.corpus_is_complete(tmp_path / "three", SHAPE, 2, False)
    # corpus.json holds what the shape and the files decide, not the time it took: the same corpus written again has
    # the same files, so the same corpus digest (sparktc's covers every file of the directory)
    assert one["seconds"] >= 0 and json.loads((tmp_path / "one" / "corpus.json").read_text()) == {
        key: value for key, value in one.items() if key != "seconds"}
    records = list(parse_jsonl(read_lines(lines, "c.jsonl"), "c.jsonl"))
    assert all(isinstance(r, Document) for r in records) and len(records) == SHAPE.documents
    assert sum(r.split == "train" for r in records) == SHAPE.train_documents == 144
    assert {label for r in records for label in r.labels} <= set(one["categories"])
    text = " ".join(r.text for r in records)
    assert any(c.isupper() for c in text) and "," in text and "\u00e9" in text and "\n\n" in text


def test_the_peer_tokenizes_as_sparktcs_analyzer(tmp_path: Path) -> None:
    harness_text_corpus.write_corpus(tmp_path, SHAPE, files=2)
    stops = parse_stop_list(shared_data("stopwords", "smart_english.stop").read_text())
    texts = [json.loads(line)["text"] for f in sorted(tmp_path.glob("*.jsonl")) for line in f.open()]
    texts += ["The U.S. Treasury's 1987 bill-rate rose 5.93 PCT", "caf\u00e9\u2019s \u201cquoted\u201d_text \u00a0x"]
    peer = text_peer.Tokenizer(stops)
    ids, lengths = peer.ids(texts)
    stems = np.array(peer.stems, dtype=object)[ids].tolist()
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    assert [" ".join(stems[bounds[d]:bounds[d + 1]]) for d in range(len(texts))] == Analyzer(stops).joined(texts)


def test_the_records_figures_are_both_sides_medians_f1_and_ratios() -> None:
    steps = dict.fromkeys(text_scale.PEER_STEPS, 1.0)
    stage = {"ingest": {"wall_seconds": 1.0, "cpu_seconds": 2.0}}
    ours = [{"wall_seconds": wall, "cpu_seconds": 2 * wall, "stages": stage, "peak_rss_mb": {"total": 1000.0 + wall},
             "metrics": {"micro_f1": 0.7, "macro_f1": 0.5}}
            for wall in (10.0, 14.0, 12.0)]
    theirs = [{"wall_seconds": wall, "cpu_seconds": wall, "peak_rss_mb": {"total": 500.0},
               "result": {"steps": steps, "steps_cpu": steps, "micro_f1": 0.7, "macro_f1": 0.49}}
              for wall in (6.0, 5.0, 7.0)]
    result = {"summary": text_scale.summary(ours, theirs), "tokens": {"differing": 2}}
    assert text_scale.headline(result) == {
        "sparktc": {"seconds": 12.0, "cpu_seconds": 24.0, "peak_memory_bytes": 1014 * 2**20, "micro_f1": 0.7,
                    "macro_f1": 0.5},
        "peer": {"seconds": 6.0, "cpu_seconds": 6.0, "peak_memory_bytes": 500 * 2**20, "micro_f1": 0.7,
                 "macro_f1": 0.49},
        "sparktc_over_peer": {"cpu": 4.0, "wall": 2.0}, "tokens": {"differing": 2}}
    assert text_scale.headline({"error": "stopped early"}) == {}
