"""Configuration: a wrong key or value stops the job before Spark starts, naming the key, the value and the allowed ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sparktc.config import ConfigError, check_output, load_config, parse_override

REPO = Path(__file__).resolve().parents[1]
REUTERS = ["corpus.format=reuters21578", f"corpus.path={REPO}"]


def test_project_configs_load() -> None:
    config = load_config(str(REPO / "conf" / "reuters21578.toml"), [f"corpus.path={REPO.parent / 'shared' / 'data' / 'reuters21578'}"])
    assert (config.corpus.category_set, config.corpus.document_filter) == ("R90", "aptemod")
    assert config.train.solver == "l2r_l2loss_svc_dual" and config.train.C == 1.0 and config.train.bias == 1.0
    assert Path(config.tokenize.stop_list).is_absolute()
    assert load_config(str(REPO / "conf" / "synthetic.toml")).synthesize.documents == 30000
    best = load_config(str(REPO / "conf" / "reuters21578-best.toml"), [f"corpus.path={REPO}"])
    assert best.train.thresholding == "scutfbr" and len(best.tune.positive_weight) == 7  # a search space
    assert best.tune.terms == [0, 10000] and len(best.tune.solver) == 2


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["train.Cost=2"], "unknown key train.Cost; keys of [train]: method, solver, C, epsilon, bias, positive_weight"),
        (["trian.C=2"], "unknown section [trian]"),
        (["train.solver=svm"], "train.solver = 'svm' is not allowed; allowed values: 'l2r_lr', 'l2r_l2loss_svc_dual'"),
        (["train.C=0"], "train.C = 0.0 is out of range; expected > 0"),
        (["train.C=high"], "train.C = 'high': expected float, got str"),
        (["corpus.category_set=R20"], "corpus.category_set = 'R20' is not allowed; allowed values: 'R10', 'R90', 'R115'"),
        (["select.top_k=10", "select.reduction_factor=0.5"], "set one, not both"),
        (["select.reduction_factor=1.0"], "select.reduction_factor = 1.0 is out of range; expected 0 <= xi < 1"),
        (["evaluate.zero_division=0.5"], "evaluate.zero_division = 0.5 is not allowed"),
        (["corpus.test_parts=[4]"], "corpus.test_parts = [4] is out of range"),
        (["spark.conf={sql.shuffle.partitions = 4}"], "keys start with 'spark.'"),
        (["tokenize.stop_list=/no/such/stop.list"], "tokenize.stop_list = '/no/such/stop.list': no such file or directory"),
        (["train"], "expected section.key=value"),
    ],
)
def test_bad_settings_are_named(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, REUTERS + overrides)
    assert message in str(error.value)


def test_corpus_must_be_named() -> None:
    with pytest.raises(ConfigError, match="corpus.format is not set"):
        load_config(None, [])
    with pytest.raises(ConfigError, match="corpus.path is not set"):
        load_config(None, ["corpus.format=jsonl"])
    with pytest.raises(ConfigError, match="corpus.path = '/no/such/dir': no such file or directory"):
        load_config(None, ["corpus.format=jsonl", "corpus.path=/no/such/dir"])


def test_overrides_are_toml_values_or_plain_strings() -> None:
    assert parse_override("train.C=0.5") == ("train", "C", 0.5)
    assert parse_override("corpus.test_parts=[0, 2]") == ("corpus", "test_parts", [0, 2])
    assert parse_override("corpus.path=/data/reut2") == ("corpus", "path", "/data/reut2")
    assert parse_override('spark.app_name="x=y"') == ("spark", "app_name", "x=y")
    config = load_config(None, REUTERS + ["train.C=2", "train.epsilon=1"])
    assert (config.train.C, config.train.epsilon) == (2.0, 1.0)


def test_output_inside_the_corpus_is_refused(tmp_path: Path) -> None:
    config = load_config(None, ["corpus.format=jsonl", f"corpus.path={tmp_path}"])
    with pytest.raises(ConfigError, match="inside corpus.path"):
        check_output(config, str(tmp_path / "out"))
    assert check_output(config, str(tmp_path.parent / "elsewhere")) == str(tmp_path.parent / "elsewhere")


def test_a_job_stops_before_spark_starts_on_a_bad_key() -> None:
    """The job's exit code is 2 and its message names the key; no Spark session is created."""
    job = subprocess.run(
        [sys.executable, str(REPO / "jobs" / "train.py"), "--config", str(REPO / "conf" / "reuters21578.toml"),
         "--set", f"corpus.path={REPO}", "--set", "train.loss=hinge", "--output", "/tmp/never-written"],
        capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=60,
    )
    assert job.returncode == 2
    assert "sparktc: configuration error: unknown key train.loss" in job.stderr
    assert "SparkContext" not in job.stderr and not Path("/tmp/never-written").exists()
