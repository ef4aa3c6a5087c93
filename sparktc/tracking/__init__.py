"""Tracking: where runs are recorded, above the stages and below the applications. The record every pipeline
and benchmark run makes of its code, configuration, corpus, cost per stage and figures (``record``), and the
history table of those records (``history_table``), and its trend and regression gate (``trend``); and the same record
logged as an MLflow run with its reports (``mlflow_run``, the optional extra ``sparktc[track]``, imported only when
``[track] mlflow_uri`` asks for it), whose store is checked before Spark starts by a probe of a few seconds
(``store_probe``: MLflow installed, a store it has, a sqlite database that takes a write, a server that answers).
"""

__all__ = ["history_table", "mlflow_run", "record", "store_probe", "trend"]
