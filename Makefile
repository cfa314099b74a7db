# Quick start: `make demo` and `make test` (both set up .venv/ first if needed).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.directme-installed

.PHONY: setup demo test test-fast clean-venv

$(STAMP): pyproject.toml requirements/stack.txt requirements/constraints-cpu.txt scripts/setup_env.sh
	bash scripts/setup_env.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m directme demo

test: $(STAMP)
	$(PY) -m pytest -q

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

clean-venv:
	rm -rf $(VENV)
