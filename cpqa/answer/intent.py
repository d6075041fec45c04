"""Whether an evidence sentence answers what was asked, or only mentions the topic.

"What are the side effects of radiotherapy for prostate cancer?" is not answered by a sentence about patients'
treatment preferences that names the same treatment. The rule, published in docs/results.md ("Answers that answer"):

1. **The question's needs** (``needs.question_needs``): the kinds of statement that answer it, read from its wording:
   side effects, symptoms, a rate, a mechanism, a recommendation, an effect, a risk, another name (what an
   abbreviation stands for, a drug's brand or generic name), a definition (only when nothing else is asked), or
   (none of these) any finding about its subject.
2. **A sentence addresses the question** (``Addressing.addresses``) when it (a) names the question's subject, each key
   concept by any of its names (the rewrite's concepts with their MeSH synonyms, matched by stem): the disease may be
   named by the sentence's record instead (an abstract about breast cancer does not repeat it in every sentence),
   a treatment must be named in the sentence (a drug the vocabulary does not hold too, known by its INN stem or code
   name: "Is celecoxib effective for ALS?" is not answered by a lithium trial), and of the other key concepts at most
   a third may be missing; and
   (b) states what one of its needs asks: a finding for an effect (a change, a comparison, a ratio, no difference), an
   association for a risk, a number or frequency for a rate, an adverse event for side effects (CTCAE's vocabulary
   in lay and clinical words), a sign for symptoms, an action for a mechanism, a name beside the subject's (in
   brackets, "also known as", a brand mark) for another name, a classification for a definition, a recommendation or
   treatment for a recommendation. A condition the rewrite did not recognise, asked by a phrase ("Japanese spotted
   fever"), is named by all the phrase's words or the sentence is about another (``names_another``).
3. **What a "which" question asks for** (``cpqa.answer.asked_type``): "which disease is treated with tebentafusp?"
   asks for a disease. A sentence naming the subject and a thing of that kind the question does not name
   (``Addressing.names_asked``) addresses it, and is quoted before the sentences that address it by rule 2.

The extractive answerer quotes addressing sentences first and says plainly when none addresses the question; a
model-written answer is checked by the same rule (``cpqa.answer.verify.judged``); ``cpqa eval answers`` counts
answers whose first sentence does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Callable, Sequence

from cpqa.answer.asked_type import AskedType, is_disorder, names_drug
from cpqa.answer.needs import question_needs, without_names
from cpqa.answer.statements import NEEDS, Need, names_beside, states
from cpqa.rewrite.stages import stage_marks
from cpqa.types import Passage
from cpqa.words import concept_names, content_terms, name_forms, names_rare_word

_I = re.IGNORECASE


# ------------------------------------------------------------------ the question's subject
@dataclass(frozen=True)
class Subject:
    """One key concept of the question, by all its names' stems."""

    names: tuple[frozenset[str], ...]  # each name as its set of content stems
    kind: str  # "disease", "treatment", "stage" (a stage or grade by number: named by the sentence) or "other"
    proper: bool = False  # named by a word general English rarely uses (a drug, a gene, a test's name)
    drug: bool = False  # a drug's name the vocabulary does not hold, by its INN stem or code ("tepotinib", "AMG334")
    text: str = ""  # as the question words it ("mouth cancer", "keytruda")

    def named_in(self, stems: frozenset[str]) -> bool:
        return any(name and name <= stems for name in self.names)


# The words a question uses to say what it asks for, not what it is about ("how common", "side effects", "risk").
_NEED_WORDS = frozenset(
    content_terms(
        "side effect effects adverse toxicity toxicities complication complications harm harms tolerability common "
        "rare often many much likely frequent frequently percentage proportion fraction number chance chances odds "
        "rate rates incidence prevalence frequency risk risks cause causes caused factor factors associated "
        "association link linked related mechanism mechanisms role work works act pathway function recommend "
        "recommended recommendation guideline guidelines best option options standard care symptom symptoms sign signs "
        "define definition mean meaning kind type effect effective efficacy benefit benefits outcome outcomes impact "
        "help helps improve reduce lower prevent increase expect happen first early earliest initial main typical "
        "usual inheritance inherited inherit hereditary genetic mode pattern onset age origin done explain explained "
        "life "  # "life expectancy": how long, not a subject a sentence must name
        # a condition's class: a sentence from the condition's record names the condition, not its class
        "disease diseases disorder disorders syndrome syndromes condition conditions illness "
        # asking for another name ("what does FBDD stand for?", "the trade name of apixaban")
        "name names stand stands synonym synonyms tradename trade brand generic acronym abbreviation"
    )
)
# "How is it treated?", "how is it managed?": the asking of a recommendation, as "what is the treatment?" (an intent)
# is; in "which disease is treated with tebentafusp?" the verb is what the sentence must state.
_TREATING = frozenset(content_terms("treat treated treating manage managed cure cured"))
_OUTCOME_NEEDS = ("effect", "risk")  # an intent word that is not a need word is the outcome asked about ("recurrence")


