# The two commands the README starts with: `make run` and `make test`.
# Both need only Python 3.11+; embedded defaults (SQLite and a filesystem Celery broker under var/).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
RUN_DIR ?= $(or $(EVALAPP_VAR_DIR),var)

.PHONY: run test venv venv-test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

venv: $(VENV)/.installed

# Install, migrate, load the demo, then serve the web app and a Celery worker together; Ctrl-C stops both.
# The worker embeds beat (--beat; schedule file var/celerybeat-schedule), which runs the stall sweep that
# resumes calibrations and gradings whose worker died. tools/serve.py runs both and stops each once on Ctrl-C;
# the address and the demo users (seed_demo's listing) are printed after the worker's banner.
run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@mkdir -p $(RUN_DIR)
	$(PY) manage.py seed_demo > $(RUN_DIR)/seed_demo.txt
	@$(PY) tools/serve.py --host $(HOST) --port $(PORT) --notice $(RUN_DIR)/seed_demo.txt

# The whole test suite (browser tests skip with a reason where Chromium is not installed).
test: venv
	$(VENV)/bin/pytest -q -p no:cacheprovider $(PYTEST_ARGS)

# The pages' JavaScript modules, unit-tested with Node's own test runner (Node 20+, no npm install).
.PHONY: test-js
test-js:
	node --test tests/js/

bench: venv
	for f in bench/*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) var
