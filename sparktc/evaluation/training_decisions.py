"""The second line of defence against a useless model: what a trained decision rule does on its own training
documents.

The train stage scores the training documents with the models it wrote, as evaluate scores the test documents,
and counts per category the documents assigned; :func:`training_decisions` turns those counts into the categories
the rule assigns no training document or every one, and :func:`training_decisions_lines` into the sentences
the train stage prints on stderr and ``report.md`` shows. A category the rule never assigns on the documents it
was fitted to is very unlikely to be assigned on new ones; when that holds for every category the model is
degenerate (micro-F1 0), as a fixed threshold above every score makes it.

Pure numpy, no Spark.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["NAMED", "training_decisions", "training_decisions_lines"]


#: The categories a training-decisions warning names before "and N more".
NAMED = 5


def training_decisions(codes: NDArray[np.object_], assigned: NDArray[np.int64], positives: NDArray[np.int64],
                       documents: int) -> dict[str, Any]:
    """What a trained rule does on its own training documents (the second line of defence against a useless model):
    over the categories with a training positive (``categories``), those it assigns no training document
    (``assign_nothing``) and those it assigns every one (``assign_everything``), by code; ``degenerate`` when
    either holds for every such category. ``assigned`` and ``positives`` are per category of ``codes``.
    """
    learnable = np.asarray(positives) > 0
    assigned = np.asarray(assigned)
    nothing = sorted(str(c) for c in np.asarray(codes)[learnable & (assigned == 0)])
    everything = sorted(str(c) for c in np.asarray(codes)[learnable & (assigned == documents)])
    n = int(learnable.sum())
    return {"documents": int(documents), "categories": n, "assign_nothing": nothing,
            "assign_everything": everything, "degenerate": n > 0 and n in (len(nothing), len(everything))}


def training_decisions_lines(record: Mapping[str, Any]) -> list[str]:
    """One sentence per finding of :func:`training_decisions` (none: the rule assigns some, not all, training
    documents to every category with a training positive), for stderr and ``report.md``.
    """
    lines, n = [], record["categories"]
    for key, what, every in (("assign_nothing", "no training document", "any"),
                             ("assign_everything", "every training document", "each")):
        found = record[key]
        if not found:
            continue
        if len(found) == n:
            lines.append(f"the decision rule assigns {what} to {every} of the {n} categories with a training "
                         "positive: the model is degenerate; choose a threshold within the method's scores (its "
                         "natural one) or train.thresholding = 'scutfbr'")
        else:
            named = ", ".join(found[:NAMED]) + (f" and {len(found) - NAMED} more" if len(found) > NAMED else "")
            lines.append(f"the decision rule assigns {what} to {len(found)} of the {n} categories with a training "
                         f"positive ({named}); expect it to do the same on the test documents")
    return lines
