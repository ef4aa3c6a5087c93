"""Stages: the pipeline's steps, each reading the tables earlier stages wrote and writing its own, with
counts in and out: ``synthesize`` (the embedded corpus), ``ingest`` (a package: its parsing tasks, the assemblies
of each kind of format and the tables it writes), ``tokenize``, ``weight``, ``rank``, ``train`` and ``evaluate``.
Each is a thin Spark layer over the pure functions of ``features``, ``models`` and ``evaluation``.
"""

__all__ = ["evaluate", "ingest", "rank", "synthesize", "tokenize", "train", "weight"]
