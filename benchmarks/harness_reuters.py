"""Part of the benchmark harness (:mod:`benchmarks.harness`): what the Reuters-21578 driver benchmarks share
(``benchmarks/reuters21578.py``, ``benchmarks/yang_liu_1999.py``): the base configuration, the three category sets
as overrides, and the one-line pipeline command a table lists for a run.
"""

from __future__ import annotations

BASE = "conf/reuters21578.toml"
SETS = {
    "R(10)": ["corpus.category_set=R10", "corpus.document_filter=none"],
    "R(90)": ["corpus.category_set=R90", "corpus.document_filter=aptemod"],
    "R(115)": ["corpus.category_set=R115", "corpus.document_filter=none"],
}


def command(config: str, overrides: list[str], output: str, preset: str = "") -> str:
    """The one-line pipeline command of a method: ``config`` (under ``preset``, if any) with the corpus as
    ``$CORPUS`` and ``overrides``, into ``output``.
    """
    sets = " ".join(f"--set '{o}'" if " " in o else f"--set {o}" for o in overrides)
    named = f"--preset {preset} " if preset else ""
    return (f"./spark-submit.sh jobs/pipeline.py --config {config} {named}--set corpus.path=$CORPUS {sets} "
            f"--output {output}").replace("  ", " ")
