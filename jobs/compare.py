"""Compare k >= 2 runs on the same test set, every pair: s-, S-, T-, T'- and p-tests with Yang & Liu's symbols.

    ./spark-submit.sh jobs/compare.py RUN_1 RUN_2 [... RUN_k] --output DIR [--set evaluate.average_over=...]

Pairs in the order given: (1, 2), (1, 3), ..., (k-1, k). Writes comparison.json, comparison.md (Yang & Liu's
Tables 2 and 3, one row per pair, and Figures 4-5), pairs/I_vs_J.md (each pair's statistics and P-values)
and f1_by_training_frequency.png, .svg and .pdf (per-category F1 against training-set frequency, one curve per run), all
computed first, written aside and then moved into place: an earlier comparison in DIR is replaced only by a
complete one. A test whose statistic is undefined (two runs that agree, a run and its rerun, leave nothing to
test) reads "undefined" with its reason and keeps Yang & Liu's "~". The evaluation settings (category set, 0/0
convention) are run 1's unless overridden.
"""

import argparse
import json
import sys

from pyspark.sql import SparkSession

from sparktc.apps.cli import Job, run_job
from sparktc.apps.compare import CompareError, check_runs, compare_runs, unevaluated, write_comparisons
from sparktc.experiment.config import load_section, parse_override
from sparktc.filesystem import local_path
from sparktc.runtime import storage
from sparktc.runtime.outputs import Claim, check_output
from sparktc.runtime.session import build_session


def main() -> int:
    """Compare the RUN directories into ``--output``; the exit status (:func:`sparktc.apps.cli.run_job`)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", metavar="RUN", help="output directory of a run (at least two)")
    parser.add_argument("--output", required=True, help="directory for comparison.json, comparison.md and the plot")
    parser.add_argument("--set", action="append", default=[], metavar="evaluate.KEY=VALUE")
    arguments = parser.parse_args()

    def prepare() -> Job:
        runs = check_runs(arguments.runs)
        for override in arguments.set:
            parse_override(override)
        output = check_output(arguments.output, {f"RUN_{i}": run for i, run in enumerate(runs, 1)}, "compare")
        return Job(output, "compare", lambda: build_session("sparktc-compare", {}),
                   lambda spark, held: _compare(spark, runs, held, arguments.set))

    return run_job(prepare)


def _compare(spark: SparkSession, runs: list[str], held: Claim, overrides: list[str]) -> None:
    for run in runs:  # a local run's was looked for before Spark started (check_runs)
        if local_path(run) is None and not storage.exists(spark, storage.join(run, "metrics.json")):
            raise CompareError(unevaluated(run))
    recorded = json.loads(storage.read_text(spark, storage.join(runs[0], "metrics.json")))["settings"]
    settings = load_section("evaluate", recorded["evaluate"], overrides)
    record, tables = compare_runs(spark, runs, settings, recorded["corpus"]["format"])
    # staged in the job's own staging directory, which the next job holding the output sweeps if this one dies
    print(write_comparisons(spark, held.output, record, tables, storage.join(held.staging, "compare")), flush=True)


if __name__ == "__main__":
    sys.exit(main())
