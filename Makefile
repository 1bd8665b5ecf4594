# mlxref: two-command setup.  `make demo` or `make test` from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Real MLX (the `metal` extra) only where it ships a wheel:
# Linux x86_64 (CPU build) and macOS arm64 (Metal).
UNAME_S := $(shell uname -s)
UNAME_M := $(shell uname -m)
ifeq ($(UNAME_S)-$(UNAME_M),Linux-x86_64)
EXTRAS := dev,metal
else ifeq ($(UNAME_S)-$(UNAME_M),Darwin-arm64)
EXTRAS := dev,metal
else
EXTRAS := dev
endif

.PHONY: venv dot demo diagrams test bench clean

venv: $(STAMP)

$(VPY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the packaging files change.
$(STAMP): setup.cfg pyproject.toml | $(VPY)
	$(VPY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

# Graphviz's `dot` binary (the Python `graphviz` package only drives it).
dot:
	@if command -v dot >/dev/null 2>&1; then exit 0; fi; \
	msg="mlxref: please install Graphviz (the 'dot' binary): https://graphviz.org/download/"; \
	if command -v apt-get >/dev/null 2>&1; then \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
	  elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	  else echo "$$msg" >&2; exit 1; fi; \
	  echo "mlxref: installing Graphviz with apt-get"; \
	  $$sudo apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; \
	elif [ "$$(uname -s)" = Darwin ] && command -v brew >/dev/null 2>&1; then \
	  brew install graphviz; \
	else echo "$$msg" >&2; exit 1; fi; \
	command -v dot >/dev/null 2>&1 || { echo "$$msg" >&2; exit 1; }

demo: venv dot
	$(VPY) -m mlxref demo --out diagrams

diagrams: venv dot
	$(VPY) -m mlxref diagrams -o diagrams

test: venv dot
	$(VPY) -m pytest -p no:cacheprovider -n auto

bench: venv
	@if test -d benchmarks; then $(VPY) -m benchmarks; else echo "no benchmarks yet"; fi

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
