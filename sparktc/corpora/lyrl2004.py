"""Readers for the RCV1-v2 LYRL2004 distribution: token files, qrels, hierarchies and category lists.

Formats (docs/REFERENCE.md section 1, "RCV1-v2, LYRL2004 split"):

* Token files ``lyrl2004_tokens_train.dat`` and ``lyrl2004_tokens_test_pt0.dat`` .. ``pt3.dat``
  (optionally gzipped), one record per document::

      .I 2286
      .W
      stemmed tokens separated by spaces, on one or more lines
      <blank line>

* ``rcv1-v2.topics.qrels``, ``rcv1-v2.industries.qrels``, ``rcv1-v2.regions.qrels`` (LYRL2004's online
  appendices 8-10): one line ``CATEGORY DOCID 1`` per assignment of the three category sets.
* ``rcv1.topics.hier.orig`` (appendix 2) and ``rcv1.industries.hier`` (appendix 5, LYRL2004's "best guess"
  industries hierarchy): one line ``parent: P child: C child-description: ...`` per category, plus
  ``parent: None child: Root``; the top-level categories have parent ``Root``.
* ``rcv1.regions.txt`` (appendix 6): the valid region codes, one per line, each optionally followed by white
  space and its description. Regions have no hierarchy (LYRL2004 section 3.3): every region is top-level.

Every format here separates its fields by white space, so a category code never holds any; a code must
otherwise be a label by :func:`sparktc.corpora.labels.label_problem` (no control or invisible format
character).

The token and qrels readers never raise on bad data: they yield :class:`~sparktc.corpora.records.Reject`.
The hierarchy and list parsers raise, because every later stage depends on a correct hierarchy.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from sparktc.corpora.formats import CorpusNames
from sparktc.corpora.labels import label_problem
from sparktc.corpora.records import NOT_UTF8, TEST, TRAIN, Document, Reject, decoded_line
from sparktc.errors import InputError

TRAIN_FILE = "lyrl2004_tokens_train.dat"
TEST_FILES = tuple(f"lyrl2004_tokens_test_pt{part}.dat" for part in range(4))
TOKEN_FILES = (TRAIN_FILE, *TEST_FILES)
QRELS_FILE = "rcv1-v2.topics.qrels"
HIERARCHY_FILE = "rcv1.topics.hier.orig"
ROOT = "Root"

#: LYRL2004's three category sets (section 3) and, per set, its qrels file and its hierarchy file; regions are
#: flat, listed by REGIONS_FILE.
CATEGORY_SETS = ("topics", "industries", "regions")
QRELS_FILES = {"topics": QRELS_FILE, "industries": "rcv1-v2.industries.qrels", "regions": "rcv1-v2.regions.qrels"}
HIERARCHY_FILES = {"topics": HIERARCHY_FILE, "industries": "rcv1.industries.hier"}
REGIONS_FILE = "rcv1.regions.txt"
#: What to set when the files of a LYRL2004 corpus (token or vector files) are not in corpus.path.
CORPUS_HINT = "set corpus.path to the directory of the LYRL2004 files, or corpus.test_parts to the parts you have"

_FORMAT_HINT = "each record is '.I <id>', '.W', token lines, blank line (REFERENCE.md section 1)"


def split_of(filename: str) -> str:
    """``"train"`` or ``"test"`` for a LYRL2004 token file name (any directory, ``.gz`` or not)."""
    name = filename.rstrip("/").rsplit("/", 1)[-1]
    base = name[: -len(".gz")] if name.endswith(".gz") else name
    if base == TRAIN_FILE:
        return TRAIN
    if base in TEST_FILES:
        return TEST
    raise ValueError(
        f"{filename!r} is not a LYRL2004 token file; expected one of {', '.join(TOKEN_FILES)} (optionally .gz)"
    )


def corpus_names(document_files: Iterable[str], what: str) -> CorpusNames:
    """The names of a LYRL2004 corpus's files: its ``document_files`` and the qrels files, each plain or gzipped."""
    files = "|".join(map(re.escape, (*document_files, *QRELS_FILES.values())))
    return CorpusNames(rf"({files})(\.gz)?", rf"({files}).*", what)


