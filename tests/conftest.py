"""Shared fixtures. Tests never touch the internet: the hub is offline and every peer runs on 127.0.0.1.

``../shared/data`` is read in place (never copied); tests that need it skip with the reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
for _name in ("ANTHROPIC_API_KEY", "NCBI_API_KEY", "ANTHROPIC_BASE_URL", "CPQA_EUTILS_URL", "CPQA_PROFILE"):
    os.environ.pop(_name, None)

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
SAMPLE_XML = SHARED_DATA / "corpus" / "pubmed_sample.xml.gz"
OUTPUT_DIR = REPO / "test-output"
# Debian's Chromium as the real-browser tests launch it (never `playwright install`): no sandbox as root, and no
# background networking, whose connections this machine's closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def shared(*parts: str) -> Path:
    """A path under ../shared/data; skips the test with the reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (tests read ../shared/data beside the checkout)")
    return path


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fresh, empty data home for one test."""
    monkeypatch.setenv("CPQA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    return tmp_path / "home"


@pytest.fixture
def settings(home):
    from cpqa.config import get_settings

    return get_settings()


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory) -> Path:
    """A data home holding the whole shared PubMed sample, built once per session. Treat as read-only."""
    path = shared("corpus", "pubmed_sample.xml.gz")
    home_dir = tmp_path_factory.mktemp("sample_home")
    from cpqa.config import get_settings
    from cpqa.sources.store import Store
    from ingestion.pubmed import ingest_pubmed_files

    s = get_settings(cpqa_home=home_dir, cpqa_profile="offline")
    with Store(s.store_path) as store:
        ingest_pubmed_files(store, [path])
    return home_dir


@pytest.fixture(scope="session")
def sample_settings(sample_home):
    from cpqa.config import get_settings

    return get_settings(cpqa_home=sample_home, cpqa_profile="offline")


@pytest.fixture(scope="session")
def indexed_home(sample_home, tmp_path_factory) -> Path:
    """The sample store plus its MiniLM vector index (what ./setup.sh builds), once per session. Read-only."""
    import shutil

    from cpqa.config import get_settings
    from cpqa.sources.store import Store
    from ingestion.index_build import build_index

    home_dir = tmp_path_factory.mktemp("indexed_home")
    for part in sample_home.glob("store.sqlite*"):  # the database with its WAL files, if any
        shutil.copy(part, home_dir / part.name)
    s = get_settings(cpqa_home=home_dir, cpqa_profile="offline")
    with Store(s.store_path) as store:
        build_index(s, store)
    return home_dir


@pytest.fixture
def output_dir(request) -> Path:
    """A folder under test-output/ for files a test leaves for people to look at (screenshots)."""
    path = OUTPUT_DIR / request.node.name
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def api():
    """The Anthropic Messages API stand-in on 127.0.0.1 (the real SDK talks to it over HTTP)."""
    from cpqa.testing.anthropic_standin import AnthropicStandIn

    with AnthropicStandIn() as server:
        yield server