def asks_only(text: str) -> bool:
    """Whether ``text`` is made only of words saying what is asked ("tradename", "side effects"), not what about."""
    stems = set(content_terms(text))
    return bool(stems) and stems <= _NEED_WORDS


def subjects_of(concepts: Sequence, needs: Sequence[Need] = ("finding",)) -> list[Subject]:
    """The key concepts an answering sentence must name (``Concept``s of the rewrite, with their phrases, synonyms and
    MeSH heading): neither weak nor a word saying what is asked (``_NEED_WORDS``; for a recommendation, the verb of
    treating, ``_TREATING``); an intent concept only as the outcome of an effect or a risk ("recurrence" in "does
    tamoxifen reduce the risk of recurrence?")."""
    found = []
    for concept in concepts:
        stems = set(content_terms(concept.text))
        if getattr(concept, "weak", False) or not stems or stems <= _NEED_WORDS:  # ``asks_only``, stemmed once
            continue
        if concept.kind == "intent" and not set(needs) & set(_OUTCOME_NEEDS):
            continue
        if "recommendation" in needs and stems <= _TREATING:
            continue
        texts = set(concept_names(concept))
        names = tuple(form for t in texts for form in name_forms(frozenset(content_terms(t))) if form)
        if names:
            kind = "other" if concept.kind == "intent" else concept.kind
            found.append(
                Subject(
                    names=names,
                    kind=kind,
                    proper=names_rare_word(concept.text),
                    drug=names_drug(concept.text),
                    text=concept.text,
                )
            )
    return found


