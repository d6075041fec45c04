"""Screening a question before anything else sees it, and keeping secrets out of logs.

``check_question`` cleans the text (control characters, length, quoting characters), removes personal details
(:mod:`cpqa.safety.phi`), checks the language, triages it by symptom category (:mod:`cpqa.safety.categories`: the
instant rules, then by meaning once a sentence encoder is loaded, then a language model's pass when one is
configured) and raises the dosing, interaction and decision referrals (:mod:`cpqa.safety.triage`).
The pipeline uses only ``Screened.question`` from then on: for NCBI, Anthropic, traces and logs.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

from pydantic import BaseModel, Field, model_validator

from cpqa.options import SafetyOptions
from cpqa.safety.languages import detect, languages
from cpqa.safety.languages import prepare as prepare_languages
from cpqa.safety.phi import PHIRedaction, scrub_phi
from cpqa.safety.categories import RED, Finding, TriageBook, most_severe_first
from cpqa.sentences import split_rough
from cpqa.safety.triage import (
    is_personal_decision,
    is_personal_dosing,
    is_personal_interaction,
    soon_message,
    urgent_message,
)

if TYPE_CHECKING:  # the encoder stays unloaded until a pipeline brings one
    from cpqa.safety.meaning import MeaningTriage

__all__ = ["InvalidQuestion", "Screened", "check_question", "prepare", "scrub_phi", "PHIRedaction", "ENGLISH_ONLY"]

ENGLISH_ONLY = (
    "Only English questions are supported for now: the evidence search and the answers work in English. "
    "Please ask your question in English."
)


# A referral reaches the person on every path (an answer, an abstention, no evidence, an error), so it never says
# that evidence follows.
DECISION_REFERRAL = (
    "Whether a treatment is right for you is a decision to make with your care team, who know your situation. "
    "Research can only report what happened to other people in general: take it to them."
)
DOSING_REFERRAL = (
    "Your question is about your own dose or about stopping or changing your own treatment. Only your care team can "
    "answer that for you: please ask them before you take, stop or change anything. Research can only report what "
    "happened to other people in general."
)
INTERACTION_REFERRAL = (
    "Whether your own medicines (or foods, drinks and supplements) can be taken together is a question for your "
    "pharmacist or care team, who know everything you take: please ask them before you combine anything. Research "
    "can only report what happened to other people in general."
)


class InvalidQuestion(ValueError):
    """The input cannot be used as a question (empty, only spaces or symbols)."""


class Screened(BaseModel):
    """A question that is safe to send to NCBI and Anthropic and to write to traces and logs."""

    question: str
    notices: list[str] = Field(default_factory=list)  # shown to the user
    removed_phi: list[str] = Field(default_factory=list)  # kinds of personal details removed, never the values
    urgent: str | None = None  # the red signs' message (crisis line, emergency number, 24-hour line), shown first
    care_soon: str | None = None  # amber signs only: see the care team today
    triage: list[Finding] = Field(default_factory=list)  # every sign found, by which screen, with its evidence
    personal_dosing: bool = False  # asks for a personal dose / stopping treatment: evidence + "ask your care team"
    personal_interaction: bool = False  # asks whether their own medicines go together: evidence + pharmacist
    personal_decision: bool = False  # asks what to decide about their own care: evidence + care-team referral
    language_ok: bool = True
    language: str = "English"  # the asker's language, by its English name ("another language" when unnamed)
    refusal: str | None = None  # for a question in another language with no model to translate: what it is told
    english: str | None = None  # a language model's English search intent for a question in another language
    red_flags: list[str] = Field(default_factory=list)  # the red signs, by name
    history: list[str] = Field(default_factory=list)  # the earlier turns of a dialogue, personal details removed
    by_meaning: bool = False  # triage by meaning ran (the rules run always)
    by_model: bool = False  # a language model's triage pass ran

    # The referrals this question gets, as one message (the decision referral gives way to the dosing one): written
    # from the personal_* flags whenever the screen makes or raises them, so every later stage reads it as it is
    referral: str | None = None

    @model_validator(mode="after")
    def _referred(self) -> "Screened":
        said = [
            DOSING_REFERRAL if self.personal_dosing else None,
            INTERACTION_REFERRAL if self.personal_interaction else None,
            DECISION_REFERRAL if self.personal_decision and not self.personal_dosing else None,
        ]
        self.referral = " ".join(m for m in said if m) or None
        return self

    def referred(self, kind: str) -> "Screened":
        """This screen with a personal referral raised (``kind``: "dosing", "interaction" or "decision")."""
        return self.model_validate({**self.model_dump(), f"personal_{kind}": True})

    @property
    def crisis(self) -> bool:
        return any(f.action == "crisis" for f in self.triage)

    def with_findings(self, findings: list[Finding]) -> "Screened":
        """This screen with ``findings`` added (a later screen may raise a flag, never lower one)."""
        merged = most_severe_first(
            {(f.category, f.action): f for f in [*findings, *self.triage]}.values()  # the earlier screen's evidence
        )
        red = [f for f in merged if f.action in RED]
        urgent = urgent_message(red)
        local = languages().get(self.language)
        if urgent and local is not None:  # first in the asker's language, then in full in English
            said = [
                local.crisis if any(f.action == "crisis" for f in red) else "",
                local.urgent if any(f.action != "crisis" for f in red) else "",
            ]
            urgent = " ".join(m for m in said if m) + f"\n\n{urgent}"
        return self.model_copy(
            update={
                "triage": merged,
                "urgent": urgent,
                "care_soon": soon_message(merged),
                "red_flags": list(dict.fromkeys(f.sign for f in red)),
            }
        )


def first_messages(screened: Screened) -> list[str]:
    """What a display shows the moment screening ends, before any search: the urgent message first (a crisis line
    before anything else), then the care-team-today message, the referrals and the notices (personal details removed,
    question shortened, language)."""
    return [m for m in (screened.urgent, screened.care_soon, screened.referral) if m] + list(screened.notices)


_QUOTES = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u2032": "'",
        "\u00b4": "'",
        "`": "'",
    }
)


def _clean(text: str) -> str:
    """NFKC-normalise, drop control and invisible format characters, straighten quotes, collapse whitespace."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(
        " " if ch in "\t\n\r\v\f" else ch
        for ch in text
        if ch in "\t\n\r\v\f" or unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co", "Cn"}
    )
    return re.sub(r"\s+", " ", text.translate(_QUOTES)).strip()


