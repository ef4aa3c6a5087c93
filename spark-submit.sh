#!/usr/bin/env bash
# Run a sparktc job with the spark-submit that ships with pyspark.
#
#   ./spark-submit.sh [spark-submit options] jobs/JOB.py --config conf/X.toml [--set k=v ...] --output DIR
#
# Creates .venv on first use, points PYSPARK_PYTHON at it (unless already set), packages the
# sparktc library with its bytecode as build/sparktc.zip and passes it with --py-files so executors on a cluster
# import the same code, and defaults to --master local[*,4] (every core; a failed task gets up to
# 4 attempts, as spark.task.maxFailures gives on a cluster), and sends Spark's log to
# logs/<time>-<pid>-<job>.log (SPARKTC_LOG_DIR or SPARKTC_LOG to change it). In local mode the driver JVM runs
# the serial collector and reads Spark's classes from build/jvm-classes-<key>.jsa, which the first local job
# that succeeds writes as it exits. Any spark-submit option goes through:
# --master yarn | spark://host:7077 | k8s://..., --deploy-mode, --executor-memory, --conf ...
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/ensure-env.sh"
python="$root/.venv/bin/python"
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$python}"
export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-$python}"
spark_home=$("$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')

mkdir -p "$root/build"
# Written aside and renamed into place, so jobs submitted at the same time never read a half-written zip.
"$python" - "$root" <<'PY'
import importlib.util, marshal, os, sys, tempfile, zipfile
root = sys.argv[1]
handle, partial = tempfile.mkstemp(prefix=".sparktc-", suffix=".zip", dir=os.path.join(root, "build"))
os.close(handle)
with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
    for folder, dirs, files in os.walk(os.path.join(root, "sparktc")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, root)
                archive.write(path, relative)
                # Its bytecode beside it (unchecked: the zip is rebuilt with it on every submit): Python imports
                # from a zip compile every module's source in every process (twice: zipimport's get_filename and
                # get_code), 0.3 CPU-s per driver or worker process; another Python version falls back to the source.
                with open(path, "rb") as handle:
                    source = handle.read()
                code = compile(source, relative, "exec", dont_inherit=True)
                archive.writestr(relative + "c", importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little")
                                 + importlib.util.source_hash(source) + marshal.dumps(code))
os.chmod(partial, 0o644)
os.replace(partial, os.path.join(root, "build", "sparktc.zip"))
PY

# Spark's own log goes to a file per job, not to the console: the stages print one line each, and a
# failure prints one `sparktc: error:` line that names this file (the job appends its trace to it).
log_dir="${SPARKTC_LOG_DIR:-$root/logs}"
mkdir -p "$log_dir"
job=""
for argument in "$@"; do case "$argument" in *.py) job=$(basename "$argument" .py); break ;; esac; done
export SPARKTC_LOG="${SPARKTC_LOG:-$log_dir/$(date -u +%Y%m%dT%H%M%SZ)-$$-${job:-job}.log}"
# Spark pipes the Python driver's stderr into this command's stdout: tell the driver when that is a terminal, so
# its progress line is rewritten in place there (sparktc/runtime/progress.py).
if [ -t 1 ]; then export SPARKTC_TERMINAL=1; else export SPARKTC_TERMINAL=0; fi
options=(--conf "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=file:$root/conf/log4j2.properties -Dsparktc.log=$SPARKTC_LOG")
master="local[*,4]"
has_master=0
has_properties=0
previous=""
for argument in "$@"; do
  case "$argument" in
    --master=*) has_master=1; master=${argument#--master=} ;;
    --master) has_master=1 ;;
    --remote|--remote=*) has_master=1; master=remote ;;  # a Spark Connect client: the server has the master
    --properties-file|--properties-file=*) has_properties=1 ;;
  esac
  [ "$previous" = "--master" ] && master=$argument
  previous=$argument
done
[ "$has_master" = 1 ] || options+=(--master "$master")
[ "$has_properties" = 1 ] || options+=(--properties-file "$root/conf/spark-defaults.conf")
case "$master" in
  local*)
    # In local mode nothing needs to be reachable from other hosts: bind to loopback only.
    export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
    # The driver JVM is the whole cluster, started afresh by every job: the serial collector (the Python workers do
    # the corpus-sized work; G1's threads cost CPU for a 1g heap), and the classes of Spark, Scala and Hadoop read
    # from a class-data-sharing archive instead of parsed and verified again (BENCHMARKS.md, "The fixed cost of a
    # run"). The first local job that succeeds writes the archive as it exits, to a name of its own, then renames it
    # into place; it is keyed by the java binary and Spark's jars, and a JVM that cannot use it ignores it
    # (-Xlog:cds off: nothing printed either way).
    java=$(readlink -f "${JAVA_HOME:+$JAVA_HOME/bin/java}" 2>/dev/null || true)
    [ -n "$java" ] || java=$(readlink -f "$(command -v java)" 2>/dev/null || true)
    key=$( { echo "$java"; ls -l --full-time "$java" "$spark_home/jars"; } 2>/dev/null | cksum | cut -d' ' -f1)
    classes="$root/build/jvm-classes-$key.jsa"
    java_options="-XX:+UseSerialGC -Xlog:cds=off -Xlog:cds+dynamic=off"
    if [ ! -s "$classes" ]; then
      partial="$root/build/.jvm-classes-$key.$$.jsa"
      options[1]+=" $java_options -XX:ArchiveClassesAtExit=$partial"
      status=0
      "$spark_home/bin/spark-submit" "${options[@]}" --py-files "$root/build/sparktc.zip" "$@" || status=$?
      # Kept from a job that succeeded only: one refused at the door has loaded few of the classes, and a JVM killed
      # by a signal may have left it half written.
      if [ "$status" = 0 ] && [ -s "$partial" ]; then mv -f "$partial" "$classes"; else rm -f "$partial"; fi
      exit "$status"
    fi
    options[1]+=" $java_options -XX:SharedArchiveFile=$classes"
    ;;
esac
exec "$spark_home/bin/spark-submit" "${options[@]}" --py-files "$root/build/sparktc.zip" "$@"
