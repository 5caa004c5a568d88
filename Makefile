# The two commands the README starts with: `make run` and `make test`.
# Both need only Python 3.11+; embedded defaults (SQLite and a filesystem Celery broker under var/).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
RUN_DIR ?= $(or $(EVALAPP_VAR_DIR),var)

# What ruff holds to its rules and format in `make lint` (and rewrites in `make format`): the whole tree.
RUFF_PATHS ?= .

.PHONY: run test coverage venv venv-lint lint format mypy-baseline bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

venv: $(VENV)/.installed

# The lint tools (ruff, mypy and the stubs, import-linter, coverage) on top of the test install.
$(VENV)/.installed-lint: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e ".[test,lint]"
	touch $@

venv-lint: $(VENV)/.installed-lint

# Install, migrate, load the demo, then serve the web app and a Celery worker together; Ctrl-C stops both.
# The worker embeds beat (--beat; schedule file var/celerybeat-schedule), which runs the stall sweep that
# resumes calibrations and gradings whose worker died. evalapp/serve.py runs both and stops each once on Ctrl-C;
# the address and the demo users (seed_demo's listing) are printed after the worker's banner.
# DEBUG is on for the laptop's server (plain HTTP, a generated key in var/secret_key); `make run DEBUG=false`
# tries production settings.
run: export DEBUG ?= true
run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@mkdir -p $(RUN_DIR)
	$(PY) manage.py seed_demo > $(RUN_DIR)/seed_demo.txt
	@$(PY) -m evalapp.serve --host $(HOST) --port $(PORT) --notice $(RUN_DIR)/seed_demo.txt

# The whole test suite (browser tests skip with a reason where Chromium is not installed), spread over the
# machine's cores by pytest-xdist, at most TEST_PROCESSES processes, each with its own test database;
# `make test TEST_PROCESSES=0` runs it in one process.
TEST_PROCESSES ?= 4
test: venv
	$(VENV)/bin/pytest -q -p no:cacheprovider $(if $(filter 0,$(TEST_PROCESSES)),-n 0,-n auto --maxprocesses $(TEST_PROCESSES) --dist loadgroup) $(PYTEST_ARGS)

# The pages' JavaScript modules, unit-tested with Node's own test runner (Node 20+, no npm install).
.PHONY: test-js
test-js:
	node --test tests/js/
# `make test` with coverage over the project's packages; fails under pyproject's fail_under.
coverage: venv-lint
	$(MAKE) test PYTEST_ARGS="--cov --cov-report=term $(PYTEST_ARGS)"

# ruff (rules and format), mypy (strict on the packages pyproject names), the mypy ratchet over everything
# else, and the import contracts once pyproject has them.
lint: venv-lint
	$(VENV)/bin/ruff check $(RUFF_PATHS)
	$(VENV)/bin/ruff format --check $(RUFF_PATHS)
	$(VENV)/bin/mypy
	$(PY) tools/mypy_ratchet.py
	@if grep -q '^\[tool\.importlinter\]' pyproject.toml; then \
	  echo "$(VENV)/bin/lint-imports"; $(VENV)/bin/lint-imports; \
	else echo "lint-imports: skipped, pyproject.toml has no [tool.importlinter] contracts yet"; fi

format: venv-lint
	$(VENV)/bin/ruff check --fix $(RUFF_PATHS)
	$(VENV)/bin/ruff format $(RUFF_PATHS)

# After a fix or a move: the mypy ratchet's baseline becomes today's counts.
mypy-baseline: venv-lint
	$(PY) tools/mypy_ratchet.py --update

bench: venv
	for f in bench/*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .coverage htmlcov