def _truncate(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, keeping what it asks: a long paste (a letter, a report) usually ends with
    the question, so the last sentence that asks one is kept whole, after as much of the start as fits."""
    if len(text) <= limit:
        return text
    sentences = split_rough(text)
    asked = next((s for s in reversed(sentences) if s.rstrip().endswith("?")), sentences[-1])
    asked = _cut(asked, limit // 2)  # a runaway "sentence" cannot crowd out everything else
    room = limit - len(asked) - len(" ... ")
    head = _cut(text[: text.rfind(asked)].rstrip(), room)
    return f"{head} ... {asked}" if head else asked


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.75 else cut).rstrip()


# ---------------------------------------------------------------- language
# Languages a patient here is likely to write in besides English; the detector weighs English against them.
_LANGUAGES = (
    "ENGLISH",
    "SPANISH",
    "FRENCH",
    "GERMAN",
    "PORTUGUESE",
    "ITALIAN",
    "DUTCH",
    "POLISH",
    "SWEDISH",
    "DANISH",
    "BOKMAL",
    "FINNISH",
    "TURKISH",
    "VIETNAMESE",
    "ROMANIAN",
    "CZECH",
    "HUNGARIAN",
    "INDONESIAN",
    "TAGALOG",
    "CROATIAN",
    "SLOVAK",
    "CATALAN",
)
_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)
# English function words: the grammar of a question, whatever its medical terms (which n-gram models misread).
_ENGLISH_GRAMMAR = frozenset(
    "the a an is are was were be been what which who how why when where does do did can could should would will i my "
    "me you your it this that these those of to in for on with and or not no have has had there their about from "
    "after before than more most any some other its if at by will very".split()
) - frozenset("a an in no be on do i me".split())  # words other languages spell the same way are no evidence of English


@lru_cache(maxsize=1)
def _detector():
    """lingua's detector over ``_LANGUAGES`` (n-gram models, loaded once: about half a second)."""
    from lingua import Language, LanguageDetectorBuilder

    return (
        LanguageDetectorBuilder.from_languages(*(getattr(Language, n) for n in _LANGUAGES))
        .with_low_accuracy_mode()
        .build()
    )


def prepare() -> None:
    """Load what screening needs (the language models) now, so the first question's screening is instant."""
    _detector()
    prepare_languages()


def _is_english(text: str, foreign_confidence: float) -> bool:
    """Latin script, and not confidently another language. A question with English grammar passes whatever its
    medical terms; short or technical ones ("HER2+ NSCLC?", "pembrolizumab") pass too: the detector is only asked
    about three words or more without English grammar, and only trusted when it is sure."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return True
    latin = sum(1 for ch in letters if unicodedata.name(ch, "").startswith("LATIN"))
    if latin / len(letters) < 0.6:
        return False
    if "¿" in text or "¡" in text:
        return False
    words = [w.lower() for w in _TOKEN.findall(text)]
    if len(words) < 3 or sum(w in _ENGLISH_GRAMMAR for w in words) >= 0.15 * len(words):
        return True
    best = _detector().compute_language_confidence_values(text)[0]
    return best.language.name == "ENGLISH" or best.value < foreign_confidence


# ---------------------------------------------------------------- screening
def check_question(
    text: str | None,
    meaning: "MeaningTriage | None" = None,
    options: SafetyOptions | None = None,
    history: Sequence[str] = (),
    translated: bool = False,
) -> Screened:
    """Screen a user's question, once: later stages read what it found from the returned ``Screened``. Raises
    :class:`InvalidQuestion` when nothing usable is left. ``meaning`` adds triage by meaning (a loaded sentence
    encoder) to the instant rules; ``history`` (earlier turns) is kept with personal details removed; ``translated``:
    a language model will translate a question in another language, so it is not refused."""
    options = options or SafetyOptions()
    if text is None or not str(text).strip():
        raise InvalidQuestion("Please type a question: the question is empty.")
    cleaned = _clean(str(text))
    if not cleaned:
        raise InvalidQuestion("Please type a question: the text contains only invisible or control characters.")
    if not any(ch.isalpha() for ch in cleaned):
        raise InvalidQuestion("Please type a question in words: the text contains no letters.")

    notices: list[str] = []
    scrubbed, removed = scrub_phi(cleaned)  # over the whole text, so truncation cannot split an identifier
    if removed:
        notices.append(
            "Personal details were removed from your question before it was searched or sent anywhere: "
            + ", ".join(removed)
            + "."
        )
    question = _truncate(scrubbed, options.max_question_chars)
    if len(question) < len(scrubbed):
        notices.append(
            f"Your message was longer than {options.max_question_chars:,} characters: its question was kept, with as "
            "much of the text before it as fits."
        )
    language_ok = _is_english(question, options.foreign_confidence)
    local = None if language_ok else detect(question)
    refusal = None
    if not language_ok:
        refusal = f"{local.only_english}\n\n{ENGLISH_ONLY}" if local else ENGLISH_ONLY
        if not translated:
            notices.append(refusal)
    screened = Screened(
        question=question,
        notices=notices,
        removed_phi=removed,
        personal_dosing=is_personal_dosing(scrubbed),
        personal_interaction=is_personal_interaction(scrubbed),
        personal_decision=is_personal_decision(scrubbed),
        language_ok=language_ok,
        language=local.name if local else "English" if language_ok else "another language",
        refusal=refusal,
        history=[scrub_phi(turn).text for turn in history if turn.strip()],
    ).with_findings(TriageBook.load().rules(scrubbed))  # the whole text: a sign at the end of a long paste counts
    if local is not None:  # the signs the screen can read in the asker's words (told in them first)
        screened = screened.with_findings(local.findings(scrubbed))
    return with_meaning(screened, meaning, options) if meaning is not None else screened


def with_meaning(screened: Screened, meaning: "MeaningTriage", options: SafetyOptions | None = None) -> Screened:
    """``screened`` completed by triage by meaning, once: a front end screens with the instant rules before any model
    loads (and shows an urgent message at once); the pipeline adds the meaning check when the encoder is ready,
    without screening the question again."""
    if screened.by_meaning:
        return screened
    options = options or SafetyOptions()
    screened = screened.model_copy(update={"by_meaning": True})
    if not screened.language_ok:  # the sentence encoder reads English: another language is the model's to read
        return screened
    kind = meaning.referral(screened.question, options)  # a referral raised by meaning, never one lowered
    if kind is not None:
        screened = screened.referred(kind)
    if screened.red_flags:
        return screened
    found = meaning.find(screened.question, options)
    return screened.with_findings([found]) if found else screened
