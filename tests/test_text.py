"""LYRL2004 text processing (REFERENCE.md section 2) on hand-worked examples and the real SMART stop list."""

from __future__ import annotations

from unittest import mock

from conftest import shared_data

from sparktc.features.text import Analyzer, parse_stop_list, tokenize


def test_tokenize_recipe() -> None:
    text = "The U.S. Treasury's 1987 bill-rate rose 5.93 PCT, to\tRECORD levels; 1st quarter_end"
    assert tokenize(text) == ["the", "us", "treasurys", "billrate", "rose", "pct", "to", "record", "levels", "1st",
                              "quarterend"]
    assert tokenize(text, frozenset({"the", "us", "to"})) == ["treasurys", "billrate", "rose", "pct", "record",
                                                              "levels", "1st", "quarterend"]


def test_smart_stop_list() -> None:
    words = parse_stop_list(shared_data("stopwords", "smart_english.stop").read_text())
    assert len(words) == 570 and {"would", "the", "a", "zero"} <= words and "bank" not in words


def test_porter_stems_and_each_distinct_token_is_stemmed_once() -> None:
    analyzer = Analyzer(frozenset({"the"}), "porter")
    stem = mock.Mock(side_effect=lambda words: [w[:4] for w in words])
    analyzer._stemmer = mock.Mock(stemWords=stem)
    first = analyzer.analyze(["the running runner running", "runner ponies"])
    second = analyzer.analyze(["ponies running"])
    assert first == [["runn", "runn", "runn"], ["runn", "poni"]] and second == [["poni", "runn"]]
    assert stem.call_count == 1
    assert sorted(stem.call_args.args[0]) == ["ponies", "runner", "running"]
    assert Analyzer(frozenset(), "porter").analyze(["generalizations caresses ponies"]) == [["gener", "caress", "poni"]]


def test_no_stemming_keeps_tokens() -> None:
    assert Analyzer(frozenset(), "none").analyze(["Running PONIES"]) == [["running", "ponies"]]
