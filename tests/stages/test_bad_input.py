"""Bad input, end to end: malformed records of every kind the readers meet, and bad configuration.

The requirement: a corpus with malformed records gives either a clear error naming file and line
(``corpus.on_error = "fail"``, the default) or, with ``corpus.on_error = "reject"``, a ``rejects``
table whose counts, added to the accepted documents and the set-aside counts, equal the input; bad
configuration stops the job before Spark starts with a message naming the problem.

Every corpus here is written byte by byte in its documented format: a small well-formed base corpus
per format, and per case one malformed record (or file) between well-formed ones. The cases:

- truncated record: Reuters-21578 element cut off at the end of the file, without </REUTERS> before
  the next element, in a file cut at its start, run into the previous element's last line; JSON
  Lines line cut off at the end of the file (a LYRL2004 record simply runs to the next .I);
- .I without .W (LYRL2004), and its JSON Lines counterpart, a line without "text";
- non-numeric id: ``.I 10x2``, ``NEWID="50x2"``; in JSON Lines (string or integer ids) ``"id": 2.5``;
- duplicate doc id: within a file (LYRL2004, JSON Lines) and across files (all three);
- qrels line for an unknown document, qrels line with a category not in the hierarchy (LYRL2004);
  a label not in corpus.categories (JSON Lines; Reuters-21578 takes its categories from the data);
- empty record: LYRL2004 .W without tokens, Reuters-21578 element without <TEXT>;
- bad gzip: a .gz file that is not gzip, and a gzip stream cut short (all three);
- non-UTF-8 bytes (LYRL2004, JSON Lines);
- valid JSON the JSON Lines reader cannot take: a label repeated in one record, a key repeated in one
  object (the reader's label rule itself is checked without Spark, tests/corpora/test_jsonl_reader.py), nesting
  deeper than Python's parser goes (in a file whose name has glob characters, which Spark must read as a name,
  not a pattern), a number longer than Python converts, an unpaired surrogate escape;
- LibMultiLabel's text format, in reject mode only, all its cases in its two fixed files (its reader's every
  reject is checked without Spark, tests/corpora/test_libmultilabel_text_reader.py): more fields than the file's
  first line, no text field, a label that is not one, non-UTF-8 bytes, and a doc id
  repeated in a file and across train.txt and test.txt.gz, the plain file read in byte ranges.

1. Fail mode: ingest raises IngestError whose message names file and line of each bad record,
   exactly as the user reads it, and the corpus.on_error=reject option. Cases in different files
   share a corpus, up to five (the message lists the first five); each LYRL2004 group runs, and the first group
   of each other format (their other cases' rows are checked in reject mode, on the same files, and fail mode
   shows rows of that rejects table as each reject's message).
2. Reject mode, one corpus per format holding all its cases at once (one ingest run each, shared by
   the module): the exact ``rejects`` and ``documents`` tables (LYRL2004: its categories' positives too); the
   records written here reconciled with documents + rejects + set-aside and with the manifest, and the qrels
   lines likewise; then
   per case, its reject rows and the well-formed records around it.
   Each reject-mode corpus also holds other versions of its corpus files (backups, an editor's
   copy): they are not read, and the manifest names them.
3. Not rejected, by design, pinned here: Reuters-21578 non-UTF-8 bytes are read as Latin-1, an
   empty TEXT is a document, and a topic repeated in one element counts once (the real collection has
   all three: 0xFC in reut2-017, NEWID 12793, NEWID 5467 and 19918); a JSON Lines or LibMultiLabel text of
   white space only is a document too, as LibMultiLabel keeps it (tests/stages/test_one_corpus_every_format.py).
   Then, without Spark jobs: readers given numbers longer than Python converts; the corpus files
   ingest lists (exactly the format's names, ``NAME`` or ``NAME.gz``; an entry of such a name that is
   no regular file, or ``NAME`` beside ``NAME.gz``, stops it; other versions are named as ignored);
   the message for a corpus file Spark may not read; the console line counting rejected qrels lines.
4. The command line: bad input exits 1 with that message; bad configuration (unknown section or key,
   wrong type or value, missing path, missing --config file, --output inside corpus.path) exits 2
   with a message naming it, before Spark starts (``sparktc.apps.cli.session`` fails the test if called).
5. How a job ends (without Spark): each kind of user's or environment's error in its one line and exit status
   (2 refused before Spark starts, 1 at run time, 75 output busy); a bug (a ZeroDivisionError, a plain ValueError)
   keeps its traceback, and a job process ends in it with exit status 1.

A corrupt gzip stream is one reject for its whole file (line 0: the message names the file, the
reason the last line read). The records it loses cannot be counted, so the input counted here is
what the stream held before the break, plus one for the break.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
import textwrap
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from chispa import assert_df_equality
from conftest import REPO, ingested_term_ids, shared_data, term_id_form

from sparktc.apps import cli
from sparktc.apps.classify import ClassifyError
from sparktc.apps.compare import CompareError
from sparktc.apps.pipeline import plan, run
from sparktc.corpora import line_ranges
from sparktc.corpora.files import read_lines
from sparktc.corpora.lyrl2004 import Assignment, parse_qrels, parse_token_file
from sparktc.corpora.records import Reject
from sparktc.corpora.registry import FORMATS
from sparktc.corpora.reuters21578 import parse_sgml
from sparktc.errors import InputError, SparktcError
from sparktc.experiment.bundle import BundleError
from sparktc.experiment.config import ConfigError, load_config
from sparktc.experiment.corpus_files import IngestError, list_corpus
from sparktc.runtime.outputs import OutputBusyError, OutputError
from sparktc.runtime.permissions import permission_denied
from sparktc.runtime.resources import ResourceLimitError
from sparktc.runtime.runner import MissingInputError
from sparktc.stages.ingest.outputs import rejected_line

Row = tuple[str, int, "str | None", str]  # a reject: (file name, line, doc_id, reason)

REJECT_OPTION = "Fix the input, or set corpus.on_error=reject to set such records aside in the `rejects` table."
NOT_GZIP = b"this is not a gzip stream\n"
NOT_GZIP_REASON = ("corrupt gzip stream (Not a gzipped file (b'th')) before its first line; "
                   "nothing in the file could be read: re-fetch the file")


def cut_short_reason(last_line: int) -> str:
    return (f"corrupt gzip stream (Compressed file ended before the end-of-stream marker was reached) after line "
            f"{last_line}; the record being read there and every record after it are lost: re-fetch the file")


def gzip_cut(text: bytes, keep: int) -> bytes:
    """A gzip stream of ``text`` that breaks off after its first ``keep`` bytes. The stream is stored
    (compresslevel 0: a 10-byte gzip header, a 5-byte block header, then the bytes as they are), so
    the cut falls exactly there, as zlib confirms.
    """
    stream = gzip.compress(text, compresslevel=0, mtime=0)[: 10 + 5 + keep]
    assert zlib.decompressobj(31).decompress(stream) == text[:keep]
    return stream


@dataclass(frozen=True)
class Case:
    """One malformed record (or file) between well-formed ones.

    ``files`` join the format's base corpus (in place of ``replaces``); ``reject`` is the one reject
    they give; ``counted`` is what the failure message counts. Reuters-21578 and JSON Lines cases have
    files of their own, whose well-formed records (``accepted``: doc id -> split) and records in all
    (``written``) reconcile case by case.
    """

    format: str
    name: str
    files: dict[str, bytes]
    reject: Row
    replaces: tuple[str, ...] = ()
    counted: str = "records"
    accepted: dict[str, str] = field(default_factory=dict)
    written: int = 0

    def __str__(self) -> str:
        return f"{self.format}-{self.name}"


# --- Reuters-21578 ----------------------------------------------------------------------------------

DOCTYPE = b'<!DOCTYPE lewis SYSTEM "lewis.dtd">\n'
DAMAGED = "the file is truncated or damaged: restore it from the Reuters-21578 distribution"


def story(newid: str, split: str = "TRAIN", topics: str = "YES", body: bytes = b"Profit rose.") -> bytes:
    """One <REUTERS> element on five lines, as in the collection (README.txt VI.A), labelled earn;
    its text is its TITLE "STORY <newid>", a newline and its BODY.
    """
    tag = f'<REUTERS TOPICS="{topics}" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" OLDID="{newid}" NEWID="{newid}">'
    return (f"{tag}\n<TOPICS><D>earn</D></TOPICS>\n<TEXT>&#2;\n<TITLE>STORY {newid}</TITLE><BODY>".encode()
            + body + b"</BODY></TEXT>\n</REUTERS>\n")


REUTERS_BASE = {
    "reut2-000.sgm": (
        DOCTYPE                                              # line 1
        + story("1")                                         # lines 2-6
        + story("2", "TEST")                                 # lines 7-11
        + story("3", "NOT-USED", topics="NO")                # lines 12-16: set aside, not in ModApte
        + story("4", body=b"M\xfcnchen profit rose.")        # lines 17-21: a Latin-1 byte
        + b'<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="5" NEWID="5">\n'
          b'<TOPICS><D>earn</D></TOPICS>\n<TEXT TYPE="UNPROC">&#2;\n&#3;</TEXT>\n'
          b"</REUTERS>\n"                                    # lines 22-26: an empty TEXT, like NEWID 12793
    ),
}
REUTERS_BASE_RECORDS = 5
REUTERS_BASE_DOCUMENTS = {  # doc id -> split, text
    "1": ("train", "STORY 1\nProfit rose."), "2": ("test", "STORY 2\nProfit rose."),
    "4": ("train", "STORY 4\nM\u00fcnchen profit rose."), "5": ("train", "\n"),
}


def reuters_case(name: str, file: str, content: bytes, line: int, doc_id: str | None, reason: str,
                 accepted: dict[str, str], written: int = 3) -> Case:
    return Case("reuters21578", name, {file: content}, (file, line, doc_id, reason), accepted=accepted, written=written)


CUT_SGML = DOCTYPE + story("901") + story("902", "TEST") + story("903")

REUTERS_CASES = [
    # 101 and 102 on lines 2-11; 103 from line 12, the file ending inside its BODY on line 15
    reuters_case("truncated_at_end_of_file", "reut2-001.sgm",
                 DOCTYPE + story("101") + story("102", "TEST") + story("103").partition(b"rose")[0], 12, "103",
                 f"<REUTERS> element has no closing </REUTERS> before the end of the file (line 15); {DAMAGED}",
                 {"101": "train", "102": "test"}),
    # 202 on lines 7-10 without its </REUTERS>; 203 starts on line 11
    reuters_case("missing_close_tag", "reut2-002.sgm",
                 DOCTYPE + story("201") + story("202").replace(b"</REUTERS>\n", b"") + story("203", "TEST"), 7, "202",
                 f"<REUTERS> element has no closing </REUTERS> before the next <REUTERS> tag on line 11; {DAMAGED}",
                 {"201": "train", "203": "test"}),
    # the file starts inside 301 (its DOCTYPE and <REUTERS> lines lost): lines 1-4
    reuters_case("cut_at_start", "reut2-003.sgm",
                 story("301").split(b"\n", 1)[1] + story("302") + story("303", "TEST"), 1, None,
                 f"a record without a <REUTERS ...> line (lines 1-4, up to its </REUTERS>); {DAMAGED}",
                 {"302": "train", "303": "test"}),
    # line 6 reads '</REUTERS><REUTERS ... NEWID="402">'; 402 runs to its </REUTERS> on line 10
    reuters_case("run_into_the_previous_element", "reut2-004.sgm",
                 DOCTYPE + story("401")[:-1] + story("402") + story("403", "TEST"), 6, None,
                 f"a record without a <REUTERS ...> line (lines 6-10, up to its </REUTERS>); {DAMAGED}",
                 {"401": "train", "403": "test"}),
    reuters_case("non_numeric_id", "reut2-005.sgm",
                 DOCTYPE + story("501") + story("50x2") + story("503", "TEST"), 7, None,
                 'NEWID="50x2" is not a number; every document needs a numeric NEWID="n" to be identified',
                 {"501": "train", "503": "test"}),
    # NEWID 1 again: the copy in reut2-000.sgm (line 2) comes first and stays
    reuters_case("duplicate_id", "reut2-006.sgm",
                 DOCTYPE + story("601") + story("1", "TEST") + story("603", "TEST"), 7, "1",
                 "duplicate doc id (first at <corpus>/reut2-000.sgm:2); doc ids must be unique",
                 {"601": "train", "603": "test"}),
    # 702 on lines 7-9 has no <TEXT> at all
    reuters_case("empty_record", "reut2-007.sgm",
                 DOCTYPE + story("701")
                 + b'<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="702" NEWID="702">\n'
                   b"<TOPICS><D>earn</D></TOPICS>\n</REUTERS>\n"
                 + story("703", "TEST"), 7, "702",
                 "empty record: the element has no <TEXT> (lewis.dtd requires one); "
                 "restore it from the Reuters-21578 distribution",
                 {"701": "train", "703": "test"}),
    reuters_case("not_gzip", "reut2-008.sgm.gz", NOT_GZIP, 0, None, NOT_GZIP_REASON, {}, written=1),
    # 903 is on lines 12-16; the stream breaks inside its BODY, after line 14
    reuters_case("gzip_cut_short", "reut2-009.sgm.gz", gzip_cut(CUT_SGML, CUT_SGML.rindex(b"rose")), 0, None,
                 cut_short_reason(14), {"901": "train", "902": "test"}),
]


# --- JSON Lines --------------------------------------------------------------------------------------


def jline(doc_id: str, split: str = "train", labels: tuple[str, ...] = ("earn",), text: str = "Profit rose.") -> bytes:
    return json.dumps({"id": doc_id, "text": text, "labels": list(labels), "split": split}).encode() + b"\n"


JSONL_CATEGORIES = ["acq", "earn"]
JSONL_BASE = {
    "base.jsonl": (
        jline("b1")                                          # line 1
        + jline("b2", "test", ("acq",), "Shares bought.")    # line 2
        + jline("b3", text="Loss.")                          # line 3
        + b"\n"                                              # line 4: a blank line is no record
        + jline("b4", "test", ("acq",), " \n ")              # line 5: a text of white space only, a document
    ),
}
JSONL_BASE_RECORDS = 4
JSONL_BASE_DOCUMENTS = {  # doc id -> split, labels, text
    "b1": ("train", ["earn"], "Profit rose."), "b2": ("test", ["acq"], "Shares bought."),
    "b3": ("train", ["earn"], "Loss."), "b4": ("test", ["acq"], " \n "),
}
EXAMPLE = '{"id": "d1", "text": "...", "labels": ["earn"], "split": "train"}'


def jsonl_case(name: str, file: str, bad: bytes, doc_id: str | None, reason: str, first: str, last: str) -> Case:
    """A file of three lines: ``first`` (train), the ``bad`` record on line 2, ``last`` (test)."""
    return Case("jsonl", name, {file: jline(first) + bad + jline(last, "test")}, (file, 2, doc_id, reason),
                accepted={first: "train", last: "test"}, written=3)


CUT_JSONL = jline("g1") + jline("g2", "test") + jline("g3")

JSONL_CASES = [
    # The file ends inside line 3, whose text value opens with the quote in column 22.
    Case("jsonl", "truncated_at_end_of_file",
         {"truncated.jsonl": jline("t1") + jline("t2", "test") + b'{"id": "t3", "text": "Profit ro'},
         ("truncated.jsonl", 3, None,
          "invalid JSON (Unterminated string starting at: column 22); one object per line"),
         accepted={"t1": "train", "t2": "test"}, written=3),
    jsonl_case("missing_text", "missing_text.jsonl", b'{"id": "m2", "labels": ["earn"], "split": "train"}\n',
               "m2", f"missing field 'text'; each line must look like {EXAMPLE}", "m1", "m3"),
    jsonl_case("bad_id", "bad_id.jsonl", b'{"id": 2.5, "text": "Profit rose.", "labels": ["earn"], "split": "train"}\n',
               None, "field 'id' must be a non-empty string or an integer, got 2.5", "i1", "i3"),
    jsonl_case("duplicate_id_in_file", "duplicate_in_file.jsonl", jline("d1", "test"),
               "d1", "duplicate id 'd1' (already read earlier in this file); keep one line per id", "d1", "d3"),
    # b1 again: base.jsonl sorts first, so its copy stays
    jsonl_case("duplicate_id_across_files", "duplicate_across_files.jsonl", jline("b1", "test"),
               "b1", "duplicate doc id (first at <corpus>/base.jsonl:1); doc ids must be unique", "x1", "x3"),
    jsonl_case("unknown_category", "unknown_category.jsonl", jline("u2", labels=("earn", "zzz")),
               "u2", "unknown categories zzz (not in corpus.categories)", "u1", "u3"),
    jsonl_case("non_utf8", "non_utf8.jsonl",
               b'{"id": "n2", "text": "M\xfcnchen profit rose.", "labels": ["earn"], "split": "train"}\n',
               None, "line is not valid UTF-8; re-encode the file as UTF-8", "n1", "n3"),
    jsonl_case("repeated_label", "repeated_label.jsonl", jline("r2", labels=("earn", "earn")),
               "r2", "label 'earn' repeated in field 'labels'; list each label once", "r1", "r3"),
    # json.loads would keep the last id, k9, and the document would change its id unseen.
    jsonl_case("repeated_key", "repeated_key.jsonl",
               b'{"id": "k2", "text": "Profit rose.", "labels": ["earn"], "split": "train", "id": "k9"}\n', None,
               "key 'id' repeated in a JSON object; give each key once", "k1", "k3"),
    # json.loads raises RecursionError here; the file's name is a glob pattern that matches no file.
    jsonl_case("deep_nesting", "deep[1].jsonl", b"[" * 100_000 + b"\n", None,
               "JSON nested too deeply (Python's parser stops at its recursion limit, about 1,000 levels); "
               "flatten the record", "p1", "p3"),
    # json.loads raises ValueError: int() converts at most 4,300 digits
    jsonl_case("long_number", "long_number.jsonl",
               b'{"id": ' + b"1" * 5000 + b', "text": "Profit rose.", "labels": ["earn"], "split": "train"}\n', None,
               "number too long: over 4,300 digits (Python's int conversion limit); write it as a string", "l1", "l3"),
    # Valid JSON, but UTF-8 (and so Arrow) cannot hold the string.
    jsonl_case("unpaired_surrogate", "surrogate.jsonl",
               b'{"id": "s2", "text": "caf\\udce9", "labels": ["earn"], "split": "train"}\n', "s2",
               "field 'text' holds an unpaired surrogate escape ('caf\\udce9'), which is no character and cannot be "
               "stored as UTF-8; fix or drop the escape", "s1", "s3"),
    Case("jsonl", "not_gzip", {"not_gzip.jsonl.gz": NOT_GZIP}, ("not_gzip.jsonl.gz", 0, None, NOT_GZIP_REASON),
         written=1),
    # The stream breaks inside line 3.
    Case("jsonl", "gzip_cut_short", {"cut_short.jsonl.gz": gzip_cut(CUT_JSONL, CUT_JSONL.rindex(b"Profit"))},
         ("cut_short.jsonl.gz", 0, None, cut_short_reason(2)), accepted={"g1": "train", "g2": "test"}, written=3),
]


# --- LYRL2004 -----------------------------------------------------------------------------------------

TRAIN = "lyrl2004_tokens_train.dat"
PT = "lyrl2004_tokens_test_pt{}.dat".format
QRELS = "rcv1-v2.topics.qrels"
FORMAT_HINT = "each record is '.I <id>', '.W', token lines, blank line (REFERENCE.md section 1)"
UNKNOWN_DOCUMENT = "qrels line for a document not among the accepted documents of the token files"
UNKNOWN_XXXX = "unknown category XXXX (not in <hierarchy>)"

CUT_PT2 = b".I 12\n.W\nlambda mu\n\n.I 22\n.W\nnu xi omicron\n\n"
# Broken inside 22's tokens, after six whole lines: 12 ends where .I 22 starts and is kept; 22 is lost.
CUT_PT2_GZ = gzip_cut(CUT_PT2, CUT_PT2.index(b"xi"))
LYRL_QRELS = b"C15 1 1\nCCAT 1 1\nECAT 2 1\nGCAT 3 1\nCCAT 10 1\nECAT 11 1\nGCAT 12 1\nMCAT 13 1\n"  # lines 1-8
LYRL_BASE = {  # each token file starts with a record on lines 1-4; a case puts its record on line 5
    TRAIN: b".I 1\n.W\nalpha beta\n\n.I 2\n.W\ngamma delta\n\n.I 3\n.W\nepsilon zeta\n\n",
    PT(0): b".I 10\n.W\neta theta\n\n.I 20\n.W\nphi chi\n\n",
    PT(1): b".I 11\n.W\niota kappa\n\n",
    PT(2): b".I 12\n.W\nlambda mu\n\n",
    PT(3): b".I 13\n.W\nrho sigma\n\n.I 23\n.W\ntau upsilon\n\n",
    QRELS: LYRL_QRELS,  # 20 and 23 have no topics: documents without labels are fine
}


def token_case(name: str, file: str, record: bytes, line: int, doc_id: str | None, reason: str) -> Case:
    """``record`` put into token file ``file`` after its first record, so on line 5."""
    first, rest = LYRL_BASE[file].split(b"\n\n", 1)
    return Case("lyrl2004", name, {file: first + b"\n\n" + record + rest}, (file, line, doc_id, reason))


LYRL_CASES = [
    token_case("no_w", TRAIN, b".I 100\n\n", 5, "100", f".I 100 has no .W line; {FORMAT_HINT}"),
    token_case("non_numeric_id", PT(0), b".I 10x2\n.W\nomega\n\n", 5, None,
               "doc id '10x2' is not a number; LYRL2004 ids are decimal numbers"),
    token_case("empty_document", PT(3), b".I 101\n.W\n\n", 5, "101",
               "empty document: no tokens after .W; drop the record or add its tokens"),
    Case("lyrl2004", "not_gzip", {PT(1) + ".gz": NOT_GZIP}, (PT(1) + ".gz", 0, None, NOT_GZIP_REASON),
         replaces=(PT(1),)),
    Case("lyrl2004", "gzip_cut_short", {PT(2) + ".gz": CUT_PT2_GZ}, (PT(2) + ".gz", 0, None, cut_short_reason(6)),
         replaces=(PT(2),)),
    token_case("duplicate_id_in_file", TRAIN, b".I 1\n.W\nomega\n\n", 5, "1",
               "duplicate doc id 1 (already read earlier in this file); keep one record per id"),
    token_case("non_utf8", PT(0), b".I 102\n.W\nomega \xff\xfe psi\n\n", 7, "102",
               "line 7 is not valid UTF-8; re-encode the file as UTF-8"),
    # 10 is test_pt0's first record too; ".../lyrl2004_tokens_test_pt0.dat" sorts first, so that copy stays.
    token_case("duplicate_id_across_files", PT(3), b".I 10\n.W\nomega\n\n", 5, "10",
               f"duplicate doc id (first at <corpus>/{PT(0)}:1); doc ids must be unique"),
    Case("lyrl2004", "qrels_unknown_document", {QRELS: LYRL_QRELS + b"CCAT 99999 1\n"},
         (QRELS, 9, "99999", UNKNOWN_DOCUMENT), counted="qrels lines"),
    Case("lyrl2004", "qrels_unknown_category", {QRELS: LYRL_QRELS + b"XXXX 3 1\n"},
         (QRELS, 9, "3", UNKNOWN_XXXX), counted="qrels lines"),
]

# Every LYRL2004 case at once. The token cases share one training file, so their lines differ from
# above; a rejected or lost document's qrels lines are rejected in turn.
LYRL_ALL_KINDS = {
    TRAIN: (
        b".I 1\n.W\nalpha beta\n\n"               # lines 1-4
        b".I 100\n\n"                             # line 5: no .W
        b".I 10x2\n.W\nomega\n\n"                 # line 7: non-numeric id
        b".I 2\n.W\ngamma delta\n\n"              # lines 11-14
        b".I 2\n.W\nomega\n\n"                    # line 15: duplicate in this file
        b".I 10\n.W\nomega\n\n"                   # line 19: duplicate of test_pt0's 10
        b".I 101\n.W\n\n"                         # line 23: empty document
        b".I 102\n.W\nomega \xff\xfe psi\n\n"     # line 26, bad bytes on line 28
        b".I 3\n.W\nepsilon zeta\n\n"             # lines 30-33
    ),
    PT(0): b".I 10\n.W\neta theta\n\n",
    PT(1) + ".gz": NOT_GZIP,                      # 11 is lost with it
    PT(2) + ".gz": CUT_PT2_GZ,
    PT(3): b".I 13\n.W\nrho sigma\n\n",
    QRELS: LYRL_QRELS + (                         # lines 1-8, then
        b"CCAT 99999 1\n"                         # line 9: no such document
        b"XXXX 3 1\n"                             # line 10: no such category
        b"CCAT 100 1\n"                           # line 11: 100 was rejected (no .W)
    ),
}
LYRL_ALL_KINDS_RECORDS = 9 + 1 + 1 + 2 + 1  # train, pt0, pt1 (unreadable: one), pt2 (12, and 22 lost), pt3
LYRL_ALL_KINDS_QRELS_LINES = 11
LYRL_ALL_KINDS_REJECTS: dict[str, list[Row]] = {
    "no_w": [(TRAIN, 5, "100", f".I 100 has no .W line; {FORMAT_HINT}"), (QRELS, 11, "100", UNKNOWN_DOCUMENT)],
    "non_numeric_id": [(TRAIN, 7, None, "doc id '10x2' is not a number; LYRL2004 ids are decimal numbers")],
    "empty_document": [(TRAIN, 23, "101", "empty document: no tokens after .W; drop the record or add its tokens")],
    "not_gzip": [(PT(1) + ".gz", 0, None, NOT_GZIP_REASON), (QRELS, 6, "11", UNKNOWN_DOCUMENT)],
    "gzip_cut_short": [(PT(2) + ".gz", 0, None, cut_short_reason(6))],
    "duplicate_id_in_file": [
        (TRAIN, 15, "2", "duplicate doc id 2 (already read earlier in this file); keep one record per id")],
    "non_utf8": [(TRAIN, 28, "102", "line 28 is not valid UTF-8; re-encode the file as UTF-8")],
    "duplicate_id_across_files": [
        (TRAIN, 19, "10", f"duplicate doc id (first at <corpus>/{PT(0)}:1); doc ids must be unique")],
    "qrels_unknown_document": [(QRELS, 9, "99999", UNKNOWN_DOCUMENT)],
    "qrels_unknown_category": [(QRELS, 10, "3", UNKNOWN_XXXX)],
}
LYRL_ALL_KINDS_DOCUMENTS = [  # doc_id, split, labels (from the qrels, sorted), tokens
    ("1", "train", ["C15", "CCAT"], "alpha beta"), ("2", "train", ["ECAT"], "gamma delta"),
    ("3", "train", ["GCAT"], "epsilon zeta"), ("10", "test", ["CCAT"], "eta theta"),
    ("12", "test", ["GCAT"], "lambda mu"), ("13", "test", ["MCAT"], "rho sigma"),
]


# --- LibMultiLabel's text format ------------------------------------------------------------------------------

# train.txt is read in byte ranges of about LMLT_RANGE_BYTES (three), test.txt.gz whole.
LMLT_RANGE_BYTES = 64
LMLT_ALL_KINDS = {
    "train.txt": (
        b"d1\tGCAT E11\tOil prices rose.\n"          # line 1
        b"\n"                                         # line 2: blank, no record
        b"d2\tC24\ttab\tinside\n"                     # line 3: four fields
        b"d3\tC24\n"                                   # line 4: no text
        b"d1\tM11\tagain\n"                            # line 5: d1 again
        b"d5\tGCAT\t   \r\n"                          # line 6: a text of white space only, a document
        b"d6\tGC\x01AT\tbad label\n"                  # line 7
        b"d7\tE11\t\xff bytes\n"                       # line 8: not UTF-8
        b"d8\tECAT\tWheat shipped.\r\n"                # line 9
        b"t1\tGCAT\tin both files\n"                   # line 10: t1 again
    ),
    "test.txt.gz": gzip.compress(b"t1\tGCAT\tFirst test text.\nt2\t\tNo labels here.\n", mtime=0),
}
LMLT_ALL_KINDS_RECORDS = 9 + 2
LMLT_FILE_HAS = "where the file has 3 (id, labels, text), as its first line (line 1) has them"
LMLT_ALL_KINDS_REJECTS: list[Row] = [
    ("train.txt", 3, "d2", f"4 tab-separated fields {LMLT_FILE_HAS}: LibMultiLabel's reader skips such a line with "
                           "only a warning; no field may hold a tab: replace the tabs inside the text by spaces"),
    ("train.txt", 4, "d3", f"2 tab-separated fields {LMLT_FILE_HAS}: no text (LibMultiLabel reads an empty one); "
                           "give the document its text, or drop the line"),
    ("train.txt", 5, "d1", "duplicate doc id (first at <corpus>/train.txt:1); doc ids must be unique"),
    ("train.txt", 7, "d6", "label 'GC\\x01AT' in the labels field holds U+0001, a control character, at character "
                           "3: it prints invisibly or breaks a report's line; remove it"),
    ("train.txt", 8, None, "line is not valid UTF-8; re-encode the file as UTF-8"),
    # ".../test.txt.gz" sorts before ".../train.txt": its t1 comes first and stays.
    ("train.txt", 10, "t1", "duplicate doc id (first at <corpus>/test.txt.gz:1); doc ids must be unique"),
]
LMLT_ALL_KINDS_DOCUMENTS = {  # doc id -> split, labels, text
    "d1": ("train", ["GCAT", "E11"], "Oil prices rose."), "d5": ("train", ["GCAT"], "   "),
    "d8": ("train", ["ECAT"], "Wheat shipped."),
    "t1": ("test", ["GCAT"], "First test text."), "t2": ("test", [], "No labels here."),
}

CASES = REUTERS_CASES + JSONL_CASES + LYRL_CASES
BASES = {"reuters21578": REUTERS_BASE, "jsonl": JSONL_BASE, "lyrl2004": LYRL_BASE, "libmultilabel_text": {}}
#: The formats whose reject-mode corpus is written whole here, not made of cases.
ALL_KINDS = {"lyrl2004": LYRL_ALL_KINDS, "libmultilabel_text": LMLT_ALL_KINDS}
# Other versions of corpus files beside them in the reject-mode corpora: never read (their records
# would be duplicates), named in the manifest. Files of other names, like README.txt, go unmentioned.
BACKUPS = {
    "reuters21578": {"reut2-000.sgm.bak": REUTERS_BASE["reut2-000.sgm"],
                     "reut2-001.sgm~": REUTERS_BASE["reut2-000.sgm"], "README.txt": b"Reuters-21578\n"},
    "jsonl": {"base.jsonl.bak": JSONL_BASE["base.jsonl"], "base.jsonl.tmp": JSONL_BASE["base.jsonl"],
              "README.txt": b"JSON Lines\n"},
    "lyrl2004": {TRAIN + ".orig": LYRL_ALL_KINDS[TRAIN], QRELS + ".gz.part": gzip.compress(LYRL_QRELS)},
    "libmultilabel_text": {"train.txt.orig": LMLT_ALL_KINDS["train.txt"], "test.txt.gz.part": b"",
                           "README.txt": b"LibMultiLabel\n"},
}


# --- corpora, runs and the messages they give ----------------------------------------------------------


def hierarchy() -> str:
    return str(shared_data("rcv1", "rcv1.topics.hier.orig"))


def settings(fmt: str, corpus: Path, on_error: str = "fail") -> list[str]:
    extra = {"lyrl2004": [f"corpus.hierarchy={hierarchy()}"],
             "jsonl": [f"corpus.categories={json.dumps(JSONL_CATEGORIES)}"], "reuters21578": [],
             "libmultilabel_text": []}[fmt]
    return [f"corpus.format={fmt}", f"corpus.path={corpus}", f"corpus.on_error={on_error}", *extra]


def write(directory: Path, files: dict[str, bytes]) -> Path:
    directory.mkdir(parents=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return directory


def corpus_of(cases: list[Case], directory: Path) -> Path:
    """The base corpus of the cases' format with every case's files in it."""
    replaced = {name for case in cases for name in case.replaces}
    files = {name: data for name, data in BASES[cases[0].format].items() if name not in replaced}
    for case in cases:
        files |= case.files
    return write(directory, files)


def resolved(row: Row, corpus: Path) -> Row:
    """``row`` with its reason's placeholders filled in: the corpus directory as Spark names it, the hierarchy."""
    name, line, doc_id, reason = row
    return name, line, doc_id, reason.replace("<corpus>", f"file:{corpus}").replace("<hierarchy>", hierarchy())


