r"""Reuters-21578's ModApte split, or a synthetic RCV1-shaped corpus, written as LibMultiLabel-format text files, for
the LibMultiLabel benchmark.

    .venv/bin/python -m benchmarks.libmultilabel_corpus --reuters ../shared/data/reuters21578 --output DIR \
        [--category-set R90]
    .venv/bin/python -m benchmarks.libmultilabel_corpus --documents N --output DIR

Writes ``DIR/train.txt`` and ``DIR/test.txt`` in LibMultiLabel's text format
(https://www.csie.ntu.edu.tw/~cjlin/libmultilabel/cli/ov_data_format.html#libmultilabel-format): one document a line,
three tab-separated columns, the id (Reuters' NEWID), the labels separated by spaces, the text; and
``DIR/corpus.json``, what was written. The documents come from sparktc's own reader,
:func:`sparktc.corpora.reuters21578.parse_sgml`, exactly as ``corpus.format = "reuters21578"`` ingests them:

- **The split** is ModApte (LEWISSPLIT TRAIN or TEST with TOPICS="YES"), every such document in file order;
  the others (NOT-USED, TOPICS NO or BYPASS) are not written. A record the reader rejects stops the writer,
  naming it: the collection has none.
- **The labels** are the document's TOPICS codes in the category set ``--category-set`` (R(10), R(90) or R(115),
  Debole & Sebastiani's, chosen by :func:`sparktc.corpora.reuters21578.category_set` from the ModApte positives;
  R(90), the default, is every category with a training and a test document), others dropped. A document with no
  label of the set is written with an empty label column and kept, as LibMultiLabel keeps it
  (``Preprocessor(remove_no_label_data=False)``, the default): no ApteMod filter.
- **The text** is TITLE and BODY as the reader gives them (joined by a newline; entities decoded, control characters
  dropped), with every tab, newline and carriage return replaced by a space: the format has one line per document
  and tab-separated columns, and LibMultiLabel's ``pandas.read_csv(sep="\t")`` would otherwise cut the document (a
  line with an extra field is dropped with a warning). Both tools' tokenizers split at any white space, so the
  replacement changes no token. An empty text would be an empty text field, a document without words that both
  LibMultiLabel's reader and sparktc's keep (ModApte has none: each of its documents has a TITLE or a BODY).

With ``--documents N`` the documents are instead :mod:`benchmarks.text_corpus`'s synthetic RCV1-shaped text (seed
0, its defaults: 100 categories, about 220 words a document, the first round(N x 23,149 / 804,414) ids for
training), its ids and labels as generated, its tabs and paragraph breaks replaced by spaces the same way
(:func:`write_synthetic`).

An id or a label holding white space cannot be written (LibMultiLabel splits the labels at white space):
:func:`libmultilabel_line` refuses it. Files are UTF-8 (the collection is ASCII but for one Latin-1 byte, read as
``ü``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness_libmultilabel_corpus import modapte_documents, write_corpus, write_synthetic
from benchmarks.harness_text_corpus import TextShape
from sparktc.corpora.reuters21578 import CATEGORY_SETS, FORMAT


def main(argv: Sequence[str] | None = None) -> int:
    """Write the corpus (module docstring); the exit code (2 for bad arguments or an unreadable collection)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--reuters", help="directory of reut2-000.sgm .. reut2-021.sgm (or .sgm.gz)")
    source.add_argument("--documents", type=int, help="instead, N synthetic RCV1-shaped documents")
    parser.add_argument("--output", required=True, help="directory for train.txt, test.txt and corpus.json")
    parser.add_argument("--category-set", choices=CATEGORY_SETS, default=FORMAT.default_category_set,
                        help=f"the labels written (default {FORMAT.default_category_set})")
    arguments = parser.parse_args(argv)
    began = time.monotonic()
    if arguments.documents is not None:
        if arguments.documents < 1:
            parser.error(f"--documents {arguments.documents}: expected at least 1")
        record = write_synthetic(TextShape(documents=arguments.documents), Path(arguments.output))
        print(json.dumps(record, indent=2))
        return 0
    try:
        record = write_corpus(modapte_documents(Path(arguments.reuters)), Path(arguments.output),
                              arguments.category_set)
    except ValueError as error:
        parser.error(str(error))
    print(json.dumps({**record, "seconds": round(time.monotonic() - began, 1)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
