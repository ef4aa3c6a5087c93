"""Compare two runs on the same test set: s-, S-, T-, T'- and p-tests with Yang & Liu's Table 2 symbols.

    ./spark-submit.sh jobs/compare.py RUN_A RUN_B --output DIR [--set evaluate.average_over=...]

The evaluation settings (category set, 0/0 convention) are run A's unless overridden.
"""

import argparse
import json
import sys

from sparktc import storage
from sparktc.cli import fail
from sparktc.config import ConfigError, absolute, load_section, parse_override
from sparktc.session import build_session
from sparktc.stages.compare import CompareError, compare, format_comparison, write_comparison


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_a", help="output directory of run A")
    parser.add_argument("run_b", help="output directory of run B")
    parser.add_argument("--output", required=True, help="directory for comparison.json and comparison.md")
    parser.add_argument("--set", action="append", default=[], metavar="evaluate.KEY=VALUE")
    arguments = parser.parse_args()
    try:
        for override in arguments.set:
            parse_override(override)
    except ConfigError as error:
        return fail(error)
    run_a, run_b, output = (absolute(path) for path in (arguments.run_a, arguments.run_b, arguments.output))
    spark = build_session("sparktc-compare", {})
    try:
        for run in (run_a, run_b):
            if not storage.exists(spark, storage.join(run, "metrics.json")):
                raise CompareError(f"no metrics.json in {run}; run jobs/pipeline.py (or jobs/evaluate.py) there first")
        recorded = json.loads(storage.read_text(spark, storage.join(run_a, "metrics.json")))["settings"]
        settings = load_section("evaluate", recorded["evaluate"], arguments.set)
        result = compare(spark, run_a, run_b, settings, recorded["corpus"]["format"])
        write_comparison(spark, output, result)
        print(format_comparison(result), flush=True)
    except ValueError as error:  # ConfigError (exit 2) and CompareError (exit 1) are ValueErrors
        return fail(error)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