def shown(row: Row, corpus: Path) -> str:
    """A reject as the failure message shows it: ``file:line (doc id): reason``; no line for a whole file."""
    name, line, doc_id, reason = resolved(row, corpus)
    where = f"file:{corpus}/{name}" + (f":{line}" if line else "")
    return where + (f" (doc {doc_id})" if doc_id is not None else "") + f": {reason}"


@pytest.fixture(scope="module")
def small_queries(spark):
    """Plans for tiny inputs while this module's ingest runs go (a few records each): adaptive execution
    and four shuffle partitions cost more jobs and tasks than they save here. Restored afterwards.
    """
    tuned = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "1"}
    before = {key: spark.conf.get(key) for key in tuned}
    for key, value in tuned.items():
        spark.conf.set(key, value)
    yield spark
    for key, value in before.items():
        spark.conf.set(key, value)


# --- 1. fail mode ------------------------------------------------------------------------------------
# Cases in different files share a corpus, up to five (the message lists five records): each is shown
# exactly as it would be alone, since a reader sees one file at a time and no case's record is another's.


def fail_groups(cases: list[Case], size: int = 5) -> list[list[Case]]:
    """``cases`` packed in order into groups of at most ``size`` of one format that touch disjoint files
    and count the same thing (qrels lines are checked only once the records are clean).
    """
    groups: list[list[Case]] = []
    for case in cases:
        touched = {*case.files, *case.replaces}
        for group in groups:
            if (len(group) < size and (group[0].format, group[0].counted) == (case.format, case.counted)
                    and not any(touched & {*other.files, *other.replaces} for other in group)):
                group.append(case)
                break
        else:
            groups.append([case])
    return groups


