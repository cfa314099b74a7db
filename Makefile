# Quick start: `make demo` and `make test` (both set up .venv/ first if needed).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.directme-installed

.PHONY: setup demo lint test test-fast lmms-sim clean-venv

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

# lmms-eval with the directme model on simulator episodes, scored by VSI-Bench's own code, offline
# (docs/benchmarks.md, In lmms-eval); `make test` runs a short version (tests/test_bench_lmms.py)
LMMS_OUT ?= out/lmms
lmms-sim: $(STAMP)
	$(PY) -m directme.bench.lmms.simtask --out $(LMMS_OUT)/task --seeds 0 1 2 --minutes 10
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(PY) -m directme.bench.lmms --model directme \
	  --model_args perception=oracle,cache_dir=$(LMMS_OUT)/memories --tasks directme_sim_vsibench \
	  --include_path $(LMMS_OUT)/task --output_path $(LMMS_OUT)

clean-venv:
	rm -rf $(VENV)
