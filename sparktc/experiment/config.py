"""Run configuration: TOML files plus ``--set section.key=value`` overrides, checked before Spark starts.

Every section is a frozen dataclass; every field carries its rule (allowed values or a range)
in its metadata, and its type hint is checked item by item (``list[float]``: every item a finite
number), so an unknown section or key, a wrong type or a bad value stops the job with a message
that names the key, the bad value and what is allowed. Every float is finite and every integer
bounded; settings that cannot work together, local paths of the wrong kind, unknown
``spark.sparktc.*`` keys and an MLflow tracking URI that cannot be logged to (MLflow missing, a store it does not
have, a store that does not answer a probe of a few seconds) are refused too, all before Spark starts.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.metadata
import importlib.util
import math
import os
import sqlite3
import sys
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from sparktc import packaged
from sparktc.corpora import lyrl2004
from sparktc.corpora.formats import QRELS
from sparktc.corpora.labels import label_problem
from sparktc.corpora.registry import CATEGORY_SETS, FORMATS, VECTOR_FORMATS
from sparktc.corpora.synthetic import SHAPE_LIMITS, TEST_FILES
from sparktc.errors import ConfigError
from sparktc.experiment.presets import PRESET_SECTIONS, PRESETS, SET, apply_preset, attribute
from sparktc.features.term_selection import FREQUENCY, GLOBAL_SCORES, SCORES
from sparktc.features.text import ANALYZERS, TermFeatures
from sparktc.features.weighting import GIVEN, SCHEMES
from sparktc.filesystem import absolute, is_uri, local_path
from sparktc.models.decision import CROSS_VALIDATED, SEARCHED, SHARED, THRESHOLDINGS, DecisionRule, score_range
from sparktc.models.fold_file import fold_file_problem
from sparktc.models.linear import SOLVERS
from sparktc.models.method import PerCategory
from sparktc.models.registry import METHODS, parameter_fields
from sparktc.models.tuning import OBJECTIVES
from sparktc.runtime import faults
from sparktc.runtime.progress import MODES
from sparktc.validation import allowed, between, check_path, check_string, check_strings, rule, setting_problem

#: Spark's int, the type of term ids and of the models' ``features``: no count setting is meant beyond it.
MAX_COUNT = 2**31 - 1
#: Categories per document (rcut_k, ranks, top_scores): ``predictions`` keeps and the ranking measures
#: hold that many per document; far above any category set here (R(115), RCV1-v2's 103 topics).
MAX_PER_DOCUMENT = 1000
#: Seeds go to numpy (``default_rng`` for the folds, ``SeedSequence`` for synthetic corpora; LIBLINEAR is
#: always reseeded with 1): 0 <= seed < 2**32, the range every numpy seeding API (RandomState too) takes.
SEEDS = 2**32
#: The category sets evaluate averages over (sparktc.evaluation.category_sets): every corpus's, a format's own
#: (Reuters-21578's R(10), R(90), R(115)), a hierarchy's.
BASIC_SETS = ("train_positive", "test_positive", "all")
FORMAT_SETS = tuple(dict.fromkeys(name for fmt in FORMATS.values() for name in fmt.averaging_sets))
HIERARCHY_SETS = ("leaves", "internal", "branch:<top node>", "depth:<level>")
#: corpus.hierarchy_policy: what ingest does with a document whose labels miss an ancestor of one of them.
HIERARCHY_POLICIES = ("expand", "set_aside", "keep")
#: The tracking stores MLflow's client has without plugins (``mlflow.tracking._tracking_service.utils``): its
#: databases, as SQLAlchemy URIs (``sqlite:///FILE``, ``postgresql+psycopg2://...``), which need SQLAlchemy and
#: Alembic, and its servers; a path or a ``file:`` URI is a file store. Plugins add theirs as entry points.
MLFLOW_DATABASES = ("sqlite", "postgresql", "mysql", "mssql")
MLFLOW_DATABASE_MODULES = ("sqlalchemy", "alembic")
MLFLOW_SERVERS = ("http", "https", "databricks")
MLFLOW_PLUGINS = "mlflow.tracking_store"
#: MLflow 3.13 and later refuse a file store (in maintenance mode, mlflow/mlflow#18534) unless this is true.
MLFLOW_FILE_STORE = "MLFLOW_ALLOW_FILE_STORE"
#: What installs MLflow, and what its database stores need, beside sparktc (pyproject.toml's extra).
TRACK_EXTRA = "pip install 'sparktc[track]'"


def _shape_limit(name: str) -> dict[str, Any]:
    """The range :class:`sparktc.corpora.synthetic.SyntheticShape` allows for ``name`` (as integers)."""
    _, low, high = SHAPE_LIMITS[name]
    return between(int(low), int(high))


def _grid(check: Callable[[Any], bool], description: str) -> dict[str, Any]:
    """A rule for every item of a list (the items' types are checked by the field's type hint)."""
    return rule(lambda v: all(check(x) for x in v), description)


def _distinct(v: list) -> bool:
    return len(set(v)) == len(v)


@dataclass(frozen=True)
class CorpusConfig:
    """Which corpus to read and how (REFERENCE.md section 1)."""

    format: str = field(default="", metadata=allowed(*FORMATS))
    # Directory holding the corpus files (local path or any Hadoop URI: hdfs://, s3a://, ...).
    path: str = ""
    # fail: stop at the first bad record; reject: set bad records aside in the `rejects` table.
    on_error: str = field(default="fail", metadata=allowed("fail", "reject"))
    # The categories: Debole & Sebastiani's subsets R10, R90, R115 of Reuters-21578; LYRL2004's topics, industries
    # or regions of RCV1-v2 (lyrl2004, lyrl2004_vectors, synthetic); "" = the format's default (category_set_of).
    category_set: str = field(default="", metadata=allowed("", *CATEGORY_SETS))
    # Reuters-21578: Yang & Liu's ApteMod document filter.
    document_filter: str = field(default="none", metadata=allowed("none", "aptemod"))
    # RCV1-v2 (LYRL2004): which test parts to read; hierarchy and names files ("" = in corpus.path).
    # A part listed twice would be read twice, every document of it a duplicate.
    test_parts: list[int] = field(
        default_factory=lambda: [0, 1, 2, 3],
        metadata=rule(lambda v: len(v) > 0 and _distinct(v) and all(p in (0, 1, 2, 3) for p in v),
                       "a non-empty list of distinct parts from 0, 1, 2, 3"),
    )
    hierarchy: str = ""
    topic_names: str = ""
    # LYRL2004: a document whose qrels labels miss an ancestor of one of them gets the ancestors (expand), is set
    # aside (set_aside) or keeps its labels as they are (keep); ingest reports how many there were either way.
    # "" = LYRL2004's own choice for the category set: expand topics, keep industries (section 4.2: their
    # hierarchy is a best guess, and LYRL2004 did not expand them); regions have no hierarchy.
    hierarchy_policy: str = field(default="", metadata=allowed("", *HIERARCHY_POLICIES))
    # JSON Lines, LIBSVM and LibMultiLabel text: the category list; empty means every label seen in the corpus. A
    # category listed twice would be trained and counted twice.
    categories: list[str] = field(default_factory=list, metadata=rule(_distinct, "a list of distinct strings"))


def category_set_of(corpus: CorpusConfig) -> str:
    """The category set ``corpus`` reads: ``corpus.category_set``, or its format's default (R90 for Reuters-21578,
    topics for LYRL2004's formats, "" for the formats that carry their own labels).
    """
    return corpus.category_set or FORMATS[corpus.format].default_category_set


def hierarchy_policy_of(corpus: CorpusConfig) -> str:
    """The hierarchy policy ``corpus`` is read with: ``corpus.hierarchy_policy``, or LYRL2004's for the category set
    (expand for topics, keep for industries and the flat regions).
    """
    if corpus.hierarchy_policy:
        return corpus.hierarchy_policy
    return "expand" if category_set_of(corpus) == "topics" else "keep"


@dataclass(frozen=True)
class SynthesizeConfig:
    """Shape of the synthetic LYRL2004-format corpus (defaults: the real RCV1-v2 shape)."""

    # Within the generator's limits (SHAPE_LIMITS, checked here so that Spark never starts for a shape it
    # refuses) and synthesize()'s chunk_documents; train_documents is at most documents - 4 (each test file gets
    # a document); the seed within every seed's range, which the generator's holds.
    documents: int = field(default=804_414, metadata=_shape_limit("documents"))
    train_documents: int = field(default=23_149, metadata=_shape_limit("train_documents"))
    vocabulary_size: int = field(default=47_236, metadata=_shape_limit("vocabulary_size"))
    tokens_per_document: int = field(default=120, metadata=_shape_limit("tokens_per_document"))
    seed: int = field(default=0, metadata=between(0, SEEDS - 1))
    # The real rcv1.topics.hier.orig to use as the category tree; "" generates a tree of its shape.
    hierarchy: str = ""
    chunk_documents: int = field(default=25_000, metadata=between(100, 10_000_000))


@dataclass(frozen=True)
class TokenizeConfig:
    """Text processing: LYRL2004's (REFERENCE.md section 2) or scikit-learn's (:mod:`sparktc.features.text`).

    LibMultiLabel's linear features (scikit-learn's ``TfidfVectorizer`` over the training texts) are
    ``analyzer = "sklearn"``, ``stemmer = "none"``, ``stop_list = ""`` and ``weight.scheme = "sklearn"``; its
    tutorial's ``tfidf_params`` (``max_features = 20000``, ``min_df = 3``, ``ngram_range = (1, 3)``) add
    ``ngrams = 3``, ``select.min_df = 3``, ``rank.score = "frequency"`` and ``select.top_k = 20000``.
    """

    # lyrl2004: lower case, punctuation deleted, digit-only tokens dropped (LYRL2004); sklearn: scikit-learn's default
    # analyzer, lower case and runs of 2+ word characters (r"(?u)\b\w\w+\b": digits and "_" kept). Both then drop
    # the stop list's words and stem by `stemmer` (set stemmer = "none" for scikit-learn's own tokens).
    analyzer: str = field(default="lyrl2004", metadata=allowed(*ANALYZERS))
    # SMART stop list, one word per line; "" keeps every word.
    stop_list: str = ""
    stemmer: str = field(default="porter", metadata=allowed("porter", "none"))
    # 2 or 3: runs of adjacent stems up to that length (after stop words and stemming) are terms too, ranked with the
    # stems (scikit-learn's ngram_range = (1, ngrams)); joined by "_" under lyrl2004 ("bank_england"), by a space
    # under sklearn ("bank of england", scikit-learn's feature name: its tokens may hold "_").
    ngrams: int = field(default=1, metadata=between(1, 3))
    # The title's terms counted this many times in all (the text holds them once); formats with titles only.
    title_weight: int = field(default=1, metadata=between(1, 100))
    # The title's terms as features of their own ("title:oil"), beside the text's; formats with titles only.
    title_terms: bool = False

    def features(self) -> TermFeatures:
        """The terms these settings make of a document's stems."""
        return TermFeatures(self.ngrams, self.title_weight, self.title_terms, ANALYZERS[self.analyzer].joiner)


