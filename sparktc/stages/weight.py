"""Weight: ``tokens`` -> ``vocabulary`` (term_id, term, df, idf) and ``vectors`` (ltc and raw tf, by split).

df and N are counted in Spark over the training documents; the vocabulary (training terms, sorted,
term_id = position) is broadcast to the executors, which weight the ``tokens`` files one task per
file (:mod:`sparktc.runtime.parts`: pyarrow reads and writes them, no Spark rows), batch by batch
with :func:`sparktc.features.weighting.ltc_rows`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from sparktc.corpora.records import TEST, TRAIN, split_tokens
from sparktc.errors import InputError
from sparktc.features.weighting import idf, ltc_rows
from sparktc.runtime.config import Config
from sparktc.runtime.faults import inject
from sparktc.runtime.parts import PartWriter, map_parts, parquet_files, read_batches
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage
from sparktc.schemas import VECTORS_SCHEMA
from sparktc.stages.tokenize import token_array


def ltc_vectors(tokens: pa.Array | pa.ChunkedArray, terms: pa.StringArray,
                idf_values: np.ndarray) -> tuple[pa.ListArray, pa.ListArray, pa.ListArray]:
    """Stored token strings to ltc vectors over the vocabulary ``terms`` (in term_id order): the
    ``indices``, ``values`` and ``counts`` (raw tf) list columns. Shared with the classification of new
    documents."""
    token_lists = split_tokens(tokens)
    lengths = pc.list_value_length(token_lists).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
    term_ids = pc.index_in(pc.list_flatten(token_lists), options=pc.SetLookupOptions(value_set=terms)).fill_null(-1)
    offsets, *columns = ltc_rows(rows, term_ids.to_numpy(zero_copy_only=False), len(token_lists), idf_values)
    offsets32 = pa.array(offsets.astype(np.int32))
    return tuple(pa.ListArray.from_arrays(offsets32, pa.array(column)) for column in columns)


#: The ``vectors`` files (:data:`~sparktc.schemas.VECTORS_SCHEMA`): one directory per split
#: (``split=train``, ``split=test``), as Spark's partitioned tables have them, so a reader of one split
#: never opens the other's files.
SPLITS = (TRAIN, TEST)
BATCH_ROWS = 8192  # documents weighted at a time: big enough for numpy, small enough for the cache


def vectorize_file(index: int, path: str, output: str, terms: pa.StringArray, idf_values: np.ndarray) -> dict:
    """ltc vectors of one ``tokens`` file into ``output/split=<split>/part-<index>-*``; the counts of rows
    read, written per split and without a vocabulary term. A split other than train or test is a bug
    upstream (ingest writes only those) and stops the task."""
    writers = {split: PartWriter(VECTORS_SCHEMA, f"{output}/split={split}", index) for split in SPLITS}
    read, without_terms = 0, 0
    inject("weight")  # once per task, whether or not its file has rows
    for batch in read_batches(path, ["doc_id", "split", "labels", "tokens"], BATCH_ROWS):
        read += len(batch)
        other = batch.filter(pc.invert(pc.is_in(batch.column("split"), pa.array(SPLITS))))
        if len(other):
            raise ValueError(f"{path}: document {other.column('doc_id')[0]} has split {other.column('split')[0]}, "
                             f"not {' or '.join(SPLITS)}; please report this as a bug")
        indices, values, counts = ltc_vectors(batch.column("tokens"), terms, idf_values)
        without_terms += int(pc.sum(pc.equal(pc.list_value_length(indices), 0)).as_py() or 0)
        vectors = pa.RecordBatch.from_arrays([batch.column("doc_id"), batch.column("labels"), indices, values, counts],
                                             schema=VECTORS_SCHEMA)
        for split, writer in writers.items():
            writer.write(vectors.filter(pc.equal(batch.column("split"), split)))
    for writer in writers.values():
        writer.close()
    return {"read": read, "written": {split: writer.rows for split, writer in writers.items()},
            "without_terms": without_terms}


def weight(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
    with stage(spark, "weight") as report:
        tokens = spark.read.parquet(tables.input("tokens"))
        train = tokens.filter(F.col("split") == TRAIN)
        n_train = train.count()
        if n_train == 0:
            raise InputError("no training documents: ltc needs N and df from the training split")
        df = (
            train.select(F.explode(F.array_distinct(token_array(F.col("tokens")))).alias("term"))
            .groupBy("term")
            .agg(F.count("*").alias("df"))
        )
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
        output = tables.output("vectors")

        def vectorize(index: int, path: str) -> dict:
            vocabulary_terms, idf_array = shared.value
            return vectorize_file(index, path, output, vocabulary_terms, idf_array)

        counts = map_parts(spark, parquet_files(tables.input("tokens")), vectorize, [output])
        shared.unpersist()
        report.rows_in = sum(c["read"] for c in counts)
        report.rows_out = sum(sum(c["written"].values()) for c in counts)
        report.details = {
            "vocabulary": len(vocabulary),
            "train_documents": n_train,
            "documents_without_terms": sum(c["without_terms"] for c in counts),
        }
    return report


STAGE = Stage("weight", weight, reads=("tokens",), writes=("vocabulary", "vectors"), sections=("weight",))
