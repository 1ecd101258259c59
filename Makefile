# jointbus — every set-up step lives here, so a fresh machine needs only `make demo` / `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test test-long lint typecheck unit warm bench demo soak chaos fuzz clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt setup.py src/jointbus/codec/_cdr_accel.c \
	src/jointbus/robots/hb50/messages/_frame_accel.c src/jointbus/robots/hb50/legged/_leg_accel.c \
	src/jointbus/robots/hb50/messages/_robot_state_accel.c src/jointbus/drivers/_limit_accel.c \
	src/jointbus/robots/hb50/legged/_estimate_accel.c src/jointbus/robots/hb50/messages/_command_accel.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e '.[test]'
	$(PY) -m compileall -q -j 0 $$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
		|| true  # as pip, which byte-compiles after install, a file that does not compile is no error
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/lint-imports --no-cache

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict src

# The quick suite, four test processes at a time on this 2-core host (most tests wait on sockets,
# sleeps and child processes, not on the CPU: 2 workers took 289 s, 4 took 179-221 s, 2026-12-04),
# each taking the next test as it frees up (worksteal: the slow CLI and DDS tests do not queue
# behind one worker). Real-time, fault and soak-like tests are marked `long` (tests/conftest.py)
# and run one at a time by `make test-long`, which .ci/run also runs.
#
# The suite writes Python's bytecode cache (the git-ignored __pycache__ folders of src/ and tests/)
# even where the environment sets PYTHONDONTWRITEBYTECODE, as this VM's does: without it each of
# the four workers compiles every jointbus module and rewrites every test module's asserts again
# (91 s of CPU for the four collections on a fresh clone, 34 s from the cache), and every CLI child
# process compiles what it imports.
NOPYC := PYTHONDONTWRITEBYTECODE=
unit: $(STAMP)
	HYPOTHESIS_PROFILE=quick $(NOPYC) $(VENV)/bin/pytest -m "not slow and not long" -n 4 \
		--dist worksteal -q

# One collection of the suite, which fills that cache once for the four workers; `make test` runs
# it beside mypy, which keeps one core busy for ~20 s. A collection error is left to `unit` to show.
warm: $(STAMP)
	$(NOPYC) $(VENV)/bin/pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 || true

test: lint
	$(MAKE) --no-print-directory -j2 typecheck warm
	$(MAKE) --no-print-directory unit

# The long suite, then every property test of the quick suite again with 300 examples each (the
# quick suite runs 40: tests/conftest.py's profiles), two processes at a time.
test-long: $(STAMP)
	$(VENV)/bin/pytest -m "long and not slow" -q
	HYPOTHESIS_PROFILE=thorough $(NOPYC) $(VENV)/bin/pytest -m "hypothesis and not slow and not long" \
		-n 2 --dist worksteal -q

bench: $(STAMP)
	$(PY) -m bench.run $(BENCH_ARGS)

demo: $(STAMP)
	$(VENV)/bin/jointbus demo $(DEMO_ARGS)

SOAK_MINUTES ?= 30
soak: $(STAMP)
	$(PY) -m jointbus.soak --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

# The chaos campaign (docs/SAFETY.md): the walking robot under seeded, overlapping faults; exit 0
# only with 0 invariant violations. `make chaos CHAOS_ARGS="--seed 7"` replays seed 7.
CHAOS_MINUTES ?= 10
chaos: $(STAMP)
	$(VENV)/bin/jointbus chaos --minutes $(CHAOS_MINUTES) $(CHAOS_ARGS)

fuzz: $(STAMP)
	$(VENV)/bin/pytest -m slow -q tests/fuzz

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
