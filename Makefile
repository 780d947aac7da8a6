# Two commands: `make run` sets up and serves; `make test` sets up and proves it works.
# The recipes that `make run` depends on are silent on stdout (setup output goes to stderr),
# so `make run` can itself be the command an MCP client launches: stdout is the JSON-RPC wire.
# From another directory use `make -s -C DIR run`: for -C, make prints "Entering directory" on stdout
# before it reads this file, so only the command line (-s or --no-print-directory) can silence it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed

# Suites that drive Colibri with the clients and servers people use (the TypeScript SDK, the MCP
# Inspector, the conformance suite, server-everything, the OAuth tests' identity provider
# oidc-provider) each pin their npm packages in a lock file; so does `python -m bench tools` (js-tiktoken's
# cl100k_base ranks, server-memory and server-filesystem).
NPM_DIRS := tests/interop tests/http/npm tests/switchboard/npm tests/idp bench/npm
NPM_STAMPS := $(NPM_DIRS:%=%/node_modules/.installed)

.PHONY: run test lint docs bench clean npm node22 postgres-binaries chromium go-toolchain

$(BIN)/python:
	@echo "creating $(VENV)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/python -m pip install --quiet --upgrade pip >&2

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@echo "installing colibri into $(VENV)" >&2
	@$(BIN)/python -m pip install --quiet -e . >&2
	@touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	@mkdir -p data
	@exec $(BIN)/colibri serve

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# The documentation site (mkdocs.yml; docs/hooks generates the reference from the code) into
# build/site. --strict: a broken link or anchor, a page missing from the nav or a reference that no
# longer matches the code fails the build, naming it. The hooks are held to the code's own lint.
docs: $(STAMP)
	$(BIN)/ruff check docs/hooks
	$(BIN)/ruff format --check docs/hooks
	$(BIN)/mypy --strict docs/hooks/*.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Installed again only when a lock file changes. Under CI a missing npm or a failed install stops
# the run; elsewhere those suites are skipped with the reason.
%/node_modules/.installed: %/package.json %/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$CI" = true ]; then echo "npm not found: CI needs Node.js 20+ and npm for $*" >&2; exit 1; fi; \
		echo "npm not found: the suites that need $* will be skipped" >&2; \
	else \
		echo "installing the pinned npm packages of $* (npm ci)" >&2; \
		if (cd $* && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2); then touch $@; \
		elif [ "$$CI" = true ]; then echo "npm ci failed in $*" >&2; exit 1; \
		else echo "npm ci failed: the suites that need $* will be skipped" >&2; fi; \
	fi

# The conformance suite (tests/http/npm) needs Node.js 22 (the interop suites keep the machine's node).
# It comes from npm as the `node` package, whose install script fetches the platform's binary (again
# from npm): so this folder's `npm ci` runs install scripts, unlike the others. Under CI a failure
# stops the run; elsewhere the conformance tests are skipped with the reason.
NODE22_DIR := tests/http/node22

node22: $(NODE22_DIR)/node_modules/.installed

$(NODE22_DIR)/node_modules/.installed: $(NODE22_DIR)/package.json $(NODE22_DIR)/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$CI" = true ]; then echo "npm not found: CI needs npm to install Node.js 22 ($(NODE22_DIR))" >&2; exit 1; fi; \
		echo "npm not found: the conformance tests will be skipped" >&2; \
	else \
		echo "installing Node.js 22 from npm into $(NODE22_DIR) (npm ci)" >&2; \
		if (cd $(NODE22_DIR) && npm ci --no-audit --no-fund --loglevel=error >&2); then touch $@; \
		elif [ "$$CI" = true ]; then echo "npm ci failed in $(NODE22_DIR)" >&2; exit 1; \
		else echo "npm ci failed: the conformance tests will be skipped" >&2; fi; \
	fi

# The suites run on SQLite and on a PostgreSQL 15 server they start themselves (tests/helpers/postgres.py)
# from these binaries. Under CI they are installed when missing (Debian's postgresql-15, as root);
# elsewhere the PostgreSQL half is skipped with the reason.
PG_BIN := /usr/lib/postgresql/15/bin
PG_PACKAGE := postgresql-15

postgres-binaries:
	@if [ ! -x $(PG_BIN)/initdb ]; then \
		if [ "$$CI" = true ]; then \
			echo "installing $(PG_PACKAGE) for the PostgreSQL half of the suite" >&2; \
			apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PG_PACKAGE) >&2 \
				|| { echo "cannot install $(PG_PACKAGE): CI needs it for the PostgreSQL tests" >&2; exit 1; }; \
		else echo "no $(PG_BIN)/initdb: the PostgreSQL tests will be skipped" >&2; fi; \
	fi

# The page tests (tests/ui) drive Debian's chromium through Playwright (never `playwright install`).
# Installed with apt-get when missing (as root); under CI a browser that cannot be had stops the run.
CHROMIUM := /usr/bin/chromium

chromium:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the page tests" >&2; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2 || true; \
	fi; \
	if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$CI" = true ]; then echo "$(CHROMIUM) not found: CI needs Debian's chromium for tests/ui" >&2; exit 1; fi; \
		echo "$(CHROMIUM) not found: the browser tests (tests/ui) will be skipped" >&2; \
	fi

# The log's interop test (tests/interop/test_go_tlog.py) builds a Go program against Go's own
# golang.org/x/mod/sumdb/note and tlog, from Debian's golang-go and golang-golang-x-mod-dev
# (GOPATH mode, GOPATH=/usr/share/gocode). Installed with apt-get when missing (as root); under CI
# a Go that cannot be had stops the run; elsewhere the test is skipped with the reason.
GO_MOD_SRC := /usr/share/gocode/src/golang.org/x/mod/sumdb

go-toolchain:
	@if { ! command -v go >/dev/null 2>&1 || [ ! -d $(GO_MOD_SRC) ]; } && [ "$$(id -u)" = 0 ] \
			&& command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's golang-go and golang-golang-x-mod-dev for the tlog interop test" >&2; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go \
			golang-golang-x-mod-dev) >&2 || true; \
	fi; \
	if ! command -v go >/dev/null 2>&1 || [ ! -d $(GO_MOD_SRC) ]; then \
		if [ "$$CI" = true ]; then echo "Go or $(GO_MOD_SRC) not found: CI needs them for the tlog interop test" >&2; exit 1; fi; \
		echo "Go or $(GO_MOD_SRC) not found: the tlog interop test will be skipped" >&2; \
	fi

npm: $(NPM_STAMPS)

# Most tests wait on the real processes they start, so 4 workers keep 2 cores busy; each worker has
# its own PostgreSQL server (a session fixture). Tests that hold a time bound of the spec (`serial`)
# run afterwards, alone, so the others' load cannot make them miss it.
# --durations lists the 25 slowest, so the suite's 20-minute budget is watched where it is spent.
test: lint docs npm node22 postgres-binaries chromium go-toolchain
	$(BIN)/pytest -n 4 --dist worksteal -m "not serial" --durations=25
	$(BIN)/pytest -m serial

bench: $(STAMP) tests/switchboard/npm/node_modules/.installed bench/npm/node_modules/.installed
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(NPM_DIRS:%=%/node_modules) $(NODE22_DIR)/node_modules
