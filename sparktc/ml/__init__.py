"""pyspark.ml stages over the same code as the jobs (issue 41), for a ``pyspark.ml.Pipeline``, ``CrossValidator`` and
ML persistence: the multi-label one-vs-rest classifier (``classifier``), an Estimator over any registered method that
trains by the train stage's own code and whose Model adds the category codes, indices and scores Spark ML's
``MultilabelClassificationEvaluator`` reads. ``__all__`` lists the stages, imported from here.
"""

from sparktc.ml.classifier import OneVsRestClassifier, OneVsRestClassifierModel

__all__ = ["OneVsRestClassifier", "OneVsRestClassifierModel"]
