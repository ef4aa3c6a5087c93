"""The classification methods of the one-vs-rest classifier as pyspark.ml Params, one class per method.

:class:`~sparktc.ml.classifier.OneVsRestClassifier` takes one, for each registered method
(:mod:`sparktc.models.registry`) that scores the weighted vectors, as its ``classifier``, the way
``pyspark.ml.classification.OneVsRest(classifier=LogisticRegression(regParam=0.01))`` takes one::

    OneVsRestClassifier(classifier=KNN(k=30), thresholding="scutfbr", tuneFbr=[0.1, 0.3])

A class's Params are its method's own settings, ``[train.NAME]`` (``KNN.k`` is ``train.knn.k``), and what the train
stage's cross-validation may choose for it per category, ``[tune.NAME]``, named after ``tune`` (``Liblinear.tuneC``
is ``tune.liblinear.C``). Each Param's doc, default and rule are its field's in the method's module
(:class:`sparktc.models.knn.KnnParameters`): ``explainParams()`` shows the module's words, and a wrong value is
refused as ``--set train.knn.k=0`` is. A ``ParamGridBuilder`` grid over them reaches the classifier through
``OneVsRestClassifier.copy``, as pyspark's OneVsRest passes a grid to its classifier::

    knn = KNN(k=30)
    grid = ParamGridBuilder().addGrid(knn.k, [10, 30]).build()
    CrossValidator(estimator=OneVsRestClassifier(classifier=knn), estimatorParamMaps=grid, ...)

Naive Bayes has no class here: it scores the documents' raw term counts, a column beside the weights that a Spark ML
vector has no room for; train it with jobs/pipeline.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from pyspark import keyword_only
from pyspark.ml.param import Param

from sparktc.ml.params import SparktcParams, param_name, setting_default, setting_param
from sparktc.ml.persistence import Persistent
from sparktc.models.registry import METHODS

__all__ = ["CLASSIFIERS", "KNN", "LLSF", "Liblinear", "MethodParams", "NNet", "Rocchio", "SklearnLinear",
           "method_keys"]


def method_keys(method: str) -> dict[str, tuple[str, str]]:
    """Each Param of the registered method ``method``: its table and key in the configuration, from the method's
    dataclasses (``{"C": ("train.liblinear", "C"), "tuneC": ("tune.liblinear", "C"), ...}``).
    """
    spec = METHODS[method]
    tables = [("train", spec.parameters)] + ([("tune", spec.search)] if spec.search is not None else [])
    return {param_name(section, field.name): (f"{section}.{method}", field.name)
            for section, cls in tables for field in dataclasses.fields(cls)}


def _train(method: str, key: str) -> Param:
    return setting_param(f"train.{method}", key, param_name("train", key))


def _tune(method: str, key: str) -> Param:
    return setting_param(f"tune.{method}", key, param_name("tune", key))


class MethodParams(SparktcParams, Persistent):
    """Base of the method classes: one registered method's settings as Params (module docstring), each defaulted to
    its field's default.
    """

    #: The method's registry name: its ``train.method`` and its tables', ``[train.knn]``.
    method: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(**{name: setting_default(*key) for name, key in method_keys(self.method).items()})

    def tables(self) -> dict[str, dict[str, Any]]:
        """The Params as the configuration's tables of the method: ``{"train": {"k": 30}, "tune": {}}``."""
        tables: dict[str, dict[str, Any]] = {"train": {}, "tune": {}}
        for name, (table, key) in method_keys(self.method).items():
            tables[table.split(".")[0]][key] = self.getOrDefault(name)
        return tables


