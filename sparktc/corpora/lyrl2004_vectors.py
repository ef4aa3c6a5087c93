"""Reader for the RCV1-v2 LYRL2004 vector files: documents as given ltc-weighted, cosine-normalized vectors.

Format (Lewis, Yang, Rose & Li 2004, "RCV1: A New Benchmark Collection for Text Categorization Research",
JMLR 5, online appendix 13; the files scikit-learn's ``fetch_rcv1`` downloads):

* ``lyrl2004_vectors_train.dat`` and ``lyrl2004_vectors_test_pt0.dat`` .. ``pt3.dat`` (distributed gzipped,
  ``.gz``), the same LYRL2004 split as the token files (docs/REFERENCE.md section 1);
* one document per line::

      DOCID  TERMID:WEIGHT TERMID:WEIGHT ...
      2286  1:0.2685 4:0.2153 ...            (an illustration, not a line of the real file)

  the document id, white space (two spaces in the distributed files; any run is accepted), then the
  features ``TERMID:WEIGHT`` separated by white space.

A term id is a numeric id of the appendix's term dictionary (online appendix 14, built on the training
documents). The paper does not say where the ids start; this reader takes whole numbers from 1, as sparse
files of this style (SVMlight, LIBSVM) count, and rejects 0. A weight is the term's ltc weight, the vector
already divided by its Euclidean norm (the paper's section on text representation), so the pipeline uses the
vectors as given (``weight.scheme = "given"``) and never re-weights or re-normalizes them.

A document's features are stored as its tokens, ``termid:weight`` strings in ascending term id order (the
term id without leading zeros, the weight as Python's shortest round-trip repr of the float), as the LIBSVM
reader stores its features; ``labels`` stay empty: they come from the qrels file. A line with a doc id and no
features is an empty vector, accepted (the pipeline reports documents without terms). Repeated doc ids are
left to the ingest stage, which finds them across all files. The reader never raises on bad input: a line it
cannot take is a Reject naming the line, the doc id when known, the bad field and what is expected, and a file
of another name is one Reject (line 0) for the whole file.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Iterator, Sequence

from sparktc.corpora import lyrl2004
from sparktc.corpora.files import line_reader
from sparktc.corpora.formats import QRELS, CorpusFormat
from sparktc.corpora.lyrl2004 import doc_id_problem
from sparktc.corpora.records import TEST, TRAIN, Document, FeatureSyntax, Reject, decoded_line

TRAIN_FILE = "lyrl2004_vectors_train.dat"
TEST_FILES = {part: f"lyrl2004_vectors_test_pt{part}.dat" for part in range(4)}
VECTOR_FILES = (TRAIN_FILE, *TEST_FILES.values())
#: The largest term id read: the weight stage orders the terms of given vectors as Spark longs.
MAX_TERM_ID = 2**63 - 1

_FORMAT_HINT = "each line is 'DOCID  TERMID:WEIGHT TERMID:WEIGHT ...' (Lewis et al. 2004, online appendix 13)"
_FEATURE_HINT = "each feature is 'termid:weight', a whole number from 1 and a decimal number, as in '864:0.0497'"
_FEATURES = FeatureSyntax(index="term id", value="weight", form="'termid:weight'", maximum=MAX_TERM_ID,
                          hint=_FEATURE_HINT, below_one=_FEATURE_HINT,
                          over_maximum="; term ids are the term dictionary's numbers")


def split_of(source: str) -> str:
    """``"train"`` or ``"test"`` for a LYRL2004 vector file name (any directory, ``.gz`` or not)."""
    name = source.rstrip("/").rsplit("/", 1)[-1]
    base = name.removesuffix(".gz")
    if base == TRAIN_FILE:
        return TRAIN
    if base in TEST_FILES.values():
        return TEST
    raise ValueError(
        f"{source!r} is not a LYRL2004 vector file; expected one of {', '.join(VECTOR_FILES)} (optionally .gz)"
    )


def _record(fields: list[str], split: str, source: str, line: int) -> Document | Reject:
    """The Document of a non-blank line's ``fields``, or the Reject naming its first bad field."""
    doc_id = fields[0]
    problem = doc_id_problem(doc_id)
    if problem is not None:
        if ":" in doc_id:
            return Reject(source, line, None, f"line starts with feature {reprlib.repr(doc_id)}, not a doc id; "
                                              f"{_FORMAT_HINT}")
        return Reject(source, line, None, f"{problem}; LYRL2004 ids are decimal numbers; {_FORMAT_HINT}")
    weights: dict[int, tuple[str, float]] = {}
    for field in fields[1:]:
        parsed = _FEATURES.parse(field)
        if isinstance(parsed, str):
            return Reject(source, line, doc_id, parsed)
        term, value = parsed
        if term in weights:
            first = reprlib.repr(weights[term][0])
            return Reject(source, line, doc_id, f"term id {term} repeated ({first} and {reprlib.repr(field)}); "
                                                "give each term once per document")
        weights[term] = (field, value)
    tokens = tuple(f"{term}:{weights[term][1]!r}" for term in sorted(weights))
    return Document(doc_id, split, (), None, tokens, source, line)


def parse_vector_file(lines: Iterable[bytes], source: str) -> Iterator[Document | Reject]:
    """Yield a Document (``tokens`` set to the features, ``text=None``, ``labels=()``) or a Reject per
    non-blank line (numbered from 1); CRLF endings and surrounding white space are ignored.

    Rejected, with the line number: a non-UTF-8 line, a doc id that is not a canonical number (the token
    reader's rule: digits, no leading zeros), a field that is not ``termid:weight``, a term id that is not a
    whole number from 1 to :data:`MAX_TERM_ID`, a weight that is not a finite decimal number, and a term id
    repeated on its line. A file not named as one of :data:`VECTOR_FILES` (optionally ``.gz``) is one Reject
    (line 0) and none of its lines is read.
    """
    try:
        split = split_of(source)
    except ValueError:
        yield Reject(source, 0, None, f"not a LYRL2004 vector file name; expected one of {', '.join(VECTOR_FILES)} "
                                      "(optionally .gz)")
        return
    for number, raw in enumerate(lines, 1):
        text = decoded_line(raw, source, number)
        if isinstance(text, Reject):
            yield text
        elif fields := text.split():
            yield _record(fields, split, source, number)


def vector_files(test_parts: Sequence[int]) -> tuple[str, ...]:
    """The vector files of a LYRL2004 corpus read with ``corpus.test_parts``: the training file and those parts."""
    return (TRAIN_FILE, *(TEST_FILES[part] for part in test_parts))


#: LYRL2004's vector files as ``corpus.format = "lyrl2004_vectors"``: given vectors, labelled from the qrels as the
#: token files are.
FORMAT = CorpusFormat(
    name="lyrl2004_vectors",
    title="RCV1-v2 (LYRL2004 vectors)",
    assembly=QRELS,
    names=lyrl2004.corpus_names(VECTOR_FILES, "LYRL2004 vector and qrels files"),
    hint=lyrl2004.CORPUS_HINT,
    reader=line_reader(parse_vector_file),
    document_files=vector_files,
    tokenized=True,
    vectors=True,
    category_sets=lyrl2004.CATEGORY_SETS,
    default_category_set="topics",
    hierarchical=True,
)
