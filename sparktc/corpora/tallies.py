"""What a parsing task counts in the records it writes, so that a clean corpus needs no Spark pass to count them:
records by reason, documents per split, the positives of each (split, category), tokens, and with the qrels the
assignments (:class:`RecordTally`, :class:`LabelledTally`, :class:`AssignmentTally`). Pure pyarrow; the ingest
stage sums the tasks' tallies on the driver (:func:`summed`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparktc.corpora.label_index import LabelIndex, decimal_values, id_digest
from sparktc.corpora.records import term_id_token_counts, token_counts

__all__ = ["AssignmentTally", "LabelledTally", "RecordTally", "distinct_ids", "summed"]


class RecordTally:
    """What a parsing task counts in the records it writes (:data:`~sparktc.corpora.records.RECORD_SCHEMA`), so
    that a clean corpus needs no Spark pass to count them: records by reason (None: accepted), and
    over the accepted documents those of each split, those without labels and the positives of each
    (split, category), and for documents that come tokenized their tokens and those without any (what the
    tokenize stage reports of them, :func:`sparktc.stages.tokenize.count_tokens`); of documents in integer form
    (:data:`~sparktc.schemas.TERM_ID_RECORD_SCHEMA`), also the tokens outside the training terms.
    """

    def __init__(self) -> None:
        self.reasons: Counter[str | None] = Counter()
        self.documents: Counter[str] = Counter()
        self.without_labels = 0
        self.positives: Counter[tuple[str, str]] = Counter()
        self.tokens = 0
        self.without_tokens = 0
        self.tokens_outside = 0
        self.teed: dict | None = None  # what the task's tee made of the records (ingest's Parsing.tee): its counts

    def add(self, batch: pa.RecordBatch) -> None:
        """Count one batch of written records: reasons; the accepted documents' splits, labels and tokens."""
        reasons = _count_reasons(self.reasons, batch)
        accepted = batch.filter(pc.is_null(reasons))
        self.documents.update(_counts(accepted.column("split")))
        labels = accepted.column("labels")
        self.without_labels += len(labels) - int(pc.sum(pc.greater(pc.list_value_length(labels), 0)).as_py() or 0)
        pairs = (pa.table({"split": accepted.column("split").take(pc.list_parent_indices(labels)),
                           "category": pc.list_flatten(labels)})
                 .group_by(["split", "category"]).aggregate([([], "count_all")]))
        self.positives.update(dict(zip(zip(pairs.column("split").to_pylist(), pairs.column("category").to_pylist()),
                                       pairs.column("count_all").to_pylist())))
        if "term_ids" in accepted.schema.names:
            tokens, without, outside = term_id_token_counts(accepted)
            self.tokens_outside += outside
        else:
            _, tokens, without = token_counts(accepted.column("tokens"))
        self.tokens += tokens
        self.without_tokens += without

    def finish(self) -> None:
        """Nothing to do: the counts are kept as the batches come."""


class LabelledTally(RecordTally):
    """A token file's :class:`RecordTally`, with the documents of the whole qrels whose labels are not closed under
    the hierarchy, as the parsing worker's :class:`LabelIndex` found them (``labels``: loads it, once per worker;
    picklable, as the tally travels to the driver): so no Spark job regroups the qrels to count them.
    """

    def __init__(self, labels: Callable[[], LabelIndex]) -> None:
        super().__init__()
        self._labels = labels
        self.not_closed = 0
        self.labelled_digest = 0  # :func:`id_digest` of the accepted documents with labels written
        self.qrels_digest = 0  # and of the qrels documents

    def add(self, batch: pa.RecordBatch) -> None:
        """Count one batch as :class:`RecordTally` does; add its accepted labelled documents' ids to the digest."""
        super().add(batch)
        labelled = pc.and_(pc.is_null(batch.column("reason")),
                           pc.greater(pc.list_value_length(batch.column("labels")).fill_null(0), 0))
        self.labelled_digest = (self.labelled_digest + id_digest(batch.column("doc_id").filter(labelled))) % 2**64

    def finish(self) -> None:
        """Count, the task's records written, the documents not closed under the hierarchy and the qrels ids."""
        index = self._labels()
        self.not_closed, self.qrels_digest = index.not_closed, index.ids_digest


class AssignmentTally:
    """What a qrels parsing task counts: lines by reason (None: accepted), and the distinct documents
    of the accepted lines.
    """

    def __init__(self) -> None:
        self.reasons: Counter[str | None] = Counter()
        self._documents: list[pa.Array] = []
        self.documents = 0

    def add(self, batch: pa.RecordBatch) -> None:
        """Count one batch of qrels lines by reason and keep the documents of the accepted ones."""
        reasons = _count_reasons(self.reasons, batch)
        self._documents.append(batch.column("doc_id").filter(pc.is_null(reasons)))

    def finish(self) -> None:
        """Count the distinct documents, and keep only the counts (the tally travels to the driver)."""
        self.documents = distinct_ids(pa.chunked_array(self._documents, pa.string()))
        self._documents = []


def distinct_ids(doc_ids: pa.ChunkedArray) -> int:
    """How many distinct ids ``doc_ids`` holds: counted between neighbours when the ids are short canonical decimals
    in ascending order, as the lines of LYRL2004's qrels come (0.2 against 0.7 CPU-s of hashing for 10.4M lines),
    else by hashing.
    """
    values = decimal_values(doc_ids)
    if values is not None and len(values) and bool((values[1:] >= values[:-1]).all()):
        return 1 + int(np.count_nonzero(values[1:] != values[:-1]))
    return pc.count_distinct(doc_ids).as_py()


def _count_reasons(counted: Counter[str | None], batch: pa.RecordBatch) -> pa.Array:
    """Add a batch's rows to ``counted`` by reason (None: accepted); the reason column."""
    reasons = batch.column("reason")
    counted.update({None: reasons.null_count})
    if reasons.null_count != len(batch):
        counted.update(reasons.drop_null().to_pylist())
    return reasons


def _counts(values: pa.Array) -> dict:
    counted = pc.value_counts(values)
    return dict(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist()))


def summed(tallies: list[RecordTally]) -> RecordTally:
    """The parsing tasks' tallies added up."""
    tally = RecordTally()
    for each in tallies:
        tally.reasons.update(each.reasons)
        tally.documents.update(each.documents)
        tally.without_labels += each.without_labels
        tally.positives.update(each.positives)
        tally.tokens += each.tokens
        tally.without_tokens += each.without_tokens
        tally.tokens_outside += each.tokens_outside
    return tally
