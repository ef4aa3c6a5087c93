"""A synthetic corpus in exactly the LYRL2004 (RCV1-v2) format, deterministic for a seed.

Pure numpy: no Spark here (the Spark layer is :mod:`sparktc.stages.synthesize`).

What is generated
-----------------
* A vocabulary of ``vocabulary_size`` unique lower-case pseudo-stems ("compani"-like words built
  from syllables and Porter-like endings); shorter words get the frequent ranks.
* A topic hierarchy: the real ``rcv1.topics.hier.orig`` when given, otherwise a generated tree of
  the same shape (``Root``; 4 top nodes ``<L>CAT``; 103 topics; 82 leaves; depth up to 4; codes
  such as ``G11``, ``G151``, ``G1511``).
* The other two category sets of RCV1-v2 (LYRL2004 section 3), always generated:

  - an industries tree, written as ``rcv1.industries.hier`` in the topics hierarchy's
    ``parent: P child: C child-description: D`` format: 354 codes, ``I`` and 5 digits whose digits
    spell the path (10 top nodes ``I00000`` .. ``I90000``; a node at depth ``d`` sets digit ``d``
    to 1-9, so ``I81420`` is under ``I81400``, ``I81000``, ``I80000``), with 60, 150, 110 and 24
    codes at depths 2 to 5 (105 internal nodes, 249 leaves);
  - a flat list of 366 region codes (3 to 7 upper-case letters or digits, like ``USA`` or
    ``BRAZ``), written as ``rcv1.regions.txt`` lines ``CODE  DESCRIPTION`` with made-up country
    names; regions have no hierarchy (LYRL2004 section 3.3).

  Shape figures: the list sizes are those given for RCV1-v2 (354 industry codes, LYRL2004
  appendix 4; 366 region codes, appendix 6), and 300 of the regions occur in the corpus (about
  296 in RCV1). Our copy of the paper has its numbers stripped, so the others are approximations
  of what it describes: 10 top nodes and depth up to 5 for the "best guess" industries tree (the
  codes per depth are ours), about a third of the documents with industry codes, about 1.5
  regions per document with a few countries dominating, and the frequency curves below.
* Documents. Each document draws 1 + Poisson(lambda) *primary* topics (any node, skewed
  frequencies, later primaries tending to stay under the first one's top node) and its label
  set is their closure under ancestors (the hierarchy policy of RCV1-v2). Its length is
  log-normal around ``tokens_per_document``. Each token is either a background word (Zipf
  over the vocabulary), a topic word (drawn from the indicative-term set of one of the
  document's topics, favouring the most specific), or a repeat of an earlier token of the same
  document (burstiness, which brings ~120 tokens down to ~75 distinct terms). Indicative sets
  overlap (a child shares part of its parent's set) and every word also occurs as background,
  so no term appears only and always in one topic.
* Industry and region labels, drawn after a document's topics from their own random stream (so
  the topic labels are those the generator gave before it wrote the other sets):

  - 35% of the documents (:data:`INDUSTRY_DOCUMENT_SHARE`) get industry codes: 1 + Poisson(0.35)
    primary codes below the top nodes (skewed: the most frequent in about 12% of those documents,
    and with RCV1's 23,149 training documents about 40 of the 354 codes have no training
    positive), closed under the tree (about 4.5 codes per such document), except that in 2% of
    them (:data:`INDUSTRY_NOT_CLOSED_SHARE`, drawn per document) the first primary code's
    immediate parent is left out: LYRL2004 section 3.2 reports that the hierarchy policy was
    applied imperfectly to industries, and ingest's hierarchy-closure report finds them;
  - every document gets at least one region (LYRL2004's minimum code policy): 1 + Poisson(lambda)
    draws, lambda solved so that a document has 1.5 distinct regions on average
    (:data:`REGIONS_PER_DOCUMENT`), from a very skewed curve over 300 of the 366 codes: the most
    frequent drawn 24% of the time (in about a third of the documents), about 20 regions in more
    than 1% of the documents, and with 23,149 training documents about 120 of the 366 codes have
    no training positive (the 66 listed but never assigned among them).

  Each industry and region has its own indicative-term set, smaller and more concentrated than a
  topic's (a region's 5 to 15 rarer words, one or two of which, like a country's name, occur in
  most of its documents; an industry's 15 to 40, sharing part of its parent's), and of a
  labelled document's background tokens 30% become words of its industries (of any code of a
  primary's chain alike, so that every code of the closure has its words) and 15% words of its
  regions. Both sets are thus learnable from the tokens; the lengths and the topic words are as
  without them, and the chance of a repeat (``_REPEAT`` = 0.31) is set so that, with these
  concentrated words, a document keeps ~75 distinct terms.

Determinism
-----------
All randomness for documents is keyed by the *block* (``BLOCK_DOCUMENTS`` consecutive document
positions) through ``numpy.random.SeedSequence(seed, spawn_key=(domain, block))``; the model
(vocabulary, trees, region list, indicative terms, calibration) is keyed by the seed alone. So
the corpus content depends only on the shape (including the seed), never on how many chunks or
tasks produce it: the same shape gives the same documents and the same labels of all three
category sets whatever ``chunk_documents`` or the Spark parallelism.

Calibration
-----------
``lambda`` (extra primaries per document) and the masses of the four top-level subtrees are
fitted by a small deterministic simulation of label sets only, so that the mean label-set size
is ``topics_per_document`` and the top-level shares follow RCV1-v2 (CCAT 47.4%, ECAT 14.9%,
GCAT 29.7%, MCAT 25.5% of documents, in the hierarchy's order of top nodes). The regions'
lambda is solved exactly: with ``1 + Poisson(lambda)`` draws of probabilities ``p``, a document
has ``sum(1 - (1 - p) exp(-lambda p))`` distinct regions on average.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields

import numpy as np

from sparktc.corpora import lyrl2004
from sparktc.corpora.formats import CorpusFormat
from sparktc.corpora.lyrl2004 import ROOT
from sparktc.corpora.synthetic_categories import (
    _BLOCK,
    _CALIBRATION,
    _SET_BLOCK,
    _SET_TERMS,
    _TOPICS,
    Tree,
    generate_hierarchy,
    generate_industries_hierarchy,
    generate_regions,
    generate_vocabulary,
    parse_hierarchy_text,
    random_stream,
)
from sparktc.errors import InputError

# --- the real corpus's shape (LYRL2004) -----------------------------------------------------
RCV1_DOCUMENTS = 804_414
RCV1_TRAIN_DOCUMENTS = 23_149
RCV1_TEST_PARTS = (199_328, 199_339, 199_576, 183_022)
TRAIN_FIRST_ID = 2286
TEST_FIRST_ID = 26151
TOP_SHARES = (0.474, 0.149, 0.297, 0.255)  # CCAT ECAT GCAT MCAT: share of documents

# Industries and regions (module docstring: the two lists' sizes are RCV1's, the rest approximations; the code lists
# themselves, INDUSTRY_LEVELS and REGION_CODES, in synthetic_categories).
REGIONS_ASSIGNED = 300  # region codes that occur in the corpus (296 in RCV1); the others are only listed
INDUSTRY_DOCUMENT_SHARE = 0.35  # documents with industry codes
INDUSTRY_NOT_CLOSED_SHARE = 0.02  # of those, the documents whose first code misses its immediate parent
REGIONS_PER_DOCUMENT = 1.5  # distinct regions per document, on average

# The files written: LYRL2004's, the token and qrels files gzipped as they are distributed.
TRAIN_FILE = f"{lyrl2004.TRAIN_FILE}.gz"
TEST_FILES = tuple(f"{name}.gz" for name in lyrl2004.TEST_FILES)
QRELS_FILES = {category_set: f"{name}.gz" for category_set, name in lyrl2004.QRELS_FILES.items()}
QRELS_FILE = QRELS_FILES["topics"]

BLOCK_DOCUMENTS = 1000  # unit of randomness; chunk sizes need not be multiples of it
LINE_WIDTH = 80  # token lines are wrapped greedily to at most this many characters

# ---------------------------------------------------------------------------------------------
# Shape
# ---------------------------------------------------------------------------------------------

#: (kind, lowest, highest) of each :class:`SyntheticShape` setting: the one definition, which
#: :mod:`sparktc.experiment.config` checks ``[synthesize]`` against before Spark starts.
SHAPE_LIMITS = {
    "documents": (int, 10, 100_000_000),
    "train_documents": (int, 1, 100_000_000),
    "vocabulary_size": (int, 1_000, 2_000_000),
    "tokens_per_document": (float, 10.0, 5_000.0),
    "topics_per_document": (float, 2.5, 6.0),
    "topic_word_share": (float, 0.0, 0.9),
    "seed": (int, 0, 2**63 - 1),
}


@dataclass(frozen=True)
class SyntheticShape:
    """What to generate. Defaults are the real RCV1-v2 / LYRL2004 shape.

    * ``documents``: total documents (train + test); the test documents are spread over the
      four test files in the real files' proportions.
    * ``train_documents``: the first documents (ids from 2286 upward) go to the train file;
      test ids start at 26151 (or right after the train ids when those reach further).
    * ``vocabulary_size``: number of distinct pseudo-stems that can occur.
    * ``tokens_per_document``: mean tokens per document (log-normal lengths).
    * ``topics_per_document``: mean label-set size, ancestors included.
    * ``topic_word_share``: mean share of a document's tokens drawn from its topics' indicative
      terms (difficulty knob: higher is easier to classify).
    * ``seed``: everything is a function of the shape, the seed included.
    """

    documents: int = RCV1_DOCUMENTS
    train_documents: int = RCV1_TRAIN_DOCUMENTS
    vocabulary_size: int = 47_236
    tokens_per_document: float = 120.0
    topics_per_document: float = 3.2
    topic_word_share: float = 0.3
    seed: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            kind, low, high = SHAPE_LIMITS[f.name]
            value = getattr(self, f.name)
            ok_type = (
                isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                if kind is int
                else isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            )
            kind_name = "an integer" if kind is int else "a number"
            if not ok_type or not (low <= value <= high) or (kind is float and not math.isfinite(value)):
                raise ValueError(f"{f.name}={value!r}: must be {kind_name} in [{low}, {high}]")
        tests = len(TEST_FILES)
        if self.documents - self.train_documents < tests:
            raise ValueError(
                f"train_documents={self.train_documents!r}: must be in [1, documents - {tests}] = "
                f"[1, {self.documents - tests}] so that each of the {tests} test files gets a document"
            )

    @property
    def test_documents(self) -> int:
        """The documents of the test parts: all but the training ones."""
        return self.documents - self.train_documents

    @property
    def test_first_id(self) -> int:
        """The first test document id: LYRL2004's 26151, or later when more training ids need the room."""
        return max(TEST_FIRST_ID, TRAIN_FIRST_ID + self.train_documents)

    def test_part_sizes(self) -> tuple[int, int, int, int]:
        """The four test files' sizes, proportional to the real ones (exact at full size)."""
        n = self.test_documents
        total = sum(RCV1_TEST_PARTS)
        exact = [n * p / total for p in RCV1_TEST_PARTS]
        sizes = [max(1, int(x)) for x in exact]
        # largest remainder, deterministic
        order = sorted(range(4), key=lambda i: (-(exact[i] - int(exact[i])), i))
        k = 0
        while sum(sizes) < n:
            sizes[order[k % 4]] += 1
            k += 1
        while sum(sizes) > n:
            i = max(range(4), key=lambda j: (sizes[j], -j))
            sizes[i] -= 1
        return tuple(sizes)

    def files(self) -> list[tuple[str, int, int]]:
        """``(file name, first document position, end position)`` in corpus order."""
        out = [(TRAIN_FILE, 0, self.train_documents)]
        start = self.train_documents
        for name, size in zip(TEST_FILES, self.test_part_sizes()):
            out.append((name, start, start + size))
            start += size
        return out

    def doc_ids(self, start: int, stop: int) -> np.ndarray:
        """Document ids of positions ``start .. stop-1`` (train ids first, then test ids)."""
        pos = np.arange(start, stop, dtype=np.int64)
        train = self.train_documents
        return np.where(pos < train, TRAIN_FIRST_ID + pos, self.test_first_id + (pos - train))


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------

