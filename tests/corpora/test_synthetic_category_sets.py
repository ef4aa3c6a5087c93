"""The synthetic corpus's industries and regions (LYRL2004's other two category sets): the industries tree and the
regions list in their published formats and of the stated shape, qrels within them, every document with a region,
the intended share of industry label sets not closed under the tree, determinism, unchanged topics, and the
pipeline reading and learning both sets.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparktc.apps.pipeline import SYNTHESIZED_CORPUS
from sparktc.apps.pipeline import run as run_pipeline
from sparktc.corpora import lyrl2004
from sparktc.corpora.records import Reject
from sparktc.corpora.synthetic import QRELS_FILES, SyntheticShape
from sparktc.corpora.synthetic_categories import (
    INDUSTRY_LEVELS,
    REGION_CODES,
    format_hierarchy,
    format_regions,
    generate_industries_hierarchy,
    generate_regions,
)
from sparktc.corpora.synthetic_documents import generate_documents
from sparktc.corpora.synthetic_model import (
    INDUSTRY_DOCUMENT_SHARE,
    INDUSTRY_NOT_CLOSED_SHARE,
    REGIONS_ASSIGNED,
    REGIONS_PER_DOCUMENT,
    SyntheticModel,
)
from sparktc.experiment.config import load_config

SEED = 5
SHAPE = [f"synthesize.seed={SEED}", "synthesize.documents=2500", "synthesize.train_documents=1000",
         "synthesize.vocabulary_size=2000", "synthesize.chunk_documents=500"]
INDUSTRIES_FILE = lyrl2004.HIERARCHY_FILES["industries"]


@pytest.fixture(scope="module")
def industries_run(spark, tmp_path_factory) -> tuple[Path, dict]:
    """The whole pipeline on a synthetic corpus with ``corpus.category_set = industries``: (output, manifests)."""
    output = tmp_path_factory.mktemp("synthetic_industries") / "run"
    config = load_config(None, ["corpus.format=synthetic", *SHAPE, "corpus.category_set=industries"])
    return output, {m["stage"]: m for m in run_pipeline(spark, config, str(output))}


@pytest.fixture(scope="module")
def regions_run(spark, industries_run, tmp_path_factory) -> tuple[Path, dict]:
    """The pipeline with ``corpus.category_set = regions`` on the corpus the industries run synthesized."""
    output = tmp_path_factory.mktemp("synthetic_regions") / "run"
    corpus = industries_run[0] / SYNTHESIZED_CORPUS
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", "corpus.category_set=regions"])
    return output, {m["stage"]: m for m in run_pipeline(spark, config, str(output))}


@pytest.fixture(scope="module")
def model() -> SyntheticModel:
    return SyntheticModel(SyntheticShape(documents=2500, train_documents=500, vocabulary_size=1000, seed=3))


def read_qrels(corpus: Path, category_set: str) -> dict[str, set[str]]:
    """Each document's codes in the set's qrels file, which must list them by document, then code."""
    with gzip.open(corpus / QRELS_FILES[category_set], "rb") as lines:
        read = list(lyrl2004.parse_qrels(lines, QRELS_FILES[category_set]))
    assert not [r for r in read if isinstance(r, Reject)]
    pairs = [(int(a.doc_id), a.category) for a in read]
    assert pairs == sorted(set(pairs))
    labels: dict[str, set[str]] = {}
    for a in read:
        labels.setdefault(a.doc_id, set()).add(a.category)
    return labels


def industries_tree(corpus: Path) -> lyrl2004.Hierarchy:
    return lyrl2004.parse_hierarchy((corpus / INDUSTRIES_FILE).read_text().splitlines(), INDUSTRIES_FILE)


def test_industries_hierarchy_has_the_stated_shape(industries_run):
    corpus = industries_run[0] / SYNTHESIZED_CORPUS
    text = (corpus / INDUSTRIES_FILE).read_text()
    assert text.startswith("parent: None    child: Root    child-description: ")
    tree = industries_tree(corpus)
    assert len(tree.categories) == sum(INDUSTRY_LEVELS) == 354
    assert tree.top_level == tuple(f"I{d}0000" for d in range(10))
    assert all(re.fullmatch(r"I[0-9]{5}", code) for code in tree.categories)
    depth = {code: len(tree.ancestors(code)) + 1 for code in tree.categories}
    assert [Counter(depth.values())[d] for d in range(1, 6)] == list(INDUSTRY_LEVELS)
    assert len(tree.leaves) == 249
    for code, parent in tree.parent.items():  # digits spell the path: digit d set at depth d, zeros after it
        d = depth[code]
        if parent != lyrl2004.ROOT:
            assert code[d] != "0" and set(code[d + 1:]) <= {"0"} and parent == code[:d] + "0" + code[d + 1:]
    assert all(tree.descriptions[code] and tree.descriptions[code] == tree.descriptions[code].upper()
               for code in tree.categories)
    assert text == format_hierarchy(generate_industries_hierarchy(SEED))
    assert generate_industries_hierarchy(SEED + 1) != generate_industries_hierarchy(SEED)


def test_regions_list_parses_and_has_the_stated_shape(industries_run):
    corpus = industries_run[0] / SYNTHESIZED_CORPUS
    lines = (corpus / lyrl2004.REGIONS_FILE).read_text().splitlines()
    regions = lyrl2004.parse_category_list(lines, lyrl2004.REGIONS_FILE)
    assert len(regions) == len(lines) == REGION_CODES == 366
    assert list(regions) == sorted(regions)
    assert all(re.fullmatch(r"[A-Z0-9]{3,7}", code) for code in regions)
    assert all(re.fullmatch(r"[A-Z0-9]{3,7} +[A-Z]+( [A-Z]+)*", line) for line in lines)
    assert all(name == name.upper() for name in regions.values())
    assert "\n".join(lines) + "\n" == format_regions(generate_regions(SEED))


def test_qrels_lie_in_their_lists_and_every_document_has_a_region(industries_run):
    output, manifests = industries_run
    corpus = output / SYNTHESIZED_CORPUS
    documents = set(pd.read_parquet(output / "documents", columns=["doc_id"])["doc_id"])
    assert len(documents) == 2500
    topics = read_qrels(corpus, "topics")
    industries = read_qrels(corpus, "industries")
    regions = read_qrels(corpus, "regions")
    assert set(topics) == set(regions) == documents  # LYRL2004's minimum code policy: a topic and a region each
    assert set(industries) < documents
    assert abs(len(industries) / len(documents) - INDUSTRY_DOCUMENT_SHARE) < 0.05
    known_regions = set(lyrl2004.parse_category_list((corpus / lyrl2004.REGIONS_FILE).read_text().splitlines(), ""))
    assert set().union(*industries.values()) <= set(industries_tree(corpus).categories)
    assert set().union(*regions.values()) <= known_regions
    per_document = [len(codes) for codes in regions.values()]
    assert abs(np.mean(per_document) - REGIONS_PER_DOCUMENT) < 0.1 and max(per_document) >= 3
    # very skewed: one region in about a third of the documents, many codes without any
    frequency = Counter(code for codes in regions.values() for code in codes).most_common()
    assert 0.2 < frequency[0][1] / len(documents) < 0.5
    assert len(frequency) < REGIONS_ASSIGNED
    details = manifests["synthesize"]["details"]
    counts = {name: sum(map(len, labels.values())) for name, labels in
              (("topics", topics), ("industries", industries), ("regions", regions))}
    assert details["qrels_assignments"] == {QRELS_FILES[name]: count for name, count in counts.items()}
    assert details["industry_documents"] == len(industries)
    assert manifests["ingest"]["details"]["qrels_lines"] == counts["industries"]


def test_industry_codes_are_closed_but_for_the_intended_share(industries_run, model):
    output, manifests = industries_run
    corpus = output / SYNTHESIZED_CORPUS
    tree = industries_tree(corpus)
    missing = {doc: set(tree.with_ancestors(codes)) - codes for doc, codes in read_qrels(corpus, "industries").items()}
    not_closed = {doc: codes for doc, codes in missing.items() if codes}
    assert all(len(codes) == 1 for codes in not_closed.values())  # only the first code's immediate parent is left out
    assert 0 < len(not_closed) == manifests["synthesize"]["details"]["industry_documents_not_closed"]
    assert manifests["ingest"]["details"]["hierarchy_closure"] == {"policy": "keep",
                                                                   "documents_not_closed": len(not_closed)}
    # the generator's shares, on many documents: within about 4 standard deviations
    _, _, labels = model.sample_industries(np.random.default_rng(1), 60_000)
    labelled = labels.any(axis=1)
    child = np.flatnonzero(model.industries.tree.parent >= 0)
    open_ = (labels[:, child] & ~labels[:, model.industries.tree.parent[child]]).any(axis=1)
    assert abs(labelled.mean() - INDUSTRY_DOCUMENT_SHARE) < 0.01
    assert abs(open_.sum() / labelled.sum() - INDUSTRY_NOT_CLOSED_SHARE) < 0.004


def test_industries_and_regions_do_not_depend_on_the_chunking(model):
    whole = list(generate_documents(model, 0, 2500))
    pieces = [b for lo, hi in ((0, 777), (777, 1900), (1900, 2500)) for b in generate_documents(model, lo, hi)]
    for name in ("industries", "regions"):
        assert np.array_equal(np.concatenate([b.category_labels(name) for b in whole]),
                              np.concatenate([b.category_labels(name) for b in pieces]))
    assert np.array_equal(np.concatenate([b.tokens for b in whole]), np.concatenate([b.tokens for b in pieces]))


def test_topic_labels_are_those_of_the_topics_only_generator(model):
    # The digest of this shape's topic labels as the generator gave them before it wrote industries and regions.
    labels = np.concatenate([b.labels for b in generate_documents(model, 0, 2500)])
    assert labels.shape == (2500, 103)
    assert hashlib.sha256(np.packbits(labels).tobytes()).hexdigest() == (
        "f12bf053de164c1ce450c080326cb6263a36f60403a1ad7cfd045d03beb71752")


def test_the_pipeline_reads_and_learns_industries_and_regions(industries_run, regions_run):
    corpus = industries_run[0] / SYNTHESIZED_CORPUS
    regions = lyrl2004.parse_category_list((corpus / lyrl2004.REGIONS_FILE).read_text().splitlines(), "")
    for (output, manifests), category_set, codes in (
        (industries_run, "industries", industries_tree(corpus).categories), (regions_run, "regions", sorted(regions)),
    ):
        assert manifests["ingest"]["details"]["category_set"] == category_set
        categories = pd.read_parquet(output / "categories")
        assert sorted(categories["category"]) == list(codes)
        assert manifests["ingest"]["details"]["qrels_rejected"] == 0
    assert regions_run[1]["ingest"]["details"]["documents_without_labels"] == 0
    assert regions_run[1]["ingest"]["details"]["hierarchy_closure"]["documents_not_closed"] == 0
    # plain one-vs-rest SVM (threshold 0) on 1,000 training documents; without the sets' words both are near 0
    assert industries_run[1]["evaluate"]["details"]["micro_f1"] > 0.2
    assert regions_run[1]["evaluate"]["details"]["micro_f1"] > 0.4
