"""Weight: tokens -> weighted vectors ([weight] scheme) and the training vocabulary."""

import sys

from sparktc.apps.cli import main
from sparktc.apps.pipeline import plan

if __name__ == "__main__":
    sys.exit(main(__doc__, lambda config, output: plan(config, output, ["weight"])))
