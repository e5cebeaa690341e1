PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv proto lint test test-fast test-py demo demo-down bench clean

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

# The unit tests and an end-to-end smoke on another Python, in its own venv:
# `make test-py PY=3.12` (CI runs 3.12 and 3.13 beside `make test` on 3.11).
PY ?= 3.12
PYENV_ROOT ?= $(HOME)/.pyenv
SMOKE := tests/integration/test_h2grpc.py tests/integration/test_h2grpc_tls.py \
	tests/e2e/test_tls.py::test_jobs_steps_and_queries_work_over_tls \
	tests/e2e/test_commands.py::test_squeue_shows_running_and_pending_jobs_with_reasons \
	tests/e2e/test_batch_jobs.py::test_two_node_batch_environment_matches_reference \
	tests/e2e/test_batch_jobs.py::test_exit_codes_and_signals_map_to_states \
	tests/e2e/test_srun.py::test_a_bare_srun_gives_its_tasks_the_variables_slurms_gives_them \
	tests/e2e/test_srun.py::test_srun_exit_status_and_messages \
	tests/e2e/test_srun.py::test_srun_outside_an_allocation_waits_for_one_and_releases_it \
	tests/e2e/test_srun.py::test_salloc_runs_srun_in_its_allocation

# The generated stubs' test needs grpcio-tools as pyproject.toml pins it.
STUB_TOOLS := $(shell sed -n 's/^ *"\(grpcio-tools==[^"]*\)",$$/\1/p' pyproject.toml)

test-py: .venv-$(PY)/.installed
	.venv-$(PY)/bin/pytest -q tests/unit $(SMOKE)

# The interpreter is pyenv's newest $(PY).x, else python$(PY) on PATH; none is an error,
# never a skip. Only what those tests run is installed (the simulator's plot among them),
# not the linters, the job-submission tools or torch.
.venv-%/.installed: pyproject.toml
	@python=$$(ls -d $(PYENV_ROOT)/versions/$*.*/bin/python$* 2>/dev/null | sort -V | tail -n 1); \
	python=$${python:-$$(command -v python$* || true)}; \
	if [ -z "$$python" ]; then \
	    echo "ERROR: no Python $* (neither $(PYENV_ROOT)/versions/$*.*/bin/python$* nor" \
	        "python$* on PATH): its tests cannot run" >&2; \
	    exit 1; \
	fi; \
	echo "$$python -m venv .venv-$*"; $$python -m venv .venv-$*
	.venv-$*/bin/pip install --quiet --upgrade pip
	.venv-$*/bin/pip install --quiet -e '.[sim]' '$(STUB_TOOLS)' pytest pytest-timeout hypothesis pyyaml
	.venv-$*/bin/python -m compileall -q minislurm cli
	touch $@

# Start a local two-node, 8-GPU-per-node cluster and run the example jobs.
demo: $(STAMP)
	$(BIN)/python examples/demo.py

demo-down: $(STAMP)
	$(BIN)/minislurm cluster down

bench: $(STAMP)
	$(BIN)/python bench/bench_submit.py
	$(BIN)/python bench/bench_srun.py
	$(BIN)/python bench/bench_array.py
	$(BIN)/python bench/bench_startup.py

clean:
	rm -rf $(VENV) .venv-3.* .mypy_cache .ruff_cache .pytest_cache
