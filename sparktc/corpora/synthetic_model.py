"""The model a synthetic LYRL2004-format corpus's documents are drawn from (:class:`SyntheticModel`), a function of
the shape and the topic hierarchy only: the background word distribution, each category's indicative terms, the
primary topics' masses and how industries and regions are drawn. What it generates is told in
:mod:`sparktc.corpora.synthetic`; the documents are drawn from it by :mod:`sparktc.corpora.synthetic_documents`.

Pure numpy: no Spark here.

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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sparktc.corpora.lyrl2004 import ROOT
from sparktc.corpora.synthetic import SyntheticShape
from sparktc.corpora.synthetic_categories import (
    CALIBRATION_STREAM,
    SET_TERMS_STREAM,
    TOPICS_STREAM,
    Tree,
    generate_hierarchy,
    generate_industries_hierarchy,
    generate_regions,
    generate_vocabulary,
    parse_hierarchy_text,
    random_stream,
)
from sparktc.errors import InputError

TOP_SHARES = (0.474, 0.149, 0.297, 0.255)  # CCAT ECAT GCAT MCAT: share of documents

# Industries and regions (sparktc.corpora.synthetic's docstring: the two lists' sizes are RCV1's, the rest
# approximations; the code lists themselves, INDUSTRY_LEVELS and REGION_CODES, in synthetic_categories).
REGIONS_ASSIGNED = 300  # region codes that occur in the corpus (296 in RCV1); the others are only listed
INDUSTRY_DOCUMENT_SHARE = 0.35  # documents with industry codes
INDUSTRY_NOT_CLOSED_SHARE = 0.02  # of those, the documents whose first code misses its immediate parent
REGIONS_PER_DOCUMENT = 1.5  # distinct regions per document, on average

_ZIPF_S, _ZIPF_Q = 1.0, 2.7  # background: p(rank r) ~ 1 / (r + q)^s
_TOPIC_TERMS = (150, 400)  # indicative terms per topic
_SHARE_WITH_PARENT = 0.35  # fraction of a child's indicative terms taken from its parent's
_SAME_SUBTREE = 0.4  # chance that a later primary topic stays under the first one's top node
_MAX_PRIMARIES = 8
# Indicative-term sets (:func:`_indicative_terms`): an industry's shares _SHARE_WITH_PARENT with its parent's; a
# region's are few, rarer words, one or two of them in most of its documents (names of the country, its places).
_INDUSTRY_TERMS = {"sizes": (15, 40), "lo_rank": 200, "weights": (1.0, 1.5)}
_REGION_TERMS = {"sizes": (5, 15), "lo_rank": 300, "weights": (1.0, 2.0)}
_INDUSTRY_PRIMARIES = 0.35  # Poisson mean of a document's extra primary industry codes
_MAX_REGIONS = 12  # region draws per document at most
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


#: Buckets per unit of a guide table (:func:`guide_table`); a power of two, so that a key's bucket is exact.
GUIDE_BUCKETS = 4096


def guide_table(cdf: np.ndarray, top: int) -> np.ndarray:
    """Where the keys of each bucket ``[b, b + 1] / GUIDE_BUCKETS`` of ``[0, top]`` start among ``cdf`` (ascending):
    ``searchsorted(cdf, b / GUIDE_BUCKETS, side="right")`` for b = 0 .. top * GUIDE_BUCKETS, the guide table of Chen
    and Asau's indexed search for drawing from a discrete distribution (:func:`guided_search`).
    """
    return np.searchsorted(cdf, np.arange(top * GUIDE_BUCKETS + 1) / GUIDE_BUCKETS, side="right")


def guided_search(cdf: np.ndarray, table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.searchsorted(cdf, keys, side="right")`` for keys in ``[0, top]``, the same integers, with ``table`` =
    ``guide_table(cdf, top)``: a key's answer lies between its bucket's two ends' (it grows with the key), so it is
    found there unless a value of ``cdf`` falls inside the bucket; only those keys (a few in a hundred for a
    hundred-odd values) are searched. Several times faster than the binary search of every key.
    """
    bucket = np.minimum((keys * GUIDE_BUCKETS).astype(np.int64), len(table) - 2)  # exact: a power of two
    found = table[bucket]
    inside = found != table[bucket + 1]
    found[inside] = np.searchsorted(cdf, keys[inside], side="right")
    return found


