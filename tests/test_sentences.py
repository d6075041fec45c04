"""Sentence boundaries by rule (``cpqa.sentences``): abbreviations, broken decimals, glued labels and
gene-style openings handled; offsets slice back to the text."""

from __future__ import annotations

import pytest

from cpqa.sentences import sentence_bounds


def split(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_bounds(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "Tamoxifen reduced recurrence (p < 0.05). Survival was longer.",
            ["Tamoxifen reduced recurrence (p < 0.05).", "Survival was longer."],
        ),
        ("We used e.g. MRI and i.e. CT. Results follow.", ["We used e.g. MRI and i.e. CT.", "Results follow."]),
        (
            "Smith et al. reported it. J. Smith did too. See Fig. 2 and No. 5 there.",
            ["Smith et al. reported it.", "J. Smith did too.", "See Fig. 2 and No. 5 there."],
        ),
        ("The lod score was 87. 69 at theta = 0. 04. Next.", ["The lod score was 87. 69 at theta = 0. 04.", "Next."]),
        ("Levels fell. p53 was mutated. mRNA rose.", ["Levels fell.", "p53 was mutated.", "mRNA rose."]),
        (
            "In emergency departments (EDs).DATA SOURCE: visits.",
            ["In emergency departments (EDs).", "DATA SOURCE: visits."],
        ),
        ('Is it? Yes! "Quoted." Then more', ["Is it?", "Yes!", '"Quoted."', "Then more"]),
        (
            "Cells were grown at 37 C. the medium was changed daily.",
            ["Cells were grown at 37 C. the medium was changed daily."],
        ),
    ],
)
def test_boundaries(text, expected):
    assert split(text) == expected


def test_offsets_are_tight_and_respect_a_range():
    text = "  Header.  One sentence here. Two sentences here.  "
    start = text.index("One")
    bounds = sentence_bounds(text, start, len(text))
    assert [text[a:b] for a, b in bounds] == ["One sentence here.", "Two sentences here."]
    assert sentence_bounds("   ") == [] and sentence_bounds("") == []


def test_the_rough_split_keeps_closing_quotes_and_needs_no_sentence_opening():
    from cpqa.sentences import split_rough

    text = '- "Surgery is the main treatment." [PMID:1] Then e.g. radiotherapy follows. "Why?" she asked.  '
    assert split_rough(text) == [
        '- "Surgery is the main treatment."',
        "[PMID:1] Then e.g.",
        "radiotherapy follows.",
        '"Why?"',
        "she asked.  ",
    ]