FAIL_GROUPS = fail_groups(CASES)
#: The groups run in fail mode: the first of each format and what it counts, and every LYRL2004 group (its reject-mode
#: corpus lays the token cases out in one training file, on other lines). The other groups' cases (Reuters-21578,
#: JSON Lines) have the same files in reject mode, where their rows are checked exactly
#: (:func:`test_reject_mode_sets_the_case_aside_and_keeps_its_neighbours`); fail mode shows rows of the same rejects
#: table, each as :meth:`Reject.message` writes it (:func:`test_fail_mode_shows_each_reject_as_its_message`).
FAIL_RUNS = [group for i, group in enumerate(FAIL_GROUPS) if group[0].format == "lyrl2004" or not any(
    (other[0].format, other[0].counted) == (group[0].format, group[0].counted) for other in FAIL_GROUPS[:i])]


@pytest.fixture(scope="module")
def failures(small_queries, tmp_path_factory):
    """Ingest in fail mode over each group's corpus, once, on first use: case -> (message, corpus)."""
    spark, done = small_queries, {}

    def failure(case: Case) -> tuple[str, Path]:
        index = next(i for i, group in enumerate(FAIL_RUNS) if str(case) in map(str, group))
        if index not in done:
            root = tmp_path_factory.mktemp(f"fail_{case.format}")
            corpus = corpus_of(FAIL_RUNS[index], root / "corpus")
            with pytest.raises(IngestError) as caught:
                run(spark, load_config(None, settings(case.format, corpus)), str(root / "out"), "ingest")
            assert not (root / "out" / "documents").exists()  # nothing published
            done[index] = str(caught.value), corpus
        return done[index]

    return failure


