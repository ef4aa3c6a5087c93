"""The Params of :mod:`sparktc.ml`'s stages: each setting's Param takes its type, default, rule and doc from the
configuration's field (:mod:`sparktc.experiment.config`, or a method's table there, ``[train.knn]``, whose fields its
module declares: ``allowed(...)``, ``between(...)`` and ``meaning(...)`` in its metadata), so a setting's meaning and
constraint have one home and a stage refuses what ``--set`` would refuse, in the same words, naming the Param.

A wrong value is refused when it is set (``TermWeighting(scheme="ltf")``, ``setScheme``), and every Param is checked
again when a stage fits or transforms (:meth:`SparktcParams.checked`), before any Spark work: ``Params.set`` and the
values a ``ParamGridBuilder`` grid gives ``copy`` reach the map without the setters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pyspark.ml.param import Param, Params
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, DoubleType, StringType

from sparktc.errors import ConfigError, InputError
from sparktc.experiment.config import check_setting, table_class
from sparktc.features.term_selection import FREQUENCY
from sparktc.validation import check_string

__all__ = ["SparktcParams", "HasInputCol", "HasOutputCol", "HasFeaturesCol", "HasLabelsCol", "camel_case",
           "param_name", "setting_param", "setting_label", "setting_default", "setting_doc", "string_param",
           "column_param", "check_column", "check_output_column", "string_lists", "index_lists", "label_lists",
           "label_codes", "LABELS", "SetsRanking"]


def camel_case(key: str) -> str:
    """A setting's key as a Param names it: ``rcut_k`` is ``rcutK``, ``C`` stays ``C``."""
    first, *rest = key.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def param_name(section: str, key: str) -> str:
    """The Param of ``section.key`` (``section`` a section or a method's table in one): the key in camel case,
    a [tune] key's after ``tune`` (``tune.fbr``: ``tuneFbr``; ``tune.liblinear.C``: ``tuneC``).
    """
    name = camel_case(key)
    return name if section.split(".")[0] != "tune" else "tune" + name[:1].upper() + name[1:]


def setting_param(section: str, key: str, name: str, doc: str | None = None,
                  refused: Mapping[Any, str] | None = None, check: Callable[[Any, str], object] | None = None) -> Param:
    """The Param ``name`` of the setting ``section.key`` (``section`` a section, ``train``, or a method's table in
    one, ``train.knn``), its doc the field's meaning (:func:`setting_doc`) unless ``doc`` words it for the stage:
    set values are checked as the configuration checks them
    (:func:`sparktc.experiment.config.check_setting`; ConfigError "Param ``name`` (``section.key``) = ... is not
    allowed; allowed values: ..."), less the values a stage cannot take, ``refused``, each with why (the message's
    end: "is ..."), and by ``check(value, label)`` where the configuration checks more than the value (a file).
    A tuple is taken as the list a configuration holds, a numpy scalar as its Python value (the values a grid of
    numpy numbers gives).
    """
    label = setting_label(section, key, name)
    refused = dict(refused or {})

    def convert(value: Any) -> Any:
        if isinstance(value, tuple):
            value = list(value)
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, str) and value in refused:
            raise ConfigError(f"{label} = {value!r} {refused[value]}")
        value = check_setting(section, key, value, label, tuple(refused))
        if check is not None:  # what the configuration checks of the whole file (a stop list's file), when set
            check(value, label)
        return value

    return Param(Params._dummy(), name, f"{doc or setting_doc(section, key)} (as {section}.{key})",
                 typeConverter=convert)


def setting_label(section: str, key: str, name: str) -> str:
    """How a refusal names the Param ``name`` of the setting ``section.key``: "Param name (section.key)"."""
    return f"Param {name} ({section}.{key})"


def _field(section: str, key: str) -> dataclasses.Field:
    return {f.name: f for f in dataclasses.fields(table_class(section))}[key]


