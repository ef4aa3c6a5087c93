"""Titles counted apart and word bigrams (tokenize.title_weight, title_terms, ngrams) through ingest, tokenize and
weight on a small Reuters-21578 corpus: the tokens and vocabulary against terms worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

from sparktc.apps.pipeline import run as run_pipeline
from sparktc.experiment.config import load_config


def story(newid: str, split: str, title: str, body: str) -> str:
    """One <REUTERS> element labelled earn, with a TITLE and a BODY."""
    return (f'<REUTERS TOPICS="YES" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" OLDID="{newid}" NEWID="{newid}">\n'
            f"<TOPICS><D>earn</D></TOPICS>\n<TEXT>&#2;\n<TITLE>{title}</TITLE><BODY>{body}</BODY></TEXT>\n</REUTERS>\n")


def test_titles_and_bigrams_become_terms(spark, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "reut2-000.sgm").write_text(
        '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + story("1", "TRAIN", "Profit rose", "The profit of banks rose.")
        + story("2", "TEST", "Loss", "Banks lost."))
    stop_list = tmp_path / "stop.txt"
    stop_list.write_text("the\nof\n")
    config = load_config(None, ["corpus.format=reuters21578", f"corpus.path={corpus}",
                                f"tokenize.stop_list={stop_list}", "tokenize.ngrams=2", "tokenize.title_terms=true",
                                "tokenize.title_weight=2"])
    output = str(tmp_path / "run")
    run_pipeline(spark, config, output, "ingest", "tokenize", "weight")
    tokens = {row.doc_id: row.tokens for row in spark.read.parquet(f"{output}/tokens").collect()}
    # Text "Profit rose\nThe profit of banks rose." -> profit rose profit bank rose, its four bigrams; then the
    # title's "profit rose" and its bigram, prefixed, twice.
    title_terms = "title:profit title:rose title:profit_rose"
    assert tokens == {
        "1": f"profit rose profit bank rose profit_rose rose_profit profit_bank bank_rose {title_terms} {title_terms}",
        "2": "loss bank lost loss_bank bank_lost title:loss title:loss",
    }
    vocabulary = {row.term: row.df for row in spark.read.parquet(f"{output}/vocabulary").collect()}
    assert vocabulary == dict.fromkeys(["profit", "rose", "bank", "profit_rose", "rose_profit", "profit_bank",
                                        "bank_rose", "title:profit", "title:rose", "title:profit_rose"], 1)
