"""The published rule for whether an evidence sentence answers what was asked (cpqa.answer.intent): the question's
needs and its subject; a model-written answer judged by the same rule."""

from __future__ import annotations

import pytest

from cpqa.answer.intent import Addressing
from cpqa.answer.needs import question_needs
from cpqa.answer.verify import judged
from cpqa.answer.messages import NOT_DIRECT
from cpqa.types import Answer, Passage


@pytest.mark.parametrize(
    "question, need",
    [
        ("What are the side effects of radiotherapy for prostate cancer?", "side_effects"),
        ("How common is lymphoedema after breast surgery?", "rate"),
        ("What age do kids usually get leukemia?", "rate"),
        ("How does olaparib kill cancer cells?", "mechanism"),
        ("Does tamoxifen reduce the risk of breast cancer recurrence?", "effect"),
        ("What is water radiolysis?", "definition"),
        ("What are the different types of breast cancer?", "types"),
        ("How many kinds of skin cancer are there?", "types"),
        ("Which molecule is targeted by camrelizumab?", "finding"),
    ],
)
def test_a_question_says_what_kind_of_statement_answers_it(question, need):
    assert need in question_needs(question)


def test_a_word_inside_a_condition_s_name_is_not_a_cue():
    """ "Hereditary" names the disease in "What is hereditary angioedema?": the question asks what it is, and a
    patient page's "What is" section answers it, not its inheritance section."""
    from cpqa.answer.chooser import section_kinds
    from cpqa.rewrite.concepts import Concept

    named = [Concept(text="hereditary angioedema", kind="disease")]
    assert question_needs("What is hereditary angioedema?") == ("risk",)  # read without its concepts
    assert question_needs("What is hereditary angioedema?", named) == ("definition",)
    assert Addressing.of("What is hereditary angioedema?", named).wording == "What is it?"
    assert section_kinds("What is hereditary angioedema?", concepts=named) == frozenset({"information"})
    assert "risk" in question_needs("Is breast cancer hereditary?", [Concept(text="breast cancer", kind="disease")])


def test_a_question_about_the_kinds_of_a_thing_is_answered_by_a_sentence_listing_them():
    """ "What are the types of lung cancer?" is not answered by what lung cancer is, nor by its being one type of
    cancer; "What type of cancer is mesothelioma?" still asks what it is."""
    assert question_needs("What are the types of lung cancer?") == ("types",)
    assert question_needs("What type of cancer is mesothelioma?") == ("definition",)
    rule = Addressing.of("What are the types of lung cancer?")
    assert rule.addresses("The two main types of lung cancer are small cell and non-small cell lung cancer.")
    assert rule.addresses(
        "There are four types of lung cancer: adenocarcinoma, squamous cell, large cell and small cell."
    )
    assert not rule.addresses("Lung cancer is a disease in which malignant cells form in the tissues of the lung.")
    assert not rule.addresses("Lung cancer is the most common type of cancer in smokers.")

    listed = "Anti-tumour antibodies come in several formats, including single-targeted, bispecific and conjugated."
    assert Addressing.of("What are the types of anti-tumour antibodies?").addresses(listed)
    assert not rule.addresses("Lung cancer is common in smokers, including former smokers.")  # one named: no list


def test_a_question_asking_for_a_counted_set_asks_for_a_list():
    """ "What are the 5 common nail problems?" asks for the problems, not what a nail problem is."""
    assert question_needs("What are the 5 common nail problems?") == ("types",)
    assert question_needs("What are the three most common signs of breast cancer?") == ("symptoms",)
    assert question_needs("What is a nail problem?") == ("definition",)
    rule = Addressing.of("What are the 5 common nail problems?")
    assert rule.addresses("Common nail problems include fungal infections, ingrown nails, brittle nails and ridges.")
    assert not rule.addresses("Nail problems are changes in the colour or shape of the nails.")


def test_life_expectancy_is_answered_by_an_age_that_does_not_say_life():
    """ "Life expectancy" asks how long: "die by age 4" answers it though it never says "life"."""
    rule = Addressing.of("What is the life expectancy of Tay-Sachs disease?")
    assert rule.addresses("Children with Tay-Sachs disease usually die by age 4, from recurring infection.")
    assert not rule.addresses("Tay-Sachs disease destroys nerve cells in the brain and spinal cord.")


