"""Values the driver hands to every task of a stage, on any session: what ``SparkContext.broadcast`` did.

Spark Connect has no broadcast variables. A :class:`Shared` value travels in the closure of the task's function,
which Spark pickles once per job: on a classic session PySpark itself sends a function over 1 MB
(``spark.broadcast.UDFCompressionThreshold``) as a broadcast variable, so the traffic is a broadcast's; on a Connect
session it travels in the plan the client sends, capped by the server's ``spark.connect.grpc.maxInboundMessageSize``
(128 MB by default: a model of 47,236 terms x 103 categories in float64 is 39 MB). Each task unpickles its own copy,
so what a worker computes from a value is kept by the value's ``key``. What is too big for a plan is read by the
tasks from files the run wrote, as classify reads its bundle (:class:`sparktc.experiment.bundle.OnWorker`). sparktc
never unpickles a file: the pickling here is Spark's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Shared"]

Value = TypeVar("Value")


@dataclass(frozen=True)
class Shared(Generic[Value]):
    """``value`` handed to the tasks whose function holds this object; ``key``, unique to it, is what a worker keys
    what it computes from the value by (each task unpickles its own copy: the same value, not the same object).

    Example::

        shared = Shared(scorer)
        def score(index, path):
            scorer = shared.value
    """

    value: Value
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
