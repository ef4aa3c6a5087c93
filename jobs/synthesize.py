"""Synthesize: a corpus in the LYRL2004 format written into --output: the token files, the qrels of the topics,
industries and regions, the topics and industries hierarchies and the regions list.
"""

import sys

from sparktc.apps.cli import main
from sparktc.stages.synthesize import synthesize_stage

if __name__ == "__main__":
    sys.exit(main(__doc__, lambda config, output: [(synthesize_stage(), config)]))
