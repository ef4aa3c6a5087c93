"""Where runs are recorded: the run record every pipeline and benchmark run makes (``record``), the history
table of those records and its regression gate (``history``), and MLflow, an optional extra (``mlflow_run``).
"""

__all__ = ["history", "mlflow_run", "record"]
