"""``python -m sparktc COMMAND ...``: the ``sparktc`` command (:mod:`sparktc.apps.submit`)."""

import sys

from sparktc.apps.submit import main

if __name__ == "__main__":
    sys.exit(main())
