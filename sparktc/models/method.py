"""What a classification method declares, once, in its own module: the :class:`Method` contract.

A method module (``linear``, ``rocchio``, ``knn``, ``llsf``, ``naive_bayes``, ``nnet``, ...) holds the maths
and one ``METHOD = Method(...)`` saying everything the rest of sparktc asks about it:

* its parameters, a frozen :class:`Parameters` dataclass whose fields carry their meaning and their constraints
  (``field(default=30, metadata=meaning("...", between(1, MAX_K)))``): the configuration's ``[train.NAME]`` table,
  NAME its ``train.method``; and what cross-validation may choose for it, a dataclass of lists, ``[tune.NAME]``;
* how the train stage fits it, one of four ways the stage implements once each: :class:`PerCategory`
  (s = w'x + b per category from 0/1 labels), :class:`Neighbours` (kNN's stored training set),
  :class:`FromSums` (one model for all categories from sums over the training documents) and
  :class:`InTasks` (one model for all categories fitted on a worker's whole training matrix);
* how its scores are computed (:class:`Scoring`), what range they lie in (:class:`ScoreRange`) and the
  ``vectors`` column it reads (``values``, the weights, or ``counts``, raw tf);
* the shared [tune] settings it refuses, its own checks across settings, and the lines ``report.md`` prints.

:mod:`sparktc.models.registry` lists the methods; the configuration, the train and evaluate stages, tuning,
scoring, the model bundle and the report ask it, and never branch on a method's name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from sparktc.validation import setting_problem

__all__ = ["LINEAR", "NEIGHBOURS", "NETWORK", "POSTERIOR", "Floor", "FromSums", "InTasks", "Method",
           "Neighbours", "Parameters", "PerCategory", "ScoreRange", "Scoring", "SearchLists", "shown"]


class Parameters:
    """Base of a method's parameter dataclass: each field's metadata holds its meaning (``doc``) and its rule
    (``allowed`` values, or a ``check`` with its ``description``; :func:`sparktc.validation.meaning`,
    :func:`~sparktc.validation.allowed`, :func:`~sparktc.validation.rule`), checked on construction. The
    configuration's ``[train.NAME]`` table shows the same fields, checked with the same rules.
    """

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            problem = setting_problem(field.name, getattr(self, field.name), field.metadata)
            if problem:
                raise ValueError(problem)

    def record(self) -> dict[str, Any]:
        """The parameters by name, as a run's record states them."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]


class SearchLists(Protocol):
    """What a run searches (``TuneConfig.lists``): the shared [tune] lists, and as attributes of the same names the
    fields of its method's ``search`` dataclass (LIBLINEAR's ``C``, naive Bayes's ``alpha``); empty for none.
    """

    @property
    def terms(self) -> Sequence[int]:
        """The numbers of top-ranked terms to choose from (0: every term)."""
        ...

    @property
    def fbr(self) -> Sequence[float]:
        """SCutFBR's fbr values to choose from."""
        ...


@dataclass(frozen=True)
class Floor:
    """The score ``value`` a method gives a category for want of any evidence (kNN: 0, a category none of the k
    neighbours has), which a fixed threshold must not go below: one below it assigns ``below``; one at it assigns
    ``at``, "" when that is a rule that works (kNN's with k = 1: the nearest neighbour's categories).
    """

    value: float
    below: str
    at: str = ""


