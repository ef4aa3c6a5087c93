# The targets that test, lint or build the docs add the test extra to .venv (`scripts/ensure-env.sh dev`: pytest,
# ruff, MkDocs and the track, connect and notebook extras, whose tests run too); the others, as spark-submit.sh, need
# only the runtime dependencies (`scripts/ensure-env.sh`).
#
# `make test` creates .venv with the pinned dependencies and the test extra (first run only), compiles sparktc's and
# the benchmarks' modules (where PYTHONDONTWRITEBYTECODE is set, every test's process would compile them again) and
# runs the test suite; it ends with its 15 slowest items (docs/design.md, "Keeping the suite fast").
.PHONY: test
test:
	./scripts/ensure-env.sh dev
	.venv/bin/python -m compileall -q -j 0 sparktc benchmarks >/dev/null
	PYSPARK_PYTHON=$(CURDIR)/.venv/bin/python PYSPARK_DRIVER_PYTHON=$(CURDIR)/.venv/bin/python \
		.venv/bin/python -m pytest --durations=15

# `make test-maths` runs only the tests that start no Spark (the maths, the formats, the reports): no JVM, seconds.
.PHONY: test-maths
test-maths:
	./scripts/ensure-env.sh dev
	.venv/bin/python -m pytest -m "not spark"

# `make lint` checks the code with ruff (rules in pyproject.toml); CI runs it before the tests.
.PHONY: lint
lint:
	./scripts/ensure-env.sh dev
	.venv/bin/ruff check .

# `make docs` builds the user guide and API reference (mkdocs.yml) into build/site; --strict fails on any warning: a
# broken link or anchor, a page missing from the nav, a docstring the API reference cannot read. CI runs it after lint.
.PHONY: docs
docs:
	./scripts/ensure-env.sh dev
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

# `make benchmarks-summary` rewrites the benchmarks' summary table (BENCHMARKS.md, docs/benchmarks/index.md and the
# README's headline table) from their records in benchmarks/history/: see benchmarks/summary.py.
.PHONY: benchmarks-summary
benchmarks-summary:
	./scripts/ensure-env.sh
	.venv/bin/python -m benchmarks.summary

# `make benchmark-rcv1` runs the RCV1-v2-scale benchmark with its defaults (100k to 804,414 synthetic
# documents, local[2] and local[1], the lean single-process peer at every size and the MLlib peer): see benchmarks/rcv1_scale.py.
.PHONY: benchmark-rcv1
benchmark-rcv1:
	./scripts/ensure-env.sh
	.venv/bin/python -m benchmarks.rcv1_scale --output runs/benchmark-rcv1

# `make pack` builds build/env.tar.gz, the Python environment the YARN recipe ships with --archives (docs/clusters.md,
# "YARN"): sparktc installed from its wheel with the pinned dependencies in a fresh virtual environment, packed
# by venv-pack (scripts/pack-env.sh says what is in it). It neither uses nor changes .venv.
.PHONY: pack
pack:
	./scripts/pack-env.sh build/env.tar.gz
