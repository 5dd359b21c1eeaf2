# Portico: `make demo` runs the server on its embedded database with the Chinook sample;
# `make test` builds once and runs every test against that build.

SWIFT ?= swift
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORTICO_DEBUG := $(CURDIR)/.build/debug/portico
DEMO_DIR ?= ./portico-data

.PHONY: all build test unit e2e demo bench clean help browser-deps

all: build

help:
	@echo "make demo   build Portico and run it with the Chinook demo data"
	@echo "make test   build once, then run the Swift unit tests and the end-to-end tests"
	@echo "make bench  release build and load tests against Portico and FastMCP (see bench/)"

build:
	$(SWIFT) build --build-tests

$(VENV)/.installed: Tests/EndToEnd/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r Tests/EndToEnd/requirements.txt
	touch $@

# The browser tests drive Debian's chromium; install it when it is missing.
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then echo "sudo -n"; fi)
browser-deps:
	@command -v chromium >/dev/null || { \
	  echo "installing chromium (Debian) for the browser tests"; \
	  $(SUDO) apt-get install -y --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update >/dev/null && $(SUDO) apt-get install -y --no-install-recommends chromium fonts-dejavu-core >/dev/null; }; }

unit: build
	$(SWIFT) test --skip-build

e2e: build $(VENV)/.installed browser-deps
	PORTICO_BIN=$(PORTICO_DEBUG) $(PY) -m pytest -q -p no:cacheprovider Tests/EndToEnd

test: build $(VENV)/.installed browser-deps
	$(SWIFT) test --skip-build
	PORTICO_BIN=$(PORTICO_DEBUG) $(PY) -m pytest -q -p no:cacheprovider Tests/EndToEnd

demo:
	$(SWIFT) build --product portico
	$(PORTICO_DEBUG) serve --demo --data-dir $(DEMO_DIR)

bench:
	bash bench/run.sh

clean:
	rm -rf .build $(VENV)
