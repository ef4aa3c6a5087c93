"""scikit-learn's (and LibMultiLabel's) text features without Spark: ``tokenize.analyzer = "sklearn"``,
``tokenize.ngrams`` up to 3, ``select.min_df`` and the frequency ranking (``rank.score = "frequency"``) against
scikit-learn itself.

* the analyzer's terms equal ``TfidfVectorizer(...).build_analyzer()``'s on texts of Unicode, digits, underscores and
  punctuation, with n-grams up to 3 and a stop list; with the Porter stemmer, the stems of its tokens;
* the whole weighted matrix of a small corpus (the stage's pure functions: tokens, counts, vocabulary, its cut,
  factors, weights) equals ``TfidfVectorizer(min_df=..., max_features=..., ngram_range=...)`` fitted on the training
  texts and applied to the test texts: the same vocabulary in the same order, values to 1e-12 (the stored float32
  values are those rounded);
* the vocabulary's cut: min_df before the count, ties at the cut by term id, the reduction factor's share;
* the settings that mean nothing together are refused before Spark starts, and the weight stage depends on the
  settings that cut its vocabulary.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
import Stemmer
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from sparktc.errors import ConfigError
from sparktc.experiment.config import load_config
from sparktc.features.term_selection import vocabulary_terms
from sparktc.features.text import ANALYZERS, STORED_SPACE, Analyzer, TermFeatures, token_strings
from sparktc.features.weighting import (
    term_factors,
    term_weights,
    token_counts,
    token_term_ids,
    vocabulary_of,
    weighted_rows,
)
from sparktc.runtime.runner import section_settings
from sparktc.stages import weight as weight_stage

#: Words that exercise scikit-learn's token pattern: Unicode letters and digits, underscores, one-character words
#: (no token), punctuation inside and around words, and upper case that lower-cases to several characters.
WORDS = ["Café", "naïve", "ÉCOLE", "Straße", "İstanbul", "中文字", "Ελλάδα", "москва", "x²", "٣٤٥", "½",
         "2024", "3.5", "x1", "snake_case", "__init__", "_", "a", "I", "U.S.", "don't", "e-mail", "$100", "50%",
         "oil", "oil", "price", "prices", "rose", "the", "of", "bank", "England", "rates", "cafe\u0301", "A_1",
         "(oil)", "«price»", "—", "...", "o'neil", "x_", "__", "ß", "ǅemal", "Ⅻ", "k8s"]
SEPARATORS = [" ", " ", " ", "\t", "\n", ", ", ". ", "  ", "\u00a0", "\u3000"]


def text_of(rng: random.Random, length: int) -> str:
    """A text of ``length`` words drawn from :data:`WORDS`, separated by white space and punctuation."""
    return "".join(rng.choice(WORDS) + rng.choice(SEPARATORS) for _ in range(length))


def sklearn_terms(analyzer: Analyzer, texts: list[str], ngrams: int) -> list[list[str]]:
    """Each text's terms as sparktc stores them (:func:`token_strings`), named as the vocabulary names them."""
    features = TermFeatures(ngrams, joiner=ANALYZERS["sklearn"].joiner)
    stored = token_strings(analyzer, pa.array(texts), None, features).to_pylist()
    return [[term.replace(STORED_SPACE, " ") for term in tokens.split(" ")] if tokens else [] for tokens in stored]


@pytest.mark.parametrize("ngrams", [1, 2, 3])
def test_the_sklearn_analyzer_equals_scikit_learns(ngrams) -> None:
    rng = random.Random(29)
    texts = [text_of(rng, rng.randrange(12)) for _ in range(300)] + ["", "   ", "a I _", "oil"]
    stop_words = ["the", "of", "oil", "2024"]
    for stops in ([], stop_words):
        expected = TfidfVectorizer(ngram_range=(1, ngrams), stop_words=stops or None).build_analyzer()
        got = sklearn_terms(Analyzer(frozenset(stops), "none", "sklearn"), texts, ngrams)
        for text, terms in zip(texts, got):
            assert terms == expected(text), repr(text)
    assert Analyzer(frozenset(), "none", "sklearn").analyze(["Shares of X_Corp rose 12% to $3.50 (٣٤) _ a"]) == [
        ["shares", "of", "x_corp", "rose", "12", "to", "50", "٣٤"]]


def test_the_sklearn_analyzer_equals_scikit_learns_on_every_code_point() -> None:
    # Each character inside a token, doubled between spaces, beside the underscore, punctuation and a digit.
    expected = TfidfVectorizer().build_analyzer()
    analyzer = Analyzer(frozenset(), "none", "sklearn")
    for start in range(0, 0x110000, 65536):
        text = " ".join(f"a{c}b {c}{c} _{c}-1" for c in map(chr, range(start, start + 65536)))
        assert analyzer.analyze([text]) == [expected(text)], hex(start)


