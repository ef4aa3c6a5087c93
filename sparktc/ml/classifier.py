"""sparktc's multi-label one-vs-rest classifier as a pyspark.ml Estimator, trained by the train stage's own code.

:class:`OneVsRestClassifier` takes a DataFrame of training documents, a Spark ML vector per document (``featuresCol``),
its categories (``labelsCol``: codes, array<string>, or indices, array<double>, as ``StringIndexer`` makes them, named
by ``labelNames`` or the column's metadata) and, when it has one, an id (``idCol``; without it, each row's place in the
DataFrame), and fits one classifier per category by the method its ``classifier`` names (:mod:`sparktc.ml.methods`:
``KNN(k=30)``, as ``pyspark.ml.classification.OneVsRest(classifier=...)`` takes one), with the thresholding and the
[tune] search of the pipeline's train stage. It does not re-implement training: it writes the documents as the tables
the train stage reads (:mod:`sparktc.ml.training_tables`, and ``term_ranks`` by the rank stage's own code, which
``tuneTerms`` selects by: chi-square under f_max, [rank]'s default) into a work directory it creates, runs
:func:`sparktc.stages.train.train` there (the categories trained in parallel Spark tasks, as in a pipeline run), and
keeps the model bundle the stage writes (:mod:`sparktc.experiment.bundle`). The tables are removed when the fit ends;
the bundle stays, for the tasks of every DataFrame the model transforms to read, until the Python process ends: a
DataFrame is lazy and may outlive the model (``pipeline.fit(train).transform(test)``), so the model's going is no sign
its bundle is unused. Save the model to keep the bundle past the process. A fit prints none of the stages' lines (a
``CrossValidator`` fits many times); their warnings, such as a decision rule that assigns no training document to most
categories, still go to standard error.

:class:`OneVsRestClassifierModel` scores documents with the bundle's scorer and decision rule, as evaluate and classify
do, and adds ``predicted`` (the codes assigned, in category order), ``prediction`` (their indices into
``model.labels`` as doubles: what :class:`pyspark.ml.evaluation.MultilabelClassificationEvaluator` reads; fitted on
indices, the indices the labels had), ``scores`` (one decision value per category of ``model.categories``) and, when
the labels column is there, ``label`` (the labels' indices; a label the model has no category for gets an index past
them, so it counts as a label never predicted; a labels column of indices is that already). Saved, the
model is its Params' metadata, its classifier's (``PATH/classifier``, as pyspark's OneVsRest saves its classifier) and
the bundle itself (``PATH/bundle``, which ``sparktc.load_model`` and the classify job read too).

The settings every method shares, [train]'s (``thresholding``, ``rcutK``) and [tune]'s (after ``tune``:
``tuneFbr``, ``tuneSharedFbr``), are the estimator's own Params, named after their keys in camel case; a method's own
are its classifier's. Each Param's doc is its field's meaning, and each is checked when it is set by the rule its
configuration field carries (:mod:`sparktc.experiment.config`), and together, as a configuration is, before ``fit``
starts any Spark job: a wrong value is a :class:`sparktc.errors.ConfigError` naming the Param. ``copy(extra)`` copies
the classifier with ``extra`` too, so a ``ParamGridBuilder`` grid over the classifier's Params reaches it.

Example (``train`` and ``test`` DataFrames of doc_id, features as Spark ML vectors, labels)::

    from pyspark.ml.evaluation import MultilabelClassificationEvaluator
    from sparktc.ml import Liblinear, OneVsRestClassifier

    ovr = OneVsRestClassifier(classifier=Liblinear(C=1.0), thresholding="scutfbr", tuneFbr=[0.1, 0.3])
    model = ovr.fit(train)
    scored = model.transform(test)  # + predicted, prediction, scores, label
    MultilabelClassificationEvaluator(metricName="microF1Measure").evaluate(scored)
    model.save("models/ovr")  # also inside a saved PipelineModel
"""

from __future__ import annotations

