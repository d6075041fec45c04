"""A real browser over a home that holds NIH patient pages (cancer.gov's): a patient's question is answered first
from cancer.gov, attributed and linked to the page; a clinician reads the research first and the page after.
Saves the screenshots the README shows (docs/screenshots/patient-cancergov.png, clinician-cancergov.png)."""

import shutil

import pytest

from conftest import REPO, shared
from test_ui_browser import ask, browser, serving_app, shown_text  # noqa: F401 - the browser fixture

pytestmark = [pytest.mark.slow, pytest.mark.browser]
QUESTION = "What are the symptoms of bowel cancer?"


@pytest.fixture(scope="module")
def patient_url(indexed_home, tmp_path_factory):
    from cpqa.config import get_settings
    from ingestion.medquad import ingest_medquad

    home = tmp_path_factory.mktemp("patient_home")
    shutil.copytree(indexed_home, home, dirs_exist_ok=True)
    ingest_medquad(get_settings(cpqa_home=home, cpqa_profile="offline"), [shared("medquad", "1_CancerGov_QA")])
    with serving_app(home) as url:
        yield url


@pytest.mark.parametrize("mode", ["patient", "clinician"])
def test_a_patient_question_is_answered_from_cancer_gov_first(patient_url, browser, output_dir, mode):  # noqa: F811
    page = ask(browser, patient_url, QUESTION, mode)
    text = shown_text(page)
    answer = page.locator("[data-testid='stChatMessage']").last.inner_text()
    assert "From cancer.gov (NCI), patient information (Colon Cancer Treatment (PDQ), Signs and symptoms)" in answer
    assert "Signs of colon cancer include blood in the stool" in answer
    links = page.locator("[data-testid='stChatMessage'] a[href^='https://www.cancer.gov/']")
    assert links.count() >= 1  # the citation and the card link to the page, never to PubMed under a made-up PMID
    assert "pubmed.ncbi.nlm.nih.gov/cancergov" not in page.content()
    headings = [h.strip() for h in page.locator(".card-heading").all_text_contents()]
    assert any(h.lstrip("[0123456789] ").startswith("cancer.gov (NCI): Colon Cancer Treatment (PDQ)") for h in headings)
    if mode == "patient":
        assert headings[0].lstrip("[0123456789] ").startswith("cancer.gov")  # the page leads a patient's evidence
    else:
        assert text.index("[PMID") if "[PMID" in text else True
        assert not headings[0].lstrip("[0123456789] ").startswith("cancer.gov")  # research first for a clinician
    shot = output_dir / f"{mode}-cancergov.png"
    page.screenshot(path=str(shot), full_page=True)
    shutil.copy(shot, REPO / "docs" / "screenshots" / f"{mode}-cancergov.png")
    page.close()
