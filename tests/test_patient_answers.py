"""Answers from NIH patient information: which sections a question asks for, which page is about its condition,
what leads a patient's answer and a clinician's, and how the chooser trained here scores."""

from __future__ import annotations

import pytest

from cpqa.answer.answerer import Answerer
from cpqa.answer.chooser import AnswerChooser, TRAINED_CHOOSER, names_focus, section_kinds
from cpqa.answer.messages import RESEARCH_ADDS
from cpqa.options import PipelineOptions
from cpqa.types import Passage

OPTIONS = PipelineOptions.of(chooser=False)  # the rule alone: deterministic without the model


@pytest.mark.parametrize(
    "question,kind",
    [
        ("What are the first signs of womb cancer?", "symptoms"),
        ("How common is anal cancer?", "frequency"),
        ("What is the life expectancy of lung cancer?", "outlook"),
        ("Does bladder cancer spread quickly?", "outlook"),
        ("How is acute lymphoblastic leukemia treated in adults?", "treatment"),
        ("How do they find out if you have ovarian cancer?", "exams and tests"),
        ("Does breast cancer run in families?", "inheritance"),
        ("What stage is my lymphoma if it is in my chest and neck?", "stages"),
        ("What is Hodgkin lymphoma?", "information"),
    ],
)
def test_a_question_asks_for_the_sections_its_wording_names(question, kind):
    assert kind in section_kinds(question)


def test_a_page_is_about_a_question_s_condition_by_the_distinctive_words_of_its_title():
    assert names_focus("Endometrial Cancer Treatment (PDQ)", "first signs of womb cancer endometri cancer uterin")
    assert not names_focus("hereditary diffuse gastric cancer", "How common is anal cancer?")
    assert not names_focus("Prescription and Illicit Drug Abuse", "How is adult ALL treated?")
    assert names_focus("Cancer", "How common is cancer?")  # nothing distinctive to name


PAGE = Passage(
    node_id="patient:cancergov-0000014_1-3:0",
    pmid="cancergov-0000014_1-3",
    text="Signs and symptoms of endometrial cancer include unusual vaginal bleeding or pain in the pelvis. These and "
    "other signs and symptoms may be caused by endometrial cancer or by other conditions.",
    source="D4",
    title="Endometrial Cancer Treatment (PDQ)",
    section="Signs and symptoms",
    site="cancer.gov (NCI)",
    url="https://www.cancer.gov/types/uterine/patient/endometrial-treatment-pdq",
    kind="symptoms",
)
STUDY = Passage(
    node_id="a",
    pmid="11111111",
    text="Postmenopausal bleeding was the presenting symptom of endometrial cancer in 90% of 300 women.",
    title="Presenting symptoms of endometrial cancer",
    year=2010,
    evidence_type="observational study",
)


def test_a_patient_reads_the_page_first_attributed_then_what_research_adds():
    answer = Answerer(options=OPTIONS).answer("What are the symptoms of endometrial cancer?", [PAGE, STUDY])
    text = answer.text
    assert answer.direct and not answer.abstained
    assert (
        "From cancer.gov (NCI), patient information (Endometrial Cancer Treatment (PDQ), Signs and symptoms):" in text
    )
    assert '"Signs and symptoms of endometrial cancer include unusual vaginal bleeding' in text
    assert "[NIH:cancergov-0000014_1-3]" in text and "PMID:cancergov" not in text
    assert text.index("cancer.gov") < text.index(RESEARCH_ADDS) < text.index("[PMID:11111111]")
    assert "Observational study, 2010:" in text  # research with its study type
    assert answer.citations == ["cancergov-0000014_1-3", "11111111"]


def test_a_clinician_reads_the_research_first_and_the_page_after():
    answer = Answerer(options=OPTIONS).answer(
        "What are the symptoms of endometrial cancer?", [PAGE, STUDY], "clinician"
    )
    assert answer.text.index("[PMID:11111111]") < answer.text.index("From cancer.gov (NCI)")
    assert RESEARCH_ADDS not in answer.text


def test_a_page_about_another_condition_is_not_quoted():
    other = PAGE.model_copy(update={"title": "Colon Cancer Treatment (PDQ)", "pmid": "cancergov-0000037_1-3"})
    answer = Answerer(options=OPTIONS).answer("What are the symptoms of endometrial cancer?", [other, STUDY])
    assert "cancer.gov" not in answer.text and "[PMID:11111111]" in answer.text


def test_the_trained_chooser_prefers_the_section_that_answers():
    chooser = AnswerChooser(TRAINED_CHOOSER)
    question = "What are the signs of endometrial cancer?"
    scores = chooser.scores(
        question,
        [
            f"Signs and symptoms: {PAGE.text}",
            "Treatment: There are different types of treatment for patients with endometrial cancer.",
            "Stages: After endometrial cancer has been diagnosed, tests find out if cancer cells have spread.",
        ],
    )
    assert scores.shape == (3,) and ((scores >= 0) & (scores <= 1)).all()
    assert scores[0] == scores.max()
