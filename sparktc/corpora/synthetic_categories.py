"""The names a synthetic LYRL2004-format corpus is made of, deterministic for a seed: the vocabulary of
pseudo-stems (:func:`generate_vocabulary`) and the three category sets, the topic hierarchy (the real
``rcv1.topics.hier.orig`` read by :func:`parse_hierarchy_text`, or one of its shape by :func:`generate_hierarchy`),
the industries tree (:func:`generate_industries_hierarchy`) and the regions list (:func:`generate_regions`), with
the :class:`Tree` the document model walks, and the random streams everything synthetic is drawn from
(:func:`random_stream`). What their shapes follow is told in :mod:`sparktc.corpora.synthetic`; the model
(:mod:`sparktc.corpora.synthetic_model`) and the documents (:mod:`sparktc.corpora.synthetic_documents`) are drawn
over them.

Pure numpy: no Spark here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sparktc.corpora import lyrl2004
from sparktc.corpora.lyrl2004 import ROOT, parse_hierarchy
from sparktc.errors import InputError

__all__ = ["BLOCK_STREAM", "CALIBRATION_STREAM", "HIERARCHY_FILE", "INDUSTRY_LEVELS", "INDUSTRY_TREE_STREAM",
           "REGION_CODES", "REGION_LIST_STREAM", "SET_BLOCK_STREAM", "SET_TERMS_STREAM", "TOPICS_STREAM", "TREE_STREAM",
           "Tree", "VOCABULARY_STREAM", "format_hierarchy", "format_regions", "generate_hierarchy",
           "generate_industries_hierarchy", "generate_regions", "generate_vocabulary", "parse_hierarchy_text",
           "random_stream"]

HIERARCHY_FILE = lyrl2004.HIERARCHY_FILE

# Industry codes at depths 1 (top) to 5, 354 in all; one digit per depth, so at most 10 top nodes, 5 depths and
# 9 children per node; region codes listed (module docstring of sparktc.corpora.synthetic: the two lists' sizes are
# RCV1's, the rest approximations).
INDUSTRY_LEVELS = (10, 60, 150, 110, 24)
REGION_CODES = 366

#: The SeedSequence spawn-key domains (:func:`random_stream`), one per use of randomness: the vocabulary, the topic
#: tree, the topics' indicative terms and masses, the calibration's simulation, a block of documents; then the
#: industries tree, the regions list, the industries' and regions' terms and draws, and their labels in a block of
#: documents (after the topics', so that those keep their streams).
VOCABULARY_STREAM, TREE_STREAM, TOPICS_STREAM, CALIBRATION_STREAM, BLOCK_STREAM = range(5)
INDUSTRY_TREE_STREAM, REGION_LIST_STREAM, SET_TERMS_STREAM, SET_BLOCK_STREAM = range(5, 9)

# Generated tree: the real hierarchy's shape.
_TREE_TOPICS = 103
_TREE_LEAVES = 82
_TREE_TOPS = 4


def random_stream(seed: int, *key: int) -> np.random.Generator:
    """The random stream of ``seed`` for the spawn key ``key`` (a domain above, then a block or size)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))



# ---------------------------------------------------------------------------------------------
# Hierarchy
# ---------------------------------------------------------------------------------------------

def parse_hierarchy_text(text: str, source: str = HIERARCHY_FILE) -> list[tuple[str, str, str]]:
    """``(parent, child, description)`` per topic of an ``rcv1.topics.hier.orig`` text, in file
    order, after the checks of :func:`sparktc.corpora.lyrl2004.parse_hierarchy` (Root line first).
    """
    hierarchy = parse_hierarchy(text.splitlines(), source)
    return [("None", ROOT, "No Description")] + [
        (parent, code, hierarchy.descriptions[code]) for code, parent in hierarchy.parent.items()
    ]


