"""``cpqa mcp`` driven by the official MCP SDK's own client over stdio: list the tools, call each."""

from __future__ import annotations

import json
import logging
import os
import sys

import anyio
import pytest

pytestmark = pytest.mark.slow  # a server process that loads the pipeline


def _env(home) -> dict[str, str]:
    env = {**os.environ, "CPQA_HOME": str(home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def _session_call(home, calls, url: str | None = None):
    """List the tools and make ``calls`` through the SDK's client: over stdio (a server process it starts), or
    over streamable HTTP at ``url``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "cpqa.cli", "mcp"], env=_env(home))

    async def run():
        transport = stdio_client(params) if url is None else streamable_http_client(url)
        async with transport as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            tools = await session.list_tools()
            results = {}
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                assert not result.is_error, result.content
                results[name] = json.loads(result.content[0].text)
            return tools, results

    return anyio.run(run)


def test_the_mcp_server_lists_and_answers_every_tool(sample_home):
    tools, results = _session_call(
        sample_home,
        [
            ("search_pubmed", {"question": "cisplatin nephrotoxicity", "max_docs": 5}),
            ("get_passages", {"question": "Does tamoxifen reduce breast cancer recurrence?", "top_n": 3}),
            ("answer_question", {"question": "My name is Ann Smith. Does tamoxifen reduce breast cancer recurrence?"}),
        ],
    )
    names = {tool.name for tool in tools.tools}
    assert names == {"search_pubmed", "get_passages", "answer_question"}
    assert all(tool.description and tool.input_schema["properties"] for tool in tools.tools)
    search = results["search_pubmed"]
    kept = [c for c in search["candidates"] if c["kept"]]
    assert 0 < len(kept) <= 5 and all({"pmid", "category", "rrf", "evidence_type"} <= set(c) for c in kept)
    passages = results["get_passages"]["passages"]
    assert 0 < len(passages) <= 3 and all(p["pmid"] and p["text"] for p in passages)
    answer = results["answer_question"]
    assert (
        answer["answer"]
        and answer["disclaimer"]
        and set(answer["citations"]) <= {p["pmid"] for p in answer["passages"]}
    )
    assert "Ann" not in json.dumps(results)  # personal details never reach a search or an answer
    assert list(answer)[:2] == ["urgent", "referral"]  # the referral is shown right after the urgent message


def test_the_mcp_server_speaks_streamable_http(sample_home, tmp_path):
    import socket
    import subprocess
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "mcp.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "cpqa.cli", "mcp", "--transport", "http", "--port", str(port)],
            env=_env(sample_home),
            stdout=out,
            stderr=out,
        )
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        tools, results = _session_call(
            sample_home,
            [("search_pubmed", {"question": "tamoxifen", "max_docs": 3})],
            url=f"http://127.0.0.1:{port}/mcp",
        )
        assert {tool.name for tool in tools.tools} == {"search_pubmed", "get_passages", "answer_question"}
        assert [c for c in results["search_pubmed"]["candidates"] if c["kept"]]
    finally:
        server.terminate()
        server.wait(timeout=20)
    said = log.read_text()
    assert "CPQA MCP server on" in said and "Traceback" not in said and "Logging error" not in said, said[-3000:]


def _in_process(settings, calls):
    """The tools listed and ``calls`` made through the SDK's client, connected to the server in this process."""
    from mcp.client.client import Client

    from cpqa.serving.mcp_server import build_server

    async def run():
        async with Client(build_server(settings)) as client:
            tools = await client.list_tools()
            return tools.tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def test_tool_descriptions_are_clean_sentences(sample_settings):
    tools, _ = _in_process(sample_settings, [])
    for tool in tools:
        assert tool.description and "  " not in tool.description and "\n" not in tool.description, tool.description
    (answer,) = [tool for tool in tools if tool.name == "answer_question"]
    assert "then the referral" in answer.description


def test_a_refused_question_or_bad_arguments_come_back_in_the_products_words(sample_settings, caplog):
    """A question the screen refuses, for every tool, and arguments off the input schema: an error result with the
    product's own message (never the SDK's "Error executing tool", a pydantic report or the value sent), and no
    traceback in the server's log."""
    empty = "Please type a question: the question is empty."
    letterless = "Please type a question in words: the text contains no letters."
    cases = [
        (("answer_question", {"question": ""}), empty),
        (("answer_question", {"question": "   "}), empty),
        (("search_pubmed", {"question": "12345 ???"}), letterless),
        (("get_passages", {"question": "0"}), letterless),
        (("answer_question", {"question": "What is tamoxifen?", "mode": "doctor"}), "mode: Input should be"),
        (("answer_question", {"question": 12}), "question: Input should be a valid string"),
        (("search_pubmed", {"question": "tamoxifen", "years": 0}), "years: Input should be greater than or equal"),
        (("get_passages", {}), "question: Field required"),
    ]
    with caplog.at_level(logging.INFO):
        _, results = _in_process(sample_settings, [call for call, _ in cases])
    for ((name, arguments), expected), result in zip(cases, results):
        text = result.content[0].text
        assert result.is_error and text.startswith(expected), (name, arguments, text)
        assert "Error executing tool" not in text and "validation error" not in text and "input_value" not in text
        assert "doctor" not in text and "12345" not in text  # what was sent is never repeated
    assert not [r for r in caplog.records if r.exc_info or "unexpected" in r.getMessage()], caplog.text