def test_the_sklearn_analyzer_stems_scikit_learns_tokens_when_told() -> None:
    rng = random.Random(3)
    texts = [text_of(rng, rng.randrange(12)) for _ in range(200)]
    stemmer = Stemmer.Stemmer("porter")
    tokens = TfidfVectorizer(stop_words=["the"]).build_analyzer()
    assert Analyzer(frozenset({"the"}), "porter", "sklearn").analyze(texts) == [
        stemmer.stemWords(tokens(text)) for text in texts]


def test_an_unknown_analyzer_is_refused() -> None:
    with pytest.raises(ValueError, match="analyzer must be one of lyrl2004, sklearn, got 'nltk'"):
        Analyzer(frozenset(), "none", "nltk")


# --- the whole weighted matrix -------------------------------------------------------------------------------------


def corpus(seed: int) -> tuple[list[str], list[str]]:
    """(training texts, test texts): words repeated at different rates so that counts differ, an empty document in
    each split, and test words never seen in training.
    """
    rng = random.Random(seed)
    tokens = TfidfVectorizer().build_analyzer()
    common = [w for w in WORDS if len(tokens(w)) == 1]
    train = ["".join(rng.choice(common[:1 + rng.randrange(len(common))]) + rng.choice(SEPARATORS)
                     for _ in range(rng.randrange(4, 40))) for _ in range(60)] + [""]
    test = [text_of(rng, rng.randrange(30)) + " unseenword" for _ in range(20)] + ["", "unseenword only"]
    return train, test


