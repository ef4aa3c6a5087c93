r"""A scaling curve without a bigger machine: a run's Spark event log replayed on N task slots.

    .venv/bin/python -m benchmarks.scaling EVENT_LOG [--cores 1,2,4,16,64] [--markdown]

EVENT_LOG is what a run writes with ``--set spark.event_log=DIR``: that directory when it holds one application,
the application's own ``eventlog_v2_*`` directory (Spark's rolling log: ``events_<n>_*`` files, read in order), or
one event-log file. Plain JSON lines and Spark's default zstd codec are read (``spark.eventLog.compression.codec``;
lz4, lzf and snappy are Spark's own framings, which nothing here reads).

The model, as Sparklens's: the driver runs one job at a time, so the run is the driver's own time (before the
first job, between jobs, after the last, and inside a job where no task runs: submitting it, scheduling between
its stages, collecting its result), counted serial at every core count, plus each job replayed on N slots:

* A task occupies a slot from its launch to its finish (``Task Info``: ``Launch Time`` to ``Finish Time``). That is
  the duration replayed, not ``Executor Run Time`` or ``Executor CPU Time``: those leave out deserialization and
  result serialization, and the CPU time of a PySpark task is the JVM's alone (a task that spent 2.2 s in its Python
  worker reports 0.02 CPU-s). Every attempt replays (failed and speculative ones held a slot too).
* A job's stages run as the log shows: a stage starts when its parents (``Parent IDs``) in the job have finished; a
  stage the log lists but never ran (its shuffle output reused) takes no time.
* List scheduling in launch order: each task, in the order Spark launched it, takes the slot that frees first.
  That is what Spark's FIFO scheduler does on N cores (it offers a stage's pending tasks by index, knowing nothing
  of their durations); longest-first would project a wall Spark does not reach. Jobs that overlap in time (from
  driver threads) replay together as one.

Each job belongs to the sparktc stage whose job group it ran in (``spark.jobGroup.id`` = ``sparktc-<stage>``, set by
:func:`sparktc.runtime.stage_report.stage` and the runner's publishing step); a job outside any group is
``(no stage)``. A stage's driver time is the time inside its jobs where no task runs and the gaps between its own
consecutive jobs; the time before the first job, after the last and between jobs of different stages (the
driver's setup of a stage before its first job included) is the ``outside stages`` line. The application's wall
is ``SparkListenerApplicationStart`` to ``SparkListenerApplicationEnd``: a command's wall adds the JVM's start
before it and its exit after.

Prints, per stage, the number of tasks, the task-seconds, the serial driver seconds and the projected wall at each
core count, a total line, and the application's measured wall beside the replay at the cores it ran on (the
executors' ``Total Cores``). Exit code 0, 1 for a log that cannot be read (said in one line), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness_scaling import CORES, StageLine, parse_events, project, read_events
from benchmarks.harness_tables import count, seconds
from sparktc.errors import InputError
from sparktc.runtime.markdown import markdown_table

# --- the command -------------------------------------------------------------------------------------------------

def render(lines: Sequence[StageLine], cores: Sequence[int], markdown: bool) -> str:
    """The projection as a markdown table, or as aligned text columns."""
    header = ["stage", "tasks", "task-s", "driver s", *(f"{n} core{'s' * (n > 1)}" for n in cores)]
    rows = [[line.label, count(line.tasks), seconds(line.task_seconds), seconds(line.driver_seconds),
             *(seconds(line.walls[n]) for n in cores)] for line in lines]
    if markdown:
        return markdown_table(header, rows)
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                               for i, (cell, width) in enumerate(zip(row, widths, strict=True)))
                     for row in [header, *rows])


def core_counts(text: str) -> list[int]:
    """The argparse type of ``--cores``: comma-separated integers >= 1."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated core counts, e.g. 1,2,4, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected core counts >= 1, got {text!r}")
    return values


def main(argv: Sequence[str] | None = None) -> int:
    """Print the projection of the event log given on the command line; the exit code."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("event_log", metavar="EVENT_LOG", type=Path,
                        help="the run's spark.event_log directory, its application's directory, or one log file")
    parser.add_argument("--cores", type=core_counts, default=list(CORES),
                        help="core counts to project at, comma-separated (default 1,2,4,16,64)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    arguments = parser.parse_args(argv)
    try:
        application = parse_events(read_events(arguments.event_log))
    except (InputError, OSError) as error:
        print(f"scaling: error: {error}", file=sys.stderr)
        return 1
    # The cores the run used projected with the asked ones: every job is replayed once per core count, not again.
    lines = project(application, [*arguments.cores, *([application.cores] if application.cores else [])])
    print(render(lines, arguments.cores, arguments.markdown))
    if application.cores:  # none in a log without SparkListenerExecutorAdded
        own = lines[-1].walls[application.cores]
        cores = f"{application.cores} core{'s' * (application.cores != 1)}"
        print(f"\nmeasured: the application ran {seconds(application.wall)} s on {cores}; replayed at {cores}: "
              f"{seconds(own)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
