"""Command line shared by every job: ``--config FILE``, repeatable ``--set section.key=value``, ``--output DIR``, ``--force``.

The configuration is read and checked before Spark starts, so a wrong key or value costs no
cluster time; the planned stages then run in order in one session (:mod:`sparktc.stages.runner`):
each prints one line with its counts and time, publishes its outputs whole and writes its
manifest to ``OUTPUT/manifests/``, or is skipped when its manifest is current.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from pyspark.sql import SparkSession

from sparktc.config import Config, ConfigError, check_output, is_uri, load_config
from sparktc.stages.pipeline import OWNERS
from sparktc.stages.resources import ResourceLimitError
from sparktc.stages.runner import Stage, run_stages

Plan = Callable[[Config, str], Sequence[tuple[Stage, Config]]]


def parse_arguments(description: str, argv: Sequence[str] | None = None) -> tuple[Config, str, bool]:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", help="TOML configuration file (see conf/)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting; repeatable (e.g. --set train.C=0.5)")
    parser.add_argument("--output", required=True, help="directory for the stage outputs (local path or Hadoop URI)")
    parser.add_argument("--force", action="store_true",
                        help="recompute every stage, even those whose outputs and manifests are current")
    arguments = parser.parse_args(argv)
    config = load_config(arguments.config, arguments.set)
    return config, check_output(config, arguments.output), arguments.force


def session_conf(config: Config) -> dict[str, str]:
    """The session settings of ``[spark]``: ``conf`` as given, and the event log when ``event_log`` is set."""
    conf = {key: str(value) for key, value in config.spark.conf.items()}
    if config.spark.event_log:
        conf |= {"spark.eventLog.enabled": "true", "spark.eventLog.dir": config.spark.event_log}
    return conf


def session(config: Config) -> SparkSession:
    from sparktc.session import build_session

    if config.spark.event_log and not is_uri(config.spark.event_log):
        os.makedirs(config.spark.event_log, exist_ok=True)  # Spark refuses to start without it
    return build_session(config.spark.app_name, session_conf(config), config.spark.log_level)


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
        config, output, force = parse_arguments(description, argv)
        planned = plan(config, output)
    except ConfigError as error:
        return fail(error)
    spark = session(config)
    try:
        run_stages(spark, planned, output, OWNERS, force)
    except (ValueError, FileNotFoundError, ResourceLimitError) as error:
        return fail(error)
    finally:
        spark.stop()
    return 0
