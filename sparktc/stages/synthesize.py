"""Write a synthetic LYRL2004-format corpus with Spark (the project's embedded default corpus).

The documents come from :mod:`sparktc.corpora.synthetic`; this module only spreads the work:

1. The driver builds the (small) model, plans the chunks: each output token file is cut into
   ranges of at most ``chunk_documents`` documents.
2. One Spark task per chunk generates its documents on an executor and writes them as one gzip
   member of the token file and one gzip member of the qrels file, under
   ``<output>/_synthesize_tmp/``, through ``pyarrow.fs`` (so HDFS / S3 / local all work:
   :func:`sparktc.filesystem.arrow_filesystem`). Only
   small per-chunk statistics go back to the driver.
3. One Spark task per output file concatenates that file's members in order, streaming (a
   sequence of gzip members is a valid gzip file).
4. The driver writes ``rcv1.topics.hier.orig`` (a byte copy of the given file, or the generated
   tree) and removes the temporaries.

The corpus content depends only on the shape (seed included): not on ``chunk_documents`` nor on
the parallelism. The compressed bytes depend on the chunking as well (one gzip member per
chunk), so the files are byte-identical for the same shape and the same ``chunk_documents``.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.synthetic import (
    HIERARCHY_FILE,
    QRELS_FILE,
    TEST_FILES,
    TRAIN_FILE,
    SyntheticModel,
    SyntheticShape,
    build_model,
    format_batch,
    format_hierarchy,
    format_qrels,
    generate_documents,
)
from sparktc.errors import InputError
from sparktc.filesystem import absolute, arrow_filesystem
from sparktc.runtime.config import Config
from sparktc.runtime.faults import inject
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage

TMP_DIR = "_synthesize_tmp"
_COPY_BUFFER = 8 << 20

_STATS_SCHEMA = pa.schema(
    [
        ("chunk", pa.int64()),
        ("documents", pa.int64()),
        ("first_id", pa.int64()),
        ("last_id", pa.int64()),
        ("tokens", pa.int64()),
        ("distinct", pa.int64()),
        ("assignments", pa.int64()),
        ("min_topics", pa.int64()),
        ("max_topics", pa.int64()),
        ("category_counts", pa.list_(pa.int64())),
        ("train_terms", pa.binary()),
        ("token_bytes", pa.int64()),
        ("qrels_bytes", pa.int64()),
        ("seconds", pa.float64()),
    ]
)
_STATS_SPARK_SCHEMA = from_arrow_schema(_STATS_SCHEMA)
_CONCAT_SCHEMA = pa.schema([("file", pa.int64()), ("bytes", pa.int64())])


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts])


def _member(tmp: str, kind: str, chunk: int) -> str:
    return _join(tmp, f"{kind}-{chunk:06d}.gz")


def plan_chunks(shape: SyntheticShape, chunk_documents: int) -> list[tuple[int, int, int, int]]:
    """``(chunk, file index, first position, end position)``; file 0 is the train file."""
    chunks = []
    for f, (_, start, stop) in enumerate(shape.files()):
        pos = start
        while pos < stop:
            end = min(pos + chunk_documents, stop)
            chunks.append((len(chunks), f, pos, end))
            pos = end
    return chunks


def _write_chunk(model: SyntheticModel, tmp_uri: str, chunk: tuple[int, int, int, int], level: int) -> dict:
    """Generate one chunk and write its token and qrels members; return its statistics."""
    began = time.monotonic()
    index, file_index, start, stop = chunk
    shape = model.shape
    v = shape.vocabulary_size
    fs, tmp = arrow_filesystem(tmp_uri)
    counts = np.zeros(len(model.tree.codes), dtype=np.int64)
    train_terms = np.zeros(v, dtype=bool) if file_index == 0 else None
    tokens = distinct = 0
    min_topics, max_topics = 1 << 30, 0
    token_bytes = qrels_bytes = 0
    with fs.open_output_stream(_member(tmp, "tokens", index), compression=None) as tok_out, \
            fs.open_output_stream(_member(tmp, "qrels", index), compression=None) as qrels_out:
        tok_z = zlib.compressobj(level, zlib.DEFLATED, 31)  # gzip member, mtime 0, no name
        qrels_z = zlib.compressobj(level, zlib.DEFLATED, 31)
        for batch in generate_documents(model, start, stop):
            data = tok_z.compress(format_batch(model, batch).encode("ascii"))
            tok_out.write(data)
            token_bytes += len(data)
            data = qrels_z.compress(format_qrels(model, batch).encode("ascii"))
            qrels_out.write(data)
            qrels_bytes += len(data)
            n = len(batch)
            tokens += len(batch.tokens)
            doc = np.repeat(np.arange(n, dtype=np.int64), np.diff(batch.offsets))
            keys = np.sort(doc * v + batch.tokens)
            distinct += int(np.count_nonzero(np.diff(keys))) + (len(keys) > 0)
            per_doc = batch.labels.sum(axis=1)
            min_topics, max_topics = min(min_topics, int(per_doc.min())), max(max_topics, int(per_doc.max()))
            counts += batch.labels.sum(axis=0)
            if train_terms is not None:
                train_terms[batch.tokens] = True
        for z, out in ((tok_z, tok_out), (qrels_z, qrels_out)):
            data = z.flush()
            out.write(data)
            if out is tok_out:
                token_bytes += len(data)
            else:
                qrels_bytes += len(data)
    ids = shape.doc_ids(start, stop)
    return {
        "chunk": index,
        "documents": stop - start,
        "first_id": int(ids[0]),
        "last_id": int(ids[-1]),
        "tokens": tokens,
        "distinct": distinct,
        "assignments": int(counts.sum()),
        "min_topics": min_topics,
        "max_topics": max_topics,
        "category_counts": counts.tolist(),
        "train_terms": np.packbits(train_terms).tobytes() if train_terms is not None else b"",
        "token_bytes": token_bytes,
        "qrels_bytes": qrels_bytes,
        "seconds": time.monotonic() - began,
    }


def _concatenate(out_uri: str, members: list[str]) -> int:
    """Stream ``members`` (URIs) one after the other into ``out_uri``; return bytes written."""
    fs, path = arrow_filesystem(out_uri)
    written = 0
    with fs.open_output_stream(path, compression=None) as out:
        for member in members:
            mfs, mpath = arrow_filesystem(member)
            with mfs.open_input_stream(mpath, compression=None) as src:
                while True:
                    data = src.read(_COPY_BUFFER)
                    if not data:
                        break
                    out.write(data)
                    written += len(data)
    return written


def synthesize(
    spark: SparkSession,
    output: str,
    shape: SyntheticShape,
    hierarchy_path: str | None = None,
    chunk_documents: int = 25_000,
    compression_level: int = 1,
) -> dict:
    """Write the synthetic corpus of ``shape`` into the directory ``output`` and return counts.

    ``output`` and ``hierarchy_path`` are URIs (``hdfs://``, ``s3a://``, ``file:``) or local
    paths (:mod:`sparktc.filesystem`). With ``hierarchy_path`` the topics are that hierarchy's and
    the file is copied byte for byte; without it a tree of the same shape is generated from the
    seed. Existing files of the same names are overwritten.
    """
    began = time.monotonic()
    if isinstance(chunk_documents, bool) or not isinstance(chunk_documents, int) or not (
        1 <= chunk_documents <= 10_000_000
    ):
        raise ValueError(f"chunk_documents={chunk_documents!r}: must be an integer in [1, 10000000]")
    if isinstance(compression_level, bool) or not isinstance(compression_level, int) or not (
        1 <= compression_level <= 9
    ):
        raise ValueError(f"compression_level={compression_level!r}: must be an integer in [1, 9]")
    out_uri = absolute(output)
    fs, base = arrow_filesystem(out_uri)
    hierarchy_bytes = None
    if hierarchy_path is not None:
        hfs, hpath = arrow_filesystem(absolute(hierarchy_path))
        with hfs.open_input_stream(hpath, compression=None) as src:
            hierarchy_bytes = src.read()
        try:
            text = hierarchy_bytes.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"synthesize.hierarchy {hierarchy_path}: not UTF-8 text (byte {error.start}); "
                             "save it as UTF-8") from None
        model = build_model(shape, text)
    else:
        model = build_model(shape, None)
        hierarchy_bytes = format_hierarchy(model.tree.entries).encode("ascii")

    fs.create_dir(base, recursive=True)
    tmp_uri = _join(out_uri, TMP_DIR)
    _, tmp = arrow_filesystem(tmp_uri)
    fs.delete_dir_contents(tmp, missing_dir_ok=True)
    fs.create_dir(tmp, recursive=True)

    chunks = plan_chunks(shape, chunk_documents)
    level = compression_level

    def chunk_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rb in batches:
            inject("synthesize")
            for i in rb.column("id").to_pylist():
                stats = _write_chunk(model, tmp_uri, chunks[i], level)
                yield pa.RecordBatch.from_pylist([stats], schema=_STATS_SCHEMA)

    rows = (
        spark.range(0, len(chunks), 1, len(chunks))
        .mapInArrow(chunk_task, _STATS_SPARK_SCHEMA)
        .collect()
    )
    rows = sorted(rows, key=lambda r: r["chunk"])
    generated = time.monotonic()

    files = shape.files()
    targets: list[tuple[str, list[str]]] = []
    for f, (name, _, _) in enumerate(files):
        targets.append((_join(out_uri, name), [_member(tmp_uri, "tokens", c[0]) for c in chunks if c[1] == f]))
    targets.append((_join(out_uri, QRELS_FILE), [_member(tmp_uri, "qrels", c[0]) for c in chunks]))

    def concat_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rb in batches:
            for i in rb.column("id").to_pylist():
                written = _concatenate(*targets[i])
                yield pa.RecordBatch.from_pylist([{"file": i, "bytes": written}], schema=_CONCAT_SCHEMA)

    sizes = {
        r["file"]: r["bytes"]
        for r in (spark.range(0, len(targets), 1, len(targets))
                  .mapInArrow(concat_task, "file long, bytes long").collect())
    }
    with fs.open_output_stream(_join(base, HIERARCHY_FILE), compression=None) as out:
        out.write(hierarchy_bytes)
    fs.delete_dir(tmp)
    concatenated = time.monotonic()

    # --- statistics (per-chunk rows only; nothing proportional to the corpus) -----------------
    codes = model.tree.codes
    n_cat = len(codes)
    train_counts = np.zeros(n_cat, dtype=np.int64)
    test_counts = np.zeros(n_cat, dtype=np.int64)
    train_terms = np.zeros(shape.vocabulary_size, dtype=bool)
    per_file = {name: {"documents": 0, "first_id": None, "last_id": None} for name, _, _ in files}
    for r in rows:
        f = chunks[r["chunk"]][1]
        name = files[f][0]
        entry = per_file[name]
        entry["documents"] += r["documents"]
        entry["first_id"] = r["first_id"] if entry["first_id"] is None else entry["first_id"]
        entry["last_id"] = r["last_id"]
        (train_counts if f == 0 else test_counts)[:] += np.asarray(r["category_counts"], dtype=np.int64)
        if f == 0:
            train_terms |= np.unpackbits(
                np.frombuffer(r["train_terms"], dtype=np.uint8))[: shape.vocabulary_size].astype(bool)
    for f, (name, _, _) in enumerate(files):
        per_file[name]["bytes"] = sizes[f]
    documents = sum(r["documents"] for r in rows)
    assignments = sum(r["assignments"] for r in rows)
    tokens = sum(r["tokens"] for r in rows)
    distinct = sum(r["distinct"] for r in rows)
    total_counts = train_counts + test_counts
    tops = model.tree.tops
    return {
        "output": out_uri,
        "documents": documents,
        "train_documents": per_file[files[0][0]]["documents"],
        "test_documents": documents - per_file[files[0][0]]["documents"],
        "files": per_file,
        "qrels": {"file": QRELS_FILE, "assignments": assignments, "bytes": sizes[len(files)]},
        "hierarchy": {"file": HIERARCHY_FILE, "source": "copied" if hierarchy_path else "generated",
                      "bytes": len(hierarchy_bytes)},
        "assignments": assignments,
        "categories": n_cat,
        "categories_with_train_positive": int((train_counts > 0).sum()),
        "categories_without_train_positive": [codes[i] for i in np.flatnonzero(train_counts == 0)],
        "category_counts": {codes[i]: {"train": int(train_counts[i]), "test": int(test_counts[i])}
                            for i in range(n_cat)},
        "topics_per_document": assignments / documents,
        "topics_per_document_range": (min(r["min_topics"] for r in rows), max(r["max_topics"] for r in rows)),
        "top_level_share": {codes[t]: float(total_counts[t] / documents) for t in tops},
        "tokens": tokens,
        "tokens_per_document": tokens / documents,
        "distinct_terms_per_document": distinct / documents,
        "train_vocabulary": int(train_terms.sum()),
        "vocabulary_size": shape.vocabulary_size,
        "chunks": len(chunks),
        "chunk_documents": chunk_documents,
        "seconds": time.monotonic() - began,
        "seconds_generate": generated - began,
        "seconds_concatenate": concatenated - generated,
        "task_seconds": sum(r["seconds"] for r in rows),
    }


def synthesize_stage(into: str = "") -> Stage:
    """The stage writing the corpus of ``config.synthesize`` into ``into`` under the output (the
    pipeline's ``corpus``), or, with ``into`` empty, as the output's own files (the synthesize job)."""

    def run(spark: SparkSession, config: Config, tables: Tables) -> StageReport:
        settings = config.synthesize
        shape = SyntheticShape(
            documents=settings.documents, train_documents=settings.train_documents,
            vocabulary_size=settings.vocabulary_size, tokens_per_document=float(settings.tokens_per_document),
            seed=settings.seed,
        )
        with stage(spark, "synthesize") as report:
            target = tables.output(into) if into else tables.staging
            counts = synthesize(spark, target, shape, settings.hierarchy or None, settings.chunk_documents)
            report.rows_in = settings.documents
            report.rows_out = counts["documents"]
            report.details = {key: counts[key] for key in (
                "train_documents", "test_documents", "assignments", "categories", "categories_with_train_positive",
                "topics_per_document")}
        return report

    return Stage("synthesize", run, writes=(into,) if into else (TRAIN_FILE, *TEST_FILES, QRELS_FILE, HIERARCHY_FILE),
                 sections=("synthesize",), files=lambda config: [config.synthesize.hierarchy])
