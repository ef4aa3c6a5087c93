"""A clean LYRL2004 corpus takes ingest's short path (its counts from the parsing tasks, its documents
copied file by file); its outputs and report must be exactly those of the general path."""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from conftest import lyrl2004_corpus, shared_data

from sparktc.runtime.config import load_config
from sparktc.runtime.runner import Tables
from sparktc.stages import ingest as ingest_stage

HIERARCHY = shared_data("rcv1", "rcv1.topics.hier.orig")


def test_the_short_path_writes_what_the_general_path_writes(spark, small_corpus, tmp_path, monkeypatch):
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={small_corpus}", "tokenize.stemmer=none"])
    taken = []
    real_write_clean = ingest_stage._write_clean
    monkeypatch.setattr(ingest_stage, "_write_clean", lambda *args: taken.append(1) or real_write_clean(*args))
    short = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "short")))
    assert taken == [1]
    monkeypatch.setattr(ingest_stage, "_clean", lambda *args: None)
    general = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "general")))
    assert taken == [1]

    assert (short.rows_in, short.rows_out, short.set_aside) == (general.rows_in, general.rows_out, general.set_aside)
    assert list(short.details.items()) == list(general.details.items())
    for table, key in (("documents", "doc_id"), ("categories", "category"), ("rejects", "doc_id")):
        assert_df_equality(spark.read.parquet(str(tmp_path / "short" / table)).orderBy(key),
                           spark.read.parquet(str(tmp_path / "general" / table)).orderBy(key), ignore_nullable=True)


def test_a_clean_corpus_is_shown_free_of_repeated_ids_without_a_spark_job(spark, small_corpus, tmp_path, monkeypatch):
    # Every document has labels and the labelled ids have the qrels' id digest: no grouping of the ids.
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={small_corpus}", "tokenize.stemmer=none"])
    monkeypatch.setattr(ingest_stage.DataFrame, "groupBy", lambda *args: pytest.fail("the ids were grouped"))
    report = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "short")))
    assert report.rows_out == report.rows_in and not report.set_aside


def test_a_repeated_id_balanced_by_a_missing_one_takes_the_general_path(spark, tmp_path):
    # Document 2286 twice and 2287 never: as many labelled documents as qrels documents, but not the same ones.
    corpus = lyrl2004_corpus(tmp_path / "corpus")
    train = corpus / "lyrl2004_tokens_train.dat"
    train.write_text(train.read_text().replace(".I 2287\n", ".I 2286\n", 1))
    config = load_config(None, ["corpus.format=lyrl2004", f"corpus.path={corpus}", f"corpus.hierarchy={HIERARCHY}",
                                "corpus.test_parts=[0]", "corpus.on_error=reject"])
    report = ingest_stage.ingest(spark, config, Tables(str(tmp_path), str(tmp_path / "staged")))
    rejects = spark.read.parquet(str(tmp_path / "staged" / "rejects")).toPandas()
    assert "2286" in set(rejects["doc_id"]) and report.set_aside.get("rejected")
    assert any(reason.startswith("duplicate") for reason in rejects["reason"])
