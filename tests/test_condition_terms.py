"""The conditions of NIH patient pages as the rewrite's disease terms (``ingestion.condition_terms``)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.rewrite.concepts import process_question
from cpqa.rewrite.vocabulary import BUILTIN, Term, Vocabulary, conditions_path, load_vocabulary
from cpqa.words import concept_names
from cpqa.sources.patient_pages import PageCondition, medquad_files, read_medquad_page
from ingestion.condition_terms import condition_terms, usable_name
from tests.conftest import shared

PAGE = """<?xml version="1.0" encoding="UTF-8"?>
<Document id="0000001" source="GHR" url="https://ghr.nlm.nih.gov/condition/menkes-syndrome">
<Focus>Menkes syndrome</Focus>
<FocusAnnotations>
  <UMLS><CUIs><CUI>C0022716</CUI></CUIs><SemanticTypes><SemanticType>T047</SemanticType></SemanticTypes>
  <SemanticGroup>Disorders</SemanticGroup></UMLS>
  <Synonyms><Synonym>Kinky Hair Syndrome</Synonym><Synonym>MNK</Synonym>
  <Synonym>Hypocupremia, Congenital</Synonym></Synonyms>
</FocusAnnotations>
<QAPairs><QAPair pid="1"><Question qid="0000001-1" qtype="information">What is Menkes syndrome?</Question>
<Answer>Menkes syndrome is a disorder that affects copper levels in the body.</Answer></QAPair></QAPairs>
</Document>
"""


def page(
    focus: str, *other_names: str, group: str = "Disorders", collection: str = "3_GHR_QA", types=("T047",)
) -> PageCondition:
    return PageCondition(collection, focus, other_names, group, types)


def test_a_page_s_focus_annotations_are_read(tmp_path):
    path = tmp_path / "3_GHR_QA" / "0000001.xml"
    path.parent.mkdir()
    path.write_text(PAGE, encoding="utf-8")
    assert read_medquad_page(path)[1] == page(
        "Menkes syndrome", "Kinky Hair Syndrome", "MNK", "Hypocupremia, Congenital"
    )
    (tmp_path / "bad.xml").write_text("<Document", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.xml: not readable MedQuAD XML"):
        read_medquad_page(tmp_path / "bad.xml")


@pytest.mark.parametrize(
    "name,usable",
    [
        ("Hypocupremia, Congenital", "Congenital Hypocupremia"),  # an inverted name, in reading order
        ("Stickler syndrome, type 2", "Stickler syndrome, type 2"),  # qualified after its comma: as written
        ("Klippel-Trenaunay Syndrome (KTS)", "Klippel-Trenaunay Syndrome"),  # the bracketed short form dropped
        ("Viral Infections", None),  # a class of conditions in general words
        ("Campylobacter Infections", "Campylobacter Infections"),
        ("ABL", None),  # a short form names a gene as often
        ("DM1", None),
        ("Albinism, Black lock, Cell migration disorder of the neurocytes of the gut and Deafness", None),
    ],
)
def test_which_names_a_question_can_use(name, usable):
    assert usable_name(name) == usable


def test_a_disorder_s_page_gives_a_disease_term_with_its_curated_other_names():
    terms = condition_terms(
        [
            page("Menkes syndrome", "Kinky Hair Syndrome", "MNK", "Menkes disease"),
            page("Menkes disease", collection="6_NINDS_QA"),  # another site's name: a term of its own too
            page(
                "Menkes syndrome", "Kinky hair syndrome", "Steely Hair Syndrome", collection="4_MPlus_Health_Topics_QA"
            ),
            page("Pantothenate kinase-associated neurodegeneration", "Neuroacanthocytosis", collection="2_GARD_QA"),
            page("Household Products", "Pesticides", group=""),  # not a disorder
            page("Back Pain", types=("T184",)),  # a symptom: the asker's, not the condition asked about
            page("Breast cancer", "Mammary cancer"),  # the vocabulary knows it (MeSH wins)
        ],
        known=lambda name: name.lower() == "breast cancer",
    )
    assert [(t.name, t.kind, t.synonyms) for t in terms] == [
        ("Menkes syndrome", "disease", ["Kinky Hair Syndrome", "Menkes disease", "Steely Hair Syndrome"]),
        ("Menkes disease", "disease", []),
        ("Pantothenate kinase-associated neurodegeneration", "disease", []),  # GARD's synonyms name related ones
    ]


def test_a_question_reads_a_page_s_condition_as_one_disease_by_any_of_its_names():
    vocabulary = Vocabulary(
        [*BUILTIN, *condition_terms([page("Sanfilippo syndrome", "mucopolysaccharidosis type III")])]
    )
    for question in ("Which genes are mutated in Sanfilippo syndrome?", "Is mucopolysaccharidosis type III inherited?"):
        diseases = [c for c in process_question(question, vocabulary).concepts if c.kind == "disease"]
        assert len(diseases) == 1
        assert {n.lower() for n in concept_names(diseases[0])} >= {
            "sanfilippo syndrome",
            "mucopolysaccharidosis type iii",
        }
    plain = process_question("Which genes are mutated in Sanfilippo syndrome?", Vocabulary(BUILTIN)).concepts
    assert {"sanfilippo", "syndrome"} <= {c.text for c in plain if c.kind == "other"}  # two words, neither a disease


def test_ingest_medquad_writes_the_table_the_vocabulary_reads(tmp_path):
    """``cpqa ingest medquad`` over NINDS's pages (no index): every page of the Disorders group the vocabulary does
    not know becomes a term, and ``load_vocabulary`` reads them after the MeSH table."""
    from cpqa.config import get_settings
    from ingestion.cli import ingest_app

    medquad = shared("medquad")
    home = tmp_path / "home"
    env = {"CPQA_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    result = CliRunner().invoke(ingest_app, ["medquad", str(medquad / "6_NINDS_QA"), "--no-index"], env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["condition_terms"]
    pages = [read_medquad_page(f)[1] for f in medquad_files([medquad / "6_NINDS_QA"])]
    disorders = {
        usable_name(p.focus).lower() for p in pages if p.semantic_group == "Disorders" and usable_name(p.focus)
    }
    assert 0 < summary["terms"] <= len(disorders) and summary["other_names"] == 0  # NINDS lists none
    settings = get_settings(cpqa_home=home)
    assert conditions_path(settings).exists()
    vocabulary = load_vocabulary(settings)
    term = vocabulary.lookup("pseudotumor cerebri")
    assert isinstance(term, Term) and term.kind == "disease"
    # "Multiple system atrophy (MSA) is ...": an abbreviation the pages define names their disease (not in MeSH here)
    assert json.loads(result.output)["abbreviations"]["abbreviations"] > 0
    assert vocabulary.lookup("MSA") is vocabulary.lookup("multiple system atrophy") is not None
    assert load_vocabulary(settings, conditions=False).lookup("pseudotumor cerebri") is None
