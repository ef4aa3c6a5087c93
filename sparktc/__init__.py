"""sparktc: the classic text-categorization experiments on Apache Spark.

The Python API (:mod:`sparktc.apps.api`) is importable from here: ``sparktc.run_pipeline``, ``sparktc.load_model``,
``sparktc.classify``. It is loaded on first use, so that the Spark-free parts of sparktc import without pyspark.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["classify", "load_model", "run_pipeline"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from sparktc.apps import api

        return getattr(api, name)
    raise AttributeError(f"module 'sparktc' has no attribute {name!r}")
