"""The run record: what a run was (code, configuration, corpus, machine), what it cost per stage and what it
scored, one row of the history table (:mod:`sparktc.tracking.history_table`) and what MLflow logs.

Runs are compared by digests, never by paths or times:
- ``config_digest``: the SHA-256 of a pipeline's settings that differ from its code's defaults (so that a setting a
  later version adds, at its default, leaves the series of baselines unbroken; a benchmark's digest is over all its
  settings), without the sections that only say where a run is recorded and how it talks (``RUN_SECTIONS``:
  [history], [track], [progress]) and without ``corpus.path``;
- ``corpus_digest``: that of the corpus files' names relative to the corpus, sizes and SHA-256 as ingest's manifest
  lists them (the same files anywhere are the same corpus);
- ``code_digest``: the manifests' digest of sparktc's sources, beside the git commit when there is one.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import math
import os
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from sparktc.errors import exit_status
from sparktc.runtime.manifest import code_digest
from sparktc.runtime.usage import StageUsage

#: The file of a run's output that holds its metrics, and the stage whose manifest lists the corpus files the run
#: read (the corpus digest).
METRICS_FILE = "metrics.json"
CORPUS_STAGE = "ingest"
#: The metrics every record carries (metrics.json's keys), None when the run did not get to evaluate.
METRICS = ("micro_precision", "micro_recall", "micro_f1", "macro_precision", "macro_recall", "macro_f1")
STAGE_TYPE = pa.struct([("stage", pa.string()), ("status", pa.string()), ("seconds", pa.float64()),
                        ("cpu_seconds", pa.float64()), ("peak_memory_bytes", pa.int64())])
SCHEMA = pa.schema([
    ("run_id", pa.string()), ("kind", pa.string()), ("label", pa.string()),
    ("started", pa.timestamp("s", tz="UTC")), ("finished", pa.timestamp("s", tz="UTC")),
    ("user", pa.string()), ("host", pa.string()), ("master", pa.string()),
    ("executors", pa.int32()), ("cores", pa.int32()),
    ("git_commit", pa.string()), ("code_digest", pa.string()),
    ("config", pa.string()), ("config_digest", pa.string()), ("corpus_digest", pa.string()), ("output", pa.string()),
    ("stages", pa.list_(STAGE_TYPE)),
    ("seconds", pa.float64()), ("cpu_seconds", pa.float64()), ("peak_memory_bytes", pa.int64()),
    ("cpu_complete", pa.bool_()),
    *[(name, pa.float64()) for name in METRICS],
    ("cv_micro_f1", pa.float64()),
    ("ranking", pa.map_(pa.string(), pa.float64())), ("figures", pa.map_(pa.string(), pa.float64())),
    ("exit_status", pa.int32()), ("error", pa.string()),
])


def digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def experiment_settings(config: Mapping[str, Any], run_sections: Sequence[str],
                        defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The configuration without the sections that do not change what a run computes, nor where the corpus lies
    (``corpus.path``: the corpus digest says what it holds, so the same files moved are the same experiment); with
    ``defaults`` (the code's, by section), only the settings that differ from them, sections left empty dropped.

    >>> experiment_settings({"train": {"C": 1.0, "method": "svm"}, "history": {"path": "h"}}, ("history",),
    ...                     {"train": {"C": 1.0, "method": "rocchio"}})
    {'train': {'method': 'svm'}}
    """
    settings = {name: values for name, values in config.items() if name not in run_sections}
    if isinstance(settings.get("corpus"), Mapping):
        settings["corpus"] = {key: value for key, value in settings["corpus"].items() if key != "path"}
    if defaults is None:
        return settings
    changed: dict[str, Any] = {}
    for name, values in settings.items():
        default = defaults.get(name, _NO_DEFAULT)
        if isinstance(values, Mapping) and isinstance(default, Mapping):
            values = {key: value for key, value in values.items() if default.get(key, _NO_DEFAULT) != value}
            if values:
                changed[name] = values
        elif values != default:
            changed[name] = values
    return changed


_NO_DEFAULT = object()


def corpus_digest(files: Mapping[str, Sequence[Sequence[Any]]]) -> str:
    """The digest of the files a corpus stage read (``{path: [[relative, size, sha256], ...]}``), paths left out."""
    return digest(sorted(sorted(map(list, listing)) for listing in files.values()))


