"""Spark ML vectors beside sparktc's array columns: :class:`ArraysToVector` (``indices`` + ``values`` -> a
``VectorUDT`` column) and :class:`VectorToArrays` (back), so a ``vectors`` table of a sparktc run feeds Spark ML
(``LinearSVC``) and Spark ML's vectors (``HashingTF``, ``IDF``) feed sparktc's stages.

The vectors cross in Arrow batches, never a Python object per row: a ``VectorUDT`` column is, in Arrow, the struct of
its SQL type (type 0 sparse or 1 dense, size, indices, values), which ``mapInArrow`` returns as it is when the schema
it declares holds the ``VectorUDT`` (:func:`appended`), and Spark takes as the vectors. ``benchmarks/ml_vectors.py``
times the ways on 107,890 R(90) vectors (noop write, pyspark 4.3, 2 shared cores): 1.9 s wall and 1.1 CPU-seconds
so, against 13-15 s and 5.6 CPU-seconds for a Python UDF making a ``SparseVector`` per row (plain or
Arrow-optimized) and 16 s and 4.1 CPU-seconds as a pandas UDF. A scalar Arrow UDF (``arrow_udf``) returning the
struct is as fast (1.7 s, 0.9 CPU-seconds) but is not used: Spark 4.3's columnar input to Arrow UDFs
(``spark.sql.execution.arrow.pythonUDF.columnarInput.enabled``, on by default) fails with UNSUPPORTED_DATATYPE when
the rows it carries hold a ``VectorUDT`` column (TermSelector after TermWeighting), where ``mapInArrow`` does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import keyword_only
from pyspark.ml import Transformer
from pyspark.ml.linalg import VectorUDT
from pyspark.ml.param import Param, Params
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import ArrayType, DoubleType, FloatType, IntegerType, LongType, StructField, StructType

from sparktc.errors import ConfigError
from sparktc.ml.params import HasOutputCol, SparktcParams, check_column, check_output_column, column_param
from sparktc.ml.persistence import Persistent
from sparktc.validation import check_integer

__all__ = ["ArraysToVector", "VectorToArrays", "appended", "vector_array", "vector_lists", "vector_sizes",
           "is_vector"]

#: A ``VectorUDT`` column's Arrow form: the struct of its SQL type.
VECTOR_TYPE: pa.StructType = to_arrow_type(VectorUDT())
_SPARSE = 0
#: Spark's int: a vector's size and indices are ints.
MAX_SIZE = 2**31 - 1


def appended(dataset: DataFrame, columns: list[StructField],
             compute: Callable[[pa.RecordBatch], list[pa.Array]]) -> DataFrame:
    """``dataset`` with ``columns`` added, their values ``compute(batch)`` of each Arrow batch of its rows
    (``mapInArrow``: a ``VectorUDT`` column as its struct, see the module docstring).
    """
    schema = StructType([*dataset.schema.fields, *columns])
    names = [field.name for field in schema.fields]

    def add(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_arrays([*batch.columns, *compute(batch)], names=names)

    return dataset.mapInArrow(add, schema)


def is_vector(found: object) -> bool:
    """Whether a column's Spark type is Spark ML's vector."""
    return isinstance(found, VectorUDT)


def vector_array(indices: pa.ListArray, values: pa.ListArray, size: int) -> pa.StructArray:
    """Sparse vectors of ``size`` from list columns of term ids and values, one list per document, as a ``VectorUDT``
    column's Arrow form (:data:`VECTOR_TYPE`); a null list is an empty vector.
    """
    n = len(indices)
    return pa.StructArray.from_arrays(
        [pa.array(np.full(n, _SPARSE, np.int8)), pa.array(np.full(n, size, np.int32)),
         _filled(indices).cast(VECTOR_TYPE.field("indices").type),
         _filled(values).cast(VECTOR_TYPE.field("values").type)],
        fields=list(VECTOR_TYPE))


def _filled(lists: pa.ListArray) -> pa.ListArray:
    """``lists`` with each null list made empty."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    if not lists.null_count:
        return lists
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pc.list_flatten(lists))