class Liblinear(MethodParams):
    """LIBLINEAR's linear one-vs-rest (``train.method = "liblinear"``; :mod:`sparktc.models.linear`): s = w'x + b
    per category, by a LIBLINEAR solver, its cost C searched per category or for all when ``tuneC`` is given.

    Example:
        >>> Liblinear(C=0.5, tuneC=[0.1, 1.0, 10.0]).getTuneC()
        [0.1, 1.0, 10.0]
    """

    method = "liblinear"
    solver: Param[str] = _train(method, "solver")
    C: Param[float] = _train(method, "C")
    epsilon: Param[float] = _train(method, "epsilon")
    bias: Param[float] = _train(method, "bias")
    positiveWeight: Param[float] = _train(method, "positive_weight")
    oneClass: Param[str] = _train(method, "one_class")
    tuneC: Param[list[float]] = _tune(method, "C")
    tuneSolver: Param[list[str]] = _tune(method, "solver")
    tunePositiveWeight: Param[list[float]] = _tune(method, "positive_weight")
    tuneSharedC: Param[bool] = _tune(method, "shared_C")
    tuneSharedPositiveWeight: Param[bool] = _tune(method, "shared_positive_weight")

    @keyword_only
    def __init__(self, *, solver: str | None = None, C: float | None = None, epsilon: float | None = None,
                 bias: float | None = None, positiveWeight: float | None = None, oneClass: str | None = None,
                 tuneC: list[float] | None = None, tuneSolver: list[str] | None = None,
                 tunePositiveWeight: list[float] | None = None, tuneSharedC: bool | None = None,
                 tuneSharedPositiveWeight: bool | None = None) -> None:
        super().__init__()
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, solver: str | None = None, C: float | None = None, epsilon: float | None = None,
                  bias: float | None = None, positiveWeight: float | None = None, oneClass: str | None = None,
                  tuneC: list[float] | None = None, tuneSolver: list[str] | None = None,
                  tunePositiveWeight: list[float] | None = None, tuneSharedC: bool | None = None,
                  tuneSharedPositiveWeight: bool | None = None) -> Liblinear:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def getSolver(self) -> str:
        """The LIBLINEAR solver."""
        return self.getOrDefault(self.solver)

    def setSolver(self, value: str) -> Liblinear:
        """Set ``solver``."""
        return self._set(solver=value)

    def getC(self) -> float:
        """The cost C."""
        return self.getOrDefault(self.C)

    def setC(self, value: float) -> Liblinear:
        """Set ``C``."""
        return self._set(C=value)

    def getEpsilon(self) -> float:
        """The stopping tolerance."""
        return self.getOrDefault(self.epsilon)

    def setEpsilon(self, value: float) -> Liblinear:
        """Set ``epsilon``."""
        return self._set(epsilon=value)

    def getBias(self) -> float:
        """The bias feature's value."""
        return self.getOrDefault(self.bias)

    def setBias(self, value: float) -> Liblinear:
        """Set ``bias``."""
        return self._set(bias=value)

    def getPositiveWeight(self) -> float:
        """The factor on the positives' loss."""
        return self.getOrDefault(self.positiveWeight)

    def setPositiveWeight(self, value: float) -> Liblinear:
        """Set ``positiveWeight``."""
        return self._set(positiveWeight=value)

    def getOneClass(self) -> str:
        """What a cross-validation fold of one class trains."""
        return self.getOrDefault(self.oneClass)

    def setOneClass(self, value: str) -> Liblinear:
        """Set ``oneClass``."""
        return self._set(oneClass=value)

    def getTuneC(self) -> list[float]:
        """The costs C cross-validation chooses from (empty: ``C``)."""
        return self.getOrDefault(self.tuneC)

    def setTuneC(self, value: list[float]) -> Liblinear:
        """Set ``tuneC``."""
        return self._set(tuneC=value)

    def getTuneSolver(self) -> list[str]:
        """The solvers cross-validation chooses from (empty: ``solver``)."""
        return self.getOrDefault(self.tuneSolver)

    def setTuneSolver(self, value: list[str]) -> Liblinear:
        """Set ``tuneSolver``."""
        return self._set(tuneSolver=value)

    def getTunePositiveWeight(self) -> list[float]:
        """The positive weights cross-validation chooses from (empty: ``positiveWeight``)."""
        return self.getOrDefault(self.tunePositiveWeight)

    def setTunePositiveWeight(self, value: list[float]) -> Liblinear:
        """Set ``tunePositiveWeight``."""
        return self._set(tunePositiveWeight=value)

    def getTuneSharedC(self) -> bool:
        """Whether one C is chosen for all categories."""
        return self.getOrDefault(self.tuneSharedC)

    def setTuneSharedC(self, value: bool) -> Liblinear:
        """Set ``tuneSharedC``."""
        return self._set(tuneSharedC=value)

    def getTuneSharedPositiveWeight(self) -> bool:
        """Whether one positive weight is chosen for all categories."""
        return self.getOrDefault(self.tuneSharedPositiveWeight)

    def setTuneSharedPositiveWeight(self, value: bool) -> Liblinear:
        """Set ``tuneSharedPositiveWeight``."""
        return self._set(tuneSharedPositiveWeight=value)


class Rocchio(MethodParams):
    """Rocchio's centroid classifier (``train.method = "rocchio"``; :mod:`sparktc.models.rocchio`): each category's
    prototype beta times its documents' centroid less gamma times the others'.

    Example:
        >>> Rocchio(beta=16.0, gamma=4.0).getGamma()
        4.0
    """

    method = "rocchio"
    beta: Param[float] = _train(method, "beta")
    gamma: Param[float] = _train(method, "gamma")

    @keyword_only
    def __init__(self, *, beta: float | None = None, gamma: float | None = None) -> None:
        super().__init__()
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, beta: float | None = None, gamma: float | None = None) -> Rocchio:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def getBeta(self) -> float:
        """The weight of the category's centroid."""
        return self.getOrDefault(self.beta)

    def setBeta(self, value: float) -> Rocchio:
        """Set ``beta``."""
        return self._set(beta=value)

    def getGamma(self) -> float:
        """The weight of the other documents' centroid."""
        return self.getOrDefault(self.gamma)

    def setGamma(self, value: float) -> Rocchio:
        """Set ``gamma``."""
        return self._set(gamma=value)


