"""Rank terms: global chi-square scores and ranks over the training set."""

import sys

from sparktc.apps.cli import main
from sparktc.apps.pipeline import plan

if __name__ == "__main__":
    sys.exit(main(__doc__, lambda config, output: plan(config, output, ["rank"])))
