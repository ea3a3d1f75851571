# Atelier — the commands a newcomer needs: `make run`, `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Python keeps compiled modules (and pytest its rewritten test modules) here even where the machine's
# environment says not to: every pytest worker, manage.py, daphne and Celery process the tests start
# would otherwise compile the project and its libraries from source again (seconds each).
unexport PYTHONDONTWRITEBYTECODE
# System parts, installed and started by platform/dev/install-system.sh (one place).
RUN_SYSTEM := redis docker
TEST_SYSTEM := postgres redis docker media browser
# `make test` installs the services first, and the tools the tests use (ffmpeg, Chromium) while the sandbox
# image builds, the linters run and mypy checks: what the tests need before they start (TESTS_NEED).
TEST_SERVICES := postgres redis docker
TEST_TOOLS := media browser
FAST_TEST_SYSTEM := postgres redis media
TEST_DATABASE_URL ?= postgres://atelier:atelier@127.0.0.1:5432/atelier
# `make test` runs the fast tests beside the rest, so their databases are named apart (test_atelier_fast_gw0, ...).
FAST_TEST_DATABASE_URL ?= postgres://atelier:atelier@127.0.0.1:5432/atelier_fast
# The tests that start no Docker engine, stack or browser (markers from their fixtures:
# tests/support/markers.py), in parallel: pytest-xdist workers, each with a database and a Redis of its own.
FAST_TESTS := not docker and not stack and not browser
TEST_WORKERS ?= auto

.PHONY: help run test test-fast checks images lint typecheck pytest pytest-fast pytest-rest pytest-rest-without-sandboxes pytest-rest-with-sandboxes pytest-alone venv system-run system-test system-test-services system-test-tools system-test-fast sandbox-image platform-image bench bench-reference clean

help:
	@echo "make run    - install what is missing, then serve Atelier at http://localhost:8000"
	@echo "make test   - install what is missing, then ruff, mypy and pytest (PostgreSQL, Redis, gVisor, Chromium)"
	@echo "make test-fast - the inner loop: the tests that need only PostgreSQL and Redis, in parallel"
	@echo "make bench  - run the benchmarks in bench/"
	@echo "make platform-image - the production images for docker-compose.yml (platform/README.md)"
	@echo "make lint   - ruff, and the import contracts in pyproject.toml (which way imports may run)"

# uv installs the project into the virtualenv: the same packages pip resolves, in seconds instead of a
# minute on a fresh machine. pip stays in the virtualenv: the image builds download their wheels with it.
INSTALLER := $(shell grep -v "^#" platform/installer.txt)
PIP := pip==26.3
venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet $(INSTALLER)
	$(VENV)/bin/uv pip install --quiet --python $(PY) $(PIP) -e ".[dev]"
	@touch $@

system-run:
	bash platform/dev/install-system.sh $(RUN_SYSTEM)

system-test:
	bash platform/dev/install-system.sh $(TEST_SYSTEM)

system-test-services:
	bash platform/dev/install-system.sh $(TEST_SERVICES)

system-test-tools:
	bash platform/dev/install-system.sh $(TEST_TOOLS)

system-test-fast:
	bash platform/dev/install-system.sh $(FAST_TEST_SYSTEM)

# The sandbox image is tagged by a hash of its inputs: a no-op when up to date.
sandbox-image: venv
	DEBUG=true $(PY) manage.py build_sandbox_image --offline

# The production images (docker-compose.yml, platform/README.md), cached by a hash of their inputs too.
platform-image: venv sandbox-image
	DEBUG=true $(PY) manage.py build_platform_image --offline

run: venv system-run sandbox-image
	bash platform/dev/run.sh

# `make test` runs the checks as background work (CHECKS_AS), as it does the fast tests: nothing waits
# on them until the end, while the sandbox image builds beside them and the rest waits for it.
lint: venv
	$(CHECKS_AS) $(VENV)/bin/ruff check .
	$(CHECKS_AS) $(VENV)/bin/lint-imports --no-cache

# mypy's cache outside the checkout: it is checked against the files' contents, so any checkout may use
# it, and a fresh clone type-checks in seconds instead of about 40.
MYPY_CACHE_DIR ?= $(HOME)/.cache/atelier-mypy

typecheck: venv
	MYPY_CACHE_DIR=$(MYPY_CACHE_DIR) $(CHECKS_AS) $(VENV)/bin/mypy .

pytest: venv
	DATABASE_URL=$(TEST_DATABASE_URL) $(VENV)/bin/pytest $(PYTEST_ARGS)

# The suite in parts, each printing its 30 slowest tests: the fast tests in parallel; beside them those that
# start gVisor, a stack or Chromium, two at a time (each worker with a stack, a database and ids of its own:
# tests/support/fixtures/workers.py; tests sharing a slow session fixture on one worker): first the ones that
# need no sandbox, while the sandbox image builds, then the ones that start sandboxes; last the few that
# measure time on this machine (marked `alone`), one at a time.
REST_WORKERS ?= 2
REST_TESTS := not ($(FAST_TESTS)) and not alone
# Where the tests marked `alone` are: the marker is written on them, never added by a hook, so their run
# collects these files only, not the whole suite (seconds of CPU) to deselect all but a few.
ALONE_TEST_FILES = $(shell grep -rlE --include='test_*.py' 'mark\.alone' tests)
# `make test` leaves the fast tests marked `alone` to its last part (FAST_SELECTION): beside the rest, as
# background work, they would measure a starved process's time.
FAST_SELECTION ?= $(FAST_TESTS)
# Work stealing: a worker that runs out takes tests queued for another. (Handed out in turn, one worker
# was left with ten seconds of settings tests, each starting processes, after the others had finished.)
pytest-fast: venv | $(TESTS_NEED)
	DATABASE_URL=$(FAST_TEST_DATABASE_URL) $(FAST_TESTS_AS) $(VENV)/bin/pytest -n $(TEST_WORKERS) --dist worksteal \
		-m "$(FAST_SELECTION)" --durations=30 $(PYTEST_ARGS)

