"""The configuration's sections: one frozen dataclass per TOML table, each field with its default, its type hint
and its rule (``allowed(...)``, ``between(...)`` or ``rule(...)`` of :mod:`sparktc.validation` in its metadata),
and :class:`Config`, the whole run's configuration. :mod:`~sparktc.experiment.config.rules` checks values against
them; :mod:`~sparktc.experiment.config.loading` reads them from TOML and ``--set`` overrides.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from sparktc.corpora.registry import CATEGORY_SETS, FORMATS
from sparktc.corpora.synthetic import SHAPE_LIMITS
from sparktc.corpora.table import SPLITS, TableColumns
from sparktc.errors import ConfigError
from sparktc.features.term_selection import FREQUENCY, GLOBAL_SCORES, SCORES
from sparktc.features.text import ANALYZERS, TermFeatures
from sparktc.features.weighting import GIVEN, SCHEMES
from sparktc.models.decision import CROSS_VALIDATED, SEARCHED, THRESHOLDINGS, DecisionRule
from sparktc.models.registry import METHODS
from sparktc.models.tuning import OBJECTIVES
from sparktc.runtime.progress import MODES
from sparktc.validation import allowed, between, meaning, rule

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
    # A table (corpus.format = "table", sparktc.corpora.table): corpus.path a directory Spark reads as read_format
    # (spark.read.format(read_format).load(path)), or `table` a catalog table's name (spark.read.table);
    # [corpus.columns] names its columns; the split by split_by: a column, test_fraction of the ids drawn with
    # split_seed, a file of test_ids (one per line), or each file's name (train-*, test-*).
    table: str = ""
    read_format: str = field(default="parquet", metadata=rule(
        lambda v: bool(v) and v == v.strip(), "a data source Spark reads: parquet, delta, iceberg, orc, ..."))
    columns: TableColumns = field(default_factory=TableColumns)
    split_by: str = field(default="column", metadata=allowed(*SPLITS))
    test_fraction: float = field(default=0.0, metadata=rule(lambda v: 0.0 <= v < 1.0, "0 <= fraction < 1"))
    split_seed: int = field(default=0, metadata=between(0, SEEDS - 1))
    test_ids: str = ""


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
    :data:`TrainConfig` adds every registered method's table of parameters (``[train.knn]``).
    """

    method: str = field(default=next(iter(METHODS)), metadata=meaning(
        "the classification method (sparktc.models.registry); its settings are its own table, [train.METHOD]",
        allowed(*METHODS)))
    thresholding: str = field(default=THRESHOLDINGS[0], metadata=meaning(
        "fixed: assign when the score exceeds threshold; scut / scutfbr: per-category thresholds tuned by k-fold "
        "cross-validation on the training data (LYRL2004); proportional: per-category thresholds that assign each "
        "validation fold the category's training share (Debole & Sebastiani); pcut: the training share of each "
        "category among the test documents; rcut: the rcut_k best categories of each document; micromacro: "
        "LibMultiLabel's thresholding (Lin & Lin 2023), per-fold thresholds maximising micro-F1 over the categories "
        "visited (most frequent first) + the category's share of macro-F1", allowed(*THRESHOLDINGS)))
    threshold: float = field(default=0.0, metadata=meaning(
        "fixed thresholding's threshold, a decision value: scores are unbounded, so any finite number is valid"))
    fbr: float = field(default=0.1, metadata=meaning(
        "SCutFBR's fbr: a fold whose best F1 is below it falls back to its top validation score",
        rule(lambda v: 0.0 <= v <= 1.0, "0 <= fbr <= 1")))
    rcut_k: int = field(default=1, metadata=meaning("RCut's number of categories per document",
                                                    between(1, MAX_PER_DOCUMENT)))
    folds: int = field(default=5, metadata=meaning(
        "the cross-validation folds; each fold trains every candidate once more; LYRL2004 uses 5, and more than 100 "
        "is not k-fold any more", between(2, 100)))
    seed: int = field(default=0, metadata=meaning("the seed of the folds and of the validation set",
                                                  between(0, SEEDS - 1)))
    validation: float = field(default=0.0, metadata=meaning(
        "Debole & Sebastiani's validation set Va: this share of the training documents, drawn with seed, is held "
        "out; the models learn from the rest, and scut / scutfbr / proportional (and a [tune] search) set their "
        "thresholds on Va's scores. 0: on folds cross-validation folds, the models trained on all documents",
        rule(lambda v: 0.0 <= v < 1.0, "0 <= validation < 1 (0: off)")))
    fold_file: str = field(default="", metadata=meaning(
        "a local file of each training document's fold (sparktc.models.fold_file), instead of folds drawn with seed"))

    def decision_rule(self) -> DecisionRule:
        """The section as the models decide by it (:mod:`sparktc.models.decision`): its method's parameters and
        the thresholding's settings.
        """
        return DecisionRule.of(dataclasses.asdict(self))


def _method_tables(kind: str) -> list[tuple[str, type, dataclasses.Field]]:
    """One field per registered method that declares a ``kind`` dataclass (``parameters``: [train.NAME]; ``search``:
    [tune.NAME]), named by its ``train.method``, defaulted to its dataclass's defaults.
    """
    where = "train" if kind == "parameters" else "tune"
    return [(name, getattr(method, kind), field(default_factory=getattr(method, kind), metadata=meaning(
        f"{method.title}'s {'settings' if kind == 'parameters' else 'search lists'}, [{where}.{name}]: used when "
        f"train.method = {name!r}, kept and unused otherwise"))) for name, method in METHODS.items()
        if getattr(method, kind) is not None]


