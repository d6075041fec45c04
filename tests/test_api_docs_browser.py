"""``cpqa serve``'s documentation pages in a real browser with no internet: Debian's Chromium, driven by Playwright,
may reach 127.0.0.1 only (every other request is aborted and recorded). Swagger UI and ReDoc must render the
operations from the packaged copies; saves a screenshot of each under test-output/."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from conftest import CHROMIUM_ARGS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def api_url(sample_home, tmp_path_factory):
    """``cpqa serve`` itself on 127.0.0.1, with a token set: the docs are open without one."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "CPQA_HOME": str(sample_home),
        "CPQA_PROFILE": "offline",
        "HF_HUB_OFFLINE": "1",
        "CPQA_API_TOKEN": "docs-test-token-0123456789",
    }
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "cpqa.cli", "serve", "--port", str(port)], env=env, stdout=out, stderr=out
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None:
                pytest.fail(f"cpqa serve exited: {log.read_text()[-3000:]}")
            time.sleep(0.5)
        else:
            pytest.fail("cpqa serve did not start within 180 s")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.fixture
def offline_page():
    """A Chromium page that can reach 127.0.0.1 only; yields the page and the requests it tried to send elsewhere."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],  # no internet
        )
        context = chromium.new_context(viewport={"width": 1400, "height": 1600})
        elsewhere: list[str] = []

        def only_localhost(route) -> None:
            if urlsplit(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                elsewhere.append(route.request.url)
                route.abort("internetdisconnected")

        context.route("**/*", only_localhost)
        try:
            yield context.new_page(), elsewhere
        finally:
            context.close()
            chromium.close()


def test_swagger_ui_renders_every_operation_without_internet(api_url, offline_page, output_dir):
    page, elsewhere = offline_page
    page.goto(f"{api_url}/docs")
    paths = page.locator(".opblock-summary-path")
    paths.first.wait_for(timeout=30_000)
    shown = {paths.nth(i).inner_text().replace("\u200b", "") for i in range(paths.count())}
    assert {"/v1/ask", "/v1/search", "/v1/records/{pmid}", "/health"} <= shown, shown
    assert page.locator(".swagger-ui .info .title").inner_text().startswith("CPQA")
    page.locator(".opblock-summary-path", has_text="/v1/ask").click()  # an operation opens: its schema renders
    page.get_by_text("Request body").first.wait_for(timeout=10_000)
    page.screenshot(path=str(output_dir / "swagger-ui.png"), full_page=True)
    assert not elsewhere, elsewhere  # no CDN, no validator badge, no fonts


def test_redoc_renders_the_operations_without_internet(api_url, offline_page, output_dir):
    page, elsewhere = offline_page
    page.goto(f"{api_url}/redoc")
    page.locator("h1", has_text="CPQA").first.wait_for(timeout=30_000)
    page.get_by_text("/v1/ask", exact=True).first.wait_for(state="attached", timeout=30_000)
    page.screenshot(path=str(output_dir / "redoc.png"), full_page=False)
    assert not elsewhere, elsewhere