import atexit
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sparktc.errors import ConfigError, InputError
from sparktc.experiment.bundle import MODEL, Bundle, OnWorker, load_bundle
from sparktc.experiment.config import Config, load_config
from sparktc.experiment.tables import cut_of
from sparktc.features.matrix import csr_from_lists
from sparktc.features.weighting import GIVEN
from sparktc.filesystem import absolute
from sparktc.ml.classifier_params import OneVsRestParams, OneVsRestSetters, in_param_words
from sparktc.ml.methods import Liblinear, MethodParams
from sparktc.ml.params import LABELS, check_column, check_output_column, index_lists, label_lists
from sparktc.ml.persistence import Persistent, PersistentModel
from sparktc.ml.training_tables import make_work_dir, remove_work_dir, vector_entries, write_tables
from sparktc.ml.vectors import is_vector
from sparktc.runtime import session, storage
from sparktc.runtime.runner import Tables
from sparktc.runtime.session import check_workers_python
from sparktc.runtime.stage_report import quiet
from sparktc.stages.rank import rank
from sparktc.stages.train import train

__all__ = ["OneVsRestClassifier", "OneVsRestClassifierModel"]

#: How the fit's documents are described to the stages: a corpus of given vectors (features as they come, not
#: weighted by sparktc), as a LIBSVM corpus's are.
VECTOR_CORPUS = {"corpus": {"format": "libsvm"}, "weight": {"scheme": GIVEN}}
#: The tables the fit writes for the stages, removed when it ends; the bundle (``model``) stays.
FIT_TABLES = ("vectors", "vocabulary", "categories", "term_ranks", "models")
#: Where a saved model keeps its bundle, beside pyspark's ``metadata`` and its classifier's folder.
SAVED_BUNDLE = "bundle"
#: What the featuresCol and idCol columns hold, as a refusal words it.
VECTORS = "Spark ML vectors (VectorUDT)"
IDS = "ids (string or an integer type)"
#: Without labelNames, a label index is named by itself ("0", "1", ...) and the model keeps a name for each index up
#: to the largest: an index from this one up needs the names given.
MOST_UNNAMED = 100_000

def _is_id(kind: T.DataType) -> bool:
    return isinstance(kind, T.StringType | T.ByteType | T.ShortType | T.IntegerType | T.LongType)


def row_places() -> Column:
    """Each row's place in its DataFrame as an id, ``part-P-row-R``: its partition P and its row R there (1, 2, ...;
    the low 33 bits of ``monotonically_increasing_id``), zero-padded so that the ids sort as the rows come, the
    order the train stage visits documents in. The fit's tables hold them, written once: everything after reads the
    table, not the rows again.
    """
    row = F.monotonically_increasing_id().bitwiseAND(2**33 - 1) + 1
    return F.format_string("part-%05d-row-%010d", F.spark_partition_id(), row)


def indexer_names(metadata: Mapping[str, Any]) -> list[str]:
    """The category codes a column's Spark ML metadata names its indices by, as ``StringIndexer`` writes them
    (``{"ml_attr": {"type": "nominal", "vals": [...]}}``); [] when it holds none.
    """
    found = metadata.get("ml_attr", {})
    return [str(name) for name in found.get("vals", [])] if found.get("type") == "nominal" else []


def _named(column: Column, names: list[str]) -> Column:
    """Label indices (array<double>, checked whole and in range) as the codes ``names`` gives them."""
    if names == [str(index) for index in range(len(names))]:  # the indices' own names: no table of them in the plan
        return F.transform(column, lambda index: index.cast("int").cast("string"))
    return F.transform(column, lambda index: F.get(F.lit(names).cast("array<string>"), index.cast("int")))