#: [train]: :class:`TrainSettings` and one table per registered method, ``[train.knn]``, its
#: :class:`~sparktc.models.method.Parameters` dataclass, each field with the meaning, default and rule its method's
#: module declares. Only train.method's table is used; the others are kept, so that one file holds the settings of
#: several methods and ``--set train.method=...`` switches between them.
TrainConfig = dataclasses.make_dataclass("TrainConfig", _method_tables("parameters"), bases=(TrainSettings,),
                                         frozen=True)


@dataclass(frozen=True)
class TuneSettings:
    """A search space chosen from by k-fold cross-validation on the training data, per category: the lists every
    method shares. :data:`TuneConfig` adds the tables of the methods that search settings of their own
    (``[tune.liblinear]``, ``[tune.nb]``).

    An empty list keeps the [train] value. Each category's choices are recorded with its model.
    """

    terms: list[int] = field(default_factory=list, metadata=meaning(
        "numbers of top-ranked terms ([rank] score) to try (0 = all terms); they replace select.top_k",
        _grid(lambda v: 0 <= v <= MAX_COUNT, f"integers in [0, {MAX_COUNT:_}]")))
    shared_fbr: bool = field(default=False, metadata=meaning(
        "one fbr for all categories, the one with the best cross-validated micro-F1; needs fbr and no other list"))
    shared_terms: bool = field(default=False, metadata=meaning(
        "one term count for all categories, likewise; needs terms and no other list"))
    objective: str = field(default="micro_f1", metadata=meaning(
        "what a setting chosen for all categories (the shared_ ones, kNN's and the one-model methods' term count, fbr "
        "and their own searched settings) maximises over the categories' cross-validated decisions",
        allowed(*OBJECTIVES)))
    fbr: list[float] = field(default_factory=list, metadata=meaning(
        "SCutFBR's fbr values to try (LYRL2004 chooses fbr by cross-validation): per category, or, for LLSF, NNet and "
        "the naive Bayes mixture (one model for all categories) and with shared_fbr, one for all",
        _grid(lambda v: 0 <= v <= 1, "numbers in [0, 1]")))

    def lists(self, method: str) -> Any:
        """What a run with ``train.method = method`` searches, as one object
        (:class:`sparktc.models.method.SearchLists`): the shared lists and the method's own ([tune.NAME]), each
        under its own name; the other methods' tables are not its.
        """
        own = getattr(self, method, None)
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(TuneSettings)}
        return _search_lists(method)(**values, **({} if own is None else dataclasses.asdict(own)))


@functools.cache
def _search_lists(method: str) -> type:
    """The dataclass of :meth:`TuneSettings.lists` for ``method``: the shared fields, then its search's."""
    tables = [TuneSettings] + ([METHODS[method].search] if METHODS[method].search else [])
    return dataclasses.make_dataclass("SearchLists", [
        (f.name, f.type, field(default=f.default, default_factory=f.default_factory))
        for table in tables for f in dataclasses.fields(table)], frozen=True)


#: [tune]: :class:`TuneSettings` and the table of each method that searches settings of its own.
TuneConfig = dataclasses.make_dataclass("TuneConfig", _method_tables("search"), bases=(TuneSettings,), frozen=True)


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
    """The run history (:mod:`sparktc.tracking.history_table`): every pipeline and benchmark run adds one record."""

    # A directory (local path or a URI pyarrow opens: s3://, hdfs://, gs://) of one Parquet file per run; "" = none.
    # A local one is checked before Spark starts (config.paths.check_history); a URI is opened when the run's record
    # is written.
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
    # (a directory or file:///DIR) only with MLFLOW_ALLOW_FILE_STORE=true, as MLflow >= 3.13 wants
    # (sparktc.tracking.store_probe).
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


def check_against_data(config: Config, facts: Mapping[str, Any], where: str) -> None:
    """The settings the data can make impossible, checked as soon as a stage has counted the data and before any
    heavy work: ``facts`` holds the training documents (``train_documents``) and the categories (``categories``),
    as ingest reports them; ``where`` says which stage counted them. A ConfigError naming the key.
    """
    train, tune = config.train, config.tune.lists(config.train.method)
    documents, categories = facts.get("train_documents"), facts.get("categories")
    searched = math.prod(len(getattr(tune, key, ())) or 1 for key in SEARCHED)
    if documents is not None and (train.thresholding in CROSS_VALIDATED or searched > 1) and train.folds > documents:
        why = (f"train.thresholding = {train.thresholding!r}" if train.thresholding in CROSS_VALIDATED
               else f"the [tune] search over {searched} candidates")
        raise ConfigError(f"train.folds = {train.folds} with {documents:,} training documents ({where}): "
                          f"{why} cross-validates over {train.folds} folds, and each fold needs a training document; "
                          f"set train.folds <= {documents}" + (" (LYRL2004 uses 5)" if documents >= 5 else ""))
    if categories is not None and train.thresholding == "rcut" and categories and train.rcut_k >= categories:
        raise ConfigError(f"train.rcut_k = {train.rcut_k} with {categories:,} categories ({where}): RCut would assign "
                          f"every category to every document; set train.rcut_k < {categories}")
