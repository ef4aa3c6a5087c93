"""Weight: ``tokens`` -> ``vocabulary`` (term_id, term, df, idf) and ``vectors`` (ltc, partitioned by split).

df and N are counted in Spark over the training documents; the vocabulary (training terms, sorted,
term_id = position) is broadcast to the executors, which weight each Arrow batch with
:func:`sparktc.weighting.ltc_rows`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from sparktc.config import Config
from sparktc.faults import inject
from sparktc.records import TRAIN, split_tokens
from sparktc.stages.report import StageReport, stage
from sparktc.stages.runner import Stage, Tables
from sparktc.stages.tokenize import token_array
from sparktc.weighting import idf, ltc_rows

VECTORS_DDL = "doc_id string, split string, labels array<string>, indices array<int>, values array<float>"


def ltc_vectors(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray,
                idf_values: np.ndarray) -> tuple[pa.ListArray, pa.ListArray]:
    """Stored token strings to ltc vectors over the vocabulary ``terms`` (in term_id order): the
    ``indices`` and ``values`` list columns. Shared with the classification of new documents."""
    token_lists = split_tokens(tokens)
    lengths = pc.list_value_length(token_lists).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
    term_ids = pc.index_in(pc.list_flatten(token_lists), options=pc.SetLookupOptions(value_set=terms)).fill_null(-1)
    offsets, indices, values = ltc_rows(rows, term_ids.to_numpy(zero_copy_only=False), len(token_lists), idf_values)
    offsets32 = pa.array(offsets.astype(np.int32))
    return pa.ListArray.from_arrays(offsets32, pa.array(indices)), pa.ListArray.from_arrays(offsets32, pa.array(values))


def weight(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    with stage(spark, "weight") as report:
        tokens = spark.read.parquet(tables.input("tokens"))
        train = tokens.filter(F.col("split") == TRAIN)
        n_train = train.count()
        if n_train == 0:
            raise ValueError("no training documents: ltc needs N and df from the training split")
        df = train.select(F.explode(F.array_distinct(token_array(F.col("tokens")))).alias("term")).groupBy("term").agg(F.count("*").alias("df"))
        vocabulary = (
            df.withColumn("term_id", (F.row_number().over(Window.orderBy("term")) - 1).cast("int"))
            .withColumn("idf", F.log(F.lit(float(n_train)) / F.col("df")))
            .select("term_id", "term", "df", "idf")
        )
        vocabulary.coalesce(1).write.mode("overwrite").parquet(tables.output("vocabulary"))
        vocabulary = spark.read.parquet(tables.output("vocabulary")).orderBy("term_id").toPandas()
        terms = pa.array(vocabulary["term"].tolist(), type=pa.string())
        idf_values = idf(vocabulary["df"].to_numpy(), n_train)
        shared = spark.sparkContext.broadcast((terms, idf_values))

        def vectorize(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            vocabulary_terms, idf_array = shared.value
            for batch in batches:
                inject("weight")
                indices, values = ltc_vectors(batch.column("tokens"), vocabulary_terms, idf_array)
                yield pa.RecordBatch.from_arrays(
                    [batch.column("doc_id"), batch.column("split"), batch.column("labels"), indices, values],
                    names=["doc_id", "split", "labels", "indices", "values"],
                )

        vectors = tokens.mapInArrow(vectorize, VECTORS_DDL)
        vectors.write.mode("overwrite").partitionBy("split").parquet(tables.output("vectors"))
        shared.unpersist()
        written = spark.read.parquet(tables.output("vectors"))
        report.rows_in = tokens.count()
        report.rows_out = written.count()
        report.details = {
            "vocabulary": len(vocabulary),
            "train_documents": n_train,
            "documents_without_terms": written.filter(F.size("indices") == 0).count(),
        }
    return report


STAGE = Stage("weight", weight, reads=("tokens",), writes=("vocabulary", "vectors"), sections=("weight",))
