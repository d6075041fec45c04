"""Answers from NIH patient information: which sections a question asks for, which page is about its condition,
what leads a patient's answer and a clinician's, and how the chooser trained here scores."""

from __future__ import annotations

import pytest

from cpqa.answer.answerer import Answerer
from cpqa.answer.chooser import AnswerChooser, TRAINED_CHOOSER, names_all, section_kinds
from cpqa.answer.extractive import passage_sentences, points_elsewhere
from cpqa.documents.page_focus import names_focus
from cpqa.answer.messages import NOT_DIRECT, RESEARCH_ADDS
from cpqa.options import PipelineOptions
from cpqa.rewrite.concepts import Concept
from cpqa.types import Passage
from cpqa.safety.screening import check_question

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
        ("How can you lower your chances of getting liver cancer?", "prevention"),
        ("My mum had breast cancer, does that mean it's in the family?", "inheritance"),
        ("if prostate cancer has gone into the bones does that mean it is terminal", "outlook"),
        ("does sun cream stop you getting melanoma", "prevention"),
        ("blood in my wee but no pain, could it be bladder cancer", "symptoms"),
        ("is imatinib still the best drug for CML", "treatment"),
    ],
)
def test_a_question_asks_for_the_sections_its_wording_names(question, kind):
    assert kind in section_kinds(question)


def test_a_page_is_about_a_question_s_condition_by_the_distinctive_words_of_its_title():
    assert names_focus("Endometrial Cancer Treatment (PDQ)", "first signs of womb cancer endometri cancer uterin")
    assert not names_focus("hereditary diffuse gastric cancer", "How common is anal cancer?")
    assert not names_focus("Prescription and Illicit Drug Abuse", "How is adult ALL treated?")
    assert names_focus("Cancer", "How common is cancer?")  # nothing distinctive to name


def test_a_page_about_a_cancer_needs_a_cancer_named_and_a_title_of_common_words_needs_them_all():
    assert not names_focus("Breast Cancer", "What is the origin of human breast milk bacteria?")
    assert names_focus("Endometrial Cancer Treatment (PDQ)", "first signs of womb endometrial neoplasms")
    assert not names_focus("I cell disease", "Please list symptoms of measles.")
    assert names_focus("Cell disease", "What are the symptoms of cell disease?")
    assert not names_focus("CHILD syndrome", "List symptoms of the One-and-a-half syndrome.")  # an acronym is a name
    assert names_focus("CHILD syndrome", "What causes CHILD syndrome?")
    assert names_focus("Chronic Fatigue Syndrome (CFS)", "Is chronic fatigue syndrome inherited?")  # or by its name
    listed = "Ovarian Epithelial, Fallopian Tube, and Primary Peritoneal Cancer Treatment (PDQ)"  # three growths
    assert names_focus(listed, "early signs of ovarian cancer") and not names_focus(listed, "ovarian cysts")
    assert not names_focus("Ichthyosis, leukocyte vacuoles, alopecia, and sclerosing cholangitis", "alopecia")
    bracketed = "Liver (Hepatocellular) Cancer Prevention (PDQ)"  # another name in brackets
    assert names_focus(bracketed, "liver cancer") and names_focus(bracketed, "hepatocellular carcinoma")
    assert names_focus("Plasma Cell Neoplasms (Including Multiple Myeloma) Treatment (PDQ)", "multiple myeloma tumor")


def test_the_kinds_a_question_names_come_before_those_its_needs_allow():
    question = "Which gene is primarily associated with the Saethre-Chotzen syndrome?"
    assert {"genetic changes", "inheritance"} <= section_kinds(question)
    assert "genetic changes" in section_kinds(question, named_only=True)
    assert "inheritance" not in section_kinds(question, named_only=True)
    assert "frequency" in section_kinds("How common is anal cancer?", named_only=True)  # one kind answers a rate
    assert "genetic changes" in section_kinds("What chromosomal change causes Klinefelter syndrome?", named_only=True)


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
    answer = Answerer(options=OPTIONS).answer(
        check_question("What are the symptoms of endometrial cancer?"), [PAGE, STUDY]
    )
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
        check_question("What are the symptoms of endometrial cancer?"), [PAGE, STUDY], "clinician"
    )
    assert answer.text.index("[PMID:11111111]") < answer.text.index("From cancer.gov (NCI)")
    assert RESEARCH_ADDS not in answer.text


