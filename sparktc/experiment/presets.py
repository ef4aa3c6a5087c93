"""Named settings: the classifiers of LYRL2004 and of Yang & Liu 1999 as whole ``[select]``, ``[train]`` and
``[tune]`` sections.

``--preset NAME`` (every job) replaces those three sections of the configuration file by the preset's: a key the
preset does not name takes its default, so nothing of another method's settings is mixed in. ``--set`` applies
after the preset. A run records the resulting settings like any other, so a preset is only a name for them. A
configuration refused under a preset says which settings the preset gave and which the user (:func:`attribute`),
so that it never advises removing a setting the user did not write.

Lewis, Yang, Rose & Li 2004 (LYRL2004; ``../shared/seeds/003_*.txt``, section "Supervised learning algorithms";
REFERENCE.md sections 4-5) train on ltc vectors of every training term and set thresholds by SCutFBR.1: 5-fold
cross-validation with folds balancing positives, per fold the threshold with the best F1 on the held-out fifth or,
when that F1 is below fbr, the score of the top-ranked held-out document; the threshold is the folds' mean.
Our copy of the paper has its numbers stripped, so each grid below says where its values come from; where sparktc
cannot do what the paper did, the preset's ``differs`` says what it does instead.

Yang & Liu 1999 (``../shared/seeds/000_*.txt``, section 5.1; REFERENCE.md sections 5 and 7) compare SVM, kNN, LLSF,
NNet and NB on Reuters-21578 R(90) ApteMod, each over its own chi-square feature set size and with per-category
thresholds tuned on the training documents; ``benchmarks/yang_liu_1999.py`` runs these presets. The feature set
sizes (Yang & Liu's among the candidates) and SCutFBR's fbr are chosen by 5-fold cross-validation on the training
documents: per category for SVM, once for the whole model by micro-F1 for the others.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PRESETS", "PRESET_SECTIONS", "SET", "Preset", "apply_preset", "attribute"]

#: The sections a preset replaces whole.
PRESET_SECTIONS = ("select", "train", "tune")
#: SCutFBR.1's fbr candidates, 0.1 .. 0.8 (LYRL2004's range, REFERENCE.md section 5).
FBR_GRID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
#: The fbr candidates of Yang & Liu's joint methods, one for the whole model (0: plain SCut).
YANG_LIU_FBR = [0.0, 0.1, 0.2, 0.3, 0.5]


@dataclass(frozen=True)
class Preset:
    """A method of a paper: its name, what it is, the settings (``section.key`` -> value) and how sparktc's
    version differs from the paper's.
    """

    name: str
    description: str
    settings: Mapping[str, Any]
    differs: str


PRESETS: dict[str, Preset] = {preset.name: preset for preset in (
    Preset(
        "lyrl2004.svm1",
        "a linear SVM per category (C = 1, SVMlight's default for unit-length vectors), every training term, "
        "SCutFBR.1 thresholds with one fbr for the category set chosen by 5-fold cross-validation from 0.1 .. 0.8",
        {"train.method": "liblinear", "train.liblinear.solver": "l2r_l2loss_svc_dual", "train.liblinear.C": 1.0,
         "train.liblinear.bias": 1.0,
         "train.thresholding": "scutfbr", "train.folds": 5, "tune.fbr": FBR_GRID, "tune.shared_fbr": True},
        "LIBLINEAR's L2-loss dual solver instead of SVMlight's hinge loss (as the LIBSVM site's re-run of SVM.1); "
        "fbr chosen by cross-validated micro-F1 (LYRL2004 chose one per averaged measure)",
    ),
    Preset(
        "lyrl2004.svm2",
        "a linear SVM per category whose positive documents weigh j times the negatives (cost-sensitive "
        "training), j chosen per category by cross-validation, threshold 0",
        {"train.method": "liblinear", "train.liblinear.solver": "l2r_l2loss_svc_dual", "train.liblinear.C": 1.0,
         "train.liblinear.bias": 1.0,
         "train.thresholding": "fixed", "train.threshold": 0.0, "train.folds": 5,
         "tune.liblinear.positive_weight": [1.0, 1.33, 1.8, 2.5, 3.67, 6.0, 13.0]},
        "j chosen by 5-fold cross-validated F1 instead of SVMlight's leave-one-out estimate; LYRL2004's j values "
        "are stripped from our copy, so the grid is LibMultiLabel's cost-sensitive one ((2 - t) / t)",
    ),
    Preset(
        "lyrl2004.knn",
        "the sum of the cosine similarities of the k most similar training documents of the category, "
        "SCutFBR.1 thresholds, the feature set size chosen by 5-fold cross-validation over the f_max chi-square "
        "ranking of the terms",
        {"train.method": "knn", "train.knn.k": 45, "train.thresholding": "scutfbr", "train.fbr": 0.1,
         "train.folds": 5, "tune.terms": [1000, 3000, 10000, 0]},
        "LYRL2004 chose k, fbr and the feature set size by cross-validation from grids stripped from our copy; "
        "here k = 45 (Yang & Liu 1999) and fbr = 0.1 are fixed and the feature set size is chosen from "
        "1,000 / 3,000 / 10,000 / all terms",
    ),
    Preset(
        "lyrl2004.rocchio",
        "beta times the positive centroid minus gamma times the negative one, "
        "SCutFBR.1 thresholds with fbr chosen per category by 5-fold cross-validation",
        {"train.method": "rocchio", "train.rocchio.beta": 16.0, "train.rocchio.gamma": 4.0,
         "train.thresholding": "scutfbr", "train.folds": 5, "tune.fbr": FBR_GRID},
        "beta = 16 and gamma = 4 are Debole & Sebastiani's (REFERENCE.md section 5); LYRL2004's weights, its "
        "per-category pmax truncation of the prototype and its feature set sizes are not reproduced",
    ),
    Preset(
        "yang_liu1999.svm",
        "a linear SVM per category, SCut thresholds, the feature set size chosen per category by 5-fold "
        "cross-validation from 2,000 / 5,000 / 10,000 chi-square-ranked terms",
        {"train.method": "liblinear", "train.thresholding": "scut", "tune.terms": [2000, 5000, 10000]},
        "SVMlight's linear SVM with 10,000 features in Yang & Liu; LIBLINEAR's L2-loss dual solver (C = 1, bias 1) "
        "here, and the feature count among the candidates chosen per category",
    ),
    Preset(
        "yang_liu1999.knn",
        "the summed cosine similarities of the k = 45 nearest training documents, SCut thresholds, the feature set "
        "size chosen for all categories by 5-fold cross-validated micro-F1 from 1,000 / 2,415 / 5,000 / all terms",
        {"train.method": "knn", "train.knn.k": 45, "train.thresholding": "scut", "tune.terms": [1000, 2415, 5000, 0]},
        "Yang & Liu fixed 2,415 features; here it is one of the candidates, chosen by cross-validation",
    ),
    Preset(
        "yang_liu1999.llsf",
        "one least-squares fit for all categories keeping 500 singular values, SCutFBR thresholds, the feature set "
        "size and fbr chosen for the whole model by 5-fold cross-validated micro-F1",
        {"train.method": "llsf", "train.llsf.k": 500, "train.thresholding": "scutfbr",
         "tune.terms": [1000, 2415], "tune.fbr": YANG_LIU_FBR},
        "Yang & Liu fixed 2,415 features and set thresholds by SCut; fbr 0 among the candidates is plain SCut",
    ),
    Preset(
        "yang_liu1999.nnet",
        "one network for all categories with 64 logistic hidden units, SCutFBR thresholds, the feature set size "
        "and fbr chosen for the whole model by 5-fold cross-validated micro-F1",
        {"train.method": "nnet", "train.nnet.hidden": 64, "train.thresholding": "scutfbr",
         "tune.terms": [500, 1000, 2000], "tune.fbr": YANG_LIU_FBR},
        "Yang & Liu fixed 1,000 features and trained by backpropagation; here Adam (scikit-learn's MLPClassifier), "
        "and the feature count is one of the candidates",
    ),
    Preset(
        "yang_liu1999.nb",
        "the multinomial mixture over raw term frequencies, scored by the posterior P(c|d), SCutFBR thresholds, "
        "the feature set size and fbr chosen for the whole model by 5-fold cross-validated micro-F1",
        {"train.method": "nb", "train.nb.model": "mixture", "train.thresholding": "scutfbr",
         "tune.terms": [1000, 2000, 5000, 10000], "tune.fbr": YANG_LIU_FBR},
        "Yang & Liu ran the Bow library's NB with 2,000 features; here the feature count is one of the candidates",
    ),
)}


def apply_preset(raw: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The configuration ``raw`` (TOML tables by section) with :data:`PRESET_SECTIONS` replaced by preset
    ``name``'s settings. KeyError names the known presets for an unknown name.
    """
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
    replaced: dict[str, dict[str, Any]] = {section: {} for section in PRESET_SECTIONS}
    for key, value in PRESETS[name].settings.items():
        section, *tables, field = key.split(".")
        values = replaced[section]
        for table in tables:  # a method's table: train.knn.k
            values = values.setdefault(table, {})
        values[field] = value
    return {**raw, **replaced}


