"""Classify new documents with a saved model bundle (a training run's OUTPUT/model).

    ./spark-submit.sh jobs/classify.py --model runs/reuters21578/model --input docs.jsonl --output runs/classified \
        [--format parquet|jsonl] [--input-format jsonl|text|lyrl2004] [--top-k K]

Writes OUTPUT/predictions (doc_id, labels, predicted, predicted_names, top_categories, top_scores)
and OUTPUT/rejects (records that could not be read, documents with no term of the model's vocabulary).
Exit code 2 for bad arguments (before Spark starts), 1 for a bad bundle or input.
"""

import argparse
import sys

from sparktc.cli import fail
from sparktc.config import ConfigError, absolute
from sparktc.session import build_session
from sparktc.stages.bundle import load_bundle
from sparktc.stages.classify import OUTPUT_FORMATS, READERS, check_arguments, classify


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the model bundle: a training run's OUTPUT/model")
    parser.add_argument("--input", required=True, help="a file or a directory of documents (local path or Hadoop URI)")
    parser.add_argument("--output", required=True, help="directory for predictions and rejects")
    parser.add_argument("--format", default="parquet", help=f"output format: {', '.join(OUTPUT_FORMATS)}")
    parser.add_argument("--input-format", default="jsonl", help=f"input format: {', '.join(READERS)}")
    parser.add_argument("--top-k", type=int, default=5, help="how many best categories to keep with their scores")
    arguments = parser.parse_args()
    try:
        check_arguments(arguments.input_format, arguments.format, arguments.top_k)
    except ConfigError as error:
        return fail(error)
    spark = build_session("sparktc-classify", {})
    try:
        classify(spark, load_bundle(spark, absolute(arguments.model)), absolute(arguments.input),
                 absolute(arguments.output), arguments.input_format, arguments.format, arguments.top_k)
    except ValueError as error:  # BundleError, ClassifyError, unreadable files
        return fail(error)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
