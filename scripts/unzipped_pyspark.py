"""Spark's zips of pyspark and py4j taken off ``sys.path`` where this environment has the same packages installed.

spark-submit puts ``$SPARK_HOME/python/lib/pyspark.zip`` and ``py4j-<version>-src.zip`` first on the path of the
driver and of every Python worker. For a pip-installed pyspark, ``$SPARK_HOME`` is the installed package itself, so
the zips hold the very sources installed beside them; but Python caches no bytecode for what it imports from a zip,
so every process compiles pyspark again as it imports it: 1.1-1.3 CPU-s against 0.3 from the installed package's
bytecode (each Spark Python worker, the driver of each job, each test's subprocess). This module, installed into
the project's ``.venv`` by ``scripts/ensure-env.sh`` and applied by a ``.pth`` file as Python starts, drops the
zips of this site directory's own pyspark (and py4j, where the installed py4j has the zip's version); a zip of any
other Spark (a cluster's ``SPARK_HOME``) stays where it is.
"""

from __future__ import annotations

import os
import sys

PYSPARK_ZIP = "pyspark.zip"


def unzipped(path: list[str], site: str) -> list[str]:
    """``path`` without the pyspark and py4j zips of ``site``'s own pyspark (``site/pyspark/python/lib``), each
    dropped only where ``site`` holds the same package installed.
    """
    lib = os.path.normpath(os.path.join(site, "pyspark", "python", "lib"))

    def installed_copy(entry: str) -> bool:
        folder, name = os.path.split(entry)
        if os.path.normpath(folder) != lib:
            return False
        if name == PYSPARK_ZIP:
            return os.path.isfile(os.path.join(site, "pyspark", "__init__.py"))
        if name.startswith("py4j-") and name.endswith("-src.zip"):
            version = name[len("py4j-"):-len("-src.zip")]
            return os.path.isdir(os.path.join(site, f"py4j-{version}.dist-info"))
        return False

    return [entry for entry in path if not installed_copy(entry)]


def apply() -> None:
    """What the ``.pth`` line runs as the interpreter starts: ``sys.path`` unzipped for the site directory this
    module is installed in.
    """
    sys.path[:] = unzipped(sys.path, os.path.dirname(os.path.abspath(__file__)))