def test_a_page_about_another_condition_is_not_quoted():
    other = PAGE.model_copy(update={"title": "Colon Cancer Treatment (PDQ)", "pmid": "cancergov-0000037_1-3"})
    answer = Answerer(options=OPTIONS).answer(
        check_question("What are the symptoms of endometrial cancer?"), [other, STUDY]
    )
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


def section(pmid: str, **fields) -> Passage:
    """A patient page's section (its first chunk), from the module's page with ``fields`` changed."""
    return PAGE.model_copy(update={"node_id": f"patient:{pmid}:0", "pmid": pmid, **fields})


INHERITANCE = section(
    "ghr-0000889-4",
    text="This condition is inherited in an autosomal dominant pattern, which means one copy of the altered gene in "
    "each cell is sufficient to cause the disorder.",
    title="Saethre-Chotzen syndrome",
    section="Inheritance",
    site="Genetics Home Reference (NLM)",
    url="https://ghr.nlm.nih.gov/condition/saethre-chotzen-syndrome",
    kind="inheritance",
)
GENETIC = INHERITANCE.model_copy(
    update={
        "node_id": "patient:ghr-0000889-3:0",
        "pmid": "ghr-0000889-3",
        "text": "Mutations in the TWIST1 gene cause Saethre-Chotzen syndrome. The TWIST1 gene provides instructions "
        "for making a protein that plays an important role in early development.",
        "section": "Genetic changes",
        "kind": "genetic changes",
    }
)


def test_the_section_of_the_kind_the_question_names_leads_though_the_search_put_another_first():
    answer = Answerer(options=OPTIONS).answer(
        check_question("Which gene is primarily associated with the Saethre-Chotzen syndrome?"), [INHERITANCE, GENETIC]
    )
    assert "[NIH:ghr-0000889-3]" in answer.text and "[NIH:ghr-0000889-4]" not in answer.text  # one section leads


def test_a_section_of_another_kind_answers_when_it_states_what_is_asked_after_those_of_the_kind_asked():
    # cancer.gov's testicular cancer pages have no "how common is it?" section; their risk section says how common
    risk = section(
        "cancergov-0000020_1-2",
        text="Testicular cancer is very rare, but it is the most common cancer found in men between the ages of 15 "
        "and 34.",
        title="Testicular Cancer Screening (PDQ)",
        section="Risk factors",
        kind="susceptibility",
    )
    silent = risk.model_copy(
        update={"node_id": "patient:cancergov-0000020_1-3:0", "pmid": "cancergov-0000020_1-3", "section": "Stages",
                "kind": "stages", "text": "Testicular cancer is staged by tests done after surgery."}
    )  # fmt: skip
    question = check_question("How common is testicular cancer?")
    answer = Answerer(options=OPTIONS).answer(question, [silent, risk])
    assert answer.direct and "[NIH:cancergov-0000020_1-2]" in answer.text and "staged by" not in answer.text
    frequency = risk.model_copy(
        update={"node_id": "patient:ghr-0000999-2:0", "pmid": "ghr-0000999-2", "section": "How common is it?",
                "kind": "frequency", "text": "Testicular cancer affects about 1 in 250 men."}
    )  # fmt: skip
    answer = Answerer(options=OPTIONS).answer(question, [risk, frequency])
    assert "[NIH:ghr-0000999-2]" in answer.text and "[NIH:cancergov-0000020_1-2]" not in answer.text
    # a question whose wording names no kind of section is answered only by a section of a kind its needs allow
    vague = check_question("Does smoking raise the risk of testicular cancer?")
    symptoms = risk.model_copy(
        update={
            "kind": "symptoms",
            "text": "Smoking and testicular cancer were found in men with a raised risk of pain.",
        }
    )
    answer = Answerer(options=OPTIONS).answer(vague, [symptoms])
    # nothing answers: the page about the condition is the closest evidence, said not to answer directly
    assert not answer.direct and answer.text.startswith(NOT_DIRECT)


