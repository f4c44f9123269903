# Every target installs what it needs into .venv first; nothing is assumed to be installed by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: install browser demo test test-unit test-integration test-rebalance bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[worker,embedded,test,bench]"
	touch $@

install: $(INSTALLED)

# The inspector's browser test drives Debian's Chromium; as root the packages are installed here, otherwise
# the test fails saying how to install them.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing chromium and chromium-driver for the browser test"; \
	    apt-get update -qq >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; \
	  else \
	    echo "chromium/chromedriver missing and not root: the browser test will fail (sudo apt-get install chromium chromium-driver)"; \
	  fi; \
	fi

demo: $(INSTALLED)
	$(BIN)/turnstream demo

test: $(INSTALLED) browser
	$(BIN)/pytest

test-unit: $(INSTALLED)
	$(BIN)/pytest -m unit

test-integration: $(INSTALLED) browser
	$(BIN)/pytest -m integration

test-rebalance: $(INSTALLED)
	$(BIN)/pytest -m rebalance

bench: $(INSTALLED)
	$(BIN)/turnstream bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache build *.egg-info