@dataclass(frozen=True)
class ScoreRange:
    """The scores s(d, c) a method can give a category with training positives, low <= s <= high, and its
    natural fixed threshold (None: it has none; SCut is its usual thresholding), said in words in ``natural_means``.

    With the strict rule "d gets c <=> s > t", a fixed t >= ``high`` assigns nothing and a t < ``low`` assigns
    everything; a t below the ``floor``, or at it, assigns what no vote supports (:meth:`fixed_threshold_problem`).
    """

    low: float
    high: float
    natural: float | None
    natural_means: str
    description: str
    low_open: bool = False  # the scores exceed ``low`` (a posterior is above 0): a t = low assigns everything too
    floor: Floor | None = None

    @staticmethod
    def unbounded(natural: float, natural_means: str, description: str) -> ScoreRange:
        """Scores anywhere on the real line, with this natural threshold."""
        return ScoreRange(-math.inf, math.inf, natural, natural_means, description)

    def fixed_threshold_problem(self, threshold: float) -> str | None:
        """Why the fixed ``threshold`` cannot work on these scores ("assigns nothing ..."), or None."""
        if threshold >= self.high:
            return f"assigns nothing: {self.description}, so no score exceeds {threshold:g}"
        if threshold < self.low or (self.low_open and threshold == self.low):
            return f"assigns every category to every document: {self.description}, so every score exceeds {threshold:g}"
        floor = self.floor
        if floor is not None and threshold < floor.value:
            return f"assigns {floor.below}: {self.description}"
        if floor is not None and threshold == floor.value and floor.at:
            return f"assigns {floor.at}: {self.description}"
        return None

    def working(self) -> str:
        """The fixed thresholds that can work, as an interval: "[0, 1)", "(0, 30)"."""
        low, low_open = self.low, self.low_open
        if self.floor is not None and (self.floor.value > low or (self.floor.value == low and self.floor.at)):
            low, low_open = self.floor.value, bool(self.floor.at)
        return f"{'(' if low_open else '['}{low:g}, {self.high:g})"


#: The kinds of score :class:`sparktc.models.scoring.Scorer` computes: X W + b; its posteriors over the
#: categories (the naive Bayes mixture); the summed similarities of the k nearest training documents; a
#: saved network's output-unit inputs.
LINEAR, POSTERIOR, NEIGHBOURS, NETWORK = "linear", "posterior", "neighbours", "network"


@dataclass(frozen=True)
class Scoring:
    """How a method's models score documents: ``kind`` (:data:`LINEAR`, ...), and kNN's ``k``."""

    kind: str
    k: int = 0


#: A per-category fit over one training matrix: (0/1 labels y, candidate) -> (w over its columns, b).
Fit = Callable[[NDArray[np.bool_], Any], tuple[NDArray[np.float64], float]]


@dataclass(frozen=True)
class PerCategory:
    """One model per category, s(d, c) = w_c'x_d + b_c. ``trainer(parameters, X, reuse)`` is a :data:`Fit`
    over the documents x selected terms matrix ``X``; ``reuse`` is a key naming X when it is the worker's
    whole training matrix, the same for every category (a trainer may keep work done on it), else None.
    """

    trainer: Callable[[Any, sparse.csr_matrix, tuple | None], Fit]


@dataclass(frozen=True)
class Neighbours:
    """kNN: the category's scores are the summed similarities of each training document's ``k`` nearest other
    training documents labelled with it (leave-one-out); the term count is chosen once for all categories.
    """

    k: int


@dataclass(frozen=True)
class FromSums:
    """One model for all categories from sums over the training documents, per cross-validation fold f: X'Y_f
    (selected terms x categories), the documents per category and, with ``gram``, G_f = X_f'X_f.

    ``fold_models(G, XY, labels, columns)`` are the models fitted without each fold's sums (objects with
    ``scores(X)``), over the per-fold sums G, XY, labels of the candidate's terms (``columns``, their ids);
    ``full(G, XY, labels)`` is the model of all the documents, from the sums over every fold of the chosen
    terms, as (weights: selected terms x categories, bias: per category or one number).
    """

    gram: bool
    fold_models: Callable[[NDArray, NDArray, NDArray, NDArray[np.int64]], list]
    full: Callable[[NDArray, NDArray, NDArray], tuple[NDArray[np.float64], Any]]


@dataclass(frozen=True)
class InTasks:
    """One model for all categories fitted in a Spark task of its own on the worker's training matrix, per
    candidate term count and per fold. ``fit_one(X, Y, columns, directory, seed)`` saves the model fitted on X
    (documents x vocabulary), Y (documents x categories 0/1) over the term ids ``columns`` into ``directory`` and
    returns what to report (``seed``: the rule's); ``saved(directory)`` is a fold model scoring from there; the
    chosen full model is either kept as the model bundle's network part (``keep_as_network``) or its weights are
    read back with ``weights(directory)`` -> (term ids, selected terms x categories).
    """

    fit_one: Callable[[sparse.csr_matrix, NDArray[np.bool_], NDArray[np.int64], str, int], dict]
    saved: Callable[[str], Any]
    keep_as_network: bool = False
    weights: Callable[[str], tuple[NDArray[np.int64], NDArray[np.float64]]] | None = None


