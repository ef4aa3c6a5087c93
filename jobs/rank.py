"""Rank terms: global chi-square scores and ranks over the training set."""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.rank import rank

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("rank", rank))))
