"""Run configuration: TOML files plus ``--set section.key=value`` overrides, checked before Spark starts.

Every section is a frozen dataclass; every field carries its rule (allowed values or a range)
in its metadata, so an unknown section or key, a wrong type or a bad value stops the job with a
message that names the key, the bad value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_type_hints
from urllib.parse import urlparse

from sparktc.linear import SOLVERS


class ConfigError(ValueError):
    """A configuration problem found before any Spark work starts."""


def _choice(*allowed: Any) -> dict[str, Any]:
    return {"allowed": allowed}


def _rule(check: Callable[[Any], bool], description: str) -> dict[str, Any]:
    return {"check": check, "description": description}


@dataclass(frozen=True)
class CorpusConfig:
    """Which corpus to read and how (REFERENCE.md section 1)."""

    format: str = field(default="", metadata=_choice("reuters21578", "lyrl2004", "jsonl", "synthetic"))
    # Directory holding the corpus files (local path or any Hadoop URI: hdfs://, s3a://, ...).
    path: str = ""
    # fail: stop at the first bad record; reject: set bad records aside in the `rejects` table.
    on_error: str = field(default="fail", metadata=_choice("fail", "reject"))
    # Reuters-21578: Debole & Sebastiani subsets, and Yang & Liu's ApteMod document filter.
    category_set: str = field(default="R90", metadata=_choice("R10", "R90", "R115"))
    document_filter: str = field(default="none", metadata=_choice("none", "aptemod"))
    # RCV1-v2 (LYRL2004): which test parts to read; hierarchy and names files ("" = in corpus.path).
    test_parts: list = field(
        default_factory=lambda: [0, 1, 2, 3],
        metadata=_rule(lambda v: len(v) > 0 and all(p in (0, 1, 2, 3) for p in v), "a non-empty list drawn from 0, 1, 2, 3"),
    )
    hierarchy: str = ""
    topic_names: str = ""
    # JSON Lines: the category list; empty means every label seen in the corpus.
    categories: list = field(default_factory=list, metadata=_rule(lambda v: all(isinstance(c, str) for c in v), "a list of strings"))


@dataclass(frozen=True)
class SynthesizeConfig:
    """Shape of the synthetic LYRL2004-format corpus (defaults: the real RCV1-v2 shape)."""

    documents: int = field(default=804_414, metadata=_rule(lambda v: v >= 10, ">= 10"))
    train_documents: int = field(default=23_149, metadata=_rule(lambda v: v >= 1, ">= 1"))
    vocabulary_size: int = field(default=47_236, metadata=_rule(lambda v: v >= 100, ">= 100"))
    tokens_per_document: int = field(default=120, metadata=_rule(lambda v: v >= 5, ">= 5"))
    seed: int = 0
    # The real rcv1.topics.hier.orig to use as the category tree; "" generates a tree of its shape.
    hierarchy: str = ""
    chunk_documents: int = field(default=25_000, metadata=_rule(lambda v: v >= 100, ">= 100"))


@dataclass(frozen=True)
class TokenizeConfig:
    """LYRL2004 text processing (REFERENCE.md section 2)."""

    # SMART stop list, one word per line; "" keeps every word.
    stop_list: str = ""
    stemmer: str = field(default="porter", metadata=_choice("porter", "none"))


@dataclass(frozen=True)
class WeightConfig:
    """Term weighting (REFERENCE.md section 3)."""

    scheme: str = field(default="ltc", metadata=_choice("ltc"))


@dataclass(frozen=True)
class RankConfig:
    """Global chi-square term ranking (REFERENCE.md section 4)."""

    global_score: str = field(default="max", metadata=_choice("max", "avg"))


@dataclass(frozen=True)
class SelectConfig:
    """Which ranked terms training keeps: the top k, a reduction factor xi, or all (both 0)."""

    top_k: int = field(default=0, metadata=_rule(lambda v: v >= 0, ">= 0 (0 keeps all terms)"))
    reduction_factor: float = field(default=0.0, metadata=_rule(lambda v: 0.0 <= v < 1.0, "0 <= xi < 1 (0 keeps all terms)"))


@dataclass(frozen=True)
class TrainConfig:
    """One classifier per category: LIBLINEAR (LibMultiLabel defaults), Rocchio or kNN (REFERENCE.md section 5)."""

    method: str = field(default="liblinear", metadata=_choice("liblinear", "rocchio", "knn"))
    solver: str = field(default="l2r_l2loss_svc_dual", metadata=_choice(*SOLVERS))
    C: float = field(default=1.0, metadata=_rule(lambda v: v > 0, "> 0"))
    epsilon: float = field(default=0.0001, metadata=_rule(lambda v: v > 0, "> 0"))
    # The bias feature's value B; <= 0 trains without a bias.
    bias: float = 1.0
    # Cost-sensitive training: the loss of positive documents is multiplied by this (LIBLINEAR -w1).
    positive_weight: float = field(default=1.0, metadata=_rule(lambda v: v > 0, "> 0"))
    # fixed: assign when the score exceeds `threshold`; scut / scutfbr: per-category thresholds tuned
    # by k-fold cross-validation on training data (LYRL2004); pcut: the training share of each
    # category among the test documents; rcut: the `rcut_k` best categories of each document.
    thresholding: str = field(default="fixed", metadata=_choice("fixed", "scut", "scutfbr", "pcut", "rcut"))
    threshold: float = 0.0
    fbr: float = field(default=0.1, metadata=_rule(lambda v: 0.0 <= v <= 1.0, "0 <= fbr <= 1"))
    rcut_k: int = field(default=1, metadata=_rule(lambda v: v >= 1, ">= 1"))
    folds: int = field(default=5, metadata=_rule(lambda v: v >= 2, ">= 2"))
    seed: int = 0
    rocchio_beta: float = 16.0
    rocchio_gamma: float = 4.0
    knn_k: int = field(default=30, metadata=_rule(lambda v: v >= 1, ">= 1"))


def _grid(check: Callable[[Any], bool], description: str) -> dict[str, Any]:
    return _rule(lambda v: all(check(x) for x in v), description)


@dataclass(frozen=True)
class TuneConfig:
    """A search space chosen from by k-fold cross-validation on the training data, per category.

    An empty list keeps the [train] value. Each category's choices are recorded with its model.
    """

    C: list = field(default_factory=list, metadata=_grid(lambda v: isinstance(v, (int, float)) and v > 0, "numbers > 0"))
    solver: list = field(default_factory=list, metadata=_grid(lambda v: v in SOLVERS, f"names from {', '.join(SOLVERS)}"))
    positive_weight: list = field(
        default_factory=list, metadata=_grid(lambda v: isinstance(v, (int, float)) and v > 0, "numbers > 0"))
    # Numbers of chi-square-ranked terms to try (0 = all terms).
    terms: list = field(default_factory=list, metadata=_grid(lambda v: isinstance(v, int) and v >= 0, "integers >= 0"))
    # One positive weight for all categories, the one with the best cross-validated micro-F1
    # (instead of each category's own best); needs positive_weight and no other list.
    shared_positive_weight: bool = False
    # SCutFBR's fbr values to try (LYRL2004 chooses fbr by cross-validation).
    fbr: list = field(default_factory=list, metadata=_grid(lambda v: isinstance(v, (int, float)) and 0 <= v <= 1, "numbers in [0, 1]"))


@dataclass(frozen=True)
class EvaluateConfig:
    """Contingency tables and averages (REFERENCE.md section 6)."""

    # F1 (and P, R) when the denominator is 0: 1 as in LYRL2004 and Debole, 0 as in scikit-learn.
    zero_division: float = field(default=1.0, metadata=_choice(0.0, 1.0))
    # The set the headline averages are over: train_positive, test_positive, all, R(10), R(90),
    # R(115) (Reuters), leaves, internal, branch:<top node> (hierarchies), or a name in `subsets`.
    average_over: str = "train_positive"
    # Named category subsets to average over too, e.g. {core = ["earn", "acq"]}.
    subsets: dict = field(
        default_factory=dict,
        metadata=_rule(lambda v: all(isinstance(m, list) and all(isinstance(c, str) for c in m) for m in v.values()),
                       "a table of name = [category, ...]"),
    )
    # Upper edges of the training-frequency bands (Lewis 1991; Yang & Liu Figs 4-5).
    bands: list = field(
        default_factory=lambda: [10, 100, 1000],
        metadata=_rule(lambda v: len(v) > 0 and all(isinstance(e, int) and e > 0 for e in v) and v == sorted(set(v)),
                       "strictly increasing positive integers"),
    )
    # K of the ranking measures P@K, R@K, RP@K, nDCG@K (LibMultiLabel).
    ranks: list = field(
        default_factory=lambda: [1, 3, 5],
        metadata=_rule(lambda v: len(v) > 0 and all(isinstance(k, int) and k > 0 for k in v), "positive integers"),
    )
    # How many of a document's highest-scoring categories `predictions` keeps (>= the largest K).
    top_scores: int = field(default=5, metadata=_rule(lambda v: v >= 1, ">= 1"))


@dataclass(frozen=True)
class SparkConfig:
    """Session settings; cluster resources belong to spark-submit options."""

    app_name: str = "sparktc"
    log_level: str = field(default="WARN", metadata=_choice("ERROR", "WARN", "INFO", "DEBUG"))
    # A directory for Spark's event log (local path or Hadoop URI), for the history server; "" = off.
    event_log: str = ""
    conf: dict = field(
        default_factory=dict,
        metadata=_rule(lambda v: all(k.startswith("spark.") for k in v), "a table whose keys start with 'spark.'"),
    )


@dataclass(frozen=True)
class Config:
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

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def with_corpus(self, **changes: Any) -> Config:
        return dataclasses.replace(self, corpus=dataclasses.replace(self.corpus, **changes))


SECTIONS: dict[str, type] = get_type_hints(Config)


def _check_type(key: str, value: Any, expected: type) -> Any:
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is int and isinstance(value, bool):
        raise ConfigError(f"{key} = {value!r}: expected an integer")
    if not isinstance(value, expected):
        raise ConfigError(f"{key} = {value!r}: expected {expected.__name__}, got {type(value).__name__}")
    return value


def _check_value(key: str, value: Any, metadata: Mapping[str, Any]) -> None:
    if "allowed" in metadata and value not in metadata["allowed"]:
        allowed = ", ".join(repr(a) for a in metadata["allowed"])
        raise ConfigError(f"{key} = {value!r} is not allowed; allowed values: {allowed}")
    if "check" in metadata and not metadata["check"](value):
        raise ConfigError(f"{key} = {value!r} is out of range; expected {metadata['description']}")


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


def load_config(path: str | None, overrides: Sequence[str] = ()) -> Config:
    """Read a TOML file (or nothing), apply overrides in order, and validate everything."""
    raw: dict[str, dict[str, Any]] = {}
    if path is not None:
        try:
            with open(path, "rb") as handle:
                raw = tomllib.load(handle)
        except FileNotFoundError:
            raise ConfigError(f"--config {path}: file not found") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"--config {path}: not valid TOML: {error}") from None
    for override in overrides:
        section, key, value = parse_override(override)
        raw.setdefault(section, {})
        if not isinstance(raw[section], dict):
            raise ConfigError(f"--set {override!r}: [{section}] is not a section")
        raw[section][key] = value
    for name, values in raw.items():
        if name not in SECTIONS:
            raise ConfigError(f"unknown section [{name}]; sections: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{name} = {values!r}: expected a [{name}] table")
    config = Config(**{name: _section(name, raw.get(name, {})) for name in SECTIONS})
    return _resolve_paths(config)


def is_uri(path: str) -> bool:
    """True for ``scheme://...`` paths handled by Hadoop file systems (hdfs, s3a, gs, file)."""
    return len(urlparse(path).scheme) > 1


