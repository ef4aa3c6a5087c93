"""A run history's trend table and regression gate, and its report; needs no Spark.

    jobs/history.py HISTORY [--report DIR] [--run RUN_ID|latest] [--baseline RUN_ID|first|previous] [--all]
                    [--max-f1-drop 0.002] [--max-time-ratio 1.25] [--max-cpu-ratio 1.25] [--max-memory-ratio 1.5]
                    [--label L] [--kind K] [--strict]

HISTORY is a [history] path (one Parquet record per run). A file in it that is not a run record (no run_id
column, or not Parquet) is named on stderr and skipped (--strict: refused, exit 1); a file with a run_id but
without the record's columns and types is refused, naming the file and the column. Prints how many records were
read from how many files and how many files were skipped. Prints one line per run, then checks the run (the latest
by default) against its baseline: the latest earlier run that succeeded with the same configuration and corpus,
or the run --baseline names (a run id, or first; what changed is said first: code, each setting, corpus).
--all checks every run, each against its own baseline, or every run after the named one against it: --all
--baseline first flags each run that fell behind the first. A run id may be given by a unique prefix.
--label and --kind keep the runs of one [history] label or of one kind: pipeline (a sparktc job), or
benchmark:NAME (a run of benchmarks/NAME.py with --history; the pipeline runs it starts carry the label
benchmark:NAME).

Exit status 3 when a checked run regressed (one REGRESSION line per figure: an F1 drop beyond --max-f1-drop, a
time, CPU or memory ratio beyond its limit, or a failed run; a benchmark's headline figures, sparktc.micro_f1 or
peer.seconds, by the rule of their last name), 0 otherwise; 2 for arguments refused, 1 for a history that cannot
be read.
"""

import argparse
import sys

from sparktc.apps.history_gate import run
from sparktc.tracking.trend import LATEST, PREVIOUS, Tolerances


def main() -> int:
    """Parse the arguments and run :func:`sparktc.apps.history_gate.run`; its exit status."""
    defaults = Tolerances()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("history", metavar="HISTORY", help="the history directory ([history] path)")
    parser.add_argument("--report", default="", metavar="DIR", help="write report.md, f1.png and seconds.png there")
    checked = parser.add_mutually_exclusive_group()
    checked.add_argument("--run", default=LATEST, metavar="RUN_ID", help="the run to check (default: latest)")
    checked.add_argument("--all", action="store_true", help="check every run (after a named baseline)")
    parser.add_argument("--baseline", default=PREVIOUS, metavar="RUN_ID",
                        help="the run to compare with: a run id, first, or previous (the default: the latest "
                             "earlier run that succeeded with the same configuration and corpus)")
    for name, what in (("max_f1_drop", "the absolute drop of micro- or macro-F1"),
                       ("max_time_ratio", "the ratio of wall seconds"), ("max_cpu_ratio", "the ratio of CPU-seconds"),
                       ("max_memory_ratio", "the ratio of peak memory")):
        default = getattr(defaults, name)
        parser.add_argument("--" + name.replace("_", "-"), dest=name, type=float, default=default,
                            help=f"{what} to the baseline beyond which a run regressed (default {default})")
    parser.add_argument("--label", default="", help="only the runs of this [history] label")
    parser.add_argument("--kind", default="", help="only the runs of this kind: pipeline, or benchmark:NAME")
    parser.add_argument("--strict", action="store_true",
                        help="refuse a history holding a file that is not a run record (default: skip it, with a "
                             "warning naming it)")
    arguments = parser.parse_args()
    tolerances = {name: getattr(arguments, name) for name in vars(defaults)}
    return run(arguments.history, arguments.report, arguments.run, arguments.baseline, arguments.all, tolerances,
               arguments.label, arguments.kind, arguments.strict)


if __name__ == "__main__":
    sys.exit(main())
