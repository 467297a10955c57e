#!/usr/bin/env bash
# Creates .venv-argn at the repo root for the `tabularargn` peer (MOSTLY AI's open engine,
# mostlyai-engine, TabularARGN). It wants pandas 3 and torch, and pulls transformers, peft and
# the rest of its language-model side too: kept apart from .venv and .venv-peers.
# CPU torch goes in first, pinned, so the engine does not pull the CUDA build (several GB).
# The engine then installs torchvision and torchaudio builds that do not match this torch, and
# transformers' import (which the engine does) fails with `torchvision::nms does not exist`:
# they are uninstalled, so `pip check` reports the engine's two requirements on them as missing;
# the tabular model uses neither.
# Writes the installed versions to benchmarks/peers/versions-argn.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3.11}
[ -x .venv-argn/bin/python ] || "$PYTHON" -m venv .venv-argn
PIP=".venv-argn/bin/python -m pip"
$PIP install --quiet --upgrade pip
$PIP install --quiet "torch==2.13.0"
$PIP install --quiet "torch==2.13.0" "mostlyai-engine==2.7.3"
$PIP uninstall --quiet -y torchvision torchaudio
broken=$($PIP check | grep -v -E 'requires (torchvision|torchaudio), which is not installed' || true)
if [ -n "$broken" ]; then echo "$broken"; exit 1; fi
.venv-argn/bin/python -c "import mostlyai.engine, transformers"   # the import the stray torchvision broke
.venv-argn/bin/python -m pip freeze | grep -i -E '^(mostlyai-engine|torch|transformers|numpy|pandas|scikit-learn|pyarrow)==' \
  | tee benchmarks/peers/versions-argn.txt
