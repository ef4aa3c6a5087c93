"""The rules that span settings: each refuses, before Spark starts, a configuration a stage would fail on or
silently ignore part of (:func:`check_combinations`). The settings the data can make impossible are
:meth:`~sparktc.experiment.config.sections.Config.check_against_data`'s, beside the sections.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from sparktc.corpora import lyrl2004
from sparktc.corpora.formats import QRELS
from sparktc.corpora.labels import label_problem
from sparktc.corpora.registry import FORMATS, VECTOR_FORMATS
from sparktc.corpora.synthetic import TEST_FILES
from sparktc.errors import ConfigError
from sparktc.experiment.config.sections import (
    BASIC_SETS,
    FORMAT_SETS,
    HIERARCHY_SETS,
    Config,
    CorpusConfig,
    EvaluateConfig,
    RankConfig,
    TokenizeConfig,
    TuneSettings,
    category_set_of,
)
from sparktc.features.term_selection import FREQUENCY, SCORES
from sparktc.features.weighting import GIVEN, SCHEMES
from sparktc.filesystem import is_uri
from sparktc.models.decision import CROSS_VALIDATED, SEARCHED, SHARED, score_range
from sparktc.models.method import PerCategory
from sparktc.runtime import faults


def check_combinations(config: Config) -> None:
    """The rules that span settings: each refuses a configuration a stage would fail on or silently ignore part of."""
    select, train, evaluate = config.select, config.train, config.evaluate
    tune = config.tune.lists(train.method)
    if select.top_k and select.reduction_factor:
        raise ConfigError(
            f"select.top_k = {select.top_k} and select.reduction_factor = {select.reduction_factor}: set one, not both")
    _check_vector_format(config)
    _check_term_features(config)
    _check_frequency(config)
    _check_category_set(config.corpus, config.evaluate.close_predictions)
    _check_format_settings(config.corpus)
    decision = train.decision_rule()
    method = decision.spec
    unused = {key: _setting(config, key) for key in method.unused if _setting(config, key)}
    if unused:
        raise ConfigError(f"{', '.join(f'{key} = {value!r}' for key, value in unused.items())}: not used by "
                          f"train.method = {train.method!r} ({method.unused_reason}); "
                          f"remove {'it' if len(unused) == 1 else 'them'}")
    if tune.terms and (select.top_k or select.reduction_factor):
        given = (f"select.top_k = {select.top_k}" if select.top_k
                 else f"select.reduction_factor = {select.reduction_factor}")
        raise ConfigError(f"tune.terms = {tune.terms} and {given}: tune.terms replaces the term selection; "
                          "set one, not both")
    for shared in SHARED:
        others = [key for key in ("C", "solver", "positive_weight", "terms", "fbr") if key != shared]
        if getattr(tune, f"shared_{shared}", False) and (not getattr(tune, shared) or any(
                len(getattr(tune, key, ())) > 1 for key in others)):
            raise ConfigError(f"{_tune_key(train.method, f'shared_{shared}')} = true needs "
                              f"{_tune_key(train.method, shared)} = [...] and at most one value in "
                              f"{', '.join(_tune_key(train.method, key) for key in others if hasattr(tune, key))}")
    sharing = [_tune_key(train.method, f"shared_{shared}") for shared in SHARED
               if getattr(tune, f"shared_{shared}", False)]
    if len(sharing) > 1:
        several = "both" if len(sharing) == 2 else "several"
        raise ConfigError(f"{' and '.join(sharing)}: share one setting, not {several}")
    for shared, name in (("fbr", "fbr"), ("terms", "term count")):
        if getattr(tune, f"shared_{shared}", False) and decision.joint:
            raise ConfigError(" and ".join([f"tune.shared_{shared} = true with train.method = {train.method!r}",
                                            *method.variant_settings(decision.parameters)])
                              + f": one model for all categories always chooses one {name} for all; remove it")
    if tune.fbr and train.thresholding != "scutfbr":
        raise ConfigError(f"tune.fbr = {tune.fbr} with train.thresholding = {train.thresholding!r}: fbr moves "
                          "SCutFBR's thresholds only; set train.thresholding = 'scutfbr' or remove tune.fbr")
    if tune.shared_fbr and train.thresholding != "scutfbr":
        raise ConfigError(f"tune.shared_fbr = true with train.thresholding = {train.thresholding!r}: fbr moves "
                          "SCutFBR's thresholds only; set train.thresholding = 'scutfbr'")
    _check_validation(config)
    problem = method.check(decision.parameters, tune, None if select.reduction_factor else select.top_k,
                           train.thresholding)
    if problem:
        raise ConfigError(problem)
    _check_given_folds(config)
    _check_fixed_threshold(config)
    _check_category_codes(config)
    _check_average_over(config.corpus.format, evaluate)
    if max(evaluate.ranks) > evaluate.top_scores:
        raise ConfigError(
            f"evaluate.ranks = {evaluate.ranks} needs evaluate.top_scores >= {max(evaluate.ranks)}, "
            f"got {evaluate.top_scores}"
        )
    synthesize = config.synthesize
    tests = len(TEST_FILES)
    if synthesize.train_documents > synthesize.documents - tests:
        raise ConfigError(
            f"synthesize.train_documents = {synthesize.train_documents} must be at most "
            f"synthesize.documents - {tests} = {synthesize.documents - tests}, "
            f"so that each of the {tests} test files gets a document"
        )
    _check_spark_conf(config.spark.conf)


def _check_validation(config: Config) -> None:
    """A validation set (train.validation > 0) needs per-category models and something to set on it: thresholds
    tuned on validation data, or a [tune] search.
    """
    train, tune = config.train, config.tune.lists(config.train.method)
    if not train.validation:
        return
    decision = train.decision_rule()
    if decision.joint:
        raise ConfigError(" and ".join([f"train.validation = {train.validation} with train.method = {train.method!r}",
                                        *decision.spec.variant_settings(decision.parameters)])
                          + f": {decision.spec.title} fits one model for all categories and sets its thresholds on "
                          "cross-validation folds of its own; set train.validation = 0")
    if not decision.cross_validated and not any(len(getattr(tune, key, ())) > 1 for key in SEARCHED):
        raise ConfigError(f"train.validation = {train.validation} with train.thresholding = {train.thresholding!r} "
                          "and no [tune] search: nothing would be set on the validation set; set train.thresholding "
                          f"to one of {', '.join(repr(t) for t in CROSS_VALIDATED)} or train.validation = 0")
def _check_given_folds(config: Config) -> None:
    """The refusals of micromacro, which thresholds per-category models' out-of-fold scores and searches nothing,
    and of a fold file, which replaces the folds of a per-category cross-validation.
    """
    train, tune = config.train, config.tune.lists(config.train.method)
    decision = train.decision_rule()
    per_category = isinstance(decision.spec.fitting(decision.parameters, 0), PerCategory)
    if decision.across_categories:
        if not per_category:
            raise ConfigError(" and ".join([f"train.thresholding = {train.thresholding!r} with train.method = "
                                            f"{train.method!r}", *decision.spec.variant_settings(decision.parameters)])
                              + f": {train.thresholding} thresholds the out-of-fold scores of one model per category; "
                              "use train.thresholding = 'scutfbr'")
        searched = [_tune_key(train.method, key) for key in SEARCHED if getattr(tune, key, ())]
        searched += [_tune_key(train.method, f"shared_{key}") for key in SHARED
                     if getattr(tune, f"shared_{key}", False)]
        if searched:
            raise ConfigError(f"{', '.join(searched)} with train.thresholding = {train.thresholding!r}: it sets each "
                              "category's threshold from the categories visited before, for one model each, and "
                              "chooses nothing; remove the search, or use train.thresholding = 'scutfbr'")
    if train.validation and (decision.across_categories or train.fold_file):
        given = f"train.thresholding = {train.thresholding!r}" if decision.across_categories else "train.fold_file"
        raise ConfigError(f"train.validation = {train.validation} with {given}: the validation set replaces the "
                          "cross-validation folds; set train.validation = 0, or leave the folds to it")
    if not train.fold_file:
        return
    searched = math.prod(len(getattr(tune, key, ())) or 1 for key in SEARCHED) > 1
    if not (decision.cross_validated or searched):
        raise ConfigError(f"train.fold_file = {train.fold_file!r} with train.thresholding = {train.thresholding!r} "
                          "and no [tune] search: nothing is cross-validated; remove train.fold_file")
    if not per_category:
        raise ConfigError(" and ".join([f"train.fold_file with train.method = {train.method!r}",
                                        *decision.spec.variant_settings(decision.parameters)])
                          + ": its folds are drawn for all categories at once (train.seed); remove train.fold_file")
    if is_uri(train.fold_file):
        raise ConfigError(f"train.fold_file = {train.fold_file!r}: a local file is needed (every worker reads it)")


def _check_vector_format(config: Config) -> None:
    """A corpus of given vectors is weighted by ``given`` only, and texts never are; naive Bayes needs term counts,
    which given vectors do not have.
    """
    vectors, scheme = FORMATS[config.corpus.format].vectors, config.weight.scheme
    if vectors and scheme != GIVEN:
        raise ConfigError(f"weight.scheme = {scheme!r} with corpus.format = {config.corpus.format!r}: its features are "
                          f"used as given; set weight.scheme = {GIVEN!r}")
    if not vectors and scheme == GIVEN:
        raise ConfigError(f"weight.scheme = {GIVEN!r} with corpus.format = {config.corpus.format!r}: only a corpus "
                          f"of vectors ({', '.join(VECTOR_FORMATS)}) has given weights; choose one of "
                          f"{', '.join(SCHEMES)}")
    method = config.train.decision_rule().spec
    if vectors and method.vector_column == "counts":
        raise ConfigError(f"train.method = {method.name!r} with corpus.format = {config.corpus.format!r}: "
                          f"{method.title} counts words, and given vectors have no counts; choose another method")


def _check_term_features(config: Config) -> None:
    """Titles and bigrams are made from raw text: a corpus that comes tokenized has neither to give, and a format
    without titles would train exactly as without the setting, which a user asking for it does not expect.
    """
    settings, form = config.tokenize, FORMATS[config.corpus.format]
    asked = [f"{key} = {str(value).lower()}" for key, value, default in (
        ("tokenize.analyzer", settings.analyzer, TokenizeConfig.analyzer),
        ("tokenize.ngrams", settings.ngrams, 1), ("tokenize.title_weight", settings.title_weight, 1),
        ("tokenize.title_terms", settings.title_terms, False)) if value != default]
    if asked and form.comes_tokenized(config.corpus):
        raise ConfigError(f"{' and '.join(asked)} with corpus.format = {form.name!r}: its documents come tokenized, "
                          "and tokenize passes their tokens through as given; leave the tokenize settings at their "
                          "defaults, or use a corpus of raw texts")
    if settings.features().uses_title and not form.titles:
        with_titles = ", ".join(name for name, each in FORMATS.items() if each.titles)
        raise ConfigError(f"{' and '.join(key for key in asked if 'title' in key)} with corpus.format = "
                          f"{form.name!r}: its documents have no title to count apart; formats with titles: "
                          f"{with_titles}. Leave tokenize.title_weight = 1 and tokenize.title_terms = false")


def _check_frequency(config: Config) -> None:
    """The frequency ranking (``rank.score = "frequency"``) cuts the vocabulary before the weights are computed, as
    scikit-learn's max_features does: it has no per-category scores to globalize or weight by, a search over term
    counts would need the vectors weighted again for each count, and given vectors have no occurrences to count.
    """
    rank, form = config.rank, FORMATS[config.corpus.format]
    if rank.score != FREQUENCY:
        return
    if rank.global_score != RankConfig.global_score:
        raise ConfigError(f"rank.global_score = {rank.global_score!r} with rank.score = {FREQUENCY!r}: a term's "
                          "frequency is one count over all the training documents, not a score per category to "
                          "globalize; remove rank.global_score")
    if config.weight.scheme == "supervised":
        raise ConfigError(f"weight.scheme = 'supervised' with rank.score = {FREQUENCY!r}: supervised weights are a "
                          "term-selection score counted per category (Debole & Sebastiani 2003); set rank.score to "
                          f"one of {', '.join(SCORES)}, or choose another weight.scheme")
    if config.tune.terms:
        raise ConfigError(f"tune.terms = {config.tune.terms} with rank.score = {FREQUENCY!r}: the most frequent terms "
                          "are the vocabulary the weights are normalised over (scikit-learn's max_features), one count "
                          f"per run; set select.top_k, or rank by one of {', '.join(SCORES)} to search the count")
    if form.vectors:
        raise ConfigError(f"rank.score = {FREQUENCY!r} with corpus.format = {form.name!r}: its features are given "
                          f"values, not counted occurrences; rank by one of {', '.join(SCORES)}")


def _check_category_codes(config: Config) -> None:
    """The category codes a user lists follow the readers' label rule (:func:`sparktc.corpora.labels.label_problem`):
    a code no reader accepts would match no document.
    """
    listed = [("corpus.categories", config.corpus.categories),
              *((f"evaluate.subsets.{name}", codes) for name, codes in config.evaluate.subsets.items())]
    for key, codes in listed:
        for code in codes:
            problem = label_problem(code, f"in {key}", "category code")
            if problem:
                raise ConfigError(problem)


def _check_fixed_threshold(config: Config) -> None:
    """A fixed threshold outside the method's scores (:func:`sparktc.models.decision.score_range`) assigns nothing,
    or everything: refused, naming the method's natural threshold and the tuned thresholding.
    """
    train = config.train
    if train.thresholding != "fixed":
        return
    decision = train.decision_rule()
    scores = score_range(decision, config.weight.scheme != GIVEN)
    problem = scores.fixed_threshold_problem(train.threshold)
    if problem is None:
        return
    variant = decision.spec.variant_settings(decision.parameters)
    method = f"train.method = {train.method!r}" + (f" ({', '.join(variant)})" if variant else "")
    instead = (f"set train.threshold = {scores.natural:.6g} ({scores.natural_means})" if scores.natural is not None
               else f"set train.threshold in {scores.working()}")
    raise ConfigError(f"{method} with train.thresholding = 'fixed' and train.threshold = {train.threshold:g} "
                      f"{problem}; {instead}, or train.thresholding = 'scutfbr' (thresholds tuned on the training "
                      "documents)")


def _check_category_set(corpus: CorpusConfig, close_predictions: bool) -> None:
    """corpus.category_set names a set of the corpus's format; the hierarchy policy applies to LYRL2004's formats
    only, and a hierarchy file and closing predictions under it to a category set that has one.
    """
    chosen, fmt, form = corpus.category_set, corpus.format, FORMATS[corpus.format]
    allowed = form.category_sets
    if chosen and chosen not in allowed:
        choices = (f"one of {', '.join(repr(a) for a in allowed)}" if allowed
                   else "nothing (its categories are the labels of its records, or corpus.categories)")
        raise ConfigError(f"corpus.category_set = {chosen!r} with corpus.format = {fmt!r}: allowed {choices}")
    if corpus.hierarchy_policy and form.assembly != QRELS:
        raise ConfigError(f"corpus.hierarchy_policy = {corpus.hierarchy_policy!r} with corpus.format = {fmt!r}: "
                          "only LYRL2004's qrels files are checked against a hierarchy; remove it")
    if close_predictions and (not form.hierarchical or category_set_of(corpus) == "regions"):
        raise ConfigError(f"evaluate.close_predictions = true with corpus.format = {fmt!r}"
                          + (" and corpus.category_set = 'regions'" if form.hierarchical else "")
                          + ": its categories have no hierarchy to close predictions under; remove it")
    if corpus.hierarchy and category_set_of(corpus) == "regions":
        raise ConfigError(f"corpus.hierarchy = {corpus.hierarchy!r} with corpus.category_set = 'regions': regions "
                          f"have no hierarchy (their list is {lyrl2004.REGIONS_FILE} in corpus.path); remove it")


def _check_format_settings(corpus: CorpusConfig) -> None:
    """The [corpus] settings a format alone reads (``CorpusFormat.settings``) are refused set under another one, and
    the format's own settings are checked together (``CorpusFormat.settings_problem``).
    """
    form = FORMATS[corpus.format]
    defaults = CorpusConfig()
    for other in FORMATS.values():
        for key in other.settings if other is not form else ():
            value, default = getattr(corpus, key), getattr(defaults, key)
            if value != default:
                given = {f"corpus.{key}": value}
                if dataclasses.is_dataclass(value):  # a table of settings ([corpus.columns]): its keys given
                    given = {f"corpus.{key}.{name}": setting for name, setting in dataclasses.asdict(value).items()
                             if setting != getattr(default, name)}
                shown = ", ".join(f"{name} = {setting!r}" for name, setting in given.items())
                raise ConfigError(f"{shown} with corpus.format = {corpus.format!r}: read by corpus.format = "
                                  f"{other.name!r} only; remove {'it' if len(given) == 1 else 'them'}")
    problem = form.settings_problem(corpus) if form.settings_problem else None
    if problem:
        raise ConfigError(problem)


def _tune_key(method: str, key: str) -> str:
    """How a message names the [tune] setting ``key`` of a run of ``method``: ``tune.fbr``, shared by every method, or
    ``tune.liblinear.C``, in its method's table.
    """
    shared = {f.name for f in dataclasses.fields(TuneSettings)}
    return f"tune.{key}" if key in shared else f"tune.{method}.{key}"


def _setting(config: Config, key: str) -> Any:
    section, name = key.split(".")
    return getattr(getattr(config, section), name)


def _check_average_over(corpus_format: str, evaluate: EvaluateConfig) -> None:
    """evaluate.average_over is a category set this corpus has (:mod:`sparktc.evaluation.category_sets`) or a
    subset's name; a subset may not take a built-in set's name (it would replace that set).
    """
    for name in evaluate.subsets:
        if name in (*BASIC_SETS, *FORMAT_SETS, *HIERARCHY_SETS) or name.startswith(("branch:", "depth:")):
            raise ConfigError(f"evaluate.subsets.{name}: {name!r} is the name of a built-in category set; "
                              "choose another")
    form = FORMATS[corpus_format]
    sets = BASIC_SETS + form.averaging_sets + (HIERARCHY_SETS if form.hierarchical else ())
    average_over = evaluate.average_over
    if average_over not in (*sets, *evaluate.subsets) and not (
            average_over.startswith(("branch:", "depth:")) and form.hierarchical):
        allowed = ", ".join(repr(a) for a in (*sets, *evaluate.subsets))
        raise ConfigError(f"evaluate.average_over = {average_over!r} is not allowed with "
                          f"corpus.format = {corpus_format!r}; allowed values: {allowed}")


def _check_spark_conf(conf: Mapping[str, Any]) -> None:
    """Any ``spark.*`` key goes to Spark as it is; a ``spark.sparktc.*`` key is sparktc's own and must be known."""
    problem = faults.problem(conf)
    if problem:
        raise ConfigError(problem)


