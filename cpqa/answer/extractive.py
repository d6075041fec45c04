"""Answering without a language model: rank evidence sentences by similarity to the question.

Used when no Anthropic key is configured or Claude fails. The default similarity is lexical (IDF-weighted
coverage of the question's content words), which is fast and deterministic; an injected ``TextEncoder``
(e.g. the bundled MiniLM) switches to cosine similarity of embeddings. The same scoring picks a
multiple-choice option for the retrieval-only baseline.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from cpqa.answer.citations import citation_label
from cpqa.answer.intent import Addressing, asks_only, record_text
from cpqa.answer.messages import NOT_ABOUT_EXTRACTS, NOT_DIRECT_EXTRACTS
from cpqa.answer.statements import FINDING
from cpqa.documents.study_type import BADGES
from cpqa.answer.similarity import scores_by_kind
from cpqa.models.encoders import Encoder
from cpqa.options import AnswerOptions, PassageOptions
from cpqa.quotable import directs_treatment_change, unquotable
from cpqa.passages.seos import split_sentences as sentence_spans
from cpqa.types import Passage
from cpqa.words import SECTION_LABEL, concept_names, content_terms, is_specialist, strip_labels, us_spelling

_TUNED = AnswerOptions()
_MIN_WORDS = PassageOptions().min_sentence_words  # shorter pieces carry no claim to quote


@dataclass(frozen=True)
class Sentence:
    pmid: str
    text: str
    score: float
    rank: int  # the passage's position in the evidence


@lru_cache(maxsize=8192)
def split_sentences(text: str) -> tuple[str, ...]:
    """Sentences of four words or more (SEOS's sentence rules; cached, since the same passages recur)."""
    return tuple(text[s.start : s.end] for s in sentence_spans(text) if s.words >= _MIN_WORDS)


def passage_sentences(passage: Passage) -> tuple[str, ...]:
    """The passage's sentences of four words or more: those its segmenter recorded, else split now, each line apart (a
    patient page's list item is no part of the sentence before it: "... experts in treating liver cancer.\n- Seven
    types of standard treatment are used: ..."), a list item without its bullet. A decimal that the record itself
    breaks ("59. 3 percent") is mended, so no sentence ends inside a number."""
    if not passage.sentences:
        spans = list(split_sentences(passage.text))
    else:
        spans = [passage.text[a:b] for a, b in passage.sentences]
    pieces = [line for span in spans for line in (_BULLET.sub("", part).strip() for part in span.split("\n")) if line]
    mended: list[str] = []
    for piece in pieces:
        if mended and _BROKEN_NUMBER.search(mended[-1]) and piece[:1].isdigit():
            mended[-1] = f"{mended[-1]} {piece}"
        else:
            mended.append(piece)
    return tuple(p for p in mended if len(p.split()) >= _MIN_WORDS)


_BROKEN_NUMBER = re.compile(r"\d\.$")
_BULLET = re.compile(r"^\s*[-\u2022*]\s+")


_RESTATES = ("objective", "aim", "purpose", "introduction", "background", "context", "rationale", "question")
_ANSWERS = ("conclusion", "result", "finding", "interpretation", "summary")
# A sentence that states what a study set out to do restates the question instead of answering it.
_AIM = re.compile(
    r"(?i)^(?:the\s+)?(?:aims?|purposes?|objectives?|goals?)\b|\b(?:we|this study|this review|the present "
    r"study)\s+(?:aim|aimed|sought|seek|investigat\w*|evaluat\w*|examin\w*|assess\w*|explor\w*|review\w*)\b"
    r"|\bwas (?:to|designed to|conducted to)\b|\?\s*$"
)
_WHOLE = re.compile(r"^[\"'(\[]?[A-Z0-9\u0391-\u03c9].*[.!?][\"')\]]?$", re.DOTALL)


def _section_weight(label: str | None, options: AnswerOptions) -> float:
    """Background and objective sentences restate the question; results and conclusions answer it."""
    label = (label or "").lower()
    if any(word in label for word in _RESTATES):
        return options.restating_weight
    if any(word in label for word in _ANSWERS):
        return options.answering_weight
    return 1.0


def _finding_weight(sentence: str, options: AnswerOptions) -> float:
    """Findings first: a sentence stating a result outranks one stating an aim or asking a question."""
    if _AIM.search(sentence):
        return options.aim_weight
    return options.finding_weight if FINDING.search(sentence) else 1.0


def is_whole(sentence: str, max_words: int = _TUNED.max_quote_words) -> bool:
    """A complete sentence: it opens with a capital or a digit and ends with its full stop (not a passage's cut)."""
    return bool(_WHOLE.match(sentence.strip())) and len(sentence.split()) <= max_words


def _labelled_sentences(passage: Passage, options: AnswerOptions, patient: bool) -> list[tuple[str, float]]:
    """The passage's quotable sentences, a research record's labels stripped, with a weight for the section each falls
    in and for stating a finding. Never quoted: a sentence cut at the passage's edge, and one that addresses the
    reader or carries a link, markup or citation marker (evidence is data); for a patient, one that directs a
    treatment change in any voice ("should be discontinued in all patients"): the care team decides that."""
    label = passage.section
    result = []
    for sentence in passage_sentences(passage):
        # A patient page has no structured-abstract labels: its "Laser surgery: A surgical procedure ..." and "It is
        # more common in men who: ..." are whole sentences.
        match = None if passage.is_patient_information else SECTION_LABEL.match(sentence)
        if match:
            label = match.group(0)
        text = sentence if passage.is_patient_information else strip_labels(sentence)
        quotable = unquotable(text, passage.is_patient_information) is None
        if passage.is_patient_information and (text.rstrip().endswith("?") or points_elsewhere(text)):
            continue  # a page's own question (a heading), or a sentence pointing to what follows or to another page
        if is_whole(text, options.max_quote_words) and quotable and not (patient and directs_treatment_change(text)):
            result.append((text, _section_weight(label, options) * _finding_weight(text, options)))
    return result


def points_elsewhere(sentence: str) -> bool:
    """Whether ``sentence`` only points to what comes after it ("The Human Phenotype Ontology provides the following
    list of signs and symptoms for X.", "... as follows.") or to another page or tool ("You can use the MedlinePlus
    Medical Dictionary to look up the definitions for these medical terms.", "See Drugs Approved for Breast Cancer for
    more information.", "... click here."): quoted alone it tells a reader nothing. One that goes on to give it ("The
    following stages are used: Stage I; ...") does not."""
    if _POINTS_AWAY.search(sentence):
        return True
    return bool(_POINTS_AHEAD.search(sentence)) and not _GIVES.search(sentence)


_POINTS_AHEAD = re.compile(
    r"\b(?:the following|as follows|(?:listed|shown|described|given) below|the table below)\b", re.IGNORECASE
)
_POINTS_AWAY = re.compile(
    r"^\W*see\b|\bclick\b|\bto look up\b|\bfor (?:more information|links to)\b|\bto view the contact\b", re.IGNORECASE
)
_GIVES = re.compile(r":\s*\S")


def rank_sentences(
    question: str,
    passages: Sequence[Passage],
    encoder: Encoder | None = None,
    options: AnswerOptions | None = None,
    patient: bool = True,
    research: Encoder | None = None,
) -> tuple[list[Sentence], float]:
    """Evidence sentences, best first, and the score below which evidence counts as thin (cosine with an encoder,
    word coverage without). A patient page's sentences are scored by ``encoder``, research sentences by ``research``
    where given (``Answerer.rank``: the encoder trained here, for a clinician). The reranker's order counts too: the
    n-th passage's sentences weigh ``rank_decay`` less per place (research and patient pages each counted among
    their own)."""
    options = options or AnswerOptions()
    pool: list[tuple[int, Passage, str, float]] = [
        (rank, p, s, w) for rank, p in enumerate(passages) for s, w in _labelled_sentences(p, options, patient)
    ]
    scores = scores_by_kind(question, [(p.is_patient_information, s) for _, p, s, _ in pool], encoder, research)
    # A passage's place among its own kind: patient pages lead a patient's evidence and must not push research down.
    places: dict[int, int] = {}
    for kind in (True, False):
        mine = [i for i, p in enumerate(passages) if p.is_patient_information == kind]
        places.update({i: place for place, i in enumerate(mine)})
    ranked = [
        Sentence(p.pmid, s, float(score) * w * (1.0 - options.rank_decay * places[rank]), rank)
        for (rank, p, s, w), score in zip(pool, scores)
    ]
    ranked.sort(key=lambda x: (-x.score, x.rank))
    dense = encoder is not None or research is not None
    return ranked, options.min_dense_score if dense else options.min_lexical_score


def select_extracts(
    ranked: list[Sentence],
    threshold: float,
    question: str = "",
    options: AnswerOptions | None = None,
    merit: Callable[[Sentence], float] | None = None,
    first: Callable[[Sentence], bool] | None = None,
) -> list[Sentence]:
    """The best sentences above ``threshold`` and within ``floor_share`` of the best one (by similarity), at most
    ``quotes_per_record`` each, no repeats (overlapping passages share sentences), picked by ``merit`` (the answer
    chooser's probability, else the similarity), those ``first`` holds for before the others; each next pick
    favours the question's words not yet covered (up to ``coverage_bonus`` more)."""
    options = options or AnswerOptions()
    top = max((s.score for s in ranked), default=0.0)
    if not ranked or top < threshold:
        return []
    merit = merit or (lambda sentence: sentence.score)
    first = first or (lambda sentence: False)
    floor = max(threshold, top * options.floor_share)
    wanted = set(content_terms(question))
    pool = [s for s in ranked if s.score >= floor]
    chosen: list[Sentence] = []
    covered: set[str] = set()
    per: Counter[str] = Counter()
    while pool and len(chosen) < options.max_quotes:

        def gain(sentence: Sentence) -> float:
            new = (set(content_terms(sentence.text)) & wanted) - covered
            return merit(sentence) * (1.0 + options.coverage_bonus * len(new) / max(len(wanted), 1))

        best = max(pool, key=lambda sentence: (first(sentence), gain(sentence)))
        pool.remove(best)
        repeats = any(_same(best.text, c.text, options.same_share) for c in chosen)
        if per[best.pmid] >= options.quotes_per_record or repeats:
            continue
        chosen.append(best)
        covered |= set(content_terms(best.text)) & wanted
        per[best.pmid] += 1
    return chosen


def select_answer(
    ranked: list[Sentence],
    threshold: float,
    question: str,
    passages: Sequence[Passage],
    addressing: Addressing,
    options: AnswerOptions | None = None,
    chosen: dict[tuple[int, str], float] | None = None,
    ranked_by: dict[tuple[int, str], float] | None = None,
) -> tuple[list[Sentence], bool]:
    """The quotes and whether they answer the question: the best sentences that address its need
    (``cpqa.answer.intent``, or the answer chooser's probability ``chosen`` at least ``chooser_threshold``), chosen as
    ``select_extracts`` chooses, by the answer ranker's probability ``ranked_by`` (else the chooser's, else the
    similarity), those naming what a "which" question asks for first (``asked_first``); when none does, the closest
    evidence (from records about the question's condition, ``Addressing.names_topic``, where any is close enough),
    and False."""
    options = options or AnswerOptions()
    chosen = chosen or {}
    by_merit = ranked_by or chosen

    def answers(s: Sentence) -> bool:
        by_chooser = chosen.get((s.rank, s.text), 0.0) >= options.chooser_threshold
        return by_chooser or addressing.addresses(s.text, record_text(passages[s.rank]))

    def merit(s: Sentence) -> float:
        return by_merit.get((s.rank, s.text), 0.0) if by_merit else s.score

    def names_asked(s: Sentence) -> bool:
        return options.asked_first and addressing.names_asked(s.text, record_text(passages[s.rank]))

    direct = [s for s in ranked if answers(s)]
    picked = select_extracts(direct, threshold, question, options, merit, names_asked)
    if picked:
        return picked, True
    about = [s for s in ranked if addressing.names_topic(s.text, record_text(passages[s.rank]))]
    closest = select_extracts(about, threshold, question, options, merit, names_asked) if about else []
    return closest or select_extracts(ranked, threshold, question, options, merit, names_asked), False


def not_direct_label(
    quotes: Sequence[Sentence], passages: Sequence[Passage], addressing: Addressing, on_page: bool
) -> str:
    """The label of quotes that do not answer (ours, not a claim to cite): the closest evidence about the topic, or,
    when the quoted studies do not name what was asked (``Addressing.topic_unnamed``), the nearest sentences, said to
    be so, naming the condition, treatment or drug they miss as the question words it (a rare word alone is not
    named: "None of the studies it found names 'aberrant'" tells a reader nothing)."""
    unnamed = [] if on_page else addressing.topic_unnamed([record_text(passages[s.rank]) for s in quotes])
    if not unnamed:
        return NOT_DIRECT_EXTRACTS
    names = [f'"{s.text}"' for s in unnamed if s.kind in KEY_KINDS or s.drug]
    return NOT_ABOUT_EXTRACTS.format(names=" or ".join(names) if names else "all that your question asks about")


_POPULATION = re.compile(
    r"\b(\d{1,3}(?:,\d{3})+|\d{2,6})\s+(?:(?:consecutive|eligible|evaluable|adult|elderly|older|postmenopausal|"
    r"premenopausal|healthy|breast|lung|prostate|colorectal|cancer)\s+){0,2}(patients|women|men|participants|"
    r"subjects|cases|children|adults|individuals|survivors|people|volunteers)\b",
    re.IGNORECASE,
)


def study_lead(passage: Passage, population: bool = True) -> str:
    """What a reader weighs first about a quote's study: its design, year and (for a clinician) population, where the
    record has them ("Randomised trial, 2008, 1,234 women")."""
    design = BADGES.get(passage.evidence_type or "", "")
    if passage.evidence_type in (None, "not indexed", "human study"):
        design = "Study"
    found = _POPULATION.search(passage.evidence_text) if population else None
    facts = [design, str(passage.year or ""), " ".join(found.groups()) if found else ""]
    return ", ".join(f for f in facts if f)


def quote_line(sentence: Sentence, passage: Passage, mode: str, lead: bool | None = None) -> str:
    """One quoted sentence as a bullet with its citation; a study's quote led by its study (``study_lead``: always
    for a clinician, for a patient when ``lead``, beside patient information), a patient page's by nothing (its
    heading names it)."""
    lead = (mode == "clinician" if lead is None else lead) and not passage.is_patient_information
    opening = f"{study_lead(passage, population=mode == 'clinician')}: " if lead else ""
    return f'- {opening}"{sentence.text}" [{citation_label(sentence.pmid)}]'


def page_heading(passage: Passage) -> str:
    """The line that attributes a patient page's quotes: who publishes it, the page and the section."""
    section = f", {passage.section}" if passage.section else ""
    return f"From {passage.site or 'an NIH website'}, patient information ({passage.title}{section}):"


def _same(a: str, b: str, share: float) -> bool:
    """Near-duplicates: one sentence inside the other, or ``share`` of their words shared."""
    if a in b or b in a:
        return True
    ta, tb = set(content_terms(a)), set(content_terms(b))
    return bool(ta and tb) and len(ta & tb) / min(len(ta), len(tb)) >= share


KEY_KINDS = frozenset({"treatment", "disease"})


def key_concepts(
    concepts: Sequence, share: Callable[[str], float | None] | None = None, options: AnswerOptions | None = None
) -> list:
    """The question's concepts that an answer must be about: a treatment or disease the vocabulary knows, or a
    specialist word (``is_specialist``) that the store's own records rarely use either (``share(word)``: the share of
    records holding it) -- a drug, gene, test or procedure the vocabulary lacks. Generic and intent words are not
    key (``AnswerOptions.rare_record_share`` and ``rare_word_zipf``)."""
    options = options or _TUNED
    key = []
    for concept in concepts:
        if concept.weak or concept.kind == "intent" or asks_only(concept.text):  # "tradename" says what is asked
            continue
        if concept.kind in KEY_KINDS:
            key.append(concept)
        elif share is not None and is_specialist(concept.text, options.rare_word_zipf):
            used = share(concept.text)
            if used is not None and used < options.rare_record_share:
                key.append(concept)
    return key


def unaddressed(
    concepts: Sequence,
    passages: Sequence[Passage],
    share: Callable[[str], float | None] | None = None,
    options: AnswerOptions | None = None,
) -> list[str]:
    """The question's key concepts (``key_concepts``) that no passage mentions by any of their names, in either
    spelling ("lymphoedema" is mentioned by "lymphedema").

    Quoting evidence about another drug, test or cancer in answer to a question about one the evidence never names
    would mislead: an extractive answer abstains instead (a language model makes that judgement itself)."""
    options = options or _TUNED
    text = us_spelling(" ".join(p.text for p in passages))
    missing = []
    for concept in key_concepts(concepts, share, options):
        names = concept_names(concept)
        if not any(_mentioned(us_spelling(name), text, options.distinctive_word_zipf) for name in names):
            missing.append(concept.text)
    return missing


def _mentioned(name: str, text: str, distinctive_zipf: float) -> bool:
    """The name itself, or each of its distinctive words by its stem ("Hodgkin disease" is mentioned by "Hodgkin
    lymphoma", "Wilm's tumor" by "Wilms tumour")."""
    if re.search(rf"\b{re.escape(name)}", text):
        return True
    from wordfreq import zipf_frequency

    words = [w for w in re.findall(r"[a-z0-9]+", name) if len(w) > 2 and zipf_frequency(w, "en") < distinctive_zipf]
    return bool(words) and all(re.search(rf"\b{re.escape(w[: max(4, len(w) - 2)])}", text) for w in words)
