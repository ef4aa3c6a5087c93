"""Write a synthetic LYRL2004-format corpus with Spark (the project's embedded default corpus).

The documents come from :mod:`sparktc.corpora.synthetic`; this module only spreads the work:

1. The driver builds the (small) model, plans the chunks: each output token file is cut into
   ranges of at most ``chunk_documents`` documents.
2. One Spark task per chunk generates its documents on an executor and writes them as one gzip
   member of the token file and one gzip member of each of the three qrels files (topics,
   industries, regions: ``rcv1-v2.<set>.qrels.gz``), under ``<output>/_synthesize_tmp/``, through
   ``pyarrow.fs`` (so HDFS / S3 / local all work: :func:`sparktc.filesystem.arrow_filesystem`).
   Only small per-chunk statistics go back to the driver.
3. One Spark task per output file concatenates that file's members in order, streaming (a
   sequence of gzip members is a valid gzip file).
4. The driver writes the category lists, small files of the model: ``rcv1.topics.hier.orig`` (a
   byte copy of the given file, or the generated tree), ``rcv1.industries.hier`` and
   ``rcv1.regions.txt``, and removes the temporaries.

The corpus content depends only on the shape (seed included): not on ``chunk_documents`` nor on
the parallelism. The compressed bytes depend on the chunking as well (one gzip member per
chunk), so the files are byte-identical for the same shape and the same ``chunk_documents``.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from contextlib import ExitStack

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.lyrl2004 import CATEGORY_SETS, HIERARCHY_FILES, REGIONS_FILE
from sparktc.corpora.synthetic import QRELS_FILES, TEST_FILES, TRAIN_FILE, SyntheticShape
from sparktc.corpora.synthetic_categories import HIERARCHY_FILE, format_hierarchy, format_regions
from sparktc.corpora.synthetic_documents import format_batch, format_qrels, generate_documents
from sparktc.corpora.synthetic_model import SyntheticModel, build_model
from sparktc.errors import InputError
from sparktc.experiment.config import Config
from sparktc.filesystem import absolute, arrow_filesystem
from sparktc.runtime.faults import inject
from sparktc.runtime.runner import Stage, Tables
from sparktc.runtime.stage_report import StageReport, stage

TMP_DIR = "_synthesize_tmp"
_COPY_BUFFER = 8 << 20
#: The file of each category set's codes, beside its qrels: LYRL2004's names.
LIST_FILES = {"topics": HIERARCHY_FILE, "industries": HIERARCHY_FILES["industries"], "regions": REGIONS_FILE}

#: What each chunk's task returns, one row per chunk. ``assignments``, ``min_topics`` and ``max_topics`` are the
#: topics'; ``category_counts`` holds the positives of every category of the three sets in turn (CATEGORY_SETS, each
#: in code order), then the chunk's documents with industry codes and those of them not closed under the industries
#: tree (:func:`_count_layout`); ``qrels_bytes`` sums the three qrels members.
STATS_SCHEMA = pa.schema(
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
#: :data:`STATS_SCHEMA` as the Spark schema of the chunks' job.
STATS_SPARK_SCHEMA = from_arrow_schema(STATS_SCHEMA)
_CONCAT_SCHEMA = pa.schema([("file", pa.int64()), ("bytes", pa.int64())])


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts])


def _member(tmp: str, kind: str, chunk: int) -> str:
    return _join(tmp, f"{kind}-{chunk:06d}.gz")


def _count_layout(model: SyntheticModel) -> dict[str, slice]:
    """Where each category set's counts, and the industry document counts, lie in ``category_counts``."""
    layout, start = {}, 0
    for category_set in CATEGORY_SETS:
        size = len(model.category_tree(category_set).codes)
        layout[category_set] = slice(start, start + size)
        start += size
    layout["industry_documents"] = slice(start, start + 2)
    return layout


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
    """Generate one chunk and write its token member and its three qrels members; return its statistics."""
    began = time.monotonic()
    index, file_index, start, stop = chunk
    shape = model.shape
    v = shape.vocabulary_size
    fs, tmp = arrow_filesystem(tmp_uri)
    layout = _count_layout(model)
    counts = np.zeros(layout["industry_documents"].stop, dtype=np.int64)
    children = np.flatnonzero(model.industries.tree.parent >= 0)
    parents = model.industries.tree.parent[children]
    train_terms = np.zeros(v, dtype=bool) if file_index == 0 else None
    tokens = distinct = 0
    min_topics, max_topics = 1 << 30, 0
    kinds = ("tokens", *CATEGORY_SETS)
    written = dict.fromkeys(kinds, 0)
    with ExitStack() as stack:
        outputs = {kind: stack.enter_context(fs.open_output_stream(_member(tmp, kind, index), compression=None))
                   for kind in kinds}
        compressors = {kind: zlib.compressobj(level, zlib.DEFLATED, 31) for kind in kinds}  # gzip, mtime 0, no name

        def write(kind: str, data: bytes) -> None:
            outputs[kind].write(data)
            written[kind] += len(data)

        for batch in generate_documents(model, start, stop):
            write("tokens", compressors["tokens"].compress(format_batch(model, batch).encode("ascii")))
            for category_set in CATEGORY_SETS:
                text = format_qrels(model, batch, category_set)
                write(category_set, compressors[category_set].compress(text.encode("ascii")))
                counts[layout[category_set]] += batch.category_labels(category_set).sum(axis=0)
            n = len(batch)
            tokens += len(batch.tokens)
            doc = np.repeat(np.arange(n, dtype=np.int64), np.diff(batch.offsets))
            keys = np.sort(doc * v + batch.tokens)
            distinct += int(np.count_nonzero(np.diff(keys))) + (len(keys) > 0)
            per_doc = batch.labels.sum(axis=1)
            min_topics, max_topics = min(min_topics, int(per_doc.min())), max(max_topics, int(per_doc.max()))
            not_closed = (batch.industries[:, children] & ~batch.industries[:, parents]).any(axis=1)
            counts[layout["industry_documents"]] += (int(batch.industries.any(axis=1).sum()), int(not_closed.sum()))
            if train_terms is not None:
                train_terms[batch.tokens] = True
        for kind in kinds:
            write(kind, compressors[kind].flush())
    ids = shape.doc_ids(start, stop)
    return {
        "chunk": index,
        "documents": stop - start,
        "first_id": int(ids[0]),
        "last_id": int(ids[-1]),
        "tokens": tokens,
        "distinct": distinct,
        "assignments": int(counts[layout["topics"]].sum()),
        "min_topics": min_topics,
        "max_topics": max_topics,
        "category_counts": counts.tolist(),
        "train_terms": np.packbits(train_terms).tobytes() if train_terms is not None else b"",
        "token_bytes": written["tokens"],
        "qrels_bytes": sum(written[category_set] for category_set in CATEGORY_SETS),
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
    seed. The industries tree and the regions list are always generated. Existing files of the
    same names are overwritten.
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
                yield pa.RecordBatch.from_pylist([stats], schema=STATS_SCHEMA)

    rows = (
        spark.range(0, len(chunks), 1, len(chunks))
        .mapInArrow(chunk_task, STATS_SPARK_SCHEMA)
        .collect()
    )
    rows = sorted(rows, key=lambda r: r["chunk"])
    generated = time.monotonic()

    files = shape.files()
    targets: list[tuple[str, list[str]]] = []
    for f, (name, _, _) in enumerate(files):
        targets.append((_join(out_uri, name), [_member(tmp_uri, "tokens", c[0]) for c in chunks if c[1] == f]))
    for category_set in CATEGORY_SETS:
        members = [_member(tmp_uri, category_set, c[0]) for c in chunks]
        targets.append((_join(out_uri, QRELS_FILES[category_set]), members))

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
    lists = {LIST_FILES["topics"]: hierarchy_bytes,
             LIST_FILES["industries"]: format_hierarchy(model.industries.tree.entries).encode("ascii"),
             LIST_FILES["regions"]: format_regions(model.region_list).encode("ascii")}
    for name, data in lists.items():
        with fs.open_output_stream(_join(base, name), compression=None) as out:
            out.write(data)
    fs.delete_dir(tmp)
    concatenated = time.monotonic()

    # --- statistics (per-chunk rows only; nothing proportional to the corpus) -----------------
    layout = _count_layout(model)
    train_counts = np.zeros(layout["industry_documents"].stop, dtype=np.int64)
    test_counts = np.zeros_like(train_counts)
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
    tokens = sum(r["tokens"] for r in rows)
    distinct = sum(r["distinct"] for r in rows)
    category_sets = {}
    for k, category_set in enumerate(CATEGORY_SETS):
        train, total = train_counts[layout[category_set]], (train_counts + test_counts)[layout[category_set]]
        codes = model.category_tree(category_set).codes
        category_sets[category_set] = {
            "qrels": QRELS_FILES[category_set], "list": LIST_FILES[category_set], "categories": len(codes),
            "assignments": int(total.sum()), "bytes": sizes[len(files) + k],
            "categories_with_train_positive": int((train > 0).sum()),
            "categories_without_train_positive": [codes[i] for i in np.flatnonzero(train == 0)],
        }
    industry_documents, not_closed = (train_counts + test_counts)[layout["industry_documents"]].tolist()
    topics = category_sets["topics"]
    train_topics = train_counts[layout["topics"]]
    test_topics = test_counts[layout["topics"]]
    codes = model.tree.codes
    return {
        "output": out_uri,
        "documents": documents,
        "train_documents": per_file[files[0][0]]["documents"],
        "test_documents": documents - per_file[files[0][0]]["documents"],
        "files": per_file,
        "qrels": {c["qrels"]: {"category_set": name, "assignments": c["assignments"], "bytes": c["bytes"]}
                  for name, c in category_sets.items()},
        "hierarchy": {"file": HIERARCHY_FILE, "source": "copied" if hierarchy_path else "generated",
                      "bytes": len(hierarchy_bytes)},
        "lists": {name: len(data) for name, data in lists.items()},
        "category_sets": category_sets,
        "assignments": topics["assignments"],
        "categories": topics["categories"],
        "categories_with_train_positive": topics["categories_with_train_positive"],
        "categories_without_train_positive": topics["categories_without_train_positive"],
        "category_counts": {codes[i]: {"train": int(train_topics[i]), "test": int(test_topics[i])}
                            for i in range(len(codes))},
        "topics_per_document": topics["assignments"] / documents,
        "topics_per_document_range": (min(r["min_topics"] for r in rows), max(r["max_topics"] for r in rows)),
        "top_level_share": {codes[t]: float((train_topics + test_topics)[t] / documents) for t in model.tree.tops},
        "industry_documents": industry_documents,
        "industry_documents_not_closed": not_closed,
        "industries_per_labelled_document": category_sets["industries"]["assignments"] / max(industry_documents, 1),
        "regions_per_document": category_sets["regions"]["assignments"] / documents,
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
    pipeline's ``corpus``), or, with ``into`` empty, as the output's own files (the synthesize job).
    """

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
                "topics_per_document", "industry_documents", "industry_documents_not_closed", "regions_per_document")}
            report.details["qrels_assignments"] = {name: q["assignments"] for name, q in counts["qrels"].items()}
        return report

    return Stage("synthesize", run, writes=(into,) if into else (TRAIN_FILE, *TEST_FILES, *QRELS_FILES.values(),
                                                                 *LIST_FILES.values()),
                 sections=("synthesize",), files=lambda config: [config.synthesize.hierarchy])
