# mlxref: two-command setup.  `make demo` or `make test` from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# A student copy (`mlxref assignment make` writes its ASSIGNMENT.md) installs only what the
# assignments need: SymPy, graphviz, pytest, pytest-xdist and Hypothesis (the `course`
# extra), without compiling every module up front (pip's --no-compile: Python caches what
# it imports), so its venv is 70 MB (91 MB once the tests ran); its `make test` needs neither Chromium nor the
# docs (those tests skip with one line).
# The reference installs the `docs` extra too (Sphinx, MyST, the Sphinx Book Theme, jupytext,
# nbclient, ipykernel): `make docs` builds the manual and tests/manual/test_manual.py checks it.
# Real MLX (the `metal` extra) only where it ships a wheel:
# Linux x86_64 (CPU build) and macOS arm64 (Metal). mpi4py (the `mpi` extra) on Linux x86_64,
# where it ships a wheel (it needs no MPI to install); `make mpi` installs Open MPI itself.
UNAME_S := $(shell uname -s)
UNAME_M := $(shell uname -m)
ifneq ($(wildcard ASSIGNMENT.md),)
STUDENT := 1
EXTRAS := course
PIP_FLAGS := --no-compile
else ifeq ($(UNAME_S)-$(UNAME_M),Linux-x86_64)
EXTRAS := dev,docs,metal,mpi
else ifeq ($(UNAME_S)-$(UNAME_M),Darwin-arm64)
EXTRAS := dev,docs,metal
else
EXTRAS := dev,docs
endif

.PHONY: venv dot chromium try-chromium bwrap mpi demo diagrams test task docs bench clean

venv: $(STAMP)

$(VPY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the packaging files change.
$(STAMP): setup.cfg pyproject.toml | $(VPY)
	$(VPY) -m pip install -q $(PIP_FLAGS) -e '.[$(EXTRAS)]'
	touch $@

# $(call install,CHECK,APT PACKAGE,BREW ARGUMENTS,WHAT TO INSTALL): when CHECK fails,
# install the package with apt-get (as root, or with sudo) or Homebrew and CHECK again;
# where neither can, stop with one line saying what to install.
define install
	@if $(1); then exit 0; fi; \
	msg="mlxref: please install $(4)"; \
	if command -v apt-get >/dev/null 2>&1; then \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
	  elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	  else echo "$$msg" >&2; exit 1; fi; \
	  echo "mlxref: installing $(2) with apt-get"; \
	  $$sudo apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	elif [ "$$(uname -s)" = Darwin ] && command -v brew >/dev/null 2>&1; then \
	  brew install $(3); \
	else echo "$$msg" >&2; exit 1; fi; \
	if $(1); then exit 0; fi; echo "$$msg" >&2; exit 1
endef

# Graphviz's `dot` binary (the Python `graphviz` package only drives it).
dot:
	$(call install,command -v dot >/dev/null 2>&1,graphviz,graphviz,Graphviz (the 'dot' binary): https://graphviz.org/download/)

# Headless Chromium: tests/manual/test_manual.py opens three pages of the manual in it, and
# tests/viz/test_stepper.py the HTML stepper. The names are those tests/support.py's
# CHROMIUMS looks for (on macOS, the apps'); one counts only if it runs (`--version`):
# Ubuntu's apt package is a stub that needs snap, which WSL and containers lack.
# `make chromium` fails where it cannot install one; `make test` (try-chromium) goes on
# without, and the browser tests skip with one line. CI (.ci/run) installs Debian's
# chromium and sets MLXREF_NEED_CHROMIUM=1: there a missing Chromium fails those tests.
CHROMIUM_NAMES := chromium chromium-browser google-chrome google-chrome-stable \
  /Applications/Chromium.app/Contents/MacOS/Chromium \
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"
HAS_CHROMIUM = for n in $(CHROMIUM_NAMES); do command -v "$$n" >/dev/null 2>&1 && \
  "$$n" --version >/dev/null 2>&1 && exit 0; done; false
chromium:
	$(call install,$(HAS_CHROMIUM),chromium,--cask chromium,Chromium or Google Chrome (make test opens the manual in it): https://www.chromium.org/getting-involved/download-chromium/)

# bubblewrap: `mlxref assignment grade` runs graded code in its namespaces
# (mlxref/course/sandbox.py); tests/course/test_isolation.py needs it and skips without
# it. Linux only, and not fatal: where it cannot be installed, grading says in one line
# that it runs without OS isolation, and `--exam` refuses to grade.
bwrap:
ifeq ($(UNAME_S),Linux)
	-$(call install,command -v bwrap >/dev/null 2>&1,bubblewrap,,bubblewrap (the grader's sandbox; its tests skip without it): apt-get install bubblewrap)
endif

# Open MPI: mx.distributed's MPI back-end runs under its mpirun (mlxref/core/distributed/mpi.py,
# through mpi4py), and real MLX loads its libmpi.so (libopenmpi-dev) to compare with.
# Not fatal: where it cannot be installed, tests/core/distributed/test_mpi.py skips with one line.
mpi:
	-$(call install,command -v mpirun >/dev/null 2>&1,openmpi-bin libopenmpi-dev,open-mpi,Open MPI (mpirun; the MPI tests skip without it): apt-get install openmpi-bin libopenmpi-dev)

try-chromium:
	@$(MAKE) --no-print-directory chromium || \
	  echo "mlxref: no Chromium here: make test skips the browser tests (CI runs them)" >&2

demo: venv dot
	$(VPY) -m mlxref demo --out diagrams

diagrams: venv dot
	$(VPY) -m mlxref diagrams -o diagrams

# --dist worksteal: the course tests grade in child processes of several seconds each;
# a worker that runs out of tests takes some of the other's, so both cores stay busy to
# the end (4 min on 2 cores, where load-balancing by file took almost 6).
ifdef STUDENT
test: venv dot
else ifeq ($(UNAME_S),Linux)
test: venv dot try-chromium bwrap mpi
else
test: venv dot try-chromium bwrap
endif
	$(VPY) -m pytest -p no:cacheprovider -n auto --dist worksteal

# One task's tests, the loop while writing it: `make task T=2.1` (a few seconds: one file
# is collected, not the whole suite).
task: venv
	@test -n "$(T)" || { echo "mlxref: say which task: make task T=2.1" >&2; exit 2; }
	$(VPY) -m pytest -p no:cacheprovider tests/course/test_tasks.py -m task$(subst .,_,$(T))

# The manual: build/docs/index.html (static HTML, offline) and the tutorials as
# executed notebooks in build/notebooks/, rendered into the manual (mlxref/manual/__init__.py).
docs: venv dot
	$(VPY) -m mlxref.manual --out build

bench: venv
	@if test -d benchmarks; then $(VPY) -m benchmarks; else echo "no benchmarks yet"; fi

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