def vector_lists(vectors: pa.StructArray | pa.ChunkedArray) -> tuple[pa.ListArray, pa.ListArray]:
    """A ``VectorUDT`` column's Arrow form back to sparse list columns: each vector's non-zero entries, their indices
    (int32, ascending as a sparse vector holds them) and values (float64), as a sparktc ``vectors`` table holds them
    (a dense vector's zeros and a sparse vector's stored zeros are not entries); a null vector gives empty lists
    (:func:`vector_sizes` tells it apart).
    """
    if isinstance(vectors, pa.ChunkedArray):
        vectors = vectors.combine_chunks()
    kinds = pc.struct_field(vectors, "type")
    dense = pc.fill_null(pc.not_equal(kinds, _SPARSE), False)
    indices, values = pc.struct_field(vectors, "indices"), pc.struct_field(vectors, "values")
    if not pc.any(dense).as_py() and not pc.any(pc.equal(pc.list_flatten(values), 0)).as_py():
        return _filled(indices), _filled(values)
    # Dense rows: their values and the positions they hold; sparse rows as they are; the zeros dropped; one list a row.
    sparse_rows = pc.invert(dense)
    kept_values = pc.if_else(dense, values, pa.nulls(len(vectors), values.type))
    flat = pc.list_flatten(kept_values).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(kept_values).to_numpy(zero_copy_only=False)
    starts = np.zeros(len(vectors) + 1, dtype=np.int64)
    np.cumsum(pc.list_value_length(kept_values).fill_null(0).to_numpy(zero_copy_only=False), out=starts[1:])
    positions = np.arange(len(flat)) - starts[parents]
    sparse_indices = pc.if_else(sparse_rows, indices, pa.nulls(len(vectors), indices.type))
    sparse_values = pc.if_else(sparse_rows, values, pa.nulls(len(vectors), values.type))
    rows = np.concatenate([parents, pc.list_parent_indices(sparse_indices).to_numpy(zero_copy_only=False)])
    ids = np.concatenate([positions, pc.list_flatten(sparse_indices).to_numpy(zero_copy_only=False)])
    weights = np.concatenate([flat, pc.list_flatten(sparse_values).to_numpy(zero_copy_only=False)])
    nonzero = weights != 0
    rows, ids, weights = rows[nonzero], ids[nonzero], weights[nonzero]
    order = np.argsort(rows, kind="stable")
    offsets = np.zeros(len(vectors) + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=len(vectors)), out=offsets[1:])
    return (pa.ListArray.from_arrays(pa.array(offsets), pa.array(ids[order].astype(np.int32))),
            pa.ListArray.from_arrays(pa.array(offsets), pa.array(weights[order].astype(np.float64))))


def vector_sizes(vectors: pa.StructArray | pa.ChunkedArray) -> np.ndarray:
    """Each vector's size (int64): a sparse vector's ``size``, a dense vector's number of values; -1 for a null
    vector.
    """
    if isinstance(vectors, pa.ChunkedArray):
        vectors = vectors.combine_chunks()
    valid = vectors.is_valid().to_numpy(zero_copy_only=False)
    dense = pc.struct_field(vectors, "type").fill_null(_SPARSE).to_numpy(zero_copy_only=False) != _SPARSE
    lengths = pc.list_value_length(pc.struct_field(vectors, "values")).fill_null(0).to_numpy(zero_copy_only=False)
    sizes = np.where(dense, lengths, pc.struct_field(vectors, "size").fill_null(-1).to_numpy(zero_copy_only=False))
    return np.where(valid, sizes, -1).astype(np.int64)


def _integer_lists(found: object) -> bool:
    return isinstance(found, ArrayType) and isinstance(found.elementType, IntegerType | LongType)


def _number_lists(found: object) -> bool:
    return isinstance(found, ArrayType) and isinstance(found.elementType, FloatType | DoubleType | IntegerType)


def _check_size(value: object) -> int:
    try:
        return check_integer("size", value, 1, MAX_SIZE)
    except ValueError as error:
        raise ConfigError(f"{error}: the vectors' size, the number of terms (a sparktc run's vocabulary)") from None


class _HasArrayCols(SparktcParams):
    """The accessors of ``indicesCol`` and ``valuesCol``, the term ids and values columns (each stage declares the
    Params, with its own words: read or made).
    """

    def getIndicesCol(self) -> str:
        """The term ids column's name."""
        return self.getOrDefault("indicesCol")

    def setIndicesCol(self, value: str) -> Any:
        """Set the term ids column's name."""
        return self._set(indicesCol=value)

    def getValuesCol(self) -> str:
        """The values column's name."""
        return self.getOrDefault("valuesCol")

    def setValuesCol(self, value: str) -> Any:
        """Set the values column's name."""
        return self._set(valuesCol=value)


