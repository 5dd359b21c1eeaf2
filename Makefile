# Portico: `make demo` runs the server on its embedded database with the Chinook sample;
# `make test` builds once and runs every test against that build.

SWIFT ?= swift
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORTICO_DEBUG := $(CURDIR)/.build/debug/portico
DEMO_DIR ?= ./portico-data

.PHONY: all build build-deps release test unit e2e lint fuzz fuzz-short soak demo bench clean help test-deps

all: build

help:
	@echo "make demo   build Portico and run it with the Chinook demo data"
	@echo "make test   check formatting, build once, then run the Swift unit tests and the end-to-end tests"
	@echo "make lint   swift format lint --strict over Sources and Tests (.swift-format); swift format -i -r Sources Tests fixes it"
	@echo "make release the optimised binary to deploy: .build/release/portico"
	@echo "make bench  release build; Portico against FastMCP and MCP Toolbox under the same loads (see bench/); not in make test: it needs a quiet machine, and fails when instructions per call rise 3% over bench/cost-baseline.json"
	@echo "make fuzz   the libFuzzer targets, ten minutes each (FUZZ_SECONDS=N to change)"
	@echo "make soak   the load tests for a minute each against the release build, with the latency target"

# Debian packages the build needs, installed when missing: Cairo for chart images, with fonts
# for Latin, Chinese and Korean labels; MariaDB Connector/C for MySQL and MariaDB datasources.
BUILD_PACKAGES := libcairo2-dev fonts-dejavu-core fonts-wqy-microhei libmariadb-dev
LEXICON := Sources/CLexicon/wordnet.bin
build-deps: $(LEXICON)
	@$(call install_missing,$(BUILD_PACKAGES),the build)

# The built-in engine's English: WordNet 3.0 (Debian's wordnet-base) compiled into the table the
# binary embeds (Sources/CLexicon); made again when the script changes, never kept in git.
$(LEXICON): scripts/make_lexicon.py
	@$(call install_missing,wordnet-base,the English lexicon)
	$(PYTHON) scripts/make_lexicon.py /usr/share/wordnet $@

build: build-deps
	$(SWIFT) build --build-tests

# The binary to deploy (and the one make soak and make bench measure). Exclusive access to memory
# is enforced at compile time in every build, and at run time in the debug build that every test
# runs on; the release build does not check it again at run time (what Xcode calls "debug only").
# Those checks, nine in ten of them in NIO's channel code, were 5% of a tools/call. Swift's runtime
# and Foundation are linked into the binary: it runs on a host without Swift, and starts with 5 MiB
# less resident (none of the shared libraries' relocations and pages around them).
release: build-deps
	$(SWIFT) build -c release --product portico -Xswiftc -enforce-exclusivity=unchecked --static-swift-stdlib

$(VENV)/.installed: Tests/EndToEnd/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r Tests/EndToEnd/requirements.txt
	touch $@

# Debian packages the tests use, installed when missing: chromium for the browser tests, wrk
# for the load tests, PostgreSQL for the datasource tests and as Portico's own database, MariaDB
# for the MySQL datasource tests, nginx to balance replicas.
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then echo "sudo -n"; fi)
TEST_PACKAGES := chromium fonts-dejavu-core wrk postgresql mariadb-server nginx
test-deps:
	@$(call install_missing,$(TEST_PACKAGES),the tests)

# $(call install_missing,PACKAGES,PURPOSE): apt-get install those of PACKAGES that are missing.
define install_missing
missing=""; for package in $(1); do \
  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; done; \
if [ -n "$$missing" ]; then \
  echo "installing$$missing (Debian) for $(2)"; \
  $(SUDO) apt-get install -y --no-install-recommends $$missing >/dev/null 2>&1 || \
  { $(SUDO) apt-get update >/dev/null && $(SUDO) apt-get install -y --no-install-recommends $$missing >/dev/null; }; \
fi
endef

unit: build
	@[ -n "$$PORTICO_TEST_POSTGRES_URL" ] || echo "PORTICO_TEST_POSTGRES_URL is not set: the PostgreSQL half of the store tests is skipped (make test runs it)"
	@[ -n "$$PORTICO_TEST_MYSQL_WRITER_URL" ] || echo "PORTICO_TEST_MYSQL_WRITER_URL is not set: the MySQL source tests are skipped (make test runs them)"
	$(SWIFT) test --skip-build

# Formatting is part of the tests: the repository's .swift-format, every warning an error.
lint:
	$(SWIFT) format lint --strict --configuration .swift-format --recursive Sources Tests

e2e: build $(VENV)/.installed test-deps
	PORTICO_BIN=$(PORTICO_DEBUG) $(PY) -m pytest -q -p no:cacheprovider Tests/EndToEnd

# A short run of every fuzz target (about a minute, after their own instrumented build).
fuzz-short: build-deps
	FUZZ_SECONDS=12 SWIFT=$(SWIFT) bash Fuzz/run.sh

fuzz: build-deps
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} SWIFT=$(SWIFT) bash Fuzz/run.sh

# The tests run with a throwaway PostgreSQL cluster (Tests/pg_cluster.sh) and a MariaDB server
# (Tests/mysql_server.sh), stopped however they end: the Swift tests (the store tests on both
# databases, the MySQL source's second layer), then the end-to-end suite twice, with Portico's own
# data in its embedded SQLite file and in PostgreSQL.
test: lint build $(VENV)/.installed test-deps
	@cluster=$$(mktemp -d) && mariadb=$$(mktemp -d) && bash Tests/pg_cluster.sh start $$cluster && \
	{ bash Tests/mysql_server.sh start $$mariadb || { bash Tests/pg_cluster.sh stop $$cluster; exit 1; }; } && \
	export PORTICO_TEST_POSTGRES_URL=$$(cat $$cluster/url) PORTICO_TEST_MYSQL_WRITER_URL=$$(cat $$mariadb/writer_url) \
	  PORTICO_TEST_MYSQL_FILE_URL=$$(cat $$mariadb/file_url) && \
	{ $(SWIFT) test --skip-build && \
	  PORTICO_BIN=$(PORTICO_DEBUG) $(PY) -m pytest -q -p no:cacheprovider Tests/EndToEnd && \
	  echo "the end-to-end suite again, with Portico's own data on PostgreSQL" && \
	  PORTICO_TEST_BACKEND=postgres PORTICO_BIN=$(PORTICO_DEBUG) $(PY) -m pytest -q -p no:cacheprovider Tests/EndToEnd; status=$$?; \
	  bash Tests/mysql_server.sh stop $$mariadb; bash Tests/pg_cluster.sh stop $$cluster; exit $$status; }
	$(MAKE) fuzz-short

# The load tests for a minute each against the release build, held to the release targets.
soak: release $(VENV)/.installed test-deps
	PORTICO_BIN=$(CURDIR)/.build/release/portico PORTICO_LOAD_SECONDS=60 PORTICO_LOAD_P99_MS=250 \
	  $(PY) -m pytest -q -s -p no:cacheprovider Tests/EndToEnd/test_load.py

demo: build-deps
	$(SWIFT) build --product portico
	$(PORTICO_DEBUG) serve --demo --data-dir $(DEMO_DIR)

# Not part of make test (it takes a quiet machine and about half an hour): bench/report.py fails it
# when instructions per call rise more than 3% over bench/cost-baseline.json. (Heap allocations per
# call are gated in make test: Tests/EndToEnd/test_allocations.py.)
bench: build-deps
	bash bench/run.sh

clean:
	rm -rf .build $(VENV)