@dataclass(frozen=True)
class WeightConfig:
    """Term weighting (REFERENCE.md section 3; :mod:`sparktc.features.weighting`)."""

    # ltc (LYRL2004); tfidf (Debole & Sebastiani's eq. 4-5); sklearn (raw tf x smoothed idf + 1, scikit-learn's
    # and LibMultiLabel's); binary; supervised (Debole & Sebastiani 2003: idf replaced by the [rank] score of
    # each term, counted on the training documents only); given: the features of a vector corpus (libsvm) as they
    # are read, not normalized (the only scheme for them).
    scheme: str = field(default="ltc", metadata=allowed(*SCHEMES, GIVEN))


@dataclass(frozen=True)
class RankConfig:
    """The term-selection score that ranks the terms (REFERENCE.md section 4; :mod:`sparktc.features.term_selection`).

    The rank stage computes every function under every globalization; these two say which one selection (and
    supervised weighting) uses, so changing them re-selects without recounting.
    """

    # chi2: chi-square; ig: information gain; gr: gain ratio (Debole & Sebastiani 2005, Table 2); frequency: the
    # term's occurrences over the training documents (scikit-learn's max_features ranking), which needs no category:
    # its top terms (select.top_k or reduction_factor) are the vocabulary the weight stage weights and normalises
    # over, as scikit-learn's are. It has no global score (one left at its default "max" is not used) and is not
    # a supervised weight, nor searched by tune.terms.
    score: str = field(default="chi2", metadata=allowed(*SCORES, FREQUENCY))
    # max: f_max (LYRL2004, Debole); avg: f_avg, P(c)-weighted (Yang & Pedersen); mean: the plain mean.
    global_score: str = field(default="max", metadata=allowed(*GLOBAL_SCORES))


