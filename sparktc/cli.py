"""Command line shared by every job: ``--config FILE``, repeatable ``--set section.key=value``, ``--output DIR``.

The configuration is read and checked before Spark starts, so a wrong key or value costs no
cluster time; the stages then run in order in one session, each printing one line with its
counts and time, and the run's reports are written to ``OUTPUT/reports/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Sequence

from pyspark.sql import SparkSession

from sparktc import __version__, storage
from sparktc.config import Config, ConfigError, check_output, load_config
from sparktc.stages.report import StageReport

Stage = Callable[[SparkSession, Config, str], StageReport]
Plan = Callable[[Config, str], Sequence[tuple[str, Callable[[SparkSession], StageReport]]]]


def parse_arguments(description: str, argv: Sequence[str] | None = None) -> tuple[Config, str]:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", help="TOML configuration file (see conf/)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting; repeatable (e.g. --set train.C=0.5)")
    parser.add_argument("--output", required=True, help="directory for the stage outputs (local path or Hadoop URI)")
    arguments = parser.parse_args(argv)
    config = load_config(arguments.config, arguments.set)
    return config, check_output(config, arguments.output)


def session(config: Config) -> SparkSession:
    from sparktc.session import build_session

    return build_session(config.spark.app_name, {k: str(v) for k, v in config.spark.conf.items()}, config.spark.log_level)


def plan_stages(*stages: tuple[str, Stage]) -> Plan:
    """The plan of a job that runs ``stages`` with the configuration as given."""
    return lambda config, output: [(name, _bind(run, config, output)) for name, run in stages]


def _bind(run: Stage, config: Config, output: str) -> Callable[[SparkSession], StageReport]:
    return lambda spark: run(spark, config, output)


def fail(error: Exception) -> int:
    """Tell the user what went wrong, as every job does; the exit code: 2 for bad configuration, 1 for bad input."""
    if isinstance(error, ConfigError):
        print(f"sparktc: configuration error: {error}", file=sys.stderr)
        return 2
    print(f"sparktc: error: {error}", file=sys.stderr)
    return 1


def main(description: str, plan: Plan, argv: Sequence[str] | None = None) -> int:
    """Parse, check, run the planned stages in one session; exit code 2 for bad configuration, 1 for bad input."""
    try:
        config, output = parse_arguments(description, argv)
        planned = plan(config, output)
    except ConfigError as error:
        return fail(error)
    spark = session(config)
    try:
        for name, run in planned:
            report = run(spark)
            record = {"sparktc_version": __version__, **report.as_dict()}
            storage.write_text(spark, storage.join(output, "reports", f"{name}.json"), json.dumps(record, indent=2) + "\n")
    except (ValueError, FileNotFoundError) as error:
        return fail(error)
    finally:
        spark.stop()
    return 0


def with_corpus(config: Config, **changes: object) -> Config:
    return dataclasses.replace(config, corpus=dataclasses.replace(config.corpus, **changes))
