# Two commands do all set-up on a fresh machine (Python 3.11+ with venv):
#   make demo   synthesize the bundled demo survey, report on it and record the release decision
#   make test   run the fast test set (statistical checks included)
PY := .venv/bin/python
DEMO := out/demo

.PHONY: demo test test-slow bench

.venv/.installed: pyproject.toml
	python3 -m venv .venv
	.venv/bin/pip install --quiet --upgrade pip
	.venv/bin/pip install --quiet -e '.[test]'
	touch $@

demo: .venv/.installed
	@mkdir -p $(DEMO)/confidential $(DEMO)/release
	@chmod 700 $(DEMO)/confidential
	.venv/bin/mixsynth dataset ncbirths $(DEMO)/confidential/ncbirths.csv
	.venv/bin/mixsynth split $(DEMO)/confidential/ncbirths.csv --seed 1 \
		--train $(DEMO)/confidential/ncbirths-train.csv --holdout $(DEMO)/confidential/ncbirths-holdout.csv
	.venv/bin/mixsynth synthesize $(DEMO)/confidential/ncbirths-train.csv --spec examples/ncbirths.yaml \
		--seed 1 --model $(DEMO)/confidential/ncbirths-model.npz \
		--out $(DEMO)/release/ncbirths-synthetic.csv
	.venv/bin/mixsynth report $(DEMO)/confidential/ncbirths-train.csv $(DEMO)/release/ncbirths-synthetic.csv \
		--spec examples/ncbirths.yaml --holdout $(DEMO)/confidential/ncbirths-holdout.csv \
		--out $(DEMO)/release/report

test: .venv/.installed
	$(PY) -m pytest -q

test-slow: .venv/.installed
	$(PY) -m pytest -q -m slow

bench: .venv/.installed
	$(PY) benchmarks/core.py
