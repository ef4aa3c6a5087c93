#!/usr/bin/env bash
# Run a sparktc job with the spark-submit that ships with pyspark.
#
#   ./spark-submit.sh [spark-submit options] jobs/JOB.py --config conf/X.toml [--set k=v ...] --output DIR
#
# Creates .venv on first use, points PYSPARK_PYTHON at it (unless already set), packages the
# sparktc library with its bytecode (and conf/) as build/sparktc.zip and passes it with --py-files so executors on a
# cluster import the same code, and defaults to --master local[*,4] (every core; a failed task gets up to
# 4 attempts, as spark.task.maxFailures gives on a cluster), and sends Spark's log to
# logs/<time>-<pid>-<job>.log (SPARKTC_LOG_DIR or SPARKTC_LOG to change it). In local mode the driver JVM runs
# the serial collector and reads Spark's classes from build/jvm-classes-<key>.jsa, which the first local job
# that succeeds writes as it exits. Any spark-submit option goes through:
# --master yarn | spark://host:7077 | k8s://..., --deploy-mode, --executor-memory, --conf ...
# The work is sparktc/apps/submit.py's, which the installed `sparktc` command runs too; this clone's sparktc first.
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/ensure-env.sh"
exec "$root/.venv/bin/python" -P -c 'import sys; sys.path.insert(0, sys.argv[1])
from sparktc.apps.submit import clone
sys.exit(clone(sys.argv[1], sys.argv[2:]))' "$root" "$@"
