"""Spark session construction shared by jobs and tests."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession


def build_session(
    app_name: str,
    conf: Mapping[str, str],
    log_level: str = "WARN",
    master: str | None = None,
) -> SparkSession:
    """Get or create the session; ``master`` is left to spark-submit unless given (tests)."""
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    return session
