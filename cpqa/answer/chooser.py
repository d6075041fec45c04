"""The answer chooser: a cross-encoder trained here (``cpqa train chooser``; cpqa/models/trained/chooser) that scores
how well a candidate answers a question, and which sections of a patient page a question asks for.

The chooser was trained on BioASQ questions against sentences of their records (gold snippets against the rest) and
on MedQuAD questions against sections of NIH patient pages (its own section against the page's others and other
pages' sections about the same condition). With ``AnswerOptions.chooser`` on it rescores the best few research
sentences the embedding similarity ranks first (``chooser_candidates``): 16 pairs cost about 30 ms on two cores. It
is off: at sentence level it measured no better than similarity (docs/results.md, issue 35), and a patient page's
chunks are chosen by the kind of section the question asks for, in the search's order (``page_quotes``).

The kinds of section a question asks for (``section_kinds``) come from its wording, as ``needs.question_needs``
reads needs: "signs" asks for the symptoms section, "how common" for frequency or the outlook, "how is it treated"
for treatment; a page's section of that kind, about the question's condition, answers it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.answer.extractive import Sentence, passage_sentences
from cpqa.answer.intent import Addressing, record_text, split_stems
from cpqa.answer.needs import question_needs, without_names
from cpqa.answer.statements import states
from cpqa.documents.page_focus import condition_stems, names_focus
from cpqa.models.cross_encoder import TrainedPairScorer, probability
from cpqa.models.names import TRAINED_DIR
from cpqa.options import AnswerOptions
from cpqa.types import Passage
from cpqa.rewrite.concepts import defined_abbreviations
from cpqa.rewrite.narrative import story_word
from cpqa.words import content_terms, is_specialist

TRAINED_CHOOSER = TRAINED_DIR / "chooser"
MAX_TOKENS = 256  # as trained

_I = re.IGNORECASE
# Section kinds (MedQuAD's question types) by the question's wording, beside its needs.
_KIND_WORDS: tuple[tuple[str, re.Pattern], ...] = (
    ("stages", re.compile(r"\bstag(?:e|es|ed|ing)\b|\bgrade[sd]?\b|\bhow (?:far|advanced)\b", _I)),
    (
        "exams and tests",
        re.compile(
            r"\bdiagnos\w*|\btests?\b|\bscreen\w*|\bdetect\w*|\bfind out\b|\bscans?\b|\bbiops\w*|\bcheck(?:ed)? for", _I
        ),
    ),
    ("treatment", re.compile(r"\btreat\w*|\btherap\w*|\bcur(?:e|ed|able)\b|\bsurgery\b|\bmanage\w*|\bchemo\w*", _I)),
    (
        "outlook",
        re.compile(
            r"\boutlook\b|\bprognos\w*|\bsurviv\w*|\blife expectancy\b|\bdie\b|\bfatal\b|\bterminal\b|\bspread\w*"
            r"|\bquickly\b",
            _I,
        ),
    ),
    ("causes", re.compile(r"\bcaus\w*|\bwhy\b|\bwhat makes\b|\bget it\b", _I)),
    # what causes a cancer is what its patient pages list as risk factors
    ("susceptibility", re.compile(r"\bcaus\w*|\brisk factors?\b|\bat (?:high |higher |more )?risk\b|\bwho gets\b", _I)),
    (
        "inheritance",
        re.compile(
            r"\binherit\w*|\bhereditary\b|\b(?:runs?|running|it'?s|is) in (?:the |my |our |your )?famil\w*"
            r"|\bpass(?:ed)? (?:on|down)",
            _I,
        ),
    ),
    ("genetic changes", re.compile(r"\bgene(?:s|tic)?\b|\bmutation|\bchromosom\w*", _I)),
    (
        "prevention",
        re.compile(
            r"\bprevent\w*|\bavoid\w*|\b(?:reduce|lower|cut|decrease)\w* (?:my|the|your|their|his|her|our) "
            r"(?:risk|chances?|odds)\b|\bstop\w* (?:you|me|us|people|them|him|her|someone|anyone) (?:from )?getting\b",
            _I,
        ),
    ),
    ("research", re.compile(r"\bclinical trials?\b|\bresearch\b|\bnew treatments?\b|\bstud(?:y|ies) (?:on|of)\b", _I)),
    ("support groups", re.compile(r"\bsupport groups?\b|\bwho can help\b", _I)),
)
# A question answered yes or no: it opens (or a clause of it opens) with an auxiliary verb; one that also asks what,
# how, which ... ("can men get breast cancer? how rare is it") asks for more than a verdict.
_YES_OR_NO = re.compile(
    r"(?:^|[,.;:!?]\s*)(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|had|may|might|must)\b", _I
)
_WH = re.compile(r"\b(?:what|which|how|where|when|who|whom|whose|why)\b", _I)
_KINDS_BY_NEED = {
    "symptoms": {"symptoms"},
    "side_effects": {"complications", "treatment"},
    "rate": {"frequency"},
    "risk": {"susceptibility", "causes", "inheritance", "genetic changes"},
    "recommendation": {"treatment", "prevention"},
    "effect": {"treatment", "research"},
    "mechanism": {"causes", "genetic changes", "information"},
    "name": {"information"},
    "definition": {"information"},
    "types": {"information"},
}


def section_kinds(question: str, named_only: bool = False, concepts: Sequence = ()) -> frozenset[str]:
    """The kinds of patient-page section that answer ``question``; empty when its wording asks for none in
    particular (then any section about its subject may). ``named_only``: only the kinds its wording names ("gene"
    names genetic changes, "how common" frequency), not those its needs merely allow (a risk may be read in four).
    ``concepts``: the question's, whose conditions' names are not its wording ("hereditary angioedema")."""
    wording = without_names(question, concepts)
    kinds = {kind for kind, pattern in _KIND_WORDS if pattern.search(wording)}
    for need in question_needs(wording):
        allowed = _KINDS_BY_NEED.get(need, set())
        if not named_only or len(allowed) == 1:  # "signs" names the symptoms section, "a risk" four kinds
            kinds |= allowed
    return frozenset(kinds)


class AnswerChooser:
    """``scores(question, candidates)``: the probability that each candidate answers the question. The model loads
    on first use (an answer written by a language model never needs it)."""

    def __init__(self, model: Path | str = TRAINED_CHOOSER):
        self._scorer = TrainedPairScorer(model, MAX_TOKENS)
        self.model = self._scorer.model

    def scores(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        return probability(self._scorer.logits(question, candidates))


def specialist_words(question: str) -> list[str]:
    """The question's words general English rarely uses: a drug, gene, test or condition named by name."""
    return [w for w in re.findall(r"[A-Za-z][A-Za-z0-9-]{2,}", question) if is_specialist(w.lower())]