def test_a_cause_said_in_other_words_states_a_risk():
    rule = Addressing.of("What is the most common cause of cholesteatoma?")
    assert rule.addresses("A cholesteatoma usually occurs because of poor eustachian tube function.")
    assert rule.addresses("Cholesteatoma often results from repeated middle ear infections.")
    assert not rule.addresses("A cholesteatoma is a skin growth in the middle ear behind the eardrum.")


def test_the_topic_does_not_answer_a_question_about_side_effects():
    rule = Addressing.of("What are the side effects of radiotherapy for prostate cancer?")
    assert not rule.addresses("Most patients with localized prostate cancer prefer the lower radiation dose.")
    assert rule.addresses("Radiotherapy for prostate cancer commonly causes urinary urgency and diarrhoea.")


def test_an_able_adjective_is_named_by_its_verb():
    rule = Addressing.of("Is bowel cancer treatable with surgery?")
    assert rule.addresses("Colorectal cancer is often treated with surgery to remove the tumour.")
    assert not rule.addresses("Colorectal cancer is often found with a colonoscopy.")


def test_the_disease_may_be_named_by_the_record_but_the_treatment_by_the_sentence():
    rule = Addressing.of("Does tamoxifen reduce the risk of breast cancer recurrence?")
    record = "Adjuvant tamoxifen in early breast cancer: a randomised trial."
    assert rule.addresses("Five years of tamoxifen reduced recurrence by 39%.", record)
    assert not rule.addresses("Five years of tamoxifen reduced recurrence by 39%.")  # no disease anywhere
    assert not rule.addresses("Five years of anastrozole reduced recurrence by 39%.", record)


def test_a_model_answer_citing_nothing_that_addresses_the_question_says_so_first():
    rule = Addressing.of("What are the side effects of radiotherapy for prostate cancer?")
    evidence = [Passage(node_id="a", pmid="1", title="Prostate cancer", text="Patients preferred the lower dose.")]
    topic = Answer(text="Most patients preferred the lower radiation dose [PMID:1].", written_by="llm")
    answer = Answer(text="Radiotherapy commonly causes urinary urgency and diarrhoea [PMID:1].", written_by="llm")
    said = judged(topic, evidence, rule)
    assert said.direct is False and said.text.startswith(NOT_DIRECT)
    assert judged(answer, evidence, rule).direct is True


def test_a_condition_s_class_and_the_words_of_the_asking_are_not_its_subject():
    rule = Addressing.of("What is the cause of the rare disease cystinosis?")
    assert rule.addresses("All three types of cystinosis are caused by mutations in the CTNS gene.")
    assert not rule.addresses("The disease is rare.")
    assert Addressing.of("What is the mode of inheritance of Friedreich ataxia?").addresses(
        "Friedreich ataxia is inherited in an autosomal recessive pattern."
    )
    assert question_needs("What is usually the onset age of Friedreich's ataxia?") == ("rate",)


def test_an_abbreviation_names_what_its_record_spells_out():
    rule = Addressing.of("What is usually the age of diagnosis in Duchenne muscular dystrophy?")
    record = "Duchenne muscular dystrophy (DMD) in Europe. The mean age for DMD diagnosis was 4.9 years."
    assert rule.addresses("The mean age for DMD diagnosis was 4.9 years.", record)
    assert not rule.addresses("The mean age for DMD diagnosis was 4.9 years.", "DMD in Europe.")


def test_a_sentence_saying_this_condition_names_what_its_record_is_about():
    rule = Addressing.of("What is the mode of inheritance of Friedreich ataxia?")
    page = "Friedreich ataxia. This condition is inherited in an autosomal recessive pattern."
    assert rule.addresses("This condition is inherited in an autosomal recessive pattern.", page)
    assert not rule.addresses("This condition is inherited in an autosomal recessive pattern.")


