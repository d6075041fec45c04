"""The answerer: Claude writes a cited answer from the retrieved passages; without Claude, the best evidence
sentences are quoted instead (clearly labelled). Also a multiple-choice mode for evaluation.

Evidence reaches Claude as delimited data (a per-request tag; ``<`` and ``>`` inside evidence are escaped, so
the block cannot be closed from inside) with an instruction to ignore instructions in it. Output is a forced
tool call: reasoning (never shown), answer, citations, abstained. Every cited PMID is then checked against the
evidence (:mod:`cpqa.answer.citations`). Prompt templates live in ``cpqa/prompts/``.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from pydantic import BaseModel, Field, ValidationError

from cpqa.answer.chooser import AnswerChooser, closest_page, page_quotes, page_states_asked, rescored
from cpqa.answer.ranker import AnswerRanker
from cpqa.answer.citations import MARKER, check_citations, marker_pmids, whole_sentences
from cpqa.answer.intent import Addressing
from cpqa.answer.statements import effect_size
from cpqa.answer.postedit import TREATMENT_CHANGE_FLAG, as_shown
from cpqa.answer.verify import TREATMENT_REFERRAL, SupportChecker, judged
from cpqa.documents.study_type import PRECLINICAL
from cpqa.answer.extractive import Sentence, not_direct_label, page_heading, quote_line, rank_sentences, select_answer
from cpqa.answer.messages import EXTRACTIVE_LABEL, NO_EVIDENCE, RESEARCH_ADDS, STREAM_CUT, THIN_EVIDENCE, UNSUPPORTED
from cpqa.models.encoders import Encoder
from cpqa.options import AnswerOptions, PipelineOptions, SupportOptions
from cpqa.quotable import addresses_reader
from cpqa.models.llm import LLM, LLMError, LLMStreamCut, LLMUnavailable, ToolSpec
from cpqa.prompts import escape, evidence_tag, template
from cpqa.safety.screening import Screened
from cpqa.types import Answer, ComponentChoice, Mode, Passage

MODES: tuple[str, ...] = ("patient", "clinician")
_RETRY_NOTE = (
    "\n\nYour previous reply could not be used: call the tool once more and fill every field with the right type."
)


class _ToolAnswer(BaseModel):
    """The answer tool's input, and what reads the reply."""

    reasoning: str = Field("", description="Step-by-step reasoning over the evidence; never shown to the reader.")
    abstained: bool = Field(False, description="true when the evidence does not answer the question")
    answer: str = Field("", description="The answer for the reader; every claim cites [PMID:<number>] of the evidence.")
    citations: list[str] = Field(default_factory=list, description="Every PMID cited.")


ANSWER_TOOL = ToolSpec.of(
    "give_answer",
    "Give the answer to the reader's question, grounded in and citing the evidence documents.",
    _ToolAnswer,
)


class Unusable(ValueError):
    """Claude's tool input has the right shape but cannot be used (empty answer, no valid letter)."""


_SOURCES = {
    "D1": "PubMed abstract",
    "D2": "PMC review, full text",
    "D3": "PMC article, full text",
    "D4": "NIH patient information",
}


def format_evidence(passages: Sequence[Passage]) -> str:
    """Numbered evidence documents with their PMIDs (or, for patient information, the page's site, section and key),
    each in its own element, all text escaped."""
    blocks = []
    for i, p in enumerate(passages, 1):
        if p.is_patient_information:
            facts = [f"NIH key {p.pmid}", p.site or "", _SOURCES["D4"], f"section: {p.section}" if p.section else ""]
            attribute = f'key="{escape(p.pmid)}"'
        else:
            facts = [
                f"PMID {p.pmid}",
                str(p.year or ""),
                p.journal or "",
                _SOURCES.get(p.source, p.source),
                f"section: {p.section}" if p.section else "",
            ]
            attribute = f'pmid="{escape(p.pmid)}"'
        header = " | ".join(escape(f) for f in facts if f)
        title = f"\nTitle: {escape(p.title)}" if p.title else ""
        conclusion = f"\nThe record's conclusions: {escape(p.conclusion)}" if p.conclusion else ""
        blocks.append(f'<document index="{i}" {attribute}>\n{header}{title}\n{escape(p.text)}{conclusion}\n</document>')
    return "\n".join(blocks)


