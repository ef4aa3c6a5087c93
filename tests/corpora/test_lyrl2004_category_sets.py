"""LYRL2004's three category sets (corpus.category_set): the fixture corpus's documents labelled by the industries
and regions qrels, with the industries hierarchy and the regions list in their published formats, or without them.
"""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import lyrl2004_corpus, shared_data

from sparktc.apps.pipeline import run as run_stages
from sparktc.corpora import lyrl2004
from sparktc.errors import InputError
from sparktc.experiment.config import ConfigError, category_set_of, hierarchy_policy_of, load_config

HIERARCHY = shared_data("rcv1", "rcv1.topics.hier.orig")

# rcv1.industries.hier's format (LYRL2004 appendix 5): a small tree with an intermediate node I0.
INDUSTRIES_HIERARCHY = """\
parent: None           child: Root              child-description: Root
parent: Root           child: I0                child-description: AGRICULTURE, FORESTRY AND FISHING
parent: I0             child: I01001            child-description: FARMING
parent: I01001         child: I01002            child-description: ARABLE FARMING
parent: Root           child: I8                child-description: BANKING AND FINANCE
parent: I8             child: I81402            child-description: COMMERCIAL BANKING
"""
# Document 2287's I01002 misses its parent I01001: industries are not always closed (LYRL2004 section 3.2).
INDUSTRIES_QRELS = """\
I01001 2286 1
I01002 2286 1
I0 2286 1
I01002 2287 1
I81402 2289 1
I8 2289 1
I01001 26151 1
I0 26151 1
"""
REGIONS_LIST = """\
USA     UNITED STATES
UK      UNITED KINGDOM
JAP     JAPAN
BRAZ
"""
REGIONS_QRELS = "".join(f"{code} {doc} 1\n" for code, doc in [
    ("USA", 2286), ("UK", 2286), ("USA", 2287), ("JAP", 2288), ("USA", 2289), ("UK", 2290), ("USA", 2291),
    ("USA", 26151), ("JAP", 26152), ("UK", 26153), ("USA", 26154)])
DOCUMENTS = ["2286", "2287", "2288", "2289", "2290", "2291", "26151", "26152", "26153", "26154"]


