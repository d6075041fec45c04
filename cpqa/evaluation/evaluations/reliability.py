"""Reliability evidence for docs/results.md ("Reliability, safety, security (issue 9)"), measured through the real
``Pipeline`` over local servers.

A *world* is: the E-utilities mirror over a small topic set of records (``cpqa mirror serve``'s server), the
Anthropic stand-in, each behind a ``RoutedFaultyServer`` that can fail one outside call at a time, and a
data home holding only half of the topic's records plus a vector index over all of them, so every outside
call happens: esearch (E2), efetch PubMed (records E1/E2 find that are not local), efetch PMC (full text of a
local PMC review), the Claude rewrite call and the Claude answer call. On it this module measures faults
injected and survived (per call x fault), bad inputs refused, personal details removed before any outside
call, trace or log, and concurrent questions under NCBI's rate limit. ``cpqa eval reliability --json``.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from pydantic import BaseModel, Field

from cpqa.config import Settings, get_settings
from cpqa.sources.store import Store
from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply, default_responder
from cpqa.testing.routes import CALLS, CLAUDE_CALLS, FAULTS, NCBI_CALLS, RoutedFaultyServer, fault_for
from cpqa.types import Article

if TYPE_CHECKING:
    import numpy as np

TOPIC_QUERY = "cancer AND metabolism AND model*"
TOPIC_LADDER = ["cancer AND metabolism AND mathematical", TOPIC_QUERY, "cancer AND metabolism"]
QUESTION = "What do mathematical models tell us about cancer metabolism?"
DUMMY_KEY = "sk-ant-reliability-dummy-0123456789abcdef"
FAST = dict(
    cpqa_http_timeout=0.75,
    cpqa_http_retries=1,
    cpqa_http_backoff=0.05,
    cpqa_http_backoff_max=0.5,
    cpqa_llm_timeout=2.0,
    cpqa_llm_max_retries=1,
)


class TopicMissing(ValueError):
    """The source store lacks the records the reliability world is built from."""


# ---------------------------------------------------------------- the world
class Topic:
    """The topic's records from a source store; ``held_out`` PMIDs live only on the mirror."""

    def __init__(self, source_store: Path, query: str = TOPIC_QUERY, size: int = 24):
        with Store(source_store) as store:
            pmids = store.search(query, retmax=size).pmids
            articles, raw = store.get_many(pmids), store.raw_xml(pmids)
        self.records: list[tuple[Article, bytes]] = [(articles[p], raw[p]) for p in pmids if p in articles and p in raw]
        self.reviews = [a for a, _ in self.records if a.pmcid and a.is_review]
        if len(self.records) < 8 or not self.reviews:
            raise TopicMissing(
                f"the store {source_store} lacks the topic {query!r} (8+ records incl. a PMC review): "
                "ingest the sample first: cpqa ingest pubmed ../shared/data/corpus/pubmed_sample.xml.gz"
            )
        keep = {a.pmid for a in self.reviews}
        self.held_out = {a.pmid for i, (a, _) in enumerate(self.records) if i % 2 and a.pmid not in keep}
        self._vectors: np.ndarray | None = None

    def write_home(self, home: Path, *, local_only: bool = True, index: bool = True) -> Settings:
        settings = get_settings(cpqa_home=home, cpqa_profile="offline")
        with Store(settings.store_path) as store:
            store.upsert([(a, r) for a, r in self.records if not (local_only and a.pmid in self.held_out)])
        if index:
            self._write_index(settings)
        return settings

    def _write_index(self, settings: Settings) -> None:
        """A flat index over every topic record (as NCBI's precomputed embeddings cover all of PubMed)."""
        from cpqa.models.encoders import load_encoder
        from cpqa.documents.vector_index import IndexMeta
        from cpqa.documents.vectorstore import open_index

        encoder, _ = load_encoder("article_encoder", settings)
        if self._vectors is None:
            texts = [". ".join(p for p in (a.title.rstrip("."), a.abstract) if p) for a, _ in self.records]
            self._vectors = encoder.encode(texts)
        meta = IndexMeta(model=encoder.name, dim=encoder.dim, normalize=encoder.normalize)
        with open_index(settings, create=meta) as index:
            index.add([a.pmid for a, _ in self.records], self._vectors)