def doc_id_problem(text: str) -> str | None:
    """Why ``text`` is not a canonical document id, or None; canonical ids let qrels join by string."""
    if not (text.isascii() and text.isdigit()):
        return f"doc id {text!r} is not a number"
    # Compared as text: int() refuses numbers of over 4,300 digits.
    if len(text) > 1 and text.startswith("0"):
        return f"doc id {text!r} has leading zeros; write it as {text.lstrip('0') or '0'!r}"
    return None


class _Record:
    """The token record being read; ``problem`` is the first (line, reason) that rejects it."""

    __slots__ = ("line", "doc_id", "has_w", "tokens", "problem")

    def __init__(self, line: int, doc_id: str | None, problem: tuple[int, str] | None) -> None:
        self.line = line
        self.doc_id = doc_id
        self.has_w = False
        self.tokens: list[str] = []
        self.problem = problem


def parse_token_file(
    lines: Iterable[bytes], source: str, split: str, *, first_line: int = 1, accepted: set[str] | None = None
) -> Iterator[Document | Reject]:
    """Yield one Document (``tokens`` set, ``text=None``, ``labels=()``) or Reject per ``.I`` record.

    A record runs from its ``.I`` line to the next ``.I`` or the end of the file; blank lines and
    CRLF endings are ignored, so a missing final blank line or several blank lines are accepted.
    Rejected: text before the first ``.I`` (one Reject for the whole preamble), an id that is not a
    canonical number, text before ``.W``, a second ``.W``, a non-UTF-8 line (at that line), a ``.I``
    without ``.W``, a ``.W`` without tokens ("empty document"), and an id already accepted earlier
    in this file. Tokens on the ``.W`` line itself are kept. ``labels`` stay empty: they come from
    the qrels file.

    ``lines`` may be a piece of a file that starts at a ``.I`` line: ``first_line`` is then the
    number of its first line and ``accepted`` the ids accepted in the file so far (updated here).
    """
    if split not in (TRAIN, TEST):
        raise ValueError(f"split must be {TRAIN!r} or {TEST!r}, not {split!r}")
    if accepted is None:
        accepted = set()
    record: _Record | None = None
    preamble_rejected = False

    def finish(rec: _Record) -> Document | Reject:
        if rec.problem is not None:
            return Reject(source, rec.problem[0], rec.doc_id, rec.problem[1])
        if not rec.has_w:
            return Reject(source, rec.line, rec.doc_id, f".I {rec.doc_id} has no .W line; {_FORMAT_HINT}")
        if not rec.tokens:
            return Reject(
                source, rec.line, rec.doc_id, "empty document: no tokens after .W; drop the record or add its tokens"
            )
        if rec.doc_id in accepted:
            return Reject(
                source, rec.line, rec.doc_id,
                f"duplicate doc id {rec.doc_id} (already read earlier in this file); keep one record per id",
            )
        accepted.add(rec.doc_id)  # a record without problem has its id
        return Document(rec.doc_id, split, (), None, tuple(rec.tokens), source, rec.line)

    for number, raw in enumerate(lines, first_line):
        try:
            text = raw.decode("utf-8")
            bad_encoding = False
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            bad_encoding = True
        parts = text.split()  # the only per-line work: markers and tokens both come from it
        if parts and parts[0] == ".I":
            if record is not None:
                yield finish(record)
            if len(parts) != 2:
                reason = f"expected '.I <doc id>', got {text.strip()!r}; {_FORMAT_HINT}"
                record = _Record(number, None, (number, reason))
            else:
                problem = doc_id_problem(parts[1])
                record = _Record(number, parts[1], None) if problem is None else _Record(
                    number, None, (number, f"{problem}; LYRL2004 ids are decimal numbers"))
        elif record is None:
            if parts and not preamble_rejected:
                preamble_rejected = True
                yield Reject(source, number, None, f"text before the first '.I' line; {_FORMAT_HINT}")
            continue
        elif parts and parts[0] == ".W":
            if record.has_w and record.problem is None:
                record.problem = (number, f"second .W in record .I {record.doc_id}; {_FORMAT_HINT}")
            record.has_w = True
            record.tokens.extend(parts[1:])
        elif parts:
            if not record.has_w and record.problem is None:
                record.problem = (number, f"text between .I {record.doc_id} and its .W line; {_FORMAT_HINT}")
            record.tokens.extend(parts)
        if bad_encoding and record is not None and record.problem is None:
            record.problem = (number, f"line {number} is {NOT_UTF8}")
    if record is not None:
        yield finish(record)


