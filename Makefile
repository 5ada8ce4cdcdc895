# Two commands for a fresh machine:
#   make book   set up, execute the chapters (preset book) and build _build/html/index.html
#   make test   set up (plus the browser), then run every test, including the smoke
#               execution of every chapter, the site build and the browser check
# and, for the edit-test loop, `make check`: the fast unit tests alone (no training, no notebook).
# The set-up lives in one place (`make setup`) and is repeated only when
# requirements.txt or pyproject.toml change (the stamp file is named by their hash).

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
PRESET ?= book
# chapters executed at once (each kernel with its share of the cores; the timing chapter runs alone)
JOBS ?= 2
PYTEST_ARGS ?=
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP := $(VENV)/.setup-$(REQ_HASH)
FASHION_MNIST := /usr/share/datasets/fashion-mnist
BIBLE_DATA := /usr/lib/bible.data
export DEBIAN_FRONTEND := noninteractive

# apt-get as root, or through sudo when that needs no password; empty when neither works
APT := $(shell if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then echo apt-get; \
         elif command -v sudo >/dev/null && sudo -n true 2>/dev/null && command -v apt-get >/dev/null; then echo "sudo -n apt-get"; fi)

.PHONY: setup book test check test-second-isa system-data system-browser system-compiler system-fonts clean help

help:
	@echo "make book    execute the chapters (PRESET=$(PRESET)) and build _build/html/index.html"
	@echo "make test    run every test (smoke execution of every chapter, site build, browser check)"
	@echo "make check   the fast unit tests alone (no training, no notebook execution)"
	@echo "make setup   create $(VENV) and install requirements.txt and the polyattn package"

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q -e .
	rm -f $(VENV)/.setup-*
	touch $@

setup: $(STAMP) system-data system-compiler

# Fashion-MNIST comes from Debian's dataset-fashion-mnist package, the King James Bible (the
# Long Range Arena's text tasks) from bible-kjv: its `bible` program and its data file.
system-data:
	@if [ -d $(FASHION_MNIST) ]; then :; \
	elif [ -n "$(APT)" ]; then \
	  echo "installing dataset-fashion-mnist with apt-get"; \
	  ( $(APT) update -qq && $(APT) install -y -qq dataset-fashion-mnist >/dev/null ) || \
	    echo "WARNING: apt-get could not install dataset-fashion-mnist; install it by hand (apt-get install dataset-fashion-mnist)"; \
	else \
	  echo "WARNING: $(FASHION_MNIST) is missing and apt-get cannot be used here;"; \
	  echo "         install Debian's dataset-fashion-mnist package (as root: apt-get install dataset-fashion-mnist)"; \
	fi
	@if [ -x /usr/bin/bible ] && [ -f $(BIBLE_DATA) ]; then :; \
	elif [ -n "$(APT)" ]; then \
	  echo "installing bible-kjv with apt-get"; \
	  ( $(APT) update -qq && $(APT) install -y -qq bible-kjv >/dev/null ) || \
	    echo "WARNING: apt-get could not install bible-kjv; install it by hand (apt-get install bible-kjv)"; \
	else \
	  echo "WARNING: /usr/bin/bible or $(BIBLE_DATA) is missing and apt-get cannot be used here;"; \
	  echo "         install Debian's bible-kjv package (as root: apt-get install bible-kjv)"; \
	fi

# The compiled attention path (polyattn.kernels.compiled) is built on first use with g++; without
# it that path is unavailable and attention keeps the pure-PyTorch blocked path.
system-compiler:
	@if command -v g++ >/dev/null; then :; \
	elif [ -n "$(APT)" ]; then \
	  echo "installing g++ with apt-get"; \
	  ( $(APT) update -qq && $(APT) install -y -qq g++ >/dev/null ) || \
	    echo "WARNING: apt-get could not install g++; the compiled attention path will be unavailable"; \
	else \
	  echo "WARNING: g++ is missing and apt-get cannot be used here; the compiled attention path will be unavailable."; \
	  echo "         install it as root: apt-get install g++"; \
	fi

# The figures' Chinese titles (chapter 07) and symbols such as the double-struck E need a font
# that covers them: Debian's fonts-wqy-microhei (plotting.setup() falls back when it is absent).
WQY_FONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
system-fonts:
	@if [ -f $(WQY_FONT) ]; then :; \
	elif [ -n "$(APT)" ]; then \
	  echo "installing fonts-wqy-microhei with apt-get"; \
	  ( $(APT) update -qq && $(APT) install -y -qq fonts-wqy-microhei >/dev/null ) || \
	    echo "WARNING: apt-get could not install fonts-wqy-microhei; figures fall back to DejaVu Sans (no Chinese glyphs)"; \
	else \
	  echo "WARNING: $(WQY_FONT) is missing and apt-get cannot be used here; figures fall back to DejaVu Sans."; \
	  echo "         install it as root: apt-get install fonts-wqy-microhei"; \
	fi

# The browser check drives Debian's chromium through chromium-driver.
system-browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ -n "$(APT)" ]; then \
	  echo "installing chromium and chromium-driver with apt-get"; \
	  ( $(APT) update -qq && $(APT) install -y -qq chromium chromium-driver >/dev/null ) || \
	    echo "WARNING: apt-get could not install chromium chromium-driver; the browser test will be skipped"; \
	else \
	  echo "WARNING: chromium/chromium-driver are missing and apt-get cannot be used here; the browser test will be skipped."; \
	  echo "         install them as root: apt-get install chromium chromium-driver"; \
	fi

book: setup system-fonts
	$(PY) -m polyattn.book --preset $(PRESET) --jobs $(JOBS)

test: setup system-fonts system-browser
	$(PY) -m ruff check lib tests chapters
	$(PY) -m pytest -q --durations=15 $(PYTEST_ARGS) tests

check: setup
	$(PY) -m ruff check lib tests chapters
	$(PY) -m pytest -q -m "not slow and not book" $(PYTEST_ARGS) tests

# The tests that compare with committed records, again with PyTorch's plain (non-vector) CPU
# kernels: a test that only passes on the instruction set the records were made with fails here.
test-second-isa: setup
	ATEN_CPU_CAPABILITY=default $(PY) -m pytest -q -m committed $(PYTEST_ARGS) tests

clean:
	rm -rf _build
