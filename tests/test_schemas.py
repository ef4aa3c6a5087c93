"""The Spark schemas derived from the Arrow ones are exactly the DDL strings they replaced."""

from __future__ import annotations

import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.schemas import CLASSIFY_VECTORS_SCHEMA, PREDICTIONS_SCHEMA, RECORD_SCHEMA, TOKENS_SCHEMA
from sparktc.stages.synthesize import STATS_SPARK_SCHEMA

# The DDL strings each stage declared before the schemas were defined once, in Arrow.
RECORD_DDL = (
    "doc_id string, split string, labels array<string>, text string, title string, tokens string, "
    "source string, line int, reason string"
)
PREDICTIONS_DDL = (
    "doc_id string, labels array<string>, predicted array<string>, "
    "top_categories array<string>, top_scores array<double>"
)
TOKENS_DDL = "doc_id string, split string, labels array<string>, tokens string"
CLASSIFY_VECTORS_DDL = ("doc_id string, labels array<string>, indices array<int>, values array<float>, "
                        "counts array<int>, source string, line int, reason string")
STATS_DDL = (
    "chunk long, documents long, first_id long, last_id long, tokens long, distinct long, "
    "assignments long, min_topics long, max_topics long, category_counts array<long>, "
    "train_terms binary, token_bytes long, qrels_bytes long, seconds double"
)


@pytest.mark.parametrize(
    ("derived", "ddl"),
    [(from_arrow_schema(RECORD_SCHEMA), RECORD_DDL), (from_arrow_schema(PREDICTIONS_SCHEMA), PREDICTIONS_DDL),
     (STATS_SPARK_SCHEMA, STATS_DDL), (from_arrow_schema(TOKENS_SCHEMA), TOKENS_DDL),
     (from_arrow_schema(CLASSIFY_VECTORS_SCHEMA), CLASSIFY_VECTORS_DDL)],
    ids=["records", "predictions", "synthesize-stats", "tokens", "classify-vectors"],
)
def test_derived_spark_schema_is_the_former_ddl(spark, derived, ddl):
    # Types, nullability (fields and array elements) and metadata: StructType equality compares them all.
    assert derived == spark.createDataFrame([], ddl).schema