@dataclass(frozen=True)
class SelectConfig:
    """Which ranked terms training keeps: the top k, a reduction factor xi, or all (both 0), among the terms of at
    least ``min_df`` training documents.
    """

    # The vocabulary: the training terms in at least min_df training documents (scikit-learn's integer min_df),
    # before any ranking; the weights are normalised over it.
    min_df: int = field(default=1, metadata=between(1, MAX_COUNT))
    top_k: int = field(
        default=0,
        metadata=rule(lambda v: 0 <= v <= MAX_COUNT, f"an integer in [0, {MAX_COUNT:_}] (0 keeps all terms)"))
    reduction_factor: float = field(
        default=0.0, metadata=rule(lambda v: 0.0 <= v < 1.0, "0 <= xi < 1 (0 keeps all terms)"))


@dataclass(frozen=True)
class TrainSettings:
    """The [train] settings every method shares: which method, and its thresholding (REFERENCE.md section 5).
    :data:`TrainConfig` adds every registered method's parameters.
    """

    method: str = field(default=next(iter(METHODS)), metadata=allowed(*METHODS))
    # fixed: assign when the score exceeds `threshold`; scut / scutfbr: per-category thresholds tuned
    # by k-fold cross-validation on training data (LYRL2004); proportional: per-category thresholds that
    # assign each validation fold the category's training share (Debole & Sebastiani); pcut: the training
    # share of each category among the test documents; rcut: the `rcut_k` best categories of each document;
    # micromacro: LibMultiLabel's thresholding (Lin & Lin 2023), per-fold thresholds maximising micro-F1 over the
    # categories visited (most frequent first) + the category's share of macro-F1.
    thresholding: str = field(default=THRESHOLDINGS[0], metadata=allowed(*THRESHOLDINGS))
    # A decision value: scores are unbounded, so any finite number is valid.
    threshold: float = 0.0
    fbr: float = field(default=0.1, metadata=rule(lambda v: 0.0 <= v <= 1.0, "0 <= fbr <= 1"))
    rcut_k: int = field(default=1, metadata=between(1, MAX_PER_DOCUMENT))
    # Each fold trains every candidate once more; LYRL2004 uses 5, and more than 100 is not k-fold any more.
    folds: int = field(default=5, metadata=between(2, 100))
    seed: int = field(default=0, metadata=between(0, SEEDS - 1))
    # Debole & Sebastiani's validation set Va: this share of the training documents, drawn with `seed`, is held
    # out; the models learn from the rest, and scut / scutfbr / proportional (and a [tune] search) set their
    # thresholds (choose) on Va's scores. 0: on `folds` cross-validation folds, the models trained on all documents.
    validation: float = field(default=0.0, metadata=rule(lambda v: 0.0 <= v < 1.0, "0 <= validation < 1 (0: off)"))
    # A local file of each training document's fold (sparktc.models.fold_file), instead of folds drawn with `seed`.
    fold_file: str = ""

    def decision_rule(self) -> DecisionRule:
        """The section as the models decide by it (:mod:`sparktc.models.decision`): its method's parameters and
        the thresholding's settings.
        """
        return DecisionRule.of(dataclasses.asdict(self))


#: [train]: :class:`TrainSettings` and every registered method's parameters (:func:`sparktc.models.registry.
#: parameter_fields`), each with the default and the rule its method's module declares.
TrainConfig = dataclasses.make_dataclass("TrainConfig", parameter_fields(), bases=(TrainSettings,), frozen=True)


@dataclass(frozen=True)
class TuneConfig:
    """A search space chosen from by k-fold cross-validation on the training data, per category.

    An empty list keeps the [train] value. Each category's choices are recorded with its model.
    """

    C: list[float] = field(default_factory=list, metadata=_grid(lambda v: v > 0, "numbers > 0"))
    solver: list[str] = field(
        default_factory=list, metadata=_grid(lambda v: v in SOLVERS, f"names from {', '.join(SOLVERS)}"))
    positive_weight: list[float] = field(default_factory=list, metadata=_grid(lambda v: v > 0, "numbers > 0"))
    # The naive Bayes mixture's Laplace smoothing alpha, one for the whole model by cross-validated micro-F1.
    nb_alpha: list[float] = field(default_factory=list, metadata=_grid(lambda v: v > 0, "numbers > 0"))
    # Numbers of top-ranked terms ([rank] score) to try (0 = all terms); they replace select.top_k.
    terms: list[int] = field(
        default_factory=list, metadata=_grid(lambda v: 0 <= v <= MAX_COUNT, f"integers in [0, {MAX_COUNT:_}]"))
    # One positive weight for all categories, the one with the best cross-validated micro-F1
    # (instead of each category's own best); needs positive_weight and no other list.
    shared_positive_weight: bool = False
    # One fbr for all categories, the one with the best cross-validated micro-F1; needs fbr and no other list.
    shared_fbr: bool = False
    # Likewise one C (LIBLINEAR's), or one term count, for all categories; each needs its list and no other.
    shared_C: bool = False
    shared_terms: bool = False
    # What a setting chosen for all categories (the shared_ ones, kNN's and the one-model methods' term count, fbr
    # and nb_alpha) maximises over the categories' cross-validated decisions: micro-F1, or macro-F1.
    objective: str = field(default="micro_f1", metadata=allowed(*OBJECTIVES))
    # SCutFBR's fbr values to try (LYRL2004 chooses fbr by cross-validation): per category, or, for LLSF, NNet
    # and the naive Bayes mixture (one model for all categories) and with shared_fbr, one for all by
    # cross-validated micro-F1.
    fbr: list[float] = field(default_factory=list, metadata=_grid(lambda v: 0 <= v <= 1, "numbers in [0, 1]"))


