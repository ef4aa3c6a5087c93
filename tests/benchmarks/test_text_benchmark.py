"""The raw-text benchmark's parts (benchmarks/text_corpus.py, benchmarks/text_peer.py): a deterministic corpus that
sparktc's JSON Lines reader accepts whole, and a peer whose tokens are sparktc's Analyzer's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from conftest import shared_data

from benchmarks import text_corpus, text_peer
from sparktc.corpora.files import read_lines
from sparktc.corpora.jsonl import parse_jsonl
from sparktc.corpora.records import Document
from sparktc.features.text import Analyzer, parse_stop_list

SHAPE = text_corpus.TextShape(documents=5_000, words=40)


def test_the_corpus_depends_on_its_shape_only_and_sparktc_reads_every_line(tmp_path: Path) -> None:
    one = text_corpus.write_corpus(tmp_path / "one", SHAPE, files=1)
    three = text_corpus.write_corpus(tmp_path / "three", SHAPE, files=3)
    assert [f["documents"] for f in three["files"]] == [2_000, 2_000, 1_000]  # whole blocks of 2,000
    lines = b"".join((tmp_path / "three" / f["file"]).read_bytes() for f in three["files"])
    assert lines == (tmp_path / "one" / "part-000.jsonl").read_bytes()
    assert text_corpus.corpus_is_complete(tmp_path / "three", SHAPE, 3, False)
    assert not text_corpus.corpus_is_complete(tmp_path / "three", SHAPE, 2, False)
    records = list(parse_jsonl(read_lines(lines, "c.jsonl"), "c.jsonl"))
    assert all(isinstance(r, Document) for r in records) and len(records) == SHAPE.documents
    assert sum(r.split == "train" for r in records) == SHAPE.train_documents == 144
    assert {label for r in records for label in r.labels} <= set(one["categories"])
    text = " ".join(r.text for r in records)
    assert any(c.isupper() for c in text) and "," in text and "\u00e9" in text and "\n\n" in text


def test_the_peer_tokenizes_as_sparktcs_analyzer(tmp_path: Path) -> None:
    text_corpus.write_corpus(tmp_path, SHAPE, files=2)
    stops = parse_stop_list(shared_data("stopwords", "smart_english.stop").read_text())
    texts = [json.loads(line)["text"] for f in sorted(tmp_path.glob("*.jsonl")) for line in f.open()]
    texts += ["The U.S. Treasury's 1987 bill-rate rose 5.93 PCT", "caf\u00e9\u2019s \u201cquoted\u201d_text \u00a0x"]
    peer = text_peer.Tokenizer(stops)
    ids, lengths = peer.ids(texts)
    stems = np.array(peer.stems, dtype=object)[ids].tolist()
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    assert [" ".join(stems[bounds[d]:bounds[d + 1]]) for d in range(len(texts))] == Analyzer(stops).joined(texts)
