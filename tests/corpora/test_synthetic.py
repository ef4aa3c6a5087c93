"""The synthetic LYRL2004-format corpus: files, format, shape, hierarchy closure, determinism."""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_data

from sparktc.corpora.lyrl2004 import parse_hierarchy, parse_qrels, parse_token_file
from sparktc.corpora.records import Reject
from sparktc.corpora.synthetic import QRELS_FILE, QRELS_FILES, RCV1_TEST_PARTS, TEST_FILES, TRAIN_FILE, SyntheticShape
from sparktc.corpora.synthetic_categories import (
    HIERARCHY_FILE,
    format_hierarchy,
    generate_hierarchy,
    parse_hierarchy_text,
)
from sparktc.corpora.synthetic_documents import BLOCK_DOCUMENTS, LINE_WIDTH, Batch, format_batch, generate_documents
from sparktc.corpora.synthetic_model import GUIDE_BUCKETS, SyntheticModel, guide_table, guided_search
from sparktc.stages.synthesize import LIST_FILES, TMP_DIR, synthesize

SMALL = SyntheticShape(documents=3000, train_documents=300, vocabulary_size=2000, seed=7)
TOKEN_FILES = (TRAIN_FILE, *TEST_FILES)
ALL_FILES = {*TOKEN_FILES, *QRELS_FILES.values(), *LIST_FILES.values()}


def _hier_path() -> str:
    return str(shared_data("rcv1", "rcv1.topics.hier.orig"))


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """Five small corpora: a, b identical settings; c other chunking; d other seed; e generated tree."""
    base = tmp_path_factory.mktemp("synthetic")
    hier = _hier_path()
    out = {}
    for name, shape, hierarchy, chunk in (
        ("a", SMALL, hier, 1000),
        ("b", SMALL, hier, 1000),
        ("c", SMALL, hier, 700),
        ("d", SyntheticShape(**{**SMALL.__dict__, "seed": 8}), hier, 1000),
        ("e", SMALL, None, 1000),
    ):
        path = base / name
        stats = synthesize(spark, str(path), shape, hierarchy, chunk_documents=chunk)
        out[name] = (path, stats)
    return out


def _read(path: Path) -> tuple[dict[str, list[tuple[int, tuple[str, ...]]]], list[tuple[int, str]]]:
    docs = {}
    for name in TOKEN_FILES:
        with gzip.open(path / name, "rb") as fh:
            records = list(parse_token_file(fh, name, "train" if name == TRAIN_FILE else "test"))
        assert not [r for r in records if isinstance(r, Reject)], name
        docs[name] = [(int(d.doc_id), d.tokens) for d in records]
    with gzip.open(path / QRELS_FILE, "rb") as fh:
        qrels = list(parse_qrels(fh, QRELS_FILE))
    assert not [r for r in qrels if isinstance(r, Reject)]
    return docs, [(int(a.doc_id), a.category) for a in qrels]


def _content(path: Path) -> list[bytes]:
    return [gzip.decompress((path / n).read_bytes()) for n in (*TOKEN_FILES, *QRELS_FILES.values())]


