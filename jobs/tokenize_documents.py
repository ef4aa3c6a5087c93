"""Tokenize: documents -> tokens by the LYRL2004 recipe. (Not named tokenize.py: that would shadow the standard library module of that name.)"""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.tokenize import tokenize

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("tokenize", tokenize))))