def test_a_page_s_sentence_is_quoted_whole_though_it_opens_like_a_structured_abstract_s_label():
    page = section(
        "cancergov-0000024_2-7",
        text="Laser surgery: A surgical procedure that uses a laser beam as a knife to remove a tumor of endometrial "
        "cancer.",
        section="Treatment",
        kind="treatment",
    )
    answer = Answerer(options=OPTIONS).answer(check_question("How is endometrial cancer treated?"), [page])
    assert '"Laser surgery: A surgical procedure that uses a laser beam' in answer.text


def test_a_section_the_question_only_allows_leads_only_when_it_states_what_is_asked():
    # "What causes ...": a risk the inheritance section may state, but this one says nothing of a cause
    silent = INHERITANCE.model_copy(
        update={
            "text": "Parents of a child with this condition may want to talk "
            "with a genetic counselor about the condition and its care."
        }
    )
    answer = Answerer(options=OPTIONS).answer(
        check_question("What is the risk factor for Saethre-Chotzen syndrome?"), [silent]
    )
    assert "[NIH:" not in answer.text


def test_a_section_naming_no_thing_of_the_kind_a_which_question_asks_for_does_not_lead():
    vague = GENETIC.model_copy(
        update={"text": "In rare cases, Saethre-Chotzen syndrome is caused by mutations in single genes."}
    )
    question = check_question("Which gene is primarily associated with the Saethre-Chotzen syndrome?")
    assert "[NIH:" not in Answerer(options=OPTIONS).answer(question, [vague]).text
    assert "[NIH:ghr-0000889-3]" in Answerer(options=OPTIONS).answer(question, [GENETIC]).text


ALS_TREATMENT = section(
    "gard-0000309-6",
    text="Clinical trials with ALS patients showed that riluzole prolongs survival by several months. Other treatments "
    "for ALS are designed to relieve symptoms and improve the quality of life for patients.",
    title="Amyotrophic lateral sclerosis",
    section="Treatment",
    site="GARD (NIH)",
    url=None,
    kind="treatment",
)
LITHIUM_STUDY = STUDY.model_copy(
    update={
        "node_id": "b",
        "pmid": "18367867",
        "text": "We found that lithium administration slows the progression of amyotrophic lateral sclerosis in "
        "patients.",
        "title": "Lithium and amyotrophic lateral sclerosis",
        "year": 2008,
        "evidence_type": "clinical trial",
    }
)


def test_a_section_sharing_only_the_topic_gives_way_to_research_that_states_what_was_asked():
    """The treatment section of the ALS page never names lithium: research saying whether lithium helps leads."""
    question = check_question("Is lithium effective for treatment of amyotrophic lateral sclerosis?")
    answer = Answerer(options=OPTIONS).answer(question, [ALS_TREATMENT, LITHIUM_STUDY])
    assert answer.direct and "[PMID:18367867]" in answer.text and "[NIH:" not in answer.text
    # with no research stating it, the page's section is what a patient reads, said not to answer directly
    alone = Answerer(options=OPTIONS).answer(question, [ALS_TREATMENT])
    assert "[NIH:gard-0000309-6]" in alone.text
    assert not alone.direct and alone.text.startswith("The evidence found does not answer this directly")
    # nor beside research that does not answer either: the page is not quoted as if it answered
    other = LITHIUM_STUDY.model_copy(update={"text": "Amyotrophic lateral sclerosis affects motor neurons."})
    beside = Answerer(options=OPTIONS).answer(question, [ALS_TREATMENT, other])
    assert not beside.direct and "[NIH:gard-0000309-6]" in beside.text


def test_a_section_of_the_kind_named_still_leads_when_the_question_names_only_its_condition_and_the_kind():
    """ "What is the outlook ...": "outlook" names the kind of section, which need not repeat it; the rule accepts
    the research sentence, not the page's, and the page still leads."""
    outlook = ALS_TREATMENT.model_copy(
        update={
            "pmid": "gard-0000309-7",
            "section": "Outlook",
            "kind": "outlook",
            "text": "The disorder is progressive, and most people with it need help with daily activities as it "
            "advances.",
        }
    )
    study = LITHIUM_STUDY.model_copy(
        update={
            "text": "Amyotrophic lateral sclerosis is a fatal neurodegenerative disease of motor neurons, with a "
            "median survival of three years."
        }
    )
    answer = Answerer(options=OPTIONS).answer(
        check_question("What is the outlook for amyotrophic lateral sclerosis?"), [outlook, study]
    )
    assert answer.text.index("[NIH:gard-0000309-7]") < answer.text.index("[PMID:18367867]")


