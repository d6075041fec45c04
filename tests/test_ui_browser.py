"""A real browser: `streamlit run` on 127.0.0.1 from the repository root (so the app's `.streamlit/config.toml`
applies, as for a user), Debian's Chromium driven by Playwright, questions over the shared sample. Asserts what a
patient or clinician sees: no Deploy button or developer text, the answer's citations, a readable heading on every
evidence card, plain badges for a patient, one urgent banner before any evidence; saves a screenshot of each."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url(indexed_home):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium)")
    port = free_port()
    env = {**os.environ, "CPQA_HOME": str(indexed_home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(REPO / "ui" / "app.py"),
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start within 60 s")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield chromium
        chromium.close()


DEVELOPER_TEXT = ("Deploy", "uncited_sentences", "Checked after writing", "offline:", "all-MiniLM", "Flag:")


def ask(browser, app_url, question: str, mode: str = "patient"):
    page = browser.new_page(viewport={"width": 1400, "height": 4200})  # the chat scrolls inside the page: show it whole
    page.goto(app_url)
    page.get_by_text("Cancer questions, answered from the evidence").wait_for(timeout=60_000)
    if mode == "clinician":
        page.locator("[data-testid='stSidebar']").get_by_text("clinician", exact=True).click()
    box = page.locator("[data-testid='stChatInputTextArea']")
    box.fill(question)
    box.press("Enter")
    page.locator(".evidence-card").first.wait_for(timeout=180_000)
    page.wait_for_timeout(1000)
    return page


def shown_text(page) -> str:
    return page.locator("body").inner_text()


@pytest.mark.parametrize("mode", ["patient", "clinician"])
def test_question_in_a_real_browser(app_url, browser, output_dir, mode):
    page = ask(browser, app_url, QUESTION, mode)
    assert page.locator("[data-testid='stAppDeployButton']").count() == 0
    text = shown_text(page)
    for developer in DEVELOPER_TEXT:
        assert developer not in text, developer
    assert text.count("not written by a language model") == 1
    cards = page.locator(".evidence-card")
    citations = page.locator("[data-testid='stChatMessage'] a[href^='https://pubmed.ncbi.nlm.nih.gov/']").count()
    assert cards.count() >= 1 and citations >= 1
    for i in range(cards.count()):
        heading = cards.nth(i).locator(".card-heading").inner_text().strip()
        assert len(heading.split()) >= 3 and not heading.lstrip("[0123456789] ").startswith("PMID"), heading
        badges = cards.nth(i).inner_text()
        assert ("rerank" in badges) == (mode == "clinician")
    shot = output_dir / f"{mode}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    page.close()


def test_an_urgent_question_gets_one_banner_before_any_evidence(app_url, browser, output_dir):
    page = ask(browser, app_url, "I have a fever of 39C during my chemotherapy and feel shivery, what should I do?")
    banners = page.locator("[data-testid='stAlertContentError']").filter(has_text="URGENT")
    assert banners.count() == 1
    assert banners.first.bounding_box()["y"] < page.locator(".evidence-card").first.bounding_box()["y"]
    text = shown_text(page)
    assert "Please act now" not in text and text.count("URGENT") == 1
    page.screenshot(path=str(output_dir / "urgent.png"), full_page=True)
    page.close()
