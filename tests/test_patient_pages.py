"""NIH patient pages (MedQuAD): the reader, the patient store, the patient search and ``cpqa ingest medquad``."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter

import pytest
from typer.testing import CliRunner

from conftest import shared
from cpqa.documents.page_focus import asked_with_names, focus_tier, names_focus
from cpqa.rewrite.concepts import process_question
from cpqa.rewrite.vocabulary import BUILTIN, Vocabulary
from cpqa.documents.patient_search import PatientIndex, PatientSearch, bm25_text, dense_text, saved_state
from cpqa.evaluation.data.splits import MEDQUAD_SPLITS, load_splits
from cpqa.passages.patient import section_chunks
from cpqa.sources.patient_pages import HEADINGS, clean_text, page_title, phenotype_lists, read_medquad
from cpqa.sources.patient_store import PatientStore
from cpqa.types import PatientSection
from ingestion.cli import ingest_app

# Answered pairs per collection. shared/README.md says 16,407 in all: it misses the 16 pairs of the four NINDS files
# written in MedQuAD's other schema (<doc>/<pair>), which the reader takes too.
COUNTS = {
    "1_CancerGov_QA": 729,
    "2_GARD_QA": 5389,
    "3_GHR_QA": 5430,
    "4_MPlus_Health_Topics_QA": 981,
    "5_NIDDK_QA": 1192,
    "6_NINDS_QA": 1104,
    "7_SeniorHealth_QA": 769,
    "8_NHLBI_QA_XML": 559,
    "9_CDC_QA": 270,
}
# cancer.gov questions of eval-split pages (never tuned on) and the section each was written for
GOLD = {
    "What are the symptoms of Pancreatic Cancer ?": "cancergov-0000025_1-3",
    "What are the stages of Colon Cancer ?": "cancergov-0000037_1-6",
    "Who is at risk for Penile Cancer? ?": "cancergov-0000034_1-2",
    "How to diagnose Parathyroid Cancer ?": "cancergov-0000033_1-4",
    "What is the outlook for Testicular Cancer ?": "cancergov-0000021_2-3",
    "What are the treatments for Rectal Cancer ?": "cancergov-0000037_2-7",
}


@pytest.fixture(scope="module")
def medquad():
    return shared("medquad")


@pytest.fixture(scope="module")
def every_section(medquad) -> list[PatientSection]:
    return list(read_medquad(sorted(medquad.glob("*_QA*"))))


@pytest.fixture(scope="module")
def patient_home(medquad, tmp_path_factory):
    """cancer.gov and CDC through ``cpqa ingest medquad`` into a fresh home: (home, the printed summary)."""
    home = tmp_path_factory.mktemp("patient_home")
    summary = _ingest(home, str(medquad / "1_CancerGov_QA"), str(medquad / "9_CDC_QA"))
    return home, summary


def _ingest(home, *args: str) -> dict:
    env = {"CPQA_HOME": str(home), "CPQA_PROFILE": "offline"}
    result = CliRunner().invoke(ingest_app, ["medquad", *args], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _settings(home):
    from cpqa.config import get_settings

    return get_settings(cpqa_home=home, cpqa_profile="offline")


# ---------------------------------------------------------------- the reader
def test_every_answered_pair_is_read_once_with_a_unique_key(every_section):
    assert Counter(s.collection for s in every_section) == COUNTS
    assert len(every_section) == 16_423
    keys = [s.key for s in every_section]
    assert len(set(keys)) == len(keys)
    assert all(re.fullmatch(r"[a-z]+-\d{7}[\d_]*-\d+", key) for key in keys)  # never shaped like a PMID
    pages = {page for ids in load_splits(MEDQUAD_SPLITS).values() for page in ids}
    assert {s.page for s in every_section} <= pages  # the unit the evaluation splits on
    # the per-condition files of one cancer.gov page share its Document id and qids; keys and pages stay apart
    assert {"cancergov-0000013_2_1-1", "cancergov-0000013_2_2-1"} <= set(keys)


def test_titles_and_headings_read_as_the_pages_do(every_section):
    by_page = {s.page: s for s in every_section}
    assert by_page["1_CancerGov_QA/0000001_1"].title == "Adult Acute Lymphoblastic Leukemia Treatment (PDQ)"
    assert by_page["1_CancerGov_QA/0000027_4"].title == "Breast Cancer Prevention (PDQ)"
    assert by_page["1_CancerGov_QA/0000027_5"].title == "Breast Cancer Screening (PDQ)"
    assert by_page["1_CancerGov_QA/0000027_3"].title == "Breast Cancer Treatment During Pregnancy (PDQ)"
    assert by_page["1_CancerGov_QA/0000006_3"].title == "Childhood Astrocytomas Treatment (PDQ)"  # "treament" URL
    assert by_page["3_GHR_QA/0000131"].title == "Bloom syndrome"
    assert page_title("http://www.cdc.gov/vaccines/", "", "9_CDC_QA") == "Vaccines"  # no focus: the URL's words
    kinds = {s.kind for s in every_section}
    assert len(kinds) == 16 and kinds <= set(HEADINGS)
    info = next(s for s in every_section if s.key == "cancergov-0000001_1-1")
    assert info.heading == "What is Adult Acute Lymphoblastic Leukemia?"
    assert {s.heading for s in every_section if s.kind == "exams and tests"} == {"Tests and diagnosis"}
    assert all(s.site and s.url.startswith("http") for s in every_section)


def test_text_is_cleaned_lists_kept_sentences_whole(every_section):
    for s in every_section:
        assert "  " not in s.text and "\n\n\n" not in s.text and "\t" not in s.text, s.key
        assert all(line == line.strip() and line != "-" for line in s.text.split("\n")), s.key
    sections = {s.key: s for s in every_section}
    symptoms = sections["cancergov-0000001_1-2"].text.split("\n")
    assert "- Fever or night sweats." in symptoms and "- Having many infections." in symptoms
    assert symptoms[-1].startswith("These and other signs and symptoms may be caused by adult acute lympho")
    info = sections["cancergov-0000001_1-1"].text.split("\n")
    assert info[0] == "Key Points" and info[1].startswith("- Adult acute lymphoblastic leukemia (ALL) is a type of")
    assert clean_text("Risk factors include:     -being over 50     -having fair skin") == (
        "Risk factors include:\n- being over 50\n- having fair skin"
    )
    assert clean_text("gums - like cavities. An ECG  -- a test") == "gums - like cavities. An ECG -- a test"
    assert (
        clean_text("Summary : Radiation therapy is a cancer treatment.") == "Radiation therapy is a cancer treatment."
    )
    # MedlinePlus ends a list with a wide gap, not a full stop, before the next paragraph
    assert clean_text(
        "It is more common in men who       - Have had X    - Have a family history       Symptoms vary."
    ) == ("It is more common in men who\n- Have had X\n- Have a family history\nSymptoms vary.")


def test_gard_s_phenotype_table_is_read_as_lines_a_patient_can_use(every_section):
    raw = (
        "What are the signs and symptoms of X syndrome? The Human Phenotype Ontology provides the following list of "
        "signs and symptoms for X syndrome. If the information is available, the table below includes how often the "
        "symptom is seen in people with this condition. You can use the MedlinePlus Medical Dictionary to look up the "
        "definitions for these medical terms. Signs and Symptoms Approximate number of patients (when available) "
        "Hearing impairment 90% Short nose 90% Ptosis 7.5% Cataract 3/4 Autosomal dominant inheritance - Scoliosis - "
        "The Human Phenotype Ontology (HPO) has collected information on how often a sign or symptom occurs in a "
        "condition. In these cases, the sign or symptom may be rare or common."
    )
    assert phenotype_lists(raw).split("\n") == [
        "What are the signs and symptoms of X syndrome? The Human Phenotype Ontology provides the following list of "
        "signs and symptoms for X syndrome. You can use the MedlinePlus Medical Dictionary to look up the definitions "
        "for these medical terms.",
        "Signs and symptoms seen in about 90% of people with this condition (Human Phenotype Ontology): Hearing "
        "impairment; Short nose.",
        "Signs and symptoms seen in about 7.5% of people with this condition (Human Phenotype Ontology): Ptosis.",
        "Signs and symptoms seen in 3 of 4 people with this condition in one study (Human Phenotype Ontology): "
        "Cataract.",
        "Other signs and symptoms of this condition, how often not known (Human Phenotype Ontology): Scoliosis.",
        "Inheritance of this condition (Human Phenotype Ontology): Autosomal dominant inheritance.",
        "The Human Phenotype Ontology (HPO) has collected information on how often a sign or symptom occurs in a "
        "condition. In these cases, the sign or symptom may be rare or common.",
    ]
    assert phenotype_lists("Hearing loss is common. 90% have it.") == "Hearing loss is common. 90% have it."
    gard = [s for s in every_section if s.collection == "2_GARD_QA" and s.kind == "symptoms"]
    assert sum("(Human Phenotype Ontology)" in s.text for s in gard) == 2243  # every table MedQuAD holds
    assert not any("table below" in s.text or "(when available)" in s.text for s in gard)
    waardenburg = next(s.text for s in gard if s.key == "gard-0006380-2").split("\n")
    assert waardenburg[1].startswith("Signs and symptoms seen in about 90% of people with this condition")
    assert waardenburg[-1].startswith("The Human Phenotype Ontology (HPO) has collected information")
    assert "Heterochromia iridis; Hypopigmented skin patches" in waardenburg[1]


def test_a_list_is_one_sentence_with_the_line_that_introduces_it():
    text = "Signs include:\n- fever\n- feeling tired\nIt is also more common in men who\n- Have had X\n- Smoke\nOther."
    assert section_chunks(text, 100) == [
        "Signs include: fever; feeling tired. It is also more common in men who: Have had X; Smoke. Other."
    ]
    either = "In stage IIIA:\n- It has spread to 3 nodes; or\n- It has spread to 4 nodes"
    assert section_chunks(either, 100) == ["In stage IIIA: It has spread to 3 nodes; or It has spread to 4 nodes."]
    nested = "Key Points\n- Avoid risks.\n- Risks include:\n- Hepatitis B\n- Protections include:\n- A vaccine"
    assert section_chunks(nested, 100) == [
        "Avoid risks.\n- Risks include: Hepatitis B; Protections include: A vaccine."
    ]
    key_points = "Key Points\n- Testicular cancer can usually be cured.\n- It is rare."
    assert section_chunks(key_points, 100) == ["Testicular cancer can usually be cured. It is rare."]  # sentences


def test_bad_input_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no MedQuAD XML"):
        list(read_medquad([tmp_path / "empty"]))
    bad = tmp_path / "bad" / "0000001.xml"
    bad.parent.mkdir()
    bad.write_text("<Document id='0000001'><QAPairs>", encoding="utf-8")
    with pytest.raises(ValueError, match="0000001.xml"):
        list(read_medquad([bad.parent]))
    bad.write_text("<html><body/></html>", encoding="utf-8")
    with pytest.raises(ValueError, match="not a MedQuAD page"):
        list(read_medquad([bad]))
    with pytest.raises(FileNotFoundError):
        list(read_medquad([tmp_path / "missing"]))


# ---------------------------------------------------------------- the store
def _section(key: str, page: str, text: str) -> PatientSection:
    return PatientSection(
        key=key, site="CDC", collection="9_CDC_QA", page=page, url="http://www.cdc.gov/x", focus="X", title="X",
        kind="information", heading="What is X?", question="what is x?", text=text,
    )  # fmt: skip


def test_store_round_trip_idempotent_and_thread_safe(tmp_path):
    sections = [
        _section(f"cdc-000000{i}-{j}", f"9_CDC_QA/000000{i}", f"text {i} {j}") for i in (1, 2) for j in (1, 2, 10)
    ]
    with PatientStore(tmp_path / "patient.sqlite") as store:
        assert store.upsert(sections).as_dict() == {"added": 6, "updated": 0, "unchanged": 0}
        digest = store.digest()
        assert store.upsert(sections).as_dict() == {"added": 0, "updated": 0, "unchanged": 6}
        assert store.digest() == digest and store.count() == 6
        changed = sections[0].model_copy(update={"text": "new text"})
        assert store.upsert([changed]).as_dict() == {"added": 0, "updated": 1, "unchanged": 0}
        assert store.digest() != digest and store.count() == 6
        assert store.get(["nope", sections[1].key, changed.key]) == {sections[1].key: sections[1], changed.key: changed}
        assert [s.key for s in store.by_page("9_CDC_QA/0000002")] == [
            "cdc-0000002-1",
            "cdc-0000002-2",
            "cdc-0000002-10",
        ]
        assert [s.key for s in store.iter_sections(batch=4)] == [s.key for s in sections]
        assert store.collections() == {"9_CDC_QA": 6}
        errors: list[BaseException] = []

        def read() -> None:
            try:
                for _ in range(20):
                    assert len(store.get(s.key for s in sections)) == 6
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors


def test_the_index_follows_the_store_and_never_reads_the_question(tmp_path):
    sections = [_section("cdc-0000001-1", "9_CDC_QA/0000001", "Ticks spread Lyme disease.")]
    sections.append(_section("cdc-0000002-1", "9_CDC_QA/0000002", "Mosquitoes spread malaria."))
    with PatientStore(tmp_path / "patient.sqlite") as store:
        store.upsert(sections)
        directory = tmp_path / "index"
        search = PatientSearch.build(store, None, directory)  # no encoder: BM25 alone
        assert [h.section.key for h in search.search("lyme ticks")] == ["cdc-0000001-1"]
        assert search.search("qwertyuiop") == [] and search.search("of the") == []  # no indexed word
        assert saved_state(store, None, directory) is not None
        store.upsert([sections[0].model_copy(update={"text": "Deer ticks spread Lyme disease."})])
        assert saved_state(store, None, directory) is None  # stale: rebuilt when opened
        assert "Deer" in PatientSearch(store, directory).search("deer")[0].section.text
        assert PatientIndex.open(store, None, directory).state["digest"] == store.digest()
    asked = sections[0].model_copy(update={"question": "what spreads lyme disease?"})
    assert bm25_text(asked) == bm25_text(sections[0]) and dense_text(asked) == dense_text(sections[0])


# ---------------------------------------------------------------- ingest and search, end to end
def test_a_page_about_the_condition_asked_comes_before_another_condition_s_section_of_the_kind_asked(tmp_path):
    def page(key: str, title: str, kind: str, text: str) -> PatientSection:
        return _section(key, key.rsplit("-", 1)[0], text).model_copy(
            update={"title": title, "focus": title, "kind": kind}
        )

    other = page("cdc-0000001-1", "Prostate Cancer", "frequency", "Prostate cancer is common in men: how common is it?")
    asked = page("cdc-0000002-1", "Testicular Cancer", "susceptibility", "Testicular cancer is rare in men.")
    with PatientStore(tmp_path / "patient.sqlite") as store:
        store.upsert([other, asked])
        search = PatientSearch.build(store, None, tmp_path / "index")
        question = "how common is testicular cancer in men"
        kinds = frozenset({"frequency"})
        assert search.search(question, k=1, kinds=kinds, pool=10)[0].section.key == other.key  # the kind alone
        found = search.search(
            question, k=1, kinds=kinds, pool=10, asked=f"{question} Testicular Neoplasms", focus_pool=10
        )
        assert found[0].section.key == asked.key
    # a question about a growth: the growth's page before another page about the same organ
    disease = page(
        "cdc-0000003-1", "Kidney Disease", "prevention", "Smoking raises the risk of kidney disease; stop smoking."
    )
    cancer = page("cdc-0000004-1", "Kidney Cancer", "information", "Kidney cancer forms in the kidney.")
    with PatientStore(tmp_path / "kidney.sqlite") as store:
        store.upsert([disease, cancer])
        search = PatientSearch.build(store, None, tmp_path / "kidney")
        question = "does stopping smoking lower the risk of kidney cancer"
        assert search.search(question, k=1)[0].section.key == disease.key
        assert search.search(question, k=1, asked=question, focus_pool=10)[0].section.key == cancer.key
    assert focus_tier("Kidney Disease", question) == 1 and focus_tier("Kidney Cancer", question) == 0
    assert focus_tier("Kidney Disease", "does smoking harm the kidneys?") == 0 and focus_tier("Lupus", question) == 2


@pytest.mark.parametrize(
    "title,asked,named",
    [
        (
            "Short rib-polydactyly syndrome type 3",
            "What are the symptoms of Short rib-polydactyly syndrome type 4 ?",
            0,
        ),
        (
            "Short rib-polydactyly syndrome type 4",
            "What are the symptoms of Short rib-polydactyly syndrome type 4 ?",
            1,
        ),
        ("Short rib-polydactyly syndrome type 3", "What are the symptoms of Short rib-polydactyly syndrome ?", 1),
        ("Usher syndrome, type 2C", "Is Usher syndrome type 2A inherited?", 0),
        ("Usher syndrome, type 2C", "Is Usher syndrome type 2C inherited?", 1),
        ("Cone-rod dystrophy 2", "What causes cone-rod dystrophy 1?", 0),
        ("Cone-rod dystrophy 2", "What causes cone-rod dystrophy 2?", 1),
        ("Glycogen storage disease type II", "Is glycogen storage disease type 2 inherited?", 1),  # numeral or number
        ("Glycogen storage disease type II", "What is glycogen storage disease?", 1),
        ("Glycogen storage disease type II", "Is glycogen storage disease type 3 inherited?", 0),
        ("Usher syndrome, type 2C", "Is Usher syndrome type IIC inherited?", 1),
    ],
)
def test_a_numbered_sibling_page_is_not_about_the_type_a_question_names(title, asked, named):
    """GARD and GHR hold a page per numbered type ("... type 3", "... type 4"): a question naming one type is not
    answered from another's page; one naming no type may be answered from any."""
    assert names_focus(title, asked) == bool(named)


