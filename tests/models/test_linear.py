"""One-vs-rest LIBLINEAR binary problems against scikit-learn and LIBLINEAR's own API (REFERENCE.md section 5)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import scipy.sparse as sp
from liblinear import liblinear, liblinearutil
from numpy.typing import NDArray
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from sparktc.models.linear import SOLVERS, BinaryProblems


def decision_function(
    X: sp.spmatrix | sp.sparray | NDArray[np.float64],
    w: NDArray[np.float64],
    b: float,
) -> NDArray[np.float64]:
    """Decision values X w + b, one per row of X (positive means assigned; REFERENCE.md section 5)."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be a 1-D weight vector; got ndim={w.ndim}")
    if X.ndim != 2 or X.shape[1] != w.shape[0]:
        raise ValueError(
            f"X must be 2-D with one column per weight ({w.shape[0]}); got shape {X.shape}"
        )
    return np.asarray(X @ w, dtype=np.float64).ravel() + float(b)


@pytest.fixture(scope="module")
def data() -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """300 docs x 200 features at 5% density and two label vectors (the first doc negative in y)."""
    rng = np.random.default_rng(0)
    X = sp.random(300, 200, density=0.05, format="csr", random_state=rng)
    y = X @ rng.normal(size=200) + 0.3 * rng.normal(size=300) > 0.2
    other = X @ rng.normal(size=200) > 0.1
    assert not y[0] and 0.2 < y.mean() < 0.8 and 0.2 < other.mean() < 0.8
    return X, y, other


def test_solver_codes_are_liblinears():
    assert SOLVERS == {
        "l2r_lr": 0, "l2r_l2loss_svc_dual": 1, "l2r_l2loss_svc": 2, "l2r_l1loss_svc_dual": 3,
        "l1r_l2loss_svc": 5, "l1r_lr": 6, "l2r_lr_dual": 7,
    }
    for name, code in SOLVERS.items():
        assert liblinear.solver_names[name.upper()] == code


