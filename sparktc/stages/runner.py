"""Running a stage so that its outputs can be trusted: written aside, published whole, described, resumable.

1. A stage writes everything under ``OUTPUT/_incomplete/<stage>/`` (:class:`Tables` gives it the
   paths). Its old manifest is removed first, so a run that dies from here on leaves nothing that
   passes for finished.
2. When the stage has finished, each output it declares is moved into ``OUTPUT`` (one rename per
   output), and then ``OUTPUT/manifests/<stage>.json`` is written (to a temporary name, then
   renamed): the configuration sections the stage reads, the sparktc version, its inputs (earlier
   stages' output digests; paths, sizes and modification times of files outside the run), the
   files and rows of every output, its report (rows in and out, set aside, details) and its times.
3. On a rerun, a stage whose manifest is current (:func:`sparktc.manifest.stale_reason`) is
   skipped; any other is recomputed, which changes its outputs digest and so recomputes exactly
   the stages downstream of it. ``force`` recomputes every stage.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from sparktc import __version__, storage
from sparktc.config import Config
from sparktc.manifest import identity, outputs_digest, stale_reason
from sparktc.stages.report import StageReport
from sparktc.stages.resources import check_worker_memory

INCOMPLETE = "_incomplete"
MANIFESTS = "manifests"


@dataclass(frozen=True)
class Tables:
    """Where a stage reads earlier stages' outputs (published, under ``root``) and writes its own (aside)."""

    root: str
    staging: str

    def input(self, name: str) -> str:
        return storage.join(self.root, name)

    def output(self, name: str) -> str:
        return storage.join(self.staging, name)


def _no_files(config: Config) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class Stage:
    """A stage: its function, the outputs of earlier stages it reads, the outputs it writes, the
    configuration sections its results depend on, and the files outside the run it reads."""

    name: str
    run: Callable[[SparkSession, Config, Tables], StageReport]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    files: Callable[[Config], Sequence[str]] = field(default=_no_files)


class MissingInputError(ValueError):
    """An output a stage reads has no current manifest: the stage that writes it has not completed."""


def manifest_path(output: str, stage: str) -> str:
    return storage.join(output, MANIFESTS, f"{stage}.json")


def read_manifest(spark: SparkSession, output: str, stage: str) -> dict[str, Any] | None:
    path = manifest_path(output, stage)
    if not storage.exists(spark, path):
        return None
    try:
        return json.loads(storage.read_text(spark, path))
    except (Py4JJavaError, ValueError):  # JSONDecodeError is a ValueError
        return None  # a manifest cut short or damaged (a Hadoop checksum error) is no manifest


def _listings(spark: SparkSession, output: str, names: Sequence[str]) -> dict[str, list[tuple[str, int]] | None]:
    listings = {}
    for name in names:
        found = storage.list_files(spark, storage.join(output, name))
        listings[name] = None if found is None else [(path, size) for path, size, _ in found]
    return listings


def current_manifest(spark: SparkSession, output: str, stage: str) -> dict[str, Any] | None:
    """The stage's manifest if its outputs are still exactly as it lists them (identity not checked)."""
    manifest = read_manifest(spark, output, stage)
    if manifest is None:
        return None
    reason = stale_reason(manifest, __version__, manifest.get("identity", ""),
                          _listings(spark, output, list(manifest.get("outputs", {}))))
    return None if reason else manifest


def _outside_files(spark: SparkSession, paths: Sequence[str]) -> dict[str, list]:
    """(relative path, size, modification time) of every file under each path outside the run."""
    return {path: [list(entry) for entry in storage.list_files(spark, path) or []] for path in paths if path}


def _rows(spark: SparkSession, path: str, listing: list[tuple[str, int]]) -> int | None:
    """Rows of a Parquet output (from its footers); None for other outputs (files, a corpus, a model
    bundle): an output is a Parquet table when all its data files (not ``_SUCCESS``, not ``.crc``) are."""
    data = [name for name, _ in listing if not name.rsplit("/", 1)[-1].startswith(("_", "."))]
    if not data or not all(name.endswith(".parquet") for name in data):
        return None
    return spark.read.parquet(path).count()


