"""Applications: what the jobs in ``jobs/`` run. The command line shared by every job (``cli``), the
whole experiment as a plan of stages (``pipeline``), classifying new documents with a model bundle
(``classify``), and the significance tests between runs (``compare``)."""

__all__ = ["classify", "cli", "compare", "pipeline"]
