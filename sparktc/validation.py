"""Input validation shared by the maths modules and the Python API's arguments: each check returns the value in
the form the caller computes with, or raises ValueError whose message names the parameter and what it got.

Pure numpy/scipy and imports nothing from sparktc, so every layer can use it.
"""

from __future__ import annotations

import math
import numbers
import os
import reprlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse


def _interval(low: float | None, high: float | None, low_open: bool) -> str:
    """The bounds in words: " > 0", " >= 0", " <= 1", " in [0, 1]"; "" when there are none."""
    if low is None:
        return "" if high is None else f" <= {high}"
    if high is None:
        return f" {'>' if low_open else '>='} {low}"
    return f" in {'(' if low_open else '['}{low}, {high}]"


def check_number(
    name: str,
    value: float,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    kind: str = "finite number",
    note: str = "",
) -> float:
    """``value`` as a float, or ValueError unless it is a finite real number (not a bool) in
    [low, high], or (low, high] with ``low_open``; a bound that is None is no bound.

    The message reads "``name`` must be a ``kind`` <bounds>``note``; got ``value!r``", e.g.
    "C must be a finite number > 0; got 0.0".
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or (low is not None and (value <= low if low_open else value < low))
        or (high is not None and value > high)
    ):
        raise ValueError(f"{name} must be a {kind}{_interval(low, high, low_open)}{note}; got {value!r}")
    return float(value)


def check_integer(name: str, value: int, low: int, high: int | None = None, *, kind: str | None = None) -> int:
    """``value`` as an int, or ValueError unless it is an integer (not a bool) in [low, high].

    The message reads "``name`` must be an integer >= ``low``" or "... in [``low``, ``high``]", or
    "``name`` must be a ``kind``" when ``kind`` words the bounds (e.g. "non-negative integer").
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < low
        or (high is not None and value > high)
    ):
        requirement = f"a {kind}" if kind else f"an integer{_interval(low, high, False)}"
        raise ValueError(f"{name} must be {requirement}; got {value!r}")
    return int(value)


def _got(value: Any) -> str:
    """A wrong argument as a message shows it: its type and its (shortened) repr."""
    return f"{type(value).__name__} {reprlib.repr(value)}"


def check_path(name: str, value: Any, *, also: str = "") -> str:
    """``value`` as a path string, or ValueError unless it is a ``str`` or an ``os.PathLike`` giving one: an int
    is no path (``open`` takes it for a file descriptor: ``open(0)`` reads stdin and closes it), nor are bytes.
    ``also`` words the other values the argument takes (", a dict of sections or None").
    """
    path = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(path, str):
        raise ValueError(f"{name} must be a path (a str or an os.PathLike such as pathlib.Path){also}; "
                         f"got {_got(value)}")
    return path


def check_strings(name: str, value: Any) -> tuple[str, ...]:
    """``value`` as a tuple of strings, or ValueError unless it is a sequence (a list or tuple) of ``str``: a
    bare string is refused, not read letter by letter.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        hint = f" (one string is a list of one: [{value!r}])" if isinstance(value, str) else ""
        raise ValueError(f"{name} must be a list or tuple of strings{hint}; got {_got(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{name} must be a list or tuple of strings; got {_got(item)} at index {index}")
    return tuple(value)


def check_flag(name: str, value: Any) -> bool:
    """``value``, or ValueError unless it is a bool (True or False: 0, 1 and "yes" are not)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False; got {_got(value)}")
    return value


def check_string(name: str, value: Any, what: str) -> str:
    """``value``, or ValueError unless it is a ``str``; ``what`` says what it names ("a preset's name")."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a str ({what}); got {_got(value)}")
    return value


def check_labels(name: str, y: ArrayLike, n_docs: int | None = None) -> NDArray[np.bool_]:
    """``y`` as a bool array of shape (n_docs,), one label per document (any length when ``n_docs``
    is None), or ValueError naming its dtype and shape.
    """
    y = np.asarray(y)
    if n_docs is None:
        if y.dtype != np.bool_ or y.ndim != 1:
            raise ValueError(f"{name} must be a 1-D bool array; got dtype {y.dtype} and shape {y.shape}")
    elif y.dtype != np.bool_ or y.shape != (n_docs,):
        raise ValueError(
            f"{name} must be a bool array of shape ({n_docs},), one label per document; "
            f"got dtype {y.dtype} and shape {y.shape}"
        )
    return y


def check_finite(name: str, values: NDArray[np.floating]) -> None:
    """ValueError unless every entry of the float array ``values`` is finite."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must hold finite values; got NaN or infinity")


