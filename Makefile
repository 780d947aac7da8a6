# Two commands: `make run` sets up and serves; `make test` sets up and proves it works.
# The recipes that `make run` depends on are silent on stdout (setup output goes to stderr),
# so `make run` can itself be the command an MCP client launches: stdout is the JSON-RPC wire.
# No "Entering directory" lines on stdout for `make -C DIR run` (make >= 4.4 honours this setting for
# the top level too; make 4.3 prints that line before reading any makefile: use `make -s -C DIR run`).
MAKEFLAGS += --no-print-directory
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

test: lint npm-switchboard
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