class Answerer:
    """``answer`` a question from passages in a mode. ``options``: the defaults of a question asked without its own
    (its ``answer`` and ``support`` sections are read)."""

    def __init__(
        self,
        llm: LLM | None = None,
        encoder: Encoder | None = None,
        options: PipelineOptions | None = None,
        *,
        redact: Callable[[str], str] = str,
        chooser: AnswerChooser | None = None,
        ranker: AnswerRanker | None = None,
        research: Encoder | None = None,
    ):
        """``encoder`` scores evidence sentences, ``research`` a research record's for a clinician where given;
        ``redact`` keeps keys out of a notice's failure reasons; ``chooser`` / ``ranker``: the answer chooser and
        ranker (``AnswerOptions.chooser`` / ``ranker``)."""
        self.research = research
        self.redact = redact
        self.chooser = chooser
        self.ranker = ranker
        self.llm = llm if llm is not None and llm.available else None
        self.unconfigured = llm.unconfigured if llm is not None else "no language model"
        self.encoder = encoder
        self.options = options or PipelineOptions()

    @property
    def choice(self) -> ComponentChoice:
        if self.llm is not None:
            return self.llm.choice("answerer")
        return self._extractive_choice(self.unconfigured)

    def _extractive_choice(self, reason: str) -> ComponentChoice:
        scorer = "embedding similarity" if self.encoder is not None else "lexical similarity"
        return ComponentChoice(
            component="answerer", model=f"extractive evidence answer ({scorer})", profile="offline", reason=reason
        )

    def used(self, answer: Answer) -> ComponentChoice:
        """The answerer that actually wrote ``answer``: the extractive fallback when Claude could not be used."""
        if self.llm is not None and answer.written_by == "extractive":
            return self._extractive_choice(f"{self.llm.label} could not be used for this answer (see the notices)")
        return self.choice

    # ------------------------------------------------------------ answers
    def answer(
        self,
        screened: Screened,
        passages: Sequence[Passage],
        mode: Mode = "patient",
        *,
        question: str | None = None,
        draft: str | None = None,
        on_text: Callable[[str], None] | None = None,
        verify: bool = True,
        options: PipelineOptions | None = None,
        concepts: Sequence | None = None,
    ) -> Answer:
        """A cited answer, which says first when the evidence does not answer the question directly (its sentences
        judged by ``cpqa.answer.intent`` against ``concepts``, the rewrite's) to ``screened``, the safety stage's result
        (``cpqa.safety.Screen``, ``check_question``): the question with its personal details removed, and the urgent
        message, notices, referral and language the answer reads and never works out again. ``question``: what the
        answer addresses when not the screened question itself (the search intent a rewrite drew from it).
        ``draft`` (COT-Refine) is an answer written without evidence, which Claude revises against the evidence.
        ``on_text`` streams Claude's answer text as it is written, before the citation check; the returned answer is
        the checked one.
        ``verify``: every cited sentence checked against what it cites, and advice to change a treatment replaced
        by the care-team referral (``cpqa.answer.verify``)."""
        if not isinstance(screened, Screened):  # the type a caller cannot skip: personal details are removed first
            raise TypeError(f"the answerer reads a screened question (cpqa.safety.screening), not {type(screened)}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        options = options or self.options
        question = question or screened.question
        referral = screened.referral  # what the screen found is read, not derived again
        personal = referral is not None
        notices: list[str] = []
        addressing = Addressing.of(question, concepts)
        language = screened.language
        # Evidence is data: a record that addresses its reader (instructions, links, markup left after cleaning) is
        # not evidence for the answer, whoever writes it; the trace still shows it, ranked last.
        passages = [p for p in passages if not addresses_reader(p.text, p.is_patient_information)]
        result: Answer | None  # None only when the model's answer failed, until the extractive fallback
        if not passages:
            result = Answer(text=NO_EVIDENCE, abstained=True, written_by="extractive")
        elif self.llm is None:  # the quotes' first line says that no language model wrote them
            result = self._extractive(question, passages, options.answer, mode, addressing)
        else:
            result, failure = self._claude_answer(
                question, passages, mode, personal, draft, on_text, options.answer, language
            )
            if result is None:
                notices.append(
                    f"{self.llm.label} could not be used ({failure}), so this answer quotes the evidence instead."
                )
                result = self._extractive(question, passages, options.answer, mode, addressing)
        if verify and (result.written_by == "llm" or not result.abstained):  # a model's abstention may claim too
            result = self._verified(result, passages, options.support)
        if result.written_by == "llm" and not result.abstained and language == "English":  # the rule reads English
            result = judged(result, passages, addressing)
        # the referral a field of its own, shown after the urgent message, whatever the answer
        return as_shown(result.model_copy(update={"notices": notices + result.notices}), screened, mode)

    def _claude_answer(
        self,
        question: str,
        passages: Sequence[Passage],
        mode: str,
        personal: bool,
        draft: str | None = None,
        on_text: Callable[[str], None] | None = None,
        options: AnswerOptions | None = None,
        language: str = "English",
    ) -> tuple[Answer | None, str]:
        """``language``: the asker's; a question in another language is answered in it (citations unchanged)."""
        budget = (options or self.options.answer).answer_max_tokens
        tag = evidence_tag()
        system = (
            template("answer_system")
            .substitute(
                register=template(f"register_{mode}").template,
                tag=tag,
                personal=template("personal_dosing").template if personal else "",
            )
            .strip()
        )
        if language != "English":
            system += "\n\n" + template("answer_language").substitute(language=language)
        user = template("answer_user").substitute(
            tag=tag, evidence=format_evidence(passages), question=escape(question), tool=ANSWER_TOOL.name
        ) + draft_note(draft)
        notices: list[str] = []
        try:
            data, failure = self.call_tool(system, user, ANSWER_TOOL, _parse_answer, on_text, max_tokens=budget)
        except LLMStreamCut as cut:
            arrived = whole_sentences(str(cut.partial.get("answer", "")))
            if not arrived:
                return None, self.redact(str(cut))
            data, failure = _ToolAnswer(answer=arrived), ""
            notices.append(STREAM_CUT)
        if data is None:
            return None, failure
        known = {p.pmid for p in passages}
        check = check_citations(data.answer, known)
        flags = check.flags
        listed = [key for key in (_cited_key(c) for c in data.citations) if key]  # "PMID:123" -> "123"
        for pmid in listed:
            flag = f"removed_unknown_citation:{pmid}"
            if pmid not in known and flag not in flags:
                flags.append(flag)
        citations = check.citations + [p for p in dict.fromkeys(listed) if p in known and p not in check.citations]
        text, abstained = check.text, data.abstained
        if not text:
            text, abstained = UNSUPPORTED, True
            flags.append("no_supported_claims")
        return Answer(
            text=text, citations=citations, abstained=abstained, flags=flags, written_by="llm", notices=notices
        ), ""

    def _verified(self, result: Answer, passages: Sequence[Passage], support: SupportOptions) -> Answer:
        """The answer without the sentences its citations do not support; the referral if it advises a change."""
        checker = SupportChecker(self.encoder, self.llm, support)
        check = checker.verify(result.text, passages, uncited=result.written_by == "llm")
        removed = result.removed_sentences + check.removed
        if check.advice:
            return result.model_copy(
                update={
                    "text": TREATMENT_REFERRAL,
                    "citations": [],
                    "abstained": True,
                    "flags": [*result.flags, TREATMENT_CHANGE_FLAG],
                    "removed_sentences": removed,
                }
            )
        if not check.removed:
            return result
        cited = [pmid for m in MARKER.finditer(check.text) for pmid in marker_pmids(m.group(0))]
        flags = [*result.flags, f"unsupported_sentences_removed:{len(check.removed)}:{check.method}"]
        if not cited:
            return result.model_copy(
                update={
                    "text": UNSUPPORTED,
                    "citations": [],
                    "abstained": True,
                    "flags": flags,
                    "removed_sentences": removed,
                }
            )
        return result.model_copy(
            update={
                "text": check.text,
                "citations": [c for c in result.citations if c in cited],
                "flags": flags,
                "removed_sentences": removed,
            }
        )

    def rank(
        self, question: str, passages: Sequence[Passage], options: AnswerOptions, patient: bool = True
    ) -> tuple[list[Sentence], float]:
        """The evidence sentences best first, and the similarity below which evidence is thin; a clinician's research
        sentences by the evidence scorer (``research``) with ``evidence_scorer`` on (never a patient's: the passage
        embedder reads lay questions better; docs/results.md, issue 36, stop 61)."""
        research = self.research if options.evidence_scorer and not patient else None
        return rank_sentences(question, passages, self.encoder, options, patient, research)

    def _extractive(
        self, question: str, passages: Sequence[Passage], options: AnswerOptions, mode: str, addressing: Addressing
    ) -> Answer:
        """Quotes that answer, or the closest evidence said to be so. Patient information (D4) that answers leads a
        patient's answer, attributed to its site, page and section, and what research adds follows (only quotes
        that answer); a clinician reads the research first and the patient information after."""
        ranked, threshold = self.rank(question, passages, options, patient=mode == "patient")
        chooser = self.chooser if options.chooser else None
        research = [s for s in ranked if not passages[s.rank].is_patient_information]
        chosen: dict[tuple[int, str], float] = {}
        if chooser is not None and options.chooser_candidates:
            research, chosen = rescored(chooser, question, research, options.chooser_candidates)
        merit = None
        if options.ranker and options.ranker_candidates:  # which research sentences name the answer, not the topic
            ranker = self.ranker or AnswerRanker.load()
            merit = ranker.probabilities(question, research, passages, addressing, options.ranker_candidates)
        on_page = page_quotes(question, ranked, passages, addressing, options, addressing.asked(question))
        quotes, direct = select_answer(research, threshold, question, passages, addressing, options, chosen, merit)
        page_answers = bool(on_page) and page_states_asked(on_page, passages, addressing)
        if on_page and not page_answers and direct and passages[quotes[0].rank].evidence_type not in PRECLINICAL:
            on_page = []  # a section sharing only the topic gives way to research in people that states what was asked
        if not on_page and not direct and mode == "patient":
            # Nothing answers: a patient page naming more of the question's conditions than the closest research does
            # (or about the condition where no research is close enough to quote)
            on_page = closest_page(question, ranked, passages, addressing, options, quotes)
        if on_page and not direct:  # the page answers: research that does not is left out
            quotes = []
        if not on_page and not quotes:
            return Answer(text=THIN_EVIDENCE, abstained=True, written_by="extractive")
        if mode == "clinician":  # numbers first: a ratio, an interval, a rate (stable, so best first within each)
            quotes = sorted(quotes, key=lambda s: not effect_size(s.text))
        blocks = []
        if on_page:
            first = passages[on_page[0].rank]
            blocks.append([page_heading(first), *(quote_line(s, passages[s.rank], mode) for s in on_page)])
        if quotes:
            heading = [RESEARCH_ADDS] if on_page and mode == "patient" else []
            lines = [quote_line(s, passages[s.rank], mode, lead=mode == "clinician" or bool(on_page)) for s in quotes]
            blocks.insert(0 if mode == "clinician" else len(blocks), heading + lines)
        body = "\n\n".join("\n".join(block) for block in blocks)
        check = check_citations(body, {p.pmid for p in passages})  # every answer is checked
        answered = page_answers or direct  # a section sharing only the topic is the closest evidence, said so
        head = EXTRACTIVE_LABEL if answered else not_direct_label(quotes, passages, addressing, bool(on_page))
        return Answer(
            text=f"{head}\n\n{check.text}",
            citations=check.citations,
            flags=check.flags,
            written_by="extractive",
            direct=answered,
        )

    # ------------------------------------------------------------ Claude calls
    def call_tool(
        self,
        system: str,
        user: str,
        tool: ToolSpec,
        parse,
        on_text: Callable[[str], None] | None = None,
        max_tokens: int | None = None,
    ):
        """Call ``tool`` and parse its input (``parse`` raises ``Unusable`` for a reply of the right shape that cannot
        be used); one retry when the reply was unusable. Returns (value, failure).
        With ``on_text`` the call streams its ``answer`` field; a stream that breaks raises ``LLMStreamCut``
        (the text the reader has seen is not silently replaced by a second, different answer)."""
        llm = self.llm
        if llm is None:
            raise RuntimeError("Answerer.call_tool needs an available language model")
        failure = ""
        max_tokens = max_tokens or self.options.answer.answer_max_tokens
        for attempt in range(2):
            messages = [{"role": "user", "content": user if attempt == 0 else user + _RETRY_NOTE}]
            try:
                if on_text is None:
                    data = llm.call_tool(system, messages, tool, max_tokens=max_tokens)
                else:
                    data = llm.stream_tool(system, messages, tool, "answer", on_text, max_tokens=max_tokens)
                return parse(data), ""
            except LLMStreamCut as cut:
                if whole_sentences(str(cut.partial.get("answer", ""))):
                    raise  # the reader saw part of this answer: keep it (checked) rather than write another
                failure = self.redact(str(cut))
            except LLMError as exc:
                failure = self.redact(str(exc))
                if isinstance(exc, LLMUnavailable):
                    break
            except (ValidationError, Unusable) as exc:
                failure = f"unusable {tool.name} reply: {exc.__class__.__name__}"
        return None, failure


def _cited_key(citation: str) -> str:
    """A tool reply's listed citation as a record key: "PMID:123" -> "123", "NIH:cancergov-1_1-2" -> its key."""
    keys = marker_pmids(f"[{citation.strip().strip('[]')}]")
    return keys[0] if keys else re.sub(r"\D", "", citation)


def draft_note(draft: str | None) -> str:
    """The COT-Refine block appended to a request: the draft to revise, escaped like evidence."""
    return f"\n\n{template('refine_revise').substitute(draft=escape(draft))}" if draft else ""


def _parse_answer(data: dict) -> _ToolAnswer:
    parsed = _ToolAnswer.model_validate(data)
    if not parsed.answer.strip() and not parsed.abstained:
        raise Unusable("empty answer")
    return parsed
