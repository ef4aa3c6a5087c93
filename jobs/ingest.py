"""Ingest: read the corpus into the documents, categories and rejects tables."""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.ingest import ingest

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("ingest", ingest))))
