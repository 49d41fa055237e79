# Each target makes its own virtual environment when it is missing, and says what it is doing while it installs
# (pip's own progress lines follow). `make demo` installs ragdiff alone; `make test` adds the test extras.
VENV ?= .venv
PY := $(VENV)/bin/python
APP := $(VENV)/.installed-app
STAMP := $(VENV)/.installed
PIP := $(PY) -m pip --disable-pip-version-check

.PHONY: demo test test-floor sample bench screenshots clean

$(PY):
	@echo "make: creating $(VENV) (first run only)"
	python3 -m venv $(VENV)

$(APP): pyproject.toml | $(PY)
	@echo "make: installing ragdiff and its dependencies into $(VENV) (first run only) ..."
	$(PIP) install -e .
	touch $(APP)

$(STAMP): pyproject.toml | $(PY)
	@echo "make: installing ragdiff and its test dependencies into $(VENV) (first run only) ..."
	$(PIP) install -e '.[test]'
	touch $(STAMP) $(APP)

demo: $(APP)
	$(VENV)/bin/ragdiff demo

test: $(STAMP)
	$(PY) -m pytest -q

# the suite with every dependency at the floor pyproject.toml promises, in .venv-floor/ (not part of `make test`)
test-floor:
	python3 scripts/test_floor.py

screenshots: $(STAMP)
	$(PY) scripts/make_screenshots.py

# torch first and pinned: the CPU build on this machine's disk, not the multi-GB CUDA build a bare
# dependency would pull
sample: $(STAMP)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[sample]' torch==2.13.0
	$(PY) scripts/build_sample_runs.py

bench: $(STAMP)
	$(PIP) install -q -e '.[bench]'
	$(PY) bench/run_bench.py

clean:
	rm -rf $(VENV) .venv-floor