def test_files_counts_ids_and_labels(runs):
    path, stats = runs["a"]
    assert {p.name for p in path.iterdir()} == ALL_FILES  # temporaries removed
    assert not (path / TMP_DIR).exists()
    assert (path / HIERARCHY_FILE).read_bytes() == Path(_hier_path()).read_bytes()
    docs, qrels = _read(path)

    sizes = [len(docs[n]) for n in TOKEN_FILES]
    assert sizes == [300, *SMALL.test_part_sizes()] and sum(sizes) == 3000
    assert docs[TRAIN_FILE][0][0] == 2286 and docs[TEST_FILES[0]][0][0] == 26151
    all_ids = [i for n in TOKEN_FILES for i, _ in docs[n]]
    assert all_ids == sorted(set(all_ids))  # unique and increasing, within and across files
    for name in TOKEN_FILES:
        assert stats["files"][name]["documents"] == len(docs[name])

    # layout: ".I id", ".W", token lines of <= 80 characters, a blank line
    text = gzip.decompress((path / TRAIN_FILE).read_bytes()).decode("ascii")
    assert text.startswith(".I 2286\n.W\n") and text.endswith("\n\n")
    for line in text.splitlines():
        assert len(line) <= 80 or " " not in line
        assert line == line.strip() and "  " not in line

    hierarchy = parse_hierarchy(Path(_hier_path()).read_text().splitlines(), HIERARCHY_FILE)
    assert qrels == sorted(qrels, key=lambda a: (a[0], a[1]))  # by doc id, then category
    labels: dict[int, set[str]] = {}
    for doc_id, cat in qrels:
        labels.setdefault(doc_id, set()).add(cat)
    assert set(labels) == set(all_ids)  # every document has topics, none unknown
    for cats in labels.values():
        assert cats <= set(hierarchy.categories)
        assert set(hierarchy.with_ancestors(cats)) == cats  # closed under ancestors
    assert len(qrels) == stats["assignments"]
    mean = len(qrels) / len(all_ids)
    assert 2.8 <= mean <= 3.6 and abs(mean - stats["topics_per_document"]) < 1e-9
    assert 0.38 <= stats["top_level_share"]["CCAT"] <= 0.56

    ntok = [len(t) for n in TOKEN_FILES for _, t in docs[n]]
    assert 100 <= np.mean(ntok) <= 140
    assert stats["tokens"] == sum(ntok)
    distinct = np.mean([len(set(t)) for n in TOKEN_FILES for _, t in docs[n]])
    assert 0.45 * np.mean(ntok) <= distinct <= 0.8 * np.mean(ntok)
    vocab = {w for n in TOKEN_FILES for _, t in docs[n] for w in t}
    assert len(vocab) <= SMALL.vocabulary_size and all(w.isalpha() and w.islower() for w in vocab)


def test_deterministic_for_a_seed(runs):
    a, b, c, d = (runs[k][0] for k in "abcd")
    for name in ALL_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # other chunking: other gzip members, same content
    assert _content(a) == _content(c)
    # other seed: other corpus (same shape, same hierarchy file)
    assert _content(a)[0] != _content(d)[0]
    assert (a / HIERARCHY_FILE).read_bytes() == (d / HIERARCHY_FILE).read_bytes()
    # the industries tree and the regions list are the model's: the same for any chunking, others for another seed
    for name in (LIST_FILES["industries"], LIST_FILES["regions"]):
        assert (a / name).read_bytes() == (c / name).read_bytes() != (d / name).read_bytes(), name


def test_generated_hierarchy_run(runs):
    path, stats = runs["e"]
    hierarchy = parse_hierarchy((path / HIERARCHY_FILE).read_text().splitlines(), HIERARCHY_FILE)
    assert len(hierarchy.categories) == 103 and len(hierarchy.top_level) == 4 and len(hierarchy.leaves) == 82
    assert stats["hierarchy"]["source"] == "generated" and stats["categories"] == 103
    _, qrels = _read(path)
    labels: dict[int, set[str]] = {}
    for doc_id, cat in qrels:
        labels.setdefault(doc_id, set()).add(cat)
    assert len(labels) == 3000
    assert all(set(hierarchy.with_ancestors(c)) == c for c in labels.values())


def test_generated_hierarchy_shape():
    entries = generate_hierarchy(3)
    assert entries == generate_hierarchy(3) and entries != generate_hierarchy(4)
    text = format_hierarchy(entries)
    h = parse_hierarchy(text.splitlines(), "generated")
    assert len(h.categories) == 103 and len(h.top_level) == 4 and len(h.leaves) == 82
    assert max(len(h.ancestors(c)) for c in h.categories) == 3  # depth 4 below Root
    assert all(c.endswith("CAT") and len(c) == 4 for c in h.top_level)
    assert all(c[0] == h.ancestors(c)[-1][0] for c in h.categories if h.parent[c] != "Root")
    # same line layout as the real file
    real = Path(_hier_path()).read_text()
    assert format_hierarchy(parse_hierarchy_text(real)) == real


