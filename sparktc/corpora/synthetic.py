"""A synthetic corpus in exactly the LYRL2004 (RCV1-v2) format, deterministic for a seed.

Pure numpy: no Spark here (the Spark layer is :mod:`sparktc.stages.synthesize`). This module holds the corpus's
shape (:class:`SyntheticShape`) and files; the model the documents are drawn from is
:mod:`sparktc.corpora.synthetic_model` (its calibration told there), the documents drawn and written as LYRL2004
text :mod:`sparktc.corpora.synthetic_documents` (its determinism told there), over the names of
:mod:`sparktc.corpora.synthetic_categories`.

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

  - 35% of the documents (:data:`~sparktc.corpora.synthetic_model.INDUSTRY_DOCUMENT_SHARE`) get
    industry codes: 1 + Poisson(0.35) primary codes below the top nodes (skewed: the most frequent
    in about 12% of those documents, and with RCV1's 23,149 training documents about 40 of the 354
    codes have no training positive), closed under the tree (about 4.5 codes per such document),
    except that in 2% of them (:data:`~sparktc.corpora.synthetic_model.INDUSTRY_NOT_CLOSED_SHARE`,
    drawn per document) the first primary code's immediate parent is left out: LYRL2004 section
    3.2 reports that the hierarchy policy was applied imperfectly to industries, and ingest's
    hierarchy-closure report finds them;
  - every document gets at least one region (LYRL2004's minimum code policy): 1 + Poisson(lambda)
    draws, lambda solved so that a document has 1.5 distinct regions on average
    (:data:`~sparktc.corpora.synthetic_model.REGIONS_PER_DOCUMENT`), from a very skewed curve over
    300 of the 366 codes: the most frequent drawn 24% of the time (in about a third of the
    documents), about 20 regions in more than 1% of the documents, and with 23,149 training
    documents about 120 of the 366 codes have no training positive (the 66 listed but never
    assigned among them).

  Each industry and region has its own indicative-term set, smaller and more concentrated than a
  topic's (a region's 5 to 15 rarer words, one or two of which, like a country's name, occur in
  most of its documents; an industry's 15 to 40, sharing part of its parent's), and of a
  labelled document's background tokens 30% become words of its industries (of any code of a
  primary's chain alike, so that every code of the closure has its words) and 15% words of its
  regions. Both sets are thus learnable from the tokens; the lengths and the topic words are as
  without them, and the chance of a repeat (``_REPEAT`` = 0.31, in
  :mod:`sparktc.corpora.synthetic_documents`) is set so that, with these concentrated words, a
  document keeps ~75 distinct terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from sparktc.corpora import lyrl2004
from sparktc.corpora.formats import CorpusFormat

# --- the real corpus's shape (LYRL2004) -----------------------------------------------------
RCV1_DOCUMENTS = 804_414
RCV1_TRAIN_DOCUMENTS = 23_149
RCV1_TEST_PARTS = (199_328, 199_339, 199_576, 183_022)
TRAIN_FIRST_ID = 2286
TEST_FIRST_ID = 26151

# The files written: LYRL2004's, the token and qrels files gzipped as they are distributed.
TRAIN_FILE = f"{lyrl2004.TRAIN_FILE}.gz"
TEST_FILES = tuple(f"{name}.gz" for name in lyrl2004.TEST_FILES)
QRELS_FILES = {category_set: f"{name}.gz" for category_set, name in lyrl2004.QRELS_FILES.items()}
QRELS_FILE = QRELS_FILES["topics"]


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
