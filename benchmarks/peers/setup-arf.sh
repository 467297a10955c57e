#!/usr/bin/env bash
# Creates .venv-arf at the repo root for the `arf` peer (arfpy, adversarial random forests).
# arfpy 0.1.1 uses np.in1d and pandas 2 behaviour, so it needs numpy < 2, pandas < 3 and
# scikit-learn < 1.6: pins that clash with the product's .venv and with .venv-peers.
# Writes the installed versions to benchmarks/peers/versions-arf.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3.11}
[ -x .venv-arf/bin/python ] || "$PYTHON" -m venv .venv-arf
PIP=".venv-arf/bin/python -m pip"
$PIP install --quiet --upgrade pip
$PIP install --quiet "arfpy==0.1.1" "numpy==1.26.4" "pandas==2.3.3" "scikit-learn==1.5.2" "scipy==1.17.1"
$PIP check
.venv-arf/bin/python -m pip freeze | grep -i -E '^(arfpy|numpy|pandas|scikit-learn|scipy)==' \
  | tee benchmarks/peers/versions-arf.txt