def check_array(name: str, value: ArrayLike, ndim: int, of: str) -> NDArray[np.float64]:
    """``value`` as a non-empty float64 array of ``ndim`` dimensions, or ValueError naming its shape;
    ``of`` says what it holds, e.g. "of decision values".
    """
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != ndim or array.size == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-D array {of}; got shape {array.shape}")
    return array


def check_unit_interval(name: str, values: NDArray[np.float64], what: str) -> None:
    """ValueError unless every entry of ``values`` is in [0, 1] (NaN is not), naming the first that
    is not and its index; ``what`` names the entries, e.g. "probabilities".
    """
    outside = ~((values >= 0.0) & (values <= 1.0))
    if np.any(outside):
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{name} must hold {what} in [0, 1]; got {float(values.ravel()[first])!r} at index {first}")


def check_counts(name: str, value: ArrayLike) -> NDArray[np.int64]:
    """``value`` as a 1-D int64 array of non-negative counts, one per category, or ValueError."""
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (one count per category); got ndim={array.ndim}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer counts; got dtype {array.dtype}")
    array = array.astype(np.int64, copy=False)
    if np.any(array < 0):
        raise ValueError(f"{name} must hold non-negative counts; got minimum {array.min()}")
    return array


def check_matrix(
    name: str, X: sparse.spmatrix | sparse.sparray, *, nonempty: bool = False
) -> sparse.csr_matrix:
    """``X`` as a CSR float64 matrix (documents x features), or ValueError unless it is a 2-D scipy
    sparse matrix of finite values; with ``nonempty``, one with at least one document and one feature
    (a training matrix). ``csr_matrix``, not ``csr_array``: LIBLINEAR accepts only the former.
    """
    if not sparse.issparse(X) or (X.ndim != 2 and not nonempty):
        # A non-empty matrix's shape gets its own message below, which names the shape.
        kind = "scipy sparse matrix" if nonempty else "2-D scipy sparse matrix"
        raise ValueError(f"{name} must be a {kind} (CSR preferred); got {type(X).__name__}")
    if nonempty and (X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0):
        raise ValueError(f"{name} must have at least one document and one feature; got shape {X.shape}")
    X = sparse.csr_matrix(X, dtype=np.float64)
    check_finite(name, X.data)
    return X


# --- settings: the rules a setting's dataclass field carries in its metadata --------------------------------------


def allowed(*values: Any) -> dict[str, Any]:
    """A field's rule: one of ``values``."""
    return {"allowed": values}


def rule(check: Callable[[Any], bool], description: str) -> dict[str, Any]:
    """A field's rule: ``check(value)`` holds; ``description`` says what is expected ("> 0")."""
    return {"check": check, "description": description}


def between(low: int, high: int) -> dict[str, Any]:
    """A field's rule: an integer in [low, high]."""
    return rule(lambda v: low <= v <= high, f"an integer in [{low:_}, {high:_}]")


def meaning(text: str, rule: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A field's metadata: what the setting means (``doc``: the words the configuration reference, the API reference
    and a Spark ML Param show) beside its rule (:func:`allowed`, :func:`between`, :func:`rule`), if any.
    """
    return {**(rule or {}), "doc": text}


def setting_problem(key: str, value: Any, metadata: Mapping[str, Any]) -> str | None:
    """What is wrong with setting ``key`` = ``value`` by the rule in ``metadata`` (:func:`allowed`,
    :func:`rule`), or None.
    """
    if "allowed" in metadata and value not in metadata["allowed"]:
        return f"{key} = {value!r} is not allowed; allowed values: {', '.join(repr(a) for a in metadata['allowed'])}"
    if "check" in metadata and not metadata["check"](value):
        return f"{key} = {value!r} is out of range; expected {metadata['description']}"
    return None