@pytest.mark.parametrize("case", [case for group in FAIL_RUNS for case in group], ids=str)
def test_fail_mode_names_file_line_and_the_reject_option(failures, case):
    message, corpus = failures(case)
    header, *records, option = message.split("\n")
    count = len(next(group for group in FAIL_RUNS if case in group))  # one reject per case
    assert header == f"{count} bad {case.counted if count != 1 else case.counted.removesuffix('s')}; the first:"
    assert f"  {shown(case.reject, corpus)}" in records, records
    assert option == REJECT_OPTION


def test_fail_mode_message_in_full(failures):
    """The count of bad records, each (five at most) by file and line, and what to do."""
    group = FAIL_RUNS[0]
    message, corpus = failures(group[0])
    assert [case.format for case in group] == ["reuters21578"] * 5
    expected = ["5 bad records; the first:", *(f"  {shown(case.reject, corpus)}" for case in group), REJECT_OPTION]
    assert message.split("\n") == expected


@pytest.mark.parametrize("case", CASES, ids=str)
def test_fail_mode_shows_each_reject_as_its_message(case, tmp_path):
    """A reject row (``file:CORPUS/NAME``, line, doc id, reason) is the line fail mode shows for it."""
    name, line, doc_id, reason = resolved(case.reject, tmp_path)
    assert Reject(f"file:{tmp_path}/{name}", line, doc_id, reason).message() == shown(case.reject, tmp_path)


