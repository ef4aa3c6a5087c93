"""--preset: LYRL2004's methods as whole [select], [train] and [tune] sections, with --set after them."""

from __future__ import annotations

import functools

import pytest

from sparktc.apps.cli import parse_arguments
from sparktc.experiment.config import ConfigError, load_config
from sparktc.experiment.presets import FBR_GRID, PRESETS, attribute

SYNTHETIC = ["corpus.format=synthetic"]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_a_valid_configuration_of_its_settings(name):
    config = load_config("conf/synthetic.toml", [], name)
    for key, value in PRESETS[name].settings.items():
        assert functools.reduce(getattr, key.split("."), config) == value, key
    assert config.select.top_k == 0 and config.select.reduction_factor == 0.0


def test_the_papers_choices():
    svm1, svm2 = load_config(None, SYNTHETIC, "lyrl2004.svm1"), load_config(None, SYNTHETIC, "lyrl2004.svm2")
    assert (svm1.train.thresholding, svm1.tune.fbr, svm1.tune.shared_fbr) == ("scutfbr", FBR_GRID, True)
    assert FBR_GRID == [round(0.1 * k, 1) for k in range(1, 9)]
    assert (svm2.train.thresholding, svm2.train.threshold, svm2.tune.fbr) == ("fixed", 0.0, [])
    assert min(svm2.tune.liblinear.positive_weight) == 1.0 and len(svm2.tune.liblinear.positive_weight) > 1
    assert load_config(None, SYNTHETIC, "lyrl2004.knn").train.method == "knn"
    assert load_config(None, SYNTHETIC, "lyrl2004.rocchio").train.method == "rocchio"


def test_the_preset_replaces_the_files_sections_and_set_applies_after(tmp_path, capsys):
    toml = tmp_path / "run.toml"
    toml.write_text('[corpus]\nformat = "synthetic"\n[train.liblinear]\nC = 2.0\nepsilon = 0.0001\n'
                    '[select]\ntop_k = 500\n[evaluate]\nzero_division = 0.0\n')
    config = load_config(str(toml), ["train.folds=3"], "lyrl2004.svm1")
    assert (config.train.liblinear.C, config.select.top_k, config.train.folds) == (1.0, 0, 3)
    assert config.evaluate.zero_division == 0.0  # a section the preset does not name is the file's
    # Only what the preset changes is told: train.liblinear.epsilon = 0.0001 is the default, so it is kept as it is.
    assert capsys.readouterr().err == (f"sparktc: --preset lyrl2004.svm1 replaces [select], [train], [tune] of {toml}, "
                                       "whose select.top_k, train.liblinear.C it does not keep\n")


def test_an_unknown_preset_is_named_with_the_known_ones():
    with pytest.raises(ConfigError, match=r"--preset unknown preset 'svm3'; presets: lyrl2004\.svm1, lyrl2004\.svm2"):
        load_config(None, SYNTHETIC, "svm3")


def test_every_job_takes_the_preset(tmp_path, capsys):
    config, _, _ = parse_arguments("x", ["--config", "conf/synthetic.toml", "--preset", "lyrl2004.rocchio",
                                         "--set", "train.rocchio.gamma=2", "--output", str(tmp_path / "run")])
    assert (config.train.method, config.train.rocchio.beta, config.train.rocchio.gamma) == ("rocchio", 16.0, 2.0)
    with pytest.raises(SystemExit):
        parse_arguments("x", ["--preset", "svm3", "--output", str(tmp_path / "run")])
    assert "invalid choice: 'svm3'" in capsys.readouterr().err


