"""Predict and evaluate: test scores, contingency tables, micro/macro F1."""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.evaluate import evaluate

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("evaluate", evaluate))))