def test_a_page_is_matched_against_the_conditions_a_question_names_not_a_symptom_s_clinical_terms():
    vocabulary = Vocabulary(BUILTIN)
    question = "painless lump in my neck, is that how lymphoma cancer starts"
    asked = asked_with_names(question, process_question(question, vocabulary).concepts)
    assert names_focus("Lymphoma", asked) and not names_focus("Thyroid Cancer", asked)  # "lump in neck": thyroid nodule
    question = "first signs of womb cancer"
    concepts = process_question(question, vocabulary).concepts
    assert names_focus("Endometrial Cancer", asked_with_names(question, concepts))


def test_ingest_medquad_end_to_end_and_again(patient_home, medquad):
    home, summary = patient_home
    assert summary["sections"] == {"1_CancerGov_QA": 729, "9_CDC_QA": 270}
    assert (summary["added"], summary["updated"], summary["unchanged"]) == (999, 0, 0)
    assert summary["index"]["sections"] == 999 and summary["index"]["rebuilt"] and summary["index"]["bytes"] > 0
    again = _ingest(home, str(medquad / "9_CDC_QA"), "--no-index")
    assert (again["added"], again["unchanged"], again["index"]) == (0, 270, None)
    assert again["store"]["sections"] == 999


def test_the_sections_sentences_are_stored_once_and_handed_to_the_answer_s_cache(patient_home):
    """``cpqa ingest medquad`` stores the passage embedder's vectors of every section's sentences, so a question's
    patient chunks are ranked without embedding them live; vectors of another encoder or chunk size are not used."""
    import numpy as np

    from cpqa.models.encoders import EmbeddingCache, load_encoder, unit_rows
    from cpqa.options import PassageOptions
    from cpqa.passages.patient import section_sentences
    from cpqa.passages.patient_vectors import PatientSentenceVectors, patient_sentences_dir
    from cpqa.types import PatientHit

    home, summary = patient_home
    stored = summary["sentence_vectors"]
    assert stored["rebuilt"] and stored["sentences"] > 999 and stored["bytes"] > 0
    settings, words = _settings(home), PassageOptions().patient_passage_words
    encoder, _ = load_encoder("passage_retriever", settings)
    directory = patient_sentences_dir(settings)
    with PatientStore(settings.patient_store_path) as store:
        vectors = PatientSentenceVectors.open(store, encoder.name, words, directory)
        assert vectors is not None and PatientSentenceVectors.open(store, "another encoder", words, directory) is None
        section = store.get(["cancergov-0000025_1-3"])["cancergov-0000025_1-3"]
        hit = PatientHit(section=section, score=1.0)
        cache = EmbeddingCache(encoder)
        assert vectors.remember([hit], cache, words + 1) == 0  # chunks cut to another size: other sentences
        texts = section_sentences(section.text, words)
        assert vectors.remember([hit], cache, words) == len(texts) > 3
        handed = cache.encode(texts)
        assert cache.misses == 0  # nothing embedded live
        live = unit_rows(encoder.encode(texts))
        assert np.min(np.sum(unit_rows(handed) * live, axis=1)) > 0.99  # int8 rows: a cosine moves by about 1e-3
        store.upsert([section.model_copy(update={"text": section.text + " Ask your doctor."})])
        assert PatientSentenceVectors.open(store, encoder.name, words, directory) is None  # the store changed
        store.upsert([section])  # as the module's other tests read it
        assert PatientSentenceVectors.open(store, encoder.name, words, directory) is not None


