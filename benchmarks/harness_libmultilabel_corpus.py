"""Part of the benchmark harness (:mod:`benchmarks.harness`): the corpora LibMultiLabel and sparktc read alike,
which ``benchmarks/libmultilabel_corpus.py`` writes from the command line (its docstring says how) and
``benchmarks/libmultilabel.py`` writes itself.
"""

from __future__ import annotations

import json
import re
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

__all__ = ["FILES", "REPLACED", "libmultilabel_line", "modapte_documents", "synthetic_is_complete",
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
