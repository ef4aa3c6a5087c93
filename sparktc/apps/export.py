"""Export a run's weighted vectors as multi-label LIBSVM files, so that other tools (LibMultiLabel, scikit-learn,
LIBLINEAR's own programs) can learn from exactly the vectors sparktc learns from.

    ./spark-submit.sh jobs/export_libsvm.py RUN --output DIR

RUN is a sparktc run whose weight stage has finished (its ``vectors`` and the ingest stage's ``categories``, both
with current manifests); DIR must not exist: the export creates it and writes

* ``train.svm`` and ``test.svm``: one line per document, ``label1,label2 index:value ...`` as LibMultiLabel and
  the LIBSVM data page write them (:mod:`sparktc.corpora.libsvm` reads them back). The feature index is the
  vocabulary's ``term_id`` + 1 (1-based, increasing along the line); the value is the stored float32 weight in
  its shortest decimal form that reads back as the same float32 (``0.1``, ``2.5e-8``). A stored weight of 0 (a
  term whose scheme factor is 0, such as the idf of a term in every training document) is left out, as LIBSVM
  lists nonzero features only, so the files read back as the same matrix. A document without
  labels has an empty label field (the line starts with a space). A document with neither labels nor features
  has no LIBSVM line (every reader skips or refuses a blank line) and is counted as set aside;
* ``train.ids`` and ``test.ids``: the run's doc id of each line, line for line;
* ``export.json``: the run and its weight stage's run id, the label of each category, the counts, the order.

Labels are numbers, because LibMultiLabel's reader and scikit-learn's read nothing else: the categories' own
names when every one is a whole number written without sign or leading zero (a run of a LIBSVM corpus), else
each category's position in the categories sorted by name (0, 1, ...; ``export.json`` maps them back).

The lines are written in parallel, one Spark task per file of the ``vectors`` table (pyarrow reads it and
formats the lines in the task; a part is written under a hidden name and renamed into place, so a retried task
leaves no partial or doubled part), then one task per split concatenates its parts. The order is the table's:
its files in name order, each file's rows as stored, so exporting the same run twice gives the same bytes.
Nothing proportional to the corpus reaches the driver: it sees the file names, the categories and counts.

The job holds the run's lock (:func:`sparktc.runtime.outputs.claim`) while it reads, so no run rewrites the
vectors under it. It never writes into a directory it did not create, nor into one that holds files, and on
failure removes what it wrote (and the directory, when nothing else is in it).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
from pyspark.sql import SparkSession

from sparktc import __version__
from sparktc.corpora.libsvm import TEST_FILE, TRAIN_FILE
from sparktc.corpora.records import TEST, TRAIN
from sparktc.errors import InputError
from sparktc.experiment.config import ConfigError
from sparktc.filesystem import absolute, arrow_filesystem, directory_problem, is_uri
from sparktc.runtime import storage
from sparktc.runtime.manifest import changed_file
from sparktc.runtime.outputs import MARKER, check_free
from sparktc.runtime.parts import map_parts, parquet_files, read_batches, read_small
from sparktc.runtime.runner import MANIFESTS, read_manifest
from sparktc.runtime.stage_report import stage

__all__ = ["EMPTY", "SUMMARY", "ExportError", "check_export", "export_libsvm", "intact_manifest", "libsvm_labels",
           "libsvm_lines"]

#: The file each split is written to, and the file of its doc ids.
FILES = {TRAIN: TRAIN_FILE, TEST: TEST_FILE}
IDS = {TRAIN: "train.ids", TEST: "test.ids"}
SUMMARY = "export.json"
PARTS = "_parts"  # the tasks' parts, under DIR until they are concatenated
WRITER = "jobs/export_libsvm.py"
#: Why a document has no line: LIBSVM has no way to write a document with neither labels nor features.
EMPTY = "no labels and no features"
BATCH_ROWS = 8192  # documents formatted at a time
COPY_BYTES = 8 << 20  # bytes copied at a time when concatenating
_WHOLE_NUMBER = re.compile(r"0|[1-9][0-9]*")
_UNFINISHED = re.compile(r"\..+\.[0-9a-f]{32}\.tmp")
ORDER = "the vectors table's files in name order, each file's rows in their stored order"


class ExportError(ConfigError):
    """A run that cannot be exported or an export directory that may not be written, found before Spark starts."""


# --- what may be read and written ----------------------------------------------------------------------------

def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def check_export(run: str, output: str) -> tuple[str, str]:
    """The absolute ``run`` and ``output``, or :class:`ExportError`: ``output`` equal to, inside or around ``run``;
    and for local paths (URIs are checked once Spark is up, by :func:`export_libsvm`) ``run`` not a sparktc run
    whose weight stage finished, or ``output`` already there (the export writes only into a directory it creates) or
    a directory that cannot be made there (:func:`sparktc.filesystem.directory_problem`).
    A ``run`` that is not (yet) so while another job holds it is :class:`sparktc.runtime.outputs.OutputBusyError`:
    a run in progress may have removed its manifests to write them again.
    """
    run, output = absolute(run).rstrip("/"), absolute(output).rstrip("/")
    real_run, real_output = (run, output) if is_uri(run) or is_uri(output) else \
        (os.path.realpath(run), os.path.realpath(output))
    if _inside(real_output, real_run) or _inside(real_run, real_output):
        raise ExportError(f"--output {output} and the run {run} overlap; export into a directory outside the run")
    if not is_uri(run):
        try:
            with open(os.path.join(run, MARKER), encoding="utf-8") as marker:
                kind = json.load(marker).get("kind")
        except (OSError, ValueError, AttributeError):
            kind = None
        weighted = os.path.isfile(os.path.join(run, MANIFESTS, "weight.json"))
        if kind != "run" or not weighted:
            check_free(run, "RUN")  # a run in progress may be rewriting it: that is what to tell
        if kind != "run":
            raise ExportError(f"{run} is not a sparktc run directory (no {MARKER} of a run); give the --output of "
                              "a jobs/pipeline.py or jobs/weight.py run")
        if not weighted:
            raise ExportError(f"{run} has no weighted vectors yet (no {MANIFESTS}/weight.json); run jobs/weight.py "
                              "(or jobs/pipeline.py) there first")
    if not is_uri(output):
        if os.path.lexists(output):
            raise ExportError(f"--output {output} already exists; the export writes only into a new directory it "
                              "creates, never over or beside files it did not write: give a new path")
        problem = directory_problem(real_output)
        if problem:
            raise ExportError(f"--output {output}: {problem}")
    return run, output


def _create(output: str) -> None:
    """Create the export directory; ExportError when something is already there."""
    filesystem, root = arrow_filesystem(output)
    if filesystem.get_file_info(root).type != pafs.FileType.NotFound:
        raise ExportError(f"--output {output} already exists; give a new path")
    parent = root.rsplit("/", 1)[0]
    if parent:
        filesystem.create_dir(parent, recursive=True)
    if is_uri(output):
        filesystem.create_dir(root, recursive=False)
    else:
        try:
            os.mkdir(root)  # atomic: refused if another process made it since the check
        except FileExistsError:
            raise ExportError(f"--output {output} already exists; give a new path") from None


def _remove_written(output: str) -> None:
    """Remove what an export that failed wrote into ``output``, and ``output`` when nothing else is left in it."""
    filesystem, root = arrow_filesystem(output)
    ours = {PARTS, SUMMARY, *FILES.values(), *IDS.values()}
    for info in filesystem.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
        if info.base_name in ours or _UNFINISHED.fullmatch(info.base_name):
            if info.type == pafs.FileType.Directory:
                filesystem.delete_dir(info.path)
            else:
                filesystem.delete_file(info.path)
    if not filesystem.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
        filesystem.delete_dir(root)


# --- the lines ---------------------------------------------------------------------------------------------

def libsvm_labels(categories: Sequence[str]) -> list[str]:
    """The LIBSVM label of each of ``categories`` (distinct, sorted by name): its name when every name is a whole
    number without sign or leading zero, else its position (LibMultiLabel and scikit-learn read numbers only).
    """
    if all(_WHOLE_NUMBER.fullmatch(category) for category in categories):
        return list(categories)
    return [str(position) for position in range(len(categories))]


def libsvm_lines(batch: pa.RecordBatch, categories: pa.StringArray, labels: pa.StringArray
                 ) -> tuple[pa.StringArray, pa.BooleanArray]:
    """The LIBSVM lines (without newline) of a ``vectors`` batch (``labels``, ``indices``, ``values``) and the mask
    of the rows they are for: every row with a label or a nonzero feature (a value of 0 is left out: LIBSVM lists
    nonzero features only). ``labels[i]`` is the label of ``categories[i]``; a label outside ``categories`` is a
    bug upstream (ingest writes only those) and raises ValueError.
    """
    flat_labels = pc.list_flatten(batch.column("labels"))
    positions = pc.index_in(flat_labels, value_set=categories)
    if positions.null_count:
        unknown = flat_labels.filter(pc.is_null(positions))[0]
        raise ValueError(f"label {unknown} is not in the run's categories; please report this as a bug")
    label_lengths = pc.list_value_length(batch.column("labels")).fill_null(0)
    label_field = pc.binary_join(_lists(label_lengths, pc.take(labels, positions)), ",")
    flat_values = pc.list_flatten(batch.column("values"))
    nonzero = pc.not_equal(flat_values, 0)  # -0.0 too; NaN is kept, as it was stored
    # Each row's count of nonzero values: the running count of the mask at the rows' ends, differenced.
    ends = np.cumsum(pc.list_value_length(batch.column("values")).fill_null(0).to_numpy(zero_copy_only=False))
    running = np.concatenate([[0], np.cumsum(nonzero.to_numpy(zero_copy_only=False), dtype=np.int64)])
    lengths = pa.array(np.diff(running[ends], prepend=0))
    one_based = pc.add(pc.cast(pc.list_flatten(batch.column("indices")).filter(nonzero), pa.int64()), 1)
    pairs = pc.binary_join_element_wise(pc.cast(one_based, pa.string()),
                                        pc.cast(flat_values.filter(nonzero), pa.string()), ":")
    feature_field = pc.binary_join(_lists(lengths, pairs), " ")
    line = pc.utf8_rtrim_whitespace(pc.binary_join_element_wise(label_field, feature_field, " "))
    kept = pc.or_(pc.greater(label_lengths, 0), pc.greater(lengths, 0))
    return line.filter(kept), kept


def _lists(lengths: pa.Array, values: pa.Array) -> pa.ListArray:
    """``values`` cut into consecutive lists of ``lengths`` (none null)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths.to_numpy(zero_copy_only=False), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _temporary(path: str) -> str:
    """A hidden name beside ``path`` for writing it before it is renamed into place."""
    directory, name = path.rsplit("/", 1)
    return f"{directory}/.{name}.{uuid.uuid4().hex}.tmp"


