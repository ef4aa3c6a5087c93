"""Classify new documents with a saved model bundle (a training run's OUTPUT/model).

    ./spark-submit.sh jobs/classify.py --model runs/reuters21578/model --input docs.jsonl --output runs/classified \
        [--format parquet|jsonl] [--input-format jsonl|text|lyrl2004|libmultilabel_text] [--top-k K] [--quiet]

Writes OUTPUT/predictions (doc_id, labels, predicted, predicted_names, top_categories, top_scores)
and OUTPUT/rejects (records that could not be read, documents with no term of the model's vocabulary), and prints
the first 10 documents by doc id with their categories and scores, and the documents assigned to each category
(``--quiet``: only the stage's line and the count of records not classified).
Exit code 2 for bad arguments or an --output that may not be written (before Spark starts), 1 for a bad
bundle or input, 75 when another run holds the output.
"""

import argparse
import sys

from sparktc.apps.classify import OUTPUT_FORMATS, SHOWN_DOCUMENTS, check_arguments, classify_into
from sparktc.apps.cli import Job, run_job
from sparktc.corpora.registry import CLASSIFY_READERS
from sparktc.experiment.bundle import load_bundle
from sparktc.filesystem import absolute
from sparktc.runtime.outputs import check_output
from sparktc.runtime.session import build_session


def main() -> int:
    """Classify the documents of ``--input`` with the model bundle ``--model`` into ``--output``; the exit status
    (:func:`sparktc.apps.cli.run_job`).
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the model bundle: a training run's OUTPUT/model")
    parser.add_argument("--input", required=True, help="a file or a directory of documents (local path or Hadoop URI)")
    parser.add_argument("--output", required=True, help="directory for predictions and rejects")
    parser.add_argument("--format", default="parquet", help=f"output format: {', '.join(OUTPUT_FORMATS)}")
    parser.add_argument("--input-format", default="jsonl", help=f"input format: {', '.join(CLASSIFY_READERS)}")
    parser.add_argument("--top-k", type=int, default=5, help="how many best categories to keep with their scores")
    parser.add_argument("--quiet", action="store_true",
                        help=f"print no table of the first {SHOWN_DOCUMENTS} documents and no counts by category")
    arguments = parser.parse_args()
    model, documents = absolute(arguments.model), absolute(arguments.input)

    def prepare() -> Job:
        check_arguments(arguments.input_format, arguments.format, arguments.top_k)
        output = check_output(arguments.output, {"--model": model, "--input": documents}, "classify")
        return Job(output, "classify", lambda: build_session("sparktc-classify", {}),
                   lambda spark, held: classify_into(spark, load_bundle(spark, model), documents, held,
                                                     arguments.input_format, arguments.format, arguments.top_k,
                                                     0 if arguments.quiet else SHOWN_DOCUMENTS))

    return run_job(prepare)

if __name__ == "__main__":
    sys.exit(main())
