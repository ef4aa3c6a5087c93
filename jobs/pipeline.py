"""The whole experiment: ingest -> tokenize -> weight -> rank -> train -> evaluate (and, for the
embedded default ``corpus.format = "synthetic"``, synthesize a LYRL2004-format corpus first)."""

import sys

from sparktc import storage
from sparktc.cli import main, plan_stages, with_corpus
from sparktc.stages.evaluate import evaluate
from sparktc.stages.ingest import ingest
from sparktc.stages.rank import rank
from sparktc.stages.synthesize import synthesize_stage
from sparktc.stages.tokenize import tokenize
from sparktc.stages.train import train
from sparktc.stages.weight import weight

STAGES = (("ingest", ingest), ("tokenize", tokenize), ("weight", weight), ("rank", rank), ("train", train),
          ("evaluate", evaluate))


def plan(config, output):
    if config.corpus.format != "synthetic":
        return plan_stages(*STAGES)(config, output)
    corpus = storage.join(output, "corpus")
    synthesized = with_corpus(config, format="lyrl2004", path=corpus, hierarchy="")
    return [("synthesize", lambda spark: synthesize_stage(spark, config, corpus)),
            *plan_stages(*STAGES)(synthesized, output)]


if __name__ == "__main__":
    sys.exit(main(__doc__, plan))