def refusal(preset: str, *overrides: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config("conf/synthetic.toml", list(overrides), preset)
    return str(caught.value)


def test_a_set_against_the_preset_is_told_as_the_users_not_the_presets():
    assert refusal("lyrl2004.svm1", "train.thresholding=fixed") == (
        f"tune.fbr = {FBR_GRID} (set by --preset lyrl2004.svm1) with train.thresholding = 'fixed' (--set): fbr moves "
        "SCutFBR's thresholds only — --preset lyrl2004.svm1 needs train.thresholding = 'scutfbr'; drop --set "
        "train.thresholding or choose another preset")
    assert refusal("lyrl2004.knn", "select.top_k=100") == (
        "tune.terms = [1000, 3000, 10000, 0] (set by --preset lyrl2004.knn) and select.top_k = 100 (--set): tune.terms "
        "replaces the term selection — --preset lyrl2004.knn sets tune.terms = [1000, 3000, 10000, 0]; drop --set "
        "select.top_k or choose another preset")
    # A refusal of the user's settings alone is told as without a preset.
    assert refusal("lyrl2004.svm1", "select.top_k=10", "select.reduction_factor=0.5") == (
        "select.top_k = 10 and select.reduction_factor = 0.5: set one, not both")


CONFLICTS = ["train.thresholding=fixed", "train.thresholding=scut", "train.thresholding=rcut", "train.method=liblinear",
             "train.method=knn", "train.method=rocchio", "train.method=llsf", "train.method=nnet", "train.method=nb",
             "tune.liblinear.C=[0.5, 1.0]", "tune.liblinear.solver=['l2r_lr', 'l2r_l2loss_svc_dual']",
             "tune.liblinear.positive_weight=[1.0, 2.0]",
             "tune.liblinear.shared_positive_weight=true", "tune.fbr=[0.1, 0.2]", "tune.shared_fbr=true",
             "tune.terms=[100, 0]",
             "select.top_k=100", "select.reduction_factor=0.5", "train.threshold=0.5", "train.llsf.k=5000"]


@pytest.mark.parametrize("name", list(PRESETS))
def test_no_refusal_under_a_preset_tells_the_user_to_remove_what_only_the_preset_set(name):
    refused = 0
    for override in CONFLICTS:
        key = override.split("=")[0]
        try:
            load_config("conf/synthetic.toml", [override], name)
        except ConfigError as error:
            message = str(error)
        else:
            continue
        refused += 1
        own = [setting for setting in PRESETS[name].settings if setting != key and setting in message]
        if not own:  # the user's setting alone: told as it always was
            continue
        assert key in message and "(--set)" in message and f"(set by --preset {name})" in message, message
        advice = message.split(" — ")[-1]
        assert advice.startswith(f"--preset {name} needs {key} = " if key in PRESETS[name].settings
                                 else f"--preset {name} sets "), message
        assert advice.endswith(f"; drop --set {key} or choose another preset"), message
        for setting in own:  # never "remove tune.fbr", "set train.thresholding = ..." of the preset's own settings
            assert f"remove {setting}" not in message and f"set {setting} =" not in message, message
        assert " remove it" not in message and " remove them" not in message, message
    # another method's [tune.NAME] table is kept and unused, not refused: fewer conflicts for kNN and Rocchio
    assert refused >= 3, f"only {refused} of the conflicts are refused under {name}"


def test_a_setting_of_the_file_is_told_with_the_file_and_one_of_the_presets_own_with_the_preset():
    known = {"train.method", "train.liblinear.C", "weight.scheme", "corpus.format"}
    origins = {"train.method": "--preset lyrl2004.svm1", "weight.scheme": "--config run.toml"}
    message = ("train.method = 'liblinear' with weight.scheme = 'x': a rule's reason (it; has parts); "
               "remove train.method")
    assert attribute(message, origins, "lyrl2004.svm1", known) == (
        "train.method = 'liblinear' (set by --preset lyrl2004.svm1) with weight.scheme = 'x' (--config run.toml): a "
        "rule's reason (it; has parts) — --preset lyrl2004.svm1 sets train.method = 'liblinear'; drop weight.scheme "
        "from --config run.toml or choose another preset")
    # Against a default only (nothing of the user's named): the preset is what to change.
    assert attribute("train.method = 'liblinear' with corpus.format = 'y': why", origins, "lyrl2004.svm1", known) == (
        "train.method = 'liblinear' (set by --preset lyrl2004.svm1) with corpus.format = 'y': why — --preset "
        "lyrl2004.svm1 sets train.method = 'liblinear'; choose another preset or --set one of the settings named here")
    # Nothing the preset set is named: the message is the rule's own.
    message = "train.liblinear.C = 2.0 with weight.scheme = 'x': why; remove train.liblinear.C"
    assert attribute(message, origins, "lyrl2004.svm1", known) == message