def test_l2loss_svc_dual_matches_sklearn_linearsvc(data):
    X, y, _ = data
    w, b = BinaryProblems(X, bias=1.0).train(y, "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4)
    svc = LinearSVC(loss="squared_hinge", dual=True, C=1, tol=1e-4, intercept_scaling=1,
                    fit_intercept=True).fit(X, y)
    ours, theirs = decision_function(X, w, b), svc.decision_function(X)
    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    assert b == pytest.approx(svc.intercept_[0], abs=1e-3)
    # Sign convention: y[0] is False, yet positive decision values mean True.
    assert np.mean((ours > 0) == y) > 0.9


def test_no_bias_matches_sklearn_without_intercept(data):
    X, y, _ = data
    w, b = BinaryProblems(X, bias=0).train(y, "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4)
    assert b == 0.0
    svc = LinearSVC(loss="squared_hinge", dual=True, C=1, tol=1e-4, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(decision_function(X, w, b), svc.decision_function(X), atol=1e-3)


def test_l2r_lr_matches_sklearn_liblinear_logistic_regression(data):
    X, y, _ = data
    w, b = BinaryProblems(X, bias=1.0).train(y, "l2r_lr", C=1.0, epsilon=1e-6)
    lr = LogisticRegression(solver="liblinear", C=1, tol=1e-6, intercept_scaling=1).fit(X, y)
    np.testing.assert_allclose(decision_function(X, w, b), lr.decision_function(X), atol=1e-4)


@pytest.mark.parametrize("positive_weight", [0.25, 4.0])
def test_positive_weight_matches_sklearn_class_weight(data, positive_weight):
    X, y, _ = data
    problems = BinaryProblems(X, bias=1.0)
    w, b = problems.train(y, "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4, positive_weight=positive_weight)
    svc = LinearSVC(loss="squared_hinge", dual=True, C=1, tol=1e-4, intercept_scaling=1,
                    class_weight={1: positive_weight, 0: 1}).fit(X, y.astype(int))
    ours = decision_function(X, w, b)
    np.testing.assert_allclose(ours, svc.decision_function(X), atol=1e-3)
    # A heavier loss on the positives assigns more documents, a lighter one fewer.
    plain = decision_function(X, *problems.train(y, "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4))
    assert (np.count_nonzero(ours > 0) > np.count_nonzero(plain > 0)) == (positive_weight > 1)


@pytest.mark.parametrize("first_true", [False, True])
def test_positive_decision_means_true_whatever_the_first_label(data, first_true):
    X, y, _ = data
    order = np.argsort(~y if first_true else y, kind="stable")  # put a True (or False) document first
    Xo, yo = X[order], y[order]
    assert yo[0] == first_true
    w, b = BinaryProblems(Xo, bias=1.0).train(yo, "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4)
    svc = LinearSVC(loss="squared_hinge", dual=True, C=1, tol=1e-4).fit(Xo, yo)
    np.testing.assert_allclose(decision_function(Xo, w, b), svc.decision_function(Xo), atol=1e-3)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_label_reuse_gives_the_model_of_a_fresh_problem(data, solver):
    X, y, other = data
    shared = BinaryProblems(X, bias=1.0)
    first = shared.train(y, solver, C=1.0, epsilon=1e-3)
    shared.train(other, solver, C=1.0, epsilon=1e-3)  # overwrite the cached labels in between
    again = shared.train(y, solver, C=1.0, epsilon=1e-3)
    fresh = BinaryProblems(X, bias=1.0).train(y, solver, C=1.0, epsilon=1e-3)
    for w, b in (again, fresh):
        np.testing.assert_array_equal(w, first[0])
        assert b == first[1]
    # LIBLINEAR only reads the label array.
    np.testing.assert_array_equal(shared._labels, np.where(y, 1.0, -1.0))

    # The same model as LIBLINEAR's own API on a problem built from scratch (fresh rand() seed).
    prob = liblinear.problem(np.where(y, 1.0, -1.0), X, 1.0)
    ctypes.CDLL(None).srand(1)
    model = liblinearutil.train(prob, f"-s {SOLVERS[solver]} -c 1 -e 0.001 -B 1 -q")
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    reference = sign * np.ctypeslib.as_array(model.w, (201,))
    np.testing.assert_array_equal(first[0], reference[:200])
    assert first[1] == reference[200]


def test_one_class_labels_skip_liblinear(data):
    X, _, _ = data
    problems = BinaryProblems(X, bias=1.0)
    w, b = problems.train(np.zeros(300, dtype=bool), "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4)
    assert not w.any() and b == -1.0
    assert (decision_function(X, w, b) < 0).all()
    w, b = problems.train(np.ones(300, dtype=bool), "l1r_lr", C=1.0, epsilon=1e-4)
    assert not w.any() and b == 1.0
    assert (decision_function(X, w, b) > 0).all()


def test_one_class_labels_as_libmultilabel_takes_liblinears_solution(data):
    """``one_class = "liblinear"``: LIBLINEAR's own one-class model, its w turned towards True (LibMultiLabel's
    _do_train negates w when LIBLINEAR's first label is -1).
    """
    X, _, _ = data
    problems = BinaryProblems(X, bias=1.0)
    for y, sign in ((np.zeros(300, dtype=bool), -1.0), (np.ones(300, dtype=bool), 1.0)):
        w, b = problems.train(y, "l2r_l2loss_svc_dual", C=1.0, epsilon=1e-4, one_class="liblinear")
        ctypes.CDLL(None).srand(1)
        model = liblinearutil.train(liblinear.problem(np.where(y, 1.0, -1.0), X, 1.0), "-s 1 -c 1 -e 0.0001 -B 1 -q")
        assert model.get_labels() == [int(sign)]
        reference = sign * np.ctypeslib.as_array(model.w, (201,))
        np.testing.assert_array_equal(w, reference[:200])
        assert b == reference[200] and w.any()


def test_accepts_csr_array_and_decision_on_dense(data):
    X, y, _ = data
    w, b = BinaryProblems(sp.csr_array(X), bias=1.0).train(y, "l2r_l2loss_svc", C=0.5, epsilon=0.01)
    assert w.shape == (200,) and w.dtype == np.float64
    np.testing.assert_allclose(decision_function(X.toarray(), w, b), decision_function(X, w, b))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"solver": "mcsvm_cs"}, r"solver must be one of \['l1r_l2loss_svc', .*\]; got 'mcsvm_cs'"),
        ({"C": 0.0}, "C must be a finite number > 0; got 0.0"),
        ({"C": float("inf")}, "C must be a finite number > 0; got inf"),
        ({"epsilon": -1e-4}, "epsilon must be a finite number > 0; got -0.0001"),
        ({"positive_weight": 0}, "positive_weight must be a finite number > 0; got 0"),
        ({"positive_weight": float("nan")}, "positive_weight must be a finite number > 0; got nan"),
        ({"y": np.zeros(300, dtype=int)}, r"y must be a bool array of shape \(300,\).*got dtype int64"),
        ({"y": np.zeros(299, dtype=bool)}, r"y must be a bool array of shape \(300,\).*shape \(299,\)"),
    ],
)
def test_train_validates(data, kwargs, message):
    X, y, _ = data
    arguments = {"y": y, "solver": "l2r_l2loss_svc_dual", "C": 1.0, "epsilon": 1e-4} | kwargs
    with pytest.raises(ValueError, match=message):
        BinaryProblems(X, bias=1.0).train(**arguments)


def test_constructor_and_decision_function_validate(data):
    X, _, _ = data
    with pytest.raises(ValueError, match="X must be a scipy sparse matrix .*; got ndarray"):
        BinaryProblems(X.toarray(), bias=1.0)
    with pytest.raises(ValueError, match=r"at least one document and one feature; got shape \(0, 5\)"):
        BinaryProblems(sp.csr_matrix((0, 5)), bias=1.0)
    with pytest.raises(ValueError, match="bias must be a finite number"):
        BinaryProblems(X, bias=float("nan"))
    bad = X.copy()
    bad.data[0] = np.inf
    with pytest.raises(ValueError, match="X must hold finite values"):
        BinaryProblems(bad, bias=1.0)
    with pytest.raises(ValueError, match=r"one column per weight \(199\); got shape \(300, 200\)"):
        decision_function(X, np.zeros(199), 0.0)
    with pytest.raises(ValueError, match="w must be a 1-D weight vector"):
        decision_function(X, np.zeros((200, 1)), 0.0)
