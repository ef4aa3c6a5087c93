r"""Reuters-21578 Distribution 1.0: a lenient SGML reader, the ModApte split and the R(10)/R(90)/R(115) sets.

Conventions (REFERENCE.md sections 1 and 2, the collection's README.txt section VI):

- One ``reut2-NNN.sgm`` file is read as a stream of lines (bytes). ``<REUTERS ...>`` starts a
  line and ``</REUTERS>`` closes the element (README VI.A: both are alone on their line); lines
  outside an element (the ``<!DOCTYPE>`` line) are skipped.
- ``doc_id`` is the NEWID attribute as written; ``line`` is the 1-based line of the ``<REUTERS`` tag.
- ``labels`` are the ``<TOPICS><D>..</D></TOPICS>`` values in file order, unfiltered: no category
  set is applied here (see :func:`category_set`). A value repeated in one element is kept once: the
  collection has two such elements (NEWID 5467 lists ``corn`` twice, NEWID 19918 ``trade``), and a
  category is a document's or not, so a repeat must not count the document twice. A value is read as
  written, entities decoded and nothing trimmed or dropped (the tags delimit it, not white space): one
  that is not a label by :func:`sparktc.corpora.labels.label_problem` (an empty ``<D></D>``, white space
  around the code, a control character) rejects the element. The collection has none.
- ``text`` is TITLE and BODY joined by ``"\n"`` (only those present; a BRIEF story has a TITLE
  only, its "Blah blah blah." filler is not text). When TEXT has neither (most UNPROC stories),
  ``text`` is the whole TEXT content with its tags stripped. Character entities (``&lt;``
  ``&gt;`` ``&amp;`` ``&quot;`` ``&apos;`` ``&#N;`` ``&#xN;``) are decoded, other ``&`` and ``<``
  are kept as written, and control characters (``&#2;``, ``&#3;``, DEL, ...) are dropped; tab
  and newline are kept. An empty text is still a Document (the collection has one, NEWID 12793):
  tokenizing decides what to do with it; an element with no TEXT at all is rejected (an empty record).
  ``title`` is the TITLE alone, cleaned the same way (None without one), for tokenize to count apart.
- ``split`` is ModApte: ``"train"`` for LEWISSPLIT="TRAIN" TOPICS="YES", ``"test"`` for
  LEWISSPLIT="TEST" TOPICS="YES", ``None`` (unused) otherwise.
- Bytes are decoded as UTF-8 per element, falling back to Latin-1 (the collection is ASCII but
  for one stray byte, 0xFC in reut2-017).
- Malformed elements become :class:`~sparktc.corpora.records.Reject` records; the parser never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from sparktc.corpora.files import line_reader
from sparktc.corpora.formats import SUBSET, ChosenSets, CorpusFormat, CorpusNames
from sparktc.corpora.labels import label_problem
from sparktc.corpora.records import TEST, TRAIN, Document, Reject

__all__ = [
    "CATEGORY_SETS",
    "DESCRIPTIONS_FILE",
    "FORMAT",
    "LEWISSPLIT_VALUES",
    "TOPICS_VALUES",
    "category_set",
    "parse_sgml",
    "set_title",
    "topic_names",
]

CATEGORY_SETS = ("R10", "R90", "R115")

LEWISSPLIT_VALUES = ("TRAIN", "TEST", "NOT-USED")
TOPICS_VALUES = ("YES", "NO", "BYPASS")

_OPEN = b"<REUTERS"
_CLOSE = b"</REUTERS>"

# SGML is case-insensitive in tag and attribute names; the collection writes them upper-case.
_FLAGS = re.IGNORECASE | re.DOTALL
_OPEN_TAG = re.compile(r"<REUTERS\b([^>]*)>", _FLAGS)
_ATTRIBUTE = re.compile(r"""([A-Za-z][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", _FLAGS)
_D = re.compile(r"<D>(.*?)</D>", _FLAGS)
# An unclosed TEXT runs to the end of the element rather than losing the story.
_TEXT = re.compile(r"<TEXT\b[^>]*>(.*?)(?:</TEXT>|\Z)", _FLAGS)
_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", _FLAGS)
_BODY = re.compile(r"<BODY>(.*?)</BODY>", _FLAGS)
# Only things shaped like tags are stripped, so a bare "<" in text ("rates < 5 pct") survives.
_TAG = re.compile(r"</?[A-Za-z][\w.-]*(?:\s[^<>]*)?>")
_ENTITY = re.compile(r"&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|(lt|gt|amp|quot|apos));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_DIGITS = re.compile(r"[0-9]+")
_DAMAGED = "the file is truncated or damaged: restore it from the Reuters-21578 distribution"

# C0 controls but tab and newline, DEL and the C1 block; carriage returns go too (CRLF copies).
_CONTROL = {c: None for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if chr(c) not in "\t\n"}


def parse_sgml(lines: Iterable[bytes], source: str) -> Iterator[Document | Reject]:
    """Yield one Document or Reject per ``<REUTERS>`` element of one reut2-*.sgm file, in file order.

    ``lines`` are the file's lines as bytes (e.g. from :func:`sparktc.corpora.files.read_lines`);
    ``source`` names the file in records and messages. An element still open at the next
    ``<REUTERS`` tag or at the end of the file is rejected as truncated. Text outside every element
    (other than ``<!...>`` declarations such as the DOCTYPE line) is a record whose ``<REUTERS`` line
    was lost or damaged (a file cut at its start, two elements run together on one line): it is
    rejected at its first line, one Reject per stretch ending at a ``</REUTERS>`` or at the next element.
    """
    start = 0  # line of the open element's <REUTERS tag; 0 when none is open
    element: list[bytes] = []
    stray = 0  # first line of text outside any element, not yet reported; 0 when none
    number = 0
    for number, raw in enumerate(lines, start=1):
        if raw.lstrip().startswith(_OPEN):
            if start:
                yield _truncated(element, source, start, f"before the next <REUTERS> tag on line {number}")
            if stray:
                yield _outside(source, stray, number - 1, closed=False)
                stray = 0
            start, element = number, [raw]
        elif start:
            end = raw.find(_CLOSE)
            if end < 0:
                element.append(raw)
            else:
                element.append(raw[:end])
                yield _parse_element(_decode(b"".join(element)), source, start)
                start, element = 0, []
                if raw[end + len(_CLOSE):].strip():
                    stray = number
        elif _CLOSE in raw:
            yield _outside(source, stray or number, number, closed=True)
            stray = 0
        elif not stray and raw.strip() and not raw.lstrip().startswith(b"<!"):
            stray = number
    if start:
        yield _truncated(element, source, start, f"before the end of the file (line {number})")
    if stray:
        yield _outside(source, stray, number, closed=False)


def _outside(source: str, first: int, last: int, closed: bool) -> Reject:
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    if closed:
        what = f"a record without a <REUTERS ...> line ({lines}, up to its </REUTERS>)"
    else:
        what = f"text outside any <REUTERS> element ({lines})"
    return Reject(source, first, None, f"{what}; {_DAMAGED}")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Latin-1 maps every byte, so a stray non-ASCII byte costs one odd character, not the story.
        return data.decode("latin-1")


def _attributes(element: str) -> dict[str, str] | None:
    """The ``<REUTERS ...>`` tag's attributes (names upper-cased), or None when the tag is not closed."""
    tag = _OPEN_TAG.match(element.lstrip())
    if tag is None:
        return None
    return {m[1].upper(): next(v for v in m.groups()[1:] if v is not None) for m in _ATTRIBUTE.finditer(tag[1])}


def _newid(attributes: Mapping[str, str]) -> str | None:
    newid = attributes.get("NEWID", "").strip()
    return newid if _DIGITS.fullmatch(newid) else None


def _truncated(element: list[bytes], source: str, line: int, where: str) -> Reject:
    attributes = _attributes(_decode(b"".join(element))) or {}
    return Reject(
        source,
        line,
        _newid(attributes),
        f"<REUTERS> element has no closing </REUTERS> {where}; {_DAMAGED}",
    )


def _parse_element(element: str, source: str, line: int) -> Document | Reject:
    attributes = _attributes(element)
    if attributes is None:
        return Reject(source, line, None, "<REUTERS tag is not closed by '>'; repair the tag in the file")
    doc_id = _newid(attributes)
    if doc_id is None:
        if "NEWID" in attributes:
            found = f'NEWID="{attributes["NEWID"]}" is not a number'
        else:
            found = "the <REUTERS> tag has no NEWID attribute"
        return Reject(source, line, None, f'{found}; every document needs a numeric NEWID="n" to be identified')
    lewissplit = attributes.get("LEWISSPLIT")
    if lewissplit not in LEWISSPLIT_VALUES:
        return Reject(source, line, doc_id, _bad_value("LEWISSPLIT", lewissplit, LEWISSPLIT_VALUES))
    topics = attributes.get("TOPICS")
    if topics not in TOPICS_VALUES:
        return Reject(source, line, doc_id, _bad_value("TOPICS", topics, TOPICS_VALUES))

    if _TEXT.search(element) is None:
        return Reject(source, line, doc_id, "empty record: the element has no <TEXT> (lewis.dtd requires one); "
                      "restore it from the Reuters-21578 distribution")
    topic_list = _TOPICS.search(element)
    codes = [_ENTITY.sub(_entity, d) for d in _D.findall(topic_list[1])] if topic_list else []
    for code in codes:
        problem = label_problem(code, "in <TOPICS>")
        if problem is not None:
            return Reject(source, line, doc_id, f"{problem} (each topic is written <D>code</D>)")
    return Document(
        doc_id=doc_id,
        split=_modapte(lewissplit, topics),
        labels=tuple(dict.fromkeys(codes)),
        text=_text(element),
        tokens=None,
        source=source,
        line=line,
        title=_title(element),
    )


def _bad_value(name: str, value: str | None, allowed: tuple[str, ...]) -> str:
    found = f'{name}="{value}" is not allowed' if value is not None else f"the <REUTERS> tag has no {name} attribute"
    return f"{found}; it must be one of {', '.join(allowed)} (README.txt VI.A)"


def _modapte(lewissplit: str, topics: str) -> str | None:
    if topics != "YES":
        return None
    return {"TRAIN": TRAIN, "TEST": TEST}.get(lewissplit)


def _text(element: str) -> str:
    text = _TEXT.search(element)
    if text is None:
        return ""
    parts = [m[1] for m in (_TITLE.search(text[1]), _BODY.search(text[1])) if m is not None]
    if parts:
        return "\n".join(_clean(part) for part in parts)
    return _clean(_TAG.sub("", text[1]))


def _title(element: str) -> str | None:
    """The TITLE inside TEXT, cleaned as in ``text`` (None without one)."""
    text = _TEXT.search(element)
    title = _TITLE.search(text[1]) if text is not None else None
    return _clean(title[1]) if title is not None else None


def _clean(text: str) -> str:
    """Decode character entities, then drop control characters (including decoded ones like ``&#3;``)."""
    return _ENTITY.sub(_entity, text).translate(_CONTROL)


def _entity(match: re.Match[str]) -> str:
    decimal, hexadecimal, name = match.groups()
    if name is not None:
        return _NAMED[name]
    # Over 7 significant digits is past U+10FFFF either way, and int() refuses decimals of over 4,300 digits.
    if len((decimal or hexadecimal).lstrip("0")) > 7:
        return match[0]
    code = int(decimal) if decimal is not None else int(hexadecimal, 16)
    # Out-of-range or surrogate code points cannot be characters; keep the entity as written.
    return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match[0]


def category_set(name: str, train_positives: Mapping[str, int], test_positives: Mapping[str, int]) -> list[str]:
    """The categories of Debole & Sebastiani's subset ``name`` (REFERENCE.md section 1).

    ``R10``: the 10 categories with most training positives, ordered by count descending then
    name (the name breaks ties, at the cut too). ``R90``: categories with >= 1 training and
    >= 1 test positive. ``R115``: categories with >= 1 training positive. ``R90`` and ``R115``
    are sorted by name. On ModApte these have 10, 90 and 115 categories.
    """
    if name not in CATEGORY_SETS:
        raise ValueError(f"name must be one of {', '.join(CATEGORY_SETS)}, got {name!r}")
    trained = [c for c, n in train_positives.items() if n >= 1]
    if name == "R10":
        return sorted(trained, key=lambda c: (-train_positives[c], c))[:10]
    if name == "R90":
        return sorted(c for c in trained if test_positives.get(c, 0) >= 1)
    return sorted(trained)


def set_title(name: str) -> str:
    """The subset ``name`` as the papers write it, in averages and reports: ``R90`` -> ``R(90)``."""
    return f"R({name[1:]})"


DESCRIPTIONS_FILE = "cat-descriptions_120396.txt"
_DESCRIBED = re.compile(r"^\s*(\S.*?)\s*\(([^()]+)\)\s*$")


def topic_names(text: str) -> dict[str, str]:
    """Topic code -> name from Lewis's ``cat-descriptions_120396.txt`` (lines ``Name (CODE)`` in the
    TOPICS part, which ends at the first ``____`` rule); codes are lower-cased as in the SGML.
    """
    names: dict[str, str] = {}
    in_topics = False
    for line in text.splitlines():
        if line.startswith("****Subject Codes"):
            in_topics = True
        elif in_topics and line.startswith("____"):
            break
        elif in_topics and not line.startswith("*"):
            match = _DESCRIBED.match(line)
            if match:
                names[match.group(2).strip().lower()] = match.group(1)
    return names


#: Reuters-21578 as ``corpus.format = "reuters21578"``: the SGML files, the ModApte split, the R(10), R(90) and
#: R(115) subsets chosen from the categories' positives (R90 by default), names from Lewis's descriptions.
FORMAT = CorpusFormat(
    name="reuters21578",
    title="Reuters-21578 ModApte",
    filtered_titles=(("aptemod", "Reuters-21578 ApteMod"),),
    assembly=SUBSET,
    titles=True,
    names=CorpusNames(r"reut2-[0-9]{3}\.sgm(\.gz)?", r"reut2-.*",
                      "Reuters-21578 files (reut2-NNN.sgm or reut2-NNN.sgm.gz)"),
    hint="set corpus.path to the directory holding reut2-000.sgm .. reut2-021.sgm",
    reader=line_reader(parse_sgml),
    category_sets=CATEGORY_SETS,
    default_category_set="R90",
    chosen_sets=ChosenSets(category_set, set_title),
    split="ModApte",
    names_file=DESCRIPTIONS_FILE,
    parse_names=topic_names,
)
