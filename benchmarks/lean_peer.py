"""Lean single-process peer of sparktc: its RCV1-v2 (LYRL2004) experiment in plain Python, numpy, scipy and
LIBLINEAR, in ONE process with no thread or process of its own, and no code from sparktc.

    .venv/bin/python -m benchmarks.lean_peer --corpus DIR --output FILE.json [--test-parts 0,1,2,3] \
        [--hierarchy rcv1.topics.hier.orig]

DIR holds ``lyrl2004_tokens_train.dat``, ``lyrl2004_tokens_test_pt{0..3}.dat``, ``rcv1-v2.topics.qrels``
(each also as ``NAME.gz``) and, unless --hierarchy names it elsewhere, ``rcv1.topics.hier.orig``
(REFERENCE.md section 1). The experiment is conf/rcv1.toml's; each step is timed with the wall clock:

* read: each file is decompressed whole (every gzip member) and cut into chunks of records of about 8 MB.
  A chunk is tokenized with numpy: tokens are the runs of non-whitespace bytes (whitespace as str.split()
  has it; non-ASCII text must be UTF-8), each keyed by a 64-bit hash of its bytes b_0 .. b_(len-1),
  sum over k of b_k B^k mod 2^64 (from prefix sums over the chunk) mixed with len, and looked up in an
  open-addressing table of the training terms. The training file is read first and its terms, sorted,
  are the vocabulary; their keys are checked to be distinct, so a test token is taken for a training term
  only through a 64-bit collision. Test tokens outside the vocabulary are dropped. Each chunk becomes a CSR
  block of tf(t, d), float32 as sparktc stores its weights. Labels come from the qrels (a repeated line
  counts once); categories are every topic of the hierarchy. Format and checks are sparktc's
  (REFERENCE.md section 1: ``.I`` and ``.W`` are markers as the first token of a line, a record runs to
  the next ``.I``); bad input stops the run naming file and line (``corpus.on_error = "fail"``), doc ids
  of over 18 digits included. A doc id read in two files keeps its first record by file path (sparktc's
  rule: the test parts sort before the training file).
* weight: ltc, w(t, d) = (1 + ln tf(t, d)) * ln(N / df(t)), N and df(t) over the training documents, then
  each row divided by its L2 norm; a row of norm 0 stays 0 (REFERENCE.md section 3).
* rank: chi-square of every training term and category from A = X_bin' Y (REFERENCE.md section 4),
  chi2(t, c) = N (AD - CB)^2 / ((A+C)(B+D)(A+B)(C+D)), 0 where the denominator is 0; terms ordered by
  f_max(t) = max over c of chi2(t, c), descending, ties by term. sparktc computes this ranking too
  (conf/rcv1.toml keeps every term: ``select.top_k = 0``), so it is timed here, not used.
* train: one LIBLINEAR ``-s 1 -c 1 -e 0.0001 -B 1`` binary problem per category with >= 1 training
  positive (REFERENCE.md section 5); the problem is built once and only its labels change per category.
* predict+evaluate: decision values X_test W + b (X_test W in float32), assigned when > 0, scored a block
  of test documents at a time and counted into per-category TP, FP, FN. P = TP/(TP+FP), R = TP/(TP+FN),
  F1 = 2TP/(2TP+FP+FN), each 1 when its denominator is 0 (so F1 = 1 when TP = FP = FN = 0); micro: of the
  summed counts, macro: the mean over the categories with >= 1 training positive (REFERENCE.md section 6).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import re
import resource
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from benchmarks.harness_peer import LIBLINEAR_OPTIONS, ltc, predict_and_count, scores, train

TRAIN_FILE = "lyrl2004_tokens_train.dat"
TEST_FILES = tuple(f"lyrl2004_tokens_test_pt{part}.dat" for part in range(4))
QRELS_FILE = "rcv1-v2.topics.qrels"
HIERARCHY_FILE = "rcv1.topics.hier.orig"
TOOL = "lean single-process Python + LIBLINEAR"
CHUNK_BYTES = 1 << 23  # text tokenized at a time (its uint64 prefix sums take 8 bytes per byte)
ASCII_SPACE = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "  # the ASCII characters str.split() splits at
_TO_SPACE = bytes.maketrans(ASCII_SPACE, b" " * len(ASCII_SPACE))  # for bytes.split(), which misses \x1c-\x1f
_UNICODE_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")  # str.split()'s others
HASH_BASE = 0x9E3779B97F4A7C15  # odd, so invertible modulo 2^64
LENGTH_MIX = np.uint64(0xC2B2AE3D27D4EB4F)
_HIERARCHY_LINE = re.compile(rb"parent:\s*(\S+)\s+child:\s*(\S+)\s+child-description:.*")
_LIBC = ctypes.CDLL(None)
if hasattr(_LIBC, "mallopt"):  # glibc: keep freed memory for the next chunk's arrays instead of mapping it anew
    _LIBC.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: its maximum, arrays under 32 MB come from the heap
    _LIBC.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: return heap memory to the system only past 1 GB free


class BadInput(SystemExit):
    """Bad corpus input: the run stops with this message (sparktc's ``corpus.on_error = "fail"``)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"bad input: {message}")


@dataclass
class Corpus:
    """Term frequencies and labels of both splits (rows in reading order, duplicates dropped)."""

    train_ids: np.ndarray  # int64 doc ids
    test_ids: np.ndarray
    train_tf: sparse.csr_matrix  # documents x vocabulary, tf(t, d) (float32, as sparktc stores weights)
    test_tf: list[sparse.csr_matrix]  # blocks of rows, as read
    vocabulary: list[str]  # the training terms, sorted
    categories: list[str]  # every topic of the hierarchy, sorted
    train_labels: sparse.csc_matrix  # documents x categories, bool
    test_labels: sparse.csc_matrix
    duplicates: int  # records dropped because their doc id was read in an earlier file


# --- read: bytes and tokens -------------------------------------------------------------------------


def corpus_file(corpus: str, name: str) -> str:
    """The path of ``name`` or ``name.gz`` in ``corpus``; BadInput when neither or both exist (as sparktc)."""
    found = [path for path in (os.path.join(corpus, name), os.path.join(corpus, name + ".gz"))
             if os.path.isfile(path)]
    if len(found) != 1:
        raise BadInput(f"both {found[0]} and {found[1]} exist; keep one" if found
                       else f"{name}[.gz] not found in {corpus}")
    return found[0]


def file_bytes(path: str) -> bytes:
    """The contents of ``path``, decompressed when it ends in .gz (every gzip member, as ``gzip`` does)."""
    raw = Path(path).read_bytes()
    if not path.endswith(".gz"):
        return raw
    members = []
    while raw:
        inflater = zlib.decompressobj(wbits=31)
        try:
            members.append(inflater.decompress(raw))
        except zlib.error as error:
            raise BadInput(f"{path}: not a valid gzip file ({error})") from None
        if not inflater.eof:
            raise BadInput(f"{path}: truncated gzip file")
        raw = inflater.unused_data
    return b"".join(members)


def chunks(data: bytes, boundary: bytes, size: int) -> Iterator[tuple[bytes, int]]:
    """(piece, its offset) of ``data`` cut into pieces of at most about ``size`` bytes, each cut after a
    newline that is followed by ``boundary`` (a piece grows past ``size`` only for one long record).
    """
    start = 0
    while start < len(data):
        end = data.rfind(b"\n" + boundary, start, start + size) if start + size < len(data) else len(data) - 1
        if end <= start:
            end = data.find(b"\n" + boundary, start + size)
        end = len(data) if end < 0 else end + 1
        yield data[start:end], start
        start = end


def line_numbers(data: bytes, offset: int) -> Callable[[int], int]:
    """The line number in ``data`` of a byte offset in its piece starting at ``offset`` (for error messages)."""
    return lambda position: data.count(b"\n", 0, offset + position) + 1


def utf8(chunk: bytes, source: str) -> bytes:
    """``chunk``, with str.split()'s non-ASCII whitespace made spaces; BadInput unless it is UTF-8 (as sparktc)."""
    if chunk.isascii():
        return chunk
    try:
        return _UNICODE_SPACE.sub(" ", chunk.decode("utf-8")).encode()
    except UnicodeDecodeError as error:
        raise BadInput(f"{source}: not valid UTF-8 ({error}); re-encode the file as UTF-8") from None


@functools.cache
def hash_tables(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B^k, B^-k) mod 2^64 for k = 0 .. size - 1 (numpy's uint64 products wrap modulo 2^64) and a scratch
    array of size + 1 for the prefix sums; ``size`` is a power of two, so few sizes are ever cached.
    """
    powers = np.empty((3, size + 1), dtype=np.uint64)
    powers[:2, 0] = 1
    for row, base in enumerate((HASH_BASE, pow(HASH_BASE, -1, 1 << 64))):
        np.cumprod(np.full(size - 1, base, dtype=np.uint64), out=powers[row, 1:size])
    return powers[0], powers[1], powers[2]


def tokenize(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start and end offsets of the tokens of ``buf`` (uint8) and their keys.

    key = mix((sum over k < len of b_(start+k) B^k mod 2^64) XOR len * LENGTH_MIX), from the prefix sums
    S_i = sum over j < i of b_j B^j: sum over k of b_(start+k) B^k = (S_end - S_start) B^-start; mix is a
    bijection that spreads the bits (the hash table's slots come from the high ones).
    """
    n = len(buf)
    # Non-whitespace: > 32, or < 28 outside 9..13 (whitespace: 9..13 and 28..32; buf - 9 wraps below 9).
    solid = np.zeros(n + 2, dtype=bool)
    solid[1:-1] = (buf > 32) | ((buf < 28) & (buf - np.uint8(9) > 4))
    bounds = np.flatnonzero(solid[1:] ^ solid[:-1])  # alternately a token's start and its end
    starts, ends = bounds[0::2].copy(), bounds[1::2].copy()
    powers, inverses, prefix = hash_tables(1 << max(n - 1, 1).bit_length())
    prefix[0] = 0
    np.multiply(buf, powers[:n], out=prefix[1:n + 1])
    np.cumsum(prefix[1:n + 1], out=prefix[1:n + 1])
    keys = prefix[ends] - prefix[starts]
    keys *= inverses[starts]
    keys ^= (ends - starts).view(np.uint64) * LENGTH_MIX
    keys ^= keys >> np.uint64(32)
    keys *= LENGTH_MIX
    keys ^= keys >> np.uint64(29)
    return starts, ends, keys


def token_keys(terms: list[bytes]) -> np.ndarray:
    """The key of each of ``terms`` (tokens: no whitespace inside)."""
    return tokenize(np.frombuffer(b" ".join(terms), dtype=np.uint8))[2]


class TermTable:
    """Token key -> term id, an open-addressing hash table with linear probing, at most 1/8 full."""

    def __init__(self, keys: np.ndarray) -> None:
        bits = max((8 * len(keys)).bit_length(), 8)
        self.shift, self.mask = np.uint64(64 - bits), (1 << bits) - 1
        ids, stored = [-1] * (1 << bits), [0] * (1 << bits)
        for term, key in enumerate(keys.tolist()):
            slot = key >> (64 - bits)
            while ids[slot] >= 0:
                slot = (slot + 1) & self.mask
            ids[slot], stored[slot] = term, key
        self.ids, self.keys = np.array(ids, dtype=np.int32), np.array(stored, dtype=np.uint64)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """The term id of each key, -1 for keys not in the table (probing all keys a step at a time)."""
        slot = (keys >> self.shift).view(np.intp)  # < 2^bits: the same value
        found = self.ids[slot]  # -1 at an empty slot: not in the table
        pending = np.flatnonzero((self.keys[slot] != keys) & (found >= 0))
        found[pending] = -1
        probe, wanted = slot[pending], keys[pending]
        while len(pending):
            probe = (probe + 1) & self.mask
            ids = self.ids[probe]
            hit = self.keys[probe] == wanted
            found[pending[hit]] = ids[hit]
            going = ~hit & (ids >= 0)
            pending, probe, wanted = pending[going], probe[going], wanted[going]
        return found


def decimal_numbers(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, where: Callable[[int], str]
                    ) -> np.ndarray:
    """The tokens buf[starts:ends] as int64; BadInput (at ``where(i)``) unless each is a canonical decimal
    number: digits only, no leading zero, at most 18 digits.
    """
    lengths = ends - starts
    values = np.zeros(len(starts), dtype=np.int64)
    bad = (lengths > 18) | ((buf[starts] == ord("0")) & (lengths > 1))
    for k in range(int(lengths.max(initial=0))):
        going = lengths > k
        digit = buf[np.where(going, starts + k, starts)].astype(np.int64) - ord("0")
        bad |= going & ((digit < 0) | (digit > 9))
        values = np.where(going, values * 10 + digit, values)
    if bad.any():
        first = int(np.argmax(bad))
        text = buf[starts[first]:ends[first]].tobytes().decode(errors="replace")
        raise BadInput(f"{where(first)}: doc id {text!r} is not a decimal number without leading zeros")
    return values


# --- read: files ------------------------------------------------------------------------------------


def parse_records(chunk: bytes, table: TermTable, source: str, line_of: Callable[[int], int]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse the records ``.I <id>`` / ``.W`` / token lines of a chunk that starts at the start of a line.

    A token ``.I`` or ``.W`` is a marker when it is the first of its line; a record runs from its ``.I``
    to the next. BadInput for text before the first ``.I``, an ``.I`` line that is not ``.I <id>``, a
    record whose next line is not ``.W``, a second ``.W``, or no token after ``.W``. Returns the doc ids
    and one (row, term id) pair per token that is in ``table`` (the others are dropped); ``line_of`` gives
    the line number of a byte of the chunk for error messages.
    """
    buf = np.frombuffer(chunk, dtype=np.uint8)
    starts, ends, keys = tokenize(buf)
    n_tokens = len(starts)
    if n_tokens == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)
    newlines = np.flatnonzero(buf == ord("\n"))

    def where(token: int) -> str:
        return f"{source}:{line_of(int(starts[token]))}"

    def first_of_line(tokens: np.ndarray) -> np.ndarray:
        before = np.searchsorted(newlines, starts[tokens]) - 1  # the last newline before each token
        previous_end = ends[np.maximum(tokens - 1, 0)]
        return (tokens == 0) | ((before >= 0) & (newlines[np.maximum(before, 0)] >= previous_end))

    dotted = np.flatnonzero((ends - starts == 2) & (buf[starts] == ord(".")))
    dotted = dotted[first_of_line(dotted)]
    letter = buf[starts[dotted] + 1]
    opens, w_marks = dotted[letter == ord("I")], dotted[letter == ord("W")]
    if len(opens) == 0 or opens[0] != 0:
        raise BadInput(f"{where(0)}: text before the first '.I' line; each record is '.I <id>', '.W', tokens")
    sizes = np.diff(np.append(opens, n_tokens))
    is_w = np.zeros(n_tokens + 3, dtype=bool)
    is_w[w_marks] = True
    problems = [
        (sizes < 2, "expected '.I <doc id>'"),
        (first_of_line(np.minimum(opens + 1, n_tokens - 1)), "expected '.I <doc id>' on one line"),
        (~is_w[opens + 2], "expected a line '.I <doc id>' followed by a line '.W'"),
        (sizes == 3, "empty document: no tokens after .W"),
    ]
    for bad, message in problems:
        if bad.any():
            raise BadInput(f"{where(int(opens[np.argmax(bad)]))}: {message}")
    if len(w_marks) != len(opens):
        extra = w_marks[~np.isin(w_marks, opens + 2)][0]
        raise BadInput(f"{where(int(extra))}: a second '.W' in the record")
    doc_ids = decimal_numbers(buf, starts[opens + 1], ends[opens + 1], lambda i: where(int(opens[i])))
    terms = table.lookup(keys)
    for offset in range(3):  # the markers and the ids are no terms
        terms[opens + offset] = -1
    rows = np.repeat(np.arange(len(opens), dtype=np.int64), sizes)
    known = terms >= 0
    return doc_ids, rows[known], terms[known]


def tf_block(rows: np.ndarray, terms: np.ndarray, n_rows: int, n_terms: int) -> sparse.csr_matrix:
    """CSR of tf(t, d) (float32, exact), terms sorted in each row, from one (row, term id) pair per token."""
    pairs = rows * n_terms + terms
    pairs.sort()
    first = np.flatnonzero(np.diff(pairs, prepend=-1))  # where each distinct pair starts
    tf = np.diff(np.append(first, len(pairs))).astype(np.float32)
    distinct = pairs[first]
    indptr = np.searchsorted(distinct, np.arange(n_rows + 1, dtype=np.int64) * n_terms)
    return sparse.csr_matrix((tf, (distinct % n_terms).astype(np.int32), indptr), shape=(n_rows, n_terms))


def read_token_file(data: bytes, table: TermTable, n_terms: int, path: str
                    ) -> tuple[np.ndarray, list[sparse.csr_matrix]]:
    """Doc ids and tf blocks (over the ``n_terms`` ids of ``table``) of a token file's contents."""
    ids, blocks = [], []
    for chunk, offset in chunks(data, b".I ", CHUNK_BYTES):
        doc_ids, rows, terms = parse_records(utf8(chunk, path), table, path, line_numbers(data, offset))
        ids.append(doc_ids)
        blocks.append(tf_block(rows, terms, len(doc_ids), n_terms))
    return np.concatenate(ids or [np.zeros(0, np.int64)]), blocks


def read_training(path: str) -> tuple[np.ndarray, sparse.csr_matrix, list[bytes]]:
    """Doc ids, tf matrix and vocabulary (the terms, sorted) of the training file."""
    data = utf8(file_bytes(path), path)
    distinct = sorted(set(data.translate(_TO_SPACE).split()))  # every token, marker and doc id included
    keys = token_keys(distinct)
    if len(np.unique(keys)) != len(keys):
        raise RuntimeError(f"two tokens of {path} have the same 64-bit key; change HASH_BASE")
    doc_ids, blocks = read_token_file(data, TermTable(keys), len(distinct), path)
    if not len(doc_ids):
        raise BadInput(f"{path}: no training documents")
    tf = sparse.vstack(blocks, format="csr")
    used = np.bincount(tf.indices, minlength=len(distinct)) > 0  # drops the markers and the doc ids
    new_id = (np.cumsum(used) - 1).astype(np.int32)  # increasing: rows stay sorted
    vocabulary = [term for term, keep in zip(distinct, used.tolist()) if keep]
    return doc_ids, sparse.csr_matrix((tf.data, new_id[tf.indices], tf.indptr), shape=(tf.shape[0], len(vocabulary))), \
        vocabulary


def read_hierarchy(path: str) -> list[str]:
    """Every topic of ``rcv1.topics.hier.orig`` (lines ``parent: P child: C child-description: D``), sorted."""
    topics = set()
    for number, line in enumerate(file_bytes(path).splitlines(), 1):
        if line.strip():
            match = _HIERARCHY_LINE.fullmatch(line.strip())
            if match is None:
                raise BadInput(f"{path}:{number}: expected 'parent: P child: C child-description: D'")
            if match.group(1) != b"None":
                topics.add(match.group(2).decode())
    return sorted(topics)


def read_qrels(path: str, categories: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(doc id, category index) of every ``CATEGORY DOCID 1`` line of the qrels, in file order."""
    table = TermTable(token_keys([category.encode() for category in categories]))
    doc_ids, category_ids = [], []
    data = file_bytes(path)
    for chunk, offset in chunks(data, b"", CHUNK_BYTES):
        buf = np.frombuffer(utf8(chunk, path), dtype=np.uint8)
        starts, ends, keys = tokenize(buf)
        line = np.cumsum(buf == ord("\n"), dtype=np.int64)[starts]  # line of each token in the chunk

        def where(field: int, offset: int = offset, starts: np.ndarray = starts) -> str:
            return f"{path}:{line_numbers(data, offset)(int(starts[field]))}"

        per_line = np.bincount(line)[line]
        if (per_line != 3).any():
            field = int(np.argmax(per_line != 3))
            raise BadInput(f"{where(field)}: expected 'CATEGORY DOCID 1', got {per_line[field]} fields")
        flag = starts[2::3]
        bad = (ends[2::3] - flag != 1) | (buf[flag] != ord("1"))
        if bad.any():
            field = 3 * int(np.argmax(bad)) + 2
            raise BadInput(f"{where(field)}: third field is not '1' (qrels list only assignments)")
        codes = table.lookup(keys[0::3])
        if (codes < 0).any():
            field = 3 * int(np.argmax(codes < 0))
            unknown = buf[starts[field]:ends[field]].tobytes().decode(errors="replace")
            raise BadInput(f"{where(field)}: unknown category {unknown} (not in the hierarchy)")
        doc_ids.append(decimal_numbers(buf, starts[1::3], ends[1::3], lambda i: where(3 * i + 1)))
        category_ids.append(codes)
    return np.concatenate(doc_ids or [np.zeros(0, np.int64)]), np.concatenate(category_ids or [np.zeros(0, np.int32)])


def label_matrix(rows: np.ndarray, columns: np.ndarray, n_rows: int, n_columns: int) -> sparse.csc_matrix:
    """Boolean documents x categories matrix with True at each (row, column); repeated pairs count once."""
    data = np.ones(len(rows), dtype=bool)
    return sparse.csc_matrix((data, (rows, columns)), shape=(n_rows, n_columns), dtype=bool)


def drop_duplicates(train_ids: np.ndarray, train_tf: sparse.csr_matrix, test_ids: list[np.ndarray],
                    test_tf: list[sparse.csr_matrix], vocabulary: list[bytes], paths: list[str]
                    ) -> tuple[np.ndarray, sparse.csr_matrix, np.ndarray, list[sparse.csr_matrix], list[bytes], int]:
    """Keep the first record of each doc id by file path (test parts, then the training file).

    A doc id twice in one file is bad input. Training terms left in no training document leave the vocabulary.
    """
    ordered = [*test_ids, train_ids]  # the order of the sorted file names
    for ids, path in zip(ordered, paths):
        values, counts = np.unique(ids, return_counts=True)
        if (counts > 1).any():
            raise BadInput(f"{path}: duplicate doc id {values[counts > 1][0]} in the file; keep one record per id")
    everything = np.concatenate(ordered)
    keep = np.zeros(len(everything), dtype=bool)
    keep[np.unique(everything, return_index=True)[1]] = True
    n_test = len(everything) - len(train_ids)
    dropped = len(everything) - int(keep.sum())
    if dropped:
        block_keep = np.split(keep[:n_test], np.cumsum([block.shape[0] for block in test_tf])[:-1])
        test_tf = [block[rows] for block, rows in zip(test_tf, block_keep)]
        train_ids, train_tf = train_ids[keep[n_test:]], train_tf[keep[n_test:]]
        used = np.bincount(train_tf.indices, minlength=len(vocabulary)) > 0
        if not used.all():
            train_tf, test_tf = train_tf[:, used], [block[:, used] for block in test_tf]
            vocabulary = [term for term, kept in zip(vocabulary, used.tolist()) if kept]
    return train_ids, train_tf, everything[:n_test][keep[:n_test]], test_tf, vocabulary, dropped


def read_corpus(corpus: str, test_parts: Sequence[int], hierarchy_path: str | None = None) -> Corpus:
    """Token files, qrels and hierarchy of the LYRL2004 corpus in ``corpus`` (REFERENCE.md section 1)."""
    categories = read_hierarchy(hierarchy_path or corpus_file(corpus, HIERARCHY_FILE))
    train_path = corpus_file(corpus, TRAIN_FILE)
    test_paths = [corpus_file(corpus, TEST_FILES[part]) for part in sorted(test_parts)]
    train_ids, train_tf, vocabulary = read_training(train_path)
    table = TermTable(token_keys(vocabulary))
    test_ids, test_blocks = [], []
    for path in test_paths:
        ids, blocks = read_token_file(file_bytes(path), table, len(vocabulary), path)
        test_ids.append(ids)
        test_blocks.extend(blocks)
    train_ids, train_tf, test_ids_all, test_tf, vocabulary, duplicates = drop_duplicates(
        train_ids, train_tf, test_ids, test_blocks, vocabulary, [*test_paths, train_path])

    qrels_path = corpus_file(corpus, QRELS_FILE)
    label_ids, label_categories = read_qrels(qrels_path, categories)
    ids = np.concatenate([train_ids, test_ids_all])  # row i of the documents: training rows first
    order = np.argsort(ids)
    rows = order[np.minimum(np.searchsorted(ids, label_ids, sorter=order), len(ids) - 1)]
    known = ids[rows] == label_ids
    if not known.all() and sorted(test_parts) == [0, 1, 2, 3]:  # else lines of unread parts are expected
        raise BadInput(f"{qrels_path}: qrels line for doc {label_ids[~known][0]}, not in the token files")
    rows, label_categories = rows[known], label_categories[known]
    n_train = len(train_ids)
    is_train = rows < n_train
    return Corpus(
        train_ids, test_ids_all, train_tf, test_tf, [term.decode() for term in vocabulary], categories,
        label_matrix(rows[is_train], label_categories[is_train], n_train, len(categories)),
        label_matrix(rows[~is_train] - n_train, label_categories[~is_train], len(test_ids_all), len(categories)),
        duplicates)


# --- weight -----------------------------------------------------------------------------------------


def idf(train_tf: sparse.csr_matrix) -> np.ndarray:
    """ln(N / df(t)) over the training documents (a canonical CSR row holds each term once)."""
    return np.log(train_tf.shape[0] / np.bincount(train_tf.indices, minlength=train_tf.shape[1]))


def weight(read: Corpus) -> tuple[sparse.csr_matrix, list[sparse.csr_matrix]]:
    """The ltc matrices of the training and test documents (REFERENCE.md section 3), overwriting the tf matrices."""
    idf_values = idf(read.train_tf)
    return ltc(read.train_tf, idf_values), [ltc(block, idf_values) for block in read.test_tf]


# --- rank -------------------------------------------------------------------------------------------


def chi2_max(X_train: sparse.csr_matrix, Y_train: sparse.csc_matrix) -> np.ndarray:
    """f_max(t) = max over c of chi2(t, c), cells A = X_bin' Y, B = df - A, C = n_c - A, D = N - df - n_c + A."""
    binary = sparse.csr_matrix((np.ones(X_train.nnz), X_train.indices, X_train.indptr), shape=X_train.shape)
    Y = Y_train.toarray().astype(np.float64)
    A = np.asarray(binary.T @ Y)
    df = np.bincount(X_train.indices, minlength=X_train.shape[1]).astype(np.float64)[:, None]
    n_c = Y.sum(axis=0)
    n = float(X_train.shape[0])
    B, C = df - A, n_c - A
    D = n - df - n_c + A
    denominator = (A + C) * (B + D) * (A + B) * (C + D)
    scores = np.divide(n * (A * D - C * B) ** 2, denominator, out=np.zeros_like(A), where=denominator > 0)
    return scores.max(axis=1) if scores.shape[1] else np.zeros(len(df))


def rank(X_train: sparse.csr_matrix, Y_train: sparse.csc_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Term ids by f_max descending, ties by term id, and each term's f_max."""
    scores = chi2_max(X_train, Y_train)
    return np.lexsort((np.arange(len(scores)), -scores)), scores


# --- train and predict ------------------------------------------------------------------------------


def train_categories(X_train: sparse.csr_matrix, read: Corpus) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the categories with >= 1 training positive (the others are never assigned), W and b."""
    trained = np.flatnonzero(read.train_labels.getnnz(axis=0) > 0)
    return trained, *train(X_train, read.train_labels[:, trained])


# --- evaluate ---------------------------------------------------------------------------------------


# --- the run ----------------------------------------------------------------------------------------


def timed(steps: dict[str, float], name: str, function: Callable[..., Any], *args: Any) -> Any:
    """Run ``function(*args)``, record and print its wall time under ``name``."""
    started = time.perf_counter()
    result = function(*args)
    steps[name] = time.perf_counter() - started
    print(f"{name:<17} {steps[name]:9.2f} s", flush=True)
    return result


def run(corpus: str, test_parts: Sequence[int], hierarchy: str | None = None) -> dict[str, Any]:
    """All five steps; the result record (the output JSON)."""
    steps: dict[str, float] = {}
    read = timed(steps, "read", read_corpus, corpus, test_parts, hierarchy)
    X_train, X_test = timed(steps, "weight", weight, read)
    order, chi2 = timed(steps, "rank", rank, X_train, read.train_labels)
    trained, W, b = timed(steps, "train", train_categories, X_train, read)
    tp, fp, fn = timed(steps, "predict+evaluate", predict_and_count, X_test, W, b, read.test_labels[:, trained])
    result = scores(tp, fp, fn)
    total = sum(steps.values())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{'total':<17} {total:9.2f} s  (CPU {usage.ru_utime + usage.ru_stime:.2f} s, "
          f"peak RSS {usage.ru_maxrss / 1024:,.0f} MB)", flush=True)
    print(f"micro-F1 {result['micro_f1']:.4f}  macro-F1 {result['macro_f1']:.4f}  over {len(trained)} categories with "
          ">= 1 training positive (F1 = 1 when TP = FP = FN = 0)", flush=True)
    names = [read.categories[j] for j in trained]
    return {
        "tool": TOOL,
        "steps": {name: round(seconds, 3) for name, seconds in steps.items()},
        "total_seconds": round(total, 3),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "documents": {"train": len(read.train_ids), "test": len(read.test_ids)},
        "features": len(read.vocabulary),
        "categories_trained": len(trained),
        **{key: value for key, value in result.items() if key != "f1"},
        "duplicate_records_dropped": read.duplicates,
        "liblinear_options": LIBLINEAR_OPTIONS,
        "top_terms_chi2_max": [{"term": read.vocabulary[t], "chi2_max": float(chi2[t])} for t in order[:10]],
        "per_category": [
            {"category": c, "tp": int(tp[j]), "fp": int(fp[j]), "fn": int(fn[j]), "f1": float(result["f1"][j])}
            for j, c in enumerate(names)
        ],
    }


def parse_parts(text: str) -> list[int]:
    """``--test-parts``: a comma-separated subset of 0,1,2,3."""
    try:
        parts = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        parts = []
    if not parts or any(part not in range(4) for part in parts):
        raise argparse.ArgumentTypeError(f"test parts must be a comma-separated subset of 0,1,2,3; got {text!r}")
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    """Run the experiment and write the result JSON to --output."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="directory of the LYRL2004 files")
    parser.add_argument("--output", required=True, help="result JSON file")
    parser.add_argument("--test-parts", type=parse_parts, default=[0, 1, 2, 3], help="e.g. 0,1 (default 0,1,2,3)")
    parser.add_argument("--hierarchy", default=None, help=f"default: {HIERARCHY_FILE}[.gz] in --corpus")
    arguments = parser.parse_args(argv)
    result = run(arguments.corpus, arguments.test_parts, arguments.hierarchy)
    Path(arguments.output).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
