"""The label index ingest's qrels task stages once for the token files' workers (LYRL2004 token files): the same
index as the qrels read and indexed by a worker itself, against a brute force over the qrels lines.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sparktc.corpora.label_index import NOT_CLOSED, LabelIndex, QrelsFiles
from sparktc.corpora.records import Document, Reject, record_batch
from sparktc.stages.ingest.on_workers import staged_label_index, staging_labels

PARENTS = (("C15", "CCAT"), ("C151", "C15"), ("C1511", "C151"), ("E12", "ECAT"))
KNOWN = ("C15", "C151", "C1511", "CCAT", "E12", "ECAT", "GCAT")
# 2287 misses C15 (C151's parent) and 10 misses ECAT; 2286's lines are closed, one repeated; 9's XXX is unknown.
QRELS = """\
C15 2286 1
C151 2286 1
C1511 2286 1
CCAT 2286 1
CCAT 2286 1
E12 2286 1
ECAT 2286 1
C151 2287 1
CCAT 2287 1
E12 10 1
XXX 9 1
GCAT 9 1
GCAT {long} 1
"""
LONG = "123456789012345678901"  # no int64 holds it: the index finds the documents by a dict, not by value


def id_hash(doc_id: str) -> int:
    """An id's hash as label_index.id_hashes defines it, computed here one id at a time: a short canonical decimal's
    value through splitmix64's finalizer, any other id's string by SipHash (pandas).
    """
    if re.fullmatch(r"0|[1-9][0-9]{0,17}", doc_id):
        z = (int(doc_id) + 0x9E3779B97F4A7C15) % 2**64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)
    return int(pd.util.hash_array(np.array([doc_id], dtype=object))[0])


def expected(policy: str, long: str) -> tuple[dict[str, list[str]], set[str], int]:
    """Each qrels document's labels, those set aside and those not closed, by brute force over the lines."""
    parent = dict(PARENTS)
    found: dict[str, set[str]] = {}
    for line in QRELS.format(long=long).splitlines():
        category, doc_id, _ = line.split()
        if category in KNOWN:
            found.setdefault(doc_id, set()).add(category)
    open_ids = {doc_id for doc_id, codes in found.items() if any(c in parent and parent[c] not in codes for c in codes)}
    if policy == "expand":
        for codes in found.values():
            for code in list(codes):
                while code in parent:
                    code = parent[code]
                    codes.add(code)
    return {doc_id: sorted(codes) for doc_id, codes in found.items()}, open_ids if policy == "set_aside" else set(), \
        len(open_ids)


@pytest.mark.parametrize("long", [LONG, "11"])
@pytest.mark.parametrize("policy", ["expand", "set_aside", "keep"])
def test_the_staged_index_is_the_one_a_worker_builds_from_the_qrels(tmp_path, policy, long):
    path = tmp_path / "rcv1-v2.topics.qrels"
    path.write_text(QRELS.format(long=long))
    qrels = QrelsFiles((str(path),), KNOWN, "tree")
    lines = list(qrels.read(path.read_bytes(), str(path)))
    staged = str(tmp_path / "staging" / "labels")
    passed = list(staging_labels(staged, PARENTS, policy)(iter(lines)))
    assert passed == lines  # the qrels' task writes its lines as they are
    index = staged_label_index(staged)
    built = LabelIndex.load(qrels, lambda source: path.read_bytes(), PARENTS, policy)

    labels, set_aside, not_closed = expected(policy, long)
    # By the ids' values when each fits an int64, else as strings (label_index.by_document).
    order = sorted(labels, key=int) if long != LONG else sorted(labels)
    assert index.ids.to_pylist() == built.ids.to_pylist() == order
    assert index.labels.to_pylist() == built.labels.to_pylist() == [labels[i] for i in order] + [[]]
    assert index.set_aside == built.set_aside == set_aside
    assert index.not_closed == built.not_closed == not_closed == 2
    digest = sum(id_hash(doc_id) for doc_id in labels) % 2**64
    assert index.ids_digest == built.ids_digest == digest
    assert (index.rows.row_of is None) == (long != LONG)

    batch = record_batch([Document(doc_id, "test", (), None, ("a",), "t", line) for line, doc_id in enumerate(
        ["2287", "2286", "9", "10", long, "3", "02286"])] + [Reject("t", 9, "2286", "empty document")])
    attached = index.attach(batch)
    assert attached.equals(built.attach(batch))
    documents = batch.column("doc_id").to_pylist()[:-1]  # the reject's labels stay null, its reason as it was
    assert attached.column("labels").to_pylist() == [labels.get(d, []) for d in documents] + [None]
    assert attached.column("reason").to_pylist() == [NOT_CLOSED if d in set_aside else None for d in documents] + [
        "empty document"]


def test_no_accepted_qrels_line_stages_an_empty_index(tmp_path):
    lines = pa.table({"doc_id": ["7"], "category": ["XXX"], "source": ["q"], "line": pa.array([1], pa.int32()),
                      "reason": ["unknown category XXX"]}).to_batches()
    staged = str(tmp_path / "labels")
    list(staging_labels(staged, PARENTS, "expand")(iter(lines)))
    index = staged_label_index(staged)
    assert (len(index.ids), index.not_closed, index.ids_digest, index.set_aside) == (0, 0, 0, frozenset())
    batch = record_batch([Document("7", "train", (), None, ("a",), "t", 1)])
    assert index.attach(batch).column("labels").to_pylist() == [[]]
