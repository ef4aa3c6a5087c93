"""The Params of :class:`~sparktc.ml.classifier.OneVsRestClassifier` and its model: the ``classifier`` (one of
:mod:`sparktc.ml.methods`, holding its method's own settings), the columns, the work directory, and the [train] and
[tune] settings every method shares, named after their keys in camel case (``thresholding``, ``rcutK``; [tune]'s
after ``tune``: ``tuneFbr``), each with its field's meaning, default and rule (:mod:`sparktc.ml.params`).

``copy(extra)`` copies the classifier with ``extra`` too, as pyspark's OneVsRest does, so a ``ParamGridBuilder`` grid
over the classifier's Params reaches it; saved, the classifier is a stage in ``PATH/classifier``
(:mod:`sparktc.ml.persistence`). A stage saved before each method owned its settings (flat Params: ``method``,
``C``, ``knnK``, ``tuneC``) reads as today's, its classifier made of them (:meth:`OneVsRestParams._upgraded`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pyspark.ml.param import Param, Params
from pyspark.ml.param.shared import HasLabelCol, HasPredictionCol

from sparktc.errors import ConfigError, InputError
from sparktc.experiment.config import TrainSettings
from sparktc.experiment.config.sections import TuneSettings
from sparktc.ml.methods import CLASSIFIERS, MethodParams
from sparktc.ml.params import (
    HasFeaturesCol,
    HasLabelsCol,
    column_param,
    param_name,
    setting_default,
    setting_param,
    string_param,
)
from sparktc.models.registry import RENAMED

__all__ = ["SHARED", "OneVsRestParams", "OneVsRestSetters", "in_param_words"]

#: The settings every method shares, the estimator's own Params: [train]'s but the method (its classifier's), and
#: [tune]'s.
SHARED: dict[str, tuple[str, ...]] = {
    "train": tuple(field.name for field in dataclasses.fields(TrainSettings) if field.name != "method"),
    "tune": tuple(field.name for field in dataclasses.fields(TuneSettings))}
_KEY = re.compile(r"\b(train|tune)\.([a-zA-Z_]+)(?:\.([a-zA-Z_]+))?")


def _param_words(found: re.Match) -> str:
    section, first, second = found[1], found[2], found[3]
    if second is not None and first in CLASSIFIERS:  # a method's table: its classifier's Param
        return f"{CLASSIFIERS[first].__name__}.{param_name(section, second)}"
    if first == "method" and section == "train":
        return "classifier"
    return param_name(section, first) + (f".{second}" if second else "") if first in SHARED[section] else found[0]


def in_param_words(message: str) -> str:
    """A configuration message with each setting it names said as the Param that sets it: ``train.thresholding`` is
    ``thresholding``, ``tune.fbr`` ``tuneFbr``, ``train.knn.k`` ``KNN.k``, ``train.method`` ``classifier``.
    """
    return _KEY.sub(_param_words, message)


def _classifier(value: Any) -> MethodParams:
    """The ``classifier`` Param's check: one of the method classes of :mod:`sparktc.ml.methods`."""
    if not isinstance(value, MethodParams):
        raise ConfigError(f"Param classifier = {value!r}: give one of sparktc.ml's methods, "
                          f"{', '.join(cls.__name__ for cls in CLASSIFIERS.values())} (KNN(k=30))")
    return value


def _label_names(value: Any) -> list[str]:
    """The ``labelNames`` Param's check: a list of distinct non-empty strings (a tuple taken as the list)."""
    if not isinstance(value, list | tuple) or not all(isinstance(name, str) and name for name in value):
        raise ConfigError(f"Param labelNames = {value!r}: give a list of category codes, index i's at position i "
                          "(StringIndexerModel.labels)")
    if len(set(value)) != len(value):
        twice = next(name for i, name in enumerate(value) if name in value[:i])
        raise ConfigError(f"Param labelNames names {twice!r} twice: give each index its own category code")
    return list(value)