_ZIPF_S, _ZIPF_Q = 1.0, 2.7  # background: p(rank r) ~ 1 / (r + q)^s
_TOPIC_TERMS = (150, 400)  # indicative terms per topic
_SHARE_WITH_PARENT = 0.35  # fraction of a child's indicative terms taken from its parent's
_SAME_SUBTREE = 0.4  # chance that a later primary topic stays under the first one's top node
_MAX_PRIMARIES = 8
_REPEAT = 0.31  # chance that a token repeats an earlier token of the document
_LENGTH_SIGMA = 0.75
_SIGNAL_CONCENTRATION = 6.0  # Beta concentration of a document's topic-word share
_UP_STEPS = (0.6, 0.25, 0.1, 0.05)  # topic word from the primary, its parent, grandparent, ...
# Indicative-term sets (:func:`_indicative_terms`): an industry's shares _SHARE_WITH_PARENT with its parent's; a
# region's are few, rarer words, one or two of them in most of its documents (names of the country, its places).
_INDUSTRY_TERMS = {"sizes": (15, 40), "lo_rank": 200, "weights": (1.0, 1.5)}
_REGION_TERMS = {"sizes": (5, 15), "lo_rank": 300, "weights": (1.0, 2.0)}
_INDUSTRY_PRIMARIES = 0.35  # Poisson mean of a document's extra primary industry codes
_MAX_REGIONS = 12  # region draws per document at most
_INDUSTRY_WORDS, _REGION_WORDS = 0.3, 0.15  # share of a labelled document's background tokens that become its words
# (exponent, offset, cutoff) of the frequency curves by rank (:func:`_rank_curve`)
_INDUSTRY_CURVE = (1.1, 2.0, 4.0)
_REGION_CURVE = (1.5, 1.0, 5.0)