def setting_default(section: str, key: str) -> Any:
    """The configuration's default of ``section.key`` (``section`` a section or a method's table: ``train.knn``): a
    stage's default is the pipeline's.
    """
    found = _field(section, key)
    return found.default_factory() if found.default is dataclasses.MISSING else found.default


def setting_doc(section: str, key: str) -> str:
    """What the setting ``section.key`` means and its rule, as its field says them (``meaning(...)``, ``rule``)."""
    metadata = _field(section, key).metadata
    rule = metadata.get("description") or (
        "one of " + ", ".join(repr(a) for a in metadata["allowed"]) if "allowed" in metadata else "")
    meaning = metadata.get("doc", "")
    return "; ".join(part for part in (meaning, "" if rule in meaning else rule) if part) or \
        "a sparktc configuration's setting"


def string_param(name: str, doc: str, what: str, empty: bool = True) -> Param:
    """The Param ``name`` of a string (``what`` says what it names): a ``str``, not "" unless ``empty``, else
    ConfigError naming the Param.
    """
    def convert(value: Any) -> str:
        try:
            value = check_string(f"Param {name}", value, what)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if not (value or empty):
            raise ConfigError(f"Param {name} is \"\"; give {what}")
        return value

    return Param(Params._dummy(), name, doc, typeConverter=convert)


def column_param(name: str, doc: str) -> Param:
    """The Param ``name`` of a column name: a non-empty ``str``, else ConfigError naming the Param."""
    return string_param(name, doc, "a column's name", empty=False)


def string_lists(found: DataType) -> bool:
    """Whether a column's Spark type is array<string> (terms, category codes)."""
    return isinstance(found, ArrayType) and isinstance(found.elementType, StringType)


def index_lists(found: DataType) -> bool:
    """Whether a column's Spark type is array<double> (category indices, as ``StringIndexer`` makes them)."""
    return isinstance(found, ArrayType) and isinstance(found.elementType, DoubleType)


def label_lists(found: DataType) -> bool:
    """Whether a column's Spark type is one a ``labelsCol`` takes: codes (array<string>) or indices (array<double>)."""
    return string_lists(found) or index_lists(found)


#: What a labels column holds, as a refusal words it.
LABELS = "category codes (array<string>) or indices (array<double>)"


def label_codes(dataset: DataFrame, column: str) -> Column:
    """The labels column ``column`` of ``dataset`` as codes: codes as they are, indices as their strings (a
    category is the same wherever its index is: what the term scores count by).
    """
    found = F.col(column)
    return found if string_lists(dataset.schema[column].dataType) else found.cast(ArrayType(StringType()))


def check_column(stage: Params, dataset: DataFrame, param: str, wanted: Callable[[DataType], bool],
                 kind: str) -> None:
    """InputError unless the column the Param ``param`` of ``stage`` names is in ``dataset`` and of a type
    ``wanted`` accepts (``kind`` words it).
    """
    column = stage.getOrDefault(param)
    name = type(stage).__name__
    if column not in dataset.columns:
        raise InputError(f"{name}: {param} = {column!r} is not a column of the DataFrame (its columns: "
                         f"{', '.join(dataset.columns)}); set {param} to the column holding {kind}")
    found = dataset.schema[column].dataType
    if not wanted(found):
        raise InputError(f"{name}: {param} = {column!r} is {found.simpleString()}, not {kind}; give a column of "
                         f"{kind}")


def check_output_column(stage: Params, dataset: DataFrame, param: str = "outputCol") -> str:
    """The column the Param ``param`` of ``stage`` names, or InputError when ``dataset`` has it already (Spark ML's
    own stages refuse to replace a column too).
    """
    column = stage.getOrDefault(param)
    if column in dataset.columns:
        raise InputError(f"{type(stage).__name__}: {param} = {column!r} is a column of the DataFrame already; set "
                         f"{param} to a new column's name")
    return column


