#!/bin/sh
# The API reference of dropedge_core.pyg, warnings as errors (issue 36 (h)).
# Needs sphinx (pip install "sphinx>=7,<9"); writes HTML outside the repository.
#   sh docs/api/build.sh [OUTPUT_DIR]
set -e
cd "$(dirname "$0")/../.."
python -m sphinx -W --keep-going -E -q -b html docs/api "${1:-${TMPDIR:-/tmp}/dropedge-api-html}"
