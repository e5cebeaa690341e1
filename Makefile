PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per install, so each target installs only what it runs and any
# order of targets leaves a venv that serves them all.
VENV_STAMP := $(VENV)/.created
RUN_STAMP := $(VENV)/.installed-runtime
DDP_STAMP := $(VENV)/.installed-ddp
STAMP := $(VENV)/.installed-dev
# Commands and stepd start ~15 ms faster with bytecode cached (PYTHONDONTWRITEBYTECODE may be set).
COMPILE := $(BIN)/python -m compileall -q minislurm cli nodeagent

.PHONY: venv proto lint test test-fast test-py test-cgroup2 demo demo-ddp demo-down bench clean

$(VENV_STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	touch $@

# minislurm in development mode with its runtime dependencies only (the demo's).
$(RUN_STAMP): pyproject.toml $(VENV_STAMP)
	$(BIN)/pip install --quiet -e .
	$(COMPILE)
	touch $@

# Everything the suite needs: the dev extra (test, lint, tools, ddp, sim).
$(STAMP): pyproject.toml $(VENV_STAMP)
	$(BIN)/pip install --quiet -e '.[dev]'
	$(COMPILE)
	touch $@

# The runtime and what the training examples run (the ddp extra: CPU torch, numpy).
$(DDP_STAMP): pyproject.toml $(RUN_STAMP)
	$(BIN)/pip install --quiet -e '.[ddp]'
	touch $@

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

test-py: .venv-$(PY)/.installed
	.venv-$(PY)/bin/pytest -q tests/unit $(SMOKE)

# The interpreter is pyenv's newest $(PY).x, else python$(PY) on PATH; none is an error,
# never a skip. Only what those tests run is installed (the test and sim extras), not the
# linters, the job-submission tools or torch.
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
	.venv-$*/bin/pip install --quiet -e '.[test,sim]'
	.venv-$*/bin/python -m compileall -q minislurm cli nodeagent
	touch $@

# Start a local two-node, 8-GPU-per-node cluster and run the example jobs.
demo: $(RUN_STAMP)
	$(BIN)/python examples/demo.py

# The same cluster, running examples/ddp_job.sh: 16 ranks of torch.distributed, one per GPU.
demo-ddp: $(DDP_STAMP)
	$(BIN)/python examples/demo.py --ddp

demo-down: $(RUN_STAMP)
	$(BIN)/minislurm cluster down

# The cgroup tests where the only cgroup tree is v2, in a virtual machine (root, by hand:
# needs Debian's qemu-system-x86, linux-image-amd64 and busybox-static).
test-cgroup2: $(STAMP)
	scripts/cgroup2_vm.sh 'PYTHONDONTWRITEBYTECODE=1 $(BIN)/pytest -q -rs -p no:cacheprovider \
		tests/e2e/test_cgroup_limits.py tests/unit/test_cgroup_tree.py tests/unit/test_devicebpf.py'

bench: $(STAMP)
	$(BIN)/python bench/bench_submit.py
	$(BIN)/python bench/bench_srun.py
	$(BIN)/python bench/bench_array.py
	$(BIN)/python bench/bench_startup.py

clean:
	rm -rf $(VENV) .venv-3.* .mypy_cache .ruff_cache .pytest_cache