def _shared(section: str, key: str) -> Param:
    return setting_param(section, key, param_name(section, key))


class OneVsRestParams(HasFeaturesCol, HasLabelsCol, HasLabelCol, HasPredictionCol):
    """The Params of the estimator and its model: the classifier, the columns, the work directory, and the [train]
    and [tune] settings every method shares.
    """

    classifier: Param[MethodParams] = Param(Params._dummy(), "classifier", "the method and its Params, one of "
                                            "sparktc.ml's methods (Liblinear, Rocchio, KNN, LLSF, NNet, "
                                            "SklearnLinear)", typeConverter=_classifier)
    # pyspark's labelCol and predictionCol (what its evaluators read), checked as sparktc's column Params are.
    labelCol: Param[str] = column_param("labelCol", "output: the labels' indices into model.labels "
                                        "(array<double>), when labelsCol is there (and is not it)")
    predictionCol: Param[str] = column_param("predictionCol", "output: the assigned categories' indices into "
                                             "model.labels (array<double>)")
    idCol: Param[str] = column_param("idCol", "the documents' unique ids (string or integer); training visits the "
                                     "documents in id order, as the train stage does. Left unset and no such "
                                     "column: each row's place in the DataFrame is its id, part-P-row-R (its "
                                     "partition and row there)")
    labelNames: Param[list[str]] = Param(Params._dummy(), "labelNames", "the category code of each label index, "
                                         "for labels given as indices (array<double>): index i is labelNames[i], as "
                                         "StringIndexerModel.labels has them; empty: the names the labels column's "
                                         "StringIndexer metadata holds, else the indices' own (\"0\", \"1\", ...)",
                                         typeConverter=_label_names)
    predictedCol: Param[str] = column_param("predictedCol", "output: the category codes assigned (array<string>)")
    scoresCol: Param[str] = column_param("scoresCol", "output: one decision value per category, in the order of "
                                         "model.categories (array<double>)")
    workDir: Param[str] = string_param("workDir", "where fit makes its work directory (a directory every executor "
                                       "reaches: hdfs://, s3a://, a shared path); \"\" on a local master: a fresh "
                                       "temporary directory", "a directory's path or URI")
    thresholding: Param[str] = _shared("train", "thresholding")
    threshold: Param[float] = _shared("train", "threshold")
    fbr: Param[float] = _shared("train", "fbr")
    rcutK: Param[int] = _shared("train", "rcut_k")
    folds: Param[int] = _shared("train", "folds")
    seed: Param[int] = _shared("train", "seed")
    validation: Param[float] = _shared("train", "validation")
    foldFile: Param[str] = _shared("train", "fold_file")
    tuneTerms: Param[list[int]] = _shared("tune", "terms")
    tuneFbr: Param[list[float]] = _shared("tune", "fbr")
    tuneSharedFbr: Param[bool] = _shared("tune", "shared_fbr")
    tuneSharedTerms: Param[bool] = _shared("tune", "shared_terms")
    tuneObjective: Param[str] = _shared("tune", "objective")

    #: The classifier is saved in a folder of its own, ``PATH/classifier`` (:mod:`sparktc.ml.persistence`).
    _stage_params = ("classifier",)

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(featuresCol="features", labelsCol="labels", idCol="doc_id", predictedCol="predicted",
                         scoresCol="scores", labelCol="label", predictionCol="prediction", workDir="", labelNames=[])
        self._setDefault(**{param_name(section, key): setting_default(section, key)
                            for section, keys in SHARED.items() for key in keys})

    def settings(self) -> dict[str, dict[str, Any]]:
        """The [train] and [tune] settings the Params give, as configuration sections: the shared ones, the method
        and its tables (its classifier's Params).
        """
        classifier = self.getClassifier()
        sections: dict[str, dict[str, Any]] = {
            section: {key: self.getOrDefault(param_name(section, key)) for key in keys}
            for section, keys in SHARED.items()}
        sections["train"]["method"] = classifier.method
        for section, values in classifier.tables().items():
            if values:
                sections[section][classifier.method] = values
        return sections

    def copy(self, extra: dict[Param, Any] | None = None) -> Any:
        """A copy of this stage with ``extra``'s Params set, its classifier copied with ``extra`` too (pyspark's
        OneVsRest.copy): a grid over the classifier's Params (``addGrid(knn.k, [10, 30])``) reaches it.
        """
        copied = super().copy(extra)
        if self.isSet(self.classifier):
            copied._set(classifier=self.getClassifier().copy(extra))
        return copied

    @classmethod
    def _upgraded(cls, metadata: dict[str, Any], stages: dict[str, Params]) -> tuple[dict[str, Any], dict[str, Params]]:
        """Read a stage saved before each method owned its settings, without a ``classifier`` folder: its flat
        Params (``method``, ``C``, ``knnK``, ``tuneC``, named as :data:`sparktc.models.registry.RENAMED`'s old keys)
        become a classifier of its ``method`` with the Params of the new keys; the shared ones stay.
        """
        if "classifier" in stages:
            return metadata, stages
        given, defaults = dict(metadata["paramMap"]), dict(metadata["defaultParamMap"])
        method = given.pop("method", defaults.pop("method", next(iter(CLASSIFIERS))))
        defaults.pop("method", None)
        if method not in CLASSIFIERS:
            raise InputError(f"this {cls.__name__} was saved with method = {method!r}, which sparktc.ml has no "
                             f"classifier for (its methods: {', '.join(CLASSIFIERS)})")
        classifier = CLASSIFIERS[method]()
        for old, new in RENAMED.items():
            section, key = old.split(".")
            table, _, name = new.rpartition(".")
            value = given.pop(param_name(section, key), None)
            defaults.pop(param_name(section, key), None)
            if value is not None and table == f"{section}.{method}":
                classifier._set(**{param_name(section, name): value})
        return {**metadata, "paramMap": given, "defaultParamMap": defaults}, {"classifier": classifier}

    def getClassifier(self) -> MethodParams:
        """The method and its Params."""
        return self.getOrDefault(self.classifier)

    def getIdCol(self) -> str:
        """The ids column's name."""
        return self.getOrDefault(self.idCol)

    def getPredictedCol(self) -> str:
        """The output column of the codes assigned."""
        return self.getOrDefault(self.predictedCol)

    def getScoresCol(self) -> str:
        """The output column of the decision values."""
        return self.getOrDefault(self.scoresCol)

    def getWorkDir(self) -> str:
        """Where fit makes its work directory ("": a temporary directory)."""
        return self.getOrDefault(self.workDir)

    def getThresholding(self) -> str:
        """The thresholding."""
        return self.getOrDefault(self.thresholding)

    def getThreshold(self) -> float:
        """The fixed thresholding's threshold."""
        return self.getOrDefault(self.threshold)

    def getFbr(self) -> float:
        """SCutFBR's fbr."""
        return self.getOrDefault(self.fbr)

    def getRcutK(self) -> int:
        """RCut's categories per document."""
        return self.getOrDefault(self.rcutK)

    def getFolds(self) -> int:
        """The cross-validation folds."""
        return self.getOrDefault(self.folds)

    def getSeed(self) -> int:
        """The folds' seed."""
        return self.getOrDefault(self.seed)

    def getValidation(self) -> float:
        """The held-out validation share (0: folds)."""
        return self.getOrDefault(self.validation)

    def getFoldFile(self) -> str:
        """The file of each training document's fold ("": drawn)."""
        return self.getOrDefault(self.foldFile)

    def getTuneTerms(self) -> list[int]:
        """The term counts cross-validation chooses from."""
        return self.getOrDefault(self.tuneTerms)

    def getTuneFbr(self) -> list[float]:
        """The fbr values cross-validation chooses from."""
        return self.getOrDefault(self.tuneFbr)

    def getTuneSharedFbr(self) -> bool:
        """Whether one fbr is chosen for all categories."""
        return self.getOrDefault(self.tuneSharedFbr)

    def getTuneSharedTerms(self) -> bool:
        """Whether one term count is chosen for all categories."""
        return self.getOrDefault(self.tuneSharedTerms)

    def getTuneObjective(self) -> str:
        """What a setting chosen for all categories maximises."""
        return self.getOrDefault(self.tuneObjective)

    def getLabelNames(self) -> list[str]:
        """The names of the label indices (``labelNames[i]`` is index i's category; empty: no names given)."""
        return self.getOrDefault(self.labelNames)

    def setLabelsCol(self, value: str) -> Any:
        """Set ``labelsCol``."""
        return self._set(labelsCol=value)

    def setPredictedCol(self, value: str) -> Any:
        """Set ``predictedCol``."""
        return self._set(predictedCol=value)

    def setScoresCol(self, value: str) -> Any:
        """Set ``scoresCol``."""
        return self._set(scoresCol=value)

    def setLabelCol(self, value: str) -> Any:
        """Set ``labelCol``."""
        return self._set(labelCol=value)

    def setPredictionCol(self, value: str) -> Any:
        """Set ``predictionCol``."""
        return self._set(predictionCol=value)


class OneVsRestSetters(OneVsRestParams):
    """The setters of what the fit is made of, the estimator's: its Model keeps these Params as they were (its
    bundle was trained by them), and sets only its columns.
    """

    def setClassifier(self, value: MethodParams) -> Any:
        """Set ``classifier``: one of sparktc.ml's methods (``KNN(k=30)``)."""
        return self._set(classifier=value)

    def setIdCol(self, value: str) -> Any:
        """Set ``idCol``."""
        return self._set(idCol=value)

    def setWorkDir(self, value: str) -> Any:
        """Set ``workDir``."""
        return self._set(workDir=value)

    def setThresholding(self, value: str) -> Any:
        """Set ``thresholding``."""
        return self._set(thresholding=value)

    def setThreshold(self, value: float) -> Any:
        """Set ``threshold``."""
        return self._set(threshold=value)

    def setFbr(self, value: float) -> Any:
        """Set ``fbr``."""
        return self._set(fbr=value)

    def setRcutK(self, value: int) -> Any:
        """Set ``rcutK``."""
        return self._set(rcutK=value)

    def setFolds(self, value: int) -> Any:
        """Set ``folds``."""
        return self._set(folds=value)

    def setSeed(self, value: int) -> Any:
        """Set ``seed``."""
        return self._set(seed=value)

    def setValidation(self, value: float) -> Any:
        """Set ``validation``."""
        return self._set(validation=value)

    def setFoldFile(self, value: str) -> Any:
        """Set ``foldFile``."""
        return self._set(foldFile=value)

    def setTuneTerms(self, value: list[int]) -> Any:
        """Set ``tuneTerms``."""
        return self._set(tuneTerms=value)

    def setTuneFbr(self, value: list[float]) -> Any:
        """Set ``tuneFbr``."""
        return self._set(tuneFbr=value)

    def setTuneSharedFbr(self, value: bool) -> Any:
        """Set ``tuneSharedFbr``."""
        return self._set(tuneSharedFbr=value)

    def setTuneSharedTerms(self, value: bool) -> Any:
        """Set ``tuneSharedTerms``."""
        return self._set(tuneSharedTerms=value)

    def setTuneObjective(self, value: str) -> Any:
        """Set ``tuneObjective``."""
        return self._set(tuneObjective=value)

    def setLabelNames(self, value: list[str]) -> Any:
        """Set ``labelNames``: index i's category code, for labels given as indices."""
        return self._set(labelNames=value)