@dataclass(frozen=True, slots=True)
class Assignment:
    """One qrels line: document ``doc_id`` has topic ``category``; ``line`` is 1-based."""

    category: str
    doc_id: str
    source: str
    line: int


def parse_qrels(lines: Iterable[bytes], source: str, *, first_line: int = 1) -> Iterator[Assignment | Reject]:
    """Yield an Assignment or a Reject per non-blank ``CATEGORY DOCID 1`` line of a qrels file
    (or of a piece of one whose first line is number ``first_line``); a CATEGORY that is not a label
    (:func:`~sparktc.corpora.labels.label_problem`) is a Reject naming the line's document.
    """
    for number, raw in enumerate(lines, first_line):
        text = decoded_line(raw, source, number)
        if isinstance(text, Reject):
            yield text
            continue
        parts = text.split()
        if not parts:
            continue
        if len(parts) != 3:
            reason = f"expected 'CATEGORY DOCID 1', got {len(parts)} fields: {' '.join(parts)!r}"
            yield Reject(source, number, None, reason)
            continue
        category, doc_id, flag = parts
        problem = doc_id_problem(doc_id)
        if problem is not None:
            yield Reject(source, number, None, f"{problem}; expected 'CATEGORY DOCID 1'")
        elif flag != "1":
            yield Reject(source, number, doc_id, f"third field is {flag!r}, expected '1' (qrels list only assignments)")
        elif (category_problem := label_problem(category, "in field CATEGORY", "category code")) is not None:
            yield Reject(source, number, doc_id, f"{category_problem}; expected 'CATEGORY DOCID 1'")
        else:
            yield Assignment(category, doc_id, source, number)


_HIER_LINE = re.compile(r"parent:\s*(\S+)\s+child:\s*(\S+)\s+child-description:(.*)")


@dataclass(frozen=True)
class Hierarchy:
    """The topic tree: ``parent`` maps each of the topics to its parent (``"Root"`` for top-level
    ones); ``descriptions`` maps each topic to the file's description. Root is in neither.
    """

    parent: dict[str, str]
    descriptions: dict[str, str]

    @cached_property
    def categories(self) -> tuple[str, ...]:
        """All topics, sorted (103 in RCV1-v2)."""
        return tuple(sorted(self.parent))

    @cached_property
    def top_level(self) -> tuple[str, ...]:
        """Topics directly under Root, sorted (CCAT ECAT GCAT MCAT)."""
        return tuple(sorted(code for code, parent in self.parent.items() if parent == ROOT))

    @cached_property
    def leaves(self) -> tuple[str, ...]:
        """Topics that are nobody's parent, sorted (82 in RCV1-v2)."""
        parents = set(self.parent.values())
        return tuple(code for code in self.categories if code not in parents)

    @cached_property
    def _leaf_set(self) -> frozenset[str]:
        return frozenset(self.leaves)

    def is_leaf(self, code: str) -> bool:
        """Whether topic ``code`` is nobody's parent; KeyError for a code not in the hierarchy."""
        self._check(code)
        return code in self._leaf_set

    def ancestors(self, code: str) -> tuple[str, ...]:
        """Ancestors of ``code`` from its parent upwards, Root excluded: C1511 -> (C151, C15, CCAT)."""
        self._check(code)
        chain = []
        code = self.parent[code]
        while code != ROOT:
            chain.append(code)
            code = self.parent[code]
        return tuple(chain)

    def with_ancestors(self, labels: Iterable[str]) -> tuple[str, ...]:
        """``labels`` plus all their ancestors, sorted without duplicates."""
        closed: set[str] = set()
        for code in labels:
            closed.add(code)
            closed.update(self.ancestors(code))
        return tuple(sorted(closed))

    def _check(self, code: str) -> None:
        if code not in self.parent:
            raise KeyError(f"unknown topic code {code!r}; not in the hierarchy file")


def _text(raw: bytes | str, where: str) -> str:
    """A line of a hierarchy or list file as text; InputError at ``where`` when its bytes are not UTF-8."""
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not valid UTF-8 ({exc})") from None


