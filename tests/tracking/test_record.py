"""The run record's own logic (:mod:`sparktc.tracking.record`), no Spark: a benchmark's figures flattened, and a run
ended by an error.
"""

from __future__ import annotations

import math

import pytest

from sparktc.errors import CONFIG_EXIT, INTERRUPTED_EXIT, ConfigError
from sparktc.tracking.record import RunRecord


def record() -> RunRecord:
    return RunRecord.start("r-1", "benchmark:x", {"benchmark": {"repeat": 1}})


def test_figures_are_flattened_with_dots_and_unmeasured_ones_left_out() -> None:
    run = record()
    run.add_figures({"sparktc": {"100.local[2]": {"seconds": 12, "micro_f1": 0.8, "macro_f1": None}},
                     "peer": {"seconds": math.nan, "cpu_seconds": 3.5}, "tokens": {"differing": 0}})
    assert run.figures == {"sparktc.100.local[2].seconds": 12.0, "sparktc.100.local[2].micro_f1": 0.8,
                           "peer.cpu_seconds": 3.5, "tokens.differing": 0.0}
    assert dict(run.table().to_pylist()[0]["figures"]) == run.figures


@pytest.mark.parametrize("value", ["12 s", True, [1.0]])
def test_a_figure_that_is_no_number_is_refused_naming_it(value: object) -> None:
    with pytest.raises(TypeError, match=r"figure sparktc\.seconds of run r-1 is"):
        record().add_figures({"sparktc": {"seconds": value}})


@pytest.mark.parametrize(("error", "status", "text"), [
    (ConfigError("--set x: no such setting\nmore"), CONFIG_EXIT, "ConfigError: --set x: no such setting"),
    (KeyboardInterrupt(), INTERRUPTED_EXIT, "KeyboardInterrupt: KeyboardInterrupt"),
    (RuntimeError("x" * 2000), 1, "RuntimeError: " + "x" * 986),
])
def test_a_failed_run_has_its_errors_exit_status_and_first_line(error: BaseException, status: int, text: str) -> None:
    run = record().fail(error)
    assert (run.exit_status, run.error) == (status, text) and run.finished is not None
