"""Running a stage so that its outputs can be trusted: written aside, published whole, described, resumable.

The run holds ``OUTPUT`` (:mod:`sparktc.runtime.outputs`: its lock, and the marker that makes the
directory sparktc's) for as long as its stages run.

1. A stage whose manifest is not current is recomputed. First its manifest and those of every
   stage downstream of it are removed, then their outputs: from here on nothing of the old
   settings is left to pass for finished (a ``metrics.json`` or a model bundle of another C).
2. The stage writes everything under the run's private ``OUTPUT/_incomplete/<run id>/<stage>/``
   (:class:`Tables` gives it the paths). When it has finished, each output it declares is moved
   into ``OUTPUT`` (one rename per output, never over an existing file), each published file is
   hashed, and then ``OUTPUT/manifests/<stage>.json`` is written (to a temporary name, then
   renamed): the configuration sections the stage reads, sparktc's version and code digest, its
   inputs (earlier stages' identities and output digests; the content digests of files outside the
   run), the files (path, size, modification time, SHA-256) and rows of every output, its report
   (rows in and out, set aside, details), its times and the run id.
3. On a rerun, a stage whose manifest is current (:func:`sparktc.runtime.manifest.stale_reason`) is
   skipped, unless it reads what no manifest can record (``Stage.unrecorded``: a catalog table, a DataFrame).
   ``force`` recomputes every stage.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from sparktc import __version__, packaged
from sparktc.errors import InputError
from sparktc.filesystem import local_path
from sparktc.runtime import session, storage, written
from sparktc.runtime.faults import inject_driver
from sparktc.runtime.manifest import Found, code_digest, identity, outputs_digest, stale_reason
from sparktc.runtime.outputs import INCOMPLETE, LOCK, MARKER, Claim
from sparktc.runtime.parts import count_rows
from sparktc.runtime.progress import StageWatch
from sparktc.runtime.session import labelled_jobs
from sparktc.runtime.stage_report import StageReport

MANIFESTS = "manifests"
#: SHA-256 of the files outside the run, by path, size and modification time (under manifests/).
DIGESTS = "_file_digests.json"
#: What a run keeps beside its outputs: rewritten by every run, never an input's content.
BOOKKEEPING = (MARKER, LOCK, MANIFESTS, INCOMPLETE)
#: The run's handoffs between its stages (:attr:`Tables.handoff`), under its private staging directory.
HANDOFF = "_handoff"


@dataclass(frozen=True)
class Tables:
    """Where a stage reads earlier stages' outputs (published, under ``root``) and writes its own (aside)."""

    root: str
    staging: str
    #: Where a stage leaves work a later stage of the same run may adopt instead of redoing it (ingest's tasks
    #: weight the documents they parse): the run's private staging, never published, gone when the run ends; "" for
    #: none.
    handoff: str = ""
    #: The stages the run has planned after this one: those that may adopt what it leaves.
    later: tuple[str, ...] = ()

    def input(self, name: str) -> str:
        """The path of ``name``, an earlier stage's published output."""
        return storage.join(self.root, name)

    def output(self, name: str) -> str:
        """The path the stage writes its output ``name`` to, in the staging directory until published."""
        return storage.join(self.staging, name)


class Config(Protocol):
    """What the runner needs of a run's configuration (:class:`sparktc.experiment.config.Config`): its sections as
    attributes (dataclasses), all of them as a dict, and the check of the settings against the data a stage
    counted.
    """

    def as_dict(self) -> dict[str, Any]:
        """Every section's settings as plain dicts, by section name."""
        ...

    def check_against_data(self, facts: Mapping[str, Any], where: str) -> None:
        """Refuse (ConfigError) settings the data cannot satisfy, as soon as a stage has counted it: ``facts`` are the
        counts, ``where`` says which stage counted them.
        """
        ...


def _no_files(config: Config) -> Sequence[str]:
    return ()


def _recorded(config: Config) -> str:
    return ""