def parse_hierarchy(lines: Iterable[bytes | str], source: str) -> Hierarchy:
    """Parse ``rcv1.topics.hier.orig`` or ``rcv1.industries.hier`` lines; raise InputError naming file and line for a
    malformed line, a child code that is not a label (:func:`~sparktc.corpora.labels.label_problem`), a duplicate
    child, a missing Root line, an unknown parent or a cycle (every parent is some line's child, checked there).
    """
    parent: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    defined_at: dict[str, int] = {}
    has_root = False
    for number, raw in enumerate(lines, 1):
        where = f"{source}:{number}"
        text = _text(raw, where).strip()
        if not text:
            continue
        match = _HIER_LINE.fullmatch(text)
        if match is None:
            raise InputError(f"{where}: expected 'parent: P child: C child-description: D', got {text!r}")
        up, code, description = match.group(1), match.group(2), match.group(3).strip()
        if code == ROOT or up == "None":
            if (up, code) != ("None", ROOT):
                raise InputError(f"{where}: only 'parent: None child: Root' may use None or Root, got {text!r}")
            if has_root:
                raise InputError(f"{where}: duplicate Root line")
            has_root = True
            continue
        problem = label_problem(code, "in field 'child:'", "category code")
        if problem is not None:
            raise InputError(f"{where}: {problem}")
        if code in parent:
            raise InputError(f"{where}: duplicate child {code} (first defined at line {defined_at[code]})")
        parent[code] = up
        descriptions[code] = description
        defined_at[code] = number
    if not has_root:
        raise InputError(f"{source}: no 'parent: None child: Root' line; is this a LYRL2004 hierarchy file "
                         f"({' or '.join(HIERARCHY_FILES.values())})?")
    for code, up in parent.items():
        if up != ROOT and up not in parent:
            raise InputError(f"{source}:{defined_at[code]}: parent {up} of {code} is not defined as a child anywhere")
    for code in parent:
        # Every walk must reach Root within len(parent) steps; otherwise it loops.
        node = code
        for _ in range(len(parent)):
            node = parent[node]
            if node == ROOT:
                break
        else:
            raise InputError(f"{source}:{defined_at[code]}: cycle in the hierarchy through {code}")
    return Hierarchy(parent, descriptions)


def flat_hierarchy(descriptions: dict[str, str]) -> Hierarchy:
    """A category set without a hierarchy (regions): every code top-level, under Root."""
    return Hierarchy({code: ROOT for code in descriptions}, dict(descriptions))


def parse_category_list(lines: Iterable[bytes | str], source: str) -> dict[str, str]:
    """Parse a list of category codes (``rcv1.regions.txt``): one code per non-blank line, optionally followed by
    white space and a description (the code itself when there is none); raise InputError naming file and line for
    a code that is not a label (:func:`~sparktc.corpora.labels.label_problem`), a code listed twice or a line that
    is not valid UTF-8.
    """
    descriptions: dict[str, str] = {}
    defined_at: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        where = f"{source}:{number}"
        fields = _text(raw, where).strip().split(None, 1)
        if not fields:
            continue
        code = fields[0]
        problem = label_problem(code, what="category code")
        if problem is not None:
            raise InputError(f"{where}: {problem}")
        if code in descriptions:
            raise InputError(f"{where}: duplicate code {code} (first listed at line {defined_at[code]})")
        descriptions[code] = fields[1].strip() if len(fields) > 1 else code
        defined_at[code] = number
    if not descriptions:
        raise InputError(f"{source}: no category codes; expected one code per line, as in {REGIONS_FILE}")
    return descriptions


def load_topic_names(text: str) -> dict[str, str]:
    """Parse ``rcv1_topic_codes.json`` (a JSON object topic code -> official name)."""
    pairs = []
    try:
        names = json.loads(text, object_pairs_hook=lambda found: pairs.append(found) or dict(found))
    except ValueError as error:
        raise InputError(f"topic names are not valid JSON ({error})") from None
    repeated = next((key for found in pairs for key, n in Counter(k for k, _ in found).items() if n > 1), None)
    if repeated is not None:  # json.loads keeps the last name silently
        raise InputError(f"topic names: code {repeated!r} repeated in the JSON object; give each code one name")
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise InputError("topic names must be a JSON object mapping code strings to name strings")
    return names