#: Where a setting came from, as :func:`attribute` is told: ``--set``, else ``--config FILE`` or ``--preset NAME``.
SET = "--set"
_KEY = re.compile(r"\b[a-z]+(?:\.[A-Za-z_0-9]+){1,2}\b")


def _top_level(text: str, start: int = 0) -> list[int]:
    """The positions in ``text`` from ``start`` outside brackets and quotes (values such as ``[0.1, 0.2]``)."""
    depth, quote, found = 0, "", []
    for position in range(start, len(text)):
        char = text[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"" and not (position and text[position - 1].isalnum()):  # not an apostrophe (SCutFBR's)
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            found.append(position)
    return found


def _named(text: str, known: Collection[str]) -> dict[str, tuple[int, bool]]:
    """The settings ``text`` names, each with where its mention ends and whether it is given a value: the first
    ``key = value`` (the end after the value), else the first mere mention (``SCutFBR uses train.fbr``).
    """
    named: dict[str, tuple[int, bool]] = {}
    for match in _KEY.finditer(text):
        key = match.group(0)
        if key not in known or named.get(key, (0, False))[1]:
            continue
        if text.startswith(" = ", match.end()):
            named[key] = (next((position for position in _top_level(text, match.end() + 3)
                                if text[position] in " :;,"), len(text)), True)
        else:
            named.setdefault(key, (match.end(), False))
    return named


def _shown(value: Any) -> str:
    """A value as the user writes it in TOML and --set (``true``, not Python's ``True``)."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def attribute(message: str, origins: Mapping[str, str], name: str, known: Collection[str]) -> str:
    """The message of a configuration refused under preset ``name``, rewritten when it names a setting that only the
    preset gave (``origins`` maps ``section.key`` to where the value came from: ``--set``, ``--config FILE`` or
    ``--preset NAME``; ``known`` holds every setting): each setting it names is followed by its origin, and its
    advice (after the last ``; ``), which may say to remove or change a setting the user never wrote, by advice on
    what the user did write. Any other message is returned as it is.
    """
    origin = f"--preset {name}"
    named = _named(message, known)
    from_preset = [key for key in named if origins.get(key) == origin]
    if not from_preset:
        return message
    cuts = [position for position in _top_level(message) if message.startswith("; ", position)]
    head = message[:cuts[-1]] if cuts else message
    users = [key for key in named if key in origins and origins[key] != origin]
    mentions = _named(head, known)
    # The preset's settings that conflict: those given with a value, unless none is (a mere pointer to a key, as in
    # "SCutFBR uses train.fbr", is not a conflict); each is annotated, as is every setting of the user's.
    given = [key for key in from_preset if mentions.get(key, (0, False))[1]] or from_preset
    told = {key: end for key, (end, _) in mentions.items() if key in users or key in given}
    for key, end in sorted(told.items(), key=lambda item: -item[1]):
        head = f"{head[:end]} ({'set by ' + origin if origins[key] == origin else origins[key]}){head[end:]}"
    settings = PRESETS[name].settings
    overridden = [key for key in users if key in settings]
    if overridden:  # the user changed what the preset set: the preset's value is what it needs
        needs = f"{origin} needs {' and '.join(f'{key} = {_shown(settings[key])}' for key in overridden)}"
    else:
        needs = f"{origin} sets {' and '.join(f'{key} = {_shown(settings[key])}' for key in given)}"
    if not users:  # nothing of the user's is named: the preset conflicts with a default
        return f"{head} — {needs}; choose another preset or --set one of the settings named here"
    dropped = " and ".join(f"--set {key}" if origins[key] == SET else f"{key} from {origins[key]}" for key in users)
    return f"{head} — {needs}; drop {dropped} or choose another preset"