# --- 2. reject mode: all the cases of a format in one corpus --------------------------------------------


@dataclass
class Outcome:
    """One reject-mode ingest run: its corpus, manifest and tables."""

    corpus: Path
    manifest: dict
    rejects: list[Row]  # by file name
    documents: dict[str, tuple]  # doc id -> the other columns
    tables: dict


@pytest.fixture(scope="module")
def all_kinds(small_queries, tmp_path_factory):
    """Ingest in reject mode over the corpus of all a format's cases, once, on first use: format -> Outcome."""
    spark, outcomes = small_queries, {}

    def outcome(fmt: str) -> Outcome:
        if fmt not in outcomes:
            root = tmp_path_factory.mktemp(f"all_kinds_{fmt}")
            if fmt in ALL_KINDS:
                corpus = write(root / "corpus", ALL_KINDS[fmt])
            else:
                corpus = corpus_of([case for case in CASES if case.format == fmt], root / "corpus")
            for name, data in BACKUPS[fmt].items():
                (corpus / name).write_bytes(data)
            with pytest.MonkeyPatch.context() as patch:
                # LYRL2004's token files whole, as their reader rejects a repeated id (its files in byte ranges:
                # tests/stages/test_ingest_clean.py).
                if fmt != "lyrl2004":
                    patch.setattr(line_ranges, "RANGE_BYTES", LMLT_RANGE_BYTES)
                [manifest] = run(spark, load_config(None, settings(fmt, corpus, "reject")), str(root / "out"),
                                 "ingest")
            rejects, documents = (spark.read.parquet(f"{root}/out/{table}") for table in ("rejects", "documents"))
            rows = [(r.source.rsplit("/", 1)[-1], r.line, r.doc_id, r.reason) for r in rejects.collect()]
            # doc id -> its other columns; the documents of a format with a clean path also keep where they were read
            columns = ["split", "labels", "term_ids"] if fmt == "lyrl2004" else ["split", "labels", "text", "tokens"]
            by_id = {r.doc_id: tuple(r[c] for c in columns) for r in documents.collect()}
            outcomes[fmt] = Outcome(corpus, manifest, rows, by_id, {"rejects": rejects, "documents": documents})
        return outcomes[fmt]

    return outcome


def assert_rejects_table(spark, outcome: Outcome, expected: list[Row]) -> None:
    rows = [resolved(row, outcome.corpus) for row in expected]
    table = spark.createDataFrame([(f"file:{outcome.corpus}/{name}", *rest) for name, *rest in rows],
                                  "source string, line int, doc_id string, reason string")
    assert_df_equality(outcome.tables["rejects"], table, ignore_row_order=True, ignore_nullable=True)


def reconcile(outcome: Outcome, written: int, set_aside: dict[str, int]) -> None:
    """Records written here = documents + record rejects + set aside; the manifest says the same."""
    record_rejects = sum(1 for row in outcome.rejects if row[0] != QRELS)
    assert written == len(outcome.documents) + record_rejects + sum(set_aside.values())
    assert outcome.manifest["rows_in"] == written
    assert outcome.manifest["rows_out"] == len(outcome.documents)
    assert outcome.manifest["set_aside"] == {"rejected": record_rejects, **set_aside}


