"""Lay words (issue 35, item 4): the table, each kind of mapping, the ordinary-English words that must stay ordinary,
and how lay words reach the rewrite: concepts of clinical terms, the Boolean ladder, the search intent, and the
synonyms of a concept Claude leaves in lay words."""

from __future__ import annotations

import csv
import json
import re
from importlib.resources import files
from pathlib import Path

import pytest

from cpqa.config import get_settings
from cpqa.models.llm import Claude
from cpqa.options import RewriteOptions
from cpqa.rewrite.concepts import process_question
from cpqa.rewrite.lay_terms import clinical_terms, gloss, lay_matches, lay_table
from cpqa.rewrite.rewriter import Rewriter
from cpqa.rewrite.vocabulary import BUILTIN, Term, Vocabulary
from cpqa.sources.boolean import parse
from cpqa.testing.anthropic_standin import Reply
from tests.conftest import shared

VOCAB = Vocabulary(BUILTIN)
QUESTIONS = json.loads((Path(__file__).parent / "data" / "lay_questions.json").read_text(encoding="utf-8"))
GLOSSARIES = (
    "NCI Dictionary",
    "MedlinePlus",
    "NHS website",
    "Cancer Research UK",
    "CDC Plain Language",
    "Disease Ontology",
)


@pytest.fixture
def rewriter(settings):
    return Rewriter(settings, vocabulary=VOCAB)


def _meshes(text: str) -> set[str | None]:
    return {m.term.mesh for m in lay_matches(text, VOCAB)}


# ------------------------------------------------------------------ the table
def test_the_table_loads_and_every_entry_names_its_source():
    table = lay_table()
    assert 80 <= len(table.terms) <= 170
    kinds = {t.kind for t in table.terms}
    assert kinds == {"body part", "symptom", "disease", "treatment", "test", "function", "person"}
    for term in table.terms:
        assert any(g in term.source for g in GLOSSARIES), term.lay
        assert all("," not in c for c in term.clinical), term.clinical  # MeSH's inverted forms are not search terms
        assert not term.contextual or term.note, f"say why {term.lay[0]!r} needs a context"
    for term in table.terms:  # every phrase, read alone, is its own row's (no phrase in two rows)
        for phrase in term.lay if not term.contextual else ():
            assert [(m.surface, m.term) for m in table.find(phrase)] == [(phrase, term)], phrase
    text = files("cpqa.rewrite").joinpath("data", "lay_terms.toml").read_text(encoding="utf-8")
    assert "2026-11-26" in text and "Nothing here was fetched" in text


def test_neoplasm_headings_are_meshs_own():
    with shared("mesh", "mesh_c04_neoplasms.csv").open(encoding="utf-8") as f:
        headings = {row["mesh_name"] for row in csv.DictReader(f)}
    named = {t.mesh for t in lay_table().terms if t.mesh and ("Neoplasm" in t.mesh or t.kind == "disease")}
    assert named - headings <= {"Colonic Polyps"}  # polyps are MeSH's digestive-system tree (C06), not C04


# ------------------------------------------------------------------ each kind of mapping
@pytest.mark.parametrize(
    "text,kind,expected",
    [
        ("What are the first signs of womb cancer?", "disease", "endometrial cancer"),
        ("How is cancer of the gullet treated?", "disease", "esophageal cancer"),
        ("Survival after voice box cancer", "disease", "laryngeal cancer"),
        ("Can you get cancer in the bum?", "disease", "anal cancer"),
        ("What is blood cancer?", "disease", "leukemia"),
        ("How long do people live with secondaries in the liver?", "disease", "liver metastases"),
        ("Has my breast cancer spread?", "disease", "metastasis"),
        ("What does a skin cancer spot look like?", "disease", "skin lesion"),
        ("Does the neck of the womb change with age?", "body part", "cervix"),
        ("Pain in my back passage after surgery", "body part", "rectum"),
        ("What does the voice box do?", "body part", "larynx"),
        ("I have a new mole on my arm", "body part", "nevus"),
        ("I have blood in my poo", "symptom", "hematochezia"),
        ("Is a lump in my breast always cancer?", "symptom", "breast mass"),
        ("My tummy feels bloated", "symptom", "abdominal bloating"),
        ("Is blood in my wee serious?", "symptom", "hematuria"),
        ("I get out of breath on the stairs", "symptom", "dyspnea"),
        ("Why am I tired all the time?", "symptom", "fatigue"),
        ("I am losing weight without trying", "symptom", "unintentional weight loss"),
        ("Will my hair fall out?", "symptom", "alopecia"),
        ("Are waterworks problems normal after surgery?", "symptom", "lower urinary tract symptoms"),
        ("Will I have chemo?", "treatment", "chemotherapy"),
        ("Side effects of chemo and radio", "treatment", "radiotherapy"),
        ("Is keyhole surgery better?", "treatment", "laparoscopic surgery"),
        ("Do hormone tablets stop breast cancer coming back?", "treatment", "endocrine therapy"),
        ("After the op to remove my prostate", "treatment", "radical prostatectomy"),
        ("Does the pill raise the risk of breast cancer?", "treatment", "oral contraceptives"),
        ("When is my smear test due?", "test", "Papanicolaou test"),
        ("How often should I have a mammogram?", "test", "mammography"),
        ("What does a PET scan show?", "test", "positron emission tomography"),
        ("Does a camera test of the bowel hurt?", "test", "colonoscopy"),
        ("What does a scan show?", "test", "diagnostic imaging"),
        ("I am going through the change and have hot flushes", "function", "menopause"),
        ("My periods are irregular", "function", "menstruation"),
        ("It stings when I wee", "function", "urination"),
        ("What age do kids usually get leukemia?", "person", "children"),
    ],
)
def test_each_kind_maps_to_clinical_terms(text, kind, expected):
    matches = lay_matches(text, VOCAB)
    assert any(m.term.kind == kind and expected in m.term.clinical for m in matches), [m.surface for m in matches]
    assert expected in clinical_terms(text, VOCAB)


