# Quick start: `make demo` and `make test` (both set up .venv/ first if needed).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.directme-installed

.PHONY: setup demo lint test test-fast clean-venv

$(STAMP): pyproject.toml requirements/stack.txt requirements/constraints-cpu.txt scripts/setup_env.sh
	bash scripts/setup_env.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m directme demo

# the import layers and cycles of pyproject.toml's [tool.importlinter] (docs/architecture.md, Layers)
lint: $(STAMP)
	$(VENV)/bin/lint-imports

test: lint
	$(PY) -m pytest -q

test-fast: lint
	$(PY) -m pytest -q -m "not slow"

clean-venv:
	rm -rf $(VENV)