class ArraysToVector(Transformer, HasOutputCol, _HasArrayCols, Persistent):
    """``indicesCol`` (array<int>: term ids, ascending) and ``valuesCol`` (array<float> or array<double>) ->
    ``outputCol``, sparse Spark ML vectors of ``size`` (a sparktc run's vocabulary size).

    Example::

        vectors = spark.read.parquet("runs/reuters21578/vectors")
        n_terms = spark.read.parquet("runs/reuters21578/vocabulary").count()
        features = ArraysToVector(size=n_terms).transform(vectors)  # indices, values -> features
    """

    indicesCol = column_param("indicesCol", "the term ids column, array<int>")
    valuesCol = column_param("valuesCol", "the values column, array<float> or array<double>")
    size = Param(Params._dummy(), "size", "the vectors' size: the number of terms", typeConverter=_check_size)

    @keyword_only
    def __init__(self, *, indicesCol: str = "indices", valuesCol: str = "values", outputCol: str = "features",
                 size: int | None = None) -> None:
        super().__init__()
        self._setDefault(indicesCol="indices", valuesCol="values", outputCol="features")
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, indicesCol: str | None = None, valuesCol: str | None = None,
                  outputCol: str | None = None, size: int | None = None) -> ArraysToVector:
        """Set the Params given."""
        return self._set(**self._input_kwargs)

    def setSize(self, value: int) -> ArraysToVector:
        """Set ``size``."""
        return self._set(size=value)

    def getSize(self) -> int:
        """The vectors' size."""
        return self.getOrDefault(self.size)

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        if not self.isDefined(self.size):
            raise ConfigError("ArraysToVector: size is not set; set it to the number of terms (a sparktc run's "
                              "vocabulary: spark.read.parquet(RUN + '/vocabulary').count())")
        check_column(self, dataset, "indicesCol", _integer_lists, "term ids (array<int>)")
        check_column(self, dataset, "valuesCol", _number_lists, "values (array<float> or array<double>)")
        output = check_output_column(self, dataset)
        size = self.getSize()
        indices, values = self.getIndicesCol(), self.getValuesCol()

        def to_vectors(batch: pa.RecordBatch) -> list[pa.Array]:
            ids = pc.list_flatten(batch.column(indices))
            if len(ids) and (pc.min(ids).as_py() < 0 or pc.max(ids).as_py() >= size):
                raise ValueError(f"ArraysToVector: a term id outside 0..{size - 1} (size = {size}): set size to the "
                                 "number of terms")
            return [vector_array(batch.column(indices), batch.column(values), size)]

        return appended(dataset, [StructField(output, VectorUDT())], to_vectors)


class VectorToArrays(Transformer, _HasArrayCols, Persistent):
    """``inputCol`` (Spark ML vectors) -> ``indicesCol`` (array<int>) and ``valuesCol`` (array<double>): each
    vector's non-zero entries, as a sparktc ``vectors`` table holds them (a dense vector's zeros and a sparse vector's
    stored zeros are not entries).

    Example::

        arrays = VectorToArrays(inputCol="features").transform(HashingTF(inputCol="terms").transform(documents))
    """

    inputCol = column_param("inputCol", "the vectors column")
    indicesCol = column_param("indicesCol", "the term ids column made, array<int>")
    valuesCol = column_param("valuesCol", "the values column made, array<double>")

    @keyword_only
    def __init__(self, *, inputCol: str = "features", indicesCol: str = "indices", valuesCol: str = "values") -> None:
        super().__init__()
        self._setDefault(inputCol="features", indicesCol="indices", valuesCol="values")
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, inputCol: str | None = None, indicesCol: str | None = None,
                  valuesCol: str | None = None) -> VectorToArrays:
        """Set the Params given."""
        return self._set(**self._input_kwargs)

    def getInputCol(self) -> str:
        """The vectors column's name."""
        return self.getOrDefault(self.inputCol)

    def setInputCol(self, value: str) -> VectorToArrays:
        """Set the vectors column's name."""
        return self._set(inputCol=value)

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        check_column(self, dataset, "inputCol", is_vector, "Spark ML vectors (VectorUDT)")
        indices = check_output_column(self, dataset, "indicesCol")
        values = check_output_column(self, dataset, "valuesCol")
        column = self.getInputCol()
        return appended(dataset, [StructField(indices, ArrayType(IntegerType())),
                                  StructField(values, ArrayType(DoubleType()))],
                        lambda batch: list(vector_lists(batch.column(column))))
