# The two commands a newcomer needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
ASSETS := node_modules/.installed
PORT ?= 8000

.PHONY: demo test install lint simcluster clean messages

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[dashboard,simcluster,test]"
	touch $(STAMP)

# Front-end assets (PatternFly CSS) come from npm, never copied into the repository.
$(ASSETS): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(ASSETS)

# Translation catalogues: compiled at install (and again whenever a .po changes)
CATALOGUES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
$(CATALOGUES): %.mo: %.po $(STAMP)
	$(PY) manage.py compiletranslations

install: $(STAMP) $(ASSETS) $(CATALOGUES)

# simcluster with the demo scenario and the dashboard on http://127.0.0.1:$(PORT)
demo: install
	PORT=$(PORT) $(PY) scripts/demo.py

# A simulated cluster alone, for kubectl and the Python client.
simcluster: $(STAMP)
	$(PY) -m simcluster serve --scenario demo

# Browser tests need Debian's Chromium; kubectl tests use Debian's kubectl if none is found.
test: install
	@test -x /usr/bin/chromium || (apt-get install -y -q chromium >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) || \
		(echo "Chromium could not be installed: run 'apt-get install chromium'" && exit 1)
	@command -v kubectl >/dev/null 2>&1 || apt-get install -y -q kubernetes-client >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y -q kubernetes-client >/dev/null 2>&1) || \
		echo "kubectl could not be installed here: its tests will say so"
	$(VENV)/bin/ruff check .
	$(PY) manage.py makemigrations --check --dry-run >/dev/null
	$(PY) -m pytest -n 2 --dist loadgroup tests

# Extract translatable strings into locale/<lang>/LC_MESSAGES/django.po: every shipped
# language, or only LANG_CODE=de to start a new one (scripts/translate.py fills them)
messages: $(STAMP)
	$(PY) manage.py makemessages --no-obsolete $(if $(LANG_CODE),-l $(LANG_CODE),--all) \
		--ignore=.venv --ignore=node_modules --ignore=simcluster --ignore=tests \
		--ignore=benchmarks --ignore=staticfiles

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) node_modules .simcluster
