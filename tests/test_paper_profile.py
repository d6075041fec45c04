"""The ``paper`` profile end to end through the real command line, with tiny random-weight models.

The paper's models cannot be downloaded here, so ``cpqa.testing.tiny_models`` writes models of the same
architectures under the real ids (ncbi/MedCPT-{Query,Article,Cross}-Encoder,
NeuML/pubmedbert-base-embeddings-matryoshka) into a temporary Hugging Face hub cache; with ``HF_HUB_CACHE`` on
it and ``HF_HUB_OFFLINE=1`` the product's own loading code finds and loads them. ``cpqa ingest pubmed`` and
``cpqa index build`` run on a slice of the shared sample (its tamoxifen abstracts and a few others: the MedCPT
article encoder over the whole sample takes about a minute even at this size), Boolean search goes to the
E-utilities mirror over that store (through a recording pass-through proxy) and Claude is the Anthropic Messages
API stand-in. Nothing leaves 127.0.0.1. The answers are noise; what is checked is that every component runs the
paper's model, says so in the trace, and that the answer cites evidence the pipeline retrieved.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import shared
from cpqa.config import DEFAULT_LLM_MODEL
from cpqa.testing.tiny_models import (
    HIDDEN_SIZE,
    MEDCPT_ARTICLE,
    MEDCPT_CROSS,
    MEDCPT_QUERY,
    PUBMEDBERT_MATRYOSHKA,
    TINY_MODELS,
    build_tiny_paper_models,
)


QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"
TOPIC_WORDS = ("tamoxifen",)
OTHERS = 10  # records without the topic words, so retrieval has something to leave out (SEOS segments every
# candidate, and E1 returns every record of a store this small, so each one costs time)
DUMMY_KEY = "sk-ant-paper-profile-dummy-0123456789"
EXPECTED_MODELS = {
    "semantic_query": MEDCPT_QUERY,
    "article_encoder": MEDCPT_ARTICLE,  # checked when the trace records it
    "sentence_embedder": PUBMEDBERT_MATRYOSHKA,
    "passage_retriever": PUBMEDBERT_MATRYOSHKA,
    "evidence_scorer": PUBMEDBERT_MATRYOSHKA,  # the passage retriever's model, loaded once
    "reranker": MEDCPT_CROSS,
    "rewriter": DEFAULT_LLM_MODEL,
    "answerer": DEFAULT_LLM_MODEL,
}
REQUIRED = set(EXPECTED_MODELS) - {"article_encoder"}
# Outside settings that would change what the subprocesses load or where they connect.
_DROP = ("CPQA_", "ANTHROPIC_", "NCBI_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "SENTENCE_TRANSFORMERS_")


def write_slice(source: Path, dest: Path) -> set[str]:
    """A PubMed XML file holding the sample's records that name the topic plus ``OTHERS`` more; their PMIDs."""
    from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records

    picked: list[bytes] = []
    pmids: set[str] = set()
    others = 0
    for article, raw in iter_pubmed_records(source):
        on_topic = any(w in f"{article.title} {article.abstract}".lower() for w in TOPIC_WORDS)
        if on_topic or others < OTHERS:
            others += not on_topic
            picked.append(raw)
            pmids.add(article.pmid)
    with gzip.open(dest, "wb") as out:
        out.write(b'<?xml version="1.0" encoding="utf-8"?>\n<PubmedArticleSet>\n')
        for raw in picked:
            out.write(raw.strip() + b"\n")
        out.write(b"</PubmedArticleSet>\n")
    return pmids


