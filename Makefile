# Two commands do all set-up on a fresh machine (Python 3.11+ with venv):
#   make demo   fit the copula to the bundled demo survey and write a synthetic file
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
	.venv/bin/mixsynth synthesize $(DEMO)/confidential/ncbirths.csv --spec examples/ncbirths.yaml \
		--seed 1 --model $(DEMO)/confidential/ncbirths-model.npz \
		--out $(DEMO)/release/ncbirths-synthetic.csv

test: .venv/.installed
	$(PY) -m pytest -q

test-slow: .venv/.installed
	$(PY) -m pytest -q -m slow

bench: .venv/.installed
	$(PY) benchmarks/core.py