def _settings(config: Config, sections: Sequence[str]) -> dict[str, Any]:
    return {section: dataclasses.asdict(getattr(config, section)) for section in sections}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_stage(spark: SparkSession, stage: Stage, config: Config, output: str, owners: Mapping[str, Stage],
              force: bool = False) -> dict[str, Any]:
    """Run ``stage`` into ``output`` unless its manifest is current; return its manifest."""
    inputs, tables = {}, {}
    for table in stage.reads:
        owner = owners[table]
        upstream = current_manifest(spark, output, owner.name)
        if upstream is None:
            raise MissingInputError(
                f"{stage.name} reads {table}, which has no complete output in {output} (no current "
                f"{MANIFESTS}/{owner.name}.json); run the {owner.name} stage there first, or jobs/pipeline.py"
            )
        # Its identity (settings and inputs) and its files: either changing recomputes this stage.
        inputs[table] = {"identity": upstream["identity"], "outputs": upstream["outputs_digest"]}
        tables[table] = {"path": storage.join(output, table), "stage": owner.name, **inputs[table]}
    files = _outside_files(spark, stage.files(config))
    settings = _settings(config, stage.sections)
    expected = identity(stage.name, __version__, settings, inputs, files)
    existing = read_manifest(spark, output, stage.name)
    reason = "--force" if force else stale_reason(existing, __version__, expected,
                                                   _listings(spark, output, stage.writes))
    if reason is None:
        print(f"sparktc: {stage.name:<9} up to date, skipped (manifest of {existing['finished']})", flush=True)
        return existing

    staging = storage.join(output, INCOMPLETE, stage.name)
    storage.delete(spark, manifest_path(output, stage.name))
    storage.delete(spark, staging)
    started = _now()
    report = stage.run(spark, config, Tables(output, staging))
    published = time.perf_counter()
    spark.sparkContext.setJobGroup(f"sparktc-{stage.name}", f"sparktc: {stage.name} (publishing)")
    for name in stage.writes:
        if not storage.exists(spark, storage.join(staging, name)):
            raise RuntimeError(f"{stage.name} did not write its output {name}; please report this as a bug")
        storage.rename(spark, storage.join(staging, name), storage.join(output, name))
    storage.delete(spark, staging)
    if storage.list_files(spark, storage.join(output, INCOMPLETE)) == []:
        storage.delete(spark, storage.join(output, INCOMPLETE))
    listings = _listings(spark, output, stage.writes)
    outputs = {name: {"files": listings[name], "rows": _rows(spark, storage.join(output, name), listings[name])}
               for name in stage.writes}
    spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    spark.sparkContext.setLocalProperty("spark.job.description", None)
    manifest = {
        "stage": stage.name,
        "sparktc_version": __version__,
        "identity": expected,
        "outputs_digest": outputs_digest(listings),
        "recomputed_because": reason,
        "settings": settings,
        "configuration": config.as_dict(),
        "inputs": {"tables": tables, "files": files},
        "outputs": outputs,
        **report.as_dict(),
        "seconds_publishing": round(time.perf_counter() - published, 3),
        "started": started,
        "finished": _now(),
        "spark": {"master": spark.sparkContext.master, "application_id": spark.sparkContext.applicationId,
                  "default_parallelism": spark.sparkContext.defaultParallelism},
    }
    written = storage.join(output, MANIFESTS, f"_{stage.name}.json.writing")
    storage.write_text(spark, written, json.dumps(manifest, indent=2) + "\n")
    storage.rename(spark, written, manifest_path(output, stage.name))
    return manifest


def run_stages(spark: SparkSession, plan: Sequence[tuple[Stage, Config]], output: str, owners: Mapping[str, Stage],
               force: bool = False) -> list[dict[str, Any]]:
    """Every planned stage in order (see :func:`run_stage`); their manifests."""
    check_worker_memory(dict(spark.sparkContext.getConf().getAll()))
    return [run_stage(spark, stage, config, output, owners, force) for stage, config in plan]
