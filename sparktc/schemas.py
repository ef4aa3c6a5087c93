"""The schemas of the tables that Python tasks write with pyarrow and Spark reads, each defined once.

Every table is an Arrow schema here, and where Spark needs its form (what ``mapInArrow`` declares and
``createDataFrame`` takes) the Spark layer derives it with pyspark's own Arrow-to-Spark type mapping
(``from_arrow_schema``), so the batches a task builds and the type Spark expects of them cannot drift
apart. Only pyarrow is imported: the readers in :mod:`sparktc.corpora` use these schemas without Spark.
One module for every table, rather than one per stage, because the tables cross stages and applications:
ingest's records come from the readers in :mod:`sparktc.corpora`, and ``predictions`` is written by the
evaluate stage and by the classification of new documents alike.
"""

from __future__ import annotations

import pyarrow as pa

#: Readers' records, as the ingest stage moves them from Python workers to Spark: a document row has
#: ``reason`` null; a rejected record has ``split``, ``labels``, ``text``, ``title`` and ``tokens`` null. ``title``
#: is a document's title alone, also part of its ``text``, in formats that have one (Reuters-21578's TITLE), so
#: tokenize can count it apart (``tokenize.title_weight``, ``tokenize.title_terms``); null elsewhere. Tokens
#: travel and are stored as one string, separated by single spaces (tokens never contain whitespace;
#: LYRL2004's token files use the same convention): Spark moves one string per document several times
#: faster than an array of a hundred strings.
RECORD_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("split", pa.string()),
        ("labels", pa.list_(pa.string())),
        ("text", pa.string()),
        ("title", pa.string()),
        ("tokens", pa.string()),
        ("source", pa.string()),
        ("line", pa.int32()),
        ("reason", pa.string()),
    ]
)

#: Readers' records of token files whose documents ingest turns into integers (LYRL2004's token files; issue 39):
#: :data:`RECORD_SCHEMA` without ``text`` and ``title`` (always null in token files), the ``tokens`` string replaced
#: by the document's training terms, ``term_ids`` (their positions in ``terms``, ascending, each once) with their
#: tf, ``term_counts``, and ``tokens_outside``, how many of its tokens no training document has (dropped). A rejected
#: record has ``split``, ``labels``, ``term_ids``, ``term_counts`` and ``tokens_outside`` null.
TERM_ID_RECORD_SCHEMA = pa.schema([
    *(RECORD_SCHEMA.field(name) for name in ("doc_id", "split", "labels")),
    ("term_ids", pa.list_(pa.int32())), ("term_counts", pa.list_(pa.int32())), ("tokens_outside", pa.int32()),
    *(RECORD_SCHEMA.field(name) for name in ("source", "line", "reason")),
])

#: ``terms``: the terms of the training documents as ingest read them, sorted by name (term_id = position), that
#: documents in integer form (:data:`TERM_ID_RECORD_SCHEMA`) number their terms by; empty for every other corpus.
TERMS_SCHEMA = pa.schema([("term_id", pa.int32()), ("term", pa.string())])

#: ``vectors``: one weighted vector per document ([weight] scheme; term ids ascending, unit L2 norm, or all zero
#: when every weight is) with its labels, and beside each weight the term's raw frequency in the document
#: (``counts``: naive Bayes counts words).
VECTORS_SCHEMA = pa.schema([("doc_id", pa.string()), ("labels", pa.list_(pa.string())),
                            ("indices", pa.list_(pa.int32())), ("values", pa.list_(pa.float32())),
                            ("counts", pa.list_(pa.int32()))])

#: ``vocabulary``: the training terms kept (``select.min_df``, the frequency ranking) in term_id order (term_id =
#: position among the terms sorted), their training document frequency, ``frequency``, their occurrences in the
#: training documents (a vector corpus: the documents holding the feature), and ``idf``, the weighting scheme's
#: global factor of each term (:func:`sparktc.features.weighting.term_factors`).
VOCABULARY_SCHEMA = pa.schema([("term_id", pa.int32()), ("term", pa.string()), ("df", pa.int64()),
                               ("frequency", pa.int64()), ("idf", pa.float64())])

#: ``categories``: every category of the run (by code), its name and parent (null at the top), and its training and
#: test documents (never null: 0 for none), as ingest and the Spark ML estimator's fit write it.
CATEGORIES_SCHEMA = pa.schema([("category", pa.string()), ("name", pa.string()), ("parent", pa.string()),
                               pa.field("train_positives", pa.int64(), nullable=False),
                               pa.field("test_positives", pa.int64(), nullable=False)])

#: ``predictions``: per test document, its labels, the categories assigned, and the top-scoring
#: categories with their scores.
PREDICTIONS_SCHEMA = pa.schema([
    ("doc_id", pa.string()), ("labels", pa.list_(pa.string())), ("predicted", pa.list_(pa.string())),
    ("top_categories", pa.list_(pa.string())), ("top_scores", pa.list_(pa.float64())),
])

#: ``tokens``, what tokenizing a document yields (written by the tokenize stage's tasks with pyarrow): its record's
#: identity, split and labels, and its tokens.
TOKENS_SCHEMA = pa.schema([RECORD_SCHEMA.field(name) for name in ("doc_id", "split", "labels", "tokens")])
#: What classifying a file's records yields before scoring: a vector per document, or the record's
#: source, line and reason when it cannot be classified.
CLASSIFY_VECTORS_SCHEMA = pa.schema(
    [*VECTORS_SCHEMA, *(RECORD_SCHEMA.field(name) for name in ("source", "line", "reason"))])
