"""Spark session construction shared by jobs and tests."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession

from sparktc.runtime.parts import COMPRESSION

PARQUET_CODEC = "spark.sql.parquet.compression.codec"


def build_session(
    app_name: str,
    conf: Mapping[str, str],
    log_level: str = "WARN",
    master: str | None = None,
) -> SparkSession:
    """Get or create the session; ``master`` is left to spark-submit unless given (tests). Spark writes Parquet
    with the codec of the tables the tasks write (:data:`sparktc.runtime.parts.COMPRESSION`) unless told otherwise.
    """
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if PARQUET_CODEC not in conf and not session.sparkContext.getConf().contains(PARQUET_CODEC):
        session.conf.set(PARQUET_CODEC, COMPRESSION)  # the tables Spark writes, like those the tasks write
    session.sparkContext.setLogLevel(log_level)
    return session
