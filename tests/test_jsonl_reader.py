"""The JSON Lines corpus reader: exact documents and every reject with its line."""

from __future__ import annotations

from sparktc.corpora.files import read_lines
from sparktc.corpora.jsonl import parse_jsonl
from sparktc.records import Document, Reject

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
        b'{"id": "j", "text": " \\t ", "labels": [], "split": "test"}',  # 15 empty text
    ]
    result = parse(b"\n".join(lines) + b"\n")
    assert result[0] == Document("a", "train", (), "t", None, SRC, 1)
    assert result[12] == Document("7", "test", (), "t", None, SRC, 13)
    rejects = result[1:12] + result[13:]
    assert all(isinstance(r, Reject) and r.source == SRC for r in rejects)
    assert [(r.line, r.doc_id, r.reason) for r in rejects] == [
        (2, None, "invalid JSON (Expecting ',' delimiter: column 56); one object per line"),
        (3, None, 'expected a JSON object like {"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}, got list'),
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
        (15, "j", "empty text: field 'text' holds nothing but white space; drop the line or give the document its text"),
    ]