def expected_labels(qrels: str) -> dict[str, list[str]]:
    labels: dict[str, list[str]] = {doc: [] for doc in DOCUMENTS}
    for line in qrels.splitlines():
        code, doc, _ = line.split()
        labels[doc].append(code)
    return {doc: sorted(codes) for doc, codes in labels.items()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The token fixtures with all three qrels files, the industries hierarchy and the regions list."""
    directory = lyrl2004_corpus(tmp_path_factory.mktemp("category_sets") / "corpus")
    (directory / "rcv1-v2.industries.qrels").write_text(INDUSTRIES_QRELS)
    (directory / "rcv1-v2.regions.qrels").write_text(REGIONS_QRELS)
    (directory / lyrl2004.HIERARCHY_FILES["industries"]).write_text(INDUSTRIES_HIERARCHY)
    (directory / lyrl2004.REGIONS_FILE).write_text(REGIONS_LIST)
    return directory


def ingest(spark, corpus, output, *overrides: str) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", "corpus.test_parts=[0]",
                                *overrides])
    [manifest] = run_stages(spark, config, str(output), "ingest")
    documents = pd.read_parquet(output / "documents").set_index("doc_id")
    categories = pd.read_parquet(output / "categories").set_index("category")
    return manifest, documents, categories


def test_industries_are_read_with_their_hierarchy_and_kept_as_assigned(spark, corpus, tmp_path):
    manifest, documents, categories = ingest(spark, corpus, tmp_path / "run", "corpus.category_set=industries")
    assert manifest["details"]["category_set"] == "industries"
    # LYRL2004 did not expand industries: 2287 keeps I01002 alone, and the report counts it.
    assert manifest["details"]["hierarchy_closure"] == {"policy": "keep", "documents_not_closed": 1}
    assert {doc: sorted(labels) for doc, labels in documents["labels"].items()} == expected_labels(INDUSTRIES_QRELS)
    assert sorted(categories.index) == ["I0", "I01001", "I01002", "I8", "I81402"]
    assert categories.loc["I01002", "parent"] == "I01001" and categories.loc["I0", "parent"] is None
    assert categories.loc["I01001", "name"] == "FARMING"
    assert categories.loc["I0", "train_positives"] == 1 and categories.loc["I0", "test_positives"] == 1


def test_industries_expanded_on_request(spark, corpus, tmp_path):
    manifest, documents, _ = ingest(spark, corpus, tmp_path / "run", "corpus.category_set=industries",
                                    "corpus.hierarchy_policy=expand")
    assert manifest["details"]["hierarchy_closure"] == {"policy": "expand", "documents_not_closed": 1}
    assert sorted(documents.loc["2287", "labels"]) == ["I0", "I01001", "I01002"]


def test_regions_are_flat_and_listed(spark, corpus, tmp_path):
    manifest, documents, categories = ingest(spark, corpus, tmp_path / "run", "corpus.category_set=regions")
    assert manifest["details"]["hierarchy_closure"] == {"policy": "keep", "documents_not_closed": 0}
    assert {doc: sorted(labels) for doc, labels in documents["labels"].items()} == expected_labels(REGIONS_QRELS)
    # BRAZ is listed without a description and assigned to no document: a category all the same.
    assert sorted(categories.index) == ["BRAZ", "JAP", "UK", "USA"]
    assert categories["parent"].isna().all()
    assert categories.loc["BRAZ", "name"] == "BRAZ" and categories.loc["JAP", "name"] == "JAPAN"


def test_a_region_outside_the_list_is_rejected_with_its_line(spark, corpus, tmp_path):
    odd = tmp_path / "corpus"
    odd.mkdir()
    for path in corpus.iterdir():
        (odd / path.name).write_bytes(path.read_bytes())
    (odd / "rcv1-v2.regions.qrels").write_text(REGIONS_QRELS + "MARS 2288 1\n")
    manifest, documents, _ = ingest(spark, odd, tmp_path / "run", "corpus.category_set=regions",
                                    "corpus.on_error=reject")
    assert manifest["details"]["qrels_rejected"] == 1
    rejects = pd.read_parquet(tmp_path / "run" / "rejects")
    [reason] = rejects["reason"]
    assert reason.startswith("unknown category MARS (not in ") and lyrl2004.REGIONS_FILE in reason
    assert rejects["line"].tolist() == [12] and rejects["doc_id"].tolist() == ["2288"]
    assert sorted(documents.loc["2288", "labels"]) == ["JAP"]


def test_without_list_or_hierarchy_the_categories_are_the_codes_assigned(spark, corpus, tmp_path):
    bare = tmp_path / "corpus"
    bare.mkdir()
    for path in corpus.iterdir():
        if path.name not in (lyrl2004.REGIONS_FILE, lyrl2004.HIERARCHY_FILES["industries"]):
            (bare / path.name).write_bytes(path.read_bytes())
    for category_set, qrels in (("regions", REGIONS_QRELS), ("industries", INDUSTRIES_QRELS)):
        _, documents, categories = ingest(spark, bare, tmp_path / category_set, f"corpus.category_set={category_set}")
        assert sorted(categories.index) == sorted({line.split()[0] for line in qrels.splitlines()})
        assert categories["parent"].isna().all()
        assert {doc: sorted(labels) for doc, labels in documents["labels"].items()} == expected_labels(qrels)


def test_topics_stay_the_default_set(spark, corpus, tmp_path):
    manifest, documents, categories = ingest(spark, corpus, tmp_path / "run", f"corpus.hierarchy={HIERARCHY}")
    assert manifest["details"]["category_set"] == "topics"
    assert manifest["details"]["hierarchy_closure"]["policy"] == "expand"
    assert len(categories) == 103 and "CCAT" in documents.loc["2286", "labels"]


def test_defaults_and_refusals_of_the_settings():
    assert category_set_of(load_config(None, ["corpus.format=synthetic"]).corpus) == "topics"
    corpus = load_config(None, ["corpus.format=synthetic", "corpus.category_set=industries"]).corpus
    assert (category_set_of(corpus), hierarchy_policy_of(corpus)) == ("industries", "keep")
    refused = {
        "corpus.category_set=industries": "corpus.category_set = 'industries' with corpus.format = 'reuters21578'",
        "corpus.hierarchy_policy=expand": "corpus.hierarchy_policy = 'expand' with corpus.format = 'reuters21578'",
    }
    reuters = ["corpus.format=reuters21578", f"corpus.path={shared_data('reuters21578')}"]
    for override, message in refused.items():
        with pytest.raises(ConfigError, match=message):
            load_config(None, [*reuters, override])
    with pytest.raises(ConfigError, match="allowed one of 'topics', 'industries', 'regions'"):
        load_config(None, ["corpus.format=synthetic", "corpus.category_set=R90"])
    for overrides in (reuters, ["corpus.format=synthetic", "corpus.category_set=regions"]):
        with pytest.raises(ConfigError, match="its categories have no hierarchy to close predictions under"):
            load_config(None, [*overrides, "evaluate.close_predictions=true"])
    assert load_config(None, ["corpus.format=synthetic", "evaluate.close_predictions=true"]).evaluate.close_predictions
    with pytest.raises(ConfigError, match="regions have no hierarchy"):
        load_config(None, ["corpus.format=synthetic", "corpus.category_set=regions", f"corpus.hierarchy={HIERARCHY}"])


def test_category_list_parser_names_the_line():
    assert lyrl2004.parse_category_list(["USA  UNITED STATES", "", "  UK"], "r") == {"USA": "UNITED STATES",
                                                                                     "UK": "UK"}
    with pytest.raises(InputError, match=r"^r:3: duplicate code USA \(first listed at line 1\)$"):
        lyrl2004.parse_category_list(["USA", "UK", "USA x"], "r")
    with pytest.raises(InputError, match="r: no category codes"):
        lyrl2004.parse_category_list(["", " "], "r")
    with pytest.raises(InputError, match="r:1: not valid UTF-8"):
        lyrl2004.parse_category_list([b"\xff"], "r")
