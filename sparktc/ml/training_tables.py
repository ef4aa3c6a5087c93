"""The tables :class:`~sparktc.ml.classifier.OneVsRestClassifier`'s fit writes for the rank and train stages, from
a DataFrame of documents (doc_id, labels, features as Spark ML vectors): ``vectors`` as the weight stage writes them,
the ``vocabulary`` of the vectors' positions and the ``categories`` of the labels seen, in a work directory of the
fit's own; and what refuses a document they cannot be written from, naming the Param of its column.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.records import TRAIN
from sparktc.errors import InputError
from sparktc.filesystem import arrow_filesystem, local_path
from sparktc.ml.vectors import vector_lists, vector_sizes
from sparktc.runtime import storage
from sparktc.runtime.parts import map_parts, parquet_files, read_batches, write_parts
from sparktc.runtime.runner import Tables
from sparktc.schemas import CATEGORIES_SCHEMA, VECTORS_SCHEMA, VOCABULARY_SCHEMA

__all__ = ["WRITTEN_SCHEMA", "make_work_dir", "remove_work_dir", "vector_entries", "write_tables"]

#: The fit's ``vectors``: the weight stage's columns and each vector's size, which the fit checks.
WRITTEN_SCHEMA = pa.schema([*VECTORS_SCHEMA, ("size", pa.int32())])
_WORK_PREFIX = "sparktc-ovr-"


def vector_entries(vectors: pa.StructArray) -> tuple[pa.ListArray, pa.ListArray, np.ndarray]:
    """A batch of Spark ML vectors as the ``vectors`` table holds them (:func:`~sparktc.ml.vectors.vector_lists`,
    the values float32 as the weight stage stores them) and each vector's size (-1 for a null vector).
    """
    indices, values = vector_lists(vectors)
    return indices, values.cast(WRITTEN_SCHEMA.field("values").type), vector_sizes(vectors)


def make_work_dir(parent: str) -> str:
    """A new directory under ``parent`` (made when missing), the fit's own: nothing in it is anyone else's."""
    local = local_path(parent)
    if local is not None:
        os.makedirs(local, exist_ok=True)
        return tempfile.mkdtemp(prefix=_WORK_PREFIX, dir=local)
    return storage.join(parent, f"{_WORK_PREFIX}{uuid.uuid4().hex}")  # the stages' writes make it


def write_tables(spark: SparkSession, documents: DataFrame, tables: Tables) -> None:
    """``documents`` (doc_id, labels, features) as the tables the rank and train stages read: ``vectors`` (their
    training split), ``vocabulary`` (each position of the vectors a term, named by its index, with its training
    document frequency) and ``categories`` (the labels seen, with their training positives); InputError naming the
    column and a document for what they cannot train on.
    """

    def convert(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            indices, values, sizes = vector_entries(batch.column("features"))
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), batch.column("labels"), indices, values,
                 pa.nulls(len(batch), pa.list_(pa.int32())), pa.array(sizes, pa.int32())], schema=WRITTEN_SCHEMA)

    train_path = storage.join(tables.input("vectors"), f"split={TRAIN}")
    documents.mapInArrow(convert, from_arrow_schema(WRITTEN_SCHEMA)).write.parquet(train_path)
    files = parquet_files(train_path)
    found = map_parts(spark, files, lambda index, path: _file_facts(path), errors=(InputError,))
    rows = sum(fact["rows"] for fact in found)
    sizes = {size for fact in found for size in fact["sizes"]}
    if not rows:
        raise InputError("the DataFrame given to fit has no rows; give it the training documents")
    if len(sizes) > 1:
        raise InputError(f"column of Param featuresCol holds vectors of sizes {', '.join(map(str, sorted(sizes)))}; "
                         "give every document a vector of the same size (the vocabulary's)")
    positives = sum((Counter(fact["positives"]) for fact in found), Counter())
    if not positives:
        raise InputError("no training document has a label (column of Param labelsCol): nothing to train")
    repeated = spark.read.parquet(train_path).groupBy("doc_id").count().filter(F.col("count") > 1).limit(1).collect()
    if repeated:
        raise InputError(f"doc id {repeated[0]['doc_id']!r} is given {repeated[0]['count']} times (column of Param "
                         "idCol); give every document a unique id")
    n_terms = sizes.pop()
    df = np.zeros(n_terms, dtype=np.int64)
    for fact in found:
        df[:len(fact["df"])] += fact["df"]
    vocabulary = pa.table({"term_id": pa.array(np.arange(n_terms), pa.int32()),
                           "term": pa.array([str(term) for term in range(n_terms)]), "df": df, "frequency": df,
                           "idf": np.ones(n_terms)}, schema=VOCABULARY_SCHEMA)
    write_parts(vocabulary.to_batches(), VOCABULARY_SCHEMA, tables.output("vocabulary"), 0)
    codes = sorted(positives)
    categories = pa.table({"category": codes, "name": codes, "parent": pa.nulls(len(codes), pa.string()),
                           "train_positives": [positives[code] for code in codes],
                           "test_positives": np.zeros(len(codes), dtype=np.int64)}, schema=CATEGORIES_SCHEMA)
    write_parts(categories.to_batches(), CATEGORIES_SCHEMA, tables.output("categories"), 0)


def _file_facts(path: str) -> dict[str, Any]:
    """One written ``vectors`` file's rows, vector sizes, labels' positives and terms' document frequencies;
    InputError naming the first document that cannot be trained on and why.
    """
    rows, sizes, positives, df = 0, set(), Counter(), np.zeros(0, dtype=np.int64)
    for batch in read_batches(path, ["doc_id", "labels", "indices", "values", "size"]):
        doc_ids = batch.column("doc_id")
        problems = [
            (pc.is_null(doc_ids).to_numpy(zero_copy_only=False), "has no id (column of Param idCol is null)"),
            (pc.is_null(batch.column("labels")).to_numpy(zero_copy_only=False),
             "has null labels (column of Param labelsCol); give an empty list for a document without a category"),
            (batch.column("size").to_numpy(zero_copy_only=False) < 0,
             "has a null vector (column of Param featuresCol)"),
        ]
        values = pc.list_flatten(batch.column("values")).to_numpy(zero_copy_only=False)
        if not np.all(np.isfinite(values)):
            finite = pc.list_value_length(batch.column("values")).fill_null(0).to_numpy(zero_copy_only=False)
            bad = np.repeat(np.arange(len(batch)), finite)[~np.isfinite(values)]
            flags = np.zeros(len(batch), dtype=bool)
            flags[bad] = True
            problems.append((flags, "has a value NaN or infinite, or beyond a float's range (column of Param "
                                    "featuresCol); give finite values"))
        for flags, problem in problems:
            if flags.any():
                row = int(np.flatnonzero(flags)[0])
                raise InputError(f"the training document {doc_ids[row].as_py()!r} (row {row + 1} of a batch of "
                                 f"{path}) {problem}")
        labels = pc.list_flatten(batch.column("labels"))
        if labels.null_count:
            raise InputError("a training document's labels hold a null (column of Param labelsCol); give category "
                             "codes only")
        lengths = pc.list_value_length(batch.column("labels")).fill_null(0).to_numpy(zero_copy_only=False)
        pairs = pa.table({"row": np.repeat(np.arange(len(batch)), lengths), "label": labels})
        distinct = pairs.group_by(["row", "label"]).aggregate([])  # a label listed twice is one positive
        positives.update({found["values"]: found["counts"] for found in pc.value_counts(distinct["label"]).to_pylist()})
        sizes.update(int(size) for size in np.unique(batch.column("size").to_numpy(zero_copy_only=False)))
        terms = pc.list_flatten(batch.column("indices")).to_numpy(zero_copy_only=False)
        counted = np.bincount(terms, minlength=len(df))
        counted[:len(df)] += df
        rows, df = rows + len(batch), counted
    return {"rows": rows, "sizes": sorted(sizes), "positives": dict(positives), "df": df}


def remove_work_dir(directory: str) -> None:
    """Remove a fit's work directory (local; on another file system, through pyarrow), ignoring what is gone."""
    local = local_path(directory)
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        return
    try:  # no session is needed (none may be left at exit)
        filesystem, root = arrow_filesystem(directory)
        filesystem.delete_dir(root)
    except OSError:
        pass
