"""LYRL2004 readers on fixtures in the documented format (REFERENCE.md section 1) and the real hierarchy."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import lyrl2004_fixture

from sparktc.corpora.files import read_lines
from sparktc.corpora.lyrl2004 import (
    HIERARCHY_FILE,
    QRELS_FILE,
    TEST_FILES,
    TRAIN_FILE,
    Assignment,
    load_topic_names,
    parse_category_list,
    parse_hierarchy,
    parse_qrels,
    parse_token_file,
    split_of,
)
from sparktc.corpora.records import Document, Reject
from sparktc.errors import InputError

RCV1 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "rcv1"
SRC = "mem.dat"


def parse(text: bytes | str, split: str = "train") -> list[Document | Reject]:
    data = text.encode() if isinstance(text, str) else text
    return list(parse_token_file(read_lines(data, SRC), SRC, split))


def doc(doc_id: str, tokens: str, line: int, split: str = "train", source: str = SRC) -> Document:
    return Document(doc_id, split, (), None, tuple(tokens.split()), source, line)


def fixture(name: str) -> list[bytes]:
    return list(read_lines(lyrl2004_fixture(name).read_bytes(), name))


@pytest.fixture(scope="module")
def hierarchy():
    path = RCV1 / HIERARCHY_FILE
    if not path.exists():
        pytest.fail(f"shared data not found: {path} (clone the project beside ../shared)")
    return parse_hierarchy(path.read_bytes().splitlines(), str(path))


# --- token files -------------------------------------------------------------------------------


def test_train_fixture_documents_exact():
    docs = list(parse_token_file(fixture(TRAIN_FILE), TRAIN_FILE, "train"))
    src = TRAIN_FILE
    assert docs == [
        doc(
            "2286",
            "recov recov excit brazil soccer fan result annual profit compan share rise "
            "percent quart earn forecast analyst expect dividend increas board meet",
            1, source=src,
        ),
        doc("2287", "match goal scor team leagu championship final player coach win season", 7, source=src),
        doc("2288", "export trade balanc surplus govern polic minist elect currenc reserv", 11, source=src),
        doc("2289", "bond yield treasur price fell market dealer rate cut expect", 15, source=src),
        doc("2290", "compan rais capit share issu bank loan fund debt offer underwrit", 19, source=src),
        doc("2291", "oil price crude barrel brent futur energ market trad", 23, source=src),
    ]


def test_gzipped_test_part_documents_exact():
    name = "lyrl2004_tokens_test_pt0.dat.gz"
    docs = list(parse_token_file(fixture(name), name, split_of(name)))
    assert docs == [
        doc("26151", "merg acquisit compan bid takeov share offer", 1, "test", name),
        doc("26152", "elect vote parliam parti candid poll win", 5, "test", name),
        doc("26153", "inflat consum price index rose percent month currenc dollar yen trad", 9, "test", name),
        doc("26154", "plan strateg restructur compan job cut", 14, "test", name),
    ]


def test_crlf_blank_runs_trailing_space_and_no_final_blank_line():
    text = ".I 5\r\n.W  \r\na b\r\nc  \r\n\r\n\r\n\r\n.I 6\r\n.W\r\nd e"
    assert parse(text) == [doc("5", "a b c", 1), doc("6", "d e", 8)]


def test_i_without_w_is_rejected_and_next_record_kept():
    assert parse(".I 7\n\n.I 8\n.W\nx\n") == [
        Reject(SRC, 1, "7", ".I 7 has no .W line; each record is '.I <id>', '.W', token lines, blank line "
               "(REFERENCE.md section 1)"),
        doc("8", "x", 3),
    ]


def test_i_at_end_of_file_without_w():
    [reject] = parse(".I 9\n.W\nx\n\n.I 10\n")[1:]
    assert (reject.line, reject.doc_id, reject.reason.split(";")[0]) == (5, "10", ".I 10 has no .W line")


def test_tokens_before_w_reject_at_that_line():
    [reject] = parse(".I 11\nx y\n.W\nz\n")
    assert (reject.line, reject.doc_id, reject.reason.split(";")[0]) == (2, "11", "text between .I 11 and its .W line")


def test_non_numeric_and_non_canonical_ids():
    rejects = parse(".I 12a\n.W\nx\n\n.I\n.W\ny\n\n.I 0013\n.W\nz\n\n.I -4\n.W\nw\n")
    assert [(r.line, r.doc_id, r.reason.split(";")[0]) for r in rejects] == [
        (1, None, "doc id '12a' is not a number"),
        (5, None, "expected '.I <doc id>', got '.I'"),
        (9, None, "doc id '0013' has leading zeros"),
        (13, None, "doc id '-4' is not a number"),
    ]


def test_text_before_first_i_is_one_reject_and_records_still_read():
    assert parse("\nstray words\nmore stray\n.I 14\n.W\nx\n") == [
        Reject(SRC, 2, None, "text before the first '.I' line; each record is '.I <id>', '.W', token lines, "
               "blank line (REFERENCE.md section 1)"),
        doc("14", "x", 4),
    ]


def test_non_utf8_line_rejects_its_record_only():
    result = parse(b".I 15\n.W\nok\n\xff\xfe bad\n\n.I 16\n.W\nfine\n")
    assert result == [
        Reject(SRC, 4, "15", "line 4 is not valid UTF-8; re-encode the file as UTF-8"),
        doc("16", "fine", 6),
    ]


def test_empty_document():
    [reject, kept] = parse(".I 17\n.W\n\n   \n.I 18\n.W\ny\n")
    assert (reject.line, reject.doc_id) == (1, "17")
    assert reject.reason.startswith("empty document")
    assert kept == doc("18", "y", 5)


def test_duplicate_id_second_occurrence_rejected():
    [first, second] = parse(".I 19\n.W\nx\n\n.I 19\n.W\ny\n")
    assert first == doc("19", "x", 1)
    assert (second.line, second.doc_id, second.reason.split(" (")[0]) == (5, "19", "duplicate doc id 19")


def test_second_w_rejected():
    [reject] = parse(".I 20\n.W\nx\n.W\ny\n")
    assert (reject.line, reject.doc_id, reject.reason.split(";")[0]) == (4, "20", "second .W in record .I 20")


def test_bad_split_argument_raises():
    with pytest.raises(ValueError, match="split must be"):
        parse(".I 1\n.W\nx\n", split="dev")


def test_split_of_names():
    assert split_of(TRAIN_FILE) == "train"
    assert split_of("hdfs://x/y/lyrl2004_tokens_train.dat.gz") == "train"
    assert [split_of(name) for name in TEST_FILES] == ["test"] * 4
    assert split_of("/data/lyrl2004_tokens_test_pt3.dat.gz") == "test"
    for bad in ("lyrl2004_tokens_test_pt4.dat", "rcv1-v2.topics.qrels", "lyrl2004_tokens_train.dat.bz2"):
        with pytest.raises(ValueError, match="not a LYRL2004 token file"):
            split_of(bad)


# --- qrels -------------------------------------------------------------------------------------


def test_qrels_fixture_matches_token_fixtures_and_is_closed_under_ancestors(hierarchy):
    assignments = list(parse_qrels(fixture(QRELS_FILE), QRELS_FILE))
    assert all(isinstance(a, Assignment) for a in assignments)
    assert assignments[:3] == [
        Assignment("C15", "2286", QRELS_FILE, 1),
        Assignment("C151", "2286", QRELS_FILE, 2),
        Assignment("C1511", "2286", QRELS_FILE, 3),
    ]
    labels: dict[str, set[str]] = {}
    for a in assignments:
        labels.setdefault(a.doc_id, set()).add(a.category)
    assert labels["2286"] == {"C15", "C151", "C1511", "CCAT", "E12", "E121", "ECAT"}
    assert len(assignments) == 37
    train = {d.doc_id for d in parse_token_file(fixture(TRAIN_FILE), TRAIN_FILE, "train")}
    test_name = "lyrl2004_tokens_test_pt0.dat.gz"
    test = {d.doc_id for d in parse_token_file(fixture(test_name), test_name, "test")}
    assert set(labels) == train | test
    for codes in labels.values():
        assert hierarchy.with_ancestors(codes) == tuple(sorted(codes))


def test_qrels_rejects_with_line_numbers():
    data = b"CCAT 2286 1\n\nC15 2286\nC15 x12 1\nC15 2287 0\nC15 2288 1 extra\nE12 \xff 1\r\nGCAT 2289 1\r\n"
    result = list(parse_qrels(read_lines(data, "q"), "q"))
    assert result[0] == Assignment("CCAT", "2286", "q", 1)
    assert result[-1] == Assignment("GCAT", "2289", "q", 8)
    assert [(r.line, r.doc_id, r.reason.split(";")[0]) for r in result[1:-1]] == [
        (3, None, "expected 'CATEGORY DOCID 1', got 2 fields: 'C15 2286'"),
        (4, None, "doc id 'x12' is not a number"),
        (5, "2287", "third field is '0', expected '1' (qrels list only assignments)"),
        (6, None, "expected 'CATEGORY DOCID 1', got 4 fields: 'C15 2288 1 extra'"),
        (7, None, "line is not valid UTF-8"),
    ]


INVISIBLE = "it prints invisibly or breaks a report's line; remove it"


def test_a_qrels_category_that_is_no_label_is_rejected_naming_its_document():
    """White space separates the fields, so a code never holds any; a control or invisible format character (a
    byte order mark before the first line of a file saved by some editors) would make a look-alike category.
    """
    data = b"\xef\xbb\xbfCCAT 2286 1\nC15\x01 2286 1\nC\x7f 2287 1\nGCAT 2287 1\n"
    result = list(parse_qrels(read_lines(data, "q"), "q"))
    assert result[-1] == Assignment("GCAT", "2287", "q", 4)
    hint = "; expected 'CATEGORY DOCID 1'"
    assert result[:-1] == [
        Reject("q", 1, "2286", "category code '\\ufeffCCAT' in field CATEGORY holds U+FEFF ZERO WIDTH NO-BREAK SPACE, "
                               f"an invisible format character, at character 1: {INVISIBLE}{hint}"),
        Reject("q", 2, "2286", "category code 'C15\\x01' in field CATEGORY holds U+0001, a control character, at "
                               f"character 4: {INVISIBLE}{hint}"),
        Reject("q", 3, "2287", "category code 'C\\x7f' in field CATEGORY holds U+007F, a control character, at "
                               f"character 2: {INVISIBLE}{hint}"),
    ]


def test_a_category_list_code_that_is_no_label_raises_with_file_and_line():
    with pytest.raises(InputError) as excinfo:
        parse_category_list(["USA  UNITED STATES", "\ufeffUK  UNITED KINGDOM"], "r")
    assert str(excinfo.value) == ("r:2: category code '\\ufeffUK' holds U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible "
                                  f"format character, at character 1: {INVISIBLE}")


# --- hierarchy ---------------------------------------------------------------------------------


def test_real_hierarchy_shape(hierarchy):
    assert len(hierarchy.categories) == 103
    assert hierarchy.categories == tuple(sorted(hierarchy.categories))
    assert "Root" not in hierarchy.categories
    assert hierarchy.top_level == ("CCAT", "ECAT", "GCAT", "MCAT")
    assert len(hierarchy.leaves) == 82
    assert hierarchy.parent["CCAT"] == "Root"
    assert hierarchy.descriptions["C11"] == "STRATEGY PLANS"
    assert hierarchy.ancestors("C1511") == ("C151", "C15", "CCAT")
    assert hierarchy.ancestors("GCAT") == ()
    assert hierarchy.is_leaf("C1511") and hierarchy.is_leaf("GSPO") and not hierarchy.is_leaf("C15")
    assert hierarchy.with_ancestors(["C1511", "E212", "C15"]) == ("C15", "C151", "C1511", "CCAT", "E21", "E212", "ECAT")
    with pytest.raises(KeyError, match="unknown topic code 'X99'"):
        hierarchy.ancestors("X99")


def test_topic_names_have_the_hierarchy_codes(hierarchy):
    names = load_topic_names((RCV1 / "rcv1_topic_codes.json").read_text(encoding="utf-8"))
    assert len(names) == 103
    assert set(names) == set(hierarchy.categories)
    assert names["C11"] == "STRATEGY/PLANS"
    with pytest.raises(ValueError, match="topic names must be"):
        load_topic_names('["C11"]')
    with pytest.raises(InputError, match="topic names: code 'C11' repeated in the JSON object; give each code one "
                                         "name"):
        load_topic_names('{"C11": "STRATEGY/PLANS", "C12": "LEGAL", "C11": "OTHER"}')


def hier(*rows: str) -> list[str]:
    return ["parent: None    child: Root    child-description: No Description", *rows]


def test_hierarchy_accepts_str_lines_and_children_before_parents():
    h = parse_hierarchy(hier("parent: A1    child: A11   child-description: X",
                             "parent: Root child: A1 child-description: Y Z"), "h")
    assert (h.parent, h.descriptions) == ({"A11": "A1", "A1": "Root"}, {"A11": "X", "A1": "Y Z"})


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["parent: Root child: A1", "x"], "h:2: expected 'parent: P child: C child-description: D'"),
        (["parent: Root child: A1 child-description: a", "parent: Root child: A1 child-description: b"],
         "h:3: duplicate child A1 (first defined at line 2)"),
        (["parent: Q9 child: A1 child-description: a"], "h:2: parent Q9 of A1 is not defined as a child anywhere"),
        (["parent: Root child: A1 child-description: a", "parent: B2 child: B1 child-description: b",
          "parent: B1 child: B2 child-description: c"], "h:3: cycle in the hierarchy through B1"),
        (["parent: None child: A1 child-description: a"], "h:2: only 'parent: None child: Root'"),
        (["parent: None child: Root child-description: again"], "h:2: duplicate Root line"),
        (["parent: Root child: A1 child-description: a", "parent: A1 child: A\x0111 child-description: b"],
         f"h:3: category code 'A\\x0111' in field 'child:' holds U+0001, a control character, at character 2: "
         f"{INVISIBLE}"),
    ],
)
def test_broken_hierarchy_raises_with_file_and_line(rows: list[str], message: str):
    with pytest.raises(ValueError) as excinfo:
        parse_hierarchy(hier(*rows), "h")
    assert str(excinfo.value).startswith(message)


def test_hierarchy_without_root_line_raises():
    with pytest.raises(ValueError, match="^h: no 'parent: None child: Root' line"):
        parse_hierarchy(["parent: Root child: A1 child-description: a"], "h")
