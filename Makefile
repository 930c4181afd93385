# Everything a fresh machine needs: `make test` and `make demo` do all set-up themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
TORCH  := torch==2.13.0

.PHONY: install system-data test demo bench docs clean

install: $(STAMP) system-data

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[all,test]"
	touch $(STAMP)

# WordNet 3.0 from Debian (NLTK's downloader cannot be used offline).
system-data:
	@if [ ! -f /usr/share/wordnet/data.noun ]; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends wordnet-base wordnet-sense-index; \
	  else echo "WordNet missing: install Debian's wordnet-base, or NLTK's wordnet corpus"; fi; \
	fi
# Chromium from Debian, for the test that renders report.html headless and checks its first screen.
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; \
	  else echo "Chromium missing: install Debian's chromium for the report screenshot test"; fi; \
	fi

test: install
	$(PY) -m pytest -q -p no:cacheprovider -n auto

demo: install
	$(PY) -m perturb.demo --out demo-out

bench: install
	$(PY) -m benchmarks
	$(PY) -m benchmarks --sections runner

docs: install
	$(PY) -m perturb.docs

clean:
	rm -rf $(VENV) demo-out .pytest_cache .hypothesis build *.egg-info