def test_cancer_gov_questions_find_their_section(patient_home):
    from cpqa.documents.patient_search import patient_index_dir
    from cpqa.models.encoders import load_encoder

    home, _ = patient_home
    settings = _settings(home)
    eval_pages = load_splits(MEDQUAD_SPLITS)["eval"]
    encoder, _ = load_encoder("sentence_embedder", settings)
    with PatientStore(settings.patient_store_path) as store:
        assert all(store.get([key])[key].page in eval_pages for key in GOLD.values())
        search = PatientSearch(store, patient_index_dir(settings), encoder)
        assert search.index.state["count"] == 999 and search.index.has_vectors  # the index ingest built
        for question, gold in GOLD.items():
            hits = search.search(question, k=3)
            assert gold in [h.section.key for h in hits], (question, [h.section.key for h in hits])
            assert all(h.bm25_rank or h.dense_rank for h in hits)
        nodes = search.retrieve(next(iter(GOLD)))
        assert nodes[0].node.node_id.startswith("patient:") and nodes[0].node.metadata["site"] == "cancer.gov (NCI)"
        assert search.search("   ") == []


def test_ingest_refuses_a_missing_or_empty_folder_or_a_bad_file(tmp_path):
    env = {"CPQA_HOME": str(tmp_path / "home"), "CPQA_PROFILE": "offline"}
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "0000001.xml").write_text("<Document", encoding="utf-8")
    for folder, message in (("missing", "no such file"), ("empty", "no MedQuAD XML"), ("bad", "0000001.xml")):
        result = CliRunner().invoke(ingest_app, ["medquad", str(tmp_path / folder)], env=env)
        assert result.exit_code == 1 and message in result.output, result.output
    assert not (tmp_path / "home" / "patient.sqlite").exists()  # nothing written


