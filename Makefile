# jointbus — every set-up step lives here, so a fresh machine needs only `make demo` / `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test lint typecheck unit bench demo soak fuzz clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt setup.py src/jointbus/codec/_cdr_accel.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict src

unit: $(STAMP)
	$(VENV)/bin/pytest -m "not slow" -q

test: lint typecheck unit

bench: $(STAMP)
	$(PY) -m bench.run $(BENCH_ARGS)

demo: $(STAMP)
	$(VENV)/bin/jointbus demo $(DEMO_ARGS)

SOAK_MINUTES ?= 30
soak: $(STAMP)
	$(PY) -m jointbus.soak --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

fuzz: $(STAMP)
	$(VENV)/bin/pytest -m slow -q tests/fuzz

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