def _ancestor_table(tree: Tree) -> np.ndarray:
    """Per category: itself, its parent, ..., its top node, then the top node repeated to the tree's depth."""
    depth = int(tree.depth.max())
    table = np.zeros((len(tree.codes), depth), dtype=np.int64)
    for i in range(len(tree.codes)):
        chain = tree.ancestors(i)
        table[i] = chain + [chain[-1]] * (depth - len(chain))
    return table


def _indicative_terms(rng: np.random.Generator, tree: Tree, sizes: tuple[int, int], vocabulary_size: int,
                      lo_rank: int = 60, weights: tuple[float, float] = (3.0, 0.9)) -> tuple[np.ndarray, np.ndarray]:
    """Each category's indicative terms (a child shares part of its parent's set), flat, with their cumulative
    probabilities offset by the category's index (category ``i``'s lie in ``[i, i + 1]``), so that one
    ``searchsorted(cdf, i + u)`` draws a word of category ``i``: ``(terms, cdf)``. The terms are words of
    vocabulary ranks from ``lo_rank`` up (log-uniform), the ``k``-th of a set drawn with probability proportional
    to ``(k + offset) ** -exponent`` (``weights = (offset, exponent)``).
    """
    v = vocabulary_size
    offset, exponent = weights
    n = len(tree.codes)
    terms: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n
    for i in sorted(range(n), key=lambda i: (int(tree.depth[i]), tree.codes[i])):
        k = int(rng.integers(*sizes))
        fresh = np.exp(rng.uniform(math.log(lo_rank), math.log(v), size=2 * k)).astype(np.int64)
        fresh = np.clip(fresh, 0, v - 1)
        p = int(tree.parent[i])
        if p >= 0:
            inherit = rng.choice(terms[p], size=min(len(terms[p]), int(k * _SHARE_WITH_PARENT)), replace=False)
        else:
            inherit = np.empty(0, dtype=np.int64)
        merged = list(dict.fromkeys(np.concatenate([inherit, fresh]).tolist()))[:k]
        terms[i] = rng.permutation(np.array(merged, dtype=np.int64))
    flat_cdf = []
    for i in range(n):
        w = 1.0 / (np.arange(1, len(terms[i]) + 1) + offset) ** exponent
        c = np.cumsum(w / w.sum())
        c[-1] = 1.0
        flat_cdf.append(c + i)
    return np.concatenate(terms), np.concatenate(flat_cdf)


