"""The JSON Lines corpus reader: exact documents and every reject with its line, valid JSON it cannot take included."""

from __future__ import annotations

import json

from sparktc.corpora import jsonl
from sparktc.corpora.files import read_lines
from sparktc.corpora.jsonl import parse_jsonl
from sparktc.corpora.records import Document, Reject, record_batch

SRC = "corpus.jsonl"


def parse(data: bytes) -> list[Document | Reject]:
    return list(parse_jsonl(read_lines(data, SRC), SRC))


def test_documents_exact_with_blank_lines_crlf_and_int_ids():
    data = (
        b'{"id": "d1", "text": "Oil prices rose.", "labels": ["crude", "ship"], "split": "train"}\r\n'
        b"\n"
        b'   \n'
        b'{"id": 42, "text": "x", "labels": [], "split": "test", "extra": 1}\n'
        b'{"split": "test", "labels": ["earn"], "text": "caf\xc3\xa9 profit", "id": "d3"}'
    )
    assert parse(data) == [
        Document("d1", "train", ("crude", "ship"), "Oil prices rose.", None, SRC, 1),
        Document("42", "test", (), "x", None, SRC, 4),
        Document("d3", "test", ("earn",), "caf\u00e9 profit", None, SRC, 5),
    ]


def test_rejects_with_line_numbers():
    lines = [
        b'{"id": "a", "text": "t", "labels": [], "split": "train"}',  # 1 ok
        b'{"id": "b", "text": "t", "labels": [], "split": "train"',  # 2 invalid JSON
        b'["a", "t"]',  # 3 not an object
        b'{"id": "c", "labels": [], "split": "train"}',  # 4 missing text
        b'{"id": true, "text": "t", "labels": [], "split": "train"}',  # 5 bool id
        b'{"id": "", "text": "t", "labels": [], "split": "train"}',  # 6 empty id
        b'{"id": "e", "text": 5, "labels": [], "split": "train"}',  # 7 text not str
        b'{"id": "f", "text": "t", "labels": "earn", "split": "train"}',  # 8 labels not list
        b'{"id": "g", "text": "t", "labels": ["x", 1], "split": "train"}',  # 9 label not str
        b'{"id": "h", "text": "t", "labels": [], "split": "dev"}',  # 10 bad split
        b'{"id": "i", "text": "\xff", "labels": [], "split": "test"}',  # 11 not UTF-8
        b'{"id": "a", "text": "again", "labels": [], "split": "test"}',  # 12 duplicate
        b'{"id": 7, "text": "t", "labels": [], "split": "test"}',  # 13 ok
        b'{"id": "7", "text": "t", "labels": [], "split": "test"}',  # 14 duplicate of int 7
        b'{"id": "j", "text": " \\t ", "labels": ["earn"], "split": "test"}',  # 15 white space: a document
    ]
    result = parse(b"\n".join(lines) + b"\n")
    assert result[0] == Document("a", "train", (), "t", None, SRC, 1)
    assert result[12] == Document("7", "test", (), "t", None, SRC, 13)
    # A text of white space only is a document without tokens, counted (as LibMultiLabel keeps one), not a reject.
    assert result[14] == Document("j", "test", ("earn",), " \t ", None, SRC, 15)
    rejects = result[1:12] + result[13:14]
    assert all(isinstance(r, Reject) and r.source == SRC for r in rejects)
    assert [(r.line, r.doc_id, r.reason) for r in rejects] == [
        (2, None, "invalid JSON (Expecting ',' delimiter: column 56); one object per line"),
        (3, None, 'expected a JSON object like {"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}, '
                  'got list'),
        (4, "c", "missing field 'text'; each line must look like "
                 '{"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}'),
        (5, None, "field 'id' must be a non-empty string or an integer, got True"),
        (6, None, "field 'id' must be a non-empty string or an integer, got ''"),
        (7, "e", "field 'text' must be a string, got int"),
        (8, "f", "field 'labels' must be a list of strings, got 'earn'"),
        (9, "g", "field 'labels' must be a list of strings, got ['x', 1]"),
        (10, "h", "field 'split' must be 'train' or 'test', got 'dev'"),
        (11, None, "line is not valid UTF-8; re-encode the file as UTF-8"),
        (12, "a", "duplicate id 'a' (already read earlier in this file); keep one line per id"),
        (14, "7", "duplicate id '7' (already read earlier in this file); keep one line per id"),
    ]


