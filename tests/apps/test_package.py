"""``pip install`` gives a working tool: the wheel holds the library, its configurations, the stop list, the jobs and
the ``sparktc`` command; installed into a fresh virtual environment with its dependencies, its command shows the
commands and refuses unknown ones, its embedded default is the packaged ``synthetic``, and the zip it ships to a
cluster carries the configurations, from a directory outside the repository.

The environment and the wheel are those of ``scripts/pack-env.sh`` (``make pack``), built once for the suite
(``packed_env`` in conftest.py): a fresh virtual environment with sparktc installed from the wheel, built from the
checkout's files, and the dependencies pinned in pyproject.toml installed by pip. The environment's ``sparktc run``
and ``sparktc classify`` run Spark jobs from outside the repository in tests/apps/test_cluster.py: ``run`` as the
driver of a standalone cluster, ``classify`` in local mode on that run's model.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, PackedEnv

# No Spark job here, but the packed environment (about 33 CPU-s of pip) that tests/apps/test_cluster.py's cluster
# runs from: with the Spark tests, not in the quick tier (-m "not spark").
pytestmark = pytest.mark.spark
TIMEOUT = 600


@pytest.fixture(scope="module")
def installed(packed_env: PackedEnv, tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """The wheel, the environment's bin/ and the environment variables to run its commands with, from a directory
    outside the repository: nothing that points at the clone or at the tests' interpreter, and a cache of its own.
    """
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARKTC_LOG",
                                  "SPARKTC_LOG_DIR")}
    # Where an installed sparktc puts its logs and its zip.
    environment["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("package") / "cache")
    return packed_env.wheel, packed_env.env / "bin", environment


def test_the_wheel_holds_the_configurations_the_stop_list_the_jobs_and_the_command(installed) -> None:
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [entry_points] = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    data = {f"sparktc/conf/{path.relative_to(REPO / 'conf')}" for path in (REPO / "conf").rglob("*") if path.is_file()}
    jobs = {f"sparktc/jobs/{path.name}" for path in (REPO / "jobs").glob("*.py")}
    modules = {f"{path.relative_to(REPO)}" for path in (REPO / "sparktc").rglob("*.py")}
    assert "sparktc/conf/stopwords/smart_english.stop" in data and "sparktc/conf/synthetic.toml" in data
    assert data | jobs | modules <= names
    assert not [name for name in names if name.startswith(("conf/", "jobs/", "tests/"))]
    assert "sparktc = sparktc.apps.submit:main" in scripts


def test_the_wheel_requires_the_runtime_dependencies_and_offers_the_extras(installed) -> None:
    """What pip reads of the wheel: the dependencies pinned in pyproject.toml, and each extra's only with it."""
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        fields = [line.split(": ", 1) for line in archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
                  if ": " in line]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert sorted(value for key, value in fields if key == "Provides-Extra") == sorted(extras)
    required = [value for key, value in fields if key == "Requires-Dist"]
    assert [value for value in required if "extra ==" not in value] == project["dependencies"]
    for extra, pins in extras.items():
        assert sorted(value.split(";")[0].strip() for value in required if f'extra == "{extra}"' in value) == \
            sorted(pin.replace(" ", "") for pin in pins), extra
    assert "ipywidgets==8.1.9" in extras["notebook"] and set(extras["notebook"]) <= set(extras["test"])


def test_python_m_sparktc_shows_the_commands(installed, tmp_path) -> None:
    _, bin_, environment = installed
    shown = subprocess.run([bin_ / "python", "-m", "sparktc", "--help"], cwd=tmp_path, env=environment,
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: sparktc COMMAND")
    assert "reuters21578" in shown.stdout  # the packaged configurations, by name
    unknown = subprocess.run([bin_ / "sparktc", "train"], cwd=tmp_path, env=environment, capture_output=True,
                             text=True, timeout=TIMEOUT)
    assert unknown.returncode == 2
    assert unknown.stderr == ("sparktc: error: unknown command 'train'; commands: run, classify, compare, history, "
                              "export, synthesize (sparktc --help)\n")


def installed_python(installed, cwd: Path, code: str) -> str:
    """What the environment's Python prints running ``code`` from ``cwd`` (outside the repository); it must succeed."""
    _, bin_, environment = installed
    done = subprocess.run([bin_ / "python", "-c", code], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_embedded_default_is_the_packaged_synthetic_configuration(installed, tmp_path) -> None:
    """What ``sparktc run`` without ``--config`` runs (``--config synthetic``: tests/apps/test_submit_arguments.py),
    loaded by the installed package from a directory outside the repository: conf/synthetic.toml as the wheel holds
    it, with the ``--set`` lines.
    """
    _, bin_, _ = installed
    loaded = installed_python(
        installed, tmp_path, "import sparktc\nfrom sparktc.apps.submit import DEFAULT_CONFIG\n"
        "from sparktc.experiment.config import load_config\n"
        "config = load_config(DEFAULT_CONFIG, ['synthesize.train_documents=300'])\n"
        "print(sparktc.__file__, DEFAULT_CONFIG, config.corpus.format, config.synthesize.documents,"
        " config.synthesize.train_documents, config.tokenize.stemmer, config.spark.app_name)")
    file, *settings = loaded.split()
    assert Path(file).is_relative_to(bin_.parent)
    assert settings == ["synthetic", "synthetic", "30000", "300", "none", "sparktc-synthetic"]


def test_the_zip_shipped_to_a_cluster_carries_the_configurations_and_the_stop_list(installed, tmp_path) -> None:
    """A master that is not local gets the installed package zipped (--py-files): a driver importing sparktc from
    the zip finds the configurations and the stop list by name in it.
    """
    _, _, environment = installed
    library = installed_python(installed, tmp_path, "from sparktc.apps.submit import Home, write_zip\n"
                               "print(write_zip(Home.installed()))").strip()
    assert library.startswith(environment["XDG_CACHE_HOME"])
    with zipfile.ZipFile(library) as archive:
        assert {"sparktc/conf/stopwords/smart_english.stop", "sparktc/conf/reuters21578.toml",
                "sparktc/packaged.pyc", "sparktc/jobs/pipeline.py"} <= set(archive.namelist())
    read = installed_python(
        installed, tmp_path, f"import sys; sys.path.insert(0, {library!r})\n"
        "import sparktc\nfrom sparktc.experiment.config import load_config\n"
        "from sparktc.features.text import stop_words_of\n"
        "config = load_config('reuters21578', ['corpus.path=.'])\n"
        "print(sparktc.__file__, config.tokenize.stop_list, len(stop_words_of(config.tokenize.stop_list, None)))")
    assert read == f"{library}/sparktc/__init__.pyc smart 570\n"