def test_an_age_answers_a_question_about_the_age_of_onset():
    rule = Addressing.of("What is the usual age of onset of Friedreich ataxia?")
    assert rule.addresses("Friedreich ataxia usually begins in the second decade of life.")
    assert rule.addresses("Friedreich ataxia is most often diagnosed in childhood.")
    assert not rule.addresses("Friedreich ataxia damages the nerves of the spinal cord.")


def test_a_long_form_names_the_abbreviation_its_record_defines():
    rule = Addressing.of("Can HPV cause throat cancer?")
    record = "Being infected with human papillomavirus (HPV) is a risk factor for throat cancer."
    sentence = "Being infected with human papillomavirus can increase the risk of throat cancer."
    assert rule.addresses(sentence, record)
    assert not rule.addresses(sentence, "Risk factors for throat cancer.")


def test_a_sentence_about_another_condition_of_the_kind_does_not_address_the_question():
    rule = Addressing.of("What causes Japanese spotted fever?")
    assert rule.addresses("Japanese spotted fever is caused by Rickettsia japonica.")
    assert not rule.addresses("In Brazil, spotted fever is caused by Rickettsia rickettsii.")
    assert not rule.addresses("Brazilian spotted fever is caused by the bacterium Rickettsia rickettsii.")
    # a hyphenated word is read by its parts, in the question and in the sentence
    assert not Addressing.of("What causes ragged-red fiber myopathy?").names_another(
        "Ragged red fiber myopathy is caused by mitochondrial mutations."
    )
    # a phrase that is not a condition's name keeps rule 2a's tolerance
    assert Addressing.of("Is liraglutide effective for weight reduction?").phrases == ()


def test_a_drug_the_vocabulary_does_not_hold_must_be_named_by_the_sentence():
    """A drug known by its INN stem or code name is a treatment: a trial of another drug for the same disease does not
    answer "Is celecoxib effective for ALS?" (it was quoted as the answer before)."""
    rule = Addressing.of("Is celecoxib effective for amyotrophic lateral sclerosis?")
    lithium = (
        "Lithium has neuroprotective effects in cell and animal models of amyotrophic lateral sclerosis (ALS), and a "
        "small pilot study in patients with ALS showed a significant effect of lithium on survival."
    )
    celecoxib = "Celecoxib did not slow the decline in muscle strength in amyotrophic lateral sclerosis."
    assert not rule.addresses(lithium, lithium)
    assert rule.addresses(celecoxib, celecoxib)
    coded = Addressing.of("Is AMG334 effective for migraine prevention?")
    assert not coded.addresses(
        "Galcanezumab reduced monthly migraine days compared with placebo in migraine prevention."
    )


@pytest.mark.parametrize(
    "question, sentence",
    [
        ("What does FBDD stand for?", "Fragment-based drug discovery (FBDD) has grown and matured as a field."),
        ("What is the trade name of apixaban?", "Apixaban (Eliquis) is an oral direct factor Xa inhibitor."),
        ("What is another name for bimagrumab?", "We developed a human anti-ActRII antibody (bimagrumab, or BYM338)."),
    ],
)
def test_a_question_asking_for_another_name_is_answered_by_a_name_beside_its_subject(question, sentence):
    rule = Addressing.of(question)
    assert rule.needs == ("name",)
    assert rule.addresses(sentence, sentence)
    assert not rule.addresses("Bimagrumab increased thigh muscle volume in older adults.")


@pytest.mark.parametrize(
    "question, sentence, answers",
    [
        # a bracket of statistics names nothing
        (
            "What is the brand name of tamoxifen?",
            "Events were more frequent in the tamoxifen arm (RR, 0.53; P<.01).",
            False,
        ),
        # the bracket names the velocity, not PSA
        ("What does PSA stand for?", "PSA slope, PSA velocity (PSAV) and PSA doubling time were estimated.", False),
        ("What does PSA stand for?", "Prostate-specific antigen (PSA) screening remains debated.", True),
        # inside the bracket of what it names
        (
            "What does bDMARD stand for?",
            "They include biologicals (biological disease-modifying drugs, bDMARDs).",
            True,
        ),
        ("What is the trade name of sildenafil?", "Sildenafil citrate, sold as Viagra, can be bought online.", True),
    ],
)
def test_another_name_stands_beside_the_subject(question, sentence, answers):
    assert Addressing.of(question).addresses(sentence, sentence) is answers