BREAST_WHAT_IS = section(
    "cancergov-0000027_1-1",
    title="Breast Cancer Treatment (PDQ)",
    section="What is breast cancer?",
    kind="information",
    text="Breast cancer is a disease in which malignant (cancer) cells form in the tissues of the breast.",
)


def test_a_word_naming_another_kind_of_section_is_not_excused_by_this_one():
    """ "outlook" names the outlook section, which need not repeat it; a definition section does not answer the
    outlook directly (before, a page's "What is ...?" section was called an answer to "What is the outlook for
    ...?")."""
    defining = BREAST_WHAT_IS
    question = check_question("What is the outlook for breast cancer?")
    answer = Answerer(options=OPTIONS).answer(question, [defining])
    assert "[NIH:cancergov-0000027_1-1]" in answer.text and not answer.direct
    outlook = defining.model_copy(update={"pmid": "cancergov-0000027_1-7", "section": "Outlook", "kind": "outlook"})
    assert Answerer(options=OPTIONS).answer(question, [outlook]).direct


def test_a_question_asking_only_yes_or_no_is_not_answered_by_a_section_of_its_kind_alone():
    """ "Can breast cancer be cured?" asks for a verdict: a treatment section listing that treatments exist does not
    give one, so the answer says it does not answer directly; asked beside "how is it treated?", the section answers."""
    treatment = section(
        "cancergov-0000027_1-8",
        title="Breast Cancer Treatment (PDQ)",
        section="Treatment",
        kind="treatment",
        text="There are different types of treatment for patients with breast cancer. Six types of standard treatment "
        "are used.",
    )
    verdict = Answerer(options=OPTIONS).answer(check_question("Can breast cancer be cured?"), [treatment])
    assert "[NIH:cancergov-0000027_1-8]" in verdict.text and not verdict.direct
    both = check_question("Can breast cancer be cured? How is it treated?")
    assert Answerer(options=OPTIONS).answer(both, [treatment]).direct


def test_a_section_answers_which_kinds_a_condition_comes_in_only_by_listing_them():
    """A page's definition section is quoted for "What are the types of breast cancer?" as the closest evidence, said
    so; one whose sentence lists the types answers."""
    defining = BREAST_WHAT_IS
    question = check_question("What are the types of breast cancer?")
    said = Answerer(options=OPTIONS).answer(question, [defining])
    assert "[NIH:cancergov-0000027_1-1]" in said.text and not said.direct
    listing = defining.model_copy(
        update={
            "text": f"{defining.text} The most common types of breast cancer are ductal carcinoma and lobular "
            "carcinoma."
        }
    )
    answer = Answerer(options=OPTIONS).answer(question, [listing])
    assert answer.direct and answer.text.index("ductal carcinoma") < answer.text.index("is a disease")


def test_the_sentence_of_the_section_that_answers_leads_its_quotes():
    """A section's quotes keep the page's order, but when the page's first does not state what was asked and another
    quote does, that one leads: the treatment section's line naming methotrexate before its general lead."""
    treatment = ALS_TREATMENT.model_copy(
        update={
            "pmid": "gard-0005130-4",
            "title": "Psoriasis",
            "text": "Psoriasis affects the skin of the elbows, knees and scalp. Drugs such as methotrexate are used "
            "to treat severe psoriasis and can clear the skin.",
        }
    )
    answer = Answerer(options=OPTIONS).answer(check_question("Is methotrexate used to treat psoriasis?"), [treatment])
    assert answer.text.index("methotrexate are used") < answer.text.index("affects the skin")


