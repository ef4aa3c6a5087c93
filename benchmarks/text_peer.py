r"""Lean single-process peer of sparktc on raw text: conf/jsonl.toml's experiment in plain Python, numpy, scipy,
PyStemmer and LIBLINEAR, in ONE process with no thread or process of its own, and no code from sparktc.

    .venv/bin/python -m benchmarks.text_peer --corpus DIR --output FILE.json \
        [--stop-list ../shared/data/stopwords/smart_english.stop]

DIR holds ``*.jsonl`` / ``*.jsonl.gz`` files (names not starting with ``.`` or ``_``), one
``{"id", "text", "labels", "split"}`` object per line (sparktc's JSON Lines format). Each step is timed (wall and
CPU seconds of this process):

* read: each file read whole (gunzipped when ``.gz``) and cut at newlines; each non-blank line ``json.loads``-ed
  and checked as a competent user would (an object with a string or integer id, a string text, a list of string
  labels, split ``train`` or ``test``); bad input stops the run naming file and line; a doc id read twice stops
  it too (sparktc's ``corpus.on_error = "fail"``).
* tokenize: the LYRL2004 recipe (REFERENCE.md section 2) exactly as sparktc's ``Analyzer`` applies it: lower
  case; tokens are the runs of non-whitespace (``str.split()``); punctuation (``[\W_]``) removed from each; empty and
  digit-only (``str.isdigit``) tokens dropped; SMART stop words dropped; the rest stemmed by PyStemmer's
  ``porter`` (the library and algorithm sparktc uses). Done the fast way: the punctuation that is not white space
  is deleted from the whole lower-cased text (``bytes.translate`` for ASCII, ``str.replace`` for the rest), which
  leaves the same tokens as deleting it token by token (a token holds no white space, and ``[\W_]`` within one is
  ``[^\w\s]|_``); each
  distinct token is looked up once in a table token -> stem id (-1: dropped), filled batch by batch for the tokens
  not seen before (one ``stemWords`` call per batch), so per token only ``split`` and a dict lookup in C
  (``map``) are left. Term frequencies are counted with numpy.
* weight: the vocabulary is the stems of the training documents, sorted (sparktc's term ids); ltc,
  w(t, d) = (1 + ln tf) ln(N / df(t)), each row divided by its L2 norm, N and df over the training documents
  (REFERENCE.md section 3), stored float32 as sparktc stores its weights; test terms outside the vocabulary dropped.
* train: one LIBLINEAR ``-s 1 -c 1 -e 0.0001 -B 1`` problem per category with >= 1 training positive (conf/jsonl.toml
  keeps sparktc's [train] defaults), training documents in doc-id order (sparktc's: the string order) and C's
  rand() reseeded with 1 before each category, as sparktc does.
* predict+evaluate: assigned when w'x + b > 0; per-category TP, FP, FN; micro/macro P, R, F1 with 1 at 0/0,
  macro over the categories with >= 1 training positive (sparktc's ``evaluate`` defaults). Categories: every
  label seen (conf/jsonl.toml's ``corpus.categories = []``).

Weighting, training and scoring are benchmarks/lean_peer.py's (``ltc``, ``train``, ``predict_and_count``,
``scores``): the same lean code as the RCV1 peer. ``--tokens FILE.npz`` also saves each document's id and a 64-bit
hash of its stored token string (the stems joined by single spaces, sparktc's ``tokens`` column), made from the
same term ids, so ``benchmarks/text_scale.py`` can compare them with sparktc's ``tokens`` table; that is done
after the timed steps and not counted in them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import Stemmer
from scipy import sparse

from benchmarks.harness_peer import LIBLINEAR_OPTIONS, ltc, predict_and_count, scores, train

TOOL = "lean single-process Python + PyStemmer + LIBLINEAR"
NAME = re.compile(r"[^._].*\.jsonl(\.gz)?")
#: Punctuation that is not white space: deleting it from a whole text leaves each token as deleting ``[\W_]+`` from
#: that token alone would (``\s`` is exactly what ``str.split()`` splits at: both are Python's Unicode white space).
DELETE = re.compile(r"[^\w\s]|_")
ASCII_DELETED = bytes(c for c in range(128) if not (chr(c).isalnum() or chr(c).isspace()))  # DELETE's ASCII part
ASCII = bytes(range(128))


def clean(text: str) -> str:
    """``DELETE.sub("", text.lower())``, faster: ``bytes.translate`` deletes the ASCII punctuation from the UTF-8
    bytes; the few distinct non-ASCII characters to delete (found among the non-ASCII bytes) go by ``str.replace``
    (by DELETE when there are many).
    """
    lower = text.lower()
    data = lower.encode("utf-8", "surrogatepass")
    kept = data.translate(None, ASCII_DELETED).decode("utf-8", "surrogatepass")
    if lower.isascii():
        return kept
    deleted = [c for c in set(data.translate(None, ASCII).decode("utf-8", "surrogatepass"))
               if not (c.isalnum() or c.isspace())]
    if len(deleted) > 8:
        return DELETE.sub("", kept)
    for character in deleted:
        kept = kept.replace(character, "")
    return kept
BATCH_DOCUMENTS = 4096


class BadInput(SystemExit):
    """Bad corpus input: the run stops with this message (sparktc's ``corpus.on_error = "fail"``)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"bad input: {message}")


def stop_words(path: str | None) -> frozenset[str]:
    """One word per line, blank lines and surrounding space ignored, lower-cased (the SMART layout)."""
    if not path:
        return frozenset()
    return frozenset(word for word in (line.strip().lower() for line in Path(path).read_text().splitlines()) if word)


def corpus_files(corpus: str) -> list[str]:
    """The corpus's ``*.jsonl`` and ``*.jsonl.gz`` files, sorted; BadInput when there are none."""
    names = sorted(name for name in os.listdir(corpus) if NAME.fullmatch(name))
    if not names:
        raise BadInput(f"no *.jsonl or *.jsonl.gz files in {corpus}")
    return [os.path.join(corpus, name) for name in names]


def file_lines(path: str) -> list[bytes]:
    """The lines of a corpus file, gunzipped when ``.gz``; BadInput for a damaged gzip file."""
    raw = Path(path).read_bytes()
    if path.endswith(".gz"):
        try:
            raw = zlib.decompress(raw, wbits=31)  # one gzip member, as the generator writes
        except zlib.error as error:
            raise BadInput(f"{path}: not a valid gzip file ({error})") from None
    return raw.split(b"\n")


@dataclass
class Records:
    """Documents as read: ids, splits, labels and texts, in file and line order."""

    ids: list[str] = field(default_factory=list)
    train: list[bool] = field(default_factory=list)
    labels: list[list[str]] = field(default_factory=list)


def read_records(path: str, records: Records) -> Iterator[list[str]]:
    """Append each document of ``path`` to ``records``; yield its texts in batches of :data:`BATCH_DOCUMENTS`."""
    texts: list[str] = []
    for number, line in enumerate(file_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            doc_id, text, labels, split = record["id"], record["text"], record["labels"], record["split"]
        except (ValueError, TypeError, KeyError) as error:
            raise BadInput(f"{path}:{number}: not a JSON object with id, text, labels and split ({error})") from None
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or not isinstance(text, str) or \
                not isinstance(labels, list) or split not in ("train", "test"):
            raise BadInput(f"{path}:{number}: expected {{\"id\": str|int, \"text\": str, \"labels\": [str], "
                           "\"split\": \"train\"|\"test\"}")
        records.ids.append(str(doc_id))
        records.train.append(split == "train")
        records.labels.append(labels)
        texts.append(text)
        if len(texts) == BATCH_DOCUMENTS:
            yield texts
            texts = []
    if texts:
        yield texts


class Tokenizer:
    """Texts -> stem ids per token (the LYRL2004 recipe), each distinct token stemmed once."""

    def __init__(self, stops: frozenset[str]) -> None:
        self.stops = stops
        self.stemmer = Stemmer.Stemmer("porter")
        self.term_of: dict[str, int] = {}  # token -> stem id, -1 for a dropped token
        self.stem_id: dict[str, int] = {}
        self.stems: list[str] = []  # stem id -> stem

    def ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The kept tokens' stem ids of ``texts`` (concatenated) and each text's number of them."""
        tokens = [clean(text).split() for text in texts]
        fresh = set(chain.from_iterable(tokens))
        fresh.difference_update(self.term_of)
        if fresh:
            kept = sorted(token for token in fresh if not (token.isdigit() or token in self.stops))
            self.term_of.update(dict.fromkeys(fresh, -1))
            for token, stem in zip(kept, self.stemmer.stemWords(kept)):
                number = self.stem_id.get(stem)
                if number is None:
                    number = self.stem_id[stem] = len(self.stems)
                    self.stems.append(stem)
                self.term_of[token] = number
        total = sum(map(len, tokens))
        ids = np.fromiter(map(self.term_of.__getitem__, chain.from_iterable(tokens)), dtype=np.int32, count=total)
        rows = np.repeat(np.arange(len(tokens)), np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)))
        keep = ids >= 0
        return ids[keep], np.bincount(rows[keep], minlength=len(tokens))

    def token_hashes(self, ids: np.ndarray, lengths: np.ndarray) -> list[bytes]:
        """The 8-byte BLAKE2b hash of each text's stored token string (stems joined by single spaces)."""
        stems = np.array(self.stems, dtype=object)[ids].tolist()
        bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        return [hashlib.blake2b(" ".join(stems[bounds[d]:bounds[d + 1]]).encode(), digest_size=8).digest()
                for d in range(len(lengths))]


def tf_block(ids: np.ndarray, lengths: np.ndarray) -> sparse.csr_matrix:
    """CSR of tf(stem, d) over stem ids (columns: the largest id + 1; widened later), sorted within each row."""
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    width = int(ids.max(initial=-1)) + 1
    pairs = rows * max(width, 1) + ids
    pairs.sort()
    first = np.flatnonzero(np.diff(pairs, prepend=-1))
    counts = np.diff(np.append(first, len(pairs))).astype(np.float32)
    distinct = pairs[first]
    indptr = np.searchsorted(distinct, np.arange(len(lengths) + 1, dtype=np.int64) * max(width, 1))
    return sparse.csr_matrix((counts, (distinct % max(width, 1)).astype(np.int32), indptr),
                             shape=(len(lengths), width))


@dataclass
class Steps:
    """Wall and CPU seconds per step."""

    wall: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, wall: float, cpu: float) -> None:
        """Add ``wall`` and ``cpu`` seconds to step ``name``."""
        self.wall[name] = self.wall.get(name, 0.0) + wall
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu


class Clock:
    """Charges the time since the last mark to a step."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def charge(self, name: str) -> None:
        """Charge the wall and CPU time since the last mark to step ``name``, and mark now."""
        wall, cpu = time.perf_counter(), time.process_time()
        self.steps.add(name, wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu


@dataclass
class Corpus:
    """The corpus read and tokenized: its records, the term frequencies of every document over the stem ids, the
    tokenizer and, when asked for, each document's token hash.
    """

    records: Records
    tf: sparse.csr_matrix  # all documents x stem ids
    tokenizer: Tokenizer
    token_hashes: list[bytes] | None = None


def read_and_tokenize(corpus: str, stops: frozenset[str], clock: Clock, keep_hashes: bool = False) -> Corpus:
    """Every file's documents: records, and tf over the stems (read and tokenize timed apart)."""
    records, tokenizer = Records(), Tokenizer(stops)
    blocks, hashes = [], []
    for path in corpus_files(corpus):
        batches = read_records(path, records)
        while True:
            texts = next(batches, None)
            clock.charge("read")
            if texts is None:
                break
            ids, lengths = tokenizer.ids(texts)
            blocks.append(tf_block(ids, lengths))
            clock.charge("tokenize")
            if keep_hashes:
                hashes.extend(tokenizer.token_hashes(ids, lengths))
                clock.charge("token hashes (not timed)")
    width = len(tokenizer.stems)
    tf = sparse.vstack([sparse.csr_matrix((b.data, b.indices, b.indptr), shape=(b.shape[0], width)) for b in blocks],
                       format="csr")
    if len(set(records.ids)) != len(records.ids):
        seen: set[str] = set()
        repeated = next(doc_id for doc_id in records.ids if doc_id in seen or seen.add(doc_id))  # type: ignore
        raise BadInput(f"duplicate doc id {repeated!r}; doc ids must be unique")
    clock.charge("tokenize")
    return Corpus(records, tf, tokenizer, hashes if keep_hashes else None)


@dataclass
class Matrices:
    """The ltc vectors and 0/1 label matrices of the training and test documents, the vocabulary size and the
    categories.
    """

    X_train: sparse.csr_matrix
    X_test: sparse.csr_matrix
    Y_train: sparse.csc_matrix
    Y_test: sparse.csc_matrix
    vocabulary: int
    categories: list[str]


def weight(read: Corpus) -> Matrices:
    """The ltc vectors over the training stems (sorted, sparktc's term ids), training rows in doc-id order."""
    records = read.records
    is_train = np.array(records.train, dtype=bool)
    train_rows = np.flatnonzero(is_train)
    train_rows = train_rows[np.argsort(np.array(records.ids, dtype=object)[train_rows], kind="stable")]
    test_rows = np.flatnonzero(~is_train)
    tf_train = read.tf[train_rows]
    used = np.flatnonzero(np.bincount(tf_train.indices, minlength=read.tf.shape[1]) > 0)
    stems = np.array(read.tokenizer.stems, dtype=object)[used]
    order = np.argsort(stems.astype(str), kind="stable")
    column = np.full(read.tf.shape[1], -1, dtype=np.int64)
    column[used[order]] = np.arange(len(used))
    mapping = sparse.csr_matrix((np.ones(len(used), dtype=np.float32), (used[order], np.arange(len(used)))),
                                shape=(read.tf.shape[1], len(used)))
    X_train = (tf_train @ mapping).tocsr()
    X_test = (read.tf[test_rows] @ mapping).tocsr()
    for X in (X_train, X_test):
        X.sort_indices()
    n_train = len(train_rows)
    idf = np.log(n_train / np.bincount(X_train.indices, minlength=len(used)))
    ltc(X_train, idf)
    ltc(X_test, idf)
    categories = sorted({label for labels in records.labels for label in labels})
    index = {code: j for j, code in enumerate(categories)}

    def labels(rows: np.ndarray) -> sparse.csc_matrix:
        lists = [records.labels[r] for r in rows.tolist()]
        columns = np.fromiter((index[c] for labels in lists for c in labels), dtype=np.int64)
        row_of = np.repeat(np.arange(len(lists)), [len(labels) for labels in lists])
        return sparse.csc_matrix((np.ones(len(columns), dtype=bool), (row_of, columns)),
                                 shape=(len(lists), len(categories)), dtype=bool)

    return Matrices(X_train, X_test, labels(train_rows), labels(test_rows), len(used), categories)


def run(corpus: str, stop_list: str | None, tokens_file: str | None = None) -> dict[str, Any]:
    """The whole experiment timed step by step (read and tokenize, weight, train, predict and evaluate), printed and
    returned as the result record; with ``tokens_file``, each document's token hash is saved afterwards, untimed.
    """
    steps = Steps()
    clock = Clock(steps)
    stops = stop_words(stop_list)
    read = read_and_tokenize(corpus, stops, clock)
    matrices = weight(read)
    clock.charge("weight")
    trained = np.flatnonzero(matrices.Y_train.getnnz(axis=0) > 0)
    W, b = train(matrices.X_train, matrices.Y_train[:, trained], LIBLINEAR_OPTIONS)
    clock.charge("train")
    tp, fp, fn = predict_and_count([matrices.X_test], W, b, matrices.Y_test[:, trained])
    result = scores(tp, fp, fn)
    clock.charge("predict+evaluate")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    timed = {name: round(seconds, 3) for name, seconds in steps.wall.items()}
    for name, seconds in timed.items():
        print(f"{name:<17} {seconds:9.2f} s  (CPU {steps.cpu[name]:.2f} s)", flush=True)
    print(f"micro-F1 {result['micro_f1']:.4f}  macro-F1 {result['macro_f1']:.4f}  over {len(trained)} categories with "
          ">= 1 training positive (F1 = 1 at 0/0)", flush=True)
    record = {
        "tool": TOOL,
        "steps": timed,
        "steps_cpu": {name: round(seconds, 3) for name, seconds in steps.cpu.items()},
        "total_seconds": round(sum(steps.wall.values()), 3),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "documents": {"train": int(matrices.X_train.shape[0]), "test": int(matrices.X_test.shape[0])},
        "tokens": int(read.tf.sum()),
        "distinct_tokens": len(read.tokenizer.term_of),
        "stems": len(read.tokenizer.stems),
        "features": matrices.vocabulary,
        "categories": len(matrices.categories),
        "categories_trained": len(trained),
        "stop_words": len(stops),
        "liblinear_options": LIBLINEAR_OPTIONS,
        **{key: value for key, value in result.items() if key != "f1"},
    }
    if tokens_file:  # after the timed steps: the same tokenization again, keeping each document's token hash
        again = read_and_tokenize(corpus, stops, Clock(Steps()), keep_hashes=True)
        np.savez(tokens_file, doc_ids=np.array(again.records.ids, dtype=str),
                 hashes=np.frombuffer(b"".join(again.token_hashes or []), dtype=np.uint64))
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """Run the experiment on ``--corpus`` and write the result JSON to ``--output``; the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="directory of *.jsonl / *.jsonl.gz files")
    parser.add_argument("--output", required=True, help="result JSON file")
    parser.add_argument("--stop-list", default="", help="stop list file, one word per line (none by default, as "
                                                        "conf/jsonl.toml)")
    parser.add_argument("--tokens", default="", help="also save each document's token hash here (.npz), untimed")
    arguments = parser.parse_args(argv)
    result = run(arguments.corpus, arguments.stop_list or None, arguments.tokens or None)
    Path(arguments.output).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
