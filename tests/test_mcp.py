"""``cpqa mcp`` driven by the official MCP SDK's own client over stdio: list the tools, call each."""

from __future__ import annotations

import json
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


def test_the_mcp_server_speaks_streamable_http(sample_home):
    import socket
    import subprocess
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "cpqa.cli", "mcp", "--transport", "http", "--port", str(port)],
        env=_env(sample_home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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