@pytest.mark.parametrize("asking", ["done", "explained"])
def test_a_word_that_only_says_what_is_asked_is_not_the_subject(asking):
    """ "What research is being done for Dravet syndrome?", "stages of Dravet syndrome explained": a section of the
    kind named answers without repeating "done" or "explained"."""
    from cpqa.rewrite.concepts import Concept

    concepts = [Concept(text=asking, kind="other"), Concept(text="dravet syndrome", kind="disease")]
    subjects = Addressing.of("what research is being done for Dravet syndrome?", concepts).subjects
    assert [s.kind for s in subjects] == ["disease"]


def test_an_irregular_plural_names_its_singular():
    """ "the chances of a woman getting breast cancer in her lifetime" is answered by "one in eight women ...": the
    stemmer reads "women" as "woman" (and "curable" names nothing rare: a common word's -able form)."""
    from cpqa.words import content_terms, is_specialist

    assert content_terms("women men children") == content_terms("woman man child")
    rule = Addressing.of("What are the chances of a woman getting breast cancer in her lifetime?")
    sentence = "About one in eight women will develop breast cancer in her lifetime."
    assert rule.addresses(sentence, sentence)
    assert not is_specialist("curable") and is_specialist("resectable")


def test_a_hyphenated_code_of_letters_and_digits_is_a_specialist_word():
    """wordfreq reads "IL-6" as "il" and "6", each common: a code none of whose parts is an English word is rare."""
    from cpqa.words import is_specialist

    assert all(is_specialist(code) for code in ("ee-4a", "il-6", "pd-l1", "5-fu", "sars-cov-2"))
    assert not any(is_specialist(word) for word in ("type-2", "10-year", "24-hour", "x-ray", "1-2", "39c"))


def test_genetic_asks_for_a_cause_it_is_not_the_subject():
    """ "What is the genetic cause of Roberts syndrome?" is answered by "Mutations in the ESCO2 gene cause Roberts
    syndrome." ("genetic" is not a word the sentence must repeat); "Is breast cancer genetic?" asks for a risk, which
    "Breast cancer is common." does not state."""
    roberts = Addressing.of("What is the genetic cause of Roberts syndrome?")
    assert roberts.addresses("Mutations in the ESCO2 gene cause Roberts syndrome.")
    breast = Addressing.of("Is breast cancer genetic?")
    assert breast.needs == ("risk",)
    assert not breast.addresses("Breast cancer is common.")
    assert breast.addresses("Mutations in BRCA1 raise the risk of breast cancer.")


def test_signs_of_the_nervous_system_and_a_treatment_said_to_work_best_are_statements_of_what_was_asked():
    """CTCAE's nervous-system terms are signs and adverse events ("seizures", "lethargic", "coma"); "the most powerful
    treatment" recommends one. Train-split questions whose page sections state these were judged not to."""
    signs = Addressing.of("What are the clinical symptoms of an ornithine transcarbamylase deficiency?")
    otc = "ornithine transcarbamylase deficiency"
    assert signs.addresses(f"Babies with {otc} may have seizures or go into a coma.")
    assert signs.addresses(f"An infant with {otc} may be lacking in energy (lethargic).")
    assert not signs.addresses("Ornithine transcarbamylase deficiency often becomes evident in the first days of life.")
    treat = Addressing.of("What is the treatment for trichotillomania?")
    assert treat.addresses("Behavioral treatment seems to be the most powerful treatment for trichotillomania.")
    assert not treat.addresses("Trichotillomania usually begins in childhood.")


def test_a_person_is_named_as_a_person_or_by_the_adjective():
    """ "can men get breast cancer? how rare is it" is answered by "Male breast cancer represents less than 1 percent
    ...", not by the figure for women."""
    rule = Addressing.of("can men get breast cancer? how rare is it")
    assert rule.addresses("Male breast cancer represents less than 1 percent of all breast cancer diagnoses.")
    assert not rule.addresses("Breast cancer is the second most commonly diagnosed cancer in women.")
    assert Addressing.of("How common is leukemia in children?").addresses(
        "Leukemia is the most common childhood cancer."
    )