Fitting = PerCategory | Neighbours | FromSums | InTasks


def shown(values: Mapping[str, Any], key: str) -> str:
    """A recorded setting as ``report.md`` shows it: in backquotes, a dash when it is unset."""
    value = values.get(key)
    return "\u2014" if value is None or value == "" else f"`{value}`"


def _no_problem(parameters: Any, tune: SearchLists, top_k: int | None, thresholding: str) -> str | None:
    return None


@dataclass(frozen=True)
class Method:
    """Everything sparktc asks of one classification method (module docstring).

    * ``name``: its ``train.method``; ``title``: its name in messages ("naive Bayes").
    * ``parameters``: its :class:`Parameters` dataclass, ``[train.NAME]``: its settings, each field's meaning and
      rule in its metadata.
    * ``search``: the dataclass of what cross-validation may choose for it, ``[tune.NAME]`` (None: nothing of its
      own; the shared [tune] lists, terms and fbr, still apply).
    * ``fitting(parameters, terms)``: how the train stage fits it over at most ``terms`` selected terms.
    * ``scoring(parameters)``, ``score_range(parameters, nonnegative_features)``, ``vector_column``.
    * ``unused``: the shared [tune] keys it refuses, and ``unused_reason``, why.
    * ``variant``: the parameters that change what the method is, named beside it in messages.
    * ``check(parameters, tune, top_k, thresholding)``: a combination of settings it cannot work with, in words, or
      None (``top_k``: select.top_k, 0 for every term, None when select.reduction_factor picks the count).
    * ``describe(record)``: ``report.md``'s lines about it from its record (name and parameters).
    * ``labelled(record)``: its short name in a figure's title, from its record (None: :meth:`label`'s default).
    """

    name: str
    title: str
    parameters: type
    fitting: Callable[[Any, int], Fitting]
    scoring: Callable[[Any], Scoring]
    score_range: Callable[[Any, bool], ScoreRange]
    describe: Callable[[Mapping[str, Any]], list[str]]
    vector_column: str = "values"
    search: type | None = None
    unused: tuple[str, ...] = ()
    unused_reason: str = ""
    variant: tuple[str, ...] = ()
    check: Callable[[Any, SearchLists, int | None, str], str | None] = _no_problem
    labelled: Callable[[Mapping[str, Any]], str] | None = None

    def label(self, record: Mapping[str, Any]) -> str:
        """Its short name in a figure's title, from its record: ``labelled``'s, or its title with the values of its
        ``variant`` ("naive Bayes (mixture)").
        """
        if self.labelled is not None:
            return self.labelled(record)
        variant = ", ".join(str(record[key]) for key in self.variant if record.get(key) not in (None, ""))
        return f"{self.title} ({variant})" if variant else self.title

    def joint(self, parameters: Any) -> bool:
        """Whether it fits one model for all categories (not one per category): its term count and fbr are
        then chosen for the whole model.
        """
        return isinstance(self.fitting(parameters, 0), FromSums | InTasks)

    @property
    def searched(self) -> tuple[str, ...]:
        """Its parameters cross-validation may choose, per category or, for a one-model method, for the whole model:
        the lists of its ``search`` (their values otherwise are the parameters' own).
        """
        if self.search is None:
            return ()
        return tuple(field.name for field in dataclasses.fields(self.search) if not field.name.startswith("shared_"))

    def variant_settings(self, parameters: Any) -> list[str]:
        """The settings of its ``variant`` as messages name them: ["train.nb.model = 'mixture'"]."""
        return [f"train.{self.name}.{key} = {getattr(parameters, key)!r}" for key in self.variant]
