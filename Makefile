# Two set-up commands: `make demo` and `make test`. Both build .venv from scratch when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
DEMO_OUT ?= runs/demo

.PHONY: demo test lint bench clean data chromium nodejs postgresql docs typecheck

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `make demo` installs the `speed` extra (numba, about 210 MB): simulate, the figures and audit
# then take the compiled engines (30-45x faster per pull for the sequential algorithms). numba
# stays an extra, not a core dependency: a live experiment or the HTTP service never needs it,
# and numba supports a new CPython months after its release (docs/simulate.md). It installs the
# `serve` extra too (Starlette + uvicorn, about 5 MB): the README's HTTP quick start needs it.
$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[speed,serve]"
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,bench,serve,speed,postgres,docs]"
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(BIN)/banditkit run replicable-bandits:ucb-baseline --quick --out $(DEMO_OUT)

# MovieLens-100k for the click-through instances: the recbole wheel ships it (recbole itself is
# never imported, so --no-deps keeps torch out).
data: $(STAMP_RUN)
	$(BIN)/python -m pip install --quiet --no-deps recbole==1.2.1

lint: $(STAMP_TEST)
	$(BIN)/ruff check src tests benchmarks examples

# Headless Chromium for the service's browser test (tests/test_service_page.py): Debian's
# package, installed only when missing (as root, or through sudo), so a second run does nothing.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

# Node for the JavaScript client's tests (clients/js/test.mjs, run by tests/test_client.py):
# Debian's package, installed only when no node is found.
nodejs:
	@command -v node >/dev/null 2>&1 || { $(SUDO) apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs >/dev/null; }

# PostgreSQL for the store's and the service's tests (tests/postgres_support.py starts a throwaway
# server per test process): Debian's package, installed only when no initdb is found.
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null; }

# The suite includes the docs' strict build (tests/test_docs_site.py), every python block of the
# docs (test_docs_blocks.py), the wheel in a clean venv (test_wheel.py) and mypy --strict on the
# public API (test_typing.py).
test: $(STAMP_TEST) chromium nodejs postgresql
	$(BIN)/ruff check src tests benchmarks examples docs/_gen
	$(BIN)/python -m pytest -n 2 --dist loadscope -q

# The documentation site into site/ (open site/index.html; nothing is fetched, at build or when
# viewed). The gallery's --quick figures are drawn once into build/docs-gallery, as many at a
# time as there are cores (BANDITKIT_DOCS_JOBS), one progress line each, copying instead those
# a `banditkit reproduce --quick` already stored (runs/reproduce-quick) for this exact code; then
# reused. `make clean` forgets them. A first build took 1:07 on 2 idle cores (122 CPU s; the
# 24 figures 2 at a time; 2026-11-29, BANDITKIT_DOCS_CACHE pointing at an empty folder).
export DISABLE_MKDOCS_2_WARNING := true
export NO_MKDOCS_2_WARNING := 1
docs: $(STAMP_TEST)
	$(BIN)/mkdocs build --strict

typecheck: $(STAMP_TEST)
	MYPYPATH=src $(BIN)/mypy --strict --follow-imports=silent --ignore-missing-imports \
		tests/typing/public_api.py

bench: $(STAMP_TEST)
	$(BIN)/python benchmarks/bench_design.py

clean:
	rm -rf $(VENV) runs build site *.egg-info src/*.egg-info .mypy_cache

# The service's load test (docs/service.md): SQLite and PostgreSQL, 1 and 2 servers, 8 and 32
# clients, assign+record round trips (each configuration stops at 20,000 or after 40 s), beside
# /health's requests/s in the same run, 0 lost / 0 duplicated checked, then PostgreSQL's round
# trips and statements per call; prints docs/service.md's table, in under 10 minutes.
.PHONY: bench-service
bench-service: $(STAMP_TEST) postgresql
	$(BIN)/python benchmarks/bench_service.py --clients 8 32 --servers 1 2 --round-trips 20000 \
		--time-limit 40 --health-seconds 5
