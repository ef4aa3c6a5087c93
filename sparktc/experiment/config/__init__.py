"""Run configuration: TOML files plus ``--set section.key=value`` overrides, checked before Spark starts.

Every section is a frozen dataclass (``sections``); every field carries its rule (allowed values or a range) in its
metadata, and its type hint is checked item by item (``list[float]``: every item a finite number) by the type-and-rule
engine (``rules``), so an unknown section or key, a wrong type or a bad value stops the job with a message that names
the key, the bad value and what is allowed. Every float is finite and every integer bounded. ``loading`` reads a file,
a preset and the overrides; settings that cannot work together and unknown ``spark.sparktc.*`` keys are refused by
``checks``, local paths of the wrong kind by ``paths``, all before Spark starts. An MLflow tracking URI that cannot be
logged to is tracking's to refuse (:mod:`sparktc.tracking.store_probe`), which the applications ask before Spark
starts too.

Import the public names from here: ``from sparktc.experiment.config import Config, load_config``.
"""

from sparktc.errors import ConfigError
from sparktc.experiment.config.checks import check_combinations
from sparktc.experiment.config.loading import check_overrides, load_config, load_section, parse_override
from sparktc.experiment.config.paths import resolve_paths, resolve_stop_list
from sparktc.experiment.config.rules import check_setting, checked, settings_table, table_class
from sparktc.experiment.config.sections import (
    MAX_COUNT,
    MAX_PER_DOCUMENT,
    RUN_SECTIONS,
    SECTIONS,
    SEEDS,
    Config,
    CorpusConfig,
    EvaluateConfig,
    HistoryConfig,
    ProgressConfig,
    RankConfig,
    SelectConfig,
    SparkConfig,
    SynthesizeConfig,
    TokenizeConfig,
    TrackConfig,
    TrainConfig,
    TrainSettings,
    TuneConfig,
    WeightConfig,
    category_set_of,
    check_against_data,
    hierarchy_policy_of,
)

__all__ = [
    "MAX_COUNT", "MAX_PER_DOCUMENT", "RUN_SECTIONS", "SECTIONS", "SEEDS", "Config", "ConfigError", "CorpusConfig",
    "EvaluateConfig", "HistoryConfig", "ProgressConfig", "RankConfig", "SelectConfig", "SparkConfig",
    "SynthesizeConfig", "TokenizeConfig", "TrackConfig", "TrainConfig", "TrainSettings", "TuneConfig", "WeightConfig",
    "category_set_of", "check_against_data", "check_combinations", "check_overrides", "check_setting", "checked",
    "hierarchy_policy_of", "load_config", "load_section", "parse_override", "resolve_paths", "resolve_stop_list",
    "settings_table", "table_class",
]
