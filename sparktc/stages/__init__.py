"""Stages: the pipeline's steps, each reading the tables earlier stages wrote and writing its own, with
counts in and out: ``synthesize`` (the embedded corpus), ``ingest``, ``tokenize``, ``weight``, ``rank``,
``train`` and ``evaluate``. Each is a thin Spark layer over the pure functions of ``features``,
``models`` and ``evaluation``. Ingest's parts are modules of their own: its parsing tasks (``ingest_parsing``),
the assembly of corpora whose records carry their labels (``ingest_assemblies``) and of LYRL2004's, labelled by
the qrels (``ingest_qrels``), and the tables it writes (``ingest_outputs``).
"""

__all__ = ["evaluate", "ingest", "ingest_assemblies", "ingest_outputs", "ingest_parsing", "ingest_qrels", "rank",
           "synthesize", "tokenize", "train", "weight"]
