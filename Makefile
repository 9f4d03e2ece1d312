# The two commands a newcomer needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
ASSETS := node_modules/.installed
PORT ?= 8000

.PHONY: demo test install lint lock simcluster clean messages

# Every Python package at the version and hashes of requirements.lock (`make lock` after a
# change to pyproject.toml's dependencies), then the project itself, with nothing more.
$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --require-hashes -r requirements.lock
	$(PIP) install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

# requirements.lock again from pyproject.toml, with pip-tools in a venv of its own;
# `make lock UPGRADE=1` moves every package to its newest release.
lock:
	test -x .venv-lock/bin/pip-compile || ($(PYTHON) -m venv .venv-lock && \
		.venv-lock/bin/pip install -q pip-tools)
	.venv-lock/bin/pip-compile -q --generate-hashes --allow-unsafe --all-build-deps \
		--no-emit-index-url --no-emit-find-links --strip-extras $(if $(UPGRADE),--upgrade) \
		--extra dashboard --extra simcluster --extra test -o requirements.lock pyproject.toml

# Front-end assets (PatternFly CSS) come from npm, never copied into the repository.
$(ASSETS): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(ASSETS)

# Translation catalogues: compiled at install (and again whenever a .po changes)
CATALOGUES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
$(CATALOGUES) &: $(CATALOGUES:.mo=.po) $(STAMP)
	$(PY) manage.py compiletranslations

install: $(STAMP) $(ASSETS) $(CATALOGUES)

# simcluster with the demo scenario and the dashboard on http://127.0.0.1:$(PORT)
demo: install
	PORT=$(PORT) $(PY) scripts/demo.py

# A simulated cluster alone, for kubectl and the Python client.
simcluster: $(STAMP)
	$(PY) -m simcluster serve --scenario demo --event-ttl 3600

# Browser tests need Debian's Chromium; kubectl tests use Debian's kubectl if none is found.
test: install
	@test -x /usr/bin/chromium || (apt-get install -y -q chromium >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) || \
		(echo "Chromium could not be installed: run 'apt-get install chromium'" && exit 1)
	@command -v kubectl >/dev/null 2>&1 || apt-get install -y -q kubernetes-client >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y -q kubernetes-client >/dev/null 2>&1) || \
		echo "kubectl could not be installed here: its tests will say so"
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) manage.py makemigrations --check --dry-run >/dev/null
	$(PY) -m pytest -n 6 --dist loadgroup tests

# Extract translatable strings into locale/<lang>/LC_MESSAGES/django.po: every shipped
# language, or only LANG_CODE=de to start a new one (scripts/translate.py fills them)
messages: $(STAMP)
	$(PY) manage.py makemessages --no-obsolete $(if $(LANG_CODE),-l $(LANG_CODE),--all) \
		--ignore=.venv --ignore=node_modules --ignore=simcluster --ignore=tests \
		--ignore=benchmarks --ignore=staticfiles

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) .venv-lock node_modules .simcluster
