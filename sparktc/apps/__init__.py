"""Applications: what the jobs in ``jobs/`` run. The command line shared by every job (``cli``), the
whole experiment as a plan of stages (``pipeline``), classifying new documents with a model bundle
(``classify``), the significance tests between runs (``compare``), a run's weighted vectors
written as multi-label LIBSVM files for other tools (``export``), and a run history's trend, regression gate
and report (``history``).
"""

__all__ = ["classify", "cli", "compare", "export", "history", "pipeline"]
