# Two commands on a fresh machine:  make test   and   make demo
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# tests/browser drives the system Chromium through Playwright (Playwright's own browser download needs its CDN)
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: test test-nojit fuzz verify demo bench lint clean chromium postgres docs docs-build results

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The pinned CPU torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

# Debian's chromium package, once (nothing to do when it is there)
$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

chromium: $(CHROMIUM)

# Debian's PostgreSQL server binaries, once (tests/support/postgres.py starts a throwaway server from them for the
# store's tests on PostgreSQL, on a free loopback port, removed at the end)
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { $(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; }

test: $(STAMP) chromium postgres
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	# Numba's cache filled once (minutes on a fresh clone), while mypy runs: otherwise each test process and
	# each process a test starts would compile the same kernels side by side
	$(BIN)/mypy & mypy=$$!; $(BIN)/tarocchi-rl warm && wait $$mypy
	$(BIN)/pytest -q -n 2 -m "not slow" --durations=25
	NUMBA_DISABLE_JIT=1 $(BIN)/pytest -q -n 2 -m nojit
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The documentation site (mkdocs.yml, docs/): served with live reload on http://127.0.0.1:8001/
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The results pages (docs/results/) and the README's headline table, from the JSON in benchmarks/results/
results: $(STAMP)
	$(BIN)/python experiments/docs/results_pages.py

test-nojit: $(STAMP)
	NUMBA_DISABLE_JIT=1 $(BIN)/pytest -q -n 2 -m nojit

# The property-based tests of every input boundary (tests/reliability) with 5,000 examples each instead of
# make test's 60 (Hypothesis profile "fuzz", tests/reliability/conftest.py); about 4 minutes on two cores.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q -n 2 tests/reliability

# The rules proven at scale: 100,000 random deals of each variant played on the core and on the independent
# oracles of tests/oracles side by side (legal sets at every decision, payoffs at the end), on two processes.
verify: $(STAMP)
	$(BIN)/python experiments/checks/verify_rules.py --deals 100000

demo: $(STAMP)
	$(BIN)/tarocchi-rl demo

bench: $(STAMP)
	$(BIN)/tarocchi-rl bench --variant mineo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