def write_part(index: int, path: str, directory: str, categories: pa.StringArray, labels: pa.StringArray
               ) -> dict[str, int]:
    """The LIBSVM lines of one ``vectors`` file as ``directory/part-<index>.svm`` and their doc ids as
    ``directory/part-<index>.ids``, each written under a hidden name and renamed into place; the counts of rows
    read, lines written and rows set aside (:data:`EMPTY`).
    """
    filesystem, root = arrow_filesystem(directory)
    filesystem.create_dir(root, recursive=True)
    targets = [f"{root}/part-{index:05d}.svm", f"{root}/part-{index:05d}.ids"]
    temporaries = [_temporary(target) for target in targets]
    counts = {"read": 0, "written": 0, "empty": 0}
    with filesystem.open_output_stream(temporaries[0], compression=None) as lines, \
            filesystem.open_output_stream(temporaries[1], compression=None) as ids:
        for batch in read_batches(path, ["doc_id", "labels", "indices", "values"], BATCH_ROWS):
            text, kept = libsvm_lines(batch, categories, labels)
            counts["read"] += len(batch)
            counts["written"] += len(text)
            counts["empty"] += len(batch) - len(text)
            if len(text):
                lines.write(("\n".join(text.to_pylist()) + "\n").encode("utf-8"))
                ids.write(("\n".join(batch.column("doc_id").filter(kept).to_pylist()) + "\n").encode("utf-8"))
    for temporary, target in zip(temporaries, targets):
        filesystem.move(temporary, target)
    return counts


