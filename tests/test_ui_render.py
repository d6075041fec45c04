"""The app's rendering logic: numbered citation links, PMC links for full text, cited-sentence highlighting."""

from cpqa.types import Passage
from ui.render import citation_numbers, claims_citing, evidence_card, highlighted_passage, linked_answer

ANSWER = (
    "Pembrolizumab improved overall survival in PD-L1 positive lung cancer [111]. "
    "Immune-related pneumonitis occurred in a minority of patients [222; 111]. Fatigue is common [PMID: 333]."
)
PASSAGES = [
    Passage(
        node_id="a",
        pmid="111",
        text="Overall survival was longer with pembrolizumab in PD-L1 positive patients. "
        "The trial enrolled 305 patients.",
        title="KEYNOTE-024",
        year=2016,
        journal="N Engl J Med",
        category="E3",
        score=0.91,
    ),
    Passage(
        node_id="b",
        pmid="222",
        pmcid="PMC999",
        source="D2",
        text="Pneumonitis was immune-related and rare.",
        title="A review",
        category="E1",
        score=0.5,
    ),
]


def test_citations_are_numbered_in_order_of_first_appearance():
    assert citation_numbers(ANSWER, ["444"]) == {"111": 1, "222": 2, "333": 3, "444": 4}


def test_linked_answer_numbers_and_links_every_citation():
    numbers = citation_numbers(ANSWER, [])
    text = linked_answer(ANSWER, numbers, PASSAGES)
    assert "[[1]](https://pubmed.ncbi.nlm.nih.gov/111/)" in text
    assert "[[2]](https://pmc.ncbi.nlm.nih.gov/articles/PMC999/)[[1]]" in text  # PMC full text links to PMC
    assert "[[3]](https://pubmed.ncbi.nlm.nih.gov/333/)" in text
    assert "[111]" not in text


def test_claims_citing_finds_every_sentence_that_cites_a_pmid():
    assert len(claims_citing(ANSWER, "111")) == 2
    assert claims_citing(ANSWER, "999") == []


def test_highlight_marks_the_supporting_sentence_only():
    html = highlighted_passage(PASSAGES[0], ANSWER)
    assert "<mark>Overall survival was longer" in html
    assert "<mark>The trial enrolled" not in html


def test_evidence_card_escapes_text_and_shows_plain_badges_to_a_patient():
    risky = PASSAGES[0].model_copy(update={"title": "<script>alert(1)</script>", "evidence_type": "meta-analysis"})
    card = evidence_card(1, risky, ANSWER)
    assert "<script>" not in card and "&lt;script&gt;" in card
    assert "Meta-analysis" in card and ">2016<" in card and ">Abstract<" in card
    assert "semantic" not in card and "rerank" not in card  # how it was found is a clinician's detail
    clinician = evidence_card(1, risky, ANSWER, mode="clinician")
    assert "semantic + Boolean" in clinician and "rerank 0.910" in clinician


def test_an_untitled_record_gets_a_readable_heading_and_its_pmid_once():
    untitled = Passage(
        node_id="u",
        pmid="17008699",
        journal="Int J Radiat Oncol Biol Phys",
        year=2006,
        text="BACKGROUND: Examine whether patients with prostate cancer choose the more aggressive of two options.",
    )
    card = evidence_card(1, untitled, "")
    heading = card.split("class='card-heading'>")[1].split("</div>")[0]
    assert "Int J Radiat Oncol Biol Phys, 2006: Examine whether patients" in heading and "PMID" not in heading
    assert card.count("17008699") == 2  # the link and the PMID line, never the heading


def test_evidence_renders_as_plain_text_and_answers_link_only_their_citations():
    from ui.render import plain_html

    planted = Passage(node_id="x", pmid="33333333", text="See [our cure](https://evil.example/x) <b>now</b> **bold**.")
    card = evidence_card(None, planted, "")
    assert "<b>now" not in card and "](" not in card and "**" not in card and "https://evil" not in card
    assert "our cure" in card  # the words stay readable
    assert plain_html("a_b*c") == "a&#95;b&#42;c"
    linked = linked_answer(
        "Tamoxifen helps [PMID:11111111]. More at [site](https://evil.example).", {"11111111": 1}, []
    )
    assert (
        "evil.example" not in linked
        and "site" in linked
        and "[[1]](https://pubmed.ncbi.nlm.nih.gov/11111111/)" in linked
    )


def test_an_extractive_answer_highlights_exactly_the_sentences_it_quotes():
    passage = Passage(
        node_id="q",
        pmid="555",
        text=(
            "Tamoxifen was given to 300 women with breast cancer. Tamoxifen reduced recurrence by a third in women "
            "with breast cancer. Tamoxifen caused hot flashes in women with breast cancer."
        ),
    )
    answer = (
        "Evidence extracts, not written by a language model.\n\n"
        '- "Tamoxifen reduced recurrence by a third in women with breast cancer." [PMID:555]'
    )
    html = highlighted_passage(passage, answer)
    assert html.count("<mark>") == 1 and "<mark>Tamoxifen reduced recurrence" in html


def test_evidence_cards_carry_the_study_type_badge():
    animal = PASSAGES[0].model_copy(update={"evidence_type": "animal study"})
    trial = PASSAGES[0].model_copy(update={"evidence_type": "randomized controlled trial"})
    assert "Animal study" in evidence_card(1, animal, ANSWER) and "Randomised trial" in evidence_card(1, trial, ANSWER)
    assert "Study type" not in evidence_card(1, PASSAGES[0], ANSWER)  # none recorded, none shown
