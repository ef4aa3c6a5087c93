"""How a Python stage fastest emits Spark ML vectors (``VectorUDT``): the choice :mod:`sparktc.ml.vectors` made.

    .venv/bin/python -m benchmarks.ml_vectors --run RUN_DIR [--copies 10] [--repeats 2]

RUN_DIR is a sparktc run (``jobs/pipeline.py``); its ``vectors`` (indices, values) are repeated ``--copies`` times
and cached, then turned into a ``VectorUDT`` column each way, forced by a ``noop`` write, ``--repeats`` times:
``mapInArrow`` declaring the ``VectorUDT`` and returning its struct (:func:`sparktc.ml.vectors.appended`, what the
stages do); a scalar Arrow UDF (``arrow_udf``) returning the struct; a Python UDF making a ``SparseVector`` per row
(plain, Arrow-optimized ``useArrow=True``, and a pandas UDF). Each line gives the wall time and the CPU-seconds of
the whole process tree (driver, JVM, Python workers; :func:`benchmarks.harness_measure.cpu_ticks_between`).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import pandas as pd
import pyarrow as pa
from pyspark.ml.linalg import SparseVector, VectorUDT
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.functions import arrow_udf, pandas_udf
from pyspark.sql.types import StructField

from benchmarks.harness_measure import CLOCK_TICKS, cpu_ticks_between, descendants, read_processes
from sparktc.ml.vectors import appended, vector_array
from sparktc.runtime.session import build_session


def tree() -> dict:
    """This process's tree, pid -> stat."""
    table = read_processes()
    return {pid: table[pid] for pid in descendants(os.getpid(), table)}


def timed(name: str, frame: DataFrame, repeats: int) -> None:
    """Write ``frame`` to the noop sink ``repeats`` times; print each time's wall and CPU-seconds."""
    for attempt in range(repeats):
        before, start = tree(), time.perf_counter()
        frame.write.format("noop").mode("overwrite").save()
        wall, after = time.perf_counter() - start, tree()
        print(f"{name:<36} run {attempt + 1}: {wall:6.2f} s wall, {cpu_ticks_between(before, after) / CLOCK_TICKS:6.2f}"
              " CPU-s", flush=True)


def main() -> None:
    """Time every way (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a sparktc run's output directory")
    parser.add_argument("--copies", type=int, default=10, help="times the run's vectors are repeated")
    parser.add_argument("--repeats", type=int, default=2, help="timed writes per way")
    options = parser.parse_args()
    spark = build_session(app_name="ml-vectors", master="local[2]", log_level="ERROR",
                          conf={"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"})
    size = spark.read.parquet(f"{options.run}/vocabulary").count()
    vectors = (spark.read.parquet(f"{options.run}/vectors").select("doc_id", "indices", "values")
               .crossJoin(spark.range(options.copies).withColumnRenamed("id", "copy")).repartition(2).cache())
    print(f"{vectors.count():,} vectors of {size:,} terms", flush=True)

    @arrow_udf(VectorUDT())
    def struct_udf(indices: pa.Array, values: pa.Array) -> pa.Array:
        return vector_array(indices, values, size)

    @pandas_udf(VectorUDT())
    def pandas_vectors(indices: pd.Series, values: pd.Series) -> pd.Series:
        return pd.Series([SparseVector(size, i, v) for i, v in zip(indices, values)])

    per_row: Callable = lambda i, v: SparseVector(size, i, v)  # noqa: E731
    ways = {
        "mapInArrow, VectorUDT declared": appended(vectors, [StructField("features", VectorUDT())], lambda batch: [
            vector_array(batch.column("indices"), batch.column("values"), size)]),
        "arrow_udf returning the struct": vectors.withColumn("features", struct_udf("indices", "values")),
        "Python UDF, SparseVector per row": vectors.withColumn(
            "features", F.udf(per_row, VectorUDT())("indices", "values")),
        "Arrow-optimized Python UDF": vectors.withColumn(
            "features", F.udf(per_row, VectorUDT(), useArrow=True)("indices", "values")),
        "pandas UDF": vectors.withColumn("features", pandas_vectors("indices", "values")),
    }
    for name, frame in ways.items():
        timed(name, frame, options.repeats)
    spark.stop()


if __name__ == "__main__":
    main()
