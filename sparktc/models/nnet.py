"""NNet: one feed-forward network for all categories (Yang & Liu 1999 section 3.4; REFERENCE.md section 5).

Yang & Liu trained a single network with one hidden layer for all categories, "too costly to train
one per category" (Wiener et al. trained one per category), keeping 1,000 input terms and 64 hidden
units (they tried 16, 64 and 160). Here the input is a document's ltc vector over the selected terms
x, the hidden layer h = sigma(x'W1 + b1) has ``hidden`` logistic units, and the output layer has one
logistic unit per category, trained by backpropagation on the cross-entropy of the 0/1 category
vectors with an L2 penalty ``l2`` (scikit-learn's ``MLPClassifier``: Adam, ``learning_rate``,
at most ``epochs`` passes, stopping early when the training loss stops improving; deterministic for
a seed). A document is scored by the output unit's input, before the logistic:

    s(d, c) = h(d)'W2_c + b2_c

which ranks and thresholds exactly as the unit's output sigma(s) does (sigma is increasing) without
its saturation at 1.0, so SCut thresholds stay distinct. Sparse input: X W1 costs O(nnz(X) * hidden).

:class:`Network` holds the weights and scores a vocabulary-wide matrix; it is saved as one ``.npz``
file in a directory (the train stage's model bundle keeps it as its ``network`` part) and read back per worker.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.special import expit

from sparktc.errors import InputError
from sparktc.filesystem import per_worker, read_file, write_file
from sparktc.models.method import NETWORK, InTasks, Method, Parameters, ScoreRange, Scoring, shown
from sparktc.runtime.progress import loop
from sparktc.validation import between, meaning, rule

__all__ = ["METHOD", "NETWORK_FILE", "NNetParameters", "Network", "SavedNetwork", "fit_network", "load_network",
           "read_network", "write_network"]


@dataclass(frozen=True)
class Network:
    """A trained network: input ``columns`` (the selected term ids, ascending), the hidden layer
    (W1: terms x hidden, b1) and the output layer (W2: hidden x categories, b2).
    """

    columns: NDArray[np.int64]
    W1: NDArray[np.float64]
    b1: NDArray[np.float64]
    W2: NDArray[np.float64]
    b2: NDArray[np.float64]
    iterations: int = 0
    loss: float = float("nan")

    def scores(self, X: sparse.csr_matrix) -> NDArray[np.float64]:
        """Documents x categories s(d, c), the output units' inputs, for the rows of ``X`` (documents x vocabulary)."""
        hidden = expit(np.asarray(X[:, self.columns] @ self.W1) + self.b1)
        return hidden @ self.W2 + self.b2

    def to_bytes(self) -> bytes:
        """The network as the bytes of one ``.npz`` file: its columns, weights and biases, iterations and loss."""
        buffer = io.BytesIO()
        np.savez(buffer, columns=self.columns, W1=self.W1, b1=self.b1, W2=self.W2, b2=self.b2,
                 iterations=self.iterations, loss=self.loss)
        return buffer.getvalue()

    @staticmethod
    def from_bytes(data: bytes) -> Network:
        """The network :meth:`to_bytes` wrote into ``data``."""
        with np.load(io.BytesIO(data)) as saved:
            return Network(saved["columns"], saved["W1"], saved["b1"], saved["W2"], saved["b2"],
                           int(saved["iterations"]), float(saved["loss"]))


