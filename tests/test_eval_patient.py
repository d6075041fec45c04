"""``cpqa eval patient``'s scoring: the first quote, whether a patient page leads, the gold section's ranks."""

from __future__ import annotations

from cpqa.evaluation.evaluations.patient import first_quote, in_section, led_by_patient_information, patient_answers
from cpqa.trace import Result, RetrievalTrace
from cpqa.types import Answer, PatientHit, PatientSection


def _section(key: str, text: str, kind: str = "symptoms") -> PatientSection:
    return PatientSection(
        key=key,
        site="cancer.gov (NCI)",
        collection="1_CancerGov_QA",
        page=f"1_CancerGov_QA/{key}",
        url="https://www.cancer.gov/x",
        focus="Anal Cancer",
        title="Anal Cancer Treatment (PDQ)",
        kind=kind,
        heading="Signs and symptoms",
        question="What are the symptoms of Anal Cancer ?",
        text=text,
    )


GOLD = _section("cancergov-0000005_1-2", "Signs of anal cancer include bleeding from the anus or rectum. Other text.")
OTHER = _section("cancergov-0000005_1-1", "Anal cancer is a disease in which malignant cells form.", "information")
ANSWER = Answer(
    text="Evidence extracts...\n\nFrom cancer.gov (NCI), patient information (Anal Cancer Treatment (PDQ)):\n"
    '- "Signs of anal cancer include bleeding from the anus or rectum." [NIH:cancergov-0000005_1-2]\n'
    'What research adds (PubMed):\n- Study, 2009: "Bleeding was the commonest first symptom." [PMID:123]',
    citations=["cancergov-0000005_1-2", "123"],
    direct=True,
)


def test_the_first_quote_and_what_leads_the_answer_are_read_from_the_answer():
    assert first_quote(ANSWER) == (
        "cancergov-0000005_1-2",
        "Signs of anal cancer include bleeding from the anus or rectum.",
    )
    assert led_by_patient_information(ANSWER)
    research = ANSWER.model_copy(update={"citations": ["123", "cancergov-0000005_1-2"]})
    assert not led_by_patient_information(research)


def test_each_question_is_scored_against_its_own_section():
    def ask(question: str) -> Result:
        hits = [PatientHit(section=OTHER, score=1.0), PatientHit(section=GOLD, score=0.5)]
        return Result(answer=ANSWER, trace=RetrievalTrace(patient=hits))

    scores = patient_answers(ask, [GOLD])["all"]
    assert scores["questions"] == 1 and scores["gold_at_1"] == 0.0 and scores["gold_at_3"] == 1.0
    assert scores["first_quote_in_gold"] == 1.0 and scores["led_by_patient_information"] == 1.0
    wrong = patient_answers(ask, [OTHER])["all"]
    assert wrong["gold_at_1"] == 1.0 and wrong["first_quote_in_gold"] == 0.0


def test_a_quote_of_the_gold_section_counts_by_its_key_or_its_text():
    """The store keeps a page's bulleted list as "Surgery; Radiation therapy; ..."; a quote of it cited by the gold
    section's key is of the gold section, and a section repeated on another page counts by its text."""
    listed = GOLD.model_copy(update={"text": "Treatments:\n- Surgery\n- Radiation therapy.\n- Chemotherapy."})
    assert in_section((GOLD.key, "Treatments: Surgery; Radiation therapy; Chemotherapy."), listed)
    assert in_section(("cancergov-0000099_1-2", "Signs of anal cancer include bleeding from the anus or rectum."), GOLD)
    assert not in_section((OTHER.key, "Treatments: Surgery; Radiation therapy; Chemotherapy."), listed)
