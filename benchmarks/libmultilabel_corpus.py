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
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.harness_text_corpus import BLOCK_DOCUMENTS, FORMAT_VERSION, TextModel, TextShape, generate_block
from sparktc.corpora.files import read_records
from sparktc.corpora.records import TEST, TRAIN, Document, Reject
from sparktc.corpora.reuters21578 import CATEGORY_SETS, FORMAT, category_set, parse_sgml

__all__ = ["FILES", "REPLACED", "libmultilabel_line", "main", "modapte_documents", "synthetic_is_complete",
           "write_corpus", "write_synthetic"]

#: The files LibMultiLabel's ``load_dataset("txt", train, test)`` is given, by split.
FILES = {TRAIN: "train.txt", TEST: "test.txt"}
#: The characters a text may not hold in the format (column and line separators), each replaced by a space.
REPLACED = "\t\n\r"
_SPACES = str.maketrans(dict.fromkeys(REPLACED, " "))
_WHITE = re.compile(r"\s")


def modapte_documents(reuters: Path) -> list[Document]:
    """The ModApte documents (split train or test) of the Reuters-21578 files in ``reuters``, in file order, as
    sparktc's reader reads them; ValueError naming every rejected record (and when no file is there).
    """
    accepted = re.compile(FORMAT.names.accepted)
    files = sorted(path for path in reuters.iterdir() if accepted.fullmatch(path.name)) if reuters.is_dir() else []
    if not files:
        raise ValueError(f"{reuters} holds no {FORMAT.names.what}: {FORMAT.hint}")
    documents: list[Document] = []
    rejects: list[Reject] = []
    for path in files:
        for record in read_records(parse_sgml, path.read_bytes(), path.name):
            if isinstance(record, Reject):
                rejects.append(record)
            elif record.split in FILES:
                documents.append(record)
    if rejects:
        listed = "; ".join(reject.message() for reject in rejects[:5])
        raise ValueError(f"{len(rejects)} record(s) of {reuters} cannot be read ({listed}): restore the files from "
                         "the Reuters-21578 distribution")
    return documents


def libmultilabel_line(doc_id: str, labels: Sequence[str], text: str) -> str:
    """One document as a LibMultiLabel line, ``id<TAB>label label<TAB>text<NEWLINE>``, the text's tabs, newlines and
    carriage returns replaced by spaces; ValueError when the id or a label holds white space.
    """
    for what, value in (("id", doc_id), *(("label", label) for label in labels)):
        if not value or _WHITE.search(value):
            raise ValueError(f"document {doc_id!r}: its {what} {value!r} is empty or holds white space, which "
                             "LibMultiLabel's format cannot hold (labels are separated by spaces, columns by tabs)")
    return f"{doc_id}\t{' '.join(labels)}\t{text.translate(_SPACES)}\n"


def _lines(documents: Iterable[Document], split: str, categories: frozenset[str]) -> Iterator[str]:
    for document in documents:
        if document.split == split:
            yield libmultilabel_line(document.doc_id, [c for c in document.labels if c in categories],
                                     document.text or "")


def write_corpus(documents: Sequence[Document], output: Path, category_set_name: str) -> dict[str, Any]:
    """Write ``documents`` (ModApte, :func:`modapte_documents`) as ``output``/train.txt and test.txt with the labels of
    ``category_set_name`` (module docstring); what was written, also in ``output``/corpus.json.
    """
    if category_set_name not in CATEGORY_SETS:
        raise ValueError(f"category set {category_set_name!r}: expected one of {', '.join(CATEGORY_SETS)}")
    positives = {split: Counter(c for d in documents if d.split == split for c in d.labels) for split in FILES}
    categories = frozenset(category_set(category_set_name, positives[TRAIN], positives[TEST]))
    output.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"category_set": category_set_name, "categories": len(categories),
                              "replaced_by_space": [f"U+{ord(c):04X}" for c in REPLACED], "files": {}}
    for split, name in FILES.items():
        chosen = [d for d in documents if d.split == split]
        with open(output / name, "w", encoding="utf-8", newline="") as handle:
            handle.writelines(_lines(chosen, split, categories))
        record["files"][name] = {
            "documents": len(chosen),
            "without_label": sum(1 for d in chosen if not categories.intersection(d.labels)),
            "positives": sum(1 for d in chosen for c in d.labels if c in categories),
            "texts_with_replacements": sum(1 for d in chosen if any(c in (d.text or "") for c in REPLACED)),
            "bytes": (output / name).stat().st_size,
        }
    (output / "corpus.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def write_synthetic(shape: TextShape, output: Path) -> dict[str, Any]:
    """Write :mod:`benchmarks.text_corpus`'s corpus of ``shape`` as ``output``/train.txt and test.txt (module
    docstring); what was written, also in ``output``/corpus.json.
    """
    began = time.monotonic()
    output.mkdir(parents=True, exist_ok=True)
    model = TextModel(shape)
    counts = dict.fromkeys(FILES, 0)
    handles = {split: open(output / name, "w", encoding="utf-8", newline="") for split, name in FILES.items()}
    try:
        for number in range(-(-shape.documents // BLOCK_DOCUMENTS)):
            block = generate_block(model, shape, number)
            for doc_id, split, labels, text in zip(block.ids, block.splits, block.labels, block.texts, strict=True):
                handles[split].write(libmultilabel_line(str(doc_id), labels, text))
                counts[split] += 1
    finally:
        for handle in handles.values():
            handle.close()
    record = {"generator": "benchmarks/text_corpus.py", "format_version": FORMAT_VERSION, "shape": asdict(shape),
              "categories": len(model.codes), "replaced_by_space": [f"U+{ord(c):04X}" for c in REPLACED],
              "files": {name: {"documents": counts[split], "bytes": (output / name).stat().st_size}
                        for split, name in FILES.items()},
              "seconds": round(time.monotonic() - began, 1)}
    (output / "corpus.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def synthetic_is_complete(shape: TextShape, output: Path) -> bool:
    """Whether ``output`` holds :func:`write_synthetic`'s files of ``shape`` at the sizes its corpus.json says."""
    try:
        record = json.loads((output / "corpus.json").read_text())
    except (OSError, ValueError):
        return False
    return (record.get("format_version") == FORMAT_VERSION and record.get("shape") == asdict(shape)
            and all((output / name).is_file() and (output / name).stat().st_size == written["bytes"]
                    for name, written in record.get("files", {}).items()) and len(record.get("files", {})) == 2)


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
