# The image of the README's Kubernetes recipe: Java 17, Python 3.11, and in /opt/venv sparktc installed from its wheel
# with the dependencies pinned in pyproject.toml, Spark among them (pyspark's jars and scripts are SPARK_HOME). Built
# from the checkout (.dockerignore keeps .venv, build/ and the runs out of the context):
#
#   docker build -t REGISTRY/sparktc:0.1.0 . && docker push REGISTRY/sparktc:0.1.0
#
# Spark starts its driver and executor pods with the arguments `driver ...` and `executor`, which
# docker/entrypoint.sh turns into their commands; any other command runs as given.

FROM python:3.11-slim-bookworm AS wheel
COPY . /src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist /src

FROM python:3.11-slim-bookworm
# tini reaps the JVM's and Python workers' children and forwards signals; procps gives Spark's scripts `ps`. The slim
# image has no man directories, where the JRE's package links its manual pages.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps tini \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s "$(dirname "$(dirname "$(readlink -f /usr/bin/java)")")" /usr/lib/jvm/java-17
COPY --from=wheel /dist /tmp/dist
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir /tmp/dist/sparktc-*.whl \
    && rm -rf /tmp/dist
ENV JAVA_HOME=/usr/lib/jvm/java-17 \
    SPARK_HOME=/opt/venv/lib/python3.11/site-packages/pyspark \
    PYSPARK_PYTHON=/opt/venv/bin/python \
    PYSPARK_DRIVER_PYTHON=/opt/venv/bin/python \
    PATH=/opt/venv/bin:$PATH
COPY docker/entrypoint.sh /opt/entrypoint.sh
# Spark's images run as uid 185, in /opt/spark/work-dir (where executors fetch the job's files).
RUN useradd --uid 185 --home-dir /opt/spark --no-create-home --shell /usr/sbin/nologin spark \
    && mkdir -p /opt/spark/work-dir && chown spark /opt/spark/work-dir
WORKDIR /opt/spark/work-dir
USER 185
ENTRYPOINT ["/opt/entrypoint.sh"]