def cpqa(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The venv's ``cpqa`` command as a subprocess (as tests/test_reliability.py runs it)."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("cpqa")), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def ok(run: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert run.returncode == 0, f"{run.args[1:]} exited {run.returncode}:\n{run.stderr[-4000:]}"
    return run


@dataclass
class PaperRun:
    pmids: set[str]
    home: Path
    build: dict
    payload: dict
    eutils_paths: list[str]
    claude_requests: list[dict]


@pytest.fixture(scope="module")
def hf_home(tmp_path_factory) -> Path:
    """A Hugging Face home whose hub cache holds the tiny paper models under their real ids."""
    path = tmp_path_factory.mktemp("hf")
    build_tiny_paper_models(path / "hub")
    return path


def test_tiny_models_sit_in_the_hub_cache_with_the_real_architectures(hf_home):
    from huggingface_hub import try_to_load_from_cache
    from sentence_transformers import CrossEncoder, SentenceTransformer
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    cache = hf_home / "hub"
    found = {m: try_to_load_from_cache(m, "config.json", cache_dir=cache) for m in TINY_MODELS}
    assert all(isinstance(path, str) for path in found.values()), found  # what `weights_cached` asks
    assert isinstance(try_to_load_from_cache(PUBMEDBERT_MATRYOSHKA, "modules.json", cache_dir=cache), str)
    snapshot = {m: str(Path(path).parent) for m, path in found.items()}
    for model_id in (MEDCPT_QUERY, MEDCPT_ARTICLE):
        model = AutoModel.from_pretrained(snapshot[model_id])
        assert type(model).__name__ == "BertModel" and model.config.hidden_size == HIDDEN_SIZE
        tokens = AutoTokenizer.from_pretrained(snapshot[model_id]).tokenize("Tamoxifen reduces recurrence")
        assert tokens and "[UNK]" not in tokens
    assert AutoConfig.from_pretrained(snapshot[MEDCPT_CROSS]).architectures == ["BertForSequenceClassification"]
    assert CrossEncoder(snapshot[MEDCPT_CROSS], device="cpu").predict([["a", "b"]]).shape == (1,)
    embedder = SentenceTransformer(snapshot[PUBMEDBERT_MATRYOSHKA], device="cpu", truncate_dim=16)
    assert embedder.encode(["tamoxifen"]).shape == (1, 16)


@pytest.fixture(scope="module")
def paper_run(hf_home, tmp_path_factory) -> PaperRun:
    sample = shared("corpus", "pubmed_sample.xml.gz")
    from cpqa.sources.mirror_server import MirrorServer
    from cpqa.testing.anthropic_standin import AnthropicStandIn
    from cpqa.testing.faulty_server import FaultyServer

    root = tmp_path_factory.mktemp("paper")
    pmids = write_slice(sample, root / "slice.xml.gz")
    home = root / "home"
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_DROP)}
    env.update(
        CPQA_HOME=str(home),
        CPQA_PROFILE="paper",
        HF_HOME=str(hf_home),
        HF_HUB_CACHE=str(hf_home / "hub"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        TOKENIZERS_PARALLELISM="false",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )

    ok(cpqa(env, root, "ingest", "pubmed", str(root / "slice.xml.gz"), "--json"))
    build = json.loads(ok(cpqa(env, root, "index", "build", "--json")).stdout)

    with (
        MirrorServer(home / "store.sqlite") as mirror,
        FaultyServer(upstream=mirror.url) as eutils,
        AnthropicStandIn() as claude,
    ):
        env.update(
            CPQA_EUTILS_URL=eutils.url, CPQA_EUTILS_RATE="0", ANTHROPIC_API_KEY=DUMMY_KEY, ANTHROPIC_BASE_URL=claude.url
        )
        run = ok(cpqa(env, root, "ask", QUESTION, "--json"))
        paths = [r.path for r in eutils.requests]
        requests = list(claude.requests)
    assert DUMMY_KEY not in run.stdout and DUMMY_KEY not in run.stderr
    return PaperRun(
        pmids=pmids,
        home=home,
        build=build,
        payload=json.loads(run.stdout),
        eutils_paths=paths,
        claude_requests=requests,
    )


@pytest.mark.slow  # three cold `cpqa` processes loading torch and the models: about a minute
def test_index_is_built_by_the_medcpt_article_encoder(paper_run):
    from cpqa.config import get_settings

    index_dir = get_settings(cpqa_home=paper_run.home).index_dir
    meta = json.loads((index_dir / "meta.json").read_text())  # IndexMeta, written by `cpqa index build`
    assert meta["model"] == MEDCPT_ARTICLE and meta["dim"] == HIDDEN_SIZE
    assert meta["count"] == len(paper_run.pmids)
    assert paper_run.build["model"] == MEDCPT_ARTICLE and paper_run.build["embedded"] == len(paper_run.pmids)
    # the same command learns the local term-mapping links from the records and saves them beside the MeSH tables
    learned = json.loads((get_settings(cpqa_home=paper_run.home).terms_dir / "learned_terms.json").read_text())
    assert paper_run.build["learned_terms"] == len(learned) and all(
        t["name"] for t in learned
    )  # a few records: few links


@pytest.mark.slow  # three cold `cpqa` processes loading torch and the models: about a minute
def test_every_component_runs_the_papers_model(paper_run):
    trace = paper_run.payload["trace"]
    assert trace["profile"] == "paper"
    models = trace["models"]
    assert REQUIRED <= set(models), f"components missing from the trace: {sorted(REQUIRED - set(models))}"
    for component, choice in models.items():
        assert choice["profile"] == "paper", (component, choice)
        if component in EXPECTED_MODELS:
            assert choice["model"] == EXPECTED_MODELS[component], (component, choice)


@pytest.mark.slow  # three cold `cpqa` processes loading torch and the models: about a minute
def test_boolean_search_went_to_eutilities_and_claude_wrote_the_rewrite_and_answer(paper_run):
    assert any(p.split("?")[0].endswith("esearch.fcgi") for p in paper_run.eutils_paths), paper_run.eutils_paths
    assert len(paper_run.claude_requests) >= 2, "the rewriter and the answerer each call Claude"
    assert {r["model"] for r in paper_run.claude_requests} == {DEFAULT_LLM_MODEL}
    from cpqa.testing.anthropic_standin import STANDIN_LABEL

    assert STANDIN_LABEL in paper_run.payload["answer"]["text"], "the answer is not the stand-in Claude's"


@pytest.mark.slow  # three cold `cpqa` processes loading torch and the models: about a minute
def test_the_answer_cites_retrieved_evidence(paper_run):
    answer, trace = paper_run.payload["answer"], paper_run.payload["trace"]
    evidence = {p["pmid"] for p in trace["passages"]}
    assert answer["citations"], answer
    assert set(answer["citations"]) <= evidence <= paper_run.pmids
    assert all(f"PMID:{pmid}" in answer["text"] or pmid in answer["text"] for pmid in answer["citations"])
