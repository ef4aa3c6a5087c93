"""The corpus formats by name (``corpus.format``): one registration line per format, each format's own module
declaring its :class:`~sparktc.corpora.formats.CorpusFormat`; and what is derived from them for the configuration
and classify.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparktc.corpora import (
    jsonl,
    libmultilabel_text,
    libsvm,
    lyrl2004_columnar,
    lyrl2004_vectors,
    reuters21578,
    synthetic,
    table,
)
from sparktc.corpora.files import Reader
from sparktc.corpora.formats import CorpusFormat
from sparktc.corpora.plain_text import read_text_file

__all__ = ["CATEGORY_SETS", "CLASSIFY_READERS", "FORMATS", "VECTOR_FORMATS", "corpus_title"]

#: Every corpus format, in the order the configuration lists them.
FORMATS: dict[str, CorpusFormat] = {fmt.name: fmt for fmt in (
    reuters21578.FORMAT,
    lyrl2004_columnar.FORMAT,
    lyrl2004_vectors.FORMAT,
    jsonl.FORMAT,
    libsvm.FORMAT,
    libmultilabel_text.FORMAT,
    table.FORMAT,
    synthetic.FORMAT,
)}
#: Every format's category sets (``corpus.category_set``), each once.
CATEGORY_SETS = tuple(dict.fromkeys(name for fmt in FORMATS.values() for name in fmt.category_sets))
#: The formats whose documents arrive as vectors, their tokens given ``index:value`` features.
VECTOR_FORMATS = tuple(name for name, fmt in FORMATS.items() if fmt.vectors)
#: How classify reads new documents (``--input-format``), in the order the job lists them: the formats that declare
#: a form for it, and plain text files, one document each (id: the file name), which no corpus format reads.
CLASSIFY_READERS: dict[str, Reader] = {**{name: fmt.classify for name, fmt in FORMATS.items() if fmt.classify},
                                       "text": read_text_file}


def corpus_title(corpus: Mapping[str, Any]) -> str:
    """A run's corpus and category set as a figure's title names them, from its [corpus] settings (``format``,
    ``document_filter``, ``category_set``, ``path``): the format's title, or the one of the corpus its document filter
    leaves, and the set as the papers write it ("Reuters-21578 ApteMod, R(90)"; "RCV1-v2 (LYRL2004), topics"); a
    format carrying its own labels has no set and no name of its data but the last part of ``corpus.path``
    ("eurlex (LIBSVM)"). An unknown format is named as recorded.
    """
    name = str(corpus.get("format") or "")
    fmt = FORMATS.get(name)
    if fmt is None:
        return name or "unknown corpus"
    title = dict(fmt.filtered_titles).get(corpus.get("document_filter"), fmt.title)
    chosen = corpus.get("category_set") or fmt.default_category_set
    if chosen:
        return f"{title}, {fmt.chosen_sets.title(chosen) if fmt.chosen_sets else chosen}"
    data = str(corpus.get("path") or "").rstrip("/").rsplit("/", 1)[-1]
    return f"{data} ({title})" if data else title