@dataclass(frozen=True)
class Stage:
    """A stage: its function, the outputs of earlier stages it reads, the outputs it writes, the
    configuration sections its results depend on, or single settings of a section ("select.min_df"; or a function
    of the configuration naming them, for a stage that reads them under some settings only), and the files outside
    the run it reads.
    """

    name: str
    run: Callable[[SparkSession, Config, Tables], StageReport]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    sections: tuple[str, ...] | Callable[[Config], tuple[str, ...]] = ()
    files: Callable[[Config], Sequence[str]] = field(default=_no_files)
    # Whether its details count the data the later stages' settings must fit (ingest: ``train_documents`` and
    # ``categories``; ``Config.check_against_data``).
    counts_data: bool = False
    # Why the stage runs again on every run (what it reads has no content its manifest could record: a catalog
    # table, a DataFrame), "" when its manifest records all it reads.
    unrecorded: Callable[[Config], str] = field(default=_recorded)

    def sections_of(self, config: Config) -> tuple[str, ...]:
        """The configuration sections (or single settings) the stage's results depend on under ``config``."""
        return self.sections(config) if callable(self.sections) else self.sections


class MissingInputError(InputError):
    """An output a stage reads has no current manifest: the stage that writes it has not completed."""


def manifest_path(output: str, stage: str) -> str:
    """Where the manifest of ``stage`` lives: ``OUTPUT/manifests/<stage>.json``."""
    return storage.join(output, MANIFESTS, f"{stage}.json")


def _read_json(spark: SparkSession, path: str) -> dict[str, Any] | None:
    if not storage.exists(spark, path):
        return None
    try:
        value = json.loads(storage.read_text(spark, path))
    except (OSError, Py4JJavaError, ValueError):  # JSONDecodeError is a ValueError
        return None  # a file cut short or damaged (a Hadoop checksum error) is no file
    return value if isinstance(value, dict) else None


def read_manifest(spark: SparkSession, output: str, stage: str) -> dict[str, Any] | None:
    """The manifest of ``stage`` in ``output``; None when it is missing, damaged or not a JSON object."""
    return _read_json(spark, manifest_path(output, stage))


#: SHA-256 of the local files this process has hashed, by (device, inode, size, modification time in ns).
_HASHED: dict[tuple[int, int, int, int], str] = {}


def file_sha256(spark: SparkSession, path: str) -> str:
    """A file's SHA-256, as the manifests and model bundles record it, read once per process for a local file (kept
    by inode, size and modification time); a file that cannot be read back (permissions; on Hadoop, a failed
    ``.crc`` check) gets a digest no file has, and so does a local FIFO, socket or device (listed as files; reading
    one would wait forever: ingest names them).
    """
    local = local_path(path)
    found = os.stat(local) if local is not None and os.path.exists(local) else None
    if found is not None and not stat.S_ISREG(found.st_mode):
        return "not a regular file"
    # A hard link of a file hashed before (tokens of a tokenized corpus, the bundle's training set) is not read
    # again: the same inode, size and modification time are the same bytes, as the manifests trust elsewhere.
    key = None if found is None else (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)
    if key in _HASHED:
        return _HASHED[key]
    try:
        digest = storage.sha256(spark, path)
    except OSError as error:
        return f"unreadable: {str(error)[:200]}"
    if key is not None:
        _HASHED[key] = digest
    return digest


class Digests:
    """SHA-256 of files outside the run, kept in ``OUTPUT/manifests/_file_digests.json`` by path, size
    and modification time, so an unchanged corpus is hashed once, not on every run.
    """

    def __init__(self, spark: SparkSession, output: str):
        self.spark, self.path = spark, storage.join(output, MANIFESTS, DIGESTS)
        self.known: dict[str, list] = _read_json(spark, self.path) or {}
        self.changed = False

    def of(self, path: str, size: int, mtime: int) -> str:
        """The SHA-256 of ``path``, hashed again only when its size or modification time differs from the kept one."""
        entry = self.known.get(path)
        if entry is None or entry[:2] != [size, mtime]:
            entry = self.known[path] = [size, mtime, file_sha256(self.spark, path)]
            self.changed = True
        return entry[2]

    def save(self) -> None:
        """Write the digests back to ``_file_digests.json`` when any changed."""
        if self.changed:
            _write_json(self.spark, self.path, self.known)
            self.changed = False


def _write_json(spark: SparkSession, path: str, value: Any) -> None:
    """Write ``path`` whole: to a temporary name beside it, then, the old file removed, renamed to ``path``
    (a crash in between leaves no file, never part of one).
    """
    folder, name = path.rsplit("/", 1)
    written = storage.join(folder, f"_{name}.writing")
    storage.write_text(spark, written, json.dumps(value, indent=2) + "\n")
    storage.delete(spark, path)
    storage.rename(spark, written, path)


