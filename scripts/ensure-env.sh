#!/usr/bin/env bash
# Create or refresh the project's virtual environment (.venv) with the pinned dependencies of pyproject.toml, and
# sparktc itself installed editable (it imports from this checkout, so benchmarks and tests need no path set).
# spark-submit.sh still ships sparktc to the executors as build/sparktc.zip, which comes first on their path.
#
#   scripts/ensure-env.sh [run|dev]
#
# run (the default, spark-submit.sh's): what running a job needs, pyproject.toml's dependencies. dev (the Makefile's
# test, lint and docs targets): those and the test extra, which holds the tests' packages, ruff, the docs' MkDocs and
# the track, connect and notebook extras (their tests run too). A dev environment serves run too; a run environment
# gets the test extra added when dev is asked for.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
python=${PYTHON:-python3}
stamp="$venv/.sparktc-deps"
mode=${1:-run}
case "$mode" in
  run|dev) ;;
  *) echo "ensure-env.sh: unknown mode $mode (run: the dependencies; dev: and the test extra)" >&2; exit 2 ;;
esac
# The pins and these scripts: an environment made by an earlier version of any is made again.
want=$(cat "$root/pyproject.toml" "$root/scripts/ensure-env.sh" "$root/scripts/unzipped_pyspark.py" | sha256sum |
  cut -d' ' -f1)
if [ -f "$stamp" ] && { [ "$(cat "$stamp")" = "$want dev" ] || [ "$(cat "$stamp")" = "$want $mode" ]; }; then
  exit 0
fi
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "sparktc needs Python 3.11 or newer")'
command -v java >/dev/null || { echo "sparktc needs Java 17 or newer on PATH (Spark runs on the JVM)" >&2; exit 1; }
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# --no-compile, then compileall on both cores: pip compiles every module one at a time as it installs it (25 s -> 51 s
# for the requirements, 2026-12-02), compileall -j 0 the same files in 20 s. Compiled they must be: where
# PYTHONDONTWRITEBYTECODE is set (as on the project's build machines), Python caches nothing it compiles, and every
# process (each Spark Python worker, job and test process) compiled pandas, pyarrow and pyspark again as it imported
# them: six subprocess-heavy test files took 170 CPU-s with the sources alone, 102 compiled.
"$venv/bin/python" -m pip install --quiet --no-compile --upgrade pip
"$venv/bin/python" - "$root/pyproject.toml" "$mode" > "$venv/requirements.txt" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"] + (project["optional-dependencies"]["test"] if sys.argv[2] == "dev" else [])))
PY
"$venv/bin/python" -m pip install --quiet --no-compile -r "$venv/requirements.txt"
"$venv/bin/python" -m pip install --quiet --no-deps --editable "$root"
purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
# Spark's own zips of the installed pyspark and py4j off every process's path (scripts/unzipped_pyspark.py): imported
# from a zip, pyspark is compiled again in every Python worker and job.
cp "$root/scripts/unzipped_pyspark.py" "$purelib/_sparktc_unzipped_pyspark.py"
echo "import _sparktc_unzipped_pyspark; _sparktc_unzipped_pyspark.apply()" > "$purelib/_sparktc_unzipped_pyspark.pth"
# A module that does not compile (a package's test written for another Python) is one Python would refuse on import too.
"$venv/bin/python" -m compileall -q -j 0 "$purelib" >/dev/null || true
echo "$want $mode" > "$stamp"