@dataclass
class Addressing:
    """The rule, bound to one question: ``addresses(sentence, record_text)``."""

    needs: tuple[Need, ...]
    subjects: list[Subject]
    wording: str = ""  # the question as asked, its conditions named "it" (``without_names``)
    asks_for: AskedType | None = None  # what a "which" question asks for (rule 3)
    phrases: tuple[tuple[str, ...], ...] = ()  # conditions it names by a phrase the rewrite did not recognise

    @classmethod
    def of(cls, question: str, concepts: Sequence | None = None) -> "Addressing":
        """The rule for ``question``, whose subject is ``concepts`` (the rewrite's); without them, the question's
        concepts by the built-in vocabulary."""
        if concepts is None:
            from cpqa.rewrite.concepts import process_question
            from cpqa.rewrite.vocabulary import BUILTIN, Vocabulary

            concepts = process_question(question, Vocabulary(BUILTIN)).concepts
        wording = without_names(question, concepts)
        needs = question_needs(wording)
        stages = [Subject(names=(frozenset({mark}),), kind="stage") for mark in sorted(stage_marks(question))]
        subjects = subjects_of(concepts, needs) + stages
        return cls(
            needs=needs,
            subjects=subjects,
            wording=wording,
            asks_for=None if "name" in needs else AskedType.of(wording),  # another name: rule 2b says which
            phrases=_phrases(wording, subjects),
        )

    def names_subject(self, sentence: str, record_text: str = "") -> bool:
        """Rule 2a: every treatment (and drug, and stage asked about by number) named in the sentence, a disease in the
        sentence or its record, and of the rest at most a third missing."""
        stems, record = _named(sentence, record_text)
        others = [s for s in self.subjects if s.kind not in ("disease", "treatment", "stage")]
        if not all(s.named_in(stems) for s in self.subjects if s.kind in ("treatment", "stage") or s.drug):
            return False
        if not all(s.named_in(record) for s in self.subjects if s.kind == "disease"):
            return False
        missing = sum(not s.named_in(stems) for s in others)
        return missing <= len(others) // 3

    def names_stages(self, text: str) -> bool:
        """Whether ``text`` itself names every stage or grade the question asks about by number (True when none)."""
        return all(s.named_in(stage_marks(text)) for s in self.subjects if s.kind == "stage")

    def asked(self, question: str) -> str:
        """The question with every name of its subjects (the rewrite's synonyms, the lay words' clinical terms)."""
        return " ".join([question, *(" ".join(name) for s in self.subjects for name in s.names)])

    def names_condition(self, text: str, record_text: str = "") -> bool:
        """Whether ``text`` (with its record) names every disease and treatment the question is about: what a patient
        page's section must be about (the page's headings say what it states, so the question's other words need not
        be in it)."""
        return not self._unnamed((text, record_text), _a_condition)

    def names_topic(self, text: str, record_text: str = "") -> bool:
        """Whether ``text`` with its record names the condition the question is about and every treatment and
        specialist name it asks with ("pioglitazone"): what the closest evidence is drawn from first when nothing
        answers ("kidney cancer survival after the kidney is removed" is not near kidney grafts). False when the
        question names no condition."""
        return self._asks_about_a_condition and not self._unnamed((text, record_text), _a_topic_name)

    def topic_unnamed(self, record_texts: Sequence[str]) -> list[Subject]:
        """The question's condition, treatments and specialist names (as ``names_topic`` reads them) that none of
        ``record_texts`` names; none when the question names no condition. Quotes drawn from such records are the
        nearest evidence, not evidence about the topic ("mouth cancer" asked, "cancer of the oral cavity" found:
        another wording, or another condition)."""
        return self._unnamed(record_texts, _a_topic_name) if self._asks_about_a_condition else []

    @cached_property
    def _asks_about_a_condition(self) -> bool:
        """Whether the question names a disease (read once: ``names_topic`` asks for every candidate sentence)."""
        return any(s.kind == "disease" for s in self.subjects)

    def _unnamed(self, texts: Sequence[str], which: Callable[[Subject], bool]) -> list[Subject]:
        """The subjects ``which`` selects that none of ``texts`` names."""
        stems = frozenset().union(*(split_stems(text) for text in texts))
        return [s for s in self.subjects if which(s) and not s.named_in(stems)]

    def names_asked(self, sentence: str, record_text: str = "") -> bool:
        """Rule 3: ``sentence`` names a thing of the kind a "which" question asks for, and what the question names: its
        subjects named by words general English rarely uses (a disease may be named by the record; at most a third
        missing), or (it names none) its subject by rule 2a. "Which company produces the Oncomine Dx target test?" is
        about Oncomine; "company", "produces" and "target" say what is asked."""
        if not (self.asks_for and self.asks_for.named_in(sentence)):
            return False
        proper = [s for s in self.subjects if s.proper]
        if not proper:
            return self.names_subject(sentence, record_text)
        stems, record = _named(sentence, record_text)
        missing = sum(not s.named_in(record if s.kind == "disease" else stems) for s in proper)
        return missing <= len(proper) // 3

    def addresses(self, sentence: str, record_text: str = "") -> bool:
        """Whether ``sentence`` (from a record holding ``record_text``) answers one of the question's needs (rule 2),
        or names what a "which" question asks for (rule 3); never one about another condition (``names_another``)."""
        if self.names_another(sentence):
            return False
        stated = any(self._names_beside(sentence) if need == "name" else states(sentence, need) for need in self.needs)
        if stated and self.names_subject(sentence, record_text):
            return True
        return self.names_asked(sentence, record_text)

    def _names_beside(self, sentence: str) -> bool:
        """Rule 2b for another name: ``sentence`` gives one of the subject's words another name beside it."""
        return names_beside(sentence, self._subject_stems)

    @cached_property
    def _subject_stems(self) -> set[str]:
        """Every stem of every subject's names (read for each candidate sentence of the question)."""
        return {stem for s in self.subjects for name in s.names for stem in name}

    def names_another(self, sentence: str) -> bool:
        """Whether ``sentence`` names a condition the question names by a phrase the rewrite did not recognise, but
        not by all of its words: "In Brazil, spotted fever is caused by ..." is not about Japanese spotted fever."""
        if not self.phrases:  # most questions: no stems to read for every candidate sentence
            return False
        named = split_stems(sentence)
        return any(phrase[-1] in named and not set(phrase) <= named for phrase in self.phrases)