pytest-rest: venv sandbox-image | $(TESTS_NEED)
	DATABASE_URL=$(TEST_DATABASE_URL) $(VENV)/bin/pytest -n $(REST_WORKERS) --dist loadgroup \
		-m "$(REST_TESTS)" --durations=30 $(PYTEST_ARGS)

pytest-rest-without-sandboxes: venv | $(TESTS_NEED)
	DATABASE_URL=$(TEST_DATABASE_URL) $(VENV)/bin/pytest -n $(REST_WORKERS) --dist loadgroup \
		-m "$(REST_TESTS) and not docker" --durations=30 $(PYTEST_ARGS)

# After the tests without sandboxes: the two parts share the databases' names and never run at once.
pytest-rest-with-sandboxes: venv sandbox-image pytest-rest-without-sandboxes | $(TESTS_NEED)
	DATABASE_URL=$(TEST_DATABASE_URL) $(VENV)/bin/pytest -n $(REST_WORKERS) --dist loadgroup \
		-m "$(REST_TESTS) and docker" --durations=30 $(PYTEST_ARGS)

pytest-alone: venv sandbox-image
	DATABASE_URL=$(TEST_DATABASE_URL) $(VENV)/bin/pytest -m alone --durations=10 \
		$(if $(PYTEST_ARGS),$(PYTEST_ARGS),$(ALONE_TEST_FILES))

# The virtualenv installs while the services do; the tools while the sandbox image builds (minutes on a
# fresh machine, mostly downloads), and meanwhile, beside the checks and the fast tests, the tests that
# need a stack or Chromium but no sandbox. Those that start sandboxes follow once the image is built. On
# two cores the rest alone leaves about a fifth of the CPU idle (waiting on sandboxes, browsers and
# stacks to start), which the fast tests fill. The production images are built (or found up to date) by
# the tests of them, on one worker while the other goes on. (Built beside the sandbox image instead, the
# whole run took no less: the two cores are busy throughout, so the build's CPU came out of the fast
# tests, which then ran about two minutes longer beside the sandboxes. A third worker for the rest made
# the fast tests the last to finish.) The fast tests are background work
# (devstack/background.py): in a CPU cgroup weighted below the sandboxes', so the sandboxes the rest
# waits on are not starved by two busy test workers. Five jobs: the linters, mypy, the fast tests, the
# sandbox image and the tests before it all start at once (with four, the fast tests waited for the
# linters, which as background work take longer).
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target venv system-test-services
	$(MAKE) --no-print-directory -j5 --output-sync=target checks pytest-rest-with-sandboxes \
		TESTS_NEED=system-test-tools FAST_TESTS_AS="$(PY) -m devstack.background --" \
		CHECKS_AS="$(PY) -m devstack.background --" \
		FAST_SELECTION="$(FAST_TESTS) and not alone"
	$(MAKE) --no-print-directory pytest-alone

checks: lint typecheck pytest-fast

images: sandbox-image platform-image

# The inner loop runs one worker more than the machine has cores: its tests wait, too (on a webhook's
# retries, a trickling server's deadline, a subprocess), and the core a waiting worker leaves idle goes
# to the extra one (with work stealing, on two cores: 162 s with two workers, 146 s with three; handing
# tests out in turn, three and four took as long). bench/test_fast.py compares it with the spreading
# before, in the same run. `make test` keeps one a core: the rest of the suite runs beside it.
ifeq ($(origin TEST_WORKERS),file)
test-fast: TEST_WORKERS = $(shell echo $$(( $$(nproc) + 1 )))
endif
test-fast: venv system-test-fast pytest-fast

# The reference `llm-in-sandbox` CLI that bench/agent.py and bench/evaluation.py compare with, in a virtualenv of its own.
REFERENCE_VENV := bench/.venv-reference
# litellm decides much of the reference's time per step, so it is pinned too; mcp it imports for tool calls.
REFERENCE_PACKAGES := llm-in-sandbox==0.2.0 litellm==1.106.2 mcp==2.3.0

bench-reference: $(REFERENCE_VENV)/.installed
$(REFERENCE_VENV)/.installed:
	@test -x $(REFERENCE_VENV)/bin/python || $(PYTHON) -m venv $(REFERENCE_VENV)
	$(REFERENCE_VENV)/bin/pip install --quiet $(REFERENCE_PACKAGES)
	@touch $@

bench: venv system-test sandbox-image bench-reference
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/sandbox.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/run_lifecycle.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/agent.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/stream.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/admission.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/pages.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/request_reads.py
	$(PY) bench/openapi_document.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/hostile.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/endpoint_transport.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/hosts.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/storage.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/stalled_readers.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/refine.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/compare.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/evaluation.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/html_previews.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/test_database.py
	$(PY) bench/process_start.py
	$(PY) bench/gc_pause.py
	$(PY) bench/engine_asks.py
	$(PY) bench/capacity.py
	$(PY) bench/throwaway_redis.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/stack_start.py
	$(PY) bench/image_build.py
	$(PY) bench/background_tests.py

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache
