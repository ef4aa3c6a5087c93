"""The documents of a synthetic LYRL2004-format corpus, drawn from its model
(:class:`~sparktc.corpora.synthetic_model.SyntheticModel`) a block at a time (:class:`Batch`), and written as
LYRL2004 text: token-file records wrapped at :data:`LINE_WIDTH` characters and qrels lines. What is generated is
told in :mod:`sparktc.corpora.synthetic`.

Pure numpy: no Spark here (the Spark layer is :mod:`sparktc.stages.synthesize`).

Determinism
-----------
All randomness for documents is keyed by the *block* (``BLOCK_DOCUMENTS`` consecutive document
positions) through ``numpy.random.SeedSequence(seed, spawn_key=(domain, block))``; the model
(vocabulary, trees, region list, indicative terms, calibration) is keyed by the seed alone. So
the corpus content depends only on the shape (including the seed), never on how many chunks or
tasks produce it: the same shape gives the same documents and the same labels of all three
category sets whatever ``chunk_documents`` or the Spark parallelism.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from sparktc.corpora.synthetic_categories import BLOCK_STREAM, SET_BLOCK_STREAM, random_stream
from sparktc.corpora.synthetic_model import SyntheticModel, counts_offsets

BLOCK_DOCUMENTS = 1000  # unit of randomness; chunk sizes need not be multiples of it
LINE_WIDTH = 80  # token lines are wrapped greedily to at most this many characters

_REPEAT = 0.31  # chance that a token repeats an earlier token of the document
_LENGTH_SIGMA = 0.75
_SIGNAL_CONCENTRATION = 6.0  # Beta concentration of a document's topic-word share
_UP_STEPS = (0.6, 0.25, 0.1, 0.05)  # topic word from the primary, its parent, grandparent, ...
_INDUSTRY_WORDS, _REGION_WORDS = 0.3, 0.15  # share of a labelled document's background tokens that become its words


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
    rng = random_stream(shape.seed, BLOCK_STREAM, block)
    prim, poff, labels = model.sample_labels(rng, count)
    # lengths: log-normal with the requested mean
    mu = math.log(shape.tokens_per_document) - _LENGTH_SIGMA**2 / 2
    lengths = np.clip(np.rint(rng.lognormal(mu, _LENGTH_SIGMA, size=count)), 5,
                      10 * shape.tokens_per_document).astype(np.int64)
    offsets = counts_offsets(lengths)
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
    aux = random_stream(shape.seed, SET_BLOCK_STREAM, block)
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
