"""Train: one LIBLINEAR binary problem per category, in parallel."""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.train import train

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("train", train))))
