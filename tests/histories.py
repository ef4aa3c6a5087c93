"""Run histories built from :class:`sparktc.tracking.record.RunRecord` as the pipeline fills them, no Spark: each
record is appended with :func:`sparktc.tracking.history_table.append` and read back, as jobs/history.py reads them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sparktc.experiment.config import RUN_SECTIONS
from sparktc.tracking import history_table
from sparktc.tracking.record import RunRecord, digest, experiment_settings

START = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)
SETTINGS = {"corpus": {"format": "reuters21578", "category_set": "R90"},
            "train": {"method": "liblinear", "liblinear": {"C": 1.0}},
            "spark": {"conf": {"spark.sql.shuffle.partitions": 4}}}


def make(run_id: str, hour: int, *, settings: dict[str, Any] | None = None, corpus: str = "c" * 64,
         micro_f1: float | None = 0.86, macro_f1: float | None = 0.55, seconds: float = 100.0,
         cpu_seconds: float | None = 150.0, peak_memory_bytes: int | None = 2**30, cpu_complete: bool = True,
         exit_status: int = 0, error: str | None = None, commit: str = "1111111111aaaa", code: str = "d" * 64,
         label: str = "", master: str = "local[2]", history_path: str = "/tmp/h", kind: str = "run",
         figures: dict[str, float] | None = None, defaults: dict[str, Any] | None = None) -> RunRecord:
    """A finished record with the configuration digest as :meth:`RunRecord.start` computes it (over the settings
    away from ``defaults``, the defaults of the code that ran, when given).
    """
    config = {**(settings or SETTINGS), "history": {"path": history_path, "label": label}}
    started = START + timedelta(hours=hour)
    return RunRecord(
        run_id=run_id, kind=kind, started=started, finished=started + timedelta(seconds=seconds), config=config,
        config_digest=digest(experiment_settings(config, RUN_SECTIONS, defaults)), label=label, master=master,
        git_commit=commit, code_digest=code, corpus_digest=corpus, seconds=seconds, cpu_seconds=cpu_seconds,
        peak_memory_bytes=peak_memory_bytes, cpu_complete=cpu_complete,
        metrics={"micro_f1": micro_f1, "macro_f1": macro_f1}, figures=dict(figures or {}), exit_status=exit_status,
        error=error)


def with_setting(table: str, key: str, value: Any) -> dict[str, Any]:
    """:data:`SETTINGS` with one setting of ``table`` (a section, or a method's table in one: ``train.liblinear``)
    changed.
    """
    section, *inner = table.split(".")
    changed = {**SETTINGS, section: dict(SETTINGS[section])}
    values = changed[section]
    for name in inner:
        values[name] = dict(values.get(name, {}))
        values = values[name]
    values[key] = value
    return changed


def write(path: str, *records: RunRecord) -> list[dict[str, Any]]:
    """Append the records to the history at ``path``; the history's rows as jobs/history.py reads them."""
    for record in records:
        history_table.append(path, record)
    return history_table.read(path).to_pylist()
