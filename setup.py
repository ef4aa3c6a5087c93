"""The packages of the wheel, beside pyproject.toml (which has the rest): sparktc's own, found, so that a new one
needs no line here, and the top-level conf/ and jobs/ mapped into it as ``sparktc.conf`` and ``sparktc.jobs`` (the
configurations, the SMART stop list, Spark's settings and the jobs, found by name: ``sparktc.packaged``).
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["sparktc", "sparktc.*"]), "sparktc.conf", "sparktc.conf.stopwords",
              "sparktc.jobs"],
    package_dir={"sparktc.conf": "conf", "sparktc.jobs": "jobs"},
)
