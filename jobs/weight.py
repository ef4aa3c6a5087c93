"""Weight: tokens -> ltc vectors and the training vocabulary."""

import sys

from sparktc.cli import main, plan_stages
from sparktc.stages.weight import weight

if __name__ == "__main__":
    sys.exit(main(__doc__, plan_stages(("weight", weight))))