def names_all(words: Sequence[str], text: str) -> bool:
    """Whether ``text`` names every one of ``words`` (by stem); a family of genes is named by a numbered member ("BRCA"
    by "BRCA1")."""
    stems = set(content_terms(text))
    members = {stem.rstrip("0123456789") for stem in stems if stem[-1:].isdigit()}
    return all(set(content_terms(w)) <= stems | members for w in words)


def page_specifics(question: str, addressing: Addressing) -> list[str]:
    """The words of ``question`` a patient page's chunk must name to answer it: a drug, gene or test named by name, not
    the asker's story ("grandad"), an abbreviation the question spells out by its long form ("GBS"); a word of a
    condition's name is not one (``Addressing.names_condition`` reads the condition by all its names: "oesophageal"
    is named by "Esophageal Cancer", "CML" by "Chronic Myelogenous Leukemia")."""
    spelled_out = defined_abbreviations(question)
    conditions = [name for s in addressing.subjects if s.kind == "disease" for name in s.names]

    def names_condition(word: str) -> bool:
        stems = frozenset(content_terms(word))
        return bool(stems) and any(stems <= name for name in conditions)

    return [
        spelled_out.get(word, word)
        for word in specialist_words(question)
        if not story_word(word, question) and not names_condition(word)
    ]


def rescored(
    chooser: AnswerChooser, question: str, ranked: list[Sentence], top: int
) -> tuple[list[Sentence], dict[tuple[int, str], float]]:
    """``ranked`` (research sentences, best by similarity first) with its first ``top`` reordered by the chooser, and
    the chooser's probability of each of those, by (passage, sentence)."""
    head, tail = ranked[:top], ranked[top:]
    probabilities = chooser.scores(question, [s.text for s in head])
    order = sorted(range(len(head)), key=lambda i: -probabilities[i])
    return [head[i] for i in order] + tail, {(s.rank, s.text): float(p) for s, p in zip(head, probabilities)}


