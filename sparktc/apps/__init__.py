"""Applications: what the jobs in ``jobs/`` run. The command line shared by every job (``cli``), the
whole experiment as a plan of stages (``pipeline``), classifying new documents with a model bundle
(``classify``), the significance tests between runs (``compare``), and a run's weighted vectors
written as multi-label LIBSVM files for other tools (``export``).
"""

__all__ = ["classify", "cli", "compare", "export", "pipeline"]