class SparktcParams(Params):
    """Params whose every value is checked again before a stage's work (:meth:`checked`)."""

    def _set_given(self, params: Mapping[str, Any]) -> Any:
        """Set the Params given a value (keyword_only's ``_input_kwargs``), leaving those given None as they are."""
        return self._set(**{name: value for name, value in params.items() if value is not None})

    def checked(self) -> None:
        """Each Param's value (set or default) through its converter: ConfigError naming the first wrong one."""
        for param in self.params:
            if self.isDefined(param):
                param.typeConverter(self.getOrDefault(param))


class HasInputCol(SparktcParams):
    """The ``inputCol`` Param."""

    inputCol = column_param("inputCol", "the input column")

    def getInputCol(self) -> str:
        """The input column's name."""
        return self.getOrDefault(self.inputCol)

    def setInputCol(self, value: str) -> Any:
        """Set the input column's name."""
        return self._set(inputCol=value)


class HasOutputCol(SparktcParams):
    """The ``outputCol`` Param."""

    outputCol = column_param("outputCol", "the output column")

    def getOutputCol(self) -> str:
        """The output column's name."""
        return self.getOrDefault(self.outputCol)

    def setOutputCol(self, value: str) -> Any:
        """Set the output column's name."""
        return self._set(outputCol=value)


class HasFeaturesCol(SparktcParams):
    """The ``featuresCol`` Param (a Spark ML vector column)."""

    featuresCol = column_param("featuresCol", "the features column (Spark ML vectors)")

    def getFeaturesCol(self) -> str:
        """The features column's name."""
        return self.getOrDefault(self.featuresCol)

    def setFeaturesCol(self, value: str) -> Any:
        """Set the features column's name."""
        return self._set(featuresCol=value)


class HasLabelsCol(SparktcParams):
    """The ``labelsCol`` Param: each document's categories, their codes (array<string>, as sparktc's tables hold
    them) or their indices (array<double>, as ``StringIndexer`` makes them). Its setter is the stage's: a Model
    fitted on the labels keeps the column it was fitted on (as pyspark's Models keep their estimators' Params).
    """

    labelsCol = column_param("labelsCol", "the labels column: each document's categories, their codes "
                             "(array<string>) or their indices (array<double>)")

    def getLabelsCol(self) -> str:
        """The labels column's name."""
        return self.getOrDefault(self.labelsCol)


#: The [rank] score a stage that scores terms per category cannot take, and why.
NOT_A_SCORE = {FREQUENCY: "is not a score counted per category (chi2, ig or gr): the most frequent terms are the "
                          "vocabulary itself, cut before weighting as the weight stage cuts it; set TermWeighting's "
                          "maxFeatures"}


class HasRankScore(SparktcParams):
    """``score`` and ``globalScore``: a [rank] term-selection score and how a term's per-category scores are made
    one (TermSelector's ranking, TermWeighting's supervised weights); their setters are the estimators' (what the
    fit ranks by, which its Model keeps).
    """

    score = setting_param("rank", "score", "score", "the term-selection score: chi2, ig or gr", refused=NOT_A_SCORE)
    globalScore = setting_param("rank", "global_score", "globalScore", "how a term's per-category scores are made "
                                "one: max, avg or mean")

    def getScore(self) -> str:
        """The term-selection score."""
        return self.getOrDefault(self.score)

    def getGlobalScore(self) -> str:
        """The globalization."""
        return self.getOrDefault(self.globalScore)


class SetsRanking(HasLabelsCol, HasRankScore):
    """The setters of what an estimator ranks terms by, the labels and the score (TermSelector, TermWeighting); its
    Model keeps them, as the term scores were counted by them.
    """

    def setLabelsCol(self, value: str) -> Any:
        """Set the labels column's name."""
        return self._set(labelsCol=value)

    def setScore(self, value: str) -> Any:
        """Set ``score``."""
        return self._set(score=value)

    def setGlobalScore(self, value: str) -> Any:
        """Set ``globalScore``."""
        return self._set(globalScore=value)