def concatenate(parts: Sequence[str], target: str) -> int:
    """The files ``parts``, in order, as the one file ``target`` (written under a hidden name, then renamed);
    the bytes written. Streamed: at most :data:`COPY_BYTES` are held at a time.
    """
    filesystem, path = arrow_filesystem(target)
    temporary = _temporary(path)
    written = 0
    with filesystem.open_output_stream(temporary, compression=None) as sink:
        for part in parts:
            part_filesystem, part_path = arrow_filesystem(part)
            with part_filesystem.open_input_stream(part_path, compression=None) as source:
                while chunk := source.read(COPY_BYTES):
                    sink.write(chunk)
                    written += len(chunk)
    filesystem.move(temporary, path)
    return written


# --- the export --------------------------------------------------------------------------------------------

def intact_manifest(spark: SparkSession, run: str, stage_name: str) -> dict[str, Any]:
    """The manifest of ``run``'s stage ``stage_name`` when the outputs it lists are still exactly its files (same
    paths and sizes, and the same SHA-256 where a modification time changed), else :class:`InputError`. Unlike a
    stage's check for resuming, the code and settings that made them need not be current: the export takes the
    tables as they are, whatever sparktc wrote them.
    """
    manifest = read_manifest(spark, run, stage_name)
    if manifest is None:
        raise InputError(f"{run}: no {MANIFESTS}/{stage_name}.json, so the {stage_name} stage has not finished there; "
                         "run jobs/pipeline.py there first")
    for name, recorded in manifest.get("outputs", {}).items():
        found = storage.list_files(spark, storage.join(run, name))
        change = "it is missing" if found is None else changed_file(
            recorded["files"], found, lambda path, name=name: storage.sha256(spark, storage.join(run, name, path)))
        if change:
            raise InputError(f"{run}: {name} is not as its {stage_name} stage wrote it ({change}); run "
                             "jobs/pipeline.py there again to recompute it")
    return manifest


