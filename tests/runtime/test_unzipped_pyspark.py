"""Spark's zips of the installed pyspark and py4j are off the path of the project's processes
(``scripts/unzipped_pyspark.py``), so pyspark is imported from its installed bytecode, in the driver and in the
Python workers alike; a zip of another Spark stays.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig

import pyspark
from conftest import REPO

SITE = sysconfig.get_path("purelib")
LIB = os.path.join(SITE, "pyspark", "python", "lib")


def unzipped_module():
    spec = importlib.util.spec_from_file_location("unzipped_pyspark", REPO / "scripts" / "unzipped_pyspark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_the_zips_of_this_sites_own_packages_are_dropped(tmp_path):
    site = tmp_path / "site-packages"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    (site / "py4j-0.10.9.9.dist-info").mkdir()
    other = "/opt/spark/python/lib"
    path = [f"{lib}/pyspark.zip", f"{lib}/py4j-0.10.9.9-src.zip", f"{lib}/py4j-0.10.9.7-src.zip",
            f"{other}/pyspark.zip", str(site), f"{lib}/other.zip"]
    assert unzipped_module().unzipped(path, str(site)) == [
        f"{lib}/py4j-0.10.9.7-src.zip",  # a py4j of another version than the installed one
        f"{other}/pyspark.zip",  # another Spark's
        str(site), f"{lib}/other.zip"]
    (site / "pyspark" / "__init__.py").unlink()  # no pyspark installed beside its zip: the zip is the only copy
    assert f"{lib}/pyspark.zip" in unzipped_module().unzipped(path, str(site))


def test_the_environments_interpreter_imports_the_installed_pyspark_with_spark_submits_path():
    zips = [os.path.join(LIB, name) for name in os.listdir(LIB) if name.endswith(".zip")]
    assert any(name.endswith("pyspark.zip") for name in zips)
    shown = subprocess.run([sys.executable, "-c", "import sys, pyspark, py4j; print(pyspark.__file__, py4j.__file__); "
                            "print(*[entry for entry in sys.path if entry.endswith('.zip')])"],
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(zips)}, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert shown[0].split() == [os.path.join(SITE, "pyspark", "__init__.py"), os.path.join(SITE, "py4j", "__init__.py")]
    assert not any(entry.startswith(LIB) for entry in shown[1].split())


def test_spark_python_workers_import_the_installed_pyspark(spark):
    files = spark.range(1).mapInPandas(
        lambda frames: (frame.assign(file=__import__("pyspark").__file__) for frame in frames), "id long, file string")
    assert files.first().file == pyspark.__file__ == os.path.join(SITE, "pyspark", "__init__.py")