def test_reuters21578_all_kinds_at_once(spark, all_kinds):
    outcome = all_kinds("reuters21578")
    assert_rejects_table(spark, outcome, [case.reject for case in REUTERS_CASES])
    documents = dict(REUTERS_BASE_DOCUMENTS)
    for case in REUTERS_CASES:
        documents |= {doc_id: (split, f"STORY {doc_id}\nProfit rose.") for doc_id, split in case.accepted.items()}
    # Each story's title is its text's first line, "STORY <newid>"; the empty UNPROC text (NEWID 5) has none.
    expected = spark.createDataFrame(
        [(d, split, ["earn"], text, text.partition("\n")[0] or None, None) for d, (split, text) in documents.items()],
        "doc_id string, split string, labels array<string>, text string, title string, tokens string")
    assert_df_equality(outcome.tables["documents"], expected, ignore_row_order=True, ignore_nullable=True)
    written = REUTERS_BASE_RECORDS + sum(case.written for case in REUTERS_CASES)
    assert written == 5 + 8 * 3 + 1
    reconcile(outcome, written, {"not in the ModApte split": 1})


def test_jsonl_all_kinds_at_once(spark, all_kinds):
    outcome = all_kinds("jsonl")
    assert_rejects_table(spark, outcome, [case.reject for case in JSONL_CASES])
    documents = dict(JSONL_BASE_DOCUMENTS)
    for case in JSONL_CASES:
        documents |= {doc_id: (split, ["earn"], "Profit rose.") for doc_id, split in case.accepted.items()}
    expected = spark.createDataFrame([(d, *columns, None, None) for d, columns in documents.items()],
                                     "doc_id string, split string, labels array<string>, text string, title string, "
                                     "tokens string")
    # JSON Lines documents keep where they were read, as the clean path's staged records have it.
    documents = outcome.tables["documents"]
    assert documents.columns[6:] == ["source", "line", "reason"]
    assert_df_equality(documents.select(*documents.columns[:6]), expected, ignore_row_order=True,
                       ignore_nullable=True)
    written = JSONL_BASE_RECORDS + sum(case.written for case in JSONL_CASES)
    assert written == 4 + 13 * 3 + 1
    reconcile(outcome, written, {})


def test_lyrl2004_all_kinds_at_once(spark, all_kinds):
    outcome = all_kinds("lyrl2004")
    assert_rejects_table(spark, outcome, [row for rows in LYRL_ALL_KINDS_REJECTS.values() for row in rows])
    expected = spark.createDataFrame([row[:3] for row in LYRL_ALL_KINDS_DOCUMENTS],
                                     "doc_id string, split string, labels array<string>")
    assert_df_equality(outcome.tables["documents"].select("doc_id", "split", "labels"), expected,
                       ignore_row_order=True, ignore_nullable=True)
    # The tokens as ingest writes them: each document's training terms' ids and counts. The training terms are those
    # of the training file's records the reader accepted, its copy of 10 among them (rejected later, as a duplicate
    # across files): so omega is one.
    training = [doc_id for doc_id, split, _, _ in LYRL_ALL_KINDS_DOCUMENTS if split == "train"]
    tokens = {doc_id: words.split() for doc_id, _, _, words in LYRL_ALL_KINDS_DOCUMENTS}
    terms, form = term_id_form({**tokens, "10 in train": ["omega"]}, [*training, "10 in train"])
    del form["10 in train"]
    assert ingested_term_ids(spark, str(outcome.corpus.parent / "out")) == (terms, form)
    reconcile(outcome, LYRL_ALL_KINDS_RECORDS, {})
    # qrels lines are assignments, not documents: lines written = accepted (the documents' labels) + rejected.
    qrels_rejects = sum(1 for row in outcome.rejects if row[0] == QRELS)
    accepted = sum(len(labels) for _, labels, _ in outcome.documents.values())
    assert LYRL_ALL_KINDS_QRELS_LINES == accepted + qrels_rejects == 7 + 4
    details = outcome.manifest["details"]
    assert (details["qrels_lines"], details["qrels_rejected"]) == (LYRL_ALL_KINDS_QRELS_LINES, qrels_rejects)
    assert (details["train_documents"], details["test_documents"]) == (3, 3)
    # Every category of the hierarchy, its positives counted on the accepted documents only.
    categories = spark.read.parquet(str(outcome.corpus.parent / "out" / "categories")).toPandas()
    positives = Counter((label, split) for _, split, labels, _ in LYRL_ALL_KINDS_DOCUMENTS for label in labels)
    assert len(categories) == 103 and {
        row.category: (row.train_positives, row.test_positives) for row in categories.itertuples()
        if row.train_positives or row.test_positives} == {
        category: (positives[category, "train"], positives[category, "test"]) for category, _ in positives}


def test_libmultilabel_text_all_kinds_at_once(spark, all_kinds):
    outcome = all_kinds("libmultilabel_text")
    with pytest.MonkeyPatch.context() as patch:  # as ingest ran: train.txt in three ranges
        patch.setattr(line_ranges, "RANGE_BYTES", LMLT_RANGE_BYTES)
        assert len(line_ranges.file_ranges("train.txt", len(LMLT_ALL_KINDS["train.txt"]))) == 3
    assert_rejects_table(spark, outcome, LMLT_ALL_KINDS_REJECTS)
    expected = spark.createDataFrame([(d, *columns, None, None) for d, columns in LMLT_ALL_KINDS_DOCUMENTS.items()],
                                     "doc_id string, split string, labels array<string>, text string, title string, "
                                     "tokens string")
    documents = outcome.tables["documents"]
    assert_df_equality(documents.select(*documents.columns[:6]), expected, ignore_row_order=True,
                       ignore_nullable=True)
    reconcile(outcome, LMLT_ALL_KINDS_RECORDS, {})


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reject_mode_sets_the_case_aside_and_keeps_its_neighbours(all_kinds, case):
    outcome = all_kinds(case.format)
    if case.format == "lyrl2004":
        # The token cases share the training file here: their rows, and the qrels lines they cost, are above.
        expected = {resolved(row, outcome.corpus) for row in LYRL_ALL_KINDS_REJECTS[case.name]}
        assert expected <= set(outcome.rejects), outcome.rejects
        assert {"1", "2", "3"} <= outcome.documents.keys()  # the training file's well-formed records
        return
    # Reuters-21578 and JSON Lines: the case's own files, unchanged from fail mode.
    rows = [row for row in outcome.rejects if row[0] in case.files]
    assert rows == [resolved(case.reject, outcome.corpus)]
    assert {doc_id: outcome.documents.get(doc_id, (None,))[0] for doc_id in case.accepted} == case.accepted
    assert case.written == len(case.accepted) + len(rows)


@pytest.mark.parametrize("fmt", BASES)
def test_other_versions_of_corpus_files_are_named_not_read(all_kinds, fmt):
    outcome = all_kinds(fmt)
    assert outcome.manifest["details"]["ignored_files"] == sorted(set(BACKUPS[fmt]) - {"README.txt"})
    assert not {row[0] for row in outcome.rejects} & set(BACKUPS[fmt])  # their duplicates would be rejects


# --- 3. not rejected, by design --------------------------------------------------------------------------


def test_reuters21578_non_utf8_bytes_are_read_as_latin1(all_kinds):
    """The collection itself has a stray 0xFC (reut2-017): rejecting it would stop every real run."""
    assert all_kinds("reuters21578").documents["4"] == ("train", ["earn"], "STORY 4\nM\u00fcnchen profit rose.", None)


def test_an_empty_text_is_a_document_in_every_text_format(all_kinds):
    """An empty TEXT is a Reuters-21578 record (NEWID 12793 has one), and a JSON Lines or LibMultiLabel text of
    white space only a document, as LibMultiLabel keeps it; tokenize counts each as a document without tokens.
    Rejected are a Reuters-21578 element with no TEXT at all (an empty record), a LibMultiLabel line without its
    text field and a LYRL2004 .W without tokens.
    """
    assert all_kinds("reuters21578").documents["5"] == ("train", ["earn"], "\n", None)
    assert all_kinds("jsonl").documents["b4"] == ("test", ["acq"], " \n ", None)
    assert all_kinds("libmultilabel_text").documents["d5"] == ("train", ["GCAT"], "   ", None)