def fit_network(X: sparse.csr_matrix, Y: NDArray[np.bool_], columns: NDArray[np.int64], hidden: int, epochs: int,
                l2: float, learning_rate: float, seed: int) -> Network:
    """The network trained on the rows of ``X`` (documents x vocabulary; only ``columns`` are input) and
    their documents x categories 0/1 labels ``Y``.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    if hidden < 1:
        raise ValueError(f"hidden = {hidden}: the network needs at least one hidden unit")
    Y = np.asarray(Y, dtype=np.int64)
    # Two columns at least, or scikit-learn reads one category as a binary target (and refuses a constant one).
    padded = np.hstack([Y, np.zeros((Y.shape[0], 2 - Y.shape[1]), dtype=np.int64)]) if Y.shape[1] < 2 else Y

    class Counted(MLPClassifier):
        """MLPClassifier counting its epochs for the progress line: scikit-learn (pinned, 1.9.1) calls this once
        at the end of each of Adam's epochs.
        """

        def _update_no_improvement_count(self, *args: Any) -> None:
            super()._update_no_improvement_count(*args)
            step()

    network = Counted(hidden_layer_sizes=(hidden,), activation="logistic", solver="adam", alpha=l2,
                      learning_rate_init=learning_rate, max_iter=epochs, random_state=seed, shuffle=True)
    with warnings.catch_warnings(), loop(f"NNet epochs (at most) over {len(columns):,} terms", epochs) as step:
        warnings.simplefilter("ignore", ConvergenceWarning)  # epochs is a budget; the iterations run are recorded
        try:
            network.fit(X[:, columns], padded)
        except ValueError as error:  # scikit-learn stops a diverging network: too large a step
            if "non-finite" not in str(error):
                raise
            raise InputError(f"train.nnet.learning_rate = {learning_rate:g}: NNet's training diverged (its weights "
                             "became infinite or NaN); lower train.nnet.learning_rate (default 0.001)") from None
    W1, W2 = network.coefs_
    b1, b2 = network.intercepts_
    n = Y.shape[1]
    return Network(np.asarray(columns, dtype=np.int64), W1, b1, W2[:, :n], b2[:n], int(network.n_iter_),
                   float(network.loss_))


#: The file a network directory holds.
NETWORK_FILE = "network.npz"


def write_network(network: Network, directory: str) -> None:
    """Save ``network`` as ``directory/network.npz`` (local or any Hadoop file system pyarrow reaches)."""
    write_file(directory, NETWORK_FILE, network.to_bytes())


def read_network(directory: str) -> Network:
    """The network :func:`write_network` saved in ``directory``."""
    return Network.from_bytes(read_file(directory, NETWORK_FILE))


@dataclass(frozen=True)
class SavedNetwork:
    """A network saved in ``directory``, read when it scores (a cross-validation fold's, broadcast by its path)."""

    directory: str

    def scores(self, X: sparse.csr_matrix) -> NDArray[np.float64]:
        """Documents x categories s(d, c) of the rows of ``X`` (documents x vocabulary) by the network saved in
        ``directory``.
        """
        return read_network(self.directory).scores(X)


@per_worker
def load_network(directory: str) -> Network:
    """The network saved in ``directory``, read once per worker while its file is unchanged."""
    return read_network(directory)


@dataclass(frozen=True)
class NNetParameters(Parameters):
    """Hidden units (Yang & Liu: 64, of 16, 64, 160 tried), the training budget in epochs (passes over the
    training documents; it stops sooner when the loss stops improving), the L2 penalty and Adam's step size.
    """

    hidden: int = field(default=64, metadata=meaning("the logistic hidden units (Yang & Liu: 64, of 16, 64, 160 "
                                                     "tried)", between(1, 10_000)))
    epochs: int = field(default=200, metadata=meaning(
        "the training budget in passes over the training documents (it stops sooner when the loss stops improving)",
        between(1, 100_000)))
    l2: float = field(default=0.0001, metadata=meaning("the L2 penalty", rule(lambda v: v >= 0, ">= 0")))
    learning_rate: float = field(default=0.001, metadata=meaning("Adam's step size", rule(lambda v: v > 0, "> 0")))


def _fitting(parameters: NNetParameters, terms: int) -> InTasks:
    """One network for all categories, fitted in a Spark task of its own (:func:`fit_network`) and kept as the
    model bundle's network part.
    """

    def fit_one(X: sparse.csr_matrix, Y: NDArray[np.bool_], columns: NDArray[np.int64], directory: str,
                seed: int) -> dict:
        network = fit_network(X, Y, columns, parameters.hidden, parameters.epochs, parameters.l2,
                              parameters.learning_rate, seed)
        write_network(network, directory)
        return {"iterations": network.iterations, "loss": network.loss}

    return InTasks(fit_one, SavedNetwork, keep_as_network=True)


def _scoring(parameters: NNetParameters) -> Scoring:
    """The inputs of the saved network's output units."""
    return Scoring(NETWORK)


def _score_range(parameters: NNetParameters, nonnegative_features: bool) -> ScoreRange:
    """The output units' inputs, unbounded; natural t = 0, sigma(s) > 1/2."""
    return ScoreRange.unbounded(0.0, "the output unit's sigma(s) > 1/2", "NNet's scores")


def _describe(record: Mapping[str, Any]) -> list[str]:
    return [f"- Method: `nnet`, one network for all categories, {shown(record, 'hidden')} logistic hidden "
            f"units, at most {shown(record, 'epochs')} epochs of Adam (step "
            f"{shown(record, 'learning_rate')}), L2 penalty {shown(record, 'l2')}"]


#: One network for all categories (Yang & Liu 1999): s = the input of c's logistic output unit, natural t = 0.
METHOD = Method(
    name="nnet", title="NNet", parameters=NNetParameters, fitting=_fitting,
    scoring=_scoring, score_range=_score_range, describe=_describe,
    unused=("tune.shared_fbr",),
    unused_reason="NNet is one network for all categories: its fbr is always one for all categories",
)
