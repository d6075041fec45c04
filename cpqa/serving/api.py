"""The REST API over one shared ``Pipeline`` (``cpqa serve``; FastAPI on uvicorn).

- ``POST /v1/ask``: the answer and its trace as JSON; with ``Accept: text/event-stream`` the screening result comes
  first (urgent-care message, referrals), then each stage as it starts, Claude's draft as it is written, and the
  checked answer last (server-sent events: ``screened``, ``stage``, ``draft``, ``answer``, or ``error``).
- ``POST /v1/search``: HSRDR's candidates with their provenance (paths, ranks, RRF, evidence type), no answer.
- ``GET /v1/records/{pmid}``: one record from the store (or E-utilities), with its evidence type.
- ``GET /health``: components, models and profile. OpenAPI documentation at ``/docs`` and ``/redoc``, served from the
  packaged Swagger UI and ReDoc (``docs.py``), so they work where nothing outside can be reached.

The pipeline is thread-safe; each request runs it in a worker thread, so the event loop keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Literal

import anyio.to_thread
from fastapi import FastAPI, HTTPException, Path, Request
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from cpqa.documents.study_type import evidence_type
from cpqa.pipeline import Pipeline
from cpqa.progress import Progress
from cpqa.safety.screening import InvalidQuestion, Screened
from cpqa.trace import Result
from cpqa.serving.contract import PMID_PATTERN, json_integer, question_schema
from cpqa.serving.docs import mount_docs
from cpqa.serving.guard import Guard, TokenBucket
from cpqa.types import Source

MAX_QUESTION_CHARS = 20_000  # screening keeps the question of a longer paste; beyond this the request is refused


class ErrorBody(BaseModel):
    """Every 4xx and 5xx: one line saying what was wrong. It never repeats the request (a question may hold personal
    details)."""

    error: str


class _Body(BaseModel):
    """A request body as its schema says: no unknown field, and a number where an integer is asked for."""

    model_config = ConfigDict(extra="forbid")

    _integers = field_validator("years", "top_n", "max_docs", mode="before", check_fields=False)(json_integer)


class AskRequest(_Body):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, json_schema_extra=question_schema)
    history: list[str] = Field(default_factory=list, max_length=20, description="earlier turns, oldest first")
    mode: Literal["patient", "clinician"] = "patient"
    years: int | None = Field(default=None, ge=1, le=100, description="only evidence from the last N years")
    sources: list[Source] | None = Field(default=None, description="D1 abstracts, D2 PMC reviews, D3 PMC articles")
    top_n: int | None = Field(default=None, ge=1, le=20, description="passages given to the answerer")


class SearchRequest(_Body):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, json_schema_extra=question_schema)
    years: int | None = Field(default=None, ge=1, le=100)
    sources: list[Source] | None = None
    max_docs: int | None = Field(default=None, ge=1, le=200)


def create_app(
    pipeline: Pipeline,
    *,
    token: str | None = None,
    rate_per_minute: float = 60.0,
    burst: int = 20,
    max_body: int = 64 * 1024,
    threads: int = 8,
) -> FastAPI:
    """The API over ``pipeline`` (loaded once by the caller). ``token``: bearer token every request but ``/health``
    and the docs must carry; ``rate_per_minute`` per client address (0: no limit); ``max_body`` in bytes;
    ``threads``: questions answered at once."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        yield

    app = FastAPI(
        title="CPQA",
        version="1",
        lifespan=lifespan,
        docs_url=None,  # served from the packaged copies (mount_docs), not a CDN
        redoc_url=None,
        description="Cancer questions answered from PubMed and PMC evidence, every claim cited. General "
        "information from published research, not medical advice.",
    )
    bucket = TokenBucket(rate_per_minute, burst) if rate_per_minute > 0 else None
    app.add_middleware(Guard, token=token, max_body=max_body, bucket=bucket)
    mount_docs(app)

    @app.exception_handler(InvalidQuestion)
    async def invalid_question(request: Request, exc: InvalidQuestion) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        if any(error.get("type") == "json_invalid" for error in exc.errors()):
            return JSONResponse({"error": MALFORMED_BODY}, status_code=400)  # 400 for a non-UTF-8 body too
        return JSONResponse({"error": validation_message(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and request.method == "POST":  # FastAPI's: the body could not be decoded
            return JSONResponse({"error": MALFORMED_BODY}, status_code=400)
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.get("/health", responses=_errors(429))
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "profile": pipeline.profile,
            "records": pipeline.store.count(),
            "term_backend": "local store" if pipeline.client is None else "E-utilities",
            "models": {k: v.model_dump() for k, v in pipeline.models.items()},
        }

    @app.post("/v1/ask", response_model=Result, responses={**_errors(400, 401, 413, 422, 429), 200: ASK_STREAM})
    async def ask(body: AskRequest, request: Request):
        """The checked answer and its trace; with ``Accept: text/event-stream``, the progress as server-sent events
        (``screened``, ``stage``, ``draft``, then ``answer`` or ``error``, and ``done`` last)."""
        overrides: dict[str, Any] = {
            "mode": body.mode,
            "years": body.years,
            "top_n": body.top_n,
            "sources": tuple(body.sources) if body.sources else None,
        }
        _options(pipeline, **overrides)  # bad options are a 422 before anything runs
        screened = pipeline.screen(body.question, body.history)  # once; an empty or letterless question likewise
        if "text/event-stream" in request.headers.get("accept", ""):
            return StreamingResponse(
                _events(pipeline, screened, overrides),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )
        result = await asyncio.to_thread(pipeline.ask, screened, **overrides)
        return JSONResponse(json.loads(result.model_dump_json()))

    @app.post("/v1/search", responses=_errors(400, 401, 413, 422, 429))
    async def search(body: SearchRequest) -> dict[str, Any]:
        return await asyncio.to_thread(search_documents, pipeline, body)

    @app.get("/v1/records/{pmid}", responses=_errors(400, 401, 404, 429, bad_request=BAD_PMID))
    async def record(
        pmid: str = Path(description="a PubMed ID", json_schema_extra={"pattern": PMID_PATTERN}),
    ) -> dict[str, Any]:
        if not re.fullmatch(r"[0-9]{1,9}", pmid):  # the pattern, read as a validator reads it (no "123\n")
            raise HTTPException(400, BAD_PMID)
        found = await asyncio.to_thread(_record, pipeline, pmid)
        if found is None:
            raise HTTPException(404, f"PMID {pmid} is not in the store and could not be fetched")
        return found

    return app


ASK_STREAM = {
    "description": "The answer (JSON), or with `Accept: text/event-stream` the progress as server-sent events: "
    "`screened` (the screening result, before any search; sent again, still before the answer, when a later "
    "screen raises a flag: triage by meaning, or a language model's triage pass), `stage` (each stage as it "
    "starts), `draft` (a language model's answer so far, not yet checked), then `answer` (the checked answer and "
    "trace, as the JSON response) or `error`, and `done` last, always.",
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}
BAD_PMID = "a PMID is 1 to 9 digits"
MALFORMED_BODY = "the request body is not JSON (send a UTF-8 JSON object)"
_REASONS = {
    400: "the body is malformed: not UTF-8, or not JSON",
    401: "the bearer token is missing or wrong",
    404: "not found",
    413: "the request body is too large",
    422: "the request or the question cannot be used; unknown fields are refused",
    429: "too many requests from this address; see Retry-After",
}


def _errors(*statuses: int, bad_request: str | None = None) -> dict[int | str, dict[str, Any]]:
    reasons = {**_REASONS, 400: bad_request} if bad_request else _REASONS
    return {status: {"model": ErrorBody, "description": reasons[status]} for status in statuses}


def validation_message(exc: RequestValidationError | ValidationError) -> str:
    """Which fields were wrong and why, without the values sent (a question may hold personal details). Also the
    MCP tools' message for bad arguments."""
    problems = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(problems)[:500] or "the request cannot be used"


def _options(pipeline: Pipeline, **overrides):
    try:
        return pipeline.resolve_options(**overrides)
    except ValueError as exc:
        raise HTTPException(422, str(exc)[:300]) from None


def search_documents(pipeline: Pipeline, body: SearchRequest) -> dict[str, Any]:
    """``POST /v1/search`` and the MCP ``search_pubmed`` tool: ``Pipeline.search_documents`` as JSON (the screen
    runs once, so personal details never reach a search)."""
    overrides: dict[str, Any] = {
        "years": body.years,
        "max_docs": body.max_docs,
        "sources": tuple(body.sources) if body.sources else None,
    }
    _options(pipeline, **overrides)  # bad options are a 422
    found = pipeline.search_documents(body.question, **overrides)
    screened, trace = found.screened, found.trace
    return {
        "question": screened.question,
        "urgent": screened.urgent,
        "notices": screened.notices,
        "search_intent": trace.search_intent,
        "ladder": [lv.model_dump() for lv in trace.ladder],
        "candidates": [c.model_dump() for c in trace.candidates],
        "lost_paths": trace.lost_paths,
        "warnings": trace.warnings,
    }


def _record(pipeline: Pipeline, pmid: str) -> dict[str, Any] | None:
    article = pipeline.store.get(pmid)
    if article is None and pipeline.client is not None:
        article = pipeline.client.fetch_pubmed([pmid]).get(pmid)
    if article is None:
        return None
    return {**json.loads(article.model_dump_json()), "evidence_type": evidence_type(article)}


async def _events(pipeline: Pipeline, screened: Screened, overrides: dict) -> AsyncIterator[bytes]:
    """The pipeline's progress as server-sent events, the checked answer (or the error), then ``done``."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def on_progress(event: Progress) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, ("progress", event))

    def run() -> None:
        try:
            result = pipeline.ask(screened, progress=on_progress, **overrides)
            loop.call_soon_threadsafe(queue.put_nowait, ("answer", result))
        except Exception as exc:  # noqa: BLE001 - reported to the client as an error event
            loop.call_soon_threadsafe(queue.put_nowait, ("error", pipeline.settings.redact(str(exc))[:300]))

    worker = asyncio.ensure_future(asyncio.to_thread(run))
    while True:
        kind, item = await queue.get()
        if kind == "progress":
            if item.stage == "screened" and item.screened is not None:
                yield _sse("screened", json.loads(item.screened.model_dump_json()))
            elif item.stage == "drafting":
                yield _sse("draft", {"text": item.draft or ""})
            elif item.stage != "safety":
                yield _sse("stage", {"stage": item.stage, "label": item.label})
            continue
        if kind == "answer":
            yield _sse("answer", json.loads(item.model_dump_json()))
        else:
            yield _sse("error", {"error": item})
        break
    await worker
    yield _sse("done", {})


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
