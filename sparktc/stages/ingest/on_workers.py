"""What a LYRL2004 ingest's parsing tasks run on the workers (:mod:`sparktc.stages.ingest.qrels` plans them): the
qrels' task staging their label index, the token files' tasks loading it, and their tokens turned into training
term ids. A module of its own, importing no configuration and no pandas, because each Python worker imports the
module of every function its tasks unpickle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sparktc.corpora.label_index import LabelIndex
from sparktc.features import weighting
from sparktc.filesystem import arrow_filesystem, per_worker
from sparktc.runtime.parts import parquet_files, write_parts
from sparktc.schemas import TERM_ID_RECORD_SCHEMA

__all__ = ["as_term_ids", "staged_label_index", "staging_labels"]


def staging_labels(directory: str, parents: tuple[tuple[str, str], ...], policy: str
                    ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The qrels' task's ``then``: its lines passed on as they are, and once read, their :class:`LabelIndex` (the
    hierarchy's ``parents``, the run's ``policy``) written under ``directory`` in columnar form, for the token files'
    workers to load (:func:`staged_label_index`) instead of each reading and indexing the qrels. For 2.6M qrels
    lines (804,414 documents, gzipped) that cost each worker 2.8 to 3.6 CPU-s; loading the staged index costs 0.15
    to 0.2, and the qrels' task 0.5 to 0.9 more. One Parquet file of one row group (2.9 MB, read in 0.09 CPU-s):
    Arrow IPC reads in 0.02 but is 15 MB even with zstd, and every worker reads it.
    """

    def write(index: LabelIndex) -> None:
        table = index.table()
        rows = max(len(table), 1)
        write_parts(table.to_batches(), table.schema, directory, 0, rows_per_file=rows, row_group_rows=rows)

    return lambda batches: LabelIndex.passing(batches, parents, policy, write)


@per_worker
def staged_label_index(directory: str) -> LabelIndex:
    """A parsing worker's :class:`LabelIndex`, as the qrels' task staged it under ``directory``
    (:func:`staging_labels`).
    """
    filesystem, _ = arrow_filesystem(directory)
    [file] = parquet_files(directory)
    return LabelIndex.from_table(pq.read_table(file, filesystem=filesystem))


def as_term_ids(terms: pa.StringArray) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    """A records batch, its tokens strings or lists (:data:`~sparktc.corpora.records.TOKEN_LIST_RECORD_SCHEMA`), in
    integer form (:data:`~sparktc.schemas.TERM_ID_RECORD_SCHEMA`) against the training terms ``terms``
    (:func:`~sparktc.features.weighting.training_term_ids`), as a token file's task converts it.
    """

    def convert(batch: pa.RecordBatch) -> pa.RecordBatch:
        tokens = batch.column("tokens")
        term_ids, term_counts, outside = weighting.training_term_ids(tokens, terms)
        columns = {"term_ids": term_ids, "term_counts": term_counts,
                   "tokens_outside": pa.array(outside, mask=pc.is_null(tokens).to_numpy(zero_copy_only=False))}
        return pa.RecordBatch.from_arrays([columns[name] if name in columns else batch.column(name)
                                           for name in TERM_ID_RECORD_SCHEMA.names], schema=TERM_ID_RECORD_SCHEMA)

    return convert
