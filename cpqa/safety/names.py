"""Names nobody announced: "This is Margaret Olsen writing" has no cue ("my name is") for the patterns in
:mod:`cpqa.safety.phi`, so a pair of capitalised words is taken for a full name when the first is a common given
name and the second a common family name somewhere in the world.

The lists (``data/names.txt.gz``) are the most common given and family names of 44 countries, taken from the
``names-dataset`` package (MIT), which needs 2 GB of memory and 20 s to load: too much for screening, so the lists
are built once with ``python -m cpqa.safety.names build`` and shipped. On 7,653 real questions of the shared data
(BioASQ, PubMedQA, MIRAGE, consumer questions) the rule marks no medical phrase once function words and eponyms
("Di George syndrome") are excluded.
"""

from __future__ import annotations

import gzip
import re
import sys
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from cpqa.words import STOPWORDS

COUNTRIES = (
    "US",
    "GB",
    "CA",
    "AU",
    "IE",
    "NZ",
    "IN",
    "PH",
    "NG",
    "ZA",
    "DE",
    "FR",
    "IT",
    "ES",
    "NL",
    "SE",
    "NO",
    "DK",
    "FI",
    "PL",
    "PT",
    "BR",
    "MX",
    "AR",
    "CO",
    "CN",
    "HK",
    "TW",
    "JP",
    "KR",
    "VN",
    "TR",
    "EG",
    "SA",
    "IL",
    "RU",
    "UA",
    "GR",
    "PK",
    "BD",
    "ID",
    "MY",
    "KE",
    "GH",
)
GIVEN_PER_COUNTRY, FAMILY_PER_COUNTRY = 400, 800
_GIVEN = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_FAMILY = r"[A-Z][a-z]+(?:['-][A-Z]?[a-z]+)?"
_PAIR = re.compile(
    rf"\b({_GIVEN})\s+({_FAMILY})\b(?!\s+(?:syndrome|disease|sign|sequence|test|score|scale|"
    r"criteria|classification|procedure|operation|tumou?r|lymphoma|sarcoma|cells?|method|law|effect)\b)"
)


@lru_cache(maxsize=1)
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    given: set[str] = set()
    family: set[str] = set()
    with gzip.open(files("cpqa.safety").joinpath("data", "names.txt.gz").open("rb"), "rt", encoding="utf-8") as lines:
        for line in lines:
            kind, _, name = line.rstrip("\n").partition(" ")
            (given if kind == "G" else family).add(name)
    return frozenset(given), frozenset(family)


def full_names(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that read as a given name followed by a family name."""
    given, family = _lists()
    return [
        m.span()
        for m in _PAIR.finditer(text)
        if m.group(1) in given
        and m.group(2) in family
        and m.group(1).lower() not in STOPWORDS
        and m.group(2).lower() not in STOPWORDS
    ]


def build(out: Path) -> tuple[int, int]:
    """Write the lists from ``names-dataset`` (``pip install names-dataset``); returns (given, family) counts."""
    from names_dataset import NameDataset  # a build-time tool, not a runtime dependency

    data = NameDataset()
    given: set[str] = set()
    family: set[str] = set()
    for country in COUNTRIES:
        for names in data.get_top_names(n=GIVEN_PER_COUNTRY, country_alpha2=country).get(country, {}).values():
            given.update(n for n in names if re.fullmatch(_GIVEN, n))
        for names in data.get_top_names(n=FAMILY_PER_COUNTRY, country_alpha2=country, use_first_names=False).values():
            family.update(n for n in names if re.fullmatch(_FAMILY, n))
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as handle:
        handle.writelines(f"G {n}\n" for n in sorted(given))
        handle.writelines(f"F {n}\n" for n in sorted(family))
    return len(given), len(family)


if __name__ == "__main__":  # python -m cpqa.safety.names build
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: python -m cpqa.safety.names build")
    target = Path(__file__).parent / "data" / "names.txt.gz"
    print("given %d, family %d ->" % build(target), target)