def test_a_repeated_label_is_rejected_naming_it():
    """A label listed twice would count the document twice among its category's positives."""
    lines = [
        b'{"id": "a", "text": "t", "labels": ["wheat", "grain", "wheat"], "split": "train"}',
        b'{"id": "b", "text": "t", "labels": ["corn", "oat", "corn", "oat"], "split": "train"}',
        b'{"id": "c", "text": "t", "labels": ["wheat", "wheat"]}',
    ]
    assert [(r.line, r.doc_id, r.reason) for r in parse(b"\n".join(lines[:2]))] == [
        (1, "a", "label 'wheat' repeated in field 'labels'; list each label once"),
        (2, "b", "labels 'corn', 'oat' repeated in field 'labels'; list each label once"),
    ]
    # Documents to classify (labels optional) follow the same rule.
    [reject] = parse_jsonl(read_lines(lines[2], SRC), SRC, labelled=False)
    assert reject == Reject(SRC, 1, "c", "label 'wheat' repeated in field 'labels'; list each label once")


def test_valid_json_the_parser_cannot_take_is_a_reject_with_its_line():
    """json.loads raises RecursionError on deep nesting and ValueError on a number of over 4,300 digits;
    Arrow cannot store a string with an unpaired surrogate escape. Each is one line's reject, the lines
    around it are read, and a reason never quotes a value at length.
    """
    good = b'{"id": "g", "text": "t", "labels": [], "split": "train"}'
    lines = [
        b"[" * 100_000,  # 1
        b'{"id": "n", "text": "t", "labels": [], "split": "train", "count": ' + b"7" * 5000 + b"}",  # 2
        good,  # 3
        b'{"id": "s", "text": "caf\\udce9", "labels": [], "split": "train"}',  # 4
        b'{"id": "x\\ud800", "text": "t", "labels": [], "split": "train"}',  # 5
        b'{"id": "l", "text": "t", "labels": ["ok", "\\udfff"], "split": "train"}',  # 6
        b'{"id": "p", "text": "t", "labels": ' + json.dumps("x" * 10_000).encode() + b', "split": "train"}',  # 7
    ]
    result = parse(b"\n".join(lines) + b"\n")
    assert result[2] == Document("g", "train", (), "t", None, SRC, 3)
    surrogate = "holds an unpaired surrogate escape ({}), which is no character and cannot be stored as UTF-8; " \
                "fix or drop the escape"
    assert [(r.line, r.doc_id, r.reason) for r in result[:2] + result[3:]] == [
        (1, None, "JSON nested too deeply (Python's parser stops at its recursion limit, about 1,000 levels); "
                  "flatten the record"),
        (2, None, "number too long: over 4,300 digits (Python's int conversion limit); write it as a string"),
        (4, "s", "field 'text' " + surrogate.format("'caf\\udce9'")),
        (5, None, "field 'id' " + surrogate.format("'x\\ud800'")),
        (6, "l", "field 'labels' " + surrogate.format("'\\udfff'")),
        (7, "p", "field 'labels' must be a list of strings, got 'xxxxxxxxxxxx...xxxxxxxxxxxxx'"),
    ]
    assert record_batch(result).num_rows == len(lines)  # every reject can be stored


def test_a_line_over_the_limit_is_rejected_unparsed(monkeypatch):
    assert jsonl.MAX_LINE_BYTES == 64 << 20
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1 << 20)
    short = b'{"id": "a", "text": "t", "labels": [], "split": "train"}\n'
    long = b'{"id": "b", "text": "' + b"t" * (1 << 20) + b'", "labels": [], "split": "train"}\n'
    assert parse(short + long + short.replace(b'"a"', b'"c"')) == [
        Document("a", "train", (), "t", None, SRC, 1),
        Reject(SRC, 2, None, f"line of {len(long):,} bytes, over the limit of 1 MiB per record "
                             "(sparktc.corpora.jsonl.MAX_LINE_BYTES); shorten the record"),
        Document("c", "train", (), "t", None, SRC, 3),
    ]


INVISIBLE = "it prints invisibly or breaks a report's line; remove it"


