"""What sparktc carries besides its code: the configurations and stop lists of ``conf/`` and the jobs of ``jobs/``,
found by name (``--config reuters21578``, ``tokenize.stop_list = "smart"``) wherever sparktc runs from.

They are at the top level of a clone and inside the package once installed (the wheel maps ``conf/`` to
``sparktc/conf/`` and ``jobs/`` to ``sparktc/jobs/``); the zip that spark-submit ships carries ``conf/`` in the
wheel's place too, so that a driver importing sparktc from it finds them there. A path that exists is always
taken as a path: a name is looked up only when no such file exists.
"""

from __future__ import annotations

import importlib.resources
import os
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path

from sparktc.errors import ConfigError

#: The packaged stop lists by name, under ``conf/``.
STOP_LISTS = {"smart": "stopwords/smart_english.stop"}


@cache
def root() -> Traversable:
    """The folder holding ``conf/`` and ``jobs/``: the installed package (or the zip spark-submit ships), else the
    clone its source is in.
    """
    package = importlib.resources.files("sparktc")
    if package.joinpath("conf").is_dir():
        return package
    return Path(__file__).resolve().parents[1]


def configurations() -> dict[str, Traversable]:
    """The packaged configurations, ``conf/NAME.toml``, by NAME."""
    found = {entry.name.removesuffix(".toml"): entry for entry in root().joinpath("conf").iterdir()
             if entry.name.endswith(".toml")}
    return dict(sorted(found.items()))


def configuration(path: str) -> Traversable:
    """The TOML file ``--config path`` names: the file when it exists, else the packaged configuration of that name;
    ConfigError listing the packaged names when it is neither.
    """
    if os.path.exists(path):
        return Path(path)
    packaged = configurations()
    if path in packaged:
        return packaged[path]
    raise ConfigError(f"--config {path}: no such file, nor a packaged configuration; give a TOML file's path "
                      f"or one of {', '.join(packaged)}")


def stop_list(value: str) -> Traversable | None:
    """The packaged stop list named ``value`` (a resolved ``tokenize.stop_list``: a path is absolute or a URI by
    then, so a bare name is the package's), else None.
    """
    return root().joinpath("conf", *STOP_LISTS[value].split("/")) if value in STOP_LISTS else None