def test_a_condition_named_by_its_abbreviation_is_searched_spelled_out():
    """A patient page spells its condition out: "CLL" is searched as chronic lymphocytic leukaemia too, an
    abbreviation the rewrite did not read as a condition is left alone, and so is a question without one."""
    from cpqa.documents.finder import patient_query
    from cpqa.documents.path import DocumentQuery
    from cpqa.rewrite.concepts import Concept
    from cpqa.rewrite.rewriter import RewriteResult

    cll = Concept(text="cll", kind="disease", synonyms=["CLL", "chronic lymphocytic leukemia"])
    rewrite = RewriteResult(question="", normalized="", search_intent="", concepts=[cll, Concept(text="rate")])
    asked = "survival rate for CLL in older people"
    assert patient_query(DocumentQuery(query_str=asked, rewrite=rewrite)) == f"{asked} chronic lymphocytic leukemia"
    other = rewrite.model_copy(update={"concepts": [cll.model_copy(update={"kind": "other"})]})
    assert patient_query(DocumentQuery(query_str=asked, rewrite=other)) == asked
    assert patient_query(DocumentQuery(query_str="how common is cll")) == "how common is cll"
    assert patient_query(DocumentQuery(query_str="what does stage 3 mean")) == "what does stage 3 mean stage III"