def _indicative_words(rng: np.random.Generator, primaries: np.ndarray, offsets: np.ndarray, docs: np.ndarray,
                      ancestors: np.ndarray, terms: np.ndarray, cdf: np.ndarray, depth: np.ndarray | None = None
                      ) -> np.ndarray:
    """One indicative word per entry of ``docs`` (documents of a block), of one of the document's ``primaries``
    (``offsets`` delimit each document's) or an ancestor: by :data:`_UP_STEPS` (the primary itself, its parent,
    grandparent, ...), or, given the categories' ``depth``, any of the primary's chain alike.
    """
    n = len(docs)
    m = offsets[1:] - offsets[:-1]
    which = offsets[docs] + (rng.random(n) * m[docs]).astype(np.int64)
    primary = primaries[which]
    if depth is None:
        steps = np.searchsorted(np.cumsum(_UP_STEPS), rng.random(n), side="right")
    else:
        steps = (rng.random(n) * depth[primary]).astype(np.int64)
    node = ancestors[primary, np.minimum(steps, ancestors.shape[1] - 1)]
    idx = np.searchsorted(cdf, node + rng.random(n), side="right")
    return terms[np.minimum(idx, len(terms) - 1)]


def _rank_curve(count: int, exponent: float, offset: float, cutoff: float) -> np.ndarray:
    """Skewed probabilities of ``count`` ranks, the first the most frequent: ``(r + 1 + offset) ** -exponent``,
    falling steeply (``exp(-cutoff (r / count) ** 4)``) over the last ranks, so that RCV1's 23,149 training
    documents have no positive of the rarest codes.
    """
    r = np.arange(count, dtype=np.float64)
    curve = (r + 1 + offset) ** -exponent * np.exp(-cutoff * (r / count) ** 4)
    return curve / curve.sum()