def test_how_a_condition_is_treated_is_answered_by_a_treatment_not_by_repeating_treated():
    """ "How is it treated?" asks for a recommendation as "what is the treatment?" does: "treated" is the asking, so a
    treatment section's "Surgery to remove the tumour is the main option" answers without repeating it."""
    rule = Addressing.of("How is breast cancer managed?")
    assert [s.kind for s in rule.subjects] == ["disease"]
    assert rule.addresses("Surgery to remove the tumour is recommended for most women with breast cancer.")
    assert not rule.addresses("Breast cancer is the most common cancer in women.")
    relation = Addressing.of("Which disease is treated with tebentafusp?")  # the verb is what the sentence states
    assert any(name == {"treat"} for s in relation.subjects for name in s.names)


def test_a_british_spelling_names_what_the_evidence_spells_the_us_way():
    """ "How long can you live with lymphoedema?" is answered by a sentence about lymphedema, and "leukaemia" is
    named by "leukemia": the rule reads words in one spelling (``cpqa.words.us_spelling``)."""
    from cpqa.words import content_terms

    assert content_terms("Paediatric leukaemia, tumours, diarrhoea and oesophageal haemorrhage") == content_terms(
        "pediatric leukemia, tumors, diarrhea and esophageal hemorrhage"
    )
    rule = Addressing.of("What are the symptoms of lymphoedema?")
    assert rule.addresses("Lymphedema causes swelling of an arm or a leg.")


def test_the_closest_evidence_comes_from_records_about_the_question_s_condition():
    """When nothing answers, the closest evidence is drawn from records naming the condition asked about (and every
    drug asked with), however near another record's sentence reads: kidney grafts are not kidney cancer."""
    from cpqa.answer.extractive import Sentence, not_direct_label, select_answer
    from cpqa.answer.intent import record_text
    from cpqa.answer.messages import NOT_DIRECT, NOT_DIRECT_EXTRACTS

    question = "What is the 5 year survival for kidney cancer after the kidney is taken out?"
    rule = Addressing.of(question)
    graft = Passage(
        node_id="a",
        pmid="1",
        title="Pancreas retransplantation after kidney transplantation",
        text="Patient survival and the kidney graft function were evaluated.",
    )
    cancer = Passage(
        node_id="b",
        pmid="2",
        title="Renal cell carcinoma staging",
        text="The staging system for kidney tumours predicts cancer-specific outcome.",
    )
    assert not rule.names_topic(graft.text, record_text(graft)) and rule.names_topic(cancer.text, record_text(cancer))
    ranked = [Sentence("1", graft.text, 0.8, 0), Sentence("2", cancer.text, 0.7, 1)]
    quotes, direct = select_answer(ranked, 0.3, question, [graft, cancer], rule)
    assert [q.pmid for q in quotes] == ["2"] and direct is False
    # none about the condition: the nearest evidence, said not to name it; a drug asked with must be named too
    nearest = select_answer(ranked[:1], 0.3, question, [graft], rule)[0]
    assert nearest[0].pmid == "1"
    label = not_direct_label(nearest, [graft], rule, on_page=False)
    assert label.startswith(NOT_DIRECT) and '"kidney cancer"' in label and "may be about something else" in label
    assert not_direct_label(quotes, [graft, cancer], rule, on_page=False) == NOT_DIRECT_EXTRACTS
    assert not_direct_label(nearest, [graft], Addressing.of("What does the Gleason score mean?"), False) == (
        NOT_DIRECT_EXTRACTS  # a question naming no condition: nothing to say it is not about
    )
    drug = Addressing.of("Does pioglitazone raise the risk of bladder cancer?")
    assert not drug.names_topic("Statins did not change the risk of bladder cancer.")
    statins = Passage(
        node_id="c", pmid="3", title="Statins and bladder cancer", text="Statins did not change the risk."
    )
    label = not_direct_label([Sentence("3", statins.text, 0.8, 0)], [statins], drug, on_page=False)
    assert "names all that your question asks about" in label  # a rare word alone is not named to the reader
    assert drug.names_topic("Pioglitazone use was not associated with risk.", "Pioglitazone and bladder cancer")
