"""sparktc: the classic text-categorization experiments on Apache Spark."""

__version__ = "0.1.0"