def absolute(path: str) -> str:
    """Local paths made absolute so that executors and pyarrow see the same file; URIs unchanged."""
    return path if not path or is_uri(path) else os.path.abspath(path)


def _require_local(key: str, path: str) -> None:
    if path and not is_uri(path) and not os.path.exists(path):
        raise ConfigError(f"{key} = {path!r}: no such file or directory")


def _resolve_paths(config: Config) -> Config:
    corpus = config.corpus
    if corpus.format != "synthetic":
        if not corpus.path:
            raise ConfigError(f"corpus.path is not set; give the directory of the {corpus.format} files (--set corpus.path=DIR)")
        _require_local("corpus.path", corpus.path)
    for key, value in (("corpus.hierarchy", corpus.hierarchy), ("corpus.topic_names", corpus.topic_names),
                       ("tokenize.stop_list", config.tokenize.stop_list), ("synthesize.hierarchy", config.synthesize.hierarchy)):
        _require_local(key, value)
    if config.select.top_k and config.select.reduction_factor:
        raise ConfigError(
            f"select.top_k = {config.select.top_k} and select.reduction_factor = {config.select.reduction_factor}: set one, not both"
        )
    tune = config.tune
    if tune.shared_positive_weight and (not tune.positive_weight or any(
            len(getattr(tune, key)) > 1 for key in ("C", "solver", "terms", "fbr"))):
        raise ConfigError("tune.shared_positive_weight = true needs tune.positive_weight = [w, ...] and at most one "
                          "value in tune.C, tune.solver, tune.terms and tune.fbr")
    evaluate = config.evaluate
    named_sets = ("train_positive", "test_positive", "all", "R(10)", "R(90)", "R(115)", "leaves", "internal")
    if evaluate.average_over not in (*named_sets, *evaluate.subsets) and not evaluate.average_over.startswith("branch:"):
        allowed = ", ".join(repr(a) for a in (*named_sets, "branch:<top node>", *evaluate.subsets))
        raise ConfigError(f"evaluate.average_over = {evaluate.average_over!r} is not allowed; allowed values: {allowed}")
    if max(evaluate.ranks) > evaluate.top_scores:
        raise ConfigError(
            f"evaluate.ranks = {evaluate.ranks} needs evaluate.top_scores >= {max(evaluate.ranks)}, got {evaluate.top_scores}"
        )
    if config.synthesize.train_documents >= config.synthesize.documents:
        raise ConfigError(
            f"synthesize.train_documents = {config.synthesize.train_documents} must be below "
            f"synthesize.documents = {config.synthesize.documents}"
        )
    return dataclasses.replace(
        config,
        corpus=dataclasses.replace(
            corpus, path=absolute(corpus.path), hierarchy=absolute(corpus.hierarchy), topic_names=absolute(corpus.topic_names)
        ),
        tokenize=dataclasses.replace(config.tokenize, stop_list=absolute(config.tokenize.stop_list)),
        synthesize=dataclasses.replace(config.synthesize, hierarchy=absolute(config.synthesize.hierarchy)),
        spark=dataclasses.replace(config.spark, event_log=absolute(config.spark.event_log)),
    )


def check_output(config: Config, output: str) -> str:
    """The absolute output directory; refuse one inside the corpus so a run never overwrites its input."""
    if not output:
        raise ConfigError("--output is required: the directory the stages write their Parquet tables to")
    output = absolute(output)
    corpus = config.corpus.path.rstrip("/")
    if corpus and (output == corpus or output.startswith(corpus + "/")):
        raise ConfigError(f"--output {output} is inside corpus.path {corpus}; choose a directory outside the corpus")
    return output


def load_section(name: str, values: Mapping[str, Any], overrides: Sequence[str] = ()) -> Any:
    """One section from stored values (e.g. a run's recorded settings) plus ``name.key=value`` overrides."""
    merged = dict(values)
    for override in overrides:
        section, key, value = parse_override(override)
        if section != name:
            raise ConfigError(f"--set {override!r}: only [{name}] settings apply here")
        merged[key] = value
    return _section(name, merged)
