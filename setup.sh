#!/usr/bin/env bash
# One command that sets CPQA up: a virtual environment with everything installed, and (when the shared
# PubMed sample sits beside the checkout) a data home holding that sample, MeSH term tables and a vector index,
# so `cpqa ask` answers straight away.
#   ./setup.sh            install + build the sample data home
#   ./setup.sh --no-data  install only
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
. "$VENV/bin/activate"
python -m pip install --quiet --upgrade pip
# torch first, pinned: an unpinned torch (pulled in by sentence-transformers) drags in a multi-GB CUDA build.
# Where no CPU wheel is configured for pip (find-links / index), point pip at a CPU build of torch 2.13.0.
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -e ".[dev]"

if [ "${1:-}" != "--no-data" ]; then
    SHARED="../shared/data"
    if [ -d "$SHARED" ]; then
        export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
        cpqa ingest pubmed "$SHARED/corpus/pubmed_sample.xml.gz"
        cpqa ingest pmc "$SHARED"/corpus/pmc/*
        cpqa ingest mesh "$SHARED/mesh"
        cpqa index build
    else
        echo "note: $SHARED not found; ingest your own PubMed XML with 'cpqa ingest pubmed FILE...' then 'cpqa index build'"
    fi
fi
echo "CPQA is set up. Activate with: . $VENV/bin/activate"