def test_a_reuters21578_topic_repeated_in_an_element_counts_once():
    """Two elements of the collection list a topic twice; the reader keeps the first of each, in file order.
    Counted twice, NEWID 5467 would be two training positives of corn.
    """
    expected = {"5467": ("grain", "wheat", "corn", "cotton", "sorghum", "barley"), "19918": ("trade",)}
    found = {}
    for name in ("reut2-005.sgm.gz", "reut2-019.sgm.gz"):
        path = shared_data("reuters21578", name)
        found |= {d.doc_id: d.labels for d in parse_sgml(read_lines(path.read_bytes(), name), name)
                  if d.doc_id in expected}
    assert found == expected


# --- readers, corpus files and messages, without Spark jobs ------------------------------------------------


def test_readers_take_numbers_longer_than_python_converts():
    """int() refuses decimals of over 4,300 digits; a reader meeting one must not raise."""
    digits = "1" * 5000
    # Reuters-21578: a character entity that long is past U+10FFFF: kept as written.
    sgml = DOCTYPE + story("8", body=f"Profit &#{digits}; rose.".encode())
    [document] = parse_sgml(read_lines(sgml, "reut2-000.sgm"), "reut2-000.sgm")
    assert document.text == f"STORY 8\nProfit &#{digits}; rose."
    # LYRL2004: a canonical id however long, and an id with leading zeros named as such.
    tokens = [f".I {digits}\n".encode(), b".W\n", b"alpha\n", f".I 0{digits}\n".encode(), b".W\n", b"beta\n"]
    [first, second] = parse_token_file(tokens, TRAIN, "train")
    assert (first.doc_id, first.tokens) == (digits, ("alpha",))
    assert second.reason == f"doc id '0{digits}' has leading zeros; write it as '{digits}'; " \
                            "LYRL2004 ids are decimal numbers"
    assert list(parse_qrels([f"CCAT {digits} 1\n".encode()], QRELS)) == [Assignment("CCAT", digits, QRELS, 1)]


def test_corpus_files_are_exactly_the_format_names(spark, tmp_path, capsys):
    """``NAME`` and ``NAME.gz`` are read; other names starting like a corpus file are named as ignored;
    hidden files (checksums, editors' swap files) and other names go unmentioned.
    """
    listings = [
        (FORMATS["reuters21578"].names, ["reut2-000.sgm", "reut2-001.sgm.gz"],
         ["reut2-000.sgm.bak", "reut2-001.sgm.gz~", "reut2-1.sgm"], [".reut2-000.sgm.crc", "README.txt"]),
        (FORMATS["jsonl"].names, ["a.jsonl", "b.jsonl.gz"], ["a.jsonl.orig", "a.jsonl.tmp", "b.jsonl.gz.1"],
         [".a.jsonl.swp", "_SUCCESS", "notes.txt"]),
        (FORMATS["lyrl2004"].names, [PT(0) + ".gz", TRAIN, QRELS], [TRAIN + "~", QRELS + ".bak"],
         ["rcv1.topics.hier.orig", "lyrl2004_tokens_test_pt4.dat"]),
    ]
    for index, (names, read, ignored, unmentioned) in enumerate(listings):
        corpus = write(tmp_path / str(index), dict.fromkeys([*read, *ignored, *unmentioned], b""))
        assert list_corpus(spark, str(corpus), names, "a hint") == ([f"file:{corpus}/{name}" for name in read], ignored)
        assert capsys.readouterr().out == (f"sparktc: ingest: ignoring {len(ignored)} file(s) in corpus.path that are "
                                           f"not corpus files: {', '.join(ignored)}\n")


def test_a_corpus_file_name_on_what_is_no_file_stops_ingest(spark, tmp_path, monkeypatch):
    """Hadoop's local listing drops the dangling link and calls the FIFO and the socket files (Spark would
    wait on the FIFO forever); every such entry is named, with what to do.
    """
    corpus = write(tmp_path / "corpus", {"a.jsonl": jline("a1")})
    monkeypatch.chdir(corpus)  # a short socket path
    (corpus / "dir.jsonl").mkdir()
    os.mkfifo("fifo.jsonl")
    os.symlink(tmp_path / "gone.jsonl", "gone.jsonl")
    os.symlink("a.jsonl", "link.jsonl")  # a link to a file is that file
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("socket.jsonl")
        with pytest.raises(IngestError) as caught:
            list_corpus(spark, str(corpus), FORMATS["jsonl"].names, "a hint")
    what_to_do = "not a file; replace it with the file itself, or move it out of corpus.path"
    assert str(caught.value).split("\n") == [
        f"file:{corpus}/dir.jsonl is a directory, {what_to_do}",
        f"file:{corpus}/fifo.jsonl is a FIFO (named pipe), {what_to_do}",
        f"file:{corpus}/gone.jsonl is a symbolic link to {tmp_path}/gone.jsonl, which does not exist; "
        "restore that file, or remove the link",
        f"file:{corpus}/socket.jsonl is a socket, {what_to_do}",
    ]


def test_a_corpus_file_beside_its_gz_copy_stops_ingest(spark, tmp_path):
    corpus = write(tmp_path / "corpus", dict.fromkeys([TRAIN, TRAIN + ".gz", PT(0), QRELS, QRELS + ".gz"], b""))
    with pytest.raises(IngestError) as caught:
        list_corpus(spark, str(corpus), FORMATS["lyrl2004"].names, "a hint")
    assert str(caught.value).split("\n") == [
        f"both file:{corpus}/{name} and file:{corpus}/{name}.gz are in corpus.path: the same records would be read "
        "twice; keep one" for name in (TRAIN, QRELS)]


def test_a_file_spark_may_not_read_is_named_with_what_to_do():
    """The Java exceptions py4j gave for a real run: ingest of a JSON Lines corpus with a file of mode 000,
    as root without CAP_DAC_OVERRIDE (``capsh --drop=cap_dac_override,cap_dac_read_search``): Spark 4.3
    says "File does not exist", its cause says "Permission denied". A file that is really gone (deleted
    after Spark listed it) is not a permission problem.
    """
    spark_says = ("[FAILED_READ_FILE.FILE_NOT_EXIST] Encountered error while reading file file:///tmp/perm/corpus/{}. "
                  "File does not exist. It is possible the underlying files have been updated.\nYou can explicitly "
                  "invalidate the cache in Spark by running 'REFRESH TABLE tableName' command in SQL or by recreating "
                  "the Dataset/DataFrame involved. SQLSTATE: KD001")
    denied = [("org.apache.spark.SparkException", spark_says.format("b.jsonl")),
              ("java.io.FileNotFoundException", "/tmp/perm/corpus/b.jsonl (Permission denied)")]
    gone = [("org.apache.spark.SparkException", spark_says.format("a.jsonl")),
            ("java.io.FileNotFoundException", "File file:/tmp/perm/corpus/a.jsonl does not exist")]
    assert permission_denied(denied) == "cannot read file:///tmp/perm/corpus/b.jsonl: permission denied"
    assert permission_denied(gone) is None


def test_the_console_counts_rejected_qrels_lines(all_kinds):
    """The stage line counts records; the qrels lines rejected get a line of their own."""
    manifest = all_kinds("lyrl2004").manifest
    assert rejected_line(manifest["set_aside"], manifest["details"]) == (
        "sparktc: ingest    rejected 8 records, 4 of 11 qrels lines (all in the rejects table)")
    assert rejected_line({"rejected": 1}, {"qrels_lines": 11, "qrels_rejected": 1}) == (
        "sparktc: ingest    rejected 1 record, 1 of 11 qrels lines (all in the rejects table)")
    jsonl_manifest = all_kinds("jsonl").manifest
    assert rejected_line(jsonl_manifest["set_aside"], jsonl_manifest["details"]) is None


# --- 4. the command line --------------------------------------------------------------------------------


def ingest_plan(config, output):
    return plan(config, output, ["ingest"])


