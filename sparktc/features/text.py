r"""LYRL2004 text processing: lower case, tokens, punctuation removal, no digit-only tokens, SMART stop list, Porter.

REFERENCE.md section 2; Lewis et al. 2004 section 7: tokens are maximal sequences of non-blank
characters, reduced to lower case; punctuation is removed; tokens made only of digits are
discarded, as are words on the SMART stop list; the remaining tokens are Porter-stemmed.

The definition, per token: ``text.lower().split()``, then ``[\W_]+`` deleted from each token, empty and
``str.isdigit()`` tokens and stop words dropped. It is computed on the whole text instead (:func:`clean_text`): a
token holds no white space, so deleting, from the whole lower-cased text, every character that is neither a word
character (``str.isalnum()``) nor white space (``str.isspace()``, what ``str.split()`` splits at), and the
underscore, leaves each token as deleting ``[\W_]`` from it alone would, and the white space between tokens as it
was. The deletion is ``bytes.translate`` over the UTF-8 bytes for the ASCII characters and ``str.replace`` for
the few distinct non-ASCII ones a text holds (found among its non-ASCII bytes), so no Python code runs per
character or per token; tests check it against the per-token definition on every code point.

``tokenize.analyzer = "sklearn"`` takes scikit-learn's default analyzer instead (``TfidfVectorizer().build_analyzer()``,
what LibMultiLabel's linear Preprocessor builds its features with): ``text.lower()``, its tokens
``re.findall(r"(?u)\b\w\w+\b", ...)`` (runs of two or more Unicode word characters, the underscore and digits
included, nothing deleted from them; :func:`word_runs` computes them on whole texts as :func:`clean_text` does, some
twice as fast as the regular expression), stop words removed before n-grams are formed (scikit-learn's
``stop_words``); the stemmer, when ``tokenize.stemmer`` names one, stems what is left. :data:`ANALYZERS` holds each
analyzer's facts.

Beyond the recipe, :class:`TermFeatures` makes terms of a document's stems that are not single stems: its title's
stems counted apart (weighted, or as features of their own) and runs of 2 or 3 adjacent stems (word n-grams).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import pyarrow as pa
import pyarrow.compute as pc
import Stemmer

from sparktc import packaged

#: The ASCII characters :func:`clean_text` deletes: neither alphanumeric nor white space (the underscore among them).
_ASCII_DELETED = bytes(c for c in range(128) if not (chr(c).isalnum() or chr(c).isspace()))
_ASCII = bytes(range(128))
_NEITHER_WORD_NOR_SPACE = re.compile(r"[^\w\s]+")  # what is left to delete once the ASCII ones are gone
_REPLACED_AT_MOST = 8  # distinct non-ASCII characters deleted by str.replace; more by _NEITHER_WORD_NOR_SPACE

STEMMERS = ("porter", "none")
#: Joins the stems of a LYRL2004 n-gram ("bank_england"), and prefixes a title's own terms: the recipe deletes both
#: characters from tokens (:func:`clean_text`), so neither term can be a stem of the text, nor an n-gram a title term.
NGRAM_JOINER = "_"
TITLE_PREFIX = "title:"
#: The ASCII characters that are not word characters (``\w``: alphanumeric or the underscore), made spaces by
#: :func:`word_runs`.
_ASCII_NOT_WORD = bytes(c for c in range(128) if not (chr(c).isalnum() or chr(c) == "_"))
_NOT_WORD_TO_SPACE = bytes.maketrans(_ASCII_NOT_WORD, b" " * len(_ASCII_NOT_WORD))
_NOT_WORD = re.compile(r"\W")  # the non-ASCII ones, when a text holds many
#: The space inside a scikit-learn n-gram ("bank of england", its feature name) as the stored token strings hold it:
#: they separate tokens by spaces, so the n-gram is stored with DEL (U+007F) in its place, a character no token of
#: either analyzer holds (not a word character; :func:`clean_text` deletes it). The vocabulary names the term with
#: its space (:func:`term_names`), and the weights look its stored form up (:func:`stored_tokens`).
STORED_SPACE = "\x7f"


def word_runs(text: str) -> list[str]:
    r"""The maximal runs of word characters (``\w``: alphanumeric, or the underscore) of ``text.lower()``, in order.
    Those of two or more characters are scikit-learn's default tokens, ``re.findall(r"(?u)\b\w\w+\b", ...)``: a
    match begins where a run does and takes all of it. Every other character is made a space on the whole text,
    as :func:`clean_text` deletes its characters, and the text split; tests check the tokens against scikit-learn's
    on every code point.
    """
    lower = text.lower()
    data = lower.encode("utf-8", "surrogatepass")
    kept = data.translate(_NOT_WORD_TO_SPACE).decode("utf-8", "surrogatepass")
    if lower.isascii():
        return kept.split()
    other = [character for character in set(data.translate(None, _ASCII).decode("utf-8", "surrogatepass"))
             if not (character.isalnum() or character == "_")]
    if len(other) > _REPLACED_AT_MOST:  # each replace scans the text: a regular expression scans it once
        return _NOT_WORD.sub(" ", kept).split()
    for character in other:
        kept = kept.replace(character, " ")
    return kept.split()


def lyrl2004_tokens(text: str) -> list[str]:
    """The LYRL2004 recipe's tokens of ``text`` before digit-only tokens and stop words are dropped."""
    return clean_text(text).split()


