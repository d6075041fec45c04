"""``cpqa serve``'s API over real HTTP: uvicorn on 127.0.0.1 serving the sample pipeline, driven by httpx."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time

import httpx
import pytest

TOKEN = "test-token-0123456789"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Server:
    """uvicorn in a thread, stopped at the end."""

    def __init__(self, app):
        import uvicorn

        self.port = _free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def pipeline(sample_settings):
    from cpqa.pipeline import Pipeline

    with Pipeline(sample_settings) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def api(pipeline):
    from cpqa.serving.api import create_app

    server = _Server(create_app(pipeline, token=TOKEN, rate_per_minute=600, burst=50, max_body=4096))
    yield server
    server.stop()


def _client(api, token: str | None = TOKEN) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=api.url, headers=headers, timeout=120)


def _streamed(api, question: dict) -> list[tuple[str | None, dict]]:
    """``/v1/ask`` as server-sent events: (event, data) in the order they came."""
    events = []
    with _client(api).stream("POST", "/v1/ask", json=question, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
    return events


def test_health_is_open_and_names_the_components(api):
    body = _client(api, None).get("/health").json()
    assert body["status"] == "ok" and body["profile"] == "offline" and body["records"] > 4000
    assert {"answerer", "passage_retriever", "reranker"} <= set(body["models"])


def test_the_openapi_document_lists_every_route(api):
    paths = _client(api, None).get("/openapi.json").json()["paths"]
    assert {"/v1/ask", "/v1/search", "/v1/records/{pmid}", "/health"} <= set(paths)


def test_a_request_without_the_token_is_refused(api):
    for token in (None, "wrong"):
        response = _client(api, token).post("/v1/ask", json={"question": "What is tamoxifen?"})
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"


@pytest.mark.slow  # a cold question through the whole pipeline
def test_ask_answers_with_citations_and_the_trace_over_http(api):
    body = _client(api).post("/v1/ask", json={"question": "Does tamoxifen reduce breast cancer recurrence?"}).json()
    answer, trace = body["answer"], body["trace"]
    assert (
        answer["text"] and answer["disclaimer"] and set(answer["citations"]) <= {p["pmid"] for p in trace["passages"]}
    )
    assert trace["candidates"] and all("evidence_type" in c for c in trace["candidates"])


@pytest.mark.slow
def test_ask_streams_the_urgent_message_first_then_stages_then_the_answer(api):
    question = {"question": "My name is Ann Smith. I have a fever of 39 after chemo; is tamoxifen safe?"}
    events = _streamed(api, question)
    names = [n for n, _ in events]
    assert names[0] == "screened" and names[-2:] == ["answer", "done"] and "stage" in names  # done: always last
    screened = events[0][1]
    assert screened["urgent"] and "Ann" not in json.dumps(events)  # personal details never leave the server
    assert events[-2][1]["answer"]["urgent"] == screened["urgent"]


def test_search_returns_candidates_with_provenance_and_no_answer(api):
    body = _client(api).post("/v1/search", json={"question": "cisplatin nephrotoxicity", "max_docs": 10}).json()
    assert body["candidates"] and "answer" not in body
    kept = [c for c in body["candidates"] if c["kept"]]
    assert 0 < len(kept) <= 10 and all({"pmid", "category", "rrf", "evidence_type"} <= set(c) for c in kept)
    assert body["ladder"]


def test_records_are_served_with_their_evidence_type_and_bad_pmids_refused(api):
    client = _client(api)
    record = client.get("/v1/records/23415808").json()
    assert record["pmid"] == "23415808" and record["evidence_type"] == "clinical trial"
    assert client.get("/v1/records/99999999").status_code == 404
    assert client.get("/v1/records/12ab").status_code == 400


def test_bad_input_gets_a_clear_4xx(api):
    client = _client(api)
    assert client.post("/v1/ask", json={"question": ""}).status_code == 422
    assert client.post("/v1/ask", json={"question": "???!!!"}).status_code == 422  # no letters
    assert client.post("/v1/ask", json={"question": "What is tamoxifen?", "mode": "doctor"}).status_code == 422
    assert client.post("/v1/ask", content=b"{not json", headers={"Content-Type": "application/json"}).status_code == 400
    big = client.post("/v1/ask", json={"question": "x" * 5000})
    assert big.status_code == 413 and "4096" in big.json()["error"]

    def chunks():  # no Content-Length: the limit still holds while the body streams in
        yield b'{"question": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}'

    streamed = client.post("/v1/ask", content=chunks(), headers={"Content-Type": "application/json"})
    assert streamed.status_code == 413


def test_a_client_over_its_rate_gets_429_with_retry_after(pipeline):
    from cpqa.serving.api import create_app

    server = _Server(create_app(pipeline, rate_per_minute=6, burst=2))
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            codes = [client.get("/v1/records/23415808").status_code for _ in range(4)]
            assert codes[:2] == [200, 200] and 429 in codes[2:]
            limited = client.get("/v1/records/23415808")
            assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
            assert client.get("/health").status_code == 200  # health checks are never limited
    finally:
        server.stop()


def test_the_access_log_holds_no_question_and_no_token(api, caplog):
    with caplog.at_level(logging.INFO, logger="cpqa.serving.access"):
        _client(api).post("/v1/search", json={"question": "Jane Doe 555-0100 cisplatin", "max_docs": 3})
        deadline = time.time() + 5  # the server logs once the response has gone out, in its own thread
        while time.time() < deadline and not any(
            r.name == "cpqa.serving.access" and "/v1/search" in r.getMessage() for r in caplog.records
        ):
            time.sleep(0.05)
    lines = [r.getMessage() for r in caplog.records if r.name == "cpqa.serving.access"]
    assert any(line.startswith("POST /v1/search 200") for line in lines)
    assert not any("Jane" in line or "555" in line or TOKEN in line for line in lines)


def test_serving_without_its_extra_says_how_to_install(monkeypatch):
    """fastapi and the MCP SDK are the serve extra: a base install gets the install command, not a traceback."""
    import importlib.util

    from typer.testing import CliRunner

    from cpqa.cli import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "fastapi" else real(name, *a))
    for command in ("serve", "mcp"):
        result = CliRunner().invoke(app, [command])
        assert result.exit_code == 2 and "pip install 'cpqa[serve]'" in result.output, result.output


def test_the_contract_is_strict_and_every_error_has_one_shape(api):
    """Unknown fields are refused; empty, blank, too long and malformed requests, bad PMIDs, missing records, a
    missing token and unknown paths all answer ``{"error": "..."}``, and no error repeats what was sent."""
    client = _client(api)
    private = "Ann Smith 1954"
    cases = [
        client.post("/v1/ask", json={"question": "What is tamoxifen?", "foo": 1}),
        client.post("/v1/search", json={"question": "tamoxifen", "unknown": True}),
        client.post("/v1/ask", json={"question": ""}),
        client.post("/v1/ask", json={"question": "   "}),
        client.post("/v1/ask", json={"question": f"{private} " + "y" * 30_000}),
        client.post("/v1/ask", json={"question": private, "mode": "doctor"}),
        client.get("/v1/records/12ab"),
        client.get("/v1/records/99999999"),
        client.get("/v1/nowhere"),
        _client(api, None).post("/v1/ask", json={"question": private}),
    ]
    for response in cases:
        assert 400 <= response.status_code < 500, response.text
        body = response.json()
        assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"], body
        assert private not in response.text and "yyyy" not in response.text  # never echoed
    assert "foo" in cases[0].json()["error"] and "Extra inputs are not permitted" in cases[0].json()["error"]
    assert cases[2].status_code == cases[3].status_code == 422  # empty and blank: the same status and shape


def test_the_openapi_document_describes_every_status_and_the_event_stream(api):
    spec = _client(api, None).get("/openapi.json").json()
    ask = spec["paths"]["/v1/ask"]["post"]["responses"]
    assert {"200", "401", "413", "422", "429"} <= set(ask) and "text/event-stream" in ask["200"]["content"]
    assert "`done` last" in ask["200"]["description"]
    assert {"400", "401", "404", "429"} <= set(spec["paths"]["/v1/records/{pmid}"]["get"]["responses"])
    assert {"400", "401", "413", "422", "429"} <= set(spec["paths"]["/v1/search"]["post"]["responses"])
    error = spec["components"]["schemas"]["ErrorBody"]
    assert error["required"] == ["error"]
    assert spec["components"]["schemas"]["AskRequest"]["additionalProperties"] is False


def test_what_the_schema_allows_the_server_takes_and_what_it_refuses_is_documented(api):
    """The contract mismatches a schema-driven tester found: the question "0" and the PMID "G" were allowed by the
    schema but refused, and a body that is not UTF-8 got an undocumented 400."""
    import jsonschema

    client = _client(api)
    spec = client.get("/openapi.json").json()
    for path, model in (("/v1/ask", "AskRequest"), ("/v1/search", "SearchRequest")):
        question = spec["components"]["schemas"][model]["properties"]["question"]
        validator = jsonschema.Draft202012Validator(question)
        assert not validator.is_valid("0") and not validator.is_valid("???") and validator.is_valid("Ⅻ or ™?")
        assert client.post(path, json={"question": "0"}).status_code == 422
        error = spec["paths"][path]["post"]["responses"]["400"]
        assert error["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
        for body in (b'{"question": "caf\xe9"}', b"\xff\xfe\x00", b"{not json", b"question=tamoxifen"):
            response = client.post(path, content=body, headers={"Content-Type": "application/json"})
            assert response.status_code == 400 and set(response.json()) == {"error"}, (path, body, response.text)
    (pmid,) = spec["paths"]["/v1/records/{pmid}"]["get"]["parameters"]
    assert pmid["schema"]["pattern"] == "^[0-9]{1,9}$"
    for bad in ("G", "12ab", "1234567890", "%C2%B2", "123%0A"):  # "²".isdigit(); "123\n" passes Python's $
        assert client.get(f"/v1/records/{bad}").status_code == 400, bad


@pytest.mark.slow  # several hundred generated requests, the valid ones real questions through the pipeline
def test_a_schema_driven_tester_finds_no_contract_mismatch(pipeline, output_dir):
    """schemathesis (its CLI, as a tester runs it) reads /openapi.json and sends generated requests, valid and
    invalid, to every operation: no 5xx, every status and content type documented, every body matching its schema,
    every schema-valid request accepted and every schema-violating one refused. Valid requests may still meet the
    documented limits: an absent record (404) and a body over the size limit (413)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from cpqa.serving.api import create_app

    config = output_dir / "schemathesis.toml"
    config.write_text(
        '[checks.positive_data_acceptance]\nexpected-statuses = ["2xx", "404", "413"]\n'
        '[checks.negative_data_rejection]\nexpected-statuses = ["400", "404", "405", "413", "415", "422"]\n'
    )
    server = _Server(create_app(pipeline, token=TOKEN, rate_per_minute=0, max_body=4096))
    try:
        run = subprocess.run(
            [str(Path(sys.executable).with_name("st")), "--config-file", str(config), "--no-color", "run"]
            + [f"{server.url}/openapi.json", "--checks", "all", "--phases", "examples,coverage,fuzzing"]
            + ["--mode", "all", "--max-examples", "150", "--workers", "2", "--generation-database", "none"]
            + ["--suppress-health-check", "all", "--request-timeout", "120", "-H", f"Authorization: Bearer {TOKEN}"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=output_dir,
        )
    finally:
        server.stop()
    (output_dir / "schemathesis.txt").write_text(run.stdout + run.stderr)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    cases = re.search(r"(\d+) generated, (\d+) passed", run.stdout)
    assert cases and cases[1] == cases[2] and int(cases[1]) >= 150, run.stdout[-3000:]


def test_a_flag_the_models_triage_raises_is_streamed_before_the_answer(sample_home):
    """With a language model configured (the Anthropic stand-in plays it), the triage pass runs beside the search;
    the stream sends a second ``screened`` event carrying the raised flag before the ``answer`` event."""
    from cpqa.config import get_settings
    from cpqa.pipeline import Pipeline
    from cpqa.serving.api import create_app
    from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply

    verdict = {
        "action": "crisis",
        "category": "mood",
        "sign": "saying goodbye",
        "referral": "none",
        "language": "English",
        "english": "",
        "reason": "indirect suicidal intent",
    }
    with AnthropicStandIn() as model:
        model.script(Reply.tool(verdict, name="triage_message"))
        settings = get_settings(
            cpqa_home=sample_home, cpqa_profile="offline", anthropic_api_key="sk-standin", anthropic_base_url=model.url
        )
        with Pipeline(settings) as pipeline:
            server = _Server(create_app(pipeline, token=TOKEN, rate_per_minute=600, burst=50, max_body=4096))
            try:
                question = {
                    "question": "my dad says it would be easier for everyone if he wasn't around; is chemo hard?"
                }
                events = _streamed(server, question)
            finally:
                server.stop()
    names = [n for n, _ in events]
    screened = [data for n, data in events if n == "screened"]
    assert len(screened) == 2 and not screened[0]["urgent"] and screened[1]["urgent"].startswith("If you are")
    assert names.index("answer") > [i for i, n in enumerate(names) if n == "screened"][-1]
    assert any(f["by"] == "model" for f in events[names.index("answer")][1]["trace"]["triage"])
