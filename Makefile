# Every target installs what it needs into .venv first; nothing is assumed to be installed by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: install demo test test-unit test-integration test-rebalance bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[worker,embedded,test,bench]"
	touch $@

install: $(INSTALLED)

demo: $(INSTALLED)
	$(BIN)/turnstream demo

test: $(INSTALLED)
	$(BIN)/pytest

test-unit: $(INSTALLED)
	$(BIN)/pytest -m unit

test-integration: $(INSTALLED)
	$(BIN)/pytest -m integration

test-rebalance: $(INSTALLED)
	TURNSTREAM_TEST_REBALANCE=1 $(BIN)/pytest -m rebalance

bench: $(INSTALLED)
	$(BIN)/turnstream bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache build *.egg-info