def test_determiners_inside_a_phrase_and_word_forms():
    assert [m.surface for m in lay_matches("blood in his poo")] == ["blood in his poo"]
    assert [m.surface for m in lay_matches("Any lumps in my breasts?")] == ["lumps in my breasts"]
    assert [m.surface for m in lay_matches("Tumours in the Womb")] == ["Womb"]  # tumour is no lay word
    assert clinical_terms("nothing lay here: tamoxifen and breast cancer") == []


# ------------------------------------------------------------------ ordinary English stays ordinary
@pytest.mark.parametrize(
    "text,not_heading",
    [
        ("Will the change in my treatment plan affect survival?", "Menopause"),
        ("What changes in the tumour predict relapse?", "Menopause"),
        ("After the change of government, did cancer survival improve?", "Menopause"),
        ("I heard on the radio that aspirin prevents bowel cancer", "Radiotherapy"),
        ("Can listening to the radio during chemo ease anxiety?", "Radiotherapy"),
        ("Is radio frequency ablation used for liver cancer?", "Radiotherapy"),
        ("Is the radiation from a CT scan dangerous?", "Radiotherapy"),
        ("I have a wee bit of pain after surgery", "Urination"),
        ("What is the follow-up period after breast surgery?", "Menstruation"),
        ("Over a period of five years the tumour grew", "Menstruation"),
        ("Does the pill my doctor gave me for pain cause nausea?", "Contraceptives, Oral"),
        ("Does smoking a water pipe cause lung cancer?", "Urethra"),
        ("What was the secondary endpoint of the trial?", "Neoplasm Metastasis"),
        ("Does the news spread fast?", "Neoplasm Metastasis"),
        ("Should I come back to the clinic next week?", "Neoplasm Recurrence, Local"),
        ("It came back negative, is that good?", "Neoplasm Recurrence, Local"),
        ("Does growth hormone replacement therapy raise cancer risk?", "Hormone Replacement Therapy"),
        ("What is the operation of a linear accelerator?", "Surgical Procedures, Operative"),
        ("Is a hydatidiform mole cancer?", "Nevus"),
        ("I feel tired of all this waiting", "Fatigue"),
        ("Where is my belly button?", "Abdomen"),
        ("Is a boob job safe after cancer?", "Breast"),
        ("Can a ball hit to the chest cause cancer?", "Testis"),
        ("Should doctors handle cancer patients with kid gloves?", "Child"),
    ],
)
def test_ordinary_english_is_not_a_medical_concept(text, not_heading):
    assert not_heading not in _meshes(text)


def test_a_lump_sum_is_money():
    assert clinical_terms("They paid a lump sum towards my treatment") == []


def test_a_vocabulary_phrase_across_a_lay_word_wins():
    question = "Is radiation-induced leukemia common after treatment?"
    assert {m.term.mesh for m in lay_matches(question)} == {"Radiotherapy"}  # "radiation" near "treatment"
    term = Term(name="radiation-induced leukemia", mesh="Leukemia, Radiation-Induced", kind="disease")
    vocab = Vocabulary([*BUILTIN, term])
    assert lay_matches(question, vocab) == []
    concepts = process_question(question, vocab).concepts
    assert [c.mesh for c in concepts if c.core] == ["Leukemia, Radiation-Induced"]


# ------------------------------------------------------------------ into the rewrite
def test_womb_cancer_rewrites_to_endometrial_neoplasms(rewriter):
    result = rewriter.rewrite("What are the first signs of womb cancer?")
    first = result.ladder[0]
    parse(first)
    assert '"Endometrial Neoplasms"[mh]' in first and '"endometrial cancer"[tiab]' in first
    assert '"uterine cancer"[tiab]' in first
    womb = next(c for c in result.concepts if c.text == "womb cancer")
    assert womb.core and womb.kind == "disease" and womb.mesh == "Endometrial Neoplasms"
    assert result.search_intent == "What are the first signs of womb cancer (endometrial cancer or uterine cancer)?"
    assert any(n.startswith("lay words: womb cancer -> endometrial cancer") for n in result.notes)