def _a_condition(subject: Subject) -> bool:
    return subject.kind in ("disease", "treatment")


def _a_topic_name(subject: Subject) -> bool:
    """A subject the closest evidence's record must name: the condition, a treatment, a drug or a rare name."""
    return _a_condition(subject) or subject.drug or subject.proper


def _phrases(wording: str, subjects: Sequence[Subject]) -> tuple[tuple[str, ...], ...]:
    """Runs of two or more adjacent words of ``wording`` (punctuation parts them) that name a condition the rewrite
    did not recognise, its last word a condition's ("Japanese spotted fever"), each word naming one of its subjects
    other than a disease or a treatment, as stems (a hyphenated word as its parts): the phrases a sentence about
    another condition of the kind shares in part."""
    own = {stem for s in subjects if s.kind == "other" for name in s.names for stem in name}
    runs: list[tuple[str, ...]] = []
    for part in re.split(r"[^\w\s-]+", wording):
        run: list[str] = []
        for word in (*part.split(), ""):
            if word and next(iter(content_terms(word)), "") in own:
                run.append(word)
                continue
            if len(run) > 1 and is_disorder(run[-1]):
                runs.append(tuple(stem for w in run for stem in content_terms(w.replace("-", " "))))
            run = []
    return tuple(runs)


def split_stems(text: str) -> frozenset[str]:
    """The content stems of ``text``, a hyphenated word both whole and as its parts ("ragged-red", "ragged", "red")."""
    return _stems(text) | _stems(text.replace("-", " "))


@lru_cache(maxsize=256)
def _stems(text: str) -> frozenset[str]:
    """Content stems of a text and the stages it names (``stage_marks``); kept, since every sentence of a passage is
    judged against the same record text."""
    return frozenset(content_terms(text)) | stage_marks(text)


def _named(sentence: str, record_text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stems ``sentence`` names (its own, and what it names by its record: ``_spelled_out``), and those with its
    record's."""
    if not record_text:
        return _stems(sentence), _stems(sentence)
    stems = _stems(sentence) | _spelled_out(sentence, record_text)
    return stems, _stems(record_text) | stems


@lru_cache(maxsize=256)
def _abbreviations(record_text: str) -> tuple[tuple[re.Pattern, frozenset[str], frozenset[str], str], ...]:
    """The abbreviations a record defines ("Duchenne muscular dystrophy (DMD)"), each as a pattern finding the short
    form, the short form's stems, the long form's stems and the long form."""
    from cpqa.rewrite.concepts import defined_abbreviations

    return tuple(
        (
            re.compile(rf"(?<![\w-]){re.escape(short)}(?![\w-])"),
            frozenset(content_terms(short)),
            frozenset(content_terms(long)),
            long,
        )
        for short, long in defined_abbreviations(record_text).items()
    )


def long_forms(sentence: str, record_text: str) -> list[str]:
    """The long forms of the abbreviations ``record_text`` defines (NCBI's Ab3P) that ``sentence`` uses."""
    return [long for short, _, _, long in _abbreviations(record_text) if short.search(sentence)] if record_text else []


_REFERS_BACK = re.compile(
    r"\b(?:this|these|the) (?:conditions?|disorders?|diseases?|syndromes?|cancers?|tumou?rs?|malignanc(?:y|ies))\b", _I
)


def _spelled_out(sentence: str, record_text: str) -> frozenset[str]:
    """What ``sentence`` names by its record: an abbreviation the record defines names its long form ("DMD" names
    Duchenne muscular dystrophy in a record that spells it out) and the long form the abbreviation ("human
    papillomavirus" names HPV); a sentence saying "this condition" names what its record (a patient page's section,
    an abstract) is about."""
    if _REFERS_BACK.search(sentence):
        return _stems(record_text)
    stems, named = _stems(sentence), set[str]()
    for short, short_stems, long, _ in _abbreviations(record_text):
        if short.search(sentence):
            named |= long
        elif long and long <= stems:
            named |= short_stems
    return frozenset(named)


def record_text(passage: Passage) -> str:
    """What a passage says of its record: title, passage and the record's conclusions (a sentence's context)."""
    return " ".join(t for t in (passage.title, passage.text, passage.conclusion) if t)


__all__ = ["Addressing", "asks_only", "long_forms", "record_text", "NEEDS", "Need", "subjects_of"]
