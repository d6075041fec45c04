"""A real browser: `streamlit run` on 127.0.0.1 from the repository root (so the app's `.streamlit/config.toml`
applies, as for a user), Debian's Chromium driven by Playwright, questions over the shared sample. Asserts what a
patient or clinician sees: no Deploy button or developer text, the answer's citations, a readable heading on every
evidence card, plain badges for a patient, one urgent banner before any evidence and still in view once the answer
is complete (at desktop and phone widths), one card a record with animal and cell studies folded away for a
patient; saves a screenshot of each."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from conftest import CHROMIUM_ARGS

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving_app(home: Path):
    """``streamlit run ui/app.py`` over the data home ``home`` on a free local port; yields its URL."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium)")
    port = free_port()
    env = {**os.environ, "CPQA_HOME": str(home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
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
def app_url(indexed_home):
    with serving_app(indexed_home) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


DEVELOPER_TEXT = ("Deploy", "uncited_sentences", "Checked after writing", "offline:", "all-MiniLM", "Flag:")


def ask(browser, app_url, question: str, mode: str = "patient", viewport: dict | None = None):
    from playwright.sync_api import expect

    # by default a tall window: the chat scrolls inside the page, so show it whole
    page = browser.new_page(viewport=viewport or {"width": 1400, "height": 4200})
    page.goto(app_url)
    page.get_by_text("Cancer questions, answered from the evidence").wait_for(timeout=60_000)
    if mode == "clinician":
        page.locator("[data-testid='stSidebar']").get_by_text("clinician", exact=True).click()
    box = page.locator("[data-testid='stChatInputTextArea']")
    box.fill(question)
    box.press("Enter")
    page.locator(".evidence-card").first.wait_for(state="attached", timeout=180_000)
    provenance = page.get_by_text("How this answer was found")
    provenance.first.wait_for(timeout=60_000)  # shown once the answer is complete
    page.wait_for_function(  # ... and the input enabled again: the run that shows the answer has ended
        "() => { const box = document.querySelector(\"[data-testid='stChatInputTextArea']\"); "
        "return box && !box.disabled; }",
        timeout=60_000,
    )
    expect(provenance).to_have_count(1)  # the answering run's elements have given way to the settled page
    page.wait_for_timeout(1500)  # the chat settles (it scrolls to the answer's end)
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
        heading = cards.nth(i).locator(".card-heading").text_content().strip()  # folded cards too
        assert len(heading.split()) >= 3 and not heading.lstrip("[0123456789] ").startswith("PMID"), heading
        badges = cards.nth(i).text_content()
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


URGENT_QUESTION = "I have had chemo last week and now I have a fever of 38.5 and shivers"
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 812}}


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_urgent_message_stays_in_view_once_the_answer_is_complete(app_url, browser, output_dir, size):
    viewport = VIEWPORTS[size]
    page = ask(browser, app_url, URGENT_QUESTION, viewport=viewport)
    banner = page.locator("[data-testid='stAlertContainer']").filter(has_text="URGENT")
    assert banner.count() == 1
    box = banner.first.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], (size, box)  # in view, not scrolled off
    field = page.locator("[data-testid='stChatInput']").bounding_box()
    assert box["y"] + box["height"] <= field["y"], (box, field)  # the input box stays free
    assert box["height"] <= 0.3 * viewport["height"], box  # compact: the answer can still be read beside it
    assert banner.first.get_attribute("role") == "alert"
    assert "cannot assess symptoms" in banner.first.text_content()  # the whole message, reachable
    first = page.evaluate(  # still the first thing in the answer
        """() => {
            const answer = [...document.querySelectorAll('[data-testid="stChatMessageContent"]')].pop();
            const first = answer.querySelector('[data-testid="stVerticalBlock"]').firstElementChild;
            const alert = first.querySelector('[data-testid="stAlertContainer"]');
            return alert ? alert.innerText : first.innerText;
        }"""
    )
    assert "URGENT" in first, first
    page.screenshot(path=str(output_dir / ("urgent.png" if size == "desktop" else f"urgent-{size}.png")))
    page.close()


@pytest.mark.parametrize("mode", ["patient", "clinician"])
def test_one_card_a_record_with_animal_studies_folded_for_a_patient(app_url, browser, output_dir, mode):
    page = ask(browser, app_url, "What are the side effects of tamoxifen?", mode)
    cards = page.locator(".evidence-card")
    headings = [cards.nth(i).locator(".card-heading").text_content() for i in range(cards.count())]
    pmids = [re.search(r"PMID (\d+)", cards.nth(i).text_content()).group(1) for i in range(cards.count())]
    assert len(pmids) >= 2 and len(set(pmids)) == len(pmids) and len(set(headings)) == len(headings), pmids
    lab = page.locator("[data-testid='stExpander']").filter(has_text="Laboratory and animal studies")
    animal = [i for i in range(cards.count()) if "Animal study" in cards.nth(i).text_content()]
    assert animal  # the sample's tamoxifen side effects include mouse studies
    if mode == "patient":
        assert lab.count() == 1 and lab.locator(".evidence-card").count() == len(animal)
        assert not any(cards.nth(i).is_visible() for i in animal)  # folded away until asked for
        assert animal == list(range(cards.count() - len(animal), cards.count()))  # after the studies of people
    else:
        assert lab.count() == 0 and all(cards.nth(i).is_visible() for i in animal)
    for i in range(cards.count()):
        if cards.nth(i).is_visible():
            passage = cards.nth(i).locator(".card-passage").inner_text()
            assert len(passage) <= 700, passage  # no wall of text: the rest is behind "Show the whole abstract"
    whole = page.locator(".evidence-card details").filter(has_text="Show the whole abstract").first
    assert not whole.locator("p").first.is_visible()
    whole.locator("summary").click()
    assert whole.locator("p").first.is_visible()
    page.screenshot(path=str(output_dir / f"cards-{mode}.png"), full_page=True)
    page.close()
