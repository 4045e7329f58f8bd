# Two commands: `make run` serves the app, `make test` runs every test (`make lint` checks the code with ruff).
# Both create .venv and install what they need on first use.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
HOST ?= 127.0.0.1
PORT ?= 8050

# The production server: gunicorn, one process per core, threads for the browser's concurrent requests.
WORKERS ?= 2
THREADS ?= 8

.PHONY: run dev lint test browser redis kernels worker bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.testing: tests/requirements.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet -r tests/requirements.txt
	touch $@

# Debian's Chromium and its driver drive the browser tests (never a download).
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium chromium-driver; \
	fi

# Debian's redis-server backs the scale-out tests (each starts its own on a free loopback port).
redis:
	@if ! command -v redis-server >/dev/null; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends redis-server; \
	fi

# The batch kernel's compiled loops (numba), compiled once into their cache before anything forks runs: a clean
# checkout compiles them in about 20 CPU-s, later calls load them in under a second.
kernels: $(VENV)/.runtime
	$(PY) -c "from sched_engine.batch import compiled; compiled.warm()"

run: $(VENV)/.runtime kernels
	SCHEDSCOPE_HOST=$(HOST) $(VENV)/bin/gunicorn --bind $(HOST):$(PORT) --workers $(WORKERS) --threads $(THREADS) --timeout 300 \
		--graceful-timeout 30 --access-logfile - --error-logfile - "app:create_server()"

# Flask's development server (one process), for working on the app.
dev: $(VENV)/.runtime
	SCHEDSCOPE_HOST=$(HOST) SCHEDSCOPE_PORT=$(PORT) $(PY) app.py

# ruff, configured in pyproject.toml; .ci/run runs it before the tests.
lint: $(VENV)/.testing
	$(VENV)/bin/ruff check .

# Two pytest workers (pytest-xdist): browser tests mostly wait on the page, so two run side by side on two cores.
# Tests are shared out one by one and an idle worker takes tests queued for the other (worksteal), so the run never
# ends with one worker alone on a long file. TEST_WORKERS=0 runs everything in this one process.
TEST_WORKERS ?= 2

test: $(VENV)/.testing browser redis kernels
	$(PY) -m pytest -c tests/pytest.ini --rootdir=. $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist worksteal) $(PYTEST_ARGS)

# A Celery worker for the app's runs; start one on each worker machine, all against the same Redis:
#   REDIS_URL=redis://host:6379/0 make worker      (WORKER_ARGS="--concurrency=4" to choose the processes)
worker: $(VENV)/.runtime
	@if [ -z "$$REDIS_URL" ]; then echo "make worker: set REDIS_URL, e.g. REDIS_URL=redis://host:6379/0 make worker" >&2; exit 2; fi
	$(PY) -m celery -A app:celery_app worker --loglevel=INFO $(WORKER_ARGS)

bench: $(VENV)/.runtime
	$(PY) bench/fairshare_cost.py
	$(PY) bench/batch_throughput.py --quick
	$(PY) bench/batch_overload.py --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache
