"""Memory in the Python workers: checked before training starts, and named when a worker runs out.

Every Python worker that trains (or scores kNN) holds the whole training split of ``vectors``
(:func:`sparktc.features.matrix.load_training_set`), so its memory grows with the training set, not with
the category: one worker per executor core, each with its own copy. Spark bounds a worker by
``spark.executor.pyspark.memory`` divided by ``spark.executor.cores``; beyond it Python raises
``MemoryError``. Without that setting the worker is bounded only by the machine or the
container (``spark.executor.memoryOverhead`` on YARN and Kubernetes), which kills it instead.
Either way the user is told the size of the training set and which settings to change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from sparktc.errors import ConfigError, InputError, SparktcError

PYSPARK_MEMORY = "spark.executor.pyspark.memory"
#: sparktc's cap on a Python task's resident memory (:mod:`sparktc.runtime.task_memory`), as a serverless platform
#: caps a UDF's.
TASK_MEMORY = "spark.sparktc.task_memory"
EXECUTOR_CORES = "spark.executor.cores"
SETTINGS_ADVICE = (
    f"raise {PYSPARK_MEMORY} (with spark.executor.memoryOverhead on YARN or Kubernetes), or lower "
    f"{EXECUTOR_CORES} so fewer workers share an executor, or keep fewer terms (select.top_k)"
)
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
MEMORY_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)b?\s*")  # a Spark memory size, lower case
#: Address space of a Python worker with sparktc's libraries loaded (numpy, scipy, pandas, pyarrow,
#: LIBLINEAR), before any data: 1,425 MiB measured (VmPeak) with CPython 3.11 on Linux x86-64. Spark
#: limits a worker's address space (RLIMIT_AS), not its resident memory, so this counts in full.
WORKER_BASELINE = 1500 << 20
#: Resident memory of a Python worker with sparktc's libraries loaded, before a task's data: 319 MiB measured
#: (VmHWM of the smallest tasks at 804,414 documents, docs/benchmarks/memory.md), what a cap on a task's memory counts.
WORKER_RESIDENT = 320 << 20
#: What a training task holds beside the worker and the training set (a category's labels, LIBLINEAR's work
#: arrays, the model): at 804,414 documents the training tasks peaked 66 MiB above the two (docs/benchmarks/memory.md).
TRAINING_TASK_MARGIN = 64 << 20


class ResourceLimitError(SparktcError, RuntimeError):
    """A stage needs more memory than its workers may use; the message says which setting to change."""


def parse_memory(text: str) -> int:
    """Bytes of a Spark memory setting ("512m", "2g", "1t"; a bare number is MiB, as for pyspark memory)."""
    match = MEMORY_SIZE.fullmatch(text.lower())
    if match is None:
        raise InputError(f"{text!r} is not a Spark memory size such as 512m or 2g")
    return int(match.group(1)) * _UNITS[match.group(2) or "m"]


def training_set_bytes(n_documents: int, nonzeros: int, cross_validation: bool) -> int:
    """Estimated peak bytes one worker holds for the training set.

    Per nonzero: 8 (Arrow int32 index + float32 value, as read) + 16 (CSR float64 value + int64
    index) + 16 (a LIBLINEAR feature_node), plus 32 more while cross-validation builds the fold
    problems; per document two more feature nodes (bias and terminator) and the row pointers.
    """
    per_nonzero = 40 + (32 if cross_validation else 0)
    return per_nonzero * nonzeros + 48 * n_documents


def task_memory_problem(value: object) -> str | None:
    """What is wrong with ``value`` for ``spark.sparktc.task_memory`` (None when it is a memory size a Python worker
    can hold its libraries in).
    """
    if isinstance(value, str) and MEMORY_SIZE.fullmatch(value.lower()) and parse_memory(value) >= WORKER_RESIDENT:
        return None
    return (f"spark.conf {TASK_MEMORY!r} = {value!r} is not allowed; expected a memory size such as '1g' or '600m', "
            f"at least the {WORKER_RESIDENT >> 20} MiB a Python worker holds before any data")


def worker_memory_limit(conf: Mapping[str, str]) -> int | None:
    """Bytes each Python worker may use under ``spark.executor.pyspark.memory``; None when unbounded."""
    memory = conf.get(PYSPARK_MEMORY)
    if not memory:
        return None
    return parse_memory(memory) // max(1, int(conf.get(EXECUTOR_CORES) or 1))


def check_worker_memory(conf: Mapping[str, str]) -> None:
    """Refuse (ConfigError, before any work) a memory limit under which no Python worker can even load its libraries:
    such workers fail every task, or spin in Python's out-of-memory handling and never finish.
    """
    try:
        limit = worker_memory_limit(conf)
    except InputError as error:
        raise ConfigError(f"{PYSPARK_MEMORY}: {error}") from None
    if limit is not None and limit < WORKER_BASELINE:
        raise ConfigError(
            f"{PYSPARK_MEMORY} = {conf[PYSPARK_MEMORY]} over {conf.get(EXECUTOR_CORES) or 1} core(s) allows "
            f"{limit / 2**20:,.0f} MiB per Python worker, less than the {WORKER_BASELINE / 2**20:,.0f} MiB of address "
            f"space a worker with Python and sparktc's libraries takes before reading any data; {SETTINGS_ADVICE}"
        )


def check_training_memory(conf: Mapping[str, str], n_documents: int, nonzeros: int, cross_validation: bool) -> None:
    """Refuse to start training when a worker with the training set would exceed its memory limit, or a task its
    cap (``spark.sparktc.task_memory``): every training task holds the whole training set, so no shape of the tasks
    is smaller.
    """
    limit = worker_memory_limit(conf)
    data = training_set_bytes(n_documents, nonzeros, cross_validation)
    cap = conf.get(TASK_MEMORY)
    task = WORKER_RESIDENT + data + TRAINING_TASK_MARGIN
    if cap and task > parse_memory(cap):
        raise ResourceLimitError(
            f"training needs about {task / 2**20:,.0f} MiB in each Python task ({WORKER_RESIDENT / 2**20:,.0f} for "
            f"Python and its libraries, {data / 2**20:,.0f} for {n_documents:,} training documents with "
            f"{nonzeros:,} nonzero weights, which every training task holds whole, "
            f"{TRAINING_TASK_MARGIN / 2**20:,.0f} for a category's own work), over "
            f"{TASK_MEMORY} = {cap}; raise {TASK_MEMORY} (on a platform that caps a task's memory lower, run on "
            f"compute without that cap), or keep fewer terms (select.top_k)"
        )
    needed = WORKER_BASELINE + data
    if limit is not None and needed > limit:
        raise ResourceLimitError(
            f"training needs about {needed / 2**20:,.0f} MiB in each Python worker ({WORKER_BASELINE / 2**20:,.0f} "
            f"for Python and its libraries, {data / 2**20:,.0f} for {n_documents:,} training documents with "
            f"{nonzeros:,} nonzero weights), but {PYSPARK_MEMORY} = {conf[PYSPARK_MEMORY]} over "
            f"{conf.get(EXECUTOR_CORES) or 1} core(s) allows {limit / 2**20:,.0f} MiB; {SETTINGS_ADVICE}"
        )


def out_of_memory(stage: str, where: str) -> ResourceLimitError:
    """The error a worker raises in place of ``MemoryError``."""
    return ResourceLimitError(f"a Python worker ran out of memory in {stage} ({where}); {SETTINGS_ADVICE}")


def explain_worker_failure(error: Exception, stage: str) -> ResourceLimitError | None:
    """The user's message for a Spark job that failed because a Python worker ran out of memory or died."""
    text = str(error)
    found = re.search(rf"{ResourceLimitError.__name__}: (.*)", text)
    if found:
        return ResourceLimitError(found.group(1).strip())
    died = re.search(r"Task \S+ in stage \S+ failed \d+ times.*?Python worker exited unexpectedly[^\n]*", text, re.S)
    if died:
        return ResourceLimitError(
            f"a Python worker died in {stage} on every attempt of a task; when the operating system or the "
            f"cluster kills workers for memory, {SETTINGS_ADVICE}. Spark's message: "
            + " ".join(died.group(0).split())[:600]
        )
    return None


@contextmanager
def explained_failures(stage: str) -> Iterator[None]:
    """Run Spark jobs whose failures for worker memory are reported with the settings to change."""
    try:
        yield
    except Exception as error:
        explained = explain_worker_failure(error, stage)
        if explained is None:
            raise
        raise explained from None