def format_hierarchy(entries: Sequence[tuple[str, str, str]]) -> str:
    """The ``rcv1.topics.hier.orig`` layout (columns padded to 8 like the real file)."""
    return "".join(f"parent: {p:<8}child: {c:<8}child-description: {d}\n" for p, c, d in entries)


def generate_hierarchy(seed: int) -> list[tuple[str, str, str]]:
    """A random tree shaped like RCV1's topic hierarchy (103 topics, 4 top nodes, 82 leaves).

    Returned in the real file's order: the Root line first, then for each top node its
    descendants (pre-order) followed by the top node's own line.
    """
    rng = random_stream(seed, TREE_STREAM)
    letters = sorted(rng.choice(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), size=_TREE_TOPS, replace=False))
    below = _TREE_TOPICS - _TREE_TOPS  # 99 nodes under the top nodes
    internal = _TREE_TOPICS - _TREE_LEAVES - _TREE_TOPS  # 17 internal nodes below the tops
    d4 = int(rng.integers(1, 3))  # depth-4 nodes, all under one depth-3 node
    d3 = int(rng.integers(40, 47))
    d2 = below - d3 - d4
    internal2 = internal - 1  # one internal node is at depth 3
    # depth-2 nodes per top node (each >= 3), Dirichlet-skewed
    per_top = 3 + rng.multinomial(d2 - 3 * _TREE_TOPS, rng.dirichlet(np.full(_TREE_TOPS, 1.5)))
    per_top = np.minimum(per_top, 60)
    while per_top.sum() < d2:
        per_top[int(np.argmin(per_top))] += 1
    # which depth-2 nodes are internal, and how many depth-3 children each gets (1..9)
    flat2 = [(t, k) for t in range(_TREE_TOPS) for k in range(int(per_top[t]))]
    chosen = sorted(rng.choice(len(flat2), size=internal2, replace=False).tolist())
    kids3 = np.ones(internal2, dtype=int)
    for _ in range(d3 - internal2):
        open_ = np.flatnonzero(kids3 < 9)
        kids3[int(rng.choice(open_))] += 1
    deep_parent = (int(rng.integers(internal2)), 0)  # (which internal depth-2 node, its first child)
    entries: list[tuple[str, str, str]] = [("None", ROOT, "No Description")]
    words = generate_vocabulary(seed, 2000)
    def desc() -> str:
        n = int(rng.integers(1, 3))
        return " ".join(words[int(i)].upper() for i in rng.integers(0, len(words), size=n))
    internal_of = {flat2[c]: j for j, c in enumerate(chosen)}
    for t, letter in enumerate(letters):
        top = f"{letter}CAT"
        # two-digit codes in groups (X11..X14, X21..X25, ...)
        codes2 = []
        group, item, group_size = 1, 1, int(rng.integers(2, 7))
        for _ in range(int(per_top[t])):
            codes2.append(f"{letter}{group}{item}")
            item += 1
            if item > group_size:
                group, item, group_size = group + 1, 1, int(rng.integers(2, 7))
        for k, code2 in enumerate(codes2):
            entries.append((top, code2, desc()))
            j = internal_of.get((t, k))
            if j is None:
                continue
            for m in range(int(kids3[j])):
                code3 = f"{code2}{m + 1}"
                entries.append((code2, code3, desc()))
                if (j, m) == deep_parent:
                    for q in range(d4):
                        entries.append((code3, f"{code3}{q + 1}", desc()))
        entries.append((ROOT, top, desc()))
    return entries


def _descriptions(words: Sequence[str], rng: np.random.Generator, count: int, most: int) -> list[str]:
    """``count`` upper-case descriptions of 1 to ``most`` of ``words``."""
    sizes = rng.integers(1, most + 1, size=count)
    return [" ".join(words[int(i)].upper() for i in rng.integers(0, len(words), size=int(k))) for k in sizes]


