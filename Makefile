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

# The switchboard's interop tests run the reference server-everything (npm, pinned by the lock file).
NPM_SWITCHBOARD := tests/switchboard/npm
NPM_SWITCHBOARD_STAMP := $(NPM_SWITCHBOARD)/node_modules/.installed

.PHONY: run test lint bench clean npm-switchboard

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

$(NPM_SWITCHBOARD_STAMP): $(NPM_SWITCHBOARD)/package.json $(NPM_SWITCHBOARD)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(NPM_SWITCHBOARD) && npm ci --no-audit --no-fund && touch node_modules/.installed; \
	elif [ "$$CI" = "true" ]; then \
		echo "npm is required in CI to install $(NPM_SWITCHBOARD)" >&2; exit 1; \
	else \
		echo "npm not found: the switchboard's server-everything tests will be skipped" >&2; \
	fi

npm-switchboard: $(NPM_SWITCHBOARD_STAMP)

# The interop tests drive Colibri with the MCP clients people use (TypeScript SDK, MCP Inspector):
# pinned npm packages, installed again only when the lock file changes. Under CI a missing npm or a
# failed install stops the run; elsewhere the interop tests are skipped with the reason.
INTEROP := tests/interop
INTEROP_STAMP := $(INTEROP)/node_modules/.installed

$(INTEROP_STAMP): $(INTEROP)/package.json $(INTEROP)/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$CI" = true ]; then echo "npm not found: CI needs Node.js 20+ and npm for $(INTEROP)" >&2; exit 1; fi; \
		echo "npm not found: the interop tests ($(INTEROP)) will be skipped" >&2; \
	else \
		echo "installing the pinned npm packages of $(INTEROP) (npm ci)" >&2; \
		if (cd $(INTEROP) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2); then touch $@; \
		elif [ "$$CI" = true ]; then echo "npm ci failed in $(INTEROP)" >&2; exit 1; \
		else echo "npm ci failed: the interop tests will be skipped" >&2; fi; \
	fi

test: lint npm-switchboard $(INTEROP_STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(INTEROP)/node_modules
