"""Reader for plain text files, one document per file: the id is the file name, the text its content.

For classifying new documents (``jobs/classify.py --input-format text``): such files carry no
labels and no split. A ``.gz`` file is decompressed (its id keeps the name, ``.gz`` included); a
file that is not UTF-8 is rejected, naming the first bad byte.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from sparktc.corpora.files import CORRUPT_GZIP_ERRORS, corrupt_gzip, read_lines
from sparktc.corpora.records import Document, Reject, record_batches


def read_text_file(content: bytes, source: str) -> Iterator[pa.RecordBatch]:
    """The one document of a text file, or its Reject, as an Arrow batch of ``RECORD_SCHEMA``."""
    doc_id = source.rstrip("/").rsplit("/", 1)[-1]
    try:
        data = b"".join(read_lines(content, source))
    except CORRUPT_GZIP_ERRORS as error:
        return record_batches([corrupt_gzip(source, error, 0, "document")])
    try:
        record: Document | Reject = Document(doc_id, None, (), data.decode("utf-8"), None, source, 1)
    except UnicodeDecodeError as error:
        record = Reject(source, 0, doc_id,
                        f"not UTF-8 text (byte {error.start}: {data[error.start:error.start + 1]!r}); "
                        "save it as UTF-8")
    return record_batches([record])
