"""When nothing answers and the closest research names fewer of the question's conditions than a patient page does, a
patient reads that page instead (``cpqa.answer.chooser.closest_page``)."""

from __future__ import annotations

from cpqa.answer.answerer import Answerer
from cpqa.answer.intent import Addressing
from cpqa.answer.messages import NOT_DIRECT_EXTRACTS
from cpqa.options import PipelineOptions
from cpqa.rewrite.concepts import Concept
from cpqa.safety.screening import check_question
from cpqa.types import Passage

OPTIONS = PipelineOptions.of(chooser=False)
QUESTION = "what are the chances of surviving testicular cancer if it has already spread to the lungs"
CONCEPTS = [
    Concept(text="testicular cancer", kind="disease", synonyms=["testicular neoplasms"]),
    Concept(text="spread to the lungs", kind="disease", synonyms=["lung metastasis"]),
]
STAGES = Passage(
    node_id="patient:cancergov-0000021_1-6:0",
    pmid="cancergov-0000021_1-6",
    text="The metastatic tumor is the same type of cancer as the primary tumor. For example, if testicular cancer "
    "spreads to the lung, the cancer cells in the lung are actually testicular cancer cells.",
    source="D4",
    title="Testicular Cancer Treatment (PDQ)",
    section="Stages",
    site="cancer.gov (NCI)",
    kind="stages",
)
OTHER_CANCERS = Passage(
    node_id="a",
    pmid="11296674",
    text="The chances of surviving lung cancer that has already spread are low in men who also have prostate cancer.",
    title="Synchronous prostate and lung cancer",
    year=2001,
    evidence_type="case report",
)


def page(pmid: str, text: str, title: str, kind: str, **fields) -> Passage:
    """A patient page's chunk, from the testicular cancer one with these fields."""
    update = {"node_id": f"patient:{pmid}:0", "pmid": pmid, "text": text, "title": title, "kind": kind, **fields}
    return STAGES.model_copy(update=update)


def answer(question: str, passages: list[Passage], mode: str = "patient", concepts=CONCEPTS):
    return Answerer(options=OPTIONS).answer(check_question(question), passages, mode, concepts=concepts)


def test_a_patient_reads_the_page_about_the_condition_not_research_about_another():
    shown = answer(QUESTION, [STAGES, OTHER_CANCERS])
    assert not shown.direct and not shown.abstained
    assert shown.text.startswith(NOT_DIRECT_EXTRACTS)  # said not to answer, and said to be about the topic
    assert "From cancer.gov (NCI), patient information (Testicular Cancer Treatment (PDQ), Stages):" in shown.text
    assert '"For example, if testicular cancer spreads to the lung' in shown.text
    assert "[PMID:11296674]" not in shown.text  # its record never names testicular cancer


def test_the_page_about_the_condition_is_closest_where_no_research_is_close_enough_to_quote():
    shown = answer(QUESTION, [STAGES])
    assert not shown.direct and not shown.abstained and shown.text.startswith(NOT_DIRECT_EXTRACTS)
    assert '"For example, if testicular cancer spreads to the lung' in shown.text
    assert answer(QUESTION, [STAGES], "clinician").abstained  # a clinician reads research, and none is close


def test_a_clinician_still_reads_the_closest_research():
    shown = answer(QUESTION, [STAGES, OTHER_CANCERS], "clinician")
    assert "[PMID:11296674]" in shown.text and "[NIH:" not in shown.text


def test_closest_research_naming_the_condition_keeps_its_place():
    """Research naming the conditions as often as the page is the closest evidence already."""
    study = OTHER_CANCERS.model_copy(
        update={
            "pmid": "22222222",
            "text": "Lung metastases of testicular cancer that had already spread were resected, and the chances of "
            "surviving were studied.",
            "title": "Resection of lung metastases of testicular cancer",
        }
    )
    shown = answer(QUESTION, [STAGES, study])
    assert not shown.direct and "[PMID:22222222]" in shown.text and "[NIH:" not in shown.text


def test_a_page_about_a_condition_only_the_search_s_expansion_found_is_not_quoted():
    """The search reads "lump in neck" widely; a thyroid cancer page is not about the lymphoma asked about."""
    thyroid = page(
        "medlineplus-0000891-1",
        "You should see a doctor if you have a lump or swelling in your neck.",
        "Thyroid Cancer",
        "information",
    )
    concepts = [Concept(text="lymphoma", kind="disease"), Concept(text="lump in neck", kind="disease")]
    study = OTHER_CANCERS.model_copy(update={"text": "Neck masses in adults were biopsied in 300 patients."})
    shown = answer(
        "painless lump in neck for 3 weeks, is that how lymphoma starts", [thyroid, study], concepts=concepts
    )
    assert "[NIH:" not in shown.text


def test_a_page_about_the_wider_condition_is_closest_and_its_closest_chunk_leads():
    """ "Lung Cancer" is about small cell lung cancer too; of its chunks, the one holding the closest sentence."""
    trials = page(
        "cancergov-0000032_2-7",
        "Check the list of NCI-supported cancer clinical trials that are now accepting patients with small cell lung "
        "cancer.",
        "Small Cell Lung Cancer Treatment (PDQ)",
        "research",
    )
    senior = page(
        "seniorhealth-0000043-33",
        "Small cell lung cancer spreads quickly.",
        "Lung Cancer",
        "treatment",
        site="NIHSeniorHealth (NIH)",
    )
    concepts = [Concept(text="small cell lung cancer", kind="disease", synonyms=["small cell lung carcinoma"])]
    question = "how quickly does small cell lung cancer spread compared to the other type"
    study = OTHER_CANCERS.model_copy(
        update={"text": "How quickly adenocarcinoma of the lung spreads was staged in 200 patients."}
    )
    shown = answer(question, [trials, senior, study], concepts=concepts)
    assert "[NIH:seniorhealth-0000043-33]" in shown.text and "[NIH:cancergov-0000032_2-7]" not in shown.text


def test_a_study_naming_a_condition_with_a_hyphen_names_it():
    """ "Woodhouse-Sakati syndrome" names Woodhouse Sakati syndrome: the answer said no study named it."""
    concepts = [Concept(text="woodhouse sakati syndrome", kind="disease")]
    addressing = Addressing.of("Which gene mutation is associated with Woodhouse Sakati syndrome?", concepts)
    assert addressing.topic_unnamed(["DCAF17 mutations are associated with Woodhouse-Sakati syndrome."]) == []
    assert addressing.topic_unnamed(["DCAF17 mutations cause alopecia."])
