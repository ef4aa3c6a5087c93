"""The whole experiment: ingest -> tokenize -> weight -> rank -> train -> evaluate (and, for the
embedded default ``corpus.format = "synthetic"``, synthesize a LYRL2004-format corpus first).

Rerun with the same --output after a failure or a change of settings: stages whose manifests are
current are skipped, the rest recomputed; --force recomputes everything.
"""

import sys

from sparktc.apps.cli import main
from sparktc.apps.pipeline import plan

if __name__ == "__main__":
    sys.exit(main(__doc__, plan))
