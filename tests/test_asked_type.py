"""What a "which" question asks for (cpqa.answer.asked_type) and rule 3 of the addressing rule: a sentence naming the
subject and a thing of that kind answers, and is quoted first."""

from __future__ import annotations

import pytest

from cpqa.answer.asked_type import AskedType, names_drug
from cpqa.answer.extractive import Sentence, select_extracts
from cpqa.answer.intent import Addressing


@pytest.mark.parametrize(
    "question, group, head",
    [
        ("Which disease is treated with Tebentafusp?", "disorder", "disease"),
        ("List bacterial families for which delafloxacin has been shown to be effective.", "organism", "families"),
        ("Which company produces the Oncomine Dx target test?", "company", "company"),
        ("Which year was XIPERE approved by the FDA?", "date", "year"),
        ("When was tafamidis approved?", "date", "when"),
        ("Which two genes are predominantly considered by warfarin dosing algorithms?", "gene", "genes"),
        ("RV3-BB vaccine is used for prevention of which viral infection?", "disorder", "infection"),
        ("Which is the database of somatic mutations in normal cells?", "name", "database"),
    ],
)
def test_a_which_question_names_the_kind_it_asks_for(question, group, head):
    asked = AskedType.of(question)
    assert asked is not None and (asked.group, asked.head) == (group, head)


@pytest.mark.parametrize(
    "question",
    [
        "What is the role of PUMILIO1?",
        "Which is better, surgery or radiotherapy?",
        "Does tamoxifen reduce recurrence?",
        "What is the function of the protein encoded by PUMILIO1?",
        "What is the drug chloroquine used for?",
        "What are the treatments for Noonan syndrome?",
        "Which gene therapies are under investigation for Duchenne muscular dystrophy?",
        "What causes Noonan syndrome?",
        "When should tamoxifen be used after surgery?",
    ],
)
def test_other_questions_ask_for_no_kind(question):
    assert AskedType.of(question) is None


@pytest.mark.parametrize(
    "question, names, restates",
    [
        (
            "Which disease is treated with tebentafusp?",
            "Tebentafusp is approved for metastatic uveal melanoma.",
            "Tebentafusp is a bispecific fusion protein.",
        ),
        (
            "Which gene is mutated in familial hemophagocytic lymphohistiocytosis?",
            "Mutations in PRF1 cause familial hemophagocytic lymphohistiocytosis.",
            "Familial hemophagocytic lymphohistiocytosis is a rare disease of infancy.",
        ),
        (
            "Which proteins are markers of myositis?",
            "Serum aldolase is raised in most patients with myositis.",
            "Myositis is an inflammation of the muscles.",
        ),
        (
            "Which drugs are included in Triumeq?",
            "Triumeq combines dolutegravir, abacavir and lamivudine.",
            "Triumeq is taken once a day.",
        ),
        (
            "What organism causes rhombencephalitis?",
            "Infection with bacteria of the genus Listeria is the most common cause of rhombencephalitis.",
            "Rhombencephalitis is an inflammatory disease of the hindbrain.",
        ),
        (
            "Telomestatin is derived from what organism?",
            "A telomerase inhibitor, telomestatin, isolated from Streptomyces anulatus is the most potent.",
            "Telomestatin specifically inhibited telomerase without affecting reverse transcriptases.",
        ),
        (
            "Which company produces patisiran?",
            "Patisiran has been developed by Alnylam Pharmaceuticals for hereditary transthyretin amyloidosis.",
            "Patisiran should be considered in ATTRh cardiomyopathy with polyneuropathy.",
        ),
        (
            "Which year was XIPERE approved by the FDA?",
            "After the 2021 FDA approval of suprachoroidal triamcinolone (XIPERE), the device was used widely.",
            "XIPERE was approved by the FDA for macular edema in 2,021 patients.",
        ),
    ],
)
def test_a_sentence_names_a_thing_of_the_kind_the_question_does_not(question, names, restates):
    asked = AskedType.of(question)
    assert asked is not None
    assert asked.named_in(names)
    assert not asked.named_in(restates)


def test_naming_the_kind_asked_and_the_subject_addresses_a_which_question():
    """Rule 3: "treated" and "disease" say what is asked; tebentafusp is what the question is about."""
    rule = Addressing.of("Which disease is treated with tebentafusp?")
    answer = "Tebentafusp has recently been approved for metastatic uveal melanoma."
    assert rule.names_asked(answer) and rule.addresses(answer)
    assert not rule.names_asked("Pembrolizumab has recently been approved for metastatic uveal melanoma.")
    assert not rule.names_asked("Tebentafusp is a bispecific fusion protein given weekly.")


def test_a_sentence_naming_what_was_asked_is_quoted_first():
    topic = Sentence("1", "Tebentafusp is the first bispecific protein of its kind.", 0.9, 0)
    answer = Sentence("2", "Tebentafusp is approved for uveal melanoma.", 0.8, 1)
    rule = Addressing.of("Which disease is treated with tebentafusp?")
    first = select_extracts([topic, answer], 0.4, first=lambda s: rule.names_asked(s.text))
    assert [s.pmid for s in first] == ["2", "1"]
    assert [s.pmid for s in select_extracts([topic, answer], 0.4)] == ["1", "2"]


def test_the_extractive_answer_quotes_first_what_a_which_question_asks_for():
    from cpqa.answer.answerer import Answerer
    from cpqa.options import PipelineOptions
    from cpqa.safety.screening import check_question
    from cpqa.types import Passage

    topic = "The disease treated with tebentafusp is the subject of this review."
    answer = "Tebentafusp is used to treat uveal melanoma, a disease of the eye."
    passages = [
        Passage(node_id="a", pmid="1", title="Tebentafusp", text=topic),
        Passage(node_id="b", pmid="2", title="Tebentafusp approval", text=answer),
    ]
    for asked_first, lead in ((True, answer), (False, topic)):
        options = PipelineOptions().with_overrides(max_quotes=1, min_lexical_score=0.0, asked_first=asked_first)
        text = Answerer(options=options).answer(check_question("Which disease is treated with tebentafusp?"), passages)
        assert lead in text.text


@pytest.mark.parametrize(
    "text, drug", [("celecoxib", True), ("tepotinib", True), ("AMG334", True), ("peptide", False), ("oncogene", False)]
)
def test_a_drug_is_known_by_its_inn_stem_or_code_name(text, drug):
    assert names_drug(text) is drug
