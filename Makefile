# Each target makes its own virtual environment when it is missing.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test sample bench screenshots clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ragdiff demo

test: $(STAMP)
	$(PY) -m pytest -q

screenshots: $(STAMP)
	$(PY) scripts/make_screenshots.py

# torch first and pinned: the CPU build on this machine's disk, not the multi-GB CUDA build a bare
# dependency would pull
sample: $(STAMP)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[sample]' torch==2.13.0
	$(PY) scripts/build_sample_runs.py

bench: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/run_bench.py

clean:
	rm -rf $(VENV)
