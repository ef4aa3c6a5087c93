"""LYRL2004 text processing (REFERENCE.md section 2) on hand-worked examples and the real SMART stop list."""

from __future__ import annotations

import random
import re
from unittest import mock

import pyarrow as pa
from conftest import shared_data

from sparktc.features.text import (
    Analyzer,
    TermFeatures,
    parse_stop_list,
    token_strings,
    tokenize,
    word_ngrams,
)


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


#: The recipe's punctuation, per token: the definition sparktc.features.text.clean_text computes on whole texts.
PUNCTUATION = re.compile(r"[\W_]+")


def reference_tokens(text: str, stop_words: frozenset[str] = frozenset()) -> list[str]:
    """The recipe token by token, as the analyzer computed it before it worked on whole texts: the definition."""
    tokens = (PUNCTUATION.sub("", raw) for raw in text.lower().split())
    return [token for token in tokens if token and not token.isdigit() and token not in stop_words]


def test_whole_text_punctuation_removal_equals_the_per_token_definition_on_every_code_point() -> None:
    # Each character inside a token, at its ends, alone, and beside ASCII punctuation and white space.
    for start in range(0, 0x110000, 65536):
        text = " ".join(f"a{c}b {c} _{c}-1" for c in map(chr, range(start, start + 65536)))
        assert tokenize(text) == reference_tokens(text), hex(start)


def test_whole_texts_equal_the_definition_on_random_mixtures() -> None:
    rng = random.Random(7)
    alphabet = ("abcXYZ019_-.,'\"()$%&/\\ \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000"
                "\u00e9\u00c9\u0130\u00df\u2019\u2014\u201c\u00b2\u0663\u00bd\u0301\ud800\U0001f600\u4e2d")
    stops = frozenset({"the", "a", "ab"})
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        assert tokenize(text, stops) == reference_tokens(text, stops), repr(text)
        analyzer = Analyzer(stops, "porter")
        expected = [analyzer._stemmer.stemWords(reference_tokens(text, stops))]
        assert analyzer.analyze([text]) == expected and analyzer.joined([text]) == [" ".join(expected[0])]


def test_joined_is_the_stored_token_string_of_analyze() -> None:
    texts = ["The U.S. Treasury's 1987 bill-rate rose", "", "   ", "caf\u00e9's \u2019quotes\u2019 runners", "42 7"]
    analyzer = Analyzer(frozenset({"the", "us"}), "porter")
    assert analyzer.joined(texts) == [" ".join(tokens) for tokens in Analyzer(frozenset({"the", "us"})).analyze(texts)]
    assert analyzer.joined(texts) == ["treasuri billrat rose", "", "", "caf\u00e9 quot runner", ""]


def test_ngrams_join_adjacent_stems_after_stop_words_and_stemming() -> None:
    analyzer = Analyzer(frozenset({"of", "the"}), "porter")
    [stems] = analyzer.analyze(["Bank of England raises the rates"])
    assert stems == ["bank", "england", "rais", "rate"]
    assert word_ngrams(stems, 2) == ["bank_england", "england_rais", "rais_rate"]
    assert word_ngrams(stems, 3) == ["bank_england", "england_rais", "rais_rate", "bank_england_rais",
                                     "england_rais_rate"]
    assert word_ngrams(["oil"], 3) == [] and word_ngrams([], 2) == [] and word_ngrams(stems, 1) == []
    assert word_ngrams(["oil", "price"], 3, " ") == ["oil price"]


def test_term_features_count_the_title_apart() -> None:
    text, title = ["oil", "price", "rise", "crude"], ["oil", "price"]
    assert TermFeatures().terms(text, title) == text
    # The text holds the title once: a weight of 3 adds it twice.
    assert sorted(TermFeatures(title_weight=3).terms(text, title)) == sorted(text + ["oil", "price"] * 2)
    assert TermFeatures(title_terms=True).terms(text, title) == text + ["title:oil", "title:price"]
    assert sorted(TermFeatures(title_weight=2, title_terms=True).terms(text, title)) == sorted(
        text + ["title:oil", "title:price"] * 2)
    assert TermFeatures(ngrams=2).terms(text, title) == text + ["oil_price", "price_rise", "rise_crude"]
    assert TermFeatures(ngrams=2, title_terms=True).terms(text, title) == text + [
        "oil_price", "price_rise", "rise_crude", "title:oil", "title:price", "title:oil_price"]
    assert TermFeatures(ngrams=2, title_weight=2).terms(text, []) == text + ["oil_price", "price_rise", "rise_crude"]


def test_token_strings_with_titles_and_bigrams() -> None:
    analyzer = Analyzer(frozenset({"the", "of"}), "porter")
    texts = pa.array(["OIL PRICES\nThe price of crude oil rose.", None, "No title here"])
    titles = pa.array(["OIL PRICES", None, None])
    assert token_strings(analyzer, texts, titles).to_pylist() == ["oil price price crude oil rose", "", "no titl here"]
    features = TermFeatures(ngrams=2, title_terms=True)
    assert token_strings(analyzer, texts, titles, features).to_pylist() == [
        "oil price price crude oil rose oil_price price_price price_crude crude_oil oil_rose "
        "title:oil title:price title:oil_price", "", "no titl here no_titl titl_here"]
    assert token_strings(analyzer, texts, titles, TermFeatures(title_weight=2)).to_pylist() == [
        "oil price price crude oil rose oil price", "", "no titl here"]
