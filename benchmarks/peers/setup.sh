#!/usr/bin/env bash
# Creates the peer environment .venv-peers at the repo root: SDV (GaussianCopula, CTGAN) and
# python-synthpop, whose pins (pandas < 3, torch) clash with the product's .venv.
# CPU torch goes in first, pinned, so SDV does not pull the CUDA build (several GB).
# Writes the installed versions to benchmarks/peers/versions.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3.11}
[ -x .venv-peers/bin/python ] || "$PYTHON" -m venv .venv-peers
PIP=".venv-peers/bin/python -m pip"
$PIP install --quiet --upgrade pip
$PIP install --quiet "torch==2.13.0"
$PIP install --quiet "torch==2.13.0" "pandas==2.3.3" "sdv==2.0.0" "python-synthpop==0.1.2"
$PIP check
.venv-peers/bin/python -m pip freeze | grep -i -E '^(torch|sdv|ctgan|copulas|rdt|python-synthpop|pandas|numpy|scikit-learn|scipy)==' \
  | tee benchmarks/peers/versions.txt