def topic_responder(request: dict) -> Reply:
    """Claude stand-in: the rewrite call gets the topic's ladder, every other call the default reply."""
    if ((request.get("tool_choice") or {}).get("name")) == "query_ladder":
        concepts = [{"text": t, "role": "core"} for t in ("cancer", "metabolism", "mathematical models")]
        return Reply.tool(
            {"normalized": "", "search_intent": "", "intent": "general", "concepts": concepts, "ladder": TOPIC_LADDER}
        )
    return default_responder(request)


class World:
    """``with World(topic, workdir) as world:`` servers up, ``world.pipeline`` ready; ``rate`` requests/s to
    E-utilities (0: none), ``claude`` False for no Anthropic key, ``index`` False for no vector index."""

    def __init__(self, topic: Topic, workdir: Path, *, rate: float = 0.0, claude: bool = True, index: bool = True):
        self.topic, self.workdir = topic, Path(workdir)
        self.rate, self.use_claude, self.use_index = rate, claude, index
        self._stack = ExitStack()

    def __enter__(self) -> "World":
        from cpqa.sources.mirror_server import MirrorServer
        from cpqa.pipeline import Pipeline

        stack = self._stack
        try:
            mirror_home = self.topic.write_home(self.workdir / "mirror", local_only=False, index=False)
            self.mirror = stack.enter_context(MirrorServer(mirror_home.store_path))
            self.ncbi = stack.enter_context(RoutedFaultyServer(self.mirror.url))
            self.standin = stack.enter_context(AnthropicStandIn(default=topic_responder))
            self.claude = stack.enter_context(RoutedFaultyServer(self.standin.url))
            self.settings = self._settings(self.topic.write_home(self.workdir / "local", index=self.use_index))
            self.pipeline = Pipeline(self.settings)
            stack.callback(self.pipeline.close)
        except BaseException:
            stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _settings(self, home: Settings) -> Settings:
        """``home``'s settings pointed at this world's servers, with short timeouts and backoff."""
        return get_settings(
            cpqa_home=home.cpqa_home,
            cpqa_profile="offline",
            cpqa_eutils_url=self.ncbi.url,
            cpqa_eutils_rate=self.rate,
            anthropic_api_key=DUMMY_KEY if self.use_claude else None,
            anthropic_base_url=self.claude.url,
            ncbi_api_key=None,
            **FAST,
        )

    def env(self, home: Path | None = None) -> dict[str, str]:
        """The environment for a ``cpqa`` subprocess on this world's servers (keys included)."""
        s = self.settings
        return {
            "CPQA_HOME": str(home or s.cpqa_home),
            "CPQA_PROFILE": "offline",
            "CPQA_EUTILS_URL": s.cpqa_eutils_url,
            "ANTHROPIC_BASE_URL": s.anthropic_base_url or "",
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "CPQA_EUTILS_RATE": str(self.rate),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **{k.upper(): str(v) for k, v in FAST.items()},
        }

    @property
    def store_path(self) -> Path:
        return self.settings.store_path

    def review_pmcid(self) -> str:
        return self.topic.reviews[0].pmcid or ""

    def sent(self, ncbi_since: int = 0, claude_since: int = 0) -> list[str]:
        """Everything the two proxies received since the given request counts: params and bodies, as text."""
        seen = []
        for proxy, since in ((self.ncbi, ncbi_since), (self.claude, claude_since)):
            for r in list(proxy.requests)[since:]:
                try:
                    body = json.loads(r.body) if r.body.startswith(b"{") else r.body.decode("utf-8", "replace")
                except ValueError:
                    body = r.body.decode("utf-8", "replace")
                seen.append("\n".join(strings([r.params, body])))
        return seen


def strings(value: object) -> Iterator[str]:
    """Every string inside a JSON-like value, decoded (no escapes)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def store_health(path: Path) -> tuple[int, int, bool]:
    """(rows, duplicate PMIDs or PMC IDs, integrity_check ok) of a store, read-only."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT count(*) FROM articles").fetchone()[0]
        dupes = sum(
            conn.execute(
                f"SELECT count(*) FROM (SELECT {col} FROM articles WHERE {col} IS NOT NULL "
                f"GROUP BY {col} HAVING count(*) > 1)"
            ).fetchone()[0]
            for col in ("pmid", "pmcid")
        )
        ok = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    return rows, dupes, ok


