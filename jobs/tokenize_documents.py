"""Tokenize: documents -> tokens by the LYRL2004 recipe.

Not named tokenize.py: that would shadow the standard library module of that name.
"""

import sys

from sparktc.apps.cli import main
from sparktc.apps.pipeline import plan

if __name__ == "__main__":
    sys.exit(main(__doc__, lambda config, output: plan(config, output, ["tokenize"])))
