"""Export a run's weighted vectors as multi-label LIBSVM files: DIR/train.svm, DIR/test.svm (and the doc id of
each line in DIR/train.ids, DIR/test.ids; the labels and counts in DIR/export.json).

    ./spark-submit.sh jobs/export_libsvm.py RUN --output DIR

RUN is a run whose weight stage has finished (jobs/pipeline.py, or jobs/ingest.py, jobs/tokenize_documents.py and
jobs/weight.py); DIR must not exist. Lines: "label1,label2 index:value ...", index = term_id + 1. Exit code 2 for
bad arguments or a RUN or DIR refused (before Spark starts), 1 when the run's vectors are not current, 75 when
another run holds RUN.
"""

import argparse
import sys

from sparktc.apps.cli import Job, run_job
from sparktc.apps.export import check_export, export_libsvm
from sparktc.runtime.session import build_session


def main() -> int:
    """Export the weighted vectors of RUN as LIBSVM ``train.svm`` and ``test.svm`` under ``--output``; the exit status
    (:func:`sparktc.apps.cli.run_job`).
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", metavar="RUN", help="output directory of a run whose weight stage has finished")
    parser.add_argument("--output", required=True, help="new directory for train.svm and test.svm")
    arguments = parser.parse_args()

    def prepare() -> Job:
        run, output = check_export(arguments.run, arguments.output)
        # The job holds RUN, its input, so that no run rewrites the vectors while they are read.
        return Job(run, "run", lambda: build_session("sparktc-export", {}),
                   lambda spark, held: export_libsvm(spark, run, output), reads="RUN")

    return run_job(prepare)


if __name__ == "__main__":
    sys.exit(main())
