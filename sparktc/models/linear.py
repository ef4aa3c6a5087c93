"""One-vs-rest (binary relevance) linear classifiers with LIBLINEAR, one binary problem at a time.

Each category c gets its own binary problem on the same training matrix: label +1 for the
documents in c, -1 for the others, and LIBLINEAR solves

    min_w 1/2 w'w + C sum_i c_i loss(y_i w'x_i)    (l1r_* solvers: ||w||_1 instead of 1/2 w'w)

with c_i = 1 for negative documents and c_i = ``positive_weight`` for positive ones (REFERENCE.md
section 5; Fan et al. 2008, JMLR 9). ``positive_weight`` > 1 is cost-sensitive learning: LIBLINEAR's
``-w1``, LibMultiLabel's C(2-t)/t on the loss of positive data, LYRL2004's j-factor of SVM.2. With a
bias B > 0 every document gets an extra feature of value B, so the decision value is w'x + b with
b = B w_{n+1}; the bias weight is regularised like the others, as in LIBLINEAR and LibMultiLabel
(``-B 1``). A document is assigned to c when w'x + b > 0.

Converting a scipy CSR matrix into LIBLINEAR's ``problem`` copies every non-zero into
LIBLINEAR's node layout; :class:`BinaryProblems` does it once and, for each category, only
rewrites the problem's label array (LIBLINEAR's ``train`` reads ``prob->y`` and never writes
it). Training calls are independent of one another: the C library's ``rand()``, which the
dual coordinate-descent solvers use to permute the documents, is reseeded before each call,
so a category's model does not depend on which categories were trained before it in the
same process (for instance a Spark executor's Python worker). Seed 1 is the C library's
default seed, so each model is the one LIBLINEAR's ``train`` command would produce.

Pure numpy/scipy/liblinear; the Spark stage calls :meth:`BinaryProblems.train` on executors.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from liblinear import liblinear as _liblinear
from liblinear import liblinearutil as _liblinearutil
from numpy.typing import NDArray
from scipy import sparse

from sparktc.filesystem import KeptOne
from sparktc.models.method import LINEAR, Fit, Method, Parameters, PerCategory, ScoreRange, Scoring, SearchLists, shown
from sparktc.validation import allowed, check_labels, check_matrix, check_number, meaning, rule

__all__ = ["METHOD", "SOLVERS", "BinaryProblems", "LinearParameters", "LinearSearch"]

#: Solver name -> LIBLINEAR ``-s`` code (binary classification solvers only).
SOLVERS: dict[str, int] = {
    "l2r_lr": 0,
    "l2r_l2loss_svc_dual": 1,
    "l2r_l2loss_svc": 2,
    "l2r_l1loss_svc_dual": 3,
    "l1r_l2loss_svc": 5,
    "l1r_lr": 6,
    "l2r_lr_dual": 7,
}

# LIBLINEAR's dual solvers shuffle with the C library's rand(); reseed it before every call.
_LIBC = ctypes.CDLL(None)
_RAND_SEED = 1


class BinaryProblems:
    """LIBLINEAR binary problems that share one training matrix and differ only in their labels.

    The conversion to LIBLINEAR's ``problem`` happens once, here; :meth:`train` then solves one
    binary problem per call.

    Args:
        X: scipy sparse matrix, shape (n_docs, n_features). Training documents (e.g. ltc vectors);
            converted to CSR float64. Values must be finite.
        bias: LIBLINEAR's ``-B``: when ``bias > 0`` each document gets an extra feature of value
            ``bias`` whose weight gives the intercept b; ``bias <= 0`` means no bias feature, b = 0.
    """

    def __init__(self, X: sparse.spmatrix | sparse.sparray, bias: float) -> None:
        X = check_matrix("X", X, nonempty=True)
        bias = check_number("bias", bias, note=" (<= 0 for no bias feature)")
        self.n_docs, self.n_features = X.shape
        self.bias = bias if bias > 0 else -1.0
        self._problem = _liblinear.problem(np.zeros(self.n_docs), X, self.bias)
        self._labels = np.ctypeslib.as_array(self._problem.y, (self.n_docs,))

    def train(
        self,
        y: NDArray[np.bool_],
        solver: str,
        C: float,
        epsilon: float,
        positive_weight: float = 1.0,
        one_class: str = "constant",
    ) -> tuple[NDArray[np.float64], float]:
        """Train the binary classifier "True vs False" and return (w, b).

        If ``y`` has no True entry, or is all True, ``one_class`` says what the model is: ``"constant"``,
        LIBLINEAR is not called and the model is w = 0, b = -1.0 (the category is never predicted) or
        w = 0, b = +1.0 (always predicted); ``"liblinear"``, LIBLINEAR solves its one-class problem (every
        document as its label's) and w is turned towards True, as LibMultiLabel's ``_do_train`` does it
        (for no True entry, -w: the scores vary, mostly negative).

        Args:
            y: bool array, shape (n_docs,). True for the documents in the category.
            solver: A key of :data:`SOLVERS`, e.g. ``"l2r_l2loss_svc_dual"`` (LibMultiLabel's default).
            C: Cost parameter, > 0 (``-c``).
            epsilon: Stopping tolerance, > 0 (``-e``; its meaning depends on the solver).
            positive_weight: Factor, > 0, on the loss of the True documents (``-w1``): their cost is
                ``C * positive_weight``, the False documents' cost stays ``C``. 1 is the plain problem.
            one_class: What a model of one-class ``y`` is: ``"constant"`` or ``"liblinear"`` (above).

        Returns:
            (w, b): w a float64 array of shape (n_features,), b a float; decision value w'x + b > 0
            means True. ``b = bias * w_bias`` (0 without bias).
        """
        y = check_labels("y", y, self.n_docs)
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {sorted(SOLVERS)}; got {solver!r}")
        C = check_number("C", C, 0, low_open=True)
        epsilon = check_number("epsilon", epsilon, 0, low_open=True)
        positive_weight = check_number("positive_weight", positive_weight, 0, low_open=True)

        n_positive = int(np.count_nonzero(y))
        if n_positive in (0, self.n_docs) and one_class == "constant":
            return np.zeros(self.n_features), -1.0 if n_positive == 0 else 1.0

        self._labels[:] = np.where(y, 1.0, -1.0)
        options = (
            f"-s {SOLVERS[solver]} -c {C!r} -e {epsilon!r} -B {self.bias!r} "
            f"-w1 {positive_weight!r} -q"
        )
        _LIBC.srand(_RAND_SEED)
        model = _liblinearutil.train(self._problem, options)
        n_weights = self.n_features + (1 if self.bias > 0 else 0)
        weights = np.ctypeslib.as_array(model.w, (n_weights,)).copy()
        # LIBLINEAR's w is for model.label[0]: the first label seen, except that 2.x puts +1
        # first for -1/+1 data (and the only label of one-class data). Read it rather than rely on that rule.
        if model.get_labels()[0] != 1:
            weights = -weights
        b = float(weights[self.n_features] * self.bias) if self.bias > 0 else 0.0
        return weights[: self.n_features], b



@dataclass(frozen=True)
class LinearParameters(Parameters):
    """LIBLINEAR's options, ``[train.liblinear]``: LibMultiLabel's linear one-vs-rest defaults
    (``-s 1 -c 1 -e 0.0001 -B 1``).
    """

    solver: str = field(default="l2r_l2loss_svc_dual", metadata=meaning("LIBLINEAR's solver (-s)", allowed(*SOLVERS)))
    C: float = field(default=1.0, metadata=meaning(
        "LIBLINEAR's cost -c, > 0; C * positive_weight must be finite too", rule(lambda v: v > 0, "> 0")))
    epsilon: float = field(default=0.0001, metadata=meaning("LIBLINEAR's stopping tolerance -e, > 0",
                                                             rule(lambda v: v > 0, "> 0")))
    bias: float = field(default=1.0, metadata=meaning(
        "the bias feature's value B (-B); <= 0 trains without a bias, so any finite number is valid"))
    positive_weight: float = field(default=1.0, metadata=meaning(
        "cost-sensitive training: the loss of positive documents is multiplied by this (LIBLINEAR -w1)",
        rule(lambda v: v > 0, "> 0")))
    one_class: str = field(default="constant", metadata=meaning(
        "a cross-validation fold of one class (a rare category's): constant, w = 0 and b = -1 or +1; liblinear, "
        "LIBLINEAR's one-class solution as LibMultiLabel takes it (the model of all the training documents is "
        "constant either way when they are one class)", allowed("constant", "liblinear")))


def _all(check: Callable[[Any], bool], description: str) -> dict[str, Any]:
    """A rule for every item of a list."""
    return rule(lambda v: all(check(x) for x in v), description)


@dataclass(frozen=True)
class LinearSearch:
    """What cross-validation may choose for LIBLINEAR, ``[tune.liblinear]``: per category, or one value for all
    categories with ``shared_C`` / ``shared_positive_weight`` (an empty list keeps the [train.liblinear] value).
    """

    C: list[float] = field(default_factory=list, metadata=meaning("the costs C to try", _all(lambda v: v > 0,
                                                                                               "numbers > 0")))
    solver: list[str] = field(default_factory=list, metadata=meaning(
        "the solvers to try", _all(lambda v: v in SOLVERS, f"names from {', '.join(SOLVERS)}")))
    positive_weight: list[float] = field(default_factory=list, metadata=meaning(
        "the factors on the positives' loss to try", _all(lambda v: v > 0, "numbers > 0")))
    shared_C: bool = field(default=False, metadata=meaning(
        "one C for all categories, the one with the best cross-validated objective; needs C and no other list"))
    shared_positive_weight: bool = field(default=False, metadata=meaning(
        "one positive weight for all categories, the one with the best cross-validated objective; needs "
        "positive_weight and no other list"))


# The LIBLINEAR problem of a worker's full training matrix, kept across categories: building it copies every
# non-zero, training only rewrites the labels. Keyed by the matrix itself, so a different matrix at the same
# address can never be mistaken for it.
_full_problem: KeptOne[BinaryProblems] = KeptOne()


def _trainer(parameters: LinearParameters, X: sparse.csr_matrix, reuse: tuple | None) -> Fit:
    """The :data:`~sparktc.models.method.Fit` of LIBLINEAR over ``X``, with the candidate's solver, C and positive
    weight; the problem of a worker's whole training matrix (``reuse`` names it) is built once for all categories.
    """
    if reuse is None:
        problems = BinaryProblems(X, parameters.bias)
    else:
        problems = _full_problem.get((*reuse, parameters.bias), lambda: BinaryProblems(X, parameters.bias))
    # one_class concerns cross-validation folds (``reuse`` is None for them): a category without a training document
    # of its own is no class of LibMultiLabel's and stays never assigned.
    one_class = parameters.one_class if reuse is None else "constant"

    def fit(y: NDArray[np.bool_], c: Any) -> tuple[NDArray[np.float64], float]:
        return problems.train(y, c.solver, c.C, parameters.epsilon, positive_weight=c.positive_weight,
                              one_class=one_class)

    return fit


def _fitting(parameters: LinearParameters, terms: int) -> PerCategory:
    """One LIBLINEAR model per category (:func:`_trainer`)."""
    return PerCategory(_trainer)


def _scoring(parameters: LinearParameters) -> Scoring:
    """A linear score, s = w'x + b, LIBLINEAR's decision value."""
    return Scoring(LINEAR)


def _score_range(parameters: LinearParameters, nonnegative_features: bool) -> ScoreRange:
    """Decision values, unbounded; natural t = 0, the hyperplane's side."""
    return ScoreRange.unbounded(0.0, "w'x + b > 0", "LIBLINEAR's decision values")


def _check(parameters: LinearParameters, tune: SearchLists, top_k: int | None, thresholding: str) -> str | None:
    cost = max(tune.C or [parameters.C]) * max(tune.positive_weight or [parameters.positive_weight])
    if math.isfinite(cost):
        return None
    names = (f"{'tune' if tune.C else 'train'}.liblinear.C * "
             f"{'tune' if tune.positive_weight else 'train'}.liblinear.positive_weight")
    return f"{names} = {cost}: LIBLINEAR's cost of positive documents must be a finite number"


def _describe(record: Mapping[str, Any]) -> list[str]:
    return ["- Method: `liblinear` (one-vs-rest linear models)",
            f"- Solver: {shown(record, 'solver')}",
            f"- C: {shown(record, 'C')}; epsilon: {shown(record, 'epsilon')}; bias: {shown(record, 'bias')}; "
            f"positive weight: {shown(record, 'positive_weight')}; one class: {shown(record, 'one_class')}"]


def _label(record: Mapping[str, Any]) -> str:
    """"SVM (LIBLINEAR -s 1)", "logistic regression (LIBLINEAR -s 0)"; a searched solver (a list): "LIBLINEAR"."""
    solver = record.get("solver")
    if not isinstance(solver, str) or solver not in SOLVERS:
        return "LIBLINEAR"
    loss = "SVM" if "svc" in solver else "logistic regression"
    return f"{loss} (LIBLINEAR -s {SOLVERS[solver]})"


#: One-vs-rest LIBLINEAR: s(d, c) = w_c'x_d + b_c, unbounded, natural threshold 0 (the hyperplane's side).
METHOD = Method(
    name="liblinear", title="LIBLINEAR", parameters=LinearParameters,
    fitting=_fitting, scoring=_scoring, score_range=_score_range,
    describe=_describe, search=LinearSearch, check=_check, labelled=_label,
)
