"""Ingest: read the corpus into the documents, categories and rejects tables."""

import sys

from sparktc.apps.cli import main
from sparktc.apps.pipeline import plan

if __name__ == "__main__":
    sys.exit(main(__doc__, lambda config, output: plan(config, output, ["ingest"])))
