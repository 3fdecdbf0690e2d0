#!/bin/sh
# The API reference of the library dropedge_core (its face and its PyG front end), warnings as errors.
# Needs sphinx (pip install "sphinx>=7,<9"); writes HTML outside the repository.
#   sh docs/api/build.sh [OUTPUT_DIR]
set -e
cd "$(dirname "$0")/../.."
python -m sphinx -W --keep-going -E -q -b html docs/api "${1:-${TMPDIR:-/tmp}/dropedge-api-html}"
