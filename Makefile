# `make test` creates .venv with the pinned dependencies (first run only) and runs the test suite.
.PHONY: test
test:
	./scripts/ensure-env.sh
	PYSPARK_PYTHON=$(CURDIR)/.venv/bin/python PYSPARK_DRIVER_PYTHON=$(CURDIR)/.venv/bin/python \
		.venv/bin/python -m pytest
