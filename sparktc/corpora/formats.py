"""What a corpus format is: the files it reads, how each is parsed, what its records hold and what its categories are.

Each format's own module declares its ``FORMAT``, a :class:`CorpusFormat`, and :mod:`sparktc.corpora.registry`
lists them by name. The configuration, the stages and the apps ask a format for these facts instead of naming
formats, so a new format is its module, one registration line, a configuration example and its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sparktc.corpora.files import Reader

__all__ = ["ASSEMBLIES", "LABELLED", "QRELS", "SUBSET", "TABLE", "ByteRanges", "ChosenSets", "CorpusFormat",
           "CorpusNames"]

#: How ingest makes a corpus of a format's parsed files (the ingest stage implements each kind). SUBSET: the labels
#: of the records, kept to a category set chosen from their positives (:class:`ChosenSets`), the documents outside
#: the format's split set aside.
SUBSET = "subset"
#: QRELS: the labels from LYRL2004's qrels files of the category set, attached while the files are parsed and
#: checked against the set's hierarchy (``corpus.hierarchy_policy``).
QRELS = "qrels"
#: LABELLED: the labels of the records; the categories are ``corpus.categories``, or every label seen.
LABELLED = "labelled"
#: TABLE: the rows of a table Spark reads (or a DataFrame given), which carry their labels, as LABELLED's records
#: do; read once, by Spark, with no file of the format's to list or parse.
TABLE = "table"
ASSEMBLIES = (SUBSET, QRELS, LABELLED, TABLE)


@dataclass(frozen=True)
class CorpusNames:
    """The names of a format's corpus files, as regular expressions over a whole file name: ``accepted``
    names are read; other names ``resembling`` matches look like another version of a corpus file (a
    backup, an editor's copy, a partial download) and are reported as ignored. Names starting with
    ``.`` or ``_`` are hidden, as Hadoop and Spark have them (checksums, ``_SUCCESS``): neither.
    """

    accepted: str
    resembling: str
    what: str


@dataclass(frozen=True)
class ByteRanges:
    """How a format's large files are parsed in byte ranges, one task each: ``ranges(source, size, share)`` cuts a
    file into ``[start, end)`` ranges of about a task's ``share`` of bytes (none: the whole file in one task, by the
    format's reader); ``count_newlines(file, start, end)`` counts the newlines in bytes ``[start, end)``, so each
    range's task numbers its lines from the file's start; and ``read_range(file, size, source, start, end,
    newlines_before)`` parses the records that start in a range.
    """

    ranges: Callable[[str, int, int], list[tuple[int, int]]]
    count_newlines: Callable[[pa.NativeFile, int, int], int]
    read_range: Callable[[pa.NativeFile, int, str, int, int, int], Iterator[pa.RecordBatch]]


@dataclass(frozen=True)
class ChosenSets:
    """Category sets chosen from the categories' training and test positives (Debole & Sebastiani's R10, R90 and
    R115 of Reuters-21578): ``choose(name, train_positives, test_positives)`` gives a set's codes, ``title(name)`` its
    name in averages and reports (``R(90)``).
    """

    choose: Callable[[str, Mapping[str, int], Mapping[str, int]], list[str]]
    title: Callable[[str], str]


@dataclass(frozen=True)
class CorpusFormat:
    """A corpus format (``corpus.format``), as ingest, the configuration checks, evaluate and classify use it.

    ``title``: the corpus as papers name it, in figure titles (:func:`sparktc.corpora.registry.corpus_title`), and
    ``filtered_titles``, (``corpus.document_filter``, title) pairs: the corpus a document filter leaves. Its files:
    ``names`` in corpus.path, ``hint`` (what to set when they are not there), ``document_files``
    (``corpus.test_parts`` -> the names that must be there, each plain or with one of ``compressions``; None: any
    accepted name) and ``reader``, which parses one file; with ``ranges``, a large file in byte ranges; for a
    ``tokenized`` format, ``list_reader`` and ``list_ranges`` (None: ``reader`` and ``ranges``) read the same records
    with the documents' tokens as lists where they read them so
    (:data:`~sparktc.corpora.records.TOKEN_LIST_RECORD_SCHEMA`), for ingest's integer form. ``assembly``
    says how ingest makes them a corpus (:data:`ASSEMBLIES`). Its records: ``tokenized`` (documents come as tokens,
    which tokenize copies), ``vectors`` (their tokens are given ``index:value`` features, weighted as given) and
    ``titles`` (its documents' titles are read apart too: ``tokenize.title_weight`` and ``title_terms`` take them). Its
    categories: ``category_sets`` (``corpus.category_set``) and the default one, ``chosen_sets`` when they are chosen
    from positives, ``split`` (the name of the split outside which documents are set aside), ``names_file`` in
    corpus.path read by ``parse_names`` (code -> name), and ``hierarchical`` (its categories have a hierarchy to
    average and close predictions over). ``classify`` reads new documents in this form (None: classify does not
    take it). A synthesized format is not read from corpus.path: the synthesize stage writes it in the format
    ``written_as``, which the stages then read. ``settings`` are the [corpus] keys only this format reads (another
    format refuses them set), and ``settings_problem(corpus)`` says what is wrong with its [corpus] settings together
    (None: nothing), checked before Spark starts; ``tokenized_by(corpus)`` whether those settings make a format of
    raw texts come tokenized (:meth:`comes_tokenized`).
    """

    name: str
    title: str = ""
    filtered_titles: tuple[tuple[str, str], ...] = ()
    assembly: str = ""
    names: CorpusNames | None = None
    hint: str = ""
    reader: Reader | None = None
    document_files: Callable[[Sequence[int]], tuple[str, ...]] | None = None
    compressions: tuple[str, ...] = (".gz",)
    ranges: ByteRanges | None = None
    list_reader: Reader | None = None
    list_ranges: ByteRanges | None = None
    tokenized: bool = False
    vectors: bool = False
    titles: bool = False
    category_sets: tuple[str, ...] = ()
    default_category_set: str = ""
    chosen_sets: ChosenSets | None = None
    split: str = ""
    names_file: str = ""
    parse_names: Callable[[str], dict[str, str]] | None = None
    hierarchical: bool = False
    classify: Reader | None = None
    written_as: str = ""
    settings: tuple[str, ...] = ()
    settings_problem: Callable[[Any], str | None] | None = None
    tokenized_by: Callable[[Any], bool] | None = None

    def comes_tokenized(self, corpus: Any) -> bool:
        """Whether the documents of a corpus of this format, read with the [corpus] settings ``corpus``, come as
        tokens, which tokenize passes through: always for a ``tokenized`` format, else as ``tokenized_by(corpus)``
        says (a table with a tokens column).
        """
        return self.tokenized or (self.tokenized_by is not None and self.tokenized_by(corpus))

    @property
    def averaging_sets(self) -> tuple[str, ...]:
        """The format's own category sets that evaluate averages over, by title (``R(10)``, ...)."""
        return tuple(map(self.chosen_sets.title, self.category_sets)) if self.chosen_sets else ()

    def subsets(self, train_positives: Mapping[str, int], test_positives: Mapping[str, int]) -> dict[str, list[str]]:
        """The codes of each of :attr:`averaging_sets`, sorted, from the categories' positives."""
        if self.chosen_sets is None:
            return {}
        return {self.chosen_sets.title(name): sorted(self.chosen_sets.choose(name, train_positives, test_positives))
                for name in self.category_sets}
