"""sparktc's stages as Spark ML stages (pyspark.ml), over the same code as the jobs: a ``Pipeline`` of them fits and
transforms as the tokenize, weight and rank stages do, and saves and loads as Spark ML's own stages do.

- :class:`Analyzer` (``text``: text -> terms, the tokenize stage's analyzers);
- :class:`TermWeighting` / :class:`TermWeightingModel` (``weighting``: terms -> ``VectorUDT`` vectors, the weight
  stage's vocabulary and weights: ltc, tfidf, sklearn, binary, supervised);
- :class:`TermSelector` / :class:`TermSelectorModel` (``selection``: the rank stage's order, the ``topK`` best terms
  kept);
- :class:`ArraysToVector` / :class:`VectorToArrays` (``vectors``: sparktc's ``indices``/``values`` arrays <->
  ``VectorUDT``, and how every stage emits vectors per Arrow batch);
- :class:`OneVsRestClassifier` / :class:`OneVsRestClassifierModel` (``classifier``: the multi-label one-vs-rest
  classifier, trained by the train stage's own code on labels as codes or as ``StringIndexer``'s indices, with or
  without ids, its Model adding the category codes, the indices
  :class:`pyspark.ml.evaluation.MultilabelClassificationEvaluator` reads and the scores; ``classifier_params``: its
  Params, the settings every method shares; ``training_tables``: the tables its fit writes for the stages);
- its ``classifier``, one class per method, holding the method's own settings (``methods``: :class:`Liblinear`,
  :class:`Rocchio`, :class:`KNN`, :class:`LLSF`, :class:`NNet`, :class:`SklearnLinear`), as
  ``pyspark.ml.classification.OneVsRest`` takes a classifier: ``OneVsRestClassifier(classifier=KNN(k=30))``;
- their Params (``params``: each setting's type, default, rule and meaning are its configuration field's; each
  Param with its getter and setter, a Model's setters only for what its transform reads, as pyspark.ml's), the fits'
  counts in Spark tasks (``counts``) and saving and loading (``persistence``: Spark ML's layout, so a saved
  ``PipelineModel`` holding them loads in a fresh session).

Example (Reuters-21578 R(90): the ``documents`` table of a run of conf/reuters21578.toml in runs/reuters21578, and
the SMART stop list of ../shared/data; one category's labels for Spark's ``LinearSVC``)::

    from pyspark.ml import Pipeline
    from pyspark.ml.classification import LinearSVC
    from pyspark.sql import functions as F
    from sparktc.ml import Analyzer, TermSelector, TermWeighting

    documents = spark.read.parquet("runs/reuters21578/documents")
    train = documents.where("split = 'train'").withColumn(
        "label", F.array_contains("labels", "earn").cast("double"))
    pipeline = Pipeline(stages=[
        Analyzer(inputCol="text", outputCol="terms", stopList="../shared/data/stopwords/smart_english.stop"),
        TermWeighting(inputCol="terms", outputCol="features", scheme="ltc"),
        TermSelector(featuresCol="features", labelsCol="labels", outputCol="selected", topK=2000),
        LinearSVC(featuresCol="selected", labelCol="label")])
    model = pipeline.fit(train)
    model.write().overwrite().save("models/earn")
"""

from sparktc.ml.classifier import OneVsRestClassifier, OneVsRestClassifierModel
from sparktc.ml.methods import KNN, LLSF, Liblinear, NNet, Rocchio, SklearnLinear
from sparktc.ml.selection import TermSelector, TermSelectorModel
from sparktc.ml.text import Analyzer
from sparktc.ml.vectors import ArraysToVector, VectorToArrays
from sparktc.ml.weighting import TermWeighting, TermWeightingModel

__all__ = ["KNN", "LLSF", "Analyzer", "ArraysToVector", "Liblinear", "NNet", "OneVsRestClassifier",
           "OneVsRestClassifierModel", "Rocchio", "SklearnLinear", "TermSelector", "TermSelectorModel", "TermWeighting",
           "TermWeightingModel", "VectorToArrays"]