def _found(spark: SparkSession, output: str, names: Sequence[str]) -> dict[str, Found | None]:
    return {name: storage.list_files(spark, storage.join(output, name)) for name in names}


def _output_hash(spark: SparkSession, output: str) -> Callable[[str, str], str]:
    return lambda name, relative: file_sha256(spark, storage.join(output, name, relative))


def damage(spark: SparkSession, output: str, manifest: Mapping[str, Any] | None) -> str | None:
    """Why ``manifest`` no longer stands for the outputs in ``output`` (None when it does; identity not checked)."""
    identity_recorded = manifest.get("identity", "") if manifest else ""
    found = _found(spark, output, list(manifest.get("outputs", {}))) if manifest else {}
    return stale_reason(manifest, identity_recorded, found, _output_hash(spark, output))


def current_manifest(spark: SparkSession, output: str, stage: str) -> dict[str, Any] | None:
    """The stage's manifest if its outputs are still exactly as it lists them (identity not checked)."""
    manifest = read_manifest(spark, output, stage)
    return None if damage(spark, output, manifest) else manifest


def _outside_files(spark: SparkSession, paths: Sequence[str], digests: Digests) -> dict[str, list]:
    """(relative path, size, SHA-256) of every file under each path outside the run; a corpus that is
    itself a sparktc output (jobs/synthesize.py) is its files, not the bookkeeping of the runs that wrote it. A
    packaged stop list's name (``tokenize.stop_list = "smart"``) is the file the package holds.
    """
    found = {}
    for path in paths:
        source = packaged.stop_list(path)
        if source:
            data = source.read_bytes()
            found[path] = [[source.name, len(data), hashlib.sha256(data).hexdigest()]]
        elif path:
            found[path] = [[relative, size, digests.of(storage.join(path, relative), size, mtime)]
                           for relative, size, mtime in storage.list_files(spark, path) or []
                           if relative.split("/", 1)[0] not in BOOKKEEPING]
    return found


def _rows(spark: SparkSession, path: str, listing: Found) -> int | None:
    """Rows of a Parquet output (from its footers); None for other outputs (files, a corpus, a model
    bundle): an output is a Parquet table when all its data files (not ``_SUCCESS``, not ``.crc``) are.
    """
    data = [name for name, _, _ in listing if not name.rsplit("/", 1)[-1].startswith(("_", "."))]
    if not data or not all(name.endswith(".parquet") for name in data):
        return None
    return count_rows(path)


def section_settings(config: Config, sections: Sequence[str]) -> dict[str, Any]:
    """The settings ``sections`` names, by section: a whole section ("weight"), or one setting of it ("select.min_df"),
    so that a stage reading one setting of a section is not recomputed when the others change (its manifest's
    settings, which decide whether it runs again).
    """
    settings: dict[str, Any] = {}
    for name in sections:
        section, _, key = name.partition(".")
        values = dataclasses.asdict(getattr(config, section))
        settings.setdefault(section, {}).update({key: values[key]} if key else values)
    return settings


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def downstream(stage: Stage, owners: Mapping[str, Stage]) -> list[Stage]:
    """The stages that read ``stage``'s outputs, directly or through others, in pipeline order; a stage
    that writes no pipeline table (synthesize: the corpus every stage is computed from) feeds them all.
    """
    stages = list(dict.fromkeys(owners.values()))
    if stage not in stages:
        return stages
    tables, found = set(stage.writes), []
    for other in stages:
        if other is not stage and tables & set(other.reads):
            found.append(other)
            tables |= set(other.writes)
    return found


def invalidate(spark: SparkSession, output: str, stages: Sequence[Stage]) -> None:
    """Remove the manifests of ``stages`` (all of them first: from then on none passes for current),
    then their outputs, so nothing computed from the old settings or inputs stays in ``output``.
    """
    for stage in stages:
        storage.delete(spark, manifest_path(output, stage.name))
    for stage in stages:
        for name in stage.writes:
            storage.delete(spark, storage.join(output, name))