def test_an_abbreviation_the_question_spells_out_is_named_by_its_long_form():
    """ "What is Guillain-Barre syndrome (GBS)?": a section naming the syndrome in full answers, though it never
    writes "GBS"; before, only a later chunk that happened to write "(GBS)" could lead, quoting the outlook."""
    defining = section(
        "ninds-0000141-1",
        text="Guillain-Barre syndrome is a disorder in which the body's immune system attacks part of the peripheral "
        "nervous system.",
        title="Guillain-Barre Syndrome",
        section="What is Guillain-Barre Syndrome?",
        site="NINDS (NIH)",
        url=None,
        kind="information",
    )
    answer = Answerer(options=OPTIONS).answer(check_question("What is Guillain-Barre syndrome (GBS)?"), [defining])
    assert answer.direct and "[NIH:ninds-0000141-1]" in answer.text
    # an abbreviation the question does not spell out must still be named: the page is not quoted for it
    other = Answerer(options=OPTIONS).answer(check_question("Does GBS follow Guillain-Barre syndrome?"), [defining])
    assert "[NIH:" not in other.text
    # the long form must be named: a page about lupus does not answer what the Lupus Severity Index (LSI) is
    lupus = defining.model_copy(
        update={
            "pmid": "gard-0003582-1",
            "title": "Lupus",
            "text": "Lupus is an autoimmune disease that can affect almost every organ in the body.",
        }
    )
    index = Answerer(options=OPTIONS).answer(check_question("What is the Lupus Severity Index (LSI)?"), [lupus])
    assert "[NIH:" not in index.text


def test_the_asker_s_story_does_not_keep_a_page_from_answering():
    """ "grandad" is a word general English rarely uses, but told, not asked: the page need not name it."""
    outlook = section(
        "cancergov-0000001_3-5",
        text="Chronic lymphocytic leukemia is usually slow-growing, and many people live for years with it.",
        title="Chronic Lymphocytic Leukemia Treatment (PDQ)",
        section="Outlook (prognosis)",
        kind="outlook",
    )
    question = "what is the outlook for chronic lymphocytic leukemia, my grandad has it and they will watch and wait"
    answer = Answerer(options=OPTIONS).answer(check_question(question), [outlook])
    assert "[NIH:cancergov-0000001_3-5]" in answer.text


def test_a_stages_section_answers_a_stage_asked_about_only_when_its_quotes_name_that_stage():
    stages = section(
        "cancergov-0000037_1-6",
        text="The following stages are used for colon cancer: Stage 0; Stage I; Stage II; Stage III; Stage IV.",
        title="Colon Cancer Treatment (PDQ)",
        section="Stages",
        kind="stages",
    )
    question = check_question("what does stage 3 colon cancer mean?")
    listing = Answerer(options=OPTIONS).answer(question, [stages])
    assert "[NIH:cancergov-0000037_1-6]" in listing.text and not listing.direct  # closest evidence, said so
    third = stages.model_copy(
        update={"text": "In stage III colon cancer, cancer has spread to nearby lymph nodes but not to distant organs."}
    )
    assert Answerer(options=OPTIONS).answer(question, [third]).direct


def test_a_condition_s_own_spelling_and_abbreviation_do_not_keep_its_page_from_answering():
    """ "oesophageal" is a word general English rarely uses, but it names the condition, which the page names its own
    way ("Esophageal Cancer"); a drug the question names must still be named by the page."""
    symptoms = section(
        "medlineplus-0000300-1",
        text="Later, you may have symptoms such as: Painful or difficult swallowing; Weight loss; Coughing up blood.",
        title="Esophageal Cancer",
        section="What is Esophageal Cancer?",
        site="MedlinePlus (NLM)",
        kind="information",
    )
    # the rewrite's concept, by its names as MeSH gives them
    named = [Concept(text="oesophageal cancer", kind="disease", synonyms=["esophageal cancer"])]
    question = "My dad says food gets stuck when he swallows. Is that one of the signs of oesophageal cancer?"
    answer = Answerer(options=OPTIONS).answer(check_question(question), [symptoms], concepts=named)
    assert "[NIH:medlineplus-0000300-1]" in answer.text
    drug = "Is imatinib one of the signs of oesophageal cancer treatment working?"
    assert "[NIH:" not in Answerer(options=OPTIONS).answer(check_question(drug), [symptoms], concepts=named).text


