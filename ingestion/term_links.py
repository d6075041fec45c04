"""Local Automatic Term Mapping tables, learned from the records in the store (``cpqa index build``).

PubMed maps a query phrase to a MeSH descriptor through the descriptor's entry terms. The shared MeSH file has no
entry terms and covers only the Neoplasms tree, so the links are learned from what the stored records carry:

- **heading names**: every descriptor indexed on at least ``min_records`` records, any tree (drugs, genes,
  procedures), found by its name in reading order ("Non-Small-Cell Lung Carcinoma");
- **phrase-to-heading links**: a title phrase (1-3 content words) and a descriptor that go together both ways
  (P(heading | phrase) >= ``min_confidence`` and P(phrase | heading) >= ``min_coverage``, on at least
  ``min_links`` records): an alias, not a mere association ("tamoxifen" does not link to Breast Neoplasms, which
  most tamoxifen records carry, because most Breast Neoplasms records do not mention tamoxifen);
- **abbreviations**: short forms defined in titles and abstracts, found by NCBI's Ab3P (``pyab3p``), each with
  its dominant long form; they join the long form's descriptor (by name, link, or the curated vocabulary) when it
  has one.

Descriptors on more than ``max_share`` of the records (check tags such as Humans or Female) and words too generic
to identify a document are never linked. The terms are saved beside the MeSH tables and merged into the rewrite's
vocabulary, after them, so curated names win.
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable

from cpqa.rewrite.concepts import STOPWORDS, is_weak
from cpqa.rewrite.vocabulary import Term, Vocabulary, natural_mesh_name, phrase_key, tokenize
from cpqa.types import Article

MAX_PHRASE_WORDS = 3


@dataclass
class LinkSettings:
    min_records: int = 3
    min_confidence: float = 0.8
    min_coverage: float = 0.4
    min_links: int = 5
    max_share: float = 0.1
    min_abbreviation_share: float = 0.6


def _title_phrases(title: str) -> set[str]:
    """Normalised runs of 1-3 content words of a title (no phrase crosses a stopword)."""
    phrases: set[str] = set()
    run: list[str] = []
    for word in [*tokenize(title), ""]:
        if word and word not in STOPWORDS and not word.isdigit():
            run.append(phrase_key(word))
            continue
        for n in range(1, MAX_PHRASE_WORDS + 1):
            phrases.update(" ".join(run[i : i + n]) for i in range(len(run) - n + 1))
        run = []
    return {p for p in phrases if p and not (len(p.split()) == 1 and is_weak(p))}


@contextmanager
def _quiet_native_output():
    """Ab3P's C++ core prints every sentence it cannot align to stdout / stderr: silence both descriptors."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def dominant_abbreviations(texts: Iterable[str], settings: LinkSettings | None = None) -> dict[str, str]:
    """Short form -> its dominant long form over ``texts`` (Ab3P): defined ``min_records`` times or more, that long
    form at least ``min_abbreviation_share`` of its definitions."""
    from pyab3p import Ab3p

    settings = settings or LinkSettings()
    finder = Ab3p()
    pairs: dict[str, Counter[str]] = defaultdict(Counter)
    with _quiet_native_output():
        found_lists = [finder.get_abbrs(text) for text in texts]
    for found_list in found_lists:
        for found in found_list:
            short, long = found.short_form.strip(), " ".join(found.long_form.split())
            if len(short) >= 3 and any(c.isupper() for c in short) and short.lower() not in STOPWORDS:
                pairs[short][long.lower()] += 1
    chosen = {}
    for short, forms in pairs.items():
        long, count = forms.most_common(1)[0]
        if count >= settings.min_records and count >= settings.min_abbreviation_share * sum(forms.values()):
            chosen[short] = long
    return chosen


def learn_terms(
    articles: Iterable[Article], vocabulary: Vocabulary | None = None, settings: LinkSettings | None = None
) -> list[Term]:
    """Vocabulary terms linking phrases and abbreviations to MeSH descriptors (see the module docstring)."""
    settings = settings or LinkSettings()
    heading_records: Counter[str] = Counter()
    phrase_records: Counter[str] = Counter()
    together: Counter[tuple[str, str]] = Counter()
    texts: list[str] = []
    records = 0
    for article in articles:
        records += 1
        texts.append(f"{article.title} {article.abstract}")
        headings = {h.descriptor for h in article.mesh if h.descriptor}
        if not headings:
            continue
        heading_records.update(headings)
        phrases = _title_phrases(article.title)
        phrase_records.update(phrases)
        together.update((p, h) for p in phrases for h in headings)
    ceiling = settings.max_share * max(records, 1)
    kept = {
        h
        for h, n in heading_records.items()
        if settings.min_records <= n <= ceiling and not is_weak(phrase_key(natural_mesh_name(h)))
    }
    synonyms: dict[str, list[str]] = {h: [] for h in kept}
    for (phrase, heading), n in together.items():
        if (
            heading in kept
            and n >= settings.min_links
            and n >= settings.min_confidence * phrase_records[phrase]
            and n >= settings.min_coverage * heading_records[heading]
        ):
            synonyms[heading].append(phrase)
    by_name = {phrase_key(natural_mesh_name(h)): h for h in kept}
    loose: list[Term] = []
    for short, long in dominant_abbreviations(texts, settings).items():
        known = vocabulary.lookup(long) if vocabulary is not None else None
        linked = (
            by_name.get(phrase_key(long))
            or (known.mesh if known else None)
            or next((h for h, s in synonyms.items() if phrase_key(long) in s), None)
        )
        if linked:
            synonyms.setdefault(linked, []).append(short)
        else:
            loose.append(Term(name=long, synonyms=[short]))
    terms = [Term(name=natural_mesh_name(h), mesh=h, synonyms=sorted(set(s))) for h, s in sorted(synonyms.items())]
    return terms + loose


__all__ = ["LinkSettings", "dominant_abbreviations", "learn_terms"]