def iter_batch(model: SyntheticModel, batch: Batch) -> Iterator[tuple[int, list[str], tuple[str, ...]]]:
    vocab, codes = model.vocabulary, model.tree.codes
    for i in range(len(batch)):
        toks = batch.tokens[batch.offsets[i]:batch.offsets[i + 1]].tolist()
        labels = tuple(codes[j] for j in np.flatnonzero(batch.labels[i]))
        yield int(batch.doc_ids[i]), [vocab[t] for t in toks], labels


def format_record(doc_id: int, tokens: Sequence[str], width: int = LINE_WIDTH) -> str:
    """One LYRL2004 record: ``.I id``, ``.W``, the tokens wrapped greedily to ``width``, a blank line."""
    lines, line = [], ""
    for t in tokens:
        if line and len(line) + 1 + len(t) > width:
            lines.append(line)
            line = t
        else:
            line = f"{line} {t}" if line else t
    if line:
        lines.append(line)
    body = "".join(x + "\n" for x in lines)
    return f".I {doc_id}\n.W\n{body}\n"


def test_the_calibrations_mean_label_count_is_that_of_the_sampled_label_sets():
    """The calibration's mean label-set size (bits per document, no matrix) is the mean of the label sets
    sample_labels draws from the same stream, to the last bit.
    """
    model = SyntheticModel(SMALL, parse_hierarchy_text(Path(_hier_path()).read_text()))
    for lam in (0.0, model.lam, 1.7, 6.0):
        _, _, labels = model.sample_labels(np.random.default_rng(11), 5000, lam)
        assert model._mean_labels(np.random.default_rng(11), 5000, lam) == labels.sum(axis=1).mean(), lam


def test_a_guided_search_finds_what_a_binary_search_finds():
    """guided_search gives np.searchsorted's answers, side="right", for any key in [0, top]: random ones, the cdf's own
    values and their neighbours, the buckets' ends and the range's, over cdfs with values packed inside one bucket.
    """
    rng = np.random.default_rng(3)
    for cdf, top in ((np.cumsum(rng.dirichlet(np.full(103, 0.05))), 1),
                     (np.concatenate([np.sort(rng.random(50)) + k for k in range(4)]), 4),
                     (np.array([0.0, 1e-9, 2e-9, 0.5, 0.5, 1.0]), 1)):
        keys = np.concatenate([rng.random(20_000) * top, cdf, np.nextafter(cdf, -np.inf), np.nextafter(cdf, np.inf),
                               np.arange(top * GUIDE_BUCKETS + 1) / GUIDE_BUCKETS, [0.0, float(top)]])
        keys = keys[(keys >= 0) & (keys <= top)]
        assert np.array_equal(guided_search(cdf, guide_table(cdf, top), keys), np.searchsorted(cdf, keys, "right"))


def test_vectorised_formatting_matches_format_record():
    model = SyntheticModel(SyntheticShape(documents=1500, train_documents=200, vocabulary_size=1000, seed=1))
    batches = list(generate_documents(model, 900, 1500))  # crosses a block boundary
    assert [len(b) for b in batches] == [BLOCK_DOCUMENTS - 900, 500]
    for batch in batches:
        expected = "".join(format_record(i, t) for i, t, _ in iter_batch(model, batch))
        assert format_batch(model, batch) == expected
    assert format_record(5, ["a" * 50, "b" * 40, "c"]) == ".I 5\n.W\n" + "a" * 50 + "\n" + "b" * 40 + " c\n\n"


def test_shape_defaults_and_validation():
    full = SyntheticShape()
    assert full.documents == 804_414 and full.train_documents == 23_149
    assert full.test_part_sizes() == RCV1_TEST_PARTS
    assert full.test_first_id == 26151
    assert sum(SMALL.test_part_sizes()) == 2700
    for kwargs, name in (
        ({"documents": 2}, "documents"),
        ({"vocabulary_size": 10}, "vocabulary_size"),
        ({"topics_per_document": 9.0}, "topics_per_document"),
        ({"seed": -1}, "seed"),
        ({"tokens_per_document": float("nan")}, "tokens_per_document"),
        ({"documents": 10, "train_documents": 8}, "train_documents"),
    ):
        with pytest.raises(ValueError, match=rf"^{name}=.*\[") as info:
            SyntheticShape(**kwargs)
        assert str(kwargs[name]) in str(info.value)