def _children_counts(rng: np.random.Generator, children: int, parents: int, every: bool) -> np.ndarray:
    """How many of ``children`` each of ``parents`` nodes gets: at least one each when ``every``, otherwise
    ``ceil(children / 3)`` parents chosen at random get at least one; skewed (Dirichlet), at most 9 each (one digit
    of the code).
    """
    internal = parents if every else min(parents, -(-children // 3))
    counts = 1 + rng.multinomial(children - internal, rng.dirichlet(np.full(internal, 1.5)))
    while counts.max() > 9:
        i = int(np.argmax(counts))
        spill, counts[i] = int(counts[i]) - 9, 9
        for _ in range(spill):
            counts[int(rng.choice(np.flatnonzero(counts < 9)))] += 1
    out = np.zeros(parents, dtype=np.int64)
    out[np.sort(rng.choice(parents, size=internal, replace=False))] = counts
    return out


def generate_industries_hierarchy(seed: int) -> list[tuple[str, str, str]]:
    """A random industries tree of :data:`INDUSTRY_LEVELS` codes per depth, as ``rcv1.industries.hier`` entries.

    A code is ``I`` and 5 digits spelling its path: the top nodes ``I<d>0000`` (``d`` = 0 .. 9), and a node at depth
    ``k`` its parent's code with digit ``k`` set to 1-9. Returned with the Root line first, then the nodes in
    pre-order (each parent before its children, siblings by code).
    """
    rng = random_stream(seed, INDUSTRY_TREE_STREAM)
    levels = [[f"I{d}0000" for d in range(INDUSTRY_LEVELS[0])]]
    children: dict[str, list[str]] = {}
    for depth, size in enumerate(INDUSTRY_LEVELS[1:], start=2):
        level = []
        for parent, k in zip(levels[-1], _children_counts(rng, size, len(levels[-1]), every=depth == 2)):
            digits = np.sort(rng.choice(9, size=int(k), replace=False)) + 1
            children[parent] = [f"{parent[:depth]}{d}{parent[depth + 1:]}" for d in digits.tolist()]
            level.extend(children[parent])
        levels.append(level)
    order: list[tuple[str, str]] = []
    stack = [(ROOT, top) for top in reversed(levels[0])]
    while stack:
        parent, code = stack.pop()
        order.append((parent, code))
        stack.extend((code, child) for child in reversed(children.get(code, [])))
    descriptions = _descriptions(generate_vocabulary(seed, 2000), rng, len(order), 3)
    return [("None", ROOT, "No Description")] + [(p, c, d) for (p, c), d in zip(order, descriptions)]


def generate_regions(seed: int) -> list[tuple[str, str]]:
    """:data:`REGION_CODES` ``(code, description)`` pairs sorted by code: made-up country names of 1 to 3 words and
    codes of 3 to 7 upper-case letters or digits taken from them (``BRAVONIA`` -> ``BRAV``).
    """
    rng = random_stream(seed, REGION_LIST_STREAM)
    words = generate_vocabulary(seed, 2000)
    regions: dict[str, str] = {}
    while len(regions) < REGION_CODES:
        name = _descriptions(words, rng, 1, 3)[0]
        letters = name.replace(" ", "")
        if len(letters) < 3:
            continue
        shortest = int(rng.integers(3, 6))
        candidates = [letters[:k] for k in range(shortest, min(7, len(letters)) + 1)]
        candidates += [f"{letters[:5]}{n}" for n in range(1, 100)]
        regions[next(code for code in candidates if code not in regions)] = name
    return sorted(regions.items())


def format_regions(regions: Sequence[tuple[str, str]]) -> str:
    """The ``rcv1.regions.txt`` layout: ``CODE  DESCRIPTION`` per line, the codes padded to 8 columns."""
    return "".join(f"{code:<8}{description}\n" for code, description in regions)


@dataclass
class Tree:
    """A category set (sorted by code; qrels order) with parent index, depth (top = 1) and top node; a flat set
    (regions) has every category at the top.
    """

    codes: list[str]
    parent: np.ndarray  # -1 for top nodes
    depth: np.ndarray
    top: np.ndarray  # index (into codes) of each topic's top node
    tops: list[int]  # top nodes in the hierarchy file's order
    entries: list[tuple[str, str, str]]

    @classmethod
    def from_entries(cls, entries: Sequence[tuple[str, str, str]]) -> Tree:
        """The tree of hierarchy ``entries`` (parent, child, description), Root first, as the file lists them."""
        parent_of = {}
        for p, c, _ in entries:
            if c == ROOT:
                continue
            if c in parent_of:
                raise ValueError(f"hierarchy: category {c} listed twice")
            parent_of[c] = p
        codes = sorted(parent_of)
        index = {c: i for i, c in enumerate(codes)}
        parent = np.full(len(codes), -1, dtype=np.int64)
        for c, p in parent_of.items():
            if p != ROOT:
                if p not in index:
                    raise ValueError(f"hierarchy: parent {p} of {c} is not a category")
                parent[index[c]] = index[p]
        depth = np.zeros(len(codes), dtype=np.int64)
        top = np.zeros(len(codes), dtype=np.int64)
        for i in range(len(codes)):
            j, d, seen = i, 1, 0
            while parent[j] >= 0:
                j, d, seen = int(parent[j]), d + 1, seen + 1
                if seen > len(codes):
                    raise ValueError("hierarchy: cycle")
            depth[i], top[i] = d, j
        tops = [index[c] for p, c, _ in entries if p == ROOT]
        if not tops:
            raise InputError("hierarchy: no top node under Root")
        return cls(codes, parent, depth, top, tops, list(entries))

    def ancestors(self, i: int) -> list[int]:
        """``i`` and its ancestors, nearest first."""
        out = [i]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        return out


# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

_ONSETS = ("", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
           "y", "z", "bl", "br", "ch", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "pl", "pr", "sc", "sh",
           "sk", "sl", "sm", "sn", "sp", "st", "str", "sw", "th", "tr", "tw", "wh", "qu")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ee", "ie", "oa", "ou", "io", "y")
_CODAS = ("", "", "", "n", "r", "s", "t", "l", "m", "nt", "nd", "st", "rt", "ck", "ng", "ct", "rm",
          "rk", "ld", "sh", "ch", "x", "p", "g", "v", "d")
_ENDINGS = ("", "", "", "", "", "i", "er", "al", "ic", "iz", "at", "abl", "ent", "ism", "ist", "ous",
            "iv", "ion", "ment", "ant", "li", "ri")


def generate_vocabulary(seed: int, size: int) -> list[str]:
    """``size`` unique lower-case pseudo-stems; index 0 is the most frequent (shorter first)."""
    rng = random_stream(seed, VOCABULARY_STREAM, size)
    words: dict[str, None] = {}
    tries = 0
    while len(words) < size:
        tries += 1
        if tries > 50:  # pragma: no cover - the syllable space is far larger than any limit
            raise ValueError(f"vocabulary_size={size}: could not generate that many unique words")
        n = max(2 * (size - len(words)), 1000)
        syll = rng.choice([1, 2, 3, 4], size=n, p=[0.3, 0.5, 0.17, 0.03])
        ons = rng.integers(0, len(_ONSETS), size=(n, 4))
        vow = rng.integers(0, len(_VOWELS), size=(n, 4))
        cod = rng.integers(0, len(_CODAS), size=(n, 4))
        end = rng.integers(0, len(_ENDINGS), size=n)
        for i in range(n):
            w = "".join(_ONSETS[ons[i, k]] + _VOWELS[vow[i, k]] + _CODAS[cod[i, k]] for k in range(syll[i]))
            w += _ENDINGS[end[i]]
            if 2 <= len(w) <= 14 and w not in words:
                words[w] = None
                if len(words) == size:
                    break
    out = list(words)
    # frequent ranks get shorter words (with noise), like natural language
    key = np.array([len(w) for w in out], dtype=float) + rng.normal(0.0, 2.0, size=len(out))
    order = np.argsort(key, kind="stable")
    return [out[i] for i in order]