def test_a_label_that_is_no_label_is_rejected_naming_it():
    """An empty label, or one that differs from another only by white space or an invisible character, would be
    a category of its own (a blank or look-alike row in every report); JSON delimits labels by quotes, so
    nothing is trimmed. Labels as written are kept: inner plain spaces, non-ASCII letters.
    """
    lines = [
        b'{"id": "a", "text": "t", "labels": ["earn", ""], "split": "train"}',
        b'{"id": "b", "text": "t", "labels": ["earn", " earn"], "split": "train"}',
        b'{"id": "c", "text": "t", "labels": ["ea\\trn"], "split": "train"}',
        b'{"id": "d", "text": "t", "labels": ["\\u2028"], "split": "train"}',
        b'{"id": "e", "text": "t", "labels": ["ea\\u2028rn"], "split": "train"}',
        b'{"id": "f", "text": "t", "labels": ["\\ufeffearn"], "split": "train"}',
        b'{"id": "g", "text": "t", "labels": ["earn\\u00a0"], "split": "train"}',
        b'{"id": "h", "text": "t", "labels": ["interest rates", "caf\\u00e9"], "split": "test"}',
    ]
    result = parse(b"\n".join(lines))
    assert result[-1] == Document("h", "test", ("interest rates", "caf\u00e9"), "t", None, SRC, 8)
    where = "in field 'labels'"
    assert [(r.line, r.doc_id, r.reason) for r in result[:-1]] == [
        (1, "a", f"label '' {where} is empty; give the category a name"),
        (2, "b", f"label ' earn' {where} has white space at its start (U+0020 SPACE); remove the surrounding white "
                 "space"),
        (3, "c", f"label 'ea\\trn' {where} holds U+0009, a control character, at character 3: {INVISIBLE}"),
        (4, "d", f"label '\\u2028' {where} is only white space; give the category a name"),
        (5, "e", f"label 'ea\\u2028rn' {where} holds U+2028 LINE SEPARATOR, a line separator, at character 3: "
                 f"{INVISIBLE}"),
        (6, "f", f"label '\\ufeffearn' {where} holds U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible format "
                 f"character, at character 1: {INVISIBLE}"),
        (7, "g", f"label 'earn\\xa0' {where} has white space at its end (U+00A0 NO-BREAK SPACE); remove the "
                 "surrounding white space"),
    ]
    # Documents to classify (labels optional) follow the same rule.
    [reject] = parse_jsonl(read_lines(b'{"id": "x", "text": "t", "labels": [" earn"]}', SRC), SRC, labelled=False)
    assert (reject.line, reject.doc_id) == (1, "x") and reject.reason.startswith("label ' earn' in field 'labels'")


def test_a_key_repeated_in_any_object_is_rejected_naming_it():
    """JSON parsers keep the last (or first) value of a repeated key silently: the record is ambiguous, so no
    field of it, its id included, is trusted. The same key in two different objects is no repeat.
    """
    lines = [
        b'{"id": "a", "text": "t", "id": "b", "labels": [], "split": "train"}',
        b'{"id": "c", "text": "t", "labels": ["earn"], "labels": [], "split": "train"}',
        b'{"id": "d", "text": "t", "labels": [], "split": "train", "meta": {"x": 1, "y": {"z": 1, "z": 1}}}',
        b'{"id": "e", "text": "t", "labels": [], "split": "train", "": 1, "": 2}',
        b'{"id": "f", "text": "t", "labels": [], "split": "train", "meta": [{"x": 1}, {"x": 2}], "x": 3}',
    ]
    result = parse(b"\n".join(lines))
    assert result[-1] == Document("f", "train", (), "t", None, SRC, 5)
    assert [(r.line, r.doc_id, r.reason) for r in result[:-1]] == [
        (1, None, "key 'id' repeated in a JSON object; give each key once"),
        (2, None, "key 'labels' repeated in a JSON object; give each key once"),
        (3, None, "key 'z' repeated in a JSON object; give each key once"),
        (4, None, "key '' repeated in a JSON object; give each key once"),
    ]


def test_a_byte_order_mark_is_invalid_json_as_json_loads_says():
    """The reader's own decoder (it checks keys) keeps json.loads's reason for a line starting with U+FEFF."""
    data = b'\xef\xbb\xbf{"id": "a", "text": "t", "labels": [], "split": "train"}\n'
    reason = "invalid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig): column 1); one object per line"
    assert parse(data) == [Reject(SRC, 1, None, reason)]


def test_the_quick_check_of_common_records_agrees_with_the_full_one():
    """jsonl.valid_record (the fast path) accepts exactly the records jsonl._problem finds nothing wrong with."""
    ids = ["d1", 7, "", True, 1.5, None, [], "caf\u00e9", "a\udc80"]
    texts = ["Oil prices", "caf\u00e9 \u2019s", "", " \t\n", "\u3000", 5, None, "x\ud800y"]
    label_lists = [[], ["earn"], ["earn", "acq"], ["earn", "earn"], [" earn"], ["a\u200bb"], ["\u00e9t\u00e9"],
                   ["a\udc80"], [1], "earn", None, ["earn", "acq", "earn"]]
    splits = ["train", "test", "dev", None, 1, ["train"]]
    records: list = [["a"], "x", 3, None, {}]
    for doc_id in ids:
        for text in texts:
            for labels in label_lists:
                for split in splits:
                    records.append({"id": doc_id, "text": text, "labels": labels, "split": split})
                records.append({"id": doc_id, "text": text, "labels": labels})
            records.append({"id": doc_id, "text": text, "split": "train"})
            records.append({"id": doc_id, "text": text})
    records += [{"text": "t", "labels": [], "split": "train"}, {"id": "d", "labels": [], "split": "train"}]
    accepted = 0
    for record in records:
        for labelled in (True, False):
            fast = jsonl.valid_record(record, labelled)
            assert fast == (jsonl._problem(record, labelled) is None), (record, labelled)
            accepted += fast
    assert accepted > 50