def strict_cut(train: list[str], min_df: int, ngrams: int) -> int:
    """A max_features at which scikit-learn's ranking has no tie across the cut (its argsort is not stable): the
    largest K up to half the min_df vocabulary whose K-th total count exceeds the next one.
    """
    counts = CountVectorizer(min_df=min_df, ngram_range=(1, ngrams)).fit_transform(train)
    totals = np.sort(np.asarray(counts.sum(axis=0)).ravel())[::-1]
    return max(k for k in range(1, len(totals) // 2 + 1) if totals[k - 1] > totals[k])


def sparktc_matrices(train: list[str], test: list[str], overrides: list[str]):
    """The vocabulary terms and the float64 and stored weights of the training and test texts, through the weight
    stage's pure functions under the settings ``overrides``.
    """
    config = load_config(None, ["corpus.format=jsonl", "corpus.path=.", "weight.scheme=sklearn",
                                "tokenize.analyzer=sklearn", "tokenize.stemmer=none", *overrides])
    analyzer = Analyzer(frozenset(), config.tokenize.stemmer, config.tokenize.analyzer)
    tokens = [token_strings(analyzer, pa.array(texts), None, config.tokenize.features()) for texts in (train, test)]
    vocabulary = weight_stage.kept_vocabulary(config, vocabulary_of([token_counts(tokens[0])]))
    np.testing.assert_array_equal(vocabulary["term_id"].to_numpy(), np.arange(len(vocabulary)))
    terms = vocabulary["term"].combine_chunks()
    factors = term_factors("sklearn", vocabulary["df"].to_numpy(), len(train))
    found = []
    for stored in tokens:
        rows, term_ids = token_term_ids(stored, terms)
        offsets, indices, values, counts = term_weights(rows, term_ids, len(stored), factors, "sklearn")
        float32 = weighted_rows(rows, term_ids, len(stored), factors, "sklearn")
        np.testing.assert_array_equal(float32[2], values.astype(np.float32))  # stored: the same values rounded
        found.append(sparse.csr_matrix((values, indices, offsets), shape=(len(stored), len(terms))))
    return terms.to_pylist(), found


@pytest.mark.parametrize(("min_df", "ngrams", "cut"), [
    (1, 1, False),  # TfidfVectorizer(): LibMultiLabel's default
    (2, 2, False),
    (3, 3, True),  # LibMultiLabel's tutorial: min_df = 3, ngram_range = (1, 3), max_features
])
def test_the_weighted_matrix_equals_tfidf_vectorizers(min_df, ngrams, cut) -> None:
    train, test = corpus(min_df * 10 + ngrams)
    top_k = strict_cut(train, min_df, ngrams) if cut else 0
    vectorizer = TfidfVectorizer(min_df=min_df, max_features=top_k or None, ngram_range=(1, ngrams))
    expected = [vectorizer.fit_transform(train), vectorizer.transform(test)]
    overrides = [f"select.min_df={min_df}", f"tokenize.ngrams={ngrams}"]
    if cut:
        overrides += ["rank.score=frequency", f"select.top_k={top_k}"]
    terms, got = sparktc_matrices(train, test, overrides)
    assert terms == vectorizer.get_feature_names_out().tolist()
    assert any(" " in term for term in terms) == (ngrams > 1)
    for mine, theirs in zip(got, expected):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine.toarray(), theirs.toarray(), rtol=0, atol=1e-12)
    assert got[1][-1].nnz == 0 and got[0][-1].nnz == 0  # "unseenword only", and an empty training document


def test_a_reduction_factor_keeps_its_share_of_the_min_df_terms() -> None:
    train, test = corpus(5)
    n_terms = len(CountVectorizer(min_df=2).fit(train).vocabulary_)
    terms, _ = sparktc_matrices(train, test, ["select.min_df=2", "rank.score=frequency",
                                              "select.reduction_factor=0.5"])
    assert len(terms) == round(n_terms / 2 + 1e-9)


# --- the vocabulary's cut -----------------------------------------------------------------------------------------


def test_vocabulary_terms_apply_min_df_before_the_count_and_break_ties_by_term_id() -> None:
    df = np.array([1, 3, 2, 3, 2, 5, 2])
    frequency = np.array([50, 4, 4, 9, 4, 5, 4])
    assert vocabulary_terms(df, frequency).tolist() == list(range(7))
    assert vocabulary_terms(df, frequency, min_df=2).tolist() == [1, 2, 3, 4, 5, 6]  # term 0, 50 times: 1 document
    # 9, 5, then 4 four times (terms 1, 2, 4, 6): the smaller ids win the tie.
    assert vocabulary_terms(df, frequency, min_df=2, top_k=4).tolist() == [1, 2, 3, 5]
    assert vocabulary_terms(df, frequency, min_df=3, top_k=2).tolist() == [3, 5]
    assert vocabulary_terms(df, frequency, min_df=2, top_k=100).tolist() == [1, 2, 3, 4, 5, 6]
    assert vocabulary_terms(df, frequency, min_df=2, reduction_factor=0.5).tolist() == [1, 3, 5]
    assert vocabulary_terms(df, frequency, min_df=6).tolist() == []
    assert vocabulary_terms([], []).tolist() == []
    with pytest.raises(ValueError, match="min_df must be an integer >= 1"):
        vocabulary_terms(df, frequency, min_df=0)
    with pytest.raises(ValueError, match=r"one value per term; got shapes \(7,\), \(6,\)"):
        vocabulary_terms(df, frequency[:6])


# --- settings --------------------------------------------------------------------------------------------------------

JSONL = ["corpus.format=jsonl", "corpus.path=."]


def refused(overrides: list[str]) -> str:
    with pytest.raises(ConfigError) as error:
        load_config(None, overrides)
    return str(error.value)


def test_libmultilabels_settings_load() -> None:
    config = load_config(None, [*JSONL, "tokenize.analyzer=sklearn", "tokenize.stemmer=none", "tokenize.ngrams=3",
                                "weight.scheme=sklearn", "select.min_df=3", "rank.score=frequency",
                                "select.top_k=20000"])
    assert config.tokenize.features() == TermFeatures(3, joiner=STORED_SPACE)
    assert (config.select.min_df, config.select.top_k, config.rank.score) == (3, 20000, "frequency")


def test_settings_that_mean_nothing_with_the_frequency_ranking_are_refused() -> None:
    frequency = [*JSONL, "rank.score=frequency"]
    assert refused([*frequency, "rank.global_score=avg"]) == (
        "rank.global_score = 'avg' with rank.score = 'frequency': a term's frequency is one count over all the "
        "training documents, not a score per category to globalize; remove rank.global_score")
    assert refused([*frequency, "weight.scheme=supervised"]).startswith(
        "weight.scheme = 'supervised' with rank.score = 'frequency': supervised weights are a term-selection score "
        "counted per category")
    assert refused([*frequency, "tune.terms=[100, 200]"]).startswith(
        "tune.terms = [100, 200] with rank.score = 'frequency': the most frequent terms are the vocabulary")
    assert refused(["corpus.format=libsvm", "corpus.path=.", "weight.scheme=given", "rank.score=frequency"]) == (
        "rank.score = 'frequency' with corpus.format = 'libsvm': its features are given values, not counted "
        "occurrences; rank by one of chi2, ig, gr")
    assert refused([*JSONL, "select.min_df=0"]).startswith("select.min_df")
    assert refused([*JSONL, "tokenize.analyzer=nltk"]).startswith("tokenize.analyzer")
    assert load_config(None, [*JSONL, "rank.score=frequency", "select.reduction_factor=0.9"]).rank.score == "frequency"


def test_the_weight_stage_depends_on_the_settings_that_cut_its_vocabulary() -> None:
    def sections(*overrides: str) -> tuple[str, ...]:
        return weight_stage.STAGE.sections_of(load_config(None, [*JSONL, *overrides]))

    assert sections() == ("weight", "select.min_df")
    assert sections("rank.score=frequency") == ("weight", "select.min_df", "rank.score", "select.top_k",
                                                "select.reduction_factor")
    assert sections("weight.scheme=supervised") == ("weight", "select.min_df", "rank")
    config = load_config(None, [*JSONL, "select.min_df=3", "select.top_k=7"])
    assert section_settings(config, sections()) == {"weight": {"scheme": "ltc"}, "select": {"min_df": 3}}
    assert section_settings(config, ("select", "select.min_df"))["select"]["top_k"] == 7
