"""Tokenize: documents -> tokens by the LYRL2004 recipe."""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.tokenize import tokenize

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("tokenize", tokenize))))
