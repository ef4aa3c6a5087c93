#!/usr/bin/env bash
# Build the Python environment a cluster's executors (and a YARN driver) run, as one archive for --archives:
#
#   scripts/pack-env.sh [--keep-env DIR] [--keep-wheel DIR] [--compress-level N] [OUTPUT]
#
# OUTPUT is build/env.tar.gz unless given, and must be a .tar.gz or .tgz: Spark 4 unpacks a .tar or .zip archive
# itself (outside YARN), without the executable bits. A fresh virtual environment (${PYTHON:-python3}) gets sparktc
# installed from its wheel, built here from a copy of the checkout's files (git's tracked and untracked-but-not-ignored
# ones, so neither build/ nor a stale build/lib gets in), with the dependencies pinned in pyproject.toml, and venv-pack
# packs it (it refuses editable installs) without pyspark's jars: the cluster's Spark runs the JVMs, its Python workers
# and a YARN driver import pyspark's Python code only, and the jars were 462 of the 1,136 MB (gzip level 1: 242 MB in
# 10 s; level 4, 221 MB in 12 CPU-s, 32 s). The project's .venv is not used. --keep-env DIR (a new directory) keeps
# the whole environment there too, jars included, for a driver on this machine; --keep-wheel DIR (a new directory)
# keeps sparktc's wheel there. --compress-level N is gzip's, 1 unless given; the same files at any level, and the tests
# take 0 (708 MB written in 2 CPU-s, unpacked by tar in 8; level 1: 8 and 13). The archive holds no Python
# installation: its bin/python links to the interpreter that built it, which must exist at the same path on every node.
set -euo pipefail
unset PYTHONPATH PYTHONHOME  # nothing of the caller's path (a checkout on PYTHONPATH would pass for an install)
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
venv_pack="venv-pack==0.2.0"  # the packing tool, installed beside the environment (not into it)
output=$root/build/env.tar.gz
keep=""
keep_wheel=""
level=1
while [ $# -gt 0 ]; do
  case "$1" in
    --keep-env) keep=${2:?--keep-env needs a directory}; shift 2 ;;
    --keep-wheel) keep_wheel=${2:?--keep-wheel needs a directory}; shift 2 ;;
    --compress-level) level=${2:?--compress-level needs a level, 0-9}; shift 2 ;;
    -*) echo "pack-env.sh: unknown option $1 (--keep-env DIR, --keep-wheel DIR, --compress-level N, then OUTPUT)" >&2
        exit 2 ;;
    *) output=$1; shift ;;
  esac
done
case "$output" in
  *.tar.gz|*.tgz) ;;
  *) echo "pack-env.sh: OUTPUT $output must end in .tar.gz or .tgz (Spark unpacks other archives without their" \
          "executable bits)" >&2; exit 2 ;;
esac
case "$level" in
  [0-9]) ;;
  *) echo "pack-env.sh: --compress-level $level is not a gzip level; give 0 (fastest) to 9 (smallest)" >&2; exit 2 ;;
esac
for kept in "$keep" "$keep_wheel"; do
  if [ -n "$kept" ] && [ -e "$kept" ]; then
    echo "pack-env.sh: $kept exists; name a new directory for --keep-env and --keep-wheel (nothing is replaced)" >&2
    exit 2
  fi
done
output=$(realpath -m "$output")

"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "sparktc needs Python 3.11 or newer")'
mkdir -p "$(dirname "$output")"
work=$(mktemp -d "$(dirname "$output")/.pack-XXXXXX")
trap 'rm -rf "$work"' EXIT
env=${keep:-$work/env}

mkdir "$work/src"
git -C "$root" ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
  [ -e "$root/$file" ] && printf '%s\0' "$file"  # tracked files deleted from the work tree are left out
done | (cd "$root" && xargs -0 cp --parents --no-dereference -t "$work/src")

"$python" -m venv "$env"
"$env/bin/python" -m pip install --quiet --target "$work/tools" "$venv_pack"
"$env/bin/python" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/src"
"$env/bin/python" -m pip install --quiet "$work"/dist/sparktc-*.whl
if [ -n "$keep_wheel" ]; then
  mkdir "$keep_wheel" && cp "$work"/dist/sparktc-*.whl "$keep_wheel/"
fi
PYTHONPATH="$work/tools" "$env/bin/python" -m venv_pack --quiet --prefix "$env" --compress-level "$level" \
  --exclude "lib/python*/site-packages/pyspark/jars/*" --output "$work/env.tar.gz"
chmod 644 "$work/env.tar.gz"
mv -f "$work/env.tar.gz" "$output"  # in place at once: a job submitted meanwhile reads the old archive whole
echo "$output: $(du -h "$output" | cut -f1)"