def export_libsvm(spark: SparkSession, run: str, output: str) -> dict[str, Any]:
    """Write ``run``'s vectors into the new directory ``output`` as the module docstring says; the summary, also
    written to ``output/export.json``. The caller holds the run (:func:`sparktc.runtime.outputs.claim`).
    """
    weight_manifest = intact_manifest(spark, run, "weight")
    intact_manifest(spark, run, "ingest")
    names = sorted(read_small(storage.join(run, "categories"), ["category"]).column("category").to_pylist())
    labels = libsvm_labels(names)
    files = {split: parquet_files(storage.join(run, "vectors", f"split={split}")) for split in FILES}
    units = [(split, path) for split in FILES for path in files[split]]
    _create(output)
    try:
        with stage(spark, "export") as report:
            parts = f"{output}/{PARTS}"
            known, shown = pa.array(names, pa.string()), pa.array(labels, pa.string())
            counts = map_parts(spark, units, lambda index, unit: write_part(index, unit[1], f"{parts}/{unit[0]}",
                                                                            known, shown))
            # Each output file and its parts, in the order of the vectors files.
            plan = [(f"{output}/{names_of[split]}", [f"{parts}/{split}/part-{index:05d}.{kind}"
                                                     for index, (of, _) in enumerate(units) if of == split])
                    for split in FILES for kind, names_of in (("svm", FILES), ("ids", IDS))]
            sizes = dict(zip((target for target, _ in plan),
                             map_parts(spark, plan, lambda _, unit: concatenate(unit[1], unit[0]))))
            filesystem, root = arrow_filesystem(output)
            filesystem.delete_dir(f"{root}/{PARTS}")
            for info in filesystem.get_file_info(pafs.FileSelector(root)):  # a failed attempt's unfinished file
                if _UNFINISHED.fullmatch(info.base_name):
                    filesystem.delete_file(info.path)
            per_split = {split: {key: sum(count[key] for (of, _), count in zip(units, counts) if of == split)
                                 for key in ("read", "written", "empty")} for split in FILES}
            report.rows_in = sum(split["read"] for split in per_split.values())
            report.rows_out = sum(split["written"] for split in per_split.values())
            report.set_aside = {EMPTY: sum(split["empty"] for split in per_split.values())}
            summary = {
                "written_by": WRITER, "sparktc_version": __version__, "run": run,
                "weight_run_id": weight_manifest.get("run_id"),
                "weight_settings": weight_manifest.get("settings", {}).get("weight"),
                "order": ORDER,
                "features": "index = the run's vocabulary term_id + 1; value = the stored float32 weight in its "
                            "shortest decimal form; weights of 0 left out (LIBSVM lists nonzero features only)",
                "labels": dict(zip(labels, names)),
                "files": {FILES[split]: {"lines": per_split[split]["written"],
                                         "documents_read": per_split[split]["read"],
                                         "set_aside": {EMPTY: per_split[split]["empty"]},
                                         "bytes": sizes[f"{output}/{FILES[split]}"], "ids": IDS[split],
                                         "vectors_files": len(files[split])} for split in FILES},
            }
            report.details = {"output": output, **{FILES[split]: per_split[split]["written"] for split in FILES}}
            filesystem, path = arrow_filesystem(f"{output}/{SUMMARY}")
            temporary = _temporary(path)
            with filesystem.open_output_stream(temporary, compression=None) as sink:
                sink.write((json.dumps(summary, indent=2) + "\n").encode("utf-8"))
            filesystem.move(temporary, path)
    except BaseException:
        _remove_written(output)
        raise
    lines = ", ".join(f"{name} {record['lines']:,} lines" for name, record in summary["files"].items())
    print(f"sparktc: exported {run} to {output}: {lines}", flush=True)
    return summary