def git_commit(folder: str | None = None) -> str | None:
    """The commit checked out where sparktc's sources are (``+dirty`` with uncommitted changes); None outside git."""
    folder = folder or os.path.abspath(__file__)
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:  # out of spark-submit's zip of sparktc
        folder = os.path.dirname(folder)
    try:
        head = subprocess.run(["git", "-C", folder, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "-C", folder, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def now() -> datetime:
    """The current UTC time to the second, as records hold it."""
    return datetime.now(UTC).replace(microsecond=0)


@dataclass
class RunRecord:
    """One run, as the history stores it (:data:`SCHEMA`); build it with :meth:`start`, fill it in, then
    :meth:`finish`.
    """

    run_id: str
    kind: str
    started: datetime
    config: dict[str, Any]
    config_digest: str
    label: str = ""
    finished: datetime | None = None
    user: str = ""
    host: str = ""
    master: str = ""
    executors: int | None = None
    cores: int | None = None
    git_commit: str | None = None
    code_digest: str = ""
    corpus_digest: str | None = None
    output: str = ""
    stages: list[dict[str, Any]] = field(default_factory=list)
    seconds: float | None = None
    cpu_seconds: float | None = None
    peak_memory_bytes: int | None = None
    cpu_complete: bool | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)
    cv_micro_f1: float | None = None
    ranking: dict[str, float] = field(default_factory=dict)
    figures: dict[str, float] = field(default_factory=dict)
    exit_status: int | None = None
    error: str | None = None

    @staticmethod
    def start(run_id: str, kind: str, config: Mapping[str, Any], run_sections: Sequence[str] = (),
              label: str = "", output: str = "", started: datetime | None = None,
              defaults: Mapping[str, Any] | None = None) -> RunRecord:
        """A record of a run begun at ``started`` (default now) with ``config`` (a dict of sections), with who and
        where and which code; its configuration digest over the settings that differ from ``defaults`` when given
        (:func:`experiment_settings`).
        """
        settings = experiment_settings(config, run_sections, defaults)
        return RunRecord(run_id=run_id, kind=kind, started=started or now(), config=dict(config),
                         config_digest=digest(settings), label=label, user=getpass.getuser(),
                         host=socket.gethostname(), git_commit=git_commit(), code_digest=code_digest(), output=output)

    def add_stage(self, usage: StageUsage, status: str) -> None:
        """A stage's usage and how it ended: ``run``, ``skipped`` (its manifest was current) or ``failed``."""
        self.stages.append({"status": status, **asdict(usage)})

    def add_metrics(self, metrics: Mapping[str, Any]) -> None:
        """The headline figures of a ``metrics.json``: micro/macro P, R, F1 and the ranking measures."""
        self.metrics = {name: metrics.get(name) for name in METRICS}
        self.ranking = {name: float(value) for name, value in (metrics.get("ranking") or {}).items()}

    def add_figures(self, values: Mapping[str, Any], prefix: str = "") -> None:
        """A benchmark's headline numbers, nested mappings flattened with dots (``{"sparktc": {"micro_f1": x}}`` is
        ``sparktc.micro_f1``); a figure of None or not finite was not measured and is left out.
        """
        for key, value in values.items():
            name = f"{prefix}{key}"
            if isinstance(value, Mapping):
                self.add_figures(value, name + ".")
            elif value is None or (isinstance(value, float) and not math.isfinite(value)):
                continue
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"figure {name} of run {self.run_id} is {value!r}: a figure is a number (or None)")
            else:
                self.figures[name] = float(value)

    def finish(self, exit_status: int, error: str | None = None) -> RunRecord:
        """Close the record: the end time, totals over the stages and how the run ended."""
        self.finished, self.exit_status, self.error = now(), exit_status, error
        self.seconds = round((self.finished - self.started).total_seconds(), 3)
        measured = [s for s in self.stages if s["cpu_seconds"] is not None]
        if measured:
            self.cpu_seconds = round(sum(s["cpu_seconds"] for s in measured), 2)
            self.peak_memory_bytes = max(s["peak_memory_bytes"] or 0 for s in measured)
        return self

    def fail(self, error: BaseException) -> RunRecord:
        """Close the record of a run that ``error`` ended: its exit status and the error's type and first line."""
        first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
        return self.finish(exit_status(error), f"{type(error).__name__}: {first}"[:1000])

    def row(self) -> dict[str, Any]:
        """The record as one row of :data:`SCHEMA`."""
        fields = asdict(self)
        metrics = fields.pop("metrics")
        fields["config"] = json.dumps(fields["config"], sort_keys=True)
        fields["ranking"] = list(fields["ranking"].items())
        fields["figures"] = list(fields["figures"].items())
        return {**fields, **{name: metrics.get(name) for name in METRICS}}

    def table(self) -> pa.Table:
        """The record as a one-row Arrow table of :data:`SCHEMA`."""
        return pa.Table.from_pylist([self.row()], schema=SCHEMA)