def test_cli_bad_input_exits_1_with_the_message(small_queries, tmp_path, monkeypatch, capsys):
    spark = small_queries
    [case] = [case for case in REUTERS_CASES if case.name == "missing_close_tag"]
    corpus = corpus_of([case], tmp_path / "corpus")
    monkeypatch.setattr(cli, "session", lambda config: spark)
    monkeypatch.setattr(spark, "stop", lambda: None)  # the suite's session outlives this job
    argv = ["--set", "corpus.format=reuters21578", "--set", f"corpus.path={corpus}", "--output", str(tmp_path / "out")]
    assert cli.main("ingest", ingest_plan, argv) == 1
    assert capsys.readouterr().err == (
        f"sparktc: error: 1 bad record; the first:\n  {shown(case.reject, corpus)}\n{REJECT_OPTION}\n"
    )


@pytest.fixture
def no_spark(monkeypatch):
    def session(config):
        pytest.fail("Spark was started for a configuration that should have been refused")

    monkeypatch.setattr(cli, "session", session)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("train.bogus=1", "unknown key train.bogus; keys of [train]: method, thresholding, threshold, "),
        ("bogus.key=1", "unknown section [bogus]; sections: corpus, synthesize, "),
        ("train.liblinear.C=abc", "train.liblinear.C = 'abc': expected float, got str"),
        ("train.folds=1.5", "train.folds = 1.5: expected int, got float"),
        ("corpus.on_error=skip", "corpus.on_error = 'skip' is not allowed; allowed values: 'fail', 'reject'"),
        ("corpus.path=/nonexistent", "corpus.path = '/nonexistent': no such file or directory"),
        ("corpus.hierarchy=/nonexistent/rcv1.topics.hier.orig",
         "corpus.hierarchy = '/nonexistent/rcv1.topics.hier.orig': no such file or directory"),
    ],
    ids=["unknown_key", "unknown_section", "float_given_text", "int_given_fraction", "bad_on_error",
         "missing_corpus_path", "missing_hierarchy"],
)
def test_bad_setting_exits_2_before_spark_starts(tmp_path, capsys, no_spark, setting, message):
    corpus, out = write(tmp_path / "corpus", JSONL_BASE), tmp_path / "out"
    argv = ["--set", "corpus.format=jsonl", "--set", f"corpus.path={corpus}", "--set", setting, "--output", str(out)]
    assert cli.main("ingest", ingest_plan, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sparktc: configuration error: {message}"), err
    assert err.count("\n") == 1 and not out.exists()


def test_bad_key_in_a_config_file_exits_2_before_spark_starts(tmp_path, capsys, no_spark):
    corpus, config = write(tmp_path / "corpus", JSONL_BASE), tmp_path / "job.toml"
    config.write_text(f'[corpus]\nformat = "jsonl"\npath = "{corpus}"\n\n[train]\nbogus = 1\n')
    assert cli.main("ingest", ingest_plan, ["--config", str(config), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sparktc: configuration error: unknown key train.bogus; keys of [train]: "), err


def test_missing_config_file_exits_2_before_spark_starts(tmp_path, capsys, no_spark):
    missing = tmp_path / "missing.toml"
    assert cli.main("ingest", ingest_plan, ["--config", str(missing), "--output", str(tmp_path / "out")]) == 2
    names = ", ".join(sorted(path.stem for path in (REPO / "conf").glob("*.toml")))  # found by name when no such file
    assert capsys.readouterr().err == (f"sparktc: configuration error: --config {missing}: no such file, nor a "
                                       f"packaged configuration; give a TOML file's path or one of {names}\n")


def test_output_inside_the_corpus_exits_2_before_spark_starts(tmp_path, capsys, no_spark):
    corpus = write(tmp_path / "corpus", JSONL_BASE)
    out = corpus / "out"
    argv = ["--set", "corpus.format=jsonl", "--set", f"corpus.path={corpus}", "--output", str(out)]
    assert cli.main("ingest", ingest_plan, argv) == 2
    assert capsys.readouterr().err == (f"sparktc: configuration error: --output {out} is inside corpus.path {corpus}; "
                                       "write outputs outside the run's inputs\n")
    assert not out.exists()


# --- 5. how a job ends: a user's or the environment's error in one line with its exit status, a bug with its trace ----


class NoSettings:
    """No settings, as a session's ``spark.conf`` and its context's start-up ``getConf()`` give them."""

    getAll: dict[str, str] = {}  # noqa: N815 (spark.conf's name)

    def getConf(self) -> NoStartUpSettings:  # noqa: N802 (SparkContext's name)
        return NoStartUpSettings()


class NoStartUpSettings:
    def getAll(self) -> list[tuple[str, str]]:  # noqa: N802 (SparkConf's name)
        return []


class NoSession:
    """Stands in for a Spark session without settings (what the job asks of it first,
    :func:`sparktc.runtime.session.check_settings`) where the work never uses one.
    """

    stopped = False
    conf = sparkContext = NoSettings()

    def stop(self) -> None:
        self.stopped = True


def ending_of(error: BaseException, output: Path) -> tuple[int, NoSession]:
    """Run a job whose work raises ``error`` into ``output``: its exit status and its session."""
    session = NoSession()

    def work(spark, held):
        raise error

    return cli.run_job(lambda: cli.Job(str(output), "run", lambda: session, work)), session


@pytest.mark.parametrize(("error", "status", "line"), [
    (ConfigError("train.liblinear.C = 0: expected a number > 0"), 2,
     "sparktc: configuration error: train.liblinear.C = 0: expected a number > 0"),
    (OutputBusyError("--output x is in use by run r"), 75, "sparktc: error: --output x is in use by run r"),
    (IngestError("1 bad record; the first:\n  a.jsonl:3"), 1, "sparktc: error: 1 bad record; the first:\n  a.jsonl:3"),
    (BundleError("no model bundle at m"), 1, "sparktc: error: no model bundle at m"),
    (ResourceLimitError("a Python worker ran out of memory in train"), 1,
     "sparktc: error: a Python worker ran out of memory in train"),
    (MissingInputError("train reads vectors"), 1, "sparktc: error: train reads vectors"),
    (InputError("no training documents"), 1, "sparktc: error: no training documents"),
    (OSError(28, "No space left on device"), 1, f"sparktc: error: {cli.DISK_FULL}"),
], ids=["config", "busy", "ingest", "bundle", "resources", "missing_input", "input", "disk_full"])
def test_a_users_or_the_environments_error_is_its_message_and_exit_status(tmp_path, capsys, error, status, line):
    ended, session = ending_of(error, tmp_path / "out")
    assert (ended, capsys.readouterr().err) == (status, line + "\n")
    assert session.stopped


def test_every_error_sparktc_raises_for_its_users_is_a_sparktc_error():
    kinds = (ConfigError, OutputError, OutputBusyError, ResourceLimitError, IngestError, BundleError, ClassifyError,
             CompareError, MissingInputError, InputError)
    assert all(issubclass(kind, SparktcError) for kind in kinds)
    assert {kind.exit_code for kind in kinds} == {1, 2, 75}
    assert [kind.__name__ for kind in kinds if kind.exit_code == 2] == ["ConfigError", "OutputError"]


@pytest.mark.parametrize("error", [ZeroDivisionError("division by zero"), ValueError("a bug's own check"),
                                   KeyError("column")], ids=["zero_division", "value_error", "key_error"])
def test_a_bug_keeps_its_traceback_and_the_session_is_stopped(tmp_path, capsys, error):
    session = NoSession()

    def work(spark, held):
        raise error

    with pytest.raises(type(error)) as raised:
        cli.run_job(lambda: cli.Job(str(tmp_path / "out"), "run", lambda: session, work))
    assert raised.value is error and session.stopped and capsys.readouterr().err == ""


def test_a_bug_in_a_job_ends_in_pythons_traceback(tmp_path):
    """A job whose plan fails with a plain ValueError (a bug, not a user's mistake): the traceback, exit status 1."""
    program = textwrap.dedent("""
        import sys
        from sparktc.apps import cli

        def plan(config, output):
            raise ValueError("a bug in planning")

        sys.exit(cli.main("job", plan, ["--set", "corpus.format=synthetic", "--output", sys.argv[1]]))
    """)
    job = subprocess.run([sys.executable, "-c", program, str(tmp_path / "out")], capture_output=True, text=True,
                         cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert job.returncode == 1
    assert job.stderr.startswith("Traceback (most recent call last):") and job.stderr.endswith(
        "ValueError: a bug in planning\n"), job.stderr
    assert "sparktc: error" not in job.stderr
