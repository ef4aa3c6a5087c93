"""What each stage reports: rows in, rows out, rows set aside by reason, and wall time; they must add up."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from sparktc.runtime.progress import cleared
from sparktc.runtime.session import labelled_jobs


@dataclass
class StageReport:
    """What a stage reports: its rows in and out, the rows it set aside by reason, its time and its own details."""

    stage: str
    rows_in: int = 0
    rows_out: int = 0
    set_aside: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def reconcile(self) -> None:
        """Refuse to report a stage whose counts do not add up: a document lost is a bug, never silent."""
        accounted = self.rows_out + sum(self.set_aside.values())
        if accounted != self.rows_in:
            raise RuntimeError(
                f"{self.stage}: {self.rows_in} rows in but {self.rows_out} out + "
                f"{sum(self.set_aside.values())} set aside {self.set_aside}; please report this as a bug"
            )

    def line(self) -> str:
        """The line the stage prints: its counts, the rows set aside by reason and its time in seconds."""
        aside = ", ".join(f"{reason} {count:,}" for reason, count in sorted(self.set_aside.items()) if count)
        text = f"sparktc: {self.stage:<9} in {self.rows_in:>10,}  out {self.rows_out:>10,}"
        if aside:
            text += f"  set aside: {aside}"
        return text + f"  [{self.seconds:.1f} s]"

    def as_dict(self) -> dict[str, Any]:
        """The report as a dict of plain values."""
        return asdict(self)


#: Whether stage lines are kept unprinted in this thread's context (:func:`quiet`).
_QUIET: ContextVar[bool] = ContextVar("sparktc_quiet_stages", default=False)


@contextmanager
def quiet() -> Iterator[None]:
    """Stages run within print no line: a library call whose caller reads none, such as a Spark ML fit (many of them
    in a ``CrossValidator``, from several threads). Warnings and errors still go to standard error.
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


@contextmanager
def stage(spark: SparkSession, name: str) -> Iterator[StageReport]:
    """Time a stage, label its Spark jobs ``sparktc: <name>`` in the UI, check and print its counts."""
    report = StageReport(name)
    started = time.perf_counter()
    with labelled_jobs(spark, name, f"sparktc: {name}"):
        yield report
    report.seconds = round(time.perf_counter() - started, 3)
    report.reconcile()
    if not _QUIET.get():
        with cleared():  # not after the stage's progress line on a terminal
            print(report.line(), flush=True)

