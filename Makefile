# Everything a fresh machine needs: `make test` and `make demo` do all set-up themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
TORCH  := torch==2.13.0
# The lmms-eval harness lives in a second environment beside the first (its pins would fight ours).
LMMS_VENV  ?= .venv-lmms
LMMS_PIP   := $(LMMS_VENV)/bin/python -m pip
LMMS_STAMP := $(LMMS_VENV)/.installed

# System packages: installed with apt as root; anyone else is shown the one command to run.
APT      ?= apt-get
USER_ID  ?= $(shell id -u)
WORDNET  ?= /usr/share/wordnet/data.noun
CHROMIUM ?= chromium

# $(call apt_need,TEST,PACKAGES,WHAT): when the shell TEST fails, install PACKAGES with apt as
# root; otherwise print the command that would (make goes on: the tests that need them skip).
define apt_need
@if ! $(1) >/dev/null 2>&1; then \
  if [ "$(USER_ID)" = 0 ] && command -v $(APT) >/dev/null 2>&1; then \
    $(APT) update -qq && $(APT) install -y -qq --no-install-recommends $(2); \
  else \
    echo "$(3) is missing; to install it run: sudo apt-get install -y --no-install-recommends $(2)"; \
  fi; \
fi
endef

.PHONY: install lmms system-data browser test demo bench docs clean

install: $(STAMP) system-data

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[all,test]"
	touch $(STAMP)

# perturb and lmms-eval in one environment: the CPU torch first and pinned again (else pip pulls
# a CUDA build); PyPI's torchvision does not import beside it, and timm needs torchvision.
lmms: $(LMMS_STAMP)

$(LMMS_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(LMMS_VENV)
	$(LMMS_PIP) install -q --upgrade pip wheel
	$(LMMS_PIP) install -q $(TORCH)
	$(LMMS_PIP) install -q -e ".[lmms]" $(TORCH)
	$(LMMS_PIP) uninstall -q -y torchvision timm
	touch $(LMMS_STAMP)

# WordNet 3.0 from Debian (NLTK's downloader cannot be used offline).
system-data:
	$(call apt_need,test -f $(WORDNET),wordnet-base wordnet-sense-index,WordNet)

# Chromium from Debian, only for the test that renders report.html headless and checks its
# first screen (so `make test` installs it and `make demo` does not).
browser:
	$(call apt_need,command -v $(CHROMIUM),chromium,Chromium (for the report screenshot test))

test: install lmms browser
	$(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadgroup

demo: install
	$(PY) -m perturb.demo --out demo-out

bench: install
	$(PY) -m benchmarks
	$(PY) -m benchmarks --sections runner

docs: install
	$(PY) -m perturb.docs

clean:
	rm -rf $(VENV) $(LMMS_VENV) demo-out .pytest_cache .hypothesis build *.egg-info