def test_a_gene_family_is_named_by_its_numbered_members():
    assert names_all(["brca"], "Mutations in the BRCA1 and BRCA2 genes raise the risk.")
    assert not names_all(["brca"], "Mutations in the BRCT domain raise the risk.")
    assert not names_all(["brca2"], "Mutations in the BRCA1 gene raise the risk.")


def test_a_sentence_a_section_repeats_is_quoted_once():
    """PDQ summaries repeat a section's lead as its first bullet: "There are different types of treatment ..." twice."""
    lead = "There are different types of treatment for patients with adult primary liver cancer."
    treatment = section(
        "cancergov-0000034_1-7",
        text=f"{lead} Patients are treated by a team of specialists.\n- Patients may want to think about taking "
        f"part in a clinical trial.\n{lead}",
        title="Adult Primary Liver Cancer Treatment (PDQ)",
        section="Treatment",
        kind="treatment",
    )
    answer = Answerer(options=OPTIONS).answer(check_question("How is liver cancer treated?"), [treatment])
    assert answer.text.count(lead) == 1
    # ... and placed where the page first says it: before the sentences that follow it there
    second = "Patients are treated by a team of specialists."
    if second in answer.text:
        assert answer.text.index(lead) < answer.text.index(second)


def test_a_list_item_is_its_own_sentence_and_a_sentence_stating_what_is_asked_leads_the_topic():
    """PDQ's key points put a list on its own line after a sentence: "... experts in treating liver cancer.\n- Seven
    types of standard treatment are used: ...". The item is quoted alone, without its bullet; and though the rule
    accepts no sentence of the section (none repeats "adult"), the one naming treatments leads the one restating the
    topic."""
    lead = "There are different types of treatment for patients with adult primary liver cancer."
    listed = "Seven types of standard treatment are used: Surveillance; Surgery; Liver transplant; Ablation therapy."
    treatment = section(
        "cancergov-0000007_1-8",
        text=f"{lead} Patients with liver cancer are treated by a team of specialists.\n- {listed}\n{lead}",
        title="Adult Primary Liver Cancer Treatment (PDQ)",
        section="Treatment",
        kind="treatment",
    )
    assert listed in passage_sentences(treatment)
    question = check_question("What are the treatments for adult primary liver cancer?")
    answer = Answerer(options=OPTIONS).answer(question, [treatment])
    assert f'"{listed}"' in answer.text
    assert lead not in answer.text or answer.text.index(listed) < answer.text.index(lead)


def test_a_sentence_pointing_to_what_follows_or_to_another_page_is_not_quoted_and_gard_s_signs_are():
    """GARD introduces its phenotype table with "The Human Phenotype Ontology provides the following list of signs and
    symptoms for X.": quoted alone it told a patient nothing. The signs themselves, a line per frequency, are quoted."""
    pointer = "The Human Phenotype Ontology provides the following list of signs and symptoms for Waardenburg syndrome."
    signs = (
        "Signs and symptoms seen in about 90% of people with this condition (Human Phenotype Ontology): Hearing "
        "impairment; Heterochromia iridis; White forelock."
    )
    symptoms = section(
        "gard-0006380-2",
        text=f"What are the signs and symptoms of Waardenburg syndrome? {pointer}\n{signs}",
        title="Waardenburg syndrome",
        section="Signs and symptoms",
        kind="symptoms",
    )
    question = check_question("What are the symptoms of Waardenburg syndrome?")
    answer = Answerer(options=OPTIONS).answer(question, [symptoms])
    assert pointer not in answer.text and f'"{signs}"' in answer.text
    assert points_elsewhere(pointer) and points_elsewhere("Symptoms are as follows.")
    assert not points_elsewhere("The following stages are used for adult Hodgkin lymphoma: Stage I; Stage II.")
    assert not points_elsewhere("Pain below the knee is common.")
    for away in (
        "You can use the MedlinePlus Medical Dictionary to look up the definitions for these medical terms.",
        "See Drugs Approved for Breast Cancer for more information.",
        "(See the General Information section.)",
        "To view the contact information for the clinical laboratories conducting testing, click here.",
    ):
        assert points_elsewhere(away), away
    assert not points_elsewhere("Seeing spots or flashes of light can be a sign of a detached retina.")
