#!/usr/bin/env bash
# The entry point of the sparktc image (Dockerfile) on Kubernetes. Spark starts the driver's pod with the arguments
# `driver SPARK-SUBMIT-ARGUMENTS...` and each executor's with `executor`, and sets the SPARK_* variables read below in
# the pod's environment; any other command (`python ...`, `bash`) runs as given. tini runs it as the container's first
# process: it reaps orphaned children and passes signals on.
set -euo pipefail
case "${1:-}" in
  driver)
    shift
    command=("$SPARK_HOME/bin/spark-submit" --conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS"
             --deploy-mode client "$@")
    ;;
  executor)
    shift
    # The executor's JVM options come as SPARK_JAVA_OPT_0, SPARK_JAVA_OPT_1, ..., in that order.
    java_options=()
    for index in $(compgen -e | sed -n 's/^SPARK_JAVA_OPT_\([0-9][0-9]*\)$/\1/p' | sort -n); do
      name="SPARK_JAVA_OPT_$index"
      java_options+=("${!name}")
    done
    classpath="${SPARK_CONF_DIR:-$SPARK_HOME/conf}:$SPARK_HOME/jars/*${SPARK_CLASSPATH:+:$SPARK_CLASSPATH}"
    command=("$JAVA_HOME/bin/java" "${java_options[@]}" "-Xms$SPARK_EXECUTOR_MEMORY" "-Xmx$SPARK_EXECUTOR_MEMORY"
             -cp "$classpath" org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend
             --driver-url "$SPARK_DRIVER_URL" --executor-id "$SPARK_EXECUTOR_ID" --cores "$SPARK_EXECUTOR_CORES"
             --app-id "$SPARK_APPLICATION_ID" --hostname "$SPARK_EXECUTOR_POD_IP"
             --resourceProfileId "$SPARK_RESOURCE_PROFILE_ID" --podName "$SPARK_EXECUTOR_POD_NAME")
    ;;
  *)
    command=("$@")
    ;;
esac
exec /usr/bin/tini -s -- "${command[@]}"