@dataclass(frozen=True)
class EvaluateConfig:
    """Contingency tables and averages (REFERENCE.md section 6)."""

    # F1 (and P, R) when the denominator is 0: 1 as in LYRL2004 and Debole, 0 as in scikit-learn.
    zero_division: float = field(default=1.0, metadata=allowed(0.0, 1.0))
    # The set the headline averages are over: train_positive, test_positive, all, R(10), R(90),
    # R(115) (Reuters), leaves, internal, branch:<top node>, depth:<level> (hierarchies), or a name in `subsets`.
    average_over: str = "train_positive"
    # Named category subsets to average over too, e.g. {core = ["earn", "acq"]} (an empty one averages nothing).
    subsets: dict[str, list[str]] = field(
        default_factory=dict,
        metadata=rule(lambda v: all(v.values()), "a table of name = [category, ...], no list empty"),
    )
    # Upper edges of the training-frequency bands (Lewis 1991; Yang & Liu Figs 4-5).
    bands: list[int] = field(
        default_factory=lambda: [10, 100, 1000],
        metadata=rule(lambda v: len(v) > 0 and v[0] > 0 and v[-1] <= MAX_COUNT and v == sorted(set(v)),
                       f"strictly increasing integers in [1, {MAX_COUNT:_}]"),
    )
    # K of the ranking measures P@K, R@K, RP@K, nDCG@K (LibMultiLabel); a K twice would name two measures alike.
    ranks: list[int] = field(
        default_factory=lambda: [1, 3, 5],
        metadata=rule(lambda v: len(v) > 0 and _distinct(v) and all(1 <= k <= MAX_PER_DOCUMENT for k in v),
                       f"distinct integers in [1, {MAX_PER_DOCUMENT:_}]"),
    )
    # Hierarchical corpora: also count each document's predictions closed under the hierarchy (a category assigned
    # implies its ancestors); metrics.json and the report then show both, as assigned and closed.
    close_predictions: bool = False
    # How many of a document's highest-scoring categories `predictions` keeps (>= the largest K).
    top_scores: int = field(default=5, metadata=between(1, MAX_PER_DOCUMENT))


@dataclass(frozen=True)
class SparkConfig:
    """Session settings; cluster resources belong to spark-submit options."""

    app_name: str = "sparktc"
    log_level: str = field(default="WARN", metadata=allowed("ERROR", "WARN", "INFO", "DEBUG"))
    # A directory for Spark's event log (local path or Hadoop URI), for the history server; "" = off.
    event_log: str = ""
    conf: dict = field(
        default_factory=dict,
        metadata=rule(lambda v: all(k.startswith("spark.") for k in v), "a table whose keys start with 'spark.'"),
    )


@dataclass(frozen=True)
class HistoryConfig:
    """The run history (:mod:`sparktc.tracking.history`): every pipeline and benchmark run adds one record."""

    # A directory (local path or a URI pyarrow opens: s3://, hdfs://, gs://) of one Parquet file per run; "" = none.
    # A local one is checked before Spark starts (_check_history); a URI is opened when the run's record is written.
    path: str = field(default="", metadata=rule(lambda v: v == "" or bool(v.strip()),
                                                 'a directory or a URI, or "" for none (not blank)'))
    # The name the records of this configuration carry (jobs/history.py groups and compares by it); "" = the
    # configuration's digest only. One line of printable characters: the trend table shows it in a row.
    label: str = field(default="", metadata=rule(str.isprintable, "printable characters only (no newline, tab or "
                                                                  "other control character)"))


@dataclass(frozen=True)
class TrackConfig:
    """Experiment tracking (:mod:`sparktc.tracking.mlflow_run`): an optional extra, ``pip install 'sparktc[track]'``."""

    # An MLflow tracking URI, "" = off: sqlite:///FILE (the artifacts go beside it, in mlartifacts/), a tracking
    # server (http://HOST:PORT), another database (postgresql://, mysql://, mssql://) or databricks; a file store
    # (a directory or file:///DIR) only with MLFLOW_ALLOW_FILE_STORE=true, as MLflow >= 3.13 wants (_check_track).
    mlflow_uri: str = ""
    # The MLflow experiment the runs go to, made when missing; MLflow takes names of up to 500 characters.
    experiment: str = field(default="sparktc", metadata=rule(lambda v: 0 < len(v.strip()) and len(v) <= 500,
                                                             "a name of 1 to 500 characters"))


@dataclass(frozen=True)
class ProgressConfig:
    """The progress lines of long stages and driver loops (:mod:`sparktc.runtime.progress`)."""

    # auto: in place on a terminal, appended lines otherwise; tty / log force one; off: no progress lines.
    mode: str = field(default="auto", metadata=allowed(*MODES))
    # Seconds between two appended lines (log mode) and before the first line of a stage or loop.
    interval: float = field(default=10.0,
                            metadata=rule(lambda v: 0.1 <= v <= 3600, "a number of seconds in [0.1, 3600]"))


#: The sections that say where a run is recorded and how it talks, not what it computes: outside the configuration
#: digest the history compares runs by.
RUN_SECTIONS = ("history", "track", "progress")