def counts_offsets(counts: np.ndarray) -> np.ndarray:
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

        rng = random_stream(shape.seed, TOPICS_STREAM)
        self.anc_pad = _ancestor_table(tree)  # self, parent, ..., top, top...
        # each topic's ancestor closure as bits, 64 topics to a word (:meth:`_mean_labels`)
        self._ancestor_bits = np.zeros((n_topics, -(-n_topics // 64)), dtype=np.uint64)
        for topic, ancestors in enumerate(self.anc_pad):
            for ancestor in set(ancestors.tolist()):
                self._ancestor_bits[topic, ancestor // 64] |= np.uint64(1) << np.uint64(ancestor % 64)
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
        rng = random_stream(shape.seed, SET_TERMS_STREAM)
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
        self._mass_guide = guide_table(self.mass_cdf, 1)
        # per top node: distribution restricted to its subtree (flat cdf trick, offset by k)
        cdfs = []
        for k, t in enumerate(self.tree.tops):
            m = np.where(tree.top == t, mass, 0.0)
            c = np.cumsum(m / m.sum())
            c[-1] = 1.0
            cdfs.append(c + k)
        self.sub_cdf = np.concatenate(cdfs)
        self._sub_guide = guide_table(self.sub_cdf, len(cdfs))
        self.top_slot = np.zeros(len(tree.codes), dtype=np.int64)  # topic -> k of its top node
        for k, t in enumerate(tree.tops):
            self.top_slot[tree.top == t] = k

    def sample_labels(self, rng: np.random.Generator, count: int, lam: float | None = None):
        """Primary topics and label sets (ancestor closure) of ``count`` documents.

        Returns ``(primaries, prim_offsets, labels)``: flat primary topic indices, the offsets of
        each document's primaries (length ``count + 1``) and a ``count x topics`` boolean matrix.
        """
        prim, offsets, doc = self._primaries(rng, count, self.lam if lam is None else lam)
        labels = np.zeros((count, len(self.tree.codes)), dtype=bool)
        depth = self.anc_pad.shape[1]
        labels[np.repeat(doc, depth), self.anc_pad[prim].ravel()] = True
        return prim, offsets, labels

    def _mean_labels(self, rng: np.random.Generator, count: int, lam: float) -> float:
        """The mean label-set size of :meth:`sample_labels`'s documents for the same arguments, the same float,
        without its ``count x topics`` matrix: each document's labels as the union of its primaries' ancestor bits
        (the calibration asks this about 180 times per model).
        """
        prim, offsets, _ = self._primaries(rng, count, lam)
        per_document = np.bitwise_or.reduceat(self._ancestor_bits[prim], offsets[:-1], axis=0)  # every m >= 1
        return int(np.bitwise_count(per_document).sum()) / count  # the integer total, divided once: exact

    def _primaries(self, rng: np.random.Generator, count: int, lam: float) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray]:
        """The primary topics of ``count`` documents: ``(primaries, offsets, document of each primary)``."""
        m = 1 + np.minimum(rng.poisson(lam, size=count), _MAX_PRIMARIES - 1)
        offsets = counts_offsets(m)
        total = int(offsets[-1])
        doc = np.repeat(np.arange(count), m)
        first_pos = offsets[:-1]
        u = rng.random(total)
        free = guided_search(self.mass_cdf, self._mass_guide, u)
        first = free[first_pos]
        stay = rng.random(total) < _SAME_SUBTREE
        slot = self.top_slot[first][doc]
        sub = guided_search(self.sub_cdf, self._sub_guide, slot + rng.random(total)) - slot * len(self.tree.codes)
        prim = np.where(stay, sub, free)
        prim[first_pos] = first
        return np.minimum(prim, len(self.tree.codes) - 1), offsets, doc

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
                if self._mean_labels(random_stream(self.shape.seed, CALIBRATION_STREAM), count, mid) < target:
                    lo = mid
                else:
                    hi = mid
            self.lam = (lo + hi) / 2
            if self.top_targets is None:
                break
            _, _, labels = self.sample_labels(random_stream(self.shape.seed, CALIBRATION_STREAM), count)
            share = labels[:, tops_idx].mean(axis=0)
            scale = scale * (self.top_targets / np.maximum(share, 1e-9))
        got = self._mean_labels(random_stream(self.shape.seed, CALIBRATION_STREAM), count, self.lam)
        if abs(got - target) > 0.1:
            raise InputError(
                f"topics_per_document={target!r}: this hierarchy cannot reach it (got {got:.2f});"
                f" allowed range for it is about [{self._min_topics():.2f}, 6.0]"
            )
        del k

    def _min_topics(self) -> float:
        return self._mean_labels(random_stream(self.shape.seed, CALIBRATION_STREAM), 20_000, 0.0)

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
        offsets = counts_offsets(np.where(labelled, 1 + extra, 0))
        primaries = self.industries.draw(rng, int(offsets[-1]))
        labels = self.industries.labels(primaries, offsets)
        not_closed = np.flatnonzero(labelled & (rng.random(count) < INDUSTRY_NOT_CLOSED_SHARE))
        labels[not_closed, self.industries.tree.parent[primaries[offsets[not_closed]]]] = False
        return primaries, offsets, labels

    def sample_regions(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Regions of ``count`` documents, at least one each: 1 + Poisson(``region_lam``) draws (repeats count
        once in the labels). ``(draws, offsets, labels)`` as :meth:`sample_labels`.
        """
        offsets = counts_offsets(1 + np.minimum(rng.poisson(self.region_lam, size=count), _MAX_REGIONS - 1))
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


@lru_cache(maxsize=4)
def build_model(shape: SyntheticShape, hierarchy_text: str | None = None) -> SyntheticModel:
    """The model for ``shape``; ``hierarchy_text`` is the content of an ``rcv1.topics.hier.orig``.

    Made once per process for each (shape, hierarchy): a model is a function of the two and never changed once
    built, and its calibration (about 180 label-set samples of 40,000 documents) costs the driver 1 to 2 CPU-s, which
    a notebook or an API session that synthesizes the same corpus again would pay each time.
    """
    entries = parse_hierarchy_text(hierarchy_text) if hierarchy_text is not None else None
    return SyntheticModel(shape, entries)

