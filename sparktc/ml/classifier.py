"""sparktc's multi-label one-vs-rest classifier as a pyspark.ml Estimator, trained by the train stage's own code.

:class:`OneVsRestClassifier` takes a DataFrame of training documents, a Spark ML vector per document
(``featuresCol``), its category codes (``labelsCol``, array<string>) and an id (``idCol``), and fits one classifier per
category by any registered method (:mod:`sparktc.models.registry`) with the thresholding and the [tune] search of the
pipeline's train stage. It does not re-implement training: it writes the documents as the tables the train stage reads
(``vectors`` as the weight stage writes them, the ``vocabulary`` of the vectors' positions, the ``categories`` of the
labels seen, and ``term_ranks`` by the rank stage's own code, which ``tuneTerms`` selects by: chi-square under f_max,
[rank]'s default) into a work directory it creates, runs
:func:`sparktc.stages.train.train` there (the categories trained in parallel Spark tasks, as in a pipeline run), and
keeps the model bundle the stage writes (:mod:`sparktc.experiment.bundle`). The tables are removed when the fit ends;
the bundle stays, for the tasks of every DataFrame the model transforms to read, until the Python process ends: a
DataFrame is lazy and may outlive the model (``pipeline.fit(train).transform(test)``), so the model's going is no
sign its bundle is unused. Save the model to keep the bundle past the process.
A fit prints none of the stages' lines (a ``CrossValidator`` fits many times); their warnings, such as a decision rule
that assigns no training document to most categories, still go to standard error.

:class:`OneVsRestClassifierModel` scores documents with the bundle's scorer and decision rule, as evaluate and classify
do, and adds ``predicted`` (the codes assigned, in category order), ``prediction`` (their indices into
``model.categories`` as doubles: what :class:`pyspark.ml.evaluation.MultilabelClassificationEvaluator` reads),
``scores`` (one decision value per category) and, when the labels column is there, ``label`` (the labels' indices; a
label the model has no category for gets an index past them, so it counts as a label never predicted). Saved, the
model is its Params' metadata and the bundle itself (``PATH/bundle``, which ``sparktc.load_model`` and the classify
job read too).

The [train] and [tune] settings are Params named after their keys in camel case (``thresholding``, ``rcutK``), a
method's table's after the method (``train.knn.k``: ``knnK``; ``train.liblinear.C``: ``liblinearC``), [tune]'s with
``tune`` before them (``tuneSharedFbr``, ``tuneLiblinearC``); each Param's doc is its field's meaning and rule. Each is
checked when it is set by the rule its
configuration field carries (:mod:`sparktc.experiment.config`), and together, as a configuration is, before ``fit``
starts any Spark job: a wrong value is a :class:`sparktc.errors.ConfigError` naming the Param.

Example (``train`` and ``test`` DataFrames of doc_id, features as Spark ML vectors, labels)::

    from pyspark.ml.evaluation import MultilabelClassificationEvaluator
    from sparktc.ml import OneVsRestClassifier

    ovr = OneVsRestClassifier(liblinearC=1.0, thresholding="scutfbr", tuneFbr=[0.1, 0.3])
    model = ovr.fit(train)
    scored = model.transform(test)  # + predicted, prediction, scores, label
    MultilabelClassificationEvaluator(metricName="microF1Measure").evaluate(scored)
    model.save("models/ovr")  # also inside a saved PipelineModel
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import re
import shutil
import tempfile
import typing
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param
from pyspark.ml.param.shared import HasLabelCol, HasPredictionCol
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from sparktc.corpora.records import TRAIN
from sparktc.errors import ConfigError, InputError
from sparktc.experiment.bundle import MODEL, Bundle, OnWorker, load_bundle
from sparktc.experiment.config import Config, TrainConfig, TuneConfig, load_config, load_section
from sparktc.experiment.tables import cut_of
from sparktc.features.matrix import csr_from_lists
from sparktc.features.weighting import GIVEN
from sparktc.filesystem import absolute, arrow_filesystem, local_path
from sparktc.ml.params import (
    HasFeaturesCol,
    HasLabelsCol,
    check_column,
    check_output_column,
    column_param,
    setting_default,
    setting_param,
    string_lists,
    string_param,
)
from sparktc.ml.persistence import Persistent, PersistentModel
from sparktc.ml.vectors import is_vector, vector_lists, vector_sizes
from sparktc.runtime import session, storage
from sparktc.runtime.parts import map_parts, parquet_files, read_batches, write_parts
from sparktc.runtime.runner import Tables
from sparktc.runtime.session import check_workers_python
from sparktc.runtime.stage_report import quiet
from sparktc.schemas import VECTORS_SCHEMA, VOCABULARY_SCHEMA
from sparktc.stages.rank import rank
from sparktc.stages.train import train

__all__ = ["OneVsRestClassifier", "OneVsRestClassifierModel"]

#: The configuration sections whose settings are Params, by section: [tune]'s names start with "tune".
SECTIONS: dict[str, type] = {"train": TrainConfig, "tune": TuneConfig}


def _tables(table: str, cls: type) -> list[tuple[str, dataclasses.Field]]:
    """Every setting of the table ``table`` (its dataclass ``cls``) with its field: a method's table's (``train.knn``)
    one level down.
    """
    hints = typing.get_type_hints(cls)
    return [found for field in dataclasses.fields(cls) for found in (
        _tables(f"{table}.{field.name}", hints[field.name]) if dataclasses.is_dataclass(hints[field.name])
        else [(table, field)])]


#: Every setting's table and field: the sections' own and their methods' tables'.
FIELDS: list[tuple[str, dataclasses.Field]] = [found for section, cls in SECTIONS.items()
                                               for found in _tables(section, cls)]
#: How the fit's documents are described to the stages: a corpus of given vectors (features as they come, not
#: weighted by sparktc), as a LIBSVM corpus's are.
VECTOR_CORPUS = {"corpus": {"format": "libsvm"}, "weight": {"scheme": GIVEN}}
#: The categories table the train stage reads, as ingest writes it.
CATEGORIES_SCHEMA = pa.schema([("category", pa.string()), ("name", pa.string()), ("parent", pa.string()),
                               ("train_positives", pa.int64()), ("test_positives", pa.int64())])
#: The fit's ``vectors``: the weight stage's columns and each vector's size, which the fit checks.
WRITTEN_SCHEMA = pa.schema([*VECTORS_SCHEMA, ("size", pa.int32())])
#: The tables the fit writes for the stages, removed when it ends; the bundle (``model``) stays.
FIT_TABLES = ("vectors", "vocabulary", "categories", "term_ranks", "models")
#: Where a saved model keeps its bundle, beside pyspark's ``metadata``.
SAVED_BUNDLE = "bundle"
_WORK_PREFIX = "sparktc-ovr-"
#: What the featuresCol and labelsCol columns hold, as a refusal words it.
VECTORS = "Spark ML vectors (VectorUDT)"
CODES = "category codes (array<string>)"


def _camel(key: str) -> str:
    first, *rest = key.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def param_name(table: str, key: str) -> str:
    """The Param of ``table.key``: the key in camel case (``rcut_k``: ``rcutK``), a method's table's after the
    method's name (``train.knn.k``: ``knnK``; ``train.liblinear.C``: ``liblinearC``), [tune]'s after ``tune``
    (``tune.liblinear.C``: ``tuneLiblinearC``).
    """
    section, *method = table.split(".")
    name = _camel("_".join([*method, key]))
    return name if section == "train" else "tune" + name[:1].upper() + name[1:]


#: Each setting's Param name, by (table, key); and back.
SETTINGS: dict[tuple[str, str], str] = {(table, field.name): param_name(table, field.name) for table, field in FIELDS}
SETTING_OF: dict[str, tuple[str, str]] = {name: key for key, name in SETTINGS.items()}
_KEY = re.compile(r"\b((?:train|tune)(?:\.[a-z_]+)?)\.([a-zA-Z_]+)")


def in_param_words(message: str) -> str:
    """A configuration message with each ``train.key`` / ``tune.key`` (``train.knn.k``) it names said as the Param
    that sets it.
    """
    return _KEY.sub(lambda found: SETTINGS.get((found[1], found[2]), found[0]), message)


def _field_doc(field: dataclasses.Field) -> str:
    """A setting's Param's doc: its meaning (the field's ``doc``) and its rule, as the configuration's field words
    them.
    """
    rule = field.metadata.get("description") or (
        "one of " + ", ".join(repr(a) for a in field.metadata["allowed"]) if "allowed" in field.metadata else "")
    meaning = field.metadata.get("doc", "")
    return "; ".join(part for part in (meaning, rule) if part) or "a sparktc configuration's setting"


class _OneVsRestParams(HasFeaturesCol, HasLabelsCol, HasLabelCol, HasPredictionCol):
    """The Params of the estimator and its model: columns, work directory, and every [train] and [tune] setting."""

    # pyspark's labelCol and predictionCol (what its evaluators read), checked as sparktc's column Params are.
    labelCol: Param[str] = column_param("labelCol", "output: the labels' indices into model.categories "
                                        "(array<double>), when labelsCol is there")
    predictionCol: Param[str] = column_param("predictionCol", "output: the assigned categories' indices into "
                                             "model.categories (array<double>)")
    idCol: Param[str] = column_param("idCol", "the documents' unique ids (string or integer); training visits the "
                                     "documents in id order, as the train stage does")
    predictedCol: Param[str] = column_param("predictedCol", "output: the category codes assigned (array<string>)")
    scoresCol: Param[str] = column_param("scoresCol", "output: one decision value per category, in the order of "
                                         "model.categories (array<double>)")
    workDir: Param[str] = string_param("workDir", "where fit makes its work directory (a directory every executor "
                                       "reaches: hdfs://, s3a://, a shared path); \"\" on a local master: a fresh "
                                       "temporary directory", "a directory's path or URI")

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(featuresCol="features", labelsCol="labels", idCol="doc_id", predictedCol="predicted",
                         scoresCol="scores", labelCol="label", predictionCol="prediction", workDir="")
        self._setDefault(**{name: setting_default(section, key) for (section, key), name in SETTINGS.items()})

    def settings(self) -> dict[str, dict[str, Any]]:
        """The [train] and [tune] settings the Params give, as configuration sections."""
        sections: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
        for (table, key), name in SETTINGS.items():
            section, *method = table.split(".")
            values = sections[section]
            for part in method:
                values = values.setdefault(part, {})
            values[key] = self.getOrDefault(name)
        return sections

    def _check_names(self, given: Mapping[str, Any]) -> None:
        unknown = sorted(set(given) - {param.name for param in self.params})
        if unknown:
            raise ConfigError(f"{type(self).__name__} has no Param {', '.join(unknown)}; its Params: "
                              f"{', '.join(sorted(param.name for param in self.params))}")

    def setParams(self, **params: Any) -> _OneVsRestParams:
        """Set Params by name (``setParams(liblinearC=0.5, thresholding="scut")``), each checked as it is set."""
        self._check_names(params)
        return self._set(**params)


for _table, _field in FIELDS:
    _name = SETTINGS[(_table, _field.name)]
    setattr(_OneVsRestParams, _name, setting_param(_table, _field.name, _name, _field_doc(_field)))
del _table, _name, _field


def vector_entries(vectors: pa.StructArray) -> tuple[pa.ListArray, pa.ListArray, np.ndarray]:
    """A batch of Spark ML vectors as the ``vectors`` table holds them (:func:`~sparktc.ml.vectors.vector_lists`,
    the values float32 as the weight stage stores them) and each vector's size (-1 for a null vector).
    """
    indices, values = vector_lists(vectors)
    return indices, values.cast(WRITTEN_SCHEMA.field("values").type), vector_sizes(vectors)


def _is_id(kind: T.DataType) -> bool:
    return isinstance(kind, T.StringType | T.ByteType | T.ShortType | T.IntegerType | T.LongType)


class OneVsRestClassifier(Estimator, _OneVsRestParams, Persistent):
    """Multi-label one-vs-rest over any registered method, trained by the train stage's own code (module docstring).

    Args:
        **params: any Param by name: ``featuresCol`` ("features", VectorUDT), ``labelsCol`` ("labels",
            array<string> of category codes), ``idCol`` ("doc_id"), the outputs ``predictedCol`` ("predicted"),
            ``predictionCol`` ("prediction"), ``scoresCol`` ("scores"), ``labelCol`` ("label"), ``workDir``, and the
            [train] / [tune] settings (``method``, ``liblinearC``, ``thresholding``, ``tuneLiblinearC``, ...).

    Example:
        >>> ovr = OneVsRestClassifier(liblinearC=0.5, thresholding="scut")  # doctest: +SKIP
        >>> model = ovr.fit(train)  # doctest: +SKIP
        >>> model.transform(test).select("doc_id", "predicted", "prediction")  # doctest: +SKIP
    """

    def __init__(self, **params: Any) -> None:
        super().__init__()
        self.setParams(**params)

    def config(self, corpus_path: str) -> Config:
        """The run configuration the Params make (a corpus of given vectors at ``corpus_path``), checked as a
        configuration file is, every refusal naming the Params.
        """
        try:
            return load_config({**VECTOR_CORPUS, "corpus": {**VECTOR_CORPUS["corpus"], "path": corpus_path},
                                **self.settings()})
        except ConfigError as error:
            raise ConfigError(f"{type(self).__name__}: {in_param_words(str(error))}") from None

    def _check_method(self) -> None:
        """Refuse a method that reads the documents' raw term counts (naive Bayes), before the configuration's
        refusal, which is worded for a corpus of given vectors.
        """
        rule = load_section("train", self.settings()["train"]).decision_rule()
        if rule.vector_column != "values":
            raise ConfigError(f"{type(self).__name__}: Param method = {rule.method!r} ({rule.spec.title}) scores "
                              f"the documents' raw term counts, a column beside the weights that featuresCol has no "
                              f"room for; train it with jobs/pipeline.py, or choose another method")

    def _fit(self, dataset: DataFrame) -> OneVsRestClassifierModel:
        self.checked()
        features, labels, ids = (self.getOrDefault(name) for name in ("featuresCol", "labelsCol", "idCol"))
        check_column(self, dataset, "featuresCol", is_vector, VECTORS)
        check_column(self, dataset, "labelsCol", string_lists, CODES)
        check_column(self, dataset, "idCol", _is_id, "ids (string or an integer type)")
        spark = dataset.sparkSession
        parent = self._work_parent(spark)
        self._check_method()
        config = self.config(tempfile.gettempdir())  # any directory: the corpus is the work directory, made below
        check_workers_python(spark)
        work = _make_work_dir(parent)
        try:
            config = config.with_corpus(path=work)
            tables = Tables(root=work, staging=work)
            _write_tables(spark, dataset.select(F.col(ids).cast("string").alias("doc_id"),
                                                F.col(labels).alias("labels"), F.col(features).alias("features")),
                          tables)
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
        return self._copyValues(model)

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


def _make_work_dir(parent: str) -> str:
    """A new directory under ``parent`` (made when missing), the fit's own: nothing in it is anyone else's."""
    local = local_path(parent)
    if local is not None:
        os.makedirs(local, exist_ok=True)
        return tempfile.mkdtemp(prefix=_WORK_PREFIX, dir=local)
    return storage.join(parent, f"{_WORK_PREFIX}{uuid.uuid4().hex}")  # the stages' writes make it


def _write_tables(spark: SparkSession, documents: DataFrame, tables: Tables) -> None:
    """``documents`` (doc_id, labels, features) as the tables the rank and train stages read: ``vectors`` (their
    training split), ``vocabulary`` (each position of the vectors a term, named by its index, with its training
    document frequency) and ``categories`` (the labels seen, with their training positives); InputError naming the
    column and a document for what they cannot train on.
    """

    def convert(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            indices, values, sizes = vector_entries(batch.column("features"))
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), batch.column("labels"), indices, values,
                 pa.nulls(len(batch), pa.list_(pa.int32())), pa.array(sizes, pa.int32())], schema=WRITTEN_SCHEMA)

    train_path = storage.join(tables.input("vectors"), f"split={TRAIN}")
    documents.mapInArrow(convert, from_arrow_schema(WRITTEN_SCHEMA)).write.parquet(train_path)
    files = parquet_files(train_path)
    found = map_parts(spark, files, lambda index, path: _file_facts(path), errors=(InputError,))
    rows = sum(fact["rows"] for fact in found)
    sizes = {size for fact in found for size in fact["sizes"]}
    if not rows:
        raise InputError("the DataFrame given to fit has no rows; give it the training documents")
    if len(sizes) > 1:
        raise InputError(f"column of Param featuresCol holds vectors of sizes {', '.join(map(str, sorted(sizes)))}; "
                         "give every document a vector of the same size (the vocabulary's)")
    positives = sum((Counter(fact["positives"]) for fact in found), Counter())
    if not positives:
        raise InputError("no training document has a label (column of Param labelsCol): nothing to train")
    repeated = spark.read.parquet(train_path).groupBy("doc_id").count().filter(F.col("count") > 1).limit(1).collect()
    if repeated:
        raise InputError(f"doc id {repeated[0]['doc_id']!r} is given {repeated[0]['count']} times (column of Param "
                         "idCol); give every document a unique id")
    n_terms = sizes.pop()
    df = np.zeros(n_terms, dtype=np.int64)
    for fact in found:
        df[:len(fact["df"])] += fact["df"]
    vocabulary = pa.table({"term_id": pa.array(np.arange(n_terms), pa.int32()),
                           "term": pa.array([str(term) for term in range(n_terms)]), "df": df, "frequency": df,
                           "idf": np.ones(n_terms)}, schema=VOCABULARY_SCHEMA)
    write_parts(vocabulary.to_batches(), VOCABULARY_SCHEMA, tables.output("vocabulary"), 0)
    codes = sorted(positives)
    categories = pa.table({"category": codes, "name": codes, "parent": pa.nulls(len(codes), pa.string()),
                           "train_positives": [positives[code] for code in codes],
                           "test_positives": np.zeros(len(codes), dtype=np.int64)}, schema=CATEGORIES_SCHEMA)
    write_parts(categories.to_batches(), CATEGORIES_SCHEMA, tables.output("categories"), 0)


def _file_facts(path: str) -> dict[str, Any]:
    """One written ``vectors`` file's rows, vector sizes, labels' positives and terms' document frequencies;
    InputError naming the first document that cannot be trained on and why.
    """
    rows, sizes, positives, df = 0, set(), Counter(), np.zeros(0, dtype=np.int64)
    for batch in read_batches(path, ["doc_id", "labels", "indices", "values", "size"]):
        doc_ids = batch.column("doc_id")
        problems = [
            (pc.is_null(doc_ids).to_numpy(zero_copy_only=False), "has no id (column of Param idCol is null)"),
            (pc.is_null(batch.column("labels")).to_numpy(zero_copy_only=False),
             "has null labels (column of Param labelsCol); give an empty list for a document without a category"),
            (batch.column("size").to_numpy(zero_copy_only=False) < 0,
             "has a null vector (column of Param featuresCol)"),
        ]
        values = pc.list_flatten(batch.column("values")).to_numpy(zero_copy_only=False)
        if not np.all(np.isfinite(values)):
            finite = pc.list_value_length(batch.column("values")).fill_null(0).to_numpy(zero_copy_only=False)
            bad = np.repeat(np.arange(len(batch)), finite)[~np.isfinite(values)]
            flags = np.zeros(len(batch), dtype=bool)
            flags[bad] = True
            problems.append((flags, "has a value NaN or infinite, or beyond a float's range (column of Param "
                                    "featuresCol); give finite values"))
        for flags, problem in problems:
            if flags.any():
                row = int(np.flatnonzero(flags)[0])
                raise InputError(f"the training document {doc_ids[row].as_py()!r} (row {row + 1} of a batch of "
                                 f"{path}) {problem}")
        labels = pc.list_flatten(batch.column("labels"))
        if labels.null_count:
            raise InputError("a training document's labels hold a null (column of Param labelsCol); give category "
                             "codes only")
        lengths = pc.list_value_length(batch.column("labels")).fill_null(0).to_numpy(zero_copy_only=False)
        pairs = pa.table({"row": np.repeat(np.arange(len(batch)), lengths), "label": labels})
        distinct = pairs.group_by(["row", "label"]).aggregate([])  # a label listed twice is one positive
        positives.update({found["values"]: found["counts"] for found in pc.value_counts(distinct["label"]).to_pylist()})
        sizes.update(int(size) for size in np.unique(batch.column("size").to_numpy(zero_copy_only=False)))
        terms = pc.list_flatten(batch.column("indices")).to_numpy(zero_copy_only=False)
        counted = np.bincount(terms, minlength=len(df))
        counted[:len(df)] += df
        rows, df = rows + len(batch), counted
    return {"rows": rows, "sizes": sorted(sizes), "positives": dict(positives), "df": df}


class OneVsRestClassifierModel(Model, _OneVsRestParams, PersistentModel):
    """A fitted :class:`OneVsRestClassifier`: its model bundle (``bundle``), whose categories (``categories``) the
    indices of ``prediction``, ``scores`` and ``label`` refer to.
    """

    def __init__(self, bundle: Bundle | None = None) -> None:
        super().__init__()
        self._bundle = bundle

    def _own(self, directory: str) -> None:
        """Remove the fit's work directory (the bundle's) when the Python process ends, not when this model goes:
        the DataFrames it transformed read the bundle whenever they run.
        """
        atexit.register(_remove, directory)

    @property
    def bundle(self) -> Bundle:
        """The model bundle: categories with their weights, bias and threshold, the decision rule, the scorer."""
        if self._bundle is None:
            raise InputError("this OneVsRestClassifierModel has no bundle: get one from OneVsRestClassifier.fit or "
                             "OneVsRestClassifierModel.load")
        return self._bundle

    @property
    def categories(self) -> list[str]:
        """The category codes, in the order of the indices of ``prediction``, ``scores`` and ``label``."""
        return self.bundle.categories["category"].tolist()

    def _transform(self, dataset: DataFrame) -> DataFrame:
        self.checked()
        names = {name: self.getOrDefault(name) for name in ("featuresCol", "labelsCol", "predictedCol",
                                                            "predictionCol", "scoresCol", "labelCol")}
        check_column(self, dataset, "featuresCol", is_vector, VECTORS)
        labelled = names["labelsCol"] in dataset.columns
        if labelled:
            check_column(self, dataset, "labelsCol", string_lists, CODES)
        outputs = ["predictedCol", "predictionCol", "scoresCol", *(["labelCol"] if labelled else [])]
        for param in outputs:
            check_output_column(self, dataset, param)
        bundle = self.bundle
        shared, n_terms = OnWorker.of(bundle), len(bundle.terms)
        codes = np.asarray(self.categories, dtype=object)
        features, labels = names["featuresCol"], names["labelsCol"]

        def arrays(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                indices, values, _ = vector_entries(batch.column(features))
                yield pa.RecordBatch.from_arrays([indices, values], names=["indices", "values"])

        vectors = dataset.select(features).mapInArrow(arrays, "indices array<int>, values array<float>")
        cut = cut_of(bundle.rule, bundle.categories, vectors, shared, lambda: bundle.n_train)  # PCut: over these

        def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            scorer = shared.value
            position = {code: index for index, code in enumerate(codes)}
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
                         pa.ListArray.from_arrays(offsets, pa.array(columns.astype(np.float64))),
                         pa.ListArray.from_arrays(width, pa.array(scores.ravel(), pa.float64()))]
                if labelled:
                    made.append(pa.array([label_indices(given, position) for given in
                                          batch.column(labels).to_pylist()], pa.list_(pa.float64())))
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
    """A document's labels as indices of the model's categories, ascending; a label it has none for after them
    (n, n + 1, ...: a label never predicted, which the evaluator counts against recall).
    """
    if given is None:
        return None
    known = sorted(position[code] for code in set(given) if code in position)
    unknown = sum(1 for code in set(given) if code not in position)
    return [float(index) for index in known] + [float(len(position) + j) for j in range(unknown)]


def _remove(directory: str) -> None:
    """Remove a fit's work directory (local; on another file system, through pyarrow), ignoring what is gone."""
    local = local_path(directory)
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        return
    try:  # no session is needed (none may be left at exit)
        filesystem, root = arrow_filesystem(directory)
        filesystem.delete_dir(root)
    except OSError:
        pass