def test_the_rewrite_reads_its_options_section(rewriter):
    """The stage's options change what it writes: the lay words' budgets, the earlier turns read, the ladder's
    AND-ed concepts (none read at their defaults behind the options' back)."""
    question = "What are the first signs of womb cancer?"
    plain = rewriter.rewrite(question)
    bare = rewriter.rewrite(question, options=RewriteOptions(lay_glossed=0, lay_searched=1))
    assert bare.search_intent == question and "(endometrial cancer" in plain.search_intent
    womb = next(c for c in bare.concepts if c.text == "womb cancer")
    assert "uterine cancer" not in womb.phrases and "uterine cancer" in womb.synonyms
    turns = ["Does tamoxifen help breast cancer?", "Is it safe?"]
    follow_up = rewriter.rewrite("What about its side effects?", turns)
    last_only = rewriter.rewrite("What about its side effects?", turns, RewriteOptions(history_turns=1))
    assert "tamoxifen" in follow_up.search_intent.lower() and "tamoxifen" not in last_only.search_intent.lower()
    many = "Does tamoxifen reduce breast cancer recurrence after surgery in postmenopausal women?"
    narrow = rewriter.rewrite(many, options=RewriteOptions(ladder_and_concepts=2))
    assert narrow.ladder[0].count(" AND ") < rewriter.rewrite(many).ladder[0].count(" AND ")


def test_blood_in_my_poo_is_rectal_bleeding(rewriter):
    result = rewriter.rewrite("Is blood in my poo a sign of bowel cancer?")
    poo = next(c for c in result.concepts if c.text == "blood in my poo")
    assert {"rectal bleeding", "blood in stool", "hematochezia"} <= set(poo.phrases)
    assert poo.phrases[0] == "rectal bleeding"  # the lay words themselves hold stopwords: not searched
    first = result.ladder[0]
    assert all(f'"{t}"[tiab]' in first for t in ("rectal bleeding", "blood in stool", "hematochezia"))
    assert '"Colorectal Neoplasms"[mh]' in first
    assert "blood in my poo (rectal bleeding or blood in stool)" in result.search_intent


def test_a_lay_concept_links_the_vocabulary_of_its_heading():
    concepts = process_question("Can chemo cure blood cancer?", VOCAB).concepts
    chemo = next(c for c in concepts if c.text == "chemo")
    assert chemo.kind == "treatment" and chemo.mesh == "Drug Therapy" and chemo.phrases[:2] == ["chemo", "chemotherapy"]
    blood = next(c for c in concepts if c.text == "blood cancer")
    assert blood.core and "hematologic neoplasms" in blood.phrases


def test_gloss_leaves_plain_text_alone_and_repeats_nothing():
    assert gloss("Does tamoxifen cause endometrial cancer?") == "Does tamoxifen cause endometrial cancer?"
    assert gloss("womb cancer, also called endometrial cancer") == (
        "womb cancer (uterine cancer or endometrial carcinoma), also called endometrial cancer"
    )
    assert gloss("chemo, then more chemo").count("(") == 1


def test_every_lay_ladder_parses_and_names_a_clinical_term(rewriter):
    named = []
    for item in QUESTIONS:
        assert lay_matches(item["question"], VOCAB), item["question"]
        result = rewriter.rewrite(item["question"])
        for expression in result.ladder:
            parse(expression)
        text = " | ".join([result.search_intent, *(p for c in result.concepts for p in [*c.phrases, *c.synonyms])])
        named.append(any(re.search(r"\b" + re.escape(t), text, re.IGNORECASE) for t in item["clinical_terms"]))
    assert len(QUESTIONS) == 40 and sum(named) >= 39, [q["question"] for q, n in zip(QUESTIONS, named) if not n]


def test_claudes_lay_concept_gets_the_clinical_synonyms(api, home):
    settings = get_settings(anthropic_api_key="sk-ant-test-LAY-1", anthropic_base_url=api.url, cpqa_llm_max_retries=1)
    api.script(
        Reply.tool(
            {
                "normalized": "What are the first signs of womb cancer?",
                "search_intent": "early symptoms of womb cancer",
                "intent": "diagnosis",
                "concepts": [
                    {"text": "womb cancer", "synonyms": ["uterine cancer"], "role": "core"},
                    {"text": "symptoms", "role": "supporting"},
                ],
                "ladder": ['"womb cancer"[tiab]', '"womb cancer"[tw]', "womb[all]"],
            }
        )
    )
    result = Rewriter(settings, llm=Claude(settings), vocabulary=VOCAB).rewrite(
        "What are the first signs of womb cancer?"
    )
    assert result.method == "llm"
    womb, symptoms = result.concepts
    assert womb.synonyms[:2] == ["uterine cancer", "endometrial cancer"] and "endometrial carcinoma" in womb.synonyms
    assert symptoms.synonyms == []