@dataclass(frozen=True)
class TextAnalyzer:
    """One ``tokenize.analyzer``: how a text becomes tokens, which tokens beside stop words it drops, and how the
    stems of an n-gram are joined into one stored term.
    """

    name: str
    title: str  # what reports call it
    tokens: Callable[[str], list[str]]
    min_length: int  # shorter tokens are dropped
    drops_digits: bool  # whether tokens made only of digits (``str.isdigit``) are dropped
    joiner: str  # between the stems of an n-gram, as stored


#: The analyzers by their ``tokenize.analyzer`` names, the first the default.
ANALYZERS = {analyzer.name: analyzer for analyzer in (
    TextAnalyzer("lyrl2004", "LYRL2004's recipe", lyrl2004_tokens, 1, True, NGRAM_JOINER),
    TextAnalyzer("sklearn", "scikit-learn's default analyzer", word_runs, 2, False, STORED_SPACE),
)}


def term_names(stored: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Stored tokens as the vocabulary names them: :data:`STORED_SPACE` shown as the space it stands for."""
    return pc.replace_substring(stored, STORED_SPACE, " ")


def stored_tokens(terms: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Vocabulary terms as the stored token strings hold them (:func:`term_names` undone: no stored token holds a
    space).
    """
    return pc.replace_substring(terms, " ", STORED_SPACE)


def parse_stop_list(text: str) -> frozenset[str]:
    """One word per line (the SMART ``english.stop`` layout); blank lines and surrounding space ignored."""
    return frozenset(word for word in (line.strip().lower() for line in text.splitlines()) if word)


def stop_words_of(stop_list: str, read_text: Callable[[str], str]) -> frozenset[str]:
    """The words of the stop list file ``stop_list`` (``tokenize.stop_list``) as ``read_text`` reads it
    (the stages read through Hadoop file systems), or of the packaged stop list it names; none when it is "".
    """
    if not stop_list:
        return frozenset()
    source = packaged.stop_list(stop_list)
    return parse_stop_list(source.read_text(encoding="utf-8") if source else read_text(stop_list))


def clean_text(text: str) -> str:
    r"""``text`` lower-cased with its punctuation deleted: every character that is neither alphanumeric nor white
    space, and the underscore (``[\W_]`` outside white space); its ``split()`` is the recipe's tokens before the
    digit-only tokens and stop words are dropped.
    """
    lower = text.lower()
    data = lower.encode("utf-8", "surrogatepass")  # a lone surrogate (no character: deleted) survives the round trip
    kept = data.translate(None, _ASCII_DELETED).decode("utf-8", "surrogatepass")
    if lower.isascii():
        return kept
    deleted = [character for character in set(data.translate(None, _ASCII).decode("utf-8", "surrogatepass"))
               if not (character.isalnum() or character.isspace())]
    if len(deleted) > _REPLACED_AT_MOST:  # each replace scans the text: a regular expression scans it once
        return _NEITHER_WORD_NOR_SPACE.sub("", kept)
    for character in deleted:
        kept = kept.replace(character, "")
    return kept


def tokenize(text: str, stop_words: frozenset[str] = frozenset()) -> list[str]:
    """Unstemmed tokens of ``text``: whitespace-separated, lower-cased, punctuation removed,
    empty and digit-only tokens dropped, stop words dropped.
    """
    return [token for token in clean_text(text).split() if not token.isdigit() and token not in stop_words]


class Analyzer:
    """Tokenize (by ``analyzer``, one of :data:`ANALYZERS`) and stem batches of texts, stemming each distinct token
    once.

    The table token -> stem lives as long as the analyzer (one per Python worker), so a token is stemmed
    the first time any document of the worker meets it and looked up afterwards. Dropped tokens (digit-only for
    LYRL2004's recipe, of one character for scikit-learn's, stop words) are in the table too, as None, so a
    document's tokens are one C-level pass of lookups (``map`` over the table) with nothing per token in Python.
    """

    def __init__(self, stop_words: frozenset[str], stemmer: str = "porter", analyzer: str = "lyrl2004") -> None:
        if stemmer not in STEMMERS:
            raise ValueError(f"stemmer must be one of {', '.join(STEMMERS)}, got {stemmer!r}")
        if analyzer not in ANALYZERS:
            raise ValueError(f"analyzer must be one of {', '.join(ANALYZERS)}, got {analyzer!r}")
        self.stop_words = stop_words
        self._recipe = ANALYZERS[analyzer]
        self._stemmer = Stemmer.Stemmer("porter") if stemmer == "porter" else None
        self._stems: dict[str, str | None] = {}  # token -> stem, None for a dropped token
        self._empty_stem = False  # whether a stem is "" (never seen): joined() then takes the slow path

    def _learn(self, tokenized: list[list[str]]) -> None:
        """Add the tokens of ``tokenized`` not in the table yet: dropped ones as None, the others with their stems
        (one ``stemWords`` call for all of them).
        """
        unseen = set(chain.from_iterable(tokenized))
        unseen.difference_update(self._stems)
        if not unseen:
            return
        recipe = self._recipe
        dropped = {token for token in unseen if len(token) < recipe.min_length
                   or (recipe.drops_digits and token.isdigit()) or token in self.stop_words}
        self._stems.update(dict.fromkeys(dropped, None))
        words = sorted(unseen - dropped)
        if words:
            stems = words if self._stemmer is None else self._stemmer.stemWords(words)
            self._stems.update(zip(words, stems))
            self._empty_stem = self._empty_stem or "" in stems

    def _tokenized(self, texts: Sequence[str]) -> list[list[str]]:
        tokens = self._recipe.tokens
        tokenized = [tokens(text) for text in texts]
        self._learn(tokenized)
        return tokenized

    def analyze(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's stems, in order: its analyzer's tokens (LYRL2004's: cleaned as by :func:`tokenize`, digit-only
        ones dropped), stop words dropped, the rest stemmed.
        """
        lookup = self._stems.__getitem__
        return [[stem for stem in map(lookup, tokens) if stem is not None] for tokens in self._tokenized(texts)]

    def joined(self, texts: Sequence[str]) -> list[str]:
        """Each text's stems as stored: one string, single spaces between them (``" ".join`` of :meth:`analyze`'s
        lists, without building them).
        """
        tokenized = self._tokenized(texts)
        lookup = self._stems.__getitem__
        if self._empty_stem:  # never seen (a Porter stem is never empty), but filter(None) would drop it
            return [" ".join([stem for stem in map(lookup, tokens) if stem is not None]) for tokens in tokenized]
        return [" ".join(filter(None, map(lookup, tokens))) for tokens in tokenized]

    def __call__(self, texts: Iterable[str]) -> list[list[str]]:
        """Each text's stems, as :meth:`analyze`: the analyzer is a function of the texts."""
        return self.analyze(list(texts))


def word_ngrams(stems: Sequence[str], n: int, joiner: str = NGRAM_JOINER) -> list[str]:
    """The runs of 2 to ``n`` adjacent ``stems`` (all bigrams in order, then all trigrams, ...), each joined by
    ``joiner``: scikit-learn's ``_word_ngrams`` for ``ngram_range = (1, n)`` without the single stems.

    Formed after stop words are dropped and the rest stemmed, so "Bank of England's rates" gives "bank_england"
    and "england_rate": a run across a stop word is the phrase it spans (scikit-learn removes stop words before
    its n-grams too), and the stems pool a phrase's inflections as they pool its words'.
    """
    grams: list[str] = []
    for length in range(2, n + 1):
        grams.extend(map(joiner.join, zip(*(stems[i:] for i in range(length)))))
    return grams


@dataclass(frozen=True)
class TermFeatures:
    """How a document's stems become its terms (``tokenize.ngrams``, ``tokenize.title_weight``,
    ``tokenize.title_terms``, and the analyzer's n-gram ``joiner``); the defaults give the stems of its text, the
    LYRL2004 recipe.

    ``ngrams = n`` (2 or 3) adds each field's n-grams (:func:`word_ngrams`) to its stems. The text holds the title
    already (Reuters-21578: TITLE then BODY), so ``title_weight = k`` adds the title's terms k - 1 more times, counting
    them k times in all; with ``title_terms`` the added title terms are features of their own, each prefixed with
    :data:`TITLE_PREFIX` and counted ``title_weight`` times, beside the text's (which still hold the title once).
    """

    ngrams: int = 1
    title_weight: int = 1
    title_terms: bool = False
    joiner: str = NGRAM_JOINER

    @property
    def plain(self) -> bool:
        """Whether the terms are the text's stems alone."""
        return self.ngrams == 1 and self.title_weight == 1 and not self.title_terms

    @property
    def uses_title(self) -> bool:
        """Whether the title counts apart from the text."""
        return self.title_weight > 1 or self.title_terms

    def field_terms(self, stems: list[str]) -> list[str]:
        """One field's terms: its stems, then its n-grams up to ``ngrams`` stems long."""
        return stems + word_ngrams(stems, self.ngrams, self.joiner) if self.ngrams > 1 else stems

    def terms(self, text: list[str], title: list[str]) -> list[str]:
        """A document's terms from the stems of its ``text`` (title included) and of its ``title`` alone."""
        terms = self.field_terms(text)
        if not self.uses_title or not title:
            return terms
        title_terms = self.field_terms(title)
        if self.title_terms:
            return terms + [TITLE_PREFIX + term for term in title_terms] * self.title_weight
        return terms + title_terms * (self.title_weight - 1)


#: The LYRL2004 recipe's terms: the text's stems alone.
STEMS = TermFeatures()


def token_strings(analyzer: Analyzer, texts: pa.Array | pa.ChunkedArray,
                  titles: pa.Array | pa.ChunkedArray | None = None, features: TermFeatures = STEMS) -> pa.StringArray:
    """Raw texts (and their titles, which ``features`` may count apart) analyzed into stored token strings (a null text
    has no tokens, a null title no title terms): the tokenize stage's recipe, shared with the classification of new
    documents.
    """
    raw = [text or "" for text in texts.to_pylist()]
    if features.plain:
        return pa.array(analyzer.joined(raw), type=pa.string())
    named = [title or "" for title in titles.to_pylist()] if titles is not None and features.uses_title else []
    title_stems = analyzer.analyze(named) if named else [[] for _ in raw]
    return pa.array([" ".join(features.terms(text, title)) for text, title in zip(analyzer.analyze(raw), title_stems)],
                    type=pa.string())
