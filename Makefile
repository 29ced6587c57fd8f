# qizhong — the two commands of the quick start bootstrap their own virtualenv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# The suite mostly waits (brokers, timers, browsers): two processes, each test file whole in one
# of them (--dist loadfile keeps a file's module fixtures together). PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 2
PYTEST_PAR := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)
DEMO_ARGS ?=

.PHONY: demo test lint typecheck unit bench package-check clean pi-check pi-roots

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/qizhong demo $(DEMO_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check clock_service

typecheck: $(STAMP)
	$(BIN)/mypy

# tools/bring_up.py: apt installs what the tests need and the machine lacks (as root), a
# PostgreSQL for the run (the running one, the machine's cluster started, or a private one
# removed after), then pytest. Under CI=true a test skipped for a missing part fails.
unit: $(STAMP)
	$(PYTHON) tools/bring_up.py -- $(BIN)/pytest $(PYTEST_PAR) $(PYTEST_ARGS)

test: lint typecheck unit

# The wheel as the technician installs it: built, installed into a fresh venv outside the
# tree, its demo pages loaded in chromium, its station run on PostgreSQL (docs/deploy.md).
package-check: $(STAMP)
	$(PYTHON) tools/bring_up.py -- $(BIN)/python tools/package_check.py

bench: $(STAMP)
	@for b in benchmarks/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b --quick || exit 1; done

# The Pi in a box (docs/deploy.md): the bundle installed and run in emulated aarch64 and
# armv7l bookworm roots (cached in var/pi-roots/). Needs root, debootstrap, proot,
# qemu-user-static, and the Debian mirror and PyPI once. CPU heavy: niced.
PI_ARGS ?=
pi-roots: $(STAMP)
	nice -n 10 $(BIN)/python -m qizhong.deploy.piroot

pi-check: $(STAMP)
	@start=$$(date +%s); \
	nice -n 10 $(BIN)/python -m qizhong.deploy.piroot \
	  && nice -n 10 $(BIN)/pytest -m pi tests/pi -p no:cacheprovider $(PI_ARGS); rc=$$?; \
	echo "pi-check: exit $$rc in $$(( $$(date +%s) - start )) s (roots cached in var/pi-roots/)"; \
	exit $$rc

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