def page_quotes(
    question: str,
    ranked: list[Sentence],
    passages: Sequence[Passage],
    addressing: Addressing,
    options: AnswerOptions,
    asked: str = "",
) -> list[Sentence]:
    """The quotes of the patient page's chunk that answers ``question`` (empty when none does). Only a page whose
    condition the question names is considered (``names_focus`` against ``asked``: the question with the names of its
    concepts), and only a chunk that names every specialist word of the question (a drug, gene or test: a page about
    the disease does not answer a question about one drug for it); of those, one answers when its section is of a
    kind the question asks for (``section_kinds``) and names the question's condition and treatment; a kind its
    wording names first, then the search's order (on the MedQuAD tuning pages, ranking chunks by a chooser trained on
    whole sections put the first quote inside the gold section 0.727 against the search's 0.779). Its sentences the
    addressing rule accepts (``Addressing.addresses``) are chosen first, then the best by similarity, and quoted in
    the page's own order (a section's lead states its subject even where the rule does not see it: quoting only the
    rule's sentences kept the first quote inside the gold section 0.519 against 0.779), except that when the page's
    first is one the rule does not accept, the first it accepts leads ("DMARDs include methotrexate ..." before "Most
    people who have rheumatoid arthritis take medications."; stop 46: on the MedQuAD tuning pages the first quote
    stayed inside the gold section as often, on cancer.gov's eval pages 0.795 -> 0.784)."""
    chunks = [i for i, p in enumerate(passages) if p.is_patient_information and names_focus(p.title or "", asked)]
    if not chunks:
        return []
    wording = addressing.wording or question
    kinds, named = section_kinds(wording), section_kinds(wording, named_only=True)
    if not kinds:
        return []
    specifics = page_specifics(question, addressing)
    # each chunk's sentences (best by similarity first) and whether the rule accepts each: judged once
    judged: dict[int, list[tuple[Sentence, bool]]] = {i: [] for i in chunks}
    for sentence in ranked:
        if sentence.rank in judged:
            about = record_text(passages[sentence.rank])
            judged[sentence.rank].append((sentence, addressing.addresses(sentence.text, about)))
    named_need = bool(set(addressing.needs) - {"finding"})
    answering = []
    for i in chunks:
        passage = passages[i]
        about = record_text(passage)
        if not names_all(specifics, f"{passage.text} {about}"):  # a drug, gene or test the page never names
            continue
        if not addressing.names_condition(passage.text, about):
            continue
        # A section of a kind the question only allows answers when it states what is asked (the rule accepts one of
        # its sentences): "no known cure" is not an answer to "which gene therapies are under investigation?"
        # A "which" question is answered by a section naming a thing of the kind it asks for (a gene, a drug ...):
        # "SLE is caused by mutations in single genes" does not say which genes.
        if addressing.asks_for and not any(addressing.names_asked(s.text, about) for s, _ in judged[i]):
            continue
        # A section of another kind answers when the rule accepts one of its sentences for a need the question's
        # wording names (not a bare finding) and the wording names the kind of section it asks for, after those of
        # the kinds asked for: "how common is testicular cancer?" (frequency) is answered by the risk section of
        # cancer.gov's page ("... it is the most common cancer found in men between the ages of 15 and 34"), which has
        # no frequency one; "does a head CT increase brain tumour risk?" names no kind, and a page's list of a child's
        # symptoms that mentions the head does not answer it.
        states_asked = any(ok for _, ok in judged[i]) and (passage.kind in kinds or (named_need and bool(named)))
        if passage.kind in named or states_asked:
            staged = any(addressing.names_stages(s.text) for s, _ in judged[i])  # "stage 3": Stage III's chunk
            answering.append((passage.kind in named, passage.kind in kinds, staged, -i, i))
    if not answering:
        return []
    best = max(answering)[-1]  # a section of the kind the question names first ("gene": genetic changes)
    # The section is about the question's condition, so a sentence stating what is asked (a need's statement, rule
    # 2b) answers where it leaves the subject to the section ("Four types of standard treatment are used:
    # Chemotherapy; ..." in Adult ALL's treatment section, which never repeats "adult"): after the rule's sentences,
    # before those restating the topic ("There are different types of treatment for patients with adult ALL.").
    # (A definition's cue words are no such sign: a section's lead says what a condition is, whatever its verb.)
    needs = [need for need in addressing.needs if need not in ("finding", "definition")]
    tier = {s.text: 0 if ok else 1 if any(states(s.text, need) for need in needs) else 2 for s, ok in judged[best]}
    # stable: by similarity, the rule's first, then those stating a need, then those naming the stage asked about
    addressing_first: dict[str, Sentence] = {}  # by text: a sentence the section repeats is quoted once
    for sentence, _ in sorted(
        judged[best], key=lambda item: (tier[item[0].text], not addressing.names_stages(item[0].text))
    ):
        addressing_first.setdefault(sentence.text, sentence)
    order: dict[str, int] = {}  # a sentence the section repeats (a PDQ summary's key points): where it is first
    for place, text in enumerate(passage_sentences(passages[best])):
        order.setdefault(text, place)
    best_quotes = list(addressing_first.values())[: options.quotes_per_record]
    quotes = sorted(best_quotes, key=lambda s: order.get(s.text, len(order)))
    lead = min(quotes, key=lambda s: tier[s.text], default=None)  # the best tier's first in the page's order
    if lead is not None and tier[lead.text] < tier[quotes[0].text]:
        quotes = [lead, *(s for s in quotes if s is not lead)]
    return quotes