class KNN(MethodParams):
    """k nearest neighbours (``train.method = "knn"``; :mod:`sparktc.models.knn`): a category's score is the summed
    similarity of the document's ``k`` nearest training documents of that category.

    Example:
        >>> KNN(k=30).getK()
        30
    """

    method = "knn"
    k: Param[int] = _train(method, "k")

    @keyword_only
    def __init__(self, *, k: int | None = None) -> None:
        super().__init__()
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, k: int | None = None) -> KNN:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def getK(self) -> int:
        """The neighbours summed."""
        return self.getOrDefault(self.k)

    def setK(self, value: int) -> KNN:
        """Set ``k``."""
        return self._set(k=value)


class LLSF(MethodParams):
    """Linear least squares fit (``train.method = "llsf"``; :mod:`sparktc.models.llsf`): one mapping of every
    category from a truncated SVD of the training matrix, of ``k`` singular values.

    Example:
        >>> LLSF(k=500).getK()
        500
    """

    method = "llsf"
    k: Param[int] = _train(method, "k")

    @keyword_only
    def __init__(self, *, k: int | None = None) -> None:
        super().__init__()
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, k: int | None = None) -> LLSF:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def getK(self) -> int:
        """The singular values kept."""
        return self.getOrDefault(self.k)

    def setK(self, value: int) -> LLSF:
        """Set ``k``."""
        return self._set(k=value)


class NNet(MethodParams):
    """A neural network of one hidden layer over every category (``train.method = "nnet"``;
    :mod:`sparktc.models.nnet`), trained by Adam.

    Example:
        >>> NNet(hidden=64, epochs=200).getHidden()
        64
    """

    method = "nnet"
    hidden: Param[int] = _train(method, "hidden")
    epochs: Param[int] = _train(method, "epochs")
    l2: Param[float] = _train(method, "l2")
    learningRate: Param[float] = _train(method, "learning_rate")

    @keyword_only
    def __init__(self, *, hidden: int | None = None, epochs: int | None = None, l2: float | None = None,
                 learningRate: float | None = None) -> None:
        super().__init__()
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, hidden: int | None = None, epochs: int | None = None, l2: float | None = None,
                  learningRate: float | None = None) -> NNet:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def getHidden(self) -> int:
        """The hidden units."""
        return self.getOrDefault(self.hidden)

    def setHidden(self, value: int) -> NNet:
        """Set ``hidden``."""
        return self._set(hidden=value)

    def getEpochs(self) -> int:
        """The training budget in epochs."""
        return self.getOrDefault(self.epochs)

    def setEpochs(self, value: int) -> NNet:
        """Set ``epochs``."""
        return self._set(epochs=value)

    def getL2(self) -> float:
        """The L2 penalty."""
        return self.getOrDefault(self.l2)

    def setL2(self, value: float) -> NNet:
        """Set ``l2``."""
        return self._set(l2=value)

    def getLearningRate(self) -> float:
        """Adam's step size."""
        return self.getOrDefault(self.learningRate)

    def setLearningRate(self, value: float) -> NNet:
        """Set ``learningRate``."""
        return self._set(learningRate=value)


class SklearnLinear(MethodParams):
    """scikit-learn's logistic regression per category (``train.method = "sklearn_linear"``;
    :mod:`sparktc.models.sklearn_linear`), fitted by L-BFGS.

    Example:
        >>> SklearnLinear(C=1.0, maxIter=1000).getMaxIter()
        1000
    """

    method = "sklearn_linear"
    C: Param[float] = _train(method, "C")
    maxIter: Param[int] = _train(method, "max_iter")

    @keyword_only
    def __init__(self, *, C: float | None = None, maxIter: int | None = None) -> None:
        super().__init__()
        self._set_given(self._input_kwargs)

    @keyword_only
    def setParams(self, *, C: float | None = None, maxIter: int | None = None) -> SklearnLinear:
        """Set the Params given (None: left as they are), each checked as it is set."""
        return self._set_given(self._input_kwargs)

    def getC(self) -> float:
        """The inverse regularisation strength C."""
        return self.getOrDefault(self.C)

    def setC(self, value: float) -> SklearnLinear:
        """Set ``C``."""
        return self._set(C=value)

    def getMaxIter(self) -> int:
        """The L-BFGS iterations at most."""
        return self.getOrDefault(self.maxIter)

    def setMaxIter(self, value: int) -> SklearnLinear:
        """Set ``maxIter``."""
        return self._set(maxIter=value)


#: The method classes by their method's registry name, the registry's first (the default) first.
CLASSIFIERS: dict[str, type[MethodParams]] = {cls.method: cls for cls in (
    Liblinear, Rocchio, KNN, LLSF, NNet, SklearnLinear)}