class OneVsRestClassifier(Estimator, OneVsRestSetters, Persistent):
    """Multi-label one-vs-rest over any of sparktc.ml's methods, trained by the train stage's own code (module
    docstring). A setting given None keeps its default: the configuration's (``explainParams()`` shows each Param's
    meaning and default). Each Param has its getter and setter (``getThresholding``, ``setThresholding``); the
    Model sets only its columns, the rest being what its bundle was trained by.

    Args:
        classifier: the method and its Params (:mod:`sparktc.ml.methods`); None: ``Liblinear()``.
        featuresCol: the features column, Spark ML vectors.
        labelsCol: the labels column, each document's category codes (array<string>) or indices (array<double>,
            as ``StringIndexer`` makes them: named by ``labelNames``).
        idCol: the documents' unique ids (string or integer); left unset with no such column, each row's place in
            the DataFrame (``part-P-row-R``).
        labelNames: for labels given as indices, index i's category code at position i (``StringIndexerModel.labels``);
            empty: the labels column's ``StringIndexer`` metadata, else the indices' own ("0", "1", ...).
        predictedCol: output: the codes assigned.
        predictionCol: output: their indices into ``model.labels``, what pyspark's evaluators read.
        scoresCol: output: one decision value per category, in the order of ``model.categories``.
        labelCol: output: the labels' indices into ``model.labels``, when ``labelsCol`` is there (and is not it).
        workDir: where fit makes its work directory; "" on a local master: a temporary directory.
        thresholding: train.thresholding.
        threshold: train.threshold.
        fbr: train.fbr.
        rcutK: train.rcut_k.
        folds: train.folds.
        seed: train.seed.
        validation: train.validation.
        foldFile: train.fold_file.
        tuneTerms: tune.terms.
        tuneFbr: tune.fbr.
        tuneSharedFbr: tune.shared_fbr.
        tuneSharedTerms: tune.shared_terms.
        tuneObjective: tune.objective.

    Example:
        >>> ovr = OneVsRestClassifier(classifier=KNN(k=30), thresholding="scut")  # doctest: +SKIP
        >>> model = ovr.fit(train)  # doctest: +SKIP
        >>> model.transform(test).select("doc_id", "predicted", "prediction")  # doctest: +SKIP
    """

    @keyword_only
    def __init__(self, *, classifier: MethodParams | None = None, featuresCol: str = "features",
                 labelsCol: str = "labels", idCol: str = "doc_id", labelNames: list[str] | None = None,
                 predictedCol: str = "predicted",
                 predictionCol: str = "prediction", scoresCol: str = "scores", labelCol: str = "label",
                 workDir: str = "", thresholding: str | None = None, threshold: float | None = None,
                 fbr: float | None = None, rcutK: int | None = None, folds: int | None = None, seed: int | None = None,
                 validation: float | None = None, foldFile: str | None = None, tuneTerms: list[int] | None = None,
                 tuneFbr: list[float] | None = None, tuneSharedFbr: bool | None = None,
                 tuneSharedTerms: bool | None = None, tuneObjective: str | None = None) -> None:
        super().__init__()
        self._set(classifier=Liblinear())
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, classifier: MethodParams | None = None, featuresCol: str | None = None,
                  labelsCol: str | None = None, idCol: str | None = None, labelNames: list[str] | None = None,
                  predictedCol: str | None = None,
                  predictionCol: str | None = None, scoresCol: str | None = None, labelCol: str | None = None,
                  workDir: str | None = None, thresholding: str | None = None, threshold: float | None = None,
                  fbr: float | None = None, rcutK: int | None = None, folds: int | None = None,
                  seed: int | None = None, validation: float | None = None, foldFile: str | None = None,
                  tuneTerms: list[int] | None = None, tuneFbr: list[float] | None = None,
                  tuneSharedFbr: bool | None = None, tuneSharedTerms: bool | None = None,
                  tuneObjective: str | None = None) -> OneVsRestClassifier:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def config(self, corpus_path: str) -> Config:
        """The run configuration the Params make (a corpus of given vectors at ``corpus_path``), checked as a
        configuration file is, every refusal naming the Params.
        """
        try:
            return load_config({**VECTOR_CORPUS, "corpus": {**VECTOR_CORPUS["corpus"], "path": corpus_path},
                                **self.settings()})
        except ConfigError as error:
            raise ConfigError(f"{type(self).__name__}: {in_param_words(str(error))}") from None

    def _fit(self, dataset: DataFrame) -> OneVsRestClassifierModel:
        self.checked()
        features, labels = self.getFeaturesCol(), self.getLabelsCol()
        check_column(self, dataset, "featuresCol", is_vector, VECTORS)
        check_column(self, dataset, "labelsCol", label_lists, LABELS)
        indexed = index_lists(dataset.schema[labels].dataType)
        if self.getLabelNames() and not indexed:
            raise InputError(f"{type(self).__name__}: labelNames names label indices, and labelsCol = {labels!r} holds "
                             "category codes (array<string>); leave labelNames empty, or give the indices "
                             "(array<double>)")
        ids = self._ids(dataset)
        spark = dataset.sparkSession
        parent = self._work_parent(spark)
        config = self.config(tempfile.gettempdir())  # any directory: the corpus is the work directory, made below
        names = self._index_names(dataset, ids) if indexed else None
        check_workers_python(spark)
        work = make_work_dir(parent)
        try:
            config = config.with_corpus(path=work)
            tables = Tables(root=work, staging=work)
            codes = F.col(labels) if names is None else _named(F.col(labels), names)
            write_tables(spark, dataset.select(ids.alias("doc_id"), codes.alias("labels"),
                                               F.col(features).alias("features")), tables)
            try:
                with quiet():  # a Spark ML fit prints no stage lines (a CrossValidator makes many); warnings stay
                    rank(spark, config, tables)
                    train(spark, config, tables)
            except ConfigError as error:  # a setting the data refuses (folds above the documents): in Params' words
                raise ConfigError(f"{type(self).__name__}: {in_param_words(str(error))}") from None
            for name in FIT_TABLES:
                storage.delete(spark, tables.input(name))
            bundle = load_bundle(spark, tables.input(MODEL))
        except BaseException:
            storage.delete(spark, work)
            raise
        model = OneVsRestClassifierModel(bundle)
        model._own(work)
        model = self._copyValues(model)
        return model if names is None else model._set(labelNames=names)

    def _ids(self, dataset: DataFrame) -> Column:
        """The documents' ids: ``idCol``'s as strings, or, when it is left unset and the DataFrame has no such
        column, each row's place in it (:func:`row_places`); ConfigError for a ``foldFile`` then, whose folds are
        by id.
        """
        column = self.getIdCol()
        if column in dataset.columns or self.isSet(self.idCol):
            check_column(self, dataset, "idCol", _is_id, IDS)
            return F.col(column).cast("string")
        if self.getFoldFile():
            raise ConfigError(f"{type(self).__name__}: Param foldFile = {self.getFoldFile()!r} gives each document's "
                              f"fold by its id, and the DataFrame has no ids (no column {column!r}, Param idCol); "
                              "give the column of the ids the file names")
        return row_places()

    def _index_names(self, dataset: DataFrame, ids: Column) -> list[str]:
        """Index i's category code for labels given as indices: ``labelNames``, else the names the labels column's
        ``StringIndexer`` metadata holds, else the indices' own up to the largest ("0", "1", ...); InputError naming
        the first training document whose labels hold what is not such an index (one Spark job).
        """
        column = self.getLabelsCol()
        given, source = self.getLabelNames(), "labelNames"
        if not given:
            given, source = indexer_names(dataset.schema[column].metadata), "the column's StringIndexer metadata"
        bound = len(given) if given else MOST_UNNAMED
        bad = F.exists(column, lambda x: x.isNull() | F.isnan(x) | (x < 0) | (x >= bound) | (x != F.floor(x)))
        found = dataset.select(ids.alias("id"), column).agg(  # the ids made before (a row's place is not aggregated)
            F.max(F.array_max(column)).alias("most"),
            F.first(F.when(bad, F.struct("id", F.col(column).alias("labels"))), ignorenulls=True).alias("bad")).first()
        if found["bad"] is not None:
            rule = (f"below {bound}, the number of names in {source}" if given else
                    f"below {MOST_UNNAMED:,} (for more, give their names: labelNames)")
            raise InputError(f"{type(self).__name__}: the training document {found['bad']['id']!r} has labels "
                             f"{found['bad']['labels']} (column {column!r}, Param labelsCol): label indices are whole "
                             f"numbers from 0, {rule}")
        if given:
            return given
        return [] if found["most"] is None else [str(index) for index in range(int(found["most"]) + 1)]

    def _work_parent(self, spark: SparkSession) -> str:
        """The directory the fit makes its work directory in: ``workDir``, or the temporary directory on a local
        master; ConfigError on another master without a ``workDir``, before any Spark job.
        """
        given = self.getOrDefault("workDir")
        if given:
            return absolute(given)
        master = session.master(spark)
        if not master.startswith("local"):
            raise ConfigError(f"{type(self).__name__}: Param workDir is not set, and the master is {master!r}: the "
                              "executors read the training tables from the work directory, so give one they all "
                              "reach (setParams(workDir='hdfs:///tmp/sparktc'), an s3a:// or a shared path)")
        return tempfile.gettempdir()