@dataclass(frozen=True)
class Config:
    """A run's whole configuration: one checked section per TOML table, [corpus] to [spark], each defaulted when the
    file leaves it out.
    """

    corpus: CorpusConfig = field(default_factory=CorpusConfig)
    synthesize: SynthesizeConfig = field(default_factory=SynthesizeConfig)
    tokenize: TokenizeConfig = field(default_factory=TokenizeConfig)
    weight: WeightConfig = field(default_factory=WeightConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    select: SelectConfig = field(default_factory=SelectConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    tune: TuneConfig = field(default_factory=TuneConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    spark: SparkConfig = field(default_factory=SparkConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    track: TrackConfig = field(default_factory=TrackConfig)
    progress: ProgressConfig = field(default_factory=ProgressConfig)

    def as_dict(self) -> dict[str, Any]:
        """Every section's settings as plain dicts, by section name."""
        return dataclasses.asdict(self)

    def check_against_data(self, facts: Mapping[str, Any], where: str) -> None:
        """:func:`check_against_data` of this configuration (the runner's check after a stage counted the data)."""
        check_against_data(self, facts, where)

    def with_corpus(self, **changes: Any) -> Config:
        """A copy of the configuration with the [corpus] settings in ``changes`` replaced."""
        return dataclasses.replace(self, corpus=dataclasses.replace(self.corpus, **changes))


SECTIONS: dict[str, type] = get_type_hints(Config)


def _check_type(key: str, value: Any, expected: Any) -> Any:
    """``value`` as the type hint ``expected``: an integer where a float is expected becomes a float, every
    float must be finite, and each item of a ``list[...]`` or ``dict[str, ...]`` is checked under its own key.
    """
    container = get_origin(expected)
    if container is not None:
        if not isinstance(value, container):
            raise ConfigError(f"{key} = {value!r}: expected {container.__name__}, got {type(value).__name__}")
        item = get_args(expected)[-1]
        if container is list:
            return [_check_type(f"{key}[{index}]", v, item) for index, v in enumerate(value)]
        return {name: _check_type(f"{key}.{name}", v, item) for name, v in value.items()}
    if expected is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the floats
            number = math.inf
        if not math.isfinite(number):
            raise ConfigError(f"{key} = {value!r} is out of range; expected a finite number")
        return number
    if expected is int and isinstance(value, bool):
        raise ConfigError(f"{key} = {value!r}: expected an integer")
    if not isinstance(value, expected):
        raise ConfigError(f"{key} = {value!r}: expected {expected.__name__}, got {type(value).__name__}")
    return value


def _check_value(key: str, value: Any, metadata: Mapping[str, Any]) -> None:
    problem = setting_problem(key, value, metadata)
    if problem:
        raise ConfigError(problem)


def check_setting(section: str, key: str, value: Any, name: str, excluded: tuple = ()) -> Any:
    """``value`` for the setting ``section.key``, checked as a configuration's is (its type, then its field's rule,
    less the ``excluded`` values of its allowed ones) and named ``name`` in the ConfigError (:mod:`sparktc.ml`'s
    Params keep the settings' rules here).
    """
    metadata = dict({f.name: f for f in dataclasses.fields(SECTIONS[section])}[key].metadata)
    if excluded and "allowed" in metadata:
        metadata["allowed"] = tuple(v for v in metadata["allowed"] if v not in excluded)
    value = _check_type(name, value, get_type_hints(SECTIONS[section])[key])
    _check_value(name, value, metadata)
    return value


def _section(name: str, values: Mapping[str, Any]) -> Any:
    cls = SECTIONS[name]
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    checked = {}
    for key, value in values.items():
        if key not in fields:
            raise ConfigError(f"unknown key {name}.{key}; keys of [{name}]: {', '.join(fields)}")
        full = f"{name}.{key}"
        value = _check_type(full, value, hints[key])
        _check_value(full, value, fields[key].metadata)
        checked[key] = value
    instance = cls(**checked)
    for key, f in fields.items():  # a default that fails its rule (corpus.format) must be set
        if key not in checked:
            try:
                _check_value(f"{name}.{key}", getattr(instance, key), f.metadata)
            except ConfigError:
                allowed = ", ".join(repr(a) for a in f.metadata.get("allowed", ()))
                raise ConfigError(f"{name}.{key} is not set; allowed values: {allowed}") from None
    return instance


def parse_override(text: str) -> tuple[str, str, Any]:
    """``section.key=value`` to its parts; the value is read as TOML, else taken as a plain string."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected section.key=value")
    dotted, raw = text.split("=", 1)
    parts = dotted.strip().split(".")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"--set {text!r}: the key must be section.key, e.g. train.C=0.5")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return parts[0], parts[1], value


def _read_toml(path: str) -> dict[str, Any]:
    """The settings in the TOML file ``path``, or in the packaged configuration of that name when no such file exists
    (:func:`sparktc.packaged.configuration`); a file that cannot be read or parsed is a ConfigError naming it.
    """
    try:
        data = packaged.configuration(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"--config {path}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"--config {path} is a directory; expected a TOML file") from None
    except OSError as error:  # permission denied, an I/O error ...
        raise ConfigError(f"--config {path}: cannot be read: {error.strerror or error}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"--config {path}: not UTF-8 text "
                          f"(byte {error.start}: {data[error.start:error.start + 1]!r}); "
                          "save it as UTF-8, as TOML requires") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {path}: not valid TOML: {error}") from None


def _default(section: str, key: str) -> Any:
    """The default of ``section.key`` (a missing object for an unknown key, which validation refuses)."""
    found = {f.name: f for f in dataclasses.fields(SECTIONS[section])}.get(key)
    if found is None:
        return object()
    return found.default_factory() if found.default is dataclasses.MISSING else found.default


V = TypeVar("V")


def checked(check: Callable[..., V], *arguments: Any, **options: Any) -> V:
    """``check(*arguments, **options)`` (a :mod:`sparktc.validation` check of an argument), its ValueError a
    ConfigError: the Python API refuses a wrong argument as the command line refuses a wrong flag.
    """
    try:
        return check(*arguments, **options)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def check_overrides(overrides: Sequence[str], preset: str) -> tuple[tuple[str, ...], str]:
    """``overrides`` and ``preset`` as given, or ConfigError unless the overrides are a list or tuple of strings (a
    bare string is refused, not read letter by letter) and the preset a string.
    """
    return (checked(check_strings, "overrides", overrides),
            checked(check_string, "preset", preset, "a preset's name, or \"\""))


def load_config(path: str | os.PathLike[str] | Mapping[str, Any] | None, overrides: Sequence[str] = (),
                preset: str = "") -> Config:
    """Read a TOML file (or take a dict of sections, as a notebook gives them; or nothing), replace its [select],
    [train] and [tune] by ``preset``'s when one is named
    (:mod:`sparktc.experiment.presets`; the settings it drops are told on stderr), apply overrides in order, and
    validate everything. Under a preset, a refusal that names a setting only the preset gave says where each
    setting it names came from, and advises on what the user wrote (:func:`sparktc.experiment.presets.attribute`).
    A ``path`` that is not a ``str``, an ``os.PathLike``, a mapping or None, ``overrides`` that are not a list or
    tuple of strings (a bare string included) and a ``preset`` that is not a string are ConfigErrors naming them.
    """
    if path is not None and not isinstance(path, Mapping):
        # checked here, as callers other than the command line (the Python API) give any object
        path = checked(check_path, "config", path, also=", a dict of sections or None")
    overrides, preset = check_overrides(overrides, preset)
    if isinstance(path, Mapping):
        raw: dict[str, Any] = {name: dict(values) if isinstance(values, Mapping) else values
                               for name, values in copy.deepcopy(dict(path)).items()}
        path = "(the given dict)"
    else:
        raw = {} if path is None else _read_toml(path)
    # Where each setting's value comes from, so that a refusal under a preset never blames the user for its settings.
    origins = {f"{section}.{key}": f"--config {path}" for section, values in raw.items() if isinstance(values, dict)
               for key in values}
    if preset:
        try:
            given, raw = raw, apply_preset(raw, preset)
        except KeyError as error:
            raise ConfigError(f"--preset {error.args[0]}") from None
        origins = {key: origin for key, origin in origins.items() if key.split(".")[0] not in PRESET_SECTIONS}
        origins |= {key: f"--preset {preset}" for key in PRESETS[preset].settings}
        dropped = [f"{section}.{key}" for section in PRESET_SECTIONS
                   for key, value in (given.get(section) or {}).items()
                   if raw[section].get(key, _default(section, key)) != value]
        if dropped:
            print(f"sparktc: --preset {preset} replaces [{'], ['.join(PRESET_SECTIONS)}] of {path}, whose "
                  f"{', '.join(dropped)} it does not keep", file=sys.stderr)
    for override in overrides:
        section, key, value = parse_override(override)
        raw.setdefault(section, {})
        if not isinstance(raw[section], dict):
            raise ConfigError(f"--set {override!r}: [{section}] is not a section")
        raw[section][key] = value
        origins[f"{section}.{key}"] = SET
    for name, values in raw.items():
        if name not in SECTIONS:
            raise ConfigError(f"unknown section [{name}]; sections: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{name} = {values!r}: expected a [{name}] table")
    try:
        config = Config(**{name: _section(name, raw.get(name, {})) for name in SECTIONS})
        _check_combinations(config)
    except ConfigError as error:
        if not preset:
            raise
        known = {f"{name}.{f.name}" for name, cls in SECTIONS.items() for f in dataclasses.fields(cls)}
        message = attribute(str(error), origins, preset, known)
        if message == str(error):
            raise
        raise ConfigError(message) from None
    return _resolve_paths(config)


def resolve_stop_list(value: str, key: str = "tokenize.stop_list") -> str:
    """A stop list setting as the stages read it (:func:`sparktc.features.text.stop_words_of`): "" (none) and a URI as
    they are, a packaged stop list's name as the name (read from the package wherever the driver runs, a zip
    spark-submit ships included) unless a file of that name exists, a local file as its absolute path; ConfigError
    naming ``key`` (the Analyzer's Param) when there is no such file, or it is not a readable file.
    """
    if value in packaged.STOP_LISTS and not os.path.exists(value):
        return value
    if value and not is_uri(value) and not os.path.exists(value):
        raise ConfigError(f"{key} = {value!r}: no such file or directory; give a file's path or a packaged stop "
                          f"list's name: {', '.join(packaged.STOP_LISTS)}")
    _require_local(key, value, "file")
    return absolute(value)


def _require_local(key: str, path: str, kind: str) -> None:
    """A local ``path`` must exist and be a ``kind`` ("file" or "directory"); URIs are checked later, through Hadoop."""
    if not path or is_uri(path):
        return
    if not os.path.exists(path):
        raise ConfigError(f"{key} = {path!r}: no such file or directory")
    if not (os.path.isdir(path) if kind == "directory" else os.path.isfile(path)):
        found = ("a directory" if os.path.isdir(path) else "a file" if os.path.isfile(path)
                 else "neither a file nor a directory")
        raise ConfigError(f"{key} = {path!r} is {found}; expected a {kind}")
    if not os.access(path, os.R_OK | (os.X_OK if kind == "directory" else 0)):
        raise ConfigError(f"{key} = {path!r}: permission denied; the {kind} must be readable")


def _check_combinations(config: Config) -> None:
    """The rules that span settings: each refuses a configuration a stage would fail on or silently ignore part of."""
    select, train, tune, evaluate = config.select, config.train, config.tune, config.evaluate
    if select.top_k and select.reduction_factor:
        raise ConfigError(
            f"select.top_k = {select.top_k} and select.reduction_factor = {select.reduction_factor}: set one, not both")
    _check_vector_format(config)
    _check_term_features(config)
    _check_frequency(config)
    _check_category_set(config.corpus, config.evaluate.close_predictions)
    decision = train.decision_rule()
    method = decision.spec
    unused = {key: _setting(config, key) for key in method.refused if _setting(config, key)}
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
        if getattr(tune, f"shared_{shared}") and (not getattr(tune, shared) or any(
                len(getattr(tune, key)) > 1 for key in others)):
            raise ConfigError(f"tune.shared_{shared} = true needs tune.{shared} = [...] and at most one value in "
                              f"{', '.join(f'tune.{key}' for key in others)}")
    sharing = [f"tune.shared_{shared}" for shared in SHARED if getattr(tune, f"shared_{shared}")]
    if len(sharing) > 1:
        several = "both" if len(sharing) == 2 else "several"
        raise ConfigError(f"{' and '.join(sharing)}: share one setting, not {several}")
    for shared, name in (("fbr", "fbr"), ("terms", "term count")):
        if getattr(tune, f"shared_{shared}") and decision.joint:
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
    train, tune = config.train, config.tune
    if not train.validation:
        return
    decision = train.decision_rule()
    if decision.joint:
        raise ConfigError(" and ".join([f"train.validation = {train.validation} with train.method = {train.method!r}",
                                        *decision.spec.variant_settings(decision.parameters)])
                          + f": {decision.spec.title} fits one model for all categories and sets its thresholds on "
                          "cross-validation folds of its own; set train.validation = 0")
    if not decision.cross_validated and not any(len(getattr(tune, key)) > 1 for key in SEARCHED):
        raise ConfigError(f"train.validation = {train.validation} with train.thresholding = {train.thresholding!r} "
                          "and no [tune] search: nothing would be set on the validation set; set train.thresholding "
                          f"to one of {', '.join(repr(t) for t in CROSS_VALIDATED)} or train.validation = 0")
def _check_given_folds(config: Config) -> None:
    """The refusals of micromacro, which thresholds per-category models' out-of-fold scores and searches nothing,
    and of a fold file, which replaces the folds of a per-category cross-validation.
    """
    train, tune = config.train, config.tune
    decision = train.decision_rule()
    per_category = isinstance(decision.spec.fitting(decision.parameters, 0), PerCategory)
    if decision.across_categories:
        if not per_category:
            raise ConfigError(" and ".join([f"train.thresholding = {train.thresholding!r} with train.method = "
                                            f"{train.method!r}", *decision.spec.variant_settings(decision.parameters)])
                              + f": {train.thresholding} thresholds the out-of-fold scores of one model per category; "
                              "use train.thresholding = 'scutfbr'")
        searched = [f"tune.{key}" for key in SEARCHED if getattr(tune, key)]
        searched += [f"tune.shared_{key}" for key in SHARED if getattr(tune, f"shared_{key}")]
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
    searched = math.prod(len(getattr(tune, key)) or 1 for key in SEARCHED) > 1
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
    if asked and form.tokenized:
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


def check_against_data(config: Config, facts: Mapping[str, Any], where: str) -> None:
    """The settings the data can make impossible, checked as soon as a stage has counted the data and before any
    heavy work: ``facts`` holds the training documents (``train_documents``) and the categories (``categories``),
    as ingest reports them; ``where`` says which stage counted them. A ConfigError naming the key.
    """
    train, tune = config.train, config.tune
    documents, categories = facts.get("train_documents"), facts.get("categories")
    searched = math.prod(len(getattr(tune, key)) or 1 for key in SEARCHED)
    if documents is not None and (train.thresholding in CROSS_VALIDATED or searched > 1) and train.folds > documents:
        why = (f"train.thresholding = {train.thresholding!r}" if train.thresholding in CROSS_VALIDATED
               else f"the [tune] search over {searched} candidates")
        raise ConfigError(f"train.folds = {train.folds} with {documents:,} training documents ({where}): "
                          f"{why} cross-validates over {train.folds} folds, and each fold needs a training document; "
                          f"set train.folds <= {documents}" + (" (LYRL2004 uses 5)" if documents >= 5 else ""))
    if categories is not None and train.thresholding == "rcut" and categories and train.rcut_k >= categories:
        raise ConfigError(f"train.rcut_k = {train.rcut_k} with {categories:,} categories ({where}): RCut would assign "
                          f"every category to every document; set train.rcut_k < {categories}")


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


def _resolve_paths(config: Config) -> Config:
    """Local paths checked (they exist and are files or directories as each setting needs) and made absolute, and
    [track] checked against what is installed (:func:`_check_track`).
    """
    corpus = config.corpus
    if not FORMATS[corpus.format].written_as:  # a synthesized corpus is written in the run, not read from corpus.path
        if not corpus.path:
            raise ConfigError(f"corpus.path is not set; give the directory of the {corpus.format} files "
                              "(--set corpus.path=DIR)")
        _require_local("corpus.path", corpus.path, "directory")
    stop_list = resolve_stop_list(config.tokenize.stop_list)
    for key, value in (("corpus.hierarchy", corpus.hierarchy), ("corpus.topic_names", corpus.topic_names),
                       ("synthesize.hierarchy", config.synthesize.hierarchy)):
        _require_local(key, value, "file")
    _require_local("train.fold_file", config.train.fold_file, "file")
    problem = config.train.fold_file and fold_file_problem(config.train.fold_file, config.train.folds)
    if problem:
        raise ConfigError(problem)
    event_log = config.spark.event_log
    if event_log and not is_uri(event_log) and os.path.exists(event_log):  # created when missing
        _require_local("spark.event_log", event_log, "directory")
    return dataclasses.replace(
        config,
        corpus=dataclasses.replace(
            corpus, path=absolute(corpus.path), hierarchy=absolute(corpus.hierarchy),
            topic_names=absolute(corpus.topic_names)
        ),
        tokenize=dataclasses.replace(config.tokenize, stop_list=stop_list),
        train=dataclasses.replace(config.train, fold_file=absolute(config.train.fold_file)),
        synthesize=dataclasses.replace(config.synthesize, hierarchy=absolute(config.synthesize.hierarchy)),
        spark=dataclasses.replace(config.spark, event_log=absolute(config.spark.event_log)),
        history=dataclasses.replace(config.history, path=_check_history(config.history.path)),
        track=_check_track(config.track),
    )


def _check_history(path: str) -> str:
    """``history.path`` made absolute when local, checked before Spark starts so that no run computes for hours and
    then cannot be recorded: an existing path is a directory, and the directory (or, when missing, the nearest
    existing folder above it, where it will be made) can be written. A URI is only opened when the record is written.
    """
    if not path or is_uri(path):
        return path
    path = os.path.abspath(path)
    key = f"history.path = {path!r}"
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(f"{key} is a file; the history is a directory of run records (made when missing): give a "
                          "directory path")
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ConfigError(f"{key}: {existing} is a file, so the history's directory cannot be made there; give a "
                          "directory path")
    problem = _unwritable(existing)
    if problem:
        made = "" if existing == path else f" (where {path} would be made)"
        raise ConfigError(f"{key}: the directory {existing}{made} cannot be written ({problem}); give a history "
                          "directory this user can write")
    return path


def _unwritable(folder: str) -> str | None:
    """Why no file can be made in ``folder`` (a hidden file made and removed at once: the permission bits alone say
    nothing for root, nor of a read-only file system), or None.
    """
    try:
        handle, probe = tempfile.mkstemp(prefix=".sparktc-probe-", dir=folder)
    except OSError as error:
        return error.strerror or str(error)
    os.close(handle)
    os.unlink(probe)
    return None


def _check_track(track: TrackConfig) -> TrackConfig:
    """[track] checked before Spark starts, so that no run computes for hours and then cannot be logged: MLflow
    installed (the optional extra), with SQLAlchemy and Alembic for a database; a store MLflow has for the URI (a
    sqlite file in a directory that exists; a file store only where MLflow is told to allow it), which answers
    (:func:`store_problem`). A file store's path is made absolute, as the history's is.
    """
    uri = track.mlflow_uri
    if not uri:
        return track
    key = f"track.mlflow_uri = {uri!r}"
    if importlib.util.find_spec("mlflow") is None:
        raise ConfigError(f"{key}: MLflow is not installed; {TRACK_EXTRA}, or leave track.mlflow_uri empty")
    scheme = uri.partition(":")[0].lower() if is_uri(uri) or uri in MLFLOW_SERVERS else ""
    database = scheme.partition("+")[0]  # a SQLAlchemy URI may name its driver: postgresql+psycopg2://
    if scheme in ("", "file"):
        if os.environ.get(MLFLOW_FILE_STORE, "").lower() not in ("true", "1"):
            raise ConfigError(f"{key} is a file store, which MLflow (3.13 and later) keeps in maintenance mode and "
                              f"refuses unless {MLFLOW_FILE_STORE}=true; use a sqlite database, e.g. "
                              f"sqlite:///{os.path.join(local_path(uri) or '', 'mlflow.db')}, or set "
                              f"{MLFLOW_FILE_STORE}=true")
        return dataclasses.replace(track, mlflow_uri=absolute(uri))
    if database in MLFLOW_DATABASES:
        missing = [name for name in MLFLOW_DATABASE_MODULES if importlib.util.find_spec(name) is None]
        if missing:
            raise ConfigError(f"{key}: MLflow's database stores need {' and '.join(missing)}, which "
                              f"{'is' if len(missing) == 1 else 'are'} not installed; {TRACK_EXTRA}")
        if database == "sqlite":
            _check_sqlite(key, uri)
    elif scheme not in MLFLOW_SERVERS and scheme not in {
            entry.name for entry in importlib.metadata.entry_points(group=MLFLOW_PLUGINS)}:
        raise ConfigError(f"{key}: MLflow has no tracking store for {scheme}: URIs; use sqlite:///FILE, a tracking "
                          f"server (http://HOST:PORT), a database ({', '.join(MLFLOW_DATABASES[1:])}) or databricks")
    problem = store_problem(uri)
    if problem:
        raise ConfigError(f"{key}: {problem}, or leave track.mlflow_uri empty to run without MLflow")
    return track


def store_problem(uri: str) -> str | None:
    """Why the MLflow store at ``uri`` cannot take a run now, with what to do, by a probe of a few seconds at most
    (:data:`PROBE_SECONDS`); None when it can, or when it is not probed. Probed: a sqlite database (its folder can be
    written, as sqlite writes its journal there; the file, when there is one, is a database that opens for writing
    and is not locked: a write transaction begun and rolled back) and a tracking server (``http(s)://``: it answers
    an HTTP request below 500). Other stores (postgresql, mysql, mssql, databricks, plugins) are not probed. The
    configuration check runs it before Spark starts; :func:`sparktc.tracking.mlflow_run.log` again before logging,
    so that a store lost during the run fails in seconds, not after MLflow's own retries (minutes).
    """
    path = sqlite_path(uri)
    if path:
        return _sqlite_problem(os.path.abspath(path))
    if uri.partition(":")[0].lower() in ("http", "https"):
        return _server_problem(uri)
    return None


#: The longest a probe of a tracking store waits: for a server's answer, or for another process's write to a sqlite
#: database to end (MLflow's own writes of a run take well under a second).
PROBE_SECONDS = 5.0


def _sqlite_problem(path: str) -> str | None:
    folder = os.path.dirname(path)
    problem = _unwritable(folder)
    if problem:
        return (f"the directory {folder} cannot be written ({problem}); sqlite writes the database and its journal "
                "there: give a database in a directory this user can write")
    if not os.path.exists(path):
        return None  # MLflow makes it, and its tables, when it first logs
    if not os.path.isfile(path):
        return f"{path} is not a file; name a sqlite database file"
    try:
        connection = sqlite3.connect(Path(path).as_uri() + "?mode=rw", uri=True, timeout=PROBE_SECONDS,
                                     isolation_level=None)
    except sqlite3.Error as error:
        return f"the database {path} cannot be opened for writing ({error}); give a database this user can write"
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        connection.execute("BEGIN IMMEDIATE")  # a write lock: what logging a run needs
        connection.execute("ROLLBACK")
    except sqlite3.Error as error:
        if "locked" in str(error) or "busy" in str(error):
            return (f"the database {path} is locked by another process (a write held over {PROBE_SECONDS:g} s); "
                    "let it finish, or give another database")
        return f"the database {path} cannot be written ({error}); give a sqlite database MLflow made, or a new file"
    finally:
        connection.close()
    return None


def _server_problem(uri: str) -> str | None:
    import ssl  # imported only for a server: the configuration's import stays light
    import urllib.error
    import urllib.request

    url = uri.rstrip("/") + "/health"  # a tracking server's liveness check; any answer below 500 will do
    try:
        with urllib.request.urlopen(url, timeout=PROBE_SECONDS):  # the proxies of the environment, as MLflow's
            return None
    except urllib.error.HTTPError as error:
        if error.code < 500:
            return None
        answer = f"the answer {error.code} {error.reason}"
    except (OSError, ValueError) as error:  # refused, no such host, timed out (URLError is an OSError)
        reason = getattr(error, "reason", error)
        if isinstance(reason, ssl.SSLError):
            return None  # a server answered; whether MLflow trusts its certificate is MLflow's settings' business
        answer = f"no answer ({reason})"
    return (f"the tracking server does not answer: {url} got {answer} within {PROBE_SECONDS:g} s; start the "
            "server, or correct track.mlflow_uri")


def track_config(uri: str) -> TrackConfig:
    """[track] for a tool that takes only an MLflow tracking URI (a benchmark harness's ``--track``), checked as a
    run's (:func:`_check_track`), the experiment its default.
    """
    return _check_track(load_section("track", {"mlflow_uri": uri}))


def sqlite_path(uri: str) -> str | None:
    """The database file of a sqlite tracking URI (``sqlite:///relative.db``, ``sqlite:////absolute.db``, with a
    driver, ``sqlite+pysqlite:///``, or a query after ``?``); "" for one without a file (``sqlite://``, in memory);
    None for any other URI.
    """
    scheme, _, rest = uri.partition(":")
    if not is_uri(uri) or scheme.partition("+")[0].lower() != "sqlite":
        return None
    return rest[3:].partition("?")[0] if rest.startswith("///") else ""


def _check_sqlite(key: str, uri: str) -> None:
    """A sqlite URI names a database file in a directory that exists: sqlite makes the file, not its directory, and
    without a file (``sqlite://``, ``:memory:``) the runs would be kept nowhere.
    """
    path = sqlite_path(uri)
    if not path or path == ":memory:":
        raise ConfigError(f"{key} keeps the runs in memory only; name a database file, e.g. sqlite:///runs/mlflow.db")
    if os.path.isdir(path):
        raise ConfigError(f"{key} names a directory; name a database file in it, e.g. "
                          f"sqlite:///{os.path.join(path, 'mlflow.db')}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"{key}: the directory {folder} does not exist; create it (sqlite makes the database file, "
                          "not its directory)")


def load_section(name: str, values: Mapping[str, Any], overrides: Sequence[str] = ()) -> Any:
    """One section from stored values (e.g. a run's recorded settings) plus ``name.key=value`` overrides."""
    merged = dict(values)
    for override in overrides:
        section, key, value = parse_override(override)
        if section != name:
            raise ConfigError(f"--set {override!r}: only [{name}] settings apply here")
        merged[key] = value
    return _section(name, merged)
