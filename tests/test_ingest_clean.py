"""A clean LYRL2004 corpus takes ingest's short path (its counts from the parsing tasks, its documents
copied file by file); its outputs and report must be exactly those of the general path."""

from __future__ import annotations

from chispa import assert_df_equality

from sparktc.runtime.config import load_config
from sparktc.runtime.runner import Tables
from sparktc.stages import ingest as ingest_stage


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