def _about(title: str, conditions: Sequence) -> bool:
    """Whether a page's ``title`` names one of ``conditions``, or a condition one of theirs is a kind of ("Lung Cancer"
    for small cell lung cancer)."""
    stems = frozenset(content_terms(title))
    broader = condition_stems(title)
    return any(c.named_in(stems) for c in conditions) or (
        len(broader) > 1 and any(broader <= name for c in conditions for name in c.names)
    )


def closest_page(
    question: str,
    ranked: list[Sentence],
    passages: Sequence[Passage],
    addressing: Addressing,
    options: AnswerOptions,
    research: Sequence[Sentence],
) -> list[Sentence]:
    """When neither a page section nor research answers ``question``: the chunk of a patient page about its
    condition, read as the closest evidence instead of the closest ``research`` (none, where no research sentence is
    close enough to quote) where it names more of the question's conditions than the research's records do ("what
    are the chances of surviving testicular cancer if it has spread to the lungs?" found cancer.gov's testicular
    cancer pages but quoted a study of prostate and lung cancer). Research naming them as often stays (on the BioASQ
    tuning split, a page put first replaced a study listing measles' symptoms by "Sometimes measles can lead to
    serious problems."). Only a page whose title names one of the question's conditions or a wider one (not one only
    the search's expansion found: a thyroid cancer page for a lump in the neck), and a chunk naming every specialist
    word of the question; the chunk naming most of the conditions first, then the one holding the closest sentence
    by similarity (the kinds of section the question asks for, tried as the second key, put cancer.gov's clinical
    trials sections first). Its best sentences by similarity, the closest first; empty when no chunk qualifies."""
    conditions = [s for s in addressing.subjects if s.kind == "disease"]
    if not conditions:
        return []

    def named_by(text: str) -> int:
        stems = split_stems(text)
        return sum(s.named_in(stems) for s in conditions)

    least = named_by(" ".join(record_text(passages[s.rank]) for s in research))  # a page must name more of them
    closeness: dict[int, float] = {}  # each chunk's best sentence by similarity
    for sentence in ranked:
        closeness.setdefault(sentence.rank, sentence.score)
    candidates = []
    specifics: list[str] | None = None  # read only for a page about the condition, as page_quotes reads them
    for i, passage in enumerate(passages):
        if not (passage.is_patient_information and _about(passage.title or "", conditions)):
            continue
        text = f"{passage.text} {record_text(passage)}"
        named = named_by(text)
        if named <= least:
            continue
        specifics = page_specifics(question, addressing) if specifics is None else specifics
        if names_all(specifics, text):
            candidates.append((named, closeness.get(i, 0.0), i))
    if not candidates:
        return []
    best = max(candidates)[-1]
    quotes: dict[str, Sentence] = {}  # by text: a sentence the section repeats is quoted once
    for sentence in sorted((s for s in ranked if s.rank == best), key=lambda s: -s.score):
        quotes.setdefault(sentence.text, sentence)
    return list(quotes.values())[: options.quotes_per_record]


def page_states_asked(quotes: Sequence[Sentence], passages: Sequence[Passage], addressing: Addressing) -> bool:
    """Whether a page section's ``quotes`` (``page_quotes``) state what was asked, not only its topic: the rule accepts
    one of them (they come first), or the section names every thing the question asks about but the words naming its
    own kind ("outlook" for an outlook section, "diagnose" for exams and tests), and the quotes name the stage asked
    about ("stage 3": not a list of stages). A treatment section listing riluzole does not say whether lithium helps
    ALS; "What is the outlook for pseudotumor cerebri?" is answered by its page's outlook section; an inheritance
    section saying most breast cancers are not inherited does not say whether breast cancer's prognosis is."""
    if not quotes:
        return False
    if any(addressing.addresses(s.text, record_text(passages[s.rank])) for s in quotes):
        return True
    if "types" in addressing.needs:
        return False  # which kinds a condition comes in is said by a sentence listing them, never by a section's kind
    if _YES_OR_NO.search(addressing.wording) and not _WH.search(addressing.wording):
        return False  # only a verdict is asked for ("can it be cured?"): the section's kind alone does not give one
    passage = passages[quotes[0].rank]
    section = frozenset(content_terms(record_text(passage)))
    wording = addressing.wording
    kind_words = frozenset(
        t
        for kind, cue in _KIND_WORDS
        if kind == passage.kind
        for m in cue.finditer(wording)
        for t in content_terms(m[0])
    )
    named = all(s.named_in(section) or s.named_in(kind_words) for s in addressing.subjects if s.kind != "stage")
    return named and addressing.names_stages(" ".join(s.text for s in quotes))


__all__ = [
    "AnswerChooser",
    "TRAINED_CHOOSER",
    "closest_page",
    "names_focus",
    "page_quotes",
    "page_states_asked",
    "rescored",
    "section_kinds",
]
