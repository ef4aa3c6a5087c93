"""Synthesize: a corpus in the LYRL2004 format (token files, qrels, hierarchy) written into --output."""

import sys

from sparktc.apps.cli import main
from sparktc.stages.synthesize import synthesize_stage

if __name__ == "__main__":
    sys.exit(main(__doc__, lambda config, output: [(synthesize_stage(), config)]))
