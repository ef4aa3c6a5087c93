"""--preset: LYRL2004's methods as whole [select], [train] and [tune] sections, with --set after them."""

from __future__ import annotations

import pytest

from sparktc.apps.cli import parse_arguments
from sparktc.runtime.config import ConfigError, load_config
from sparktc.runtime.presets import FBR_GRID, PRESETS

SYNTHETIC = ["corpus.format=synthetic"]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_a_valid_configuration_of_its_settings(name):
    config = load_config("conf/synthetic.toml", [], name)
    for key, value in PRESETS[name].settings.items():
        section, field = key.split(".")
        assert getattr(getattr(config, section), field) == value, key
    assert config.select.top_k == 0 and config.select.reduction_factor == 0.0


def test_the_papers_choices():
    svm1, svm2 = load_config(None, SYNTHETIC, "lyrl2004.svm1"), load_config(None, SYNTHETIC, "lyrl2004.svm2")
    assert (svm1.train.thresholding, svm1.tune.fbr, svm1.tune.shared_fbr) == ("scutfbr", FBR_GRID, True)
    assert FBR_GRID == [round(0.1 * k, 1) for k in range(1, 9)]
    assert (svm2.train.thresholding, svm2.train.threshold, svm2.tune.fbr) == ("fixed", 0.0, [])
    assert min(svm2.tune.positive_weight) == 1.0 and len(svm2.tune.positive_weight) > 1
    assert load_config(None, SYNTHETIC, "lyrl2004.knn").train.method == "knn"
    assert load_config(None, SYNTHETIC, "lyrl2004.rocchio").train.method == "rocchio"


def test_the_preset_replaces_the_files_sections_and_set_applies_after(tmp_path, capsys):
    toml = tmp_path / "run.toml"
    toml.write_text('[corpus]\nformat = "synthetic"\n[train]\nC = 2.0\nepsilon = 0.0001\n[select]\ntop_k = 500\n'
                    '[evaluate]\nzero_division = 0.0\n')
    config = load_config(str(toml), ["train.folds=3"], "lyrl2004.svm1")
    assert (config.train.C, config.select.top_k, config.train.folds) == (1.0, 0, 3)
    assert config.evaluate.zero_division == 0.0  # a section the preset does not name is the file's
    # Only what the preset changes is told: train.epsilon = 0.0001 is the default, so it is kept as it is.
    assert capsys.readouterr().err == (f"sparktc: --preset lyrl2004.svm1 replaces [select], [train], [tune] of {toml}, "
                                       "whose select.top_k, train.C it does not keep\n")


def test_an_unknown_preset_is_named_with_the_known_ones():
    with pytest.raises(ConfigError, match=r"--preset unknown preset 'svm3'; presets: lyrl2004\.svm1, lyrl2004\.svm2"):
        load_config(None, SYNTHETIC, "svm3")


def test_every_job_takes_the_preset(tmp_path, capsys):
    config, _, _ = parse_arguments("x", ["--config", "conf/synthetic.toml", "--preset", "lyrl2004.rocchio",
                                         "--set", "train.rocchio_gamma=2", "--output", str(tmp_path / "run")])
    assert (config.train.method, config.train.rocchio_beta, config.train.rocchio_gamma) == ("rocchio", 16.0, 2.0)
    with pytest.raises(SystemExit):
        parse_arguments("x", ["--preset", "svm3", "--output", str(tmp_path / "run")])
    assert "invalid choice: 'svm3'" in capsys.readouterr().err
