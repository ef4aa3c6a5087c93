"""pyspark.ml stages over the same code as sparktc's jobs (issue 41)."""

from sparktc.ml.classifier import OneVsRestClassifier, OneVsRestClassifierModel

__all__ = ["OneVsRestClassifier", "OneVsRestClassifierModel"]
