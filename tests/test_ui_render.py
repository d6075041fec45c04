"""The app's rendering logic: numbered citation links, PMC links for full text, cited-sentence highlighting."""

import re

from cpqa.types import Passage
from cpqa.answer.citations import citation_numbers
from ui.render import claims_citing, evidence_card, highlighted_passage, linked_answer

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


# ---------------------------------------------------------------- one card a record (issue 34)
LONG_RECORD = [
    Passage(
        node_id="r2",
        pmid="20303261",
        start=60,
        end=140,
        score=0.175,
        evidence_type="animal study",
        text="Preliminary experiments found an oral dose of tamoxifen with minimal effect on tumour growth.",
    ),
    Passage(
        node_id="r1",
        pmid="20303261",
        start=0,
        end=59,
        score=0.19,
        evidence_type="animal study",
        text="PURPOSE Tamoxifen and brivanib alaninate are two target specific agents tested in mice.",
    ),
]


def test_a_records_passages_make_one_card_in_the_order_of_the_record():
    from ui.render import record_groups

    groups = record_groups([PASSAGES[0], *LONG_RECORD, PASSAGES[1]])
    assert [[p.node_id for p in g] for g in groups] == [["a"], ["r1", "r2"], ["b"]]  # best passage's rank first
    card = evidence_card(None, LONG_RECORD, "")
    assert card.count("class='evidence-card'") == 1 and card.count("class='card-heading'") == 1
    assert card.count("PMID 20303261") == 1
    assert card.index("PURPOSE Tamoxifen") < card.index("Preliminary experiments")  # as the record reads


def test_animal_and_cell_studies_are_set_apart_from_studies_of_people():
    from ui.render import record_groups, split_preclinical

    cells = PASSAGES[1].model_copy(update={"evidence_type": "in vitro study"})
    trial = PASSAGES[0].model_copy(update={"evidence_type": "randomized controlled trial"})
    people, lab = split_preclinical(record_groups([cells, *LONG_RECORD, trial]))
    assert [g[0].pmid for g in people] == ["111"] and [g[0].pmid for g in lab] == ["222", "20303261"]


def long_abstract(n: int = 20) -> str:
    sentences = [f"Sentence {i} reports a finding about tamoxifen in the women of group {i}." for i in range(n)]
    sentences[7] = "Tamoxifen caused hot flashes in two thirds of the women treated for breast cancer."
    sentences[17] = "Hot flashes eased within a year of stopping tamoxifen in most of these women."
    return " ".join(sentences)


def test_a_card_shows_the_cited_part_capped_and_the_whole_abstract_behind_a_click():
    from ui.render import CARD_CHARACTERS

    text = long_abstract()
    wall = Passage(node_id="w", pmid="777", text=text, title="A long abstract")
    answer = (
        '- "Tamoxifen caused hot flashes in two thirds of the women treated for breast cancer." [PMID:777]\n'
        '- "Hot flashes eased within a year of stopping tamoxifen in most of these women." [PMID:777]'
    )
    card = evidence_card(1, wall, answer, record_text="BACKGROUND: " + text)
    shown, rest = card.split("<details", 1)
    assert "… <mark>Tamoxifen caused hot flashes" in shown  # what the answer cites leads the excerpt ...
    assert "… <mark>Hot flashes eased" in shown  # ... all of it, however far apart, the gaps marked
    assert len(re.sub(r"<[^>]+>", "", shown.split("class='card-passage'>")[1])) <= CARD_CHARACTERS + 20
    for cut in ("Sentence 0 ", "Sentence 19 "):  # the rest of the record is a click away
        assert cut not in shown and cut in rest
    assert "<summary" in rest and "Show the whole abstract" in rest and "<mark>Tamoxifen caused" in rest
    short = Passage(node_id="s", pmid="778", text="Tamoxifen helps. It is taken daily.", title="Short")
    assert "<details" not in evidence_card(1, short, "", record_text="RESULTS: Tamoxifen helps. It is taken daily.")
    assert "<details" not in evidence_card(1, short, "")  # nothing more to show


def test_a_quote_is_marked_whatever_its_spacing():
    passage = Passage(node_id="p", pmid="18041059", text="Events were more frequent (RR, 0.53; P= .21). An AD of 1%.")
    answer = '- "Events were more frequent (RR, 0.53; P=.21)." [PMID:18041059]'
    assert highlighted_passage(passage, answer).startswith("<mark>Events were more frequent")
    assert "<mark>" not in highlighted_passage(passage, "")


def test_a_number_written_with_a_spaced_point_is_not_cut_in_two():
    from ui.render import _SENTENCE

    assert _SENTENCE.split("Levels ranged between 1. 9 and 8. 6 ng/ml. 12 women took part. It was safe.") == [
        "Levels ranged between 1. 9 and 8. 6 ng/ml.",
        "12 women took part.",
        "It was safe.",
    ]


def test_a_patient_page_card_names_its_site_page_and_section_and_links_the_page():
    from ui.render import evidence_card, linked_answer

    page = Passage(
        node_id="patient:cancergov-0000005_1-2:0",
        pmid="cancergov-0000005_1-2",
        text="Signs of anal cancer include bleeding from the anus or rectum.",
        source="D4",
        title="Anal Cancer Treatment (PDQ)",
        section="Signs and symptoms",
        site="cancer.gov (NCI)",
        url="https://www.cancer.gov/types/anal/patient/anal-treatment-pdq",
    )
    answer = '- "Signs of anal cancer include bleeding from the anus or rectum." [NIH:cancergov-0000005_1-2]'
    import html

    card = html.unescape(evidence_card(1, page, answer, "patient", "Signs of anal cancer include bleeding. More."))
    assert "cancer.gov (NCI): Anal Cancer Treatment (PDQ), Signs and symptoms" in card
    assert "https://www.cancer.gov/types/anal/patient/anal-treatment-pdq" in card and "pubmed" not in card
    assert "PMID" not in card and "Patient information" in card and "Show the whole section" in card
    linked = linked_answer(answer, {"cancergov-0000005_1-2": 1}, [page])
    assert "[[1]](https://www.cancer.gov/types/anal/patient/anal-treatment-pdq)" in linked
