# Two commands: `make run` serves Ormah on 127.0.0.1:8787, `make test` runs the whole suite.
# Both create .venv and install on first use; running them again is safe.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: help run test test-pg setup system-deps clean bench lint

help:
	@echo 'make run      create .venv, install, prepare the model, migrate, then serve on http://127.0.0.1:8787'
	@echo 'make test     the same setup plus Chromium, then the whole suite on SQLite and the import contracts'
	@echo 'make test-pg  the suite again on a throwaway PostgreSQL + pgvector cluster (docs/team-server.md)'
	@echo 'make lint     the import contracts (lint-imports; docs/architecture.md)'
	@echo 'make bench    recall quality and latency, a short look (the other benchmarks: docs/benchmarks.md)'
	@echo 'make clean    remove .venv and test output'

$(STAMP): pyproject.toml
	@echo 'Installing Ormah and its dependencies into $(VENV) (a minute or two the first time; quiet until done)'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# What pip cannot install (Debian's chromium for the browser tests): apt as root, else one line saying what to install.
system-deps:
	@./scripts/system-deps.sh

run: setup
	$(VENV)/bin/ormah init
	$(VENV)/bin/ormah serve

test: setup system-deps
	$(PY) -m pytest $(PYTEST_ARGS)
	$(VENV)/bin/lint-imports
	@[ -n "$$ORMAH_TEST_DATABASE_URL" ] || echo "make test ran on SQLite; the same suite on PostgreSQL is make test-pg (needs PostgreSQL + pgvector: sudo scripts/pg-install.sh)"

# The import contracts of pyproject.toml (layers, the pure core, the write door; docs/architecture.md).
lint: setup
	$(VENV)/bin/lint-imports

# The suite on PostgreSQL + pgvector, in a throwaway cluster (needs PostgreSQL with pgvector installed:
# scripts/pg-install.sh as root; docs/team-server.md). Fault and end-to-end tests run too, each child process on
# a database of its own (tests/support/pg_databases.py). Browser tests are left out: they drive the same views
# in-process that tests/ui and tests/api test on PostgreSQL, and Chromium is the suite's flakiest, slowest part.
PG_PYTEST_ARGS ?= -m "not browser"
test-pg: setup
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,postgres]'
	./scripts/pg-cluster.sh run $(PY) -m pytest $(PG_PYTEST_ARGS) $(PYTEST_ARGS)

# A short look at recall: quality on the labelled set, latency on 1k and 10k memories (nothing is written to
# docs/benchmarks.md; each bench's --write does that, and the others are run by hand: docs/benchmarks.md).
bench: setup
	$(PY) -m bench.recall_quality --no-sweep
	$(PY) -m bench.recall_latency --sizes 1000,10000

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
