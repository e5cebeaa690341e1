PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv proto lint test test-fast demo demo-down bench clean

# A virtual environment with minislurm installed in development mode.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	# Commands start ~15 ms faster with bytecode cached (PYTHONDONTWRITEBYTECODE may be set).
	$(BIN)/python -m compileall -q minislurm cli
	touch $(STAMP)

venv: $(STAMP)

# Regenerate the gRPC/protobuf stubs in minislurm/wire/rpc/ (commit the result).
proto: $(STAMP)
	$(BIN)/python scripts/gen_proto.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The whole suite: lint, unit, integration and end-to-end tests.
test: lint
	$(BIN)/pytest -q

test-fast: $(STAMP)
	$(BIN)/pytest -q -m "not slow"

# Start a local two-node, 8-GPU-per-node cluster and run the example jobs.
demo: $(STAMP)
	$(BIN)/python examples/demo.py

demo-down: $(STAMP)
	$(BIN)/minislurm cluster down

bench: $(STAMP)
	$(BIN)/python bench/bench_submit.py
	$(BIN)/python bench/bench_srun.py
	$(BIN)/python bench/bench_array.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