@dataclass
class CategorySet:
    """What the generator needs of industries or regions: the tree (flat for regions), its ancestor table, the
    codes a document can draw (most frequent first) with their cumulative probabilities, and the indicative
    terms (:func:`_indicative_terms`).
    """

    tree: Tree
    ancestors: np.ndarray
    drawn: np.ndarray
    draw_cdf: np.ndarray
    terms: np.ndarray
    term_cdf: np.ndarray

    @classmethod
    def build(cls, rng: np.random.Generator, tree: Tree, drawn: np.ndarray, curve: tuple[float, float, float],
              vocabulary_size: int, indicative: dict) -> CategorySet:
        """The set of ``tree`` whose codes ``drawn`` (in rank order) follow :func:`_rank_curve` ``(*curve)``, with
        the indicative terms of :func:`_indicative_terms` ``(**indicative)``.
        """
        cdf = np.cumsum(_rank_curve(len(drawn), *curve))
        cdf[-1] = 1.0
        terms, term_cdf = _indicative_terms(rng, tree, vocabulary_size=vocabulary_size, **indicative)
        return cls(tree, _ancestor_table(tree), drawn, cdf, terms, term_cdf)

    def probabilities(self) -> np.ndarray:
        """The probability of each drawn code (in rank order)."""
        return np.diff(self.draw_cdf, prepend=0.0)

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` independent codes (category indices)."""
        idx = np.searchsorted(self.draw_cdf, rng.random(count), side="right")
        return self.drawn[np.minimum(idx, len(self.drawn) - 1)]

    def labels(self, primaries: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The ``documents x categories`` matrix of the ``primaries`` (``offsets`` delimit each document's) and
        all their ancestors.
        """
        count = len(offsets) - 1
        doc = np.repeat(np.arange(count), offsets[1:] - offsets[:-1])
        labels = np.zeros((count, len(self.tree.codes)), dtype=bool)
        labels[np.repeat(doc, self.ancestors.shape[1]), self.ancestors[primaries].ravel()] = True
        return labels


def _counts_offsets(counts: np.ndarray) -> np.ndarray:
    """Offsets (length ``len(counts) + 1``) of consecutive runs of ``counts`` items."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _region_lambda(probabilities: np.ndarray, target: float) -> float:
    """The Poisson mean giving ``target`` distinct regions per document on average when a document draws
    1 + Poisson(lambda) regions of ``probabilities``: the mean is ``sum(1 - (1 - p) exp(-lambda p))`` (the cap
    :data:`_MAX_REGIONS` changes it by less than 1e-9), solved by bisection.
    """
    def distinct(lam: float) -> float:
        return float(np.sum(1.0 - (1.0 - probabilities) * np.exp(-lam * probabilities)))

    lo, hi = 0.0, 8.0
    if not distinct(lo) <= target <= distinct(hi):
        raise ValueError(f"regions per document {target}: must be in [{distinct(lo):.2f}, {distinct(hi):.2f}]")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if distinct(mid) < target else (lo, mid)
    return (lo + hi) / 2


class SyntheticModel:
    """Everything the document generator needs; a function of (shape, hierarchy) only."""

    def __init__(self, shape: SyntheticShape, hierarchy: Sequence[tuple[str, str, str]] | None = None):
        self.shape = shape
        entries = list(hierarchy) if hierarchy is not None else generate_hierarchy(shape.seed)
        self.tree = Tree.from_entries(entries)
        self.generated_hierarchy = hierarchy is None
        tree = self.tree
        n_topics = len(tree.codes)
        self.vocabulary = generate_vocabulary(shape.seed, shape.vocabulary_size)
        v = shape.vocabulary_size
        ranks = np.arange(1, v + 1, dtype=np.float64)
        bg = 1.0 / (ranks + _ZIPF_Q) ** _ZIPF_S
        self.background_cdf = np.cumsum(bg / bg.sum())
        self.background_cdf[-1] = 1.0

        rng = random_stream(shape.seed, _TOPICS)
        self.anc_pad = _ancestor_table(tree)  # self, parent, ..., top, top...
        self.topic_terms, self.topic_cdf = _indicative_terms(rng, tree, _TOPIC_TERMS, v)
        # --- primary-topic masses: skewed within each top subtree, a very rare tail
        n = n_topics
        r = np.arange(n) / max(n - 1, 1)
        curve = 10.0 ** (-2.3 * r - 0.7 * r**6)
        mass = np.empty(n)
        mass[rng.permutation(n)] = curve
        leaves = np.array([i for i in range(n) if i not in set(tree.parent.tolist())], dtype=np.int64)
        self.rare = rng.choice(leaves, size=min(3, len(leaves)), replace=False)
        self._base_mass = mass
        self.top_targets = None
        if len(tree.tops) == len(TOP_SHARES):
            self.top_targets = np.array(TOP_SHARES)
        self._calibrate()
        self._tables: tuple | None = None

        # --- industries and regions (their own streams: the topics above are those of a topics-only model)
        rng = random_stream(shape.seed, _SET_TERMS)
        industries = Tree.from_entries(generate_industries_hierarchy(shape.seed))
        below_top = np.flatnonzero(industries.depth > 1)
        self.industries = CategorySet.build(rng, industries, rng.permutation(below_top), _INDUSTRY_CURVE, v,
                                            _INDUSTRY_TERMS)
        self.region_list = generate_regions(shape.seed)
        regions = Tree.from_entries([("None", ROOT, "No Description")]
                                    + [(ROOT, code, name) for code, name in self.region_list])
        assigned = rng.permutation(len(regions.codes))[:REGIONS_ASSIGNED]
        self.regions = CategorySet.build(rng, regions, assigned, _REGION_CURVE, v, _REGION_TERMS)
        self.region_lam = _region_lambda(self.regions.probabilities(), REGIONS_PER_DOCUMENT)

    # --- primary-topic distribution ----------------------------------------------------------
    def _set_mass(self, top_scale: np.ndarray) -> None:
        tree = self.tree
        mass = self._base_mass.copy()
        for k, t in enumerate(tree.tops):
            sub = tree.top == t
            mass[sub] *= top_scale[k] / mass[sub].sum()
        mass /= mass.sum()
        # the rarest topics: a handful of documents in 804,414 (and a couple of dozen)
        for target, i in zip((6e-6, 2.5e-5, 1.2e-4), self.rare):
            mass[i] = target
        mass /= mass.sum()
        self.mass = mass
        self.mass_cdf = np.cumsum(mass)
        self.mass_cdf[-1] = 1.0
        # per top node: distribution restricted to its subtree (flat cdf trick, offset by k)
        cdfs = []
        for k, t in enumerate(self.tree.tops):
            m = np.where(tree.top == t, mass, 0.0)
            c = np.cumsum(m / m.sum())
            c[-1] = 1.0
            cdfs.append(c + k)
        self.sub_cdf = np.concatenate(cdfs)
        self.top_slot = np.zeros(len(tree.codes), dtype=np.int64)  # topic -> k of its top node
        for k, t in enumerate(tree.tops):
            self.top_slot[tree.top == t] = k

    def sample_labels(self, rng: np.random.Generator, count: int, lam: float | None = None):
        """Primary topics and label sets (ancestor closure) of ``count`` documents.

        Returns ``(primaries, prim_offsets, labels)``: flat primary topic indices, the offsets of
        each document's primaries (length ``count + 1``) and a ``count x topics`` boolean matrix.
        """
        lam = self.lam if lam is None else lam
        m = 1 + np.minimum(rng.poisson(lam, size=count), _MAX_PRIMARIES - 1)
        offsets = _counts_offsets(m)
        total = int(offsets[-1])
        doc = np.repeat(np.arange(count), m)
        first_pos = offsets[:-1]
        u = rng.random(total)
        free = np.searchsorted(self.mass_cdf, u, side="right")
        first = free[first_pos]
        stay = rng.random(total) < _SAME_SUBTREE
        slot = self.top_slot[first][doc]
        sub = np.searchsorted(self.sub_cdf, slot + rng.random(total), side="right") - slot * len(self.tree.codes)
        prim = np.where(stay, sub, free)
        prim[first_pos] = first
        prim = np.minimum(prim, len(self.tree.codes) - 1)
        labels = np.zeros((count, len(self.tree.codes)), dtype=bool)
        depth = self.anc_pad.shape[1]
        labels[np.repeat(doc, depth), self.anc_pad[prim].ravel()] = True
        return prim, offsets, labels

    def _calibrate(self) -> None:
        """Fit lambda and the top-subtree masses to the target label-set size and top shares."""
        tree = self.tree
        target = self.shape.topics_per_document
        k = len(tree.tops)
        scale = self.top_targets.copy() if self.top_targets is not None else np.array(
            [float((tree.top == t).sum()) for t in tree.tops])
        count = 40_000
        tops_idx = np.array(tree.tops)
        self.lam = 0.5
        for _round in range(8):
            self._set_mass(scale / scale.sum())
            lo, hi = 0.0, 12.0
            for _ in range(22):
                mid = (lo + hi) / 2
                _, _, labels = self.sample_labels(random_stream(self.shape.seed, _CALIBRATION), count, mid)
                if labels.sum(axis=1).mean() < target:
                    lo = mid
                else:
                    hi = mid
            self.lam = (lo + hi) / 2
            if self.top_targets is None:
                break
            _, _, labels = self.sample_labels(random_stream(self.shape.seed, _CALIBRATION), count)
            share = labels[:, tops_idx].mean(axis=0)
            scale = scale * (self.top_targets / np.maximum(share, 1e-9))
        _, _, labels = self.sample_labels(random_stream(self.shape.seed, _CALIBRATION), count)
        got = labels.sum(axis=1).mean()
        if abs(got - target) > 0.1:
            raise InputError(
                f"topics_per_document={target!r}: this hierarchy cannot reach it (got {got:.2f});"
                f" allowed range for it is about [{self._min_topics():.2f}, 6.0]"
            )
        del k

    def _min_topics(self) -> float:
        _, _, labels = self.sample_labels(random_stream(self.shape.seed, _CALIBRATION), 20_000, 0.0)
        return float(labels.sum(axis=1).mean())

    # --- industries and regions ------------------------------------------------------------------
    def category_tree(self, category_set: str) -> Tree:
        """The tree of one of LYRL2004's category sets (``lyrl2004.CATEGORY_SETS``); flat for regions."""
        trees = {"topics": self.tree, "industries": self.industries.tree, "regions": self.regions.tree}
        return trees[category_set]

    def sample_industries(self, rng: np.random.Generator, count: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Industry codes of ``count`` documents: :data:`INDUSTRY_DOCUMENT_SHARE` of them get 1 + Poisson primary
        codes below the top nodes and their ancestors, except that :data:`INDUSTRY_NOT_CLOSED_SHARE` of those
        lose the first primary's immediate parent. ``(primaries, offsets, labels)`` as :meth:`sample_labels`.
        """
        labelled = rng.random(count) < INDUSTRY_DOCUMENT_SHARE
        extra = np.minimum(rng.poisson(_INDUSTRY_PRIMARIES, size=count), _MAX_PRIMARIES - 1)
        offsets = _counts_offsets(np.where(labelled, 1 + extra, 0))
        primaries = self.industries.draw(rng, int(offsets[-1]))
        labels = self.industries.labels(primaries, offsets)
        not_closed = np.flatnonzero(labelled & (rng.random(count) < INDUSTRY_NOT_CLOSED_SHARE))
        labels[not_closed, self.industries.tree.parent[primaries[offsets[not_closed]]]] = False
        return primaries, offsets, labels

    def sample_regions(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Regions of ``count`` documents, at least one each: 1 + Poisson(``region_lam``) draws (repeats count
        once in the labels). ``(draws, offsets, labels)`` as :meth:`sample_labels`.
        """
        offsets = _counts_offsets(1 + np.minimum(rng.poisson(self.region_lam, size=count), _MAX_REGIONS - 1))
        draws = self.regions.draw(rng, int(offsets[-1]))
        return draws, offsets, self.regions.labels(draws, offsets)

    # --- pickling: the string tables are rebuilt where they are used -------------------------
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_tables"] = None
        return state

    def tables(self) -> tuple[list[str], np.ndarray]:
        """Each word followed by a space, then each word followed by a newline; word lengths."""
        if self._tables is None:
            words = self.vocabulary
            strings = [w + " " for w in words] + [w + "\n" for w in words]
            lengths = np.array([len(w) for w in words], dtype=np.int64)
            self._tables = (strings, lengths)
        return self._tables


def build_model(shape: SyntheticShape, hierarchy_text: str | None = None) -> SyntheticModel:
    """The model for ``shape``; ``hierarchy_text`` is the content of an ``rcv1.topics.hier.orig``."""
    entries = parse_hierarchy_text(hierarchy_text) if hierarchy_text is not None else None
    return SyntheticModel(shape, entries)


# ---------------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------------


@dataclass
class Batch:
    """Consecutive documents: ids, token offsets (len + 1), flat token indices, and the label matrices of the
    topics (``labels``), the industries and the regions (documents x the set's codes, in code order).
    """

    doc_ids: np.ndarray
    offsets: np.ndarray
    tokens: np.ndarray
    labels: np.ndarray
    industries: np.ndarray
    regions: np.ndarray

    def __len__(self) -> int:
        return len(self.doc_ids)

    def slice(self, lo: int, hi: int) -> Batch:
        """Documents ``lo`` to ``hi`` (exclusive) of the batch, their token offsets rebased to 0."""
        a, b = int(self.offsets[lo]), int(self.offsets[hi])
        return Batch(self.doc_ids[lo:hi], self.offsets[lo:hi + 1] - a, self.tokens[a:b], self.labels[lo:hi],
                     self.industries[lo:hi], self.regions[lo:hi])

    def category_labels(self, category_set: str) -> np.ndarray:
        """The label matrix of one of ``lyrl2004.CATEGORY_SETS``."""
        matrices = {"topics": self.labels, "industries": self.industries, "regions": self.regions}
        return matrices[category_set]


def generate_block(model: SyntheticModel, block: int) -> Batch:
    """Documents at positions ``block * BLOCK_DOCUMENTS ..`` (fewer in the last block)."""
    shape = model.shape
    start = block * BLOCK_DOCUMENTS
    stop = min(start + BLOCK_DOCUMENTS, shape.documents)
    if not 0 <= start < stop:
        raise ValueError(f"block={block}: must be in [0, {-(-shape.documents // BLOCK_DOCUMENTS) - 1}]")
    count = stop - start
    rng = random_stream(shape.seed, _BLOCK, block)
    prim, poff, labels = model.sample_labels(rng, count)
    # lengths: log-normal with the requested mean
    mu = math.log(shape.tokens_per_document) - _LENGTH_SIGMA**2 / 2
    lengths = np.clip(np.rint(rng.lognormal(mu, _LENGTH_SIGMA, size=count)), 5,
                      10 * shape.tokens_per_document).astype(np.int64)
    offsets = _counts_offsets(lengths)
    total = int(offsets[-1])
    doc = np.repeat(np.arange(count), lengths)
    # token sources
    share = shape.topic_word_share
    if share > 0:
        a = share * _SIGNAL_CONCENTRATION
        b = (1 - share) * _SIGNAL_CONCENTRATION
        signal = rng.beta(a, b, size=count)
    else:
        signal = np.zeros(count)
    u_src = rng.random(total)
    is_topic = u_src < signal[doc]
    tokens = np.searchsorted(model.background_cdf, rng.random(total), side="right")
    if is_topic.any():
        tokens[is_topic] = _indicative_words(rng, prim, poff, doc[is_topic], model.anc_pad, model.topic_terms,
                                             model.topic_cdf)
    # industries and regions, from their own stream: some background tokens become their words
    aux = random_stream(shape.seed, _SET_BLOCK, block)
    ind_prim, ind_off, industries = model.sample_industries(aux, count)
    reg_draws, reg_off, regions = model.sample_regions(aux, count)
    u_set = aux.random(total)
    background = ~is_topic
    to_region = background & (u_set < _REGION_WORDS)
    to_industry = background & (u_set >= _REGION_WORDS) & (u_set < _REGION_WORDS + _INDUSTRY_WORDS)
    to_industry &= (ind_off[1:] > ind_off[:-1])[doc]
    for chosen, primaries, prim_offsets, category_set in (
            (to_region, reg_draws, reg_off, model.regions), (to_industry, ind_prim, ind_off, model.industries)):
        tokens[chosen] = _indicative_words(aux, primaries, prim_offsets, doc[chosen], category_set.ancestors,
                                           category_set.terms, category_set.term_cdf, category_set.tree.depth)
    # burstiness: repeat an earlier token of the same document
    pos = np.arange(total) - offsets[doc]
    rep = (rng.random(total) < _REPEAT) & (pos > 0)
    src = offsets[doc] + (rng.random(total) * pos).astype(np.int64)
    tokens = np.where(rep, tokens[src], tokens)
    tokens = np.minimum(tokens, shape.vocabulary_size - 1).astype(np.int32)
    return Batch(shape.doc_ids(start, stop), offsets, tokens, labels, industries, regions)


def generate_documents(model: SyntheticModel, start: int, stop: int) -> Iterator[Batch]:
    """Batches covering document positions ``start .. stop-1``, in order."""
    n = model.shape.documents
    if not 0 <= start <= stop <= n:
        raise ValueError(f"document range [{start}, {stop}): must lie within [0, {n}]")
    pos = start
    while pos < stop:
        block = pos // BLOCK_DOCUMENTS
        batch = generate_block(model, block)
        lo = pos - block * BLOCK_DOCUMENTS
        hi = min(stop - block * BLOCK_DOCUMENTS, len(batch))
        yield batch if (lo == 0 and hi == len(batch)) else batch.slice(lo, hi)
        pos = block * BLOCK_DOCUMENTS + hi


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------


def line_ends(offsets: np.ndarray, lengths: np.ndarray, width: int = LINE_WIDTH) -> np.ndarray:
    """Boolean per token: it ends a line when wrapping greedily to at most ``width`` characters (a token
    longer than ``width`` is a line of its own).
    """
    total = len(lengths)
    ends = np.zeros(total, dtype=bool)
    if total == 0:
        return ends
    # c[k] = position just after token k plus its separator; line from token i holds token k iff
    # c[k] - start_i - 1 <= width
    c = np.cumsum(lengths + 1)
    start_pos = c - (lengths + 1)
    cur = offsets[:-1].copy()
    doc_end = offsets[1:].copy()
    active = cur < doc_end
    cur, doc_end = cur[active], doc_end[active]
    while len(cur):
        j = np.searchsorted(c, start_pos[cur] + width + 1, side="right")
        j = np.clip(j, cur + 1, doc_end)
        ends[j - 1] = True
        keep = j < doc_end
        cur, doc_end = j[keep], doc_end[keep]
    return ends


def format_batch(model: SyntheticModel, batch: Batch) -> str:
    """The batch's records in the token-file layout: ``.I id``, ``.W``, the tokens wrapped by
    :func:`line_ends`, a blank line.
    """
    strings, wlen = model.tables()
    v = model.shape.vocabulary_size
    n = len(batch)
    if n == 0:
        return ""
    tok = batch.tokens.astype(np.int64)
    idx = tok + v * line_ends(batch.offsets, wlen[tok])
    heads = [f".I {i}\n.W\n" for i in batch.doc_ids.tolist()]
    table = strings + heads + ["\n"]
    # layout: head_0 tokens_0 "\n" head_1 tokens_1 "\n" ...
    lengths = batch.offsets[1:] - batch.offsets[:-1]
    out = np.empty(len(tok) + 2 * n, dtype=np.int64)
    doc = np.repeat(np.arange(n), lengths)
    out[np.arange(len(tok)) + 2 * doc + 1] = idx
    out[batch.offsets[:-1] + 2 * np.arange(n)] = 2 * v + np.arange(n)
    out[batch.offsets[1:] + 2 * np.arange(n) + 1] = 2 * v + n
    return "".join(map(table.__getitem__, out.tolist()))


def format_qrels(model: SyntheticModel, batch: Batch, category_set: str = "topics") -> str:
    """The qrels lines ``CATEGORY DOCID 1`` of ``category_set`` (``lyrl2004.CATEGORY_SETS``), by document then
    category code.
    """
    rows, cols = np.nonzero(batch.category_labels(category_set))
    heads = [f"{code} " for code in model.category_tree(category_set).codes]
    tails = [f"{doc_id} 1\n" for doc_id in batch.doc_ids.tolist()]
    parts = [""] * (2 * len(rows))
    parts[0::2] = map(heads.__getitem__, cols.tolist())
    parts[1::2] = map(tails.__getitem__, rows.tolist())
    return "".join(parts)


#: The synthetic corpus as ``corpus.format = "synthetic"`` (the embedded default): not read from corpus.path but
#: written by the synthesize stage as LYRL2004 token files and qrels, which the stages then read as ``lyrl2004``.
FORMAT = CorpusFormat(
    name="synthetic",
    title="synthetic RCV1-v2-like corpus",
    tokenized=True,
    category_sets=lyrl2004.CATEGORY_SETS,
    default_category_set="topics",
    hierarchical=True,
    written_as="lyrl2004",
)
