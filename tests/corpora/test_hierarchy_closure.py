"""Documents whose qrels labels miss an ancestor: counted by ingest, then expanded (LYRL2004's policy) or set aside
(corpus.hierarchy_policy), on the LYRL2004 fixtures with one parent line removed and against a brute force.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import lyrl2004_corpus, shared_data

from sparktc.apps.pipeline import run as run_stages
from sparktc.corpora.label_index import NOT_CLOSED, closed_labels, unclosed_rows
from sparktc.corpora.lyrl2004 import ROOT, parse_hierarchy
from sparktc.experiment.config import load_config

HIERARCHY = shared_data("rcv1", "rcv1.topics.hier.orig")


def hierarchy():
    return parse_hierarchy(HIERARCHY.read_text().splitlines(), str(HIERARCHY))


def test_closure_against_a_brute_force():
    tree = hierarchy()
    parent = {code: p for code, p in tree.parent.items() if p != ROOT}
    rng = np.random.default_rng(4)
    codes = list(tree.categories)
    documents = [sorted(set(rng.choice(codes, size=rng.integers(0, 5)))) for _ in range(300)]
    documents += [sorted(tree.with_ancestors(["C1511"])), ["C1511"], []]
    ids = [f"d{i}" for i in range(len(documents))]
    labels = pa.array(documents, pa.list_(pa.string()))
    open_ids = {i for i, d in zip(ids, documents) if any(c in parent and parent[c] not in d for c in d)}
    open_rows = unclosed_rows(labels, parent)
    assert {ids[r] for r in open_rows} == open_ids and len(open_rows) == len(open_ids)
    expanded, none = closed_labels(ids, labels, parent, "expand", open_rows)
    assert none == frozenset()
    assert expanded.to_pylist() == [sorted(tree.with_ancestors(d)) for d in documents]
    same, aside = closed_labels(ids, labels, parent, "set_aside", open_rows)
    assert same.to_pylist() == documents and aside == open_ids
    assert "d301" in open_ids and "d300" not in open_ids


@pytest.mark.parametrize("n_codes", [3, 64, 65, 200])
def test_unclosed_rows_against_a_brute_force_for_hierarchies_of_every_width(n_codes):
    # Codes past 64 and 128 fall in the second and later words of the bit sets.
    rng = np.random.default_rng(n_codes)
    codes = [f"c{i:03d}" for i in range(n_codes)]
    parent = {code: codes[int(rng.integers(0, i))] for i, code in enumerate(codes) if i and rng.random() < 0.8}
    documents = [sorted(set(rng.choice(codes + ["other"], size=rng.integers(0, 6)))) for _ in range(400)]
    documents += [[], sorted({codes[-1], parent.get(codes[-1], codes[-1])}), []]
    open_rows = unclosed_rows(pa.array(documents, pa.list_(pa.string())), parent)
    assert open_rows.tolist() == [r for r, d in enumerate(documents) if any(c in parent and parent[c] not in d
                                                                            for c in d)]
    assert unclosed_rows(pa.array([[], []], pa.list_(pa.string())), parent).tolist() == []


@pytest.fixture(scope="module")
def open_corpus(tmp_path_factory):
    """The LYRL2004 fixture corpus without the line `C151 2286 1`: document 2286 keeps C1511 and C15."""
    corpus = lyrl2004_corpus(tmp_path_factory.mktemp("open_qrels"))
    qrels = corpus / "rcv1-v2.topics.qrels"
    lines = qrels.read_text().splitlines()
    assert "C151 2286 1" in lines
    qrels.write_text("\n".join(line for line in lines if line != "C151 2286 1") + "\n")
    return corpus


@pytest.mark.parametrize("policy", ["expand", "set_aside", "keep"])
def test_ingest_counts_and_applies_the_hierarchy_policy(spark, open_corpus, tmp_path, policy):
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={open_corpus}", f"corpus.hierarchy={HIERARCHY}",
                                "corpus.test_parts=[0]", f"corpus.hierarchy_policy={policy}"])
    [manifest] = run_stages(spark, config, str(tmp_path / "run"), "ingest")
    assert manifest["details"]["hierarchy_closure"] == {"policy": policy, "documents_not_closed": 1}
    documents = pd.read_parquet(tmp_path / "run" / "documents").set_index("doc_id")
    if policy == "expand":
        assert sorted(documents.loc["2286", "labels"]) == sorted(hierarchy().with_ancestors(["C1511", "E121"]))
    elif policy == "keep":  # counted all the same, by the parsing workers' label index, not a Spark job
        assert "C151" not in documents.loc["2286", "labels"] and "C1511" in documents.loc["2286", "labels"]
    else:
        assert "2286" not in documents.index
        assert manifest["set_aside"] == {NOT_CLOSED.removeprefix("set aside: "): 1}
        assert manifest["rows_in"] == manifest["rows_out"] + 1