class OneVsRestClassifierModel(Model, OneVsRestParams, PersistentModel):
    """A fitted :class:`OneVsRestClassifier`: its model bundle (``bundle``) of the categories trained
    (``categories``, the order of ``scores``), and the category codes the indices of ``prediction`` and ``label``
    refer to (``labels``, as ``StringIndexerModel.labels``: the categories themselves, or, fitted on label indices,
    the name of each index). It sets only its columns; its other Params say what it was fitted by.
    """

    def __init__(self, bundle: Bundle | None = None) -> None:
        super().__init__()
        self._bundle = bundle

    def _own(self, directory: str) -> None:
        """Remove the fit's work directory (the bundle's) when the Python process ends, not when this model goes:
        the DataFrames it transformed read the bundle whenever they run.
        """
        atexit.register(remove_work_dir, directory)

    @property
    def bundle(self) -> Bundle:
        """The model bundle: categories with their weights, bias and threshold, the decision rule, the scorer."""
        if self._bundle is None:
            raise InputError("this OneVsRestClassifierModel has no bundle: get one from OneVsRestClassifier.fit or "
                             "OneVsRestClassifierModel.load")
        return self._bundle

    @property
    def categories(self) -> list[str]:
        """The category codes trained, in name order: the order of ``scores``."""
        return self.bundle.categories["category"].tolist()

    @property
    def labels(self) -> list[str]:
        """The category code of each index of ``prediction`` and ``label``, as ``StringIndexerModel.labels``:
        fitted on label indices, index i's name (``labelNames``, or those the fit found), else ``categories``.
        """
        return self.getLabelNames() or self.categories

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        names = {name: self.getOrDefault(name) for name in ("featuresCol", "labelsCol", "predictedCol",
                                                            "predictionCol", "scoresCol", "labelCol")}
        check_column(self, dataset, "featuresCol", is_vector, VECTORS)
        labelled = indexed = names["labelsCol"] in dataset.columns
        if labelled:
            check_column(self, dataset, "labelsCol", label_lists, LABELS)
            indexed = index_lists(dataset.schema[names["labelsCol"]].dataType)
            if indexed and not self.getLabelNames():
                raise InputError(f"{type(self).__name__}: labelsCol = {names['labelsCol']!r} holds label indices "
                                 "(array<double>), and this model was fitted on category codes: give the codes "
                                 "(array<string>), whose indices it has (model.labels)")
        labelled = labelled and not (indexed and names["labelCol"] == names["labelsCol"])  # the indices are there
        outputs = ["predictedCol", "predictionCol", "scoresCol", *(["labelCol"] if labelled else [])]
        for param in outputs:
            check_output_column(self, dataset, param)
        bundle = self.bundle
        shared, n_terms = OnWorker.of(bundle), len(bundle.terms)
        codes = np.asarray(self.categories, dtype=object)
        position = {code: index for index, code in enumerate(self.labels)}
        places = np.array([position[code] for code in codes], dtype=np.float64)  # each category's index in labels
        features, labels = names["featuresCol"], names["labelsCol"]

        def arrays(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                indices, values, _ = vector_entries(batch.column(features))
                yield pa.RecordBatch.from_arrays([indices, values], names=["indices", "values"])

        vectors = dataset.select(features).mapInArrow(arrays, "indices array<int>, values array<float>")
        cut = cut_of(bundle.rule, bundle.categories, vectors, shared, lambda: bundle.n_train)  # PCut: over these

        def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            scorer = shared.value
            for batch in batches:
                indices, values, sizes = vector_entries(batch.column(features))
                wrong = np.flatnonzero(sizes != n_terms)
                if len(wrong):
                    size = sizes[wrong[0]]
                    raise InputError(f"column {features!r} (Param featuresCol) holds "
                                     + ("a null vector" if size < 0 else f"a vector of size {size}")
                                     + f"; the model scores vectors of its {n_terms:,} terms")
                scores = scorer.scores(csr_from_lists(indices, values, n_terms))
                rows, columns = np.nonzero(cut.assign(scores))
                offsets = np.zeros(len(batch) + 1, dtype=np.int32)
                np.cumsum(np.bincount(rows, minlength=len(batch)), out=offsets[1:])
                width = np.arange(len(batch) + 1, dtype=np.int32) * len(codes)
                made = [pa.ListArray.from_arrays(offsets, pa.array(codes[columns], pa.string())),
                         pa.ListArray.from_arrays(offsets, pa.array(places[columns])),
                         pa.ListArray.from_arrays(width, pa.array(scores.ravel(), pa.float64()))]
                if labelled:
                    made.append(pa.array([(None if given is None else sorted(set(given))) if indexed else
                                          label_indices(given, position) for given in batch.column(labels).to_pylist()],
                                         pa.list_(pa.float64())))
                yield pa.RecordBatch.from_arrays([*batch.columns, *made],
                                                 names=[*batch.schema.names, *(names[p] for p in outputs)])

        schema = T.StructType([*dataset.schema.fields,
                               T.StructField(names["predictedCol"], T.ArrayType(T.StringType())),
                               T.StructField(names["predictionCol"], T.ArrayType(T.DoubleType())),
                               T.StructField(names["scoresCol"], T.ArrayType(T.DoubleType())),
                               *([T.StructField(names["labelCol"], T.ArrayType(T.DoubleType()))] if labelled else [])])
        return dataset.mapInArrow(score, schema)

    def _save_data(self, spark: SparkSession, path: str) -> None:
        """Copy the bundle to ``PATH/bundle`` (the model's data: what ``sparktc.load_model`` reads too)."""
        storage.copy(spark, self.bundle.path, storage.join(absolute(path), SAVED_BUNDLE))

    @classmethod
    def _load_data(cls, spark: SparkSession, path: str, extra: None) -> OneVsRestClassifierModel:
        """The model of the bundle saved at ``PATH/bundle``."""
        return cls(load_bundle(spark, storage.join(absolute(path), SAVED_BUNDLE)))


def label_indices(given: list[str] | None, position: Mapping[str, int]) -> list[float] | None:
    """A document's labels as indices of the model's labels (``position``), ascending; a label it has none for after
    them (n, n + 1, ...: a label never predicted, which the evaluator counts against recall).
    """
    if given is None:
        return None
    known = sorted(position[code] for code in set(given) if code in position)
    unknown = sum(1 for code in set(given) if code not in position)
    return [float(index) for index in known] + [float(len(position) + j) for j in range(unknown)]


