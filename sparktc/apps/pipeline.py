"""The stages in order, which stage writes which output, and the plans the jobs run.

``ingest -> tokenize -> weight -> rank -> train -> evaluate``, preceded by ``synthesize`` for the
embedded default (``corpus.format = "synthetic"``), which writes a LYRL2004-format corpus into
``OUTPUT/corpus`` and reads it from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from sparktc import packaged
from sparktc.apps.recording import execute
from sparktc.corpora.registry import FORMATS
from sparktc.experiment.config import Config, ConfigError
from sparktc.runtime import storage
from sparktc.runtime.outputs import check_output, claim
from sparktc.runtime.runner import Stage
from sparktc.stages import evaluate, ingest, rank, tokenize, train, weight
from sparktc.stages.synthesize import synthesize_stage
from sparktc.tracking.record import RunRecord

PIPELINE: tuple[Stage, ...] = (ingest.STAGE, tokenize.STAGE, weight.STAGE, rank.STAGE, train.STAGE, evaluate.STAGE)
#: The stage that writes each output, so a stage finds the manifest of what it reads.
OWNERS: dict[str, Stage] = {table: stage for stage in PIPELINE for table in stage.writes}
BY_NAME: dict[str, Stage] = {stage.name: stage for stage in PIPELINE}
SYNTHESIZED_CORPUS = "corpus"


def check_stages(names: Sequence[str]) -> None:
    """Refuse a name in ``names`` that is no stage of the pipeline."""
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        raise ConfigError(f"unknown stage {', '.join(unknown)}; stages: {', '.join(BY_NAME)}")


def plan(config: Config, output: str, names: Sequence[str] = (), documents: DataFrame | None = None
         ) -> list[tuple[Stage, Config]]:
    """The stages ``names`` (default: all, with synthesize first for a synthetic corpus) and their configurations;
    ingest reads ``documents`` when given (a table corpus as a DataFrame).
    """
    check_stages(names)
    stages = [BY_NAME[name] for name in names] if names else list(PIPELINE)
    if documents is not None:
        stages = [ingest.given_documents(documents) if stage is ingest.STAGE else stage for stage in stages]
    written_as = FORMATS[config.corpus.format].written_as
    if not written_as:
        return [(stage, config) for stage in stages]
    synthesized = config.with_corpus(format=written_as, path=storage.join(output, SYNTHESIZED_CORPUS), hierarchy="")
    head = [] if names else [(synthesize_stage(SYNTHESIZED_CORPUS), config)]
    return head + [(stage, synthesized) for stage in stages]


def run_inputs(config: Config) -> dict[str, str]:
    """The paths outside the run that it reads, by the setting that names them: ``--output`` may not touch them (a
    packaged stop list is in the package, not a path).
    """
    stop_list = "" if packaged.stop_list(config.tokenize.stop_list) else config.tokenize.stop_list
    return {"corpus.path": config.corpus.path, "corpus.test_ids": config.corpus.test_ids,
            "corpus.hierarchy": config.corpus.hierarchy,
            "corpus.topic_names": config.corpus.topic_names, "tokenize.stop_list": stop_list,
            "synthesize.hierarchy": config.synthesize.hierarchy, "history.path": config.history.path}


def run_recorded(spark: SparkSession, config: Config, output: str, names: Sequence[str] = (),
                 force: bool = False, option: str = "", documents: DataFrame | None = None
                 ) -> tuple[list[dict[str, Any]], RunRecord]:
    """Run the stages ``names`` (default: all) into ``output``, skipping those whose manifests are current; the
    output is checked and held as by the jobs (:mod:`sparktc.runtime.outputs`; ``option`` names the argument that
    gave it, ``--output`` by default) and the run recorded (:mod:`sparktc.apps.recording`). The stages' manifests
    and the run's record. ``documents``: a table corpus given as a DataFrame, which ingest reads on every run.
    """
    output = check_output(output, run_inputs(config), option=option)
    stages = plan(config, output, names, documents)
    owners = {table: next((each for each, _ in stages if each.name == stage.name), stage)
              for table, stage in OWNERS.items()}
    with claim(output, "run", spark, option=option) as held:
        return execute(spark, config, stages, held, owners, force)


def run(spark: SparkSession, config: Config, output: str, *names: str, force: bool = False) -> list[dict[str, Any]]:
    """:func:`run_recorded`'s manifests."""
    return run_recorded(spark, config, output, names, force)[0]
