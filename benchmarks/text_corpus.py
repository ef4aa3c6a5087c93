r"""A synthetic raw-text corpus in sparktc's JSON Lines format, deterministic for a seed, RCV1-v2-shaped.

    .venv/bin/python -m benchmarks.text_corpus --output DIR [--documents 200000] [--files 8] [--seed 0] \
        [--words 220] [--labels 100] [--train-share 0.02878] [--gzip]

Writes ``DIR/part-000.jsonl`` .. (``.jsonl.gz`` with ``--gzip``), one ``{"id", "text", "labels", "split"}``
object per line (conf/jsonl.toml, :mod:`sparktc.corpora.jsonl`), and ``DIR/corpus.json`` (the shape and what was
written). Pure numpy and the standard library; used by ``benchmarks/text_scale.py``.

What the text is like
---------------------
The text is made to exercise the whole LYRL2004 recipe (REFERENCE.md section 2: lower case, punctuation
removed, digit-only tokens dropped, SMART stop list, Porter stemmer), not to be read:

* **Words** are English-like roots built from syllables (``strant``, ``cloumer``, ``pleation``), a few with an
  ``é``, each a noun, a verb or an adjective with Porter-relevant endings (``-ation``, ``-ize``, ``-ment``,
  ``-ness``, ``-ive``, ...) and written inflected as English spells it: plurals (``-s``, ``-es``, ``-ies``), verb
  forms (``-ed``, ``-ing`` with the silent ``e`` dropped, ``-ies``/``-ied``), adverbs and comparatives (``-ly``,
  ``-ily``, ``-er``, ``-est``, ``-ness``). So the stemmer maps several surface forms to one stem. Background words
  follow a Zipf curve over the roots (exponent 1.07); short roots take the frequent ranks.
* **Stop words** (about 42% of the words, the share of running English): the 110 commonest English function
  words, all on the SMART list, on a Zipf curve (``the``, ``of``, ``to``, ...).
* **Categories**: ``--labels`` codes in RCV1's style (``C15``, ``E212``, ``GCRIM``-like), with skewed frequencies
  (the commonest in about 40% of the documents, the rarest in well under 0.1%), 1 + Poisson(2.2) labels per document
  (RCV1-v2: about 3.2). Each category has 40 indicative roots (from the middle of the frequency curve, some shared
  between categories), and 14% of a document's words are indicative words of its categories, so the labels can be
  learnt from the text.
* **Surface**: sentences of about 18 words, the first word capitalized, ending in ``.`` (sometimes ``?``, ``!``);
  commas, semicolons, colons, dashes standing alone (`` - ``, ``--``), hyphenated compounds (``long-term``),
  possessives (``'s`` and ``’s``), quotes and parentheses; proper names capitalized, a few acronyms in capitals
  (``OPEC``-like), paragraph breaks (``\n\n``) and tabs; numbers in many forms (``1,250``, ``3.5%``, ``$4.2``,
  ``1987``: dropped as digit-only once the punctuation is gone; ``12m``, ``1st``, ``Q3``: kept).
* **Shape**: a log-normal number of words per document around ``--words`` (220: "a few hundred words"), so about
  1.5 kB a line. The training documents are the first ``round(N * train_share)`` ids (RCV1-v2's chronological
  split, 23,149 of 804,414: 2.878%); ids are integers from 100,000 (JSON numbers, which sparktc stores as strings).

Determinism: documents are generated in blocks of :data:`BLOCK_DOCUMENTS` consecutive ids, each block's randomness
keyed by ``numpy.random.SeedSequence(seed, spawn_key=(1, block))`` and the model (roots, categories, indicative
sets) by the seed alone, so the corpus depends only on (documents, seed, words, labels, train_share), not on how
many files it is cut into; the files hold consecutive ids, as evenly as the blocks allow.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness_text_corpus import RCV1_TRAIN_SHARE, TextShape, write_corpus


def main(argv: Sequence[str] | None = None) -> int:
    """Write the synthetic corpus the arguments describe, with its corpus.json (module docstring); the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", required=True, help="directory for the *.jsonl files and corpus.json")
    parser.add_argument("--documents", type=int, default=TextShape.documents)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--words", type=int, default=TextShape.words, help="mean words per document")
    parser.add_argument("--labels", type=int, default=TextShape.labels)
    parser.add_argument("--train-share", type=float, default=RCV1_TRAIN_SHARE)
    parser.add_argument("--gzip", action="store_true", help="write .jsonl.gz files")
    arguments = parser.parse_args(argv)
    if arguments.documents < 1 or arguments.files < 1 or arguments.words < 1 or not 1 <= arguments.labels <= 500 \
            or not 0 < arguments.train_share < 1:
        parser.error("expected --documents, --files, --words >= 1, 1 <= --labels <= 500, 0 < --train-share < 1")
    shape = TextShape(arguments.documents, arguments.seed, arguments.words, arguments.labels, arguments.train_share)
    record = write_corpus(Path(arguments.output), shape, arguments.files, arguments.gzip)
    print(f"text_corpus: {shape.documents:,} documents ({shape.train_documents:,} for training), "
          f"{len(record['files'])} files, {record['bytes'] / 1e6:,.1f} MB in {record['seconds']} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
