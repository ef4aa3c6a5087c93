"""Compare two runs on the same test set: s-, S-, T-, T'- and p-tests with Yang & Liu's Table 2 symbols.

    ./spark-submit.sh jobs/compare.py RUN_A RUN_B --output DIR [--set evaluate.average_over=...]

The evaluation settings (category set, 0/0 convention) are run A's unless overridden.
"""

import argparse
import json
import sys

from pyspark.sql import SparkSession

from sparktc.apps.cli import Job, run_job
from sparktc.apps.compare import CompareError, compare, format_comparison, write_comparison
from sparktc.filesystem import absolute
from sparktc.runtime import storage
from sparktc.runtime.config import load_section, parse_override
from sparktc.runtime.outputs import check_output
from sparktc.runtime.session import build_session


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_a", help="output directory of run A")
    parser.add_argument("run_b", help="output directory of run B")
    parser.add_argument("--output", required=True, help="directory for comparison.json and comparison.md")
    parser.add_argument("--set", action="append", default=[], metavar="evaluate.KEY=VALUE")
    arguments = parser.parse_args()
    run_a, run_b = absolute(arguments.run_a), absolute(arguments.run_b)

    def prepare() -> Job:
        for override in arguments.set:
            parse_override(override)
        output = check_output(arguments.output, {"RUN_A": run_a, "RUN_B": run_b}, "compare")
        return Job(output, "compare", lambda: build_session("sparktc-compare", {}),
                   lambda spark, held: _compare(spark, run_a, run_b, held.output, arguments.set))

    return run_job(prepare)


def _compare(spark: SparkSession, run_a: str, run_b: str, output: str, overrides: list[str]) -> None:
    for run in (run_a, run_b):
        if not storage.exists(spark, storage.join(run, "metrics.json")):
            raise CompareError(f"no metrics.json in {run}; run jobs/pipeline.py (or jobs/evaluate.py) there first")
    recorded = json.loads(storage.read_text(spark, storage.join(run_a, "metrics.json")))["settings"]
    settings = load_section("evaluate", recorded["evaluate"], overrides)
    result = compare(spark, run_a, run_b, settings, recorded["corpus"]["format"])
    write_comparison(spark, output, result)
    print(format_comparison(result), flush=True)

if __name__ == "__main__":
    sys.exit(main())
