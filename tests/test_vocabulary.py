"""Term tables: normalisation, the built-in vocabulary, and `cpqa ingest mesh` over the shared MeSH / DO files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.cli import app
from cpqa.rewrite.vocabulary import BUILTIN, Vocabulary, load_vocabulary, natural_mesh_name, terms_path
from cpqa.rewrite.word_forms import normalize_word
from tests.conftest import shared


@pytest.mark.parametrize(
    "word,expected",
    [
        ("Tumours", "tumor"),
        ("therapies", "therapy"),
        ("metastases", "metastasis"),
        ("patients", "patient"),
        ("analysis", "analysis"),
        ("diabetes", "diabetes"),
        ("leukaemia", "leukemia"),
        ("processes", "process"),
        ("women", "woman"),
        ("virus", "virus"),
    ],
)
def test_normalize_word(word, expected):
    assert normalize_word(word) == expected


def test_natural_mesh_name():
    assert natural_mesh_name("Carcinoma, Non-Small-Cell Lung") == "Non-Small-Cell Lung Carcinoma"
    assert natural_mesh_name("Breast Neoplasms") == "Breast Neoplasms"


def test_builtin_vocabulary_without_tables(settings):
    vocab = load_vocabulary(settings)
    assert vocab.source == "builtin" and len(vocab) > 50
    assert vocab.lookup("Lung Cancers").mesh == "Lung Neoplasms"
    assert vocab.lookup("tumours").mesh == "Neoplasms"
    assert "adverse effects" in vocab.lookup("side effects").phrases()
    words = ["side", "effect", "of", "pembrolizumab"]
    term, n = vocab.longest_match(words, 0)
    assert n == 2 and term.kind == "intent"


def test_spelling_correction_is_bounded():
    vocab = Vocabulary(BUILTIN)
    assert vocab.correct("leukemai") == "leukemia"  # a transposition is one edit
    assert vocab.correct("chemotherapyy") == "chemotherapy"
    assert vocab.correct("nomogram") == "nomogram"  # nothing close: unchanged
    assert vocab.correct("cat") == "cat"  # short words are never "corrected"


def test_a_speller_indexes_only_the_word_lengths_a_typo_needs():
    """A first typo waits for the deletions of two word lengths, not of every word (English's 23,814 words cost
    about 0.25 s to index whole): the same corrections, found from the typo's length and one more."""
    from cpqa.rewrite.spelling import Speller

    speller = Speller(["leukemia", "lymphoma", "carcinoma", "chemotherapy", "melanoma"])
    assert speller.correct("leukemai") == "leukemia" and speller.correct("lymphom") == "lymphoma"
    assert speller.correct("carcinomas") == "carcinoma" and speller.correct("melanomx") == "melanoma"
    assert set(speller._deletions) == {7, 8, 9, 10, 11}  # never 12 (chemotherapy's length)


def test_ingest_mesh_writes_term_tables(settings):
    mesh_dir = shared("mesh")
    result = CliRunner().invoke(app, ["ingest", "mesh", str(mesh_dir)])
    assert result.exit_code == 0, result.output
    path = terms_path(settings)
    rows = json.loads(path.read_text())
    assert len(rows) > 1000 and sum(1 for r in rows if r["mesh"]) == 701  # one per C04 heading
    vocab = load_vocabulary(settings)
    assert vocab.source.endswith("terms.json")
    assert vocab.lookup("NSCLC").mesh == "Carcinoma, Non-Small-Cell Lung"
    assert vocab.lookup("hemangiosarcoma").mesh == "Hemangiosarcoma"  # a DO synonym via its MeSH xref
    assert vocab.lookup("glioblastoma multiforme").mesh == "Glioblastoma"
    assert vocab.lookup("ewing sarcoma").mesh == "Sarcoma, Ewing"  # reading order of an inverted heading
    hnpcc = vocab.lookup("hereditary nonpolyposis colorectal cancer")  # an inverted "Neoplasms" heading's cancer form
    assert hnpcc is not None and hnpcc.mesh == "Colorectal Neoplasms, Hereditary Nonpolyposis"
    assert vocab.lookup("male breast cancer").mesh == "Breast Neoplasms, Male"
    assert vocab.lookup("experimental cancer") is None  # a laboratory model's heading gets no reader's form
    # built-ins merge with the table row of the same heading: both name sets find it
    lung = vocab.lookup("lung cancer")
    assert lung.kind == "disease" and vocab.lookup("lung neoplasm") is lung


def test_ingest_mesh_rejects_a_folder_without_the_files(settings, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(app, ["ingest", "mesh", str(empty)])
    assert result.exit_code == 2
    assert "mesh_c04_neoplasms.csv" in result.output
    assert not terms_path(settings).exists()
