"""Local Automatic Term Mapping: links learned from the stored records (``ingestion.term_links``), used by the
rewrite when the ``term_links`` option is on."""

from __future__ import annotations

from cpqa.options import RewriteOptions
from cpqa.config import get_settings
from cpqa.rewrite.rewriter import Rewriter
from cpqa.rewrite.vocabulary import (
    Term,
    learned_terms_path,
    load_vocabulary,
    page_abbreviations_path,
    save_terms,
    terms_path,
)
from cpqa.types import AbstractSection, Article, MeshHeading
from ingestion.term_links import learn_terms


def _article(pmid: int, title: str, abstract: str, *headings: str) -> Article:
    return Article(
        pmid=str(pmid),
        title=title,
        abstract_sections=[AbstractSection(text=abstract)],
        mesh=[MeshHeading(descriptor=h) for h in ("Humans", *headings)],
    )


def _records() -> list[Article]:
    records = [_article(i, f"Filler study {i} of sleep", f"Participants slept {i} hours.") for i in range(40)]
    records += [
        _article(
            100 + i,
            f"Serum markers {i} after surgery",
            f"C-reactive protein (CRP) levels rose in {i} patients; CRP fell later.",
            "C-Reactive Protein",
        )
        for i in range(4)
    ]
    records += [
        _article(200 + i, f"Outcomes of GBM cohort {i}", "Survival was short.", "Glioblastoma") for i in range(5)
    ]
    records += [
        _article(300 + i, f"Device trial {i}", "Hyperthermic intraperitoneal chemotherapy (HIPEC) was given.")
        for i in range(3)
    ]
    return records


def test_links_come_from_headings_abbreviations_and_title_phrases_but_not_check_tags():
    terms = {t.mesh or t.name: t for t in learn_terms(_records())}
    assert "Humans" not in terms  # on every record: a check tag, never a link
    assert terms["C-Reactive Protein"].name == "C-Reactive Protein" and "CRP" in terms["C-Reactive Protein"].synonyms
    assert "gbm" in terms["Glioblastoma"].synonyms  # all 5 "GBM" titles carry it, and it is on no other record
    assert "filler" not in " ".join(s for t in terms.values() for s in t.synonyms)  # with Humans only: too generic
    loose = terms["hyperthermic intraperitoneal chemotherapy"]  # defined 3 times, no heading: a term without MeSH
    assert loose.mesh is None and loose.synonyms == ["HIPEC"]


def test_the_rewrite_maps_phrases_to_headings_only_with_the_option(tmp_path):
    settings = get_settings(cpqa_home=tmp_path, cpqa_profile="offline")
    save_terms(learn_terms(_records()), learned_terms_path(settings))
    assert load_vocabulary(settings).lookup("CRP") is None
    assert load_vocabulary(settings, term_links=True).lookup("CRP").mesh == "C-Reactive Protein"
    rewriter = Rewriter(settings)
    plain = rewriter.rewrite("Does CRP predict glioma outcome?")
    mapped = rewriter.rewrite("Does CRP predict glioma outcome?", options=RewriteOptions(term_links=True))
    assert '"C-Reactive Protein"[mh]' not in plain.ladder[0]
    assert '"C-Reactive Protein"[mh]' in mapped.ladder[0] and '"C-Reactive Protein"[tiab]' in mapped.ladder[0]


def test_a_diseases_abbreviation_the_records_define_reads_as_the_disease_without_the_option(tmp_path):
    """A patient writes "AML at 72" as the records do: the abbreviation joins the disease the curated tables hold
    (with its synonyms), with or without ``term_links``; an abbreviation of a non-disease and one that is an English
    word ("MRS", "Mrs") do not."""
    settings = get_settings(cpqa_home=tmp_path, cpqa_profile="offline")
    curated = [
        Term(name="acute myeloid leukemia", mesh="Leukemia, Myeloid, Acute", kind="disease", synonyms=["AML - x"]),
        Term(name="Melkersson-Rosenthal syndrome", kind="disease"),
    ]
    save_terms(curated, terms_path(settings))
    records = _records() + [
        _article(400 + i, f"Induction in older adults {i}", "Acute myeloid leukemia (AML) was treated.", "Leukemia")
        for i in range(3)
    ]
    records += [
        _article(500 + i, f"Flushing {i}", "Melkersson-Rosenthal syndrome (MRS) recurred.", "Lymphoma")
        for i in range(3)
    ]
    save_terms(learn_terms(records), learned_terms_path(settings))
    vocabulary = load_vocabulary(settings)
    aml = vocabulary.lookup("AML")
    assert aml is not None and aml.kind == "disease" and aml is vocabulary.lookup("acute myeloid leukemia")
    assert vocabulary.lookup("CRP") is None  # an abbreviation of a protein: term links only
    assert vocabulary.lookup("MRS") is None  # "Mrs"
    concepts = Rewriter(settings).rewrite("Mum has AML at 72, will they still give her chemo?").concepts
    assert [(c.kind, c.mesh) for c in concepts if c.text == "aml"] == [("disease", "Leukemia, Myeloid, Acute")]


def test_the_patient_pages_reading_of_an_abbreviation_comes_before_the_records(tmp_path):
    """Research records on this store define "MDS" as Miller-Dieker syndrome, the NIH pages as myelodysplastic
    syndromes (what a patient with the letter "MDS" means): the pages' reading wins."""
    settings = get_settings(cpqa_home=tmp_path, cpqa_profile="offline")
    diseases = ["Miller-Dieker syndrome", "myelodysplastic syndrome"]
    save_terms([Term(name=name, kind="disease") for name in diseases], terms_path(settings))
    save_terms([Term(name="Miller-Dieker syndrome", synonyms=["MDS"])], learned_terms_path(settings))
    assert load_vocabulary(settings).lookup("MDS").name == "Miller-Dieker syndrome"
    save_terms([Term(name="myelodysplastic syndromes", synonyms=["MDS"])], page_abbreviations_path(settings))
    assert load_vocabulary(settings).lookup("MDS").name == "myelodysplastic syndrome"


def test_a_short_form_is_neither_a_typos_fix_nor_a_codes_letters(tmp_path):
    """ "Covid" is not corrected to "CVID" (a disease the pages abbreviate), and "RTA 408" is a drug's code, not renal
    tubular acidosis; "RTA" alone is the disease."""
    settings = get_settings(cpqa_home=tmp_path, cpqa_profile="offline")
    diseases = ["common variable immunodeficiency", "renal tubular acidosis"]
    save_terms([Term(name=name, kind="disease") for name in diseases], terms_path(settings))
    pages = [Term(name=name, synonyms=[short]) for name, short in zip(diseases, ["CVID", "RTA"])]
    save_terms(pages, page_abbreviations_path(settings))
    rewriter = Rewriter(settings)

    def kinds(question: str) -> dict[str, str]:
        return {c.text: c.kind for c in rewriter.rewrite(question).concepts}

    assert kinds("Can Covid start with a runny nose?")["covid"] == "other"
    assert kinds("Which genes cause CVID?")["cvid"] == "disease"
    assert kinds("What is the alternative name of RTA 408?")["rta"] == "other"
    assert kinds("Is RTA in children inherited?")["rta"] == "disease"
