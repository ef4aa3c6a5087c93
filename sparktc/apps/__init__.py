"""Applications: what the jobs in ``jobs/`` run. The command line shared by every job (``cli``), the
whole experiment as a plan of stages (``pipeline``), each run measured and recorded in the history and MLflow
(``recording``), classifying new documents with a model bundle (``classify``), the significance tests between
runs (``compare``), a run's weighted vectors written as multi-label LIBSVM files for other tools (``export``),
a run history's trend, regression gate and report (``history_gate``), the Python API a notebook calls, the same
code as the jobs (``api``), and the ``sparktc`` command and ``spark-submit.sh``, which start the jobs through
spark-submit (``submit``).
"""

__all__ = ["api", "classify", "cli", "compare", "export", "history_gate", "pipeline", "recording", "submit"]