# ---------------------------------------------------------------- faults
class CaseResult(BaseModel):
    call: str  # one of CALLS, or a whole service ("ncbi", "claude", "vector_index")
    fault: str  # one of FAULTS, "refused", "missing" or "none"
    requests: int | None  # requests the faulted call received (None when nothing listened)
    answered: bool  # an answer came back, citing evidence
    recorded: bool  # the trace / answer says what was lost
    cached_nothing: bool  # the store holds nothing from the failed call and passes integrity_check
    survived: bool
    detail: str = ""
    result: Any = Field(default=None, exclude=True, repr=False)  # the pipeline's Result, for closer checks


def lost(call: str, result) -> str:
    """Where the trace or the answer records that ``call`` failed ('' when it does not)."""
    trace, answer = result.trace, result.answer
    if call == "esearch":
        return trace.lost_paths.get("E2", "")
    if call == "efetch_pubmed":
        return next((w for w in trace.warnings if w.startswith("efetch failed")), "")
    if call == "efetch_pmc":  # the failed fetch, not merely "no full text": the NCBI error is named
        reasons = trace.warnings + [c.dropped_reason or "" for c in trace.candidates]
        return next((r for r in reasons if "full text of PMC" in r and "NCBI" in r), "")
    if call == "claude_rewrite":
        notes = [n for n in trace.rewrite.notes if "Claude" in n] if trace.rewrite else []
        return notes[0] if trace.rewrite and trace.rewrite.method == "rules" and notes else ""
    if call == "claude_answer":
        notes = [n for n in answer.notices if n.startswith("Claude could not be used")]
        return notes[0] if answer.written_by == "extractive" and notes else ""
    if call == "vector_index":
        return trace.lost_paths.get("E1", "")
    raise ValueError(f"unknown call {call!r}")


def _case(world: World, call: str, fault: str, result, requests: int | None, rows_before: int) -> CaseResult:
    rows, dupes, ok = store_health(world.store_path)
    cached_nothing = ok and not dupes
    if call in ("efetch_pubmed", "ncbi"):
        cached_nothing = cached_nothing and rows == rows_before
    if call in ("efetch_pmc", "ncbi"):
        with Store(world.store_path) as store:
            cached_nothing = cached_nothing and not store.raw_pmc_xml([world.review_pmcid()])
    checks = [
        lost(c, result)
        for c in (
            NCBI_CALLS if call == "ncbi" else CLAUDE_CALLS if call == "claude" else () if call == "none" else (call,)
        )
    ]
    answered = bool(result.answer.text and result.answer.citations)
    recorded = all(checks)
    survived = answered and recorded and cached_nothing and (requests is None or requests > 0)
    return CaseResult(
        call=call,
        fault=fault,
        requests=requests,
        answered=answered,
        recorded=recorded,
        cached_nothing=cached_nothing,
        survived=survived,
        detail=" | ".join(c for c in checks if c)[:300],
        result=result,
    )


def run_fault(world: World, call: str, fault: str, question: str = QUESTION) -> CaseResult:
    """Fail every request of ``call`` with ``fault`` during one question."""
    proxy = world.ncbi if call in NCBI_CALLS else world.claude
    timeout = world.settings.cpqa_http_timeout if call in NCBI_CALLS else world.settings.cpqa_llm_timeout
    rows_before, since = store_health(world.store_path)[0], len(proxy.requests)
    with proxy.failing(call, fault_for(call, fault, timeout)):
        result = world.pipeline.ask(question)
    return _case(world, call, fault, result, proxy.calls(since)[call], rows_before)


def run_refused(world: World, service: str, question: str = QUESTION) -> CaseResult:
    """The whole service (``ncbi`` or ``claude``) refuses connections during one question."""
    rows_before = store_health(world.store_path)[0]
    with (world.ncbi if service == "ncbi" else world.claude).refusing():
        result = world.pipeline.ask(question)
    return _case(world, service, "refused", result, None, rows_before)


def run_plain(world: World, call: str = "none", question: str = QUESTION) -> CaseResult:
    """One question without injected faults (``call="vector_index"`` in a world built without an index)."""
    result = world.pipeline.ask(question)
    return _case(
        world, call, "missing" if call == "vector_index" else "none", result, None, store_health(world.store_path)[0]
    )


def fault_order() -> list[tuple[str, str]]:
    """efetch PubMed first: a failed efetch caches nothing, so the records stay missing for the next case."""
    return [
        (call, fault) for call in ("efetch_pubmed", *[c for c in CALLS if c != "efetch_pubmed"]) for fault in FAULTS
    ]
