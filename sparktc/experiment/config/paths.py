"""The local paths of a configuration, checked before Spark starts (they exist, and are files or directories as each
setting needs; the history's directory can be written) and made absolute, so that executors and pyarrow see the same
files; URIs are checked later, through Hadoop or pyarrow.
"""

from __future__ import annotations

import dataclasses
import os

from sparktc import packaged
from sparktc.corpora.formats import TABLE
from sparktc.corpora.registry import FORMATS
from sparktc.errors import ConfigError
from sparktc.experiment.config.sections import Config
from sparktc.filesystem import absolute, directory_problem, is_uri
from sparktc.models.fold_file import fold_file_problem


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
    require_local(key, value, "file")
    return absolute(value)


def require_local(key: str, path: str, kind: str) -> None:
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


def resolve_paths(config: Config, documents: bool = False) -> Config:
    """Local paths checked (they exist and are files or directories as each setting needs) and made absolute. [track]
    is the applications' to check (:func:`sparktc.tracking.store_probe.check_tracking`): its probes are tracking's.
    A table corpus needs no corpus.path when it is a catalog table (corpus.table) or, ``documents``, a DataFrame
    given to :func:`sparktc.run_pipeline` (which refuses one of another format).
    """
    corpus = config.corpus
    form = FORMATS[corpus.format]
    if not form.written_as:  # a synthesized corpus is written in the run, not read from corpus.path
        if not corpus.path and not documents and not (form.assembly == TABLE and corpus.table):
            table = ", or a catalog table's name (--set corpus.table=NAME)" if form.assembly == TABLE else ""
            raise ConfigError(f"corpus.path is not set; give the directory of the {corpus.format} files "
                              f"(--set corpus.path=DIR){table}")
        require_local("corpus.path", corpus.path, "directory")
    require_local("corpus.test_ids", corpus.test_ids, "file")
    stop_list = resolve_stop_list(config.tokenize.stop_list)
    for key, value in (("corpus.hierarchy", corpus.hierarchy), ("corpus.topic_names", corpus.topic_names),
                       ("synthesize.hierarchy", config.synthesize.hierarchy)):
        require_local(key, value, "file")
    require_local("train.fold_file", config.train.fold_file, "file")
    problem = config.train.fold_file and fold_file_problem(config.train.fold_file, config.train.folds)
    if problem:
        raise ConfigError(problem)
    event_log = config.spark.event_log
    if event_log and not is_uri(event_log) and os.path.exists(event_log):  # created when missing
        require_local("spark.event_log", event_log, "directory")
    return dataclasses.replace(
        config,
        corpus=dataclasses.replace(
            corpus, path=absolute(corpus.path), hierarchy=absolute(corpus.hierarchy),
            topic_names=absolute(corpus.topic_names), test_ids=absolute(corpus.test_ids)
        ),
        tokenize=dataclasses.replace(config.tokenize, stop_list=stop_list),
        train=dataclasses.replace(config.train, fold_file=absolute(config.train.fold_file)),
        synthesize=dataclasses.replace(config.synthesize, hierarchy=absolute(config.synthesize.hierarchy)),
        spark=dataclasses.replace(config.spark, event_log=absolute(config.spark.event_log)),
        history=dataclasses.replace(config.history, path=check_history(config.history.path)),
    )


def check_history(path: str) -> str:
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
    problem = directory_problem(path, "the history's directory")
    if problem:
        raise ConfigError(f"{key}: {problem}")
    return path