def run_stage(spark: SparkSession, stage: Stage, config: Config, claim: Claim, owners: Mapping[str, Stage],
              digests: Digests, invalidated: dict[str, str], force: bool = False,
              later: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run ``stage`` into the claimed output unless its manifest is current; return its manifest.
    ``invalidated`` says, for the stages this run invalidated, which stage's recomputation did it; ``later`` names
    the stages the run has planned after it (:attr:`Tables.later`).
    """
    output = claim.output
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
    files = _outside_files(spark, stage.files(config), digests)
    digests.save()
    settings = section_settings(config, stage.sections_of(config))
    expected = identity(stage.name, code_digest(), settings, inputs, files)
    existing = read_manifest(spark, output, stage.name)
    reason = "--force" if force else stale_reason(existing, expected, _found(spark, output, stage.writes),
                                                   _output_hash(spark, output)) or stage.unrecorded(config) or None
    if reason is None:
        print(f"sparktc: {stage.name:<9} up to date, skipped (manifest of {existing['finished']})", flush=True)
        return existing
    if reason == "no manifest" and stage.name in invalidated:
        reason = invalidated[stage.name]

    following = downstream(stage, owners)
    invalidate(spark, output, [stage, *following])
    for other in following:  # the first cause is kept: "tokenize was recomputed", not "weight was"
        invalidated.setdefault(other.name, f"{stage.name} was recomputed ({reason})")
    staging = storage.join(claim.staging, stage.name)
    storage.delete(spark, staging)
    started = _now()
    inject_driver(spark.conf, stage.name, "start")
    report = stage.run(spark, config, Tables(output, staging, storage.join(claim.staging, HANDOFF), later))
    published = time.perf_counter()
    with labelled_jobs(spark, stage.name, f"sparktc: {stage.name} (publishing)"):
        for name in stage.writes:
            if not storage.exists(spark, storage.join(staging, name)):
                raise RuntimeError(f"{stage.name} did not write its output {name}; please report this as a bug")
            storage.rename(spark, storage.join(staging, name), storage.join(output, name))
            inject_driver(spark.conf, stage.name, "publish")
        storage.delete(spark, staging)
        found, hash_output = _found(spark, output, stage.writes), _output_hash(spark, output)
        # A file a task wrote was hashed by it (sparktc.runtime.written); only the others are read here, on the driver.
        listings = {name: [[relative, size, mtime,
                            written.digest(storage.join(output, name, relative), size, mtime)
                            or hash_output(name, relative)]
                           for relative, size, mtime in found[name] or []]
                    for name in stage.writes}
        outputs = {name: {"files": listings[name], "rows": _rows(spark, storage.join(output, name), found[name] or [])}
                   for name in stage.writes}
    manifest = {
        "stage": stage.name,
        "sparktc_version": __version__,
        "code": code_digest(),
        "identity": expected,
        "outputs_digest": outputs_digest(listings),
        "recomputed_because": reason,
        "run_id": claim.run_id,
        "settings": settings,
        "configuration": config.as_dict(),
        "inputs": {"tables": tables, "files": files},
        "outputs": outputs,
        **report.as_dict(),
        "seconds_publishing": round(time.perf_counter() - published, 3),
        "started": started,
        "finished": _now(),
        "spark": {"master": session.master(spark), "application_id": session.application_id(spark),
                  "default_parallelism": session.cores(spark)},
    }
    inject_driver(spark.conf, stage.name, "manifest")
    _write_json(spark, manifest_path(output, stage.name), manifest)
    return manifest


def run_stages(spark: SparkSession, plan: Sequence[tuple[Stage, Config]], claim: Claim, owners: Mapping[str, Stage],
               force: bool = False, watch: StageWatch | None = None) -> list[dict[str, Any]]:
    """Every planned stage in order into the claimed output (see :func:`run_stage`), each inside ``watch(name)``
    when given; their manifests.
    """
    digests = Digests(spark, claim.output)
    invalidated: dict[str, str] = {}
    manifests = []
    for position, (stage, config) in enumerate(plan):
        with watch(stage.name) if watch else nullcontext():
            manifests.append(run_stage(spark, stage, config, claim, owners, digests, invalidated, force,
                                       tuple(later.name for later, _ in plan[position + 1:])))
        if stage.counts_data and position + 1 < len(plan):  # before the next stage's work
            plan[position + 1][1].check_against_data(manifests[-1].get("details") or {},
                               f"counted by {stage.name} in {claim.output}")
    storage.delete(spark, storage.join(claim.output, INCOMPLETE))  # the lock is held: no other run stages here
    return manifests
