#!/usr/bin/env bash
# Create or refresh the project's virtual environment (.venv) with the pinned dependencies of
# pyproject.toml (runtime and test), and sparktc itself installed editable (it imports from this
# checkout, so benchmarks and tests need no path set). spark-submit.sh still ships sparktc to the
# executors as build/sparktc.zip, which comes first on their path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
python=${PYTHON:-python3}
stamp="$venv/.sparktc-deps"
want=$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "sparktc needs Python 3.11 or newer")'
command -v java >/dev/null || { echo "sparktc needs Java 17 or newer on PATH (Spark runs on the JVM)" >&2; exit 1; }
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# --no-compile: pip would compile every module of every package (pyspark's, scipy's, scikit-learn's tests included)
# up front; Python compiles the ones imported when first imported, and caches them (53 s -> 42 s, 2026-11-29).
"$venv/bin/python" -m pip install --quiet --no-compile --upgrade pip
"$venv/bin/python" - "$root/pyproject.toml" > "$venv/requirements.txt" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["test"]))
PY
"$venv/bin/python" -m pip install --quiet --no-compile -r "$venv/requirements.txt"
"$venv/bin/python" -m pip install --quiet --no-deps --editable "$root"
echo "$want" > "$stamp"
