"""LYRL2004 text processing: lower case, tokens, punctuation removal, no digit-only tokens, SMART stop list, Porter.

REFERENCE.md section 2; Lewis et al. 2004 section 7: tokens are maximal sequences of non-blank
characters, reduced to lower case; punctuation is removed; tokens made only of digits are
discarded, as are words on the SMART stop list; the remaining tokens are Porter-stemmed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import Stemmer

_PUNCTUATION = re.compile(r"[\W_]+")

STEMMERS = ("porter", "none")


def parse_stop_list(text: str) -> frozenset[str]:
    """One word per line (the SMART ``english.stop`` layout); blank lines and surrounding space ignored."""
    return frozenset(word for word in (line.strip().lower() for line in text.splitlines()) if word)


def stop_words_of(stop_list: str, read_text: Callable[[str], str]) -> frozenset[str]:
    """The words of the stop list file ``stop_list`` (``tokenize.stop_list``) as ``read_text`` reads it
    (the stages read through Hadoop file systems); none when it is ""."""
    return parse_stop_list(read_text(stop_list)) if stop_list else frozenset()


def tokenize(text: str, stop_words: frozenset[str] = frozenset()) -> list[str]:
    """Unstemmed tokens of ``text``: whitespace-separated, lower-cased, punctuation removed,
    empty and digit-only tokens dropped, stop words dropped."""
    tokens = []
    for raw in text.lower().split():
        token = _PUNCTUATION.sub("", raw)
        if token and not token.isdigit() and token not in stop_words:
            tokens.append(token)
    return tokens


class Analyzer:
    """Tokenize and stem batches of texts, stemming each distinct token once.

    The stem table lives as long as the analyzer (one per Python worker), so a token is stemmed
    the first time any document of the worker meets it and looked up afterwards.
    """

    def __init__(self, stop_words: frozenset[str], stemmer: str = "porter") -> None:
        if stemmer not in STEMMERS:
            raise ValueError(f"stemmer must be one of {', '.join(STEMMERS)}, got {stemmer!r}")
        self.stop_words = stop_words
        self._stemmer = Stemmer.Stemmer("porter") if stemmer == "porter" else None
        self._stems: dict[str, str] = {}

    def analyze(self, texts: Sequence[str]) -> list[list[str]]:
        tokenized = [tokenize(text, self.stop_words) for text in texts]
        if self._stemmer is None:
            return tokenized
        unseen = {token for tokens in tokenized for token in tokens if token not in self._stems}
        if unseen:
            words = sorted(unseen)
            self._stems.update(zip(words, self._stemmer.stemWords(words)))
        stems = self._stems
        return [[stems[token] for token in tokens] for tokens in tokenized]

    def __call__(self, texts: Iterable[str]) -> list[list[str]]:
        return self.analyze(list(texts))
