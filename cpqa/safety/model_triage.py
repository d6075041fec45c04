"""A language model's triage pass: with Claude or an OpenAI-compatible model configured, one short forced tool call
beside the search reads the question against the triage tool's red criteria (``cpqa.safety.categories``).

It can raise a flag, never lower one the rules or the meaning screen raised (``raised``), and its findings are named
``by="model"`` in the screened question and the trace. The same call gives the question's language and, for a
question in another language, the search intent in English, so the pipeline searches in English and answers in the
asker's language. Offline, the rules and the encoder screen alone.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pydantic import BaseModel, Field, ValidationError

from cpqa.models.llm import LLM, LLMError, ToolSpec
from cpqa.prompts import escape, evidence_tag, template
from cpqa.safety.categories import ACTIONS, Finding, TriageBook
from cpqa.safety.screening import Screened

REFERRALS: tuple[str, ...] = ("none", "dosing", "interaction", "decision")


def _one_of(values, default: str, description: str | None = None) -> Any:
    return Field(default, description=description, json_schema_extra={"enum": list(values)})


class TriageReply(BaseModel):
    """What the triage tool asks the model for (every enum opens with "none", so an empty reply raises nothing)."""

    action: str = _one_of(["none", *ACTIONS], "none", "the most severe action")
    category: str = Field("none", description="the symptom category of the sign, or none")  # its enum: the book's
    sign: str = Field("", description="the sign, in a few plain words (empty when none)")
    referral: str = _one_of(REFERRALS, "none")
    language: str = Field("English", description="the message's language, by its English name")
    english: str = Field("", description="the message's question in English, for a search")
    reason: str = Field("", description="one short sentence: why")


class ModelVerdict(TriageReply):
    """The model's triage of one question."""

    ms: float = 0.0
    failure: str | None = None  # why the call could not be used (the screen stands as it was)
    findings: list[Finding] = Field(default_factory=list)


def triage_tool(book: TriageBook) -> ToolSpec:
    """The forced tool, its categories the book's."""
    tool = ToolSpec.of(
        "triage_message",
        "Triage a message to a cancer information service: urgent signs, referrals, language.",
        TriageReply,
    )
    tool.input_schema["properties"]["category"]["enum"] = ["none", *(c.id for c in book.categories)]
    return tool


class ModelTriage:
    """``assess(question)``: the model's verdict; ``raised(screened, verdict)``: the screen with what it adds."""

    def __init__(self, llm: LLM, book: TriageBook | None = None, *, redact: Callable[[str], str] = str):
        self.llm = llm
        self.book = book or TriageBook.load()
        self.tool = triage_tool(self.book)
        self.redact = redact
        self._criteria = "\n".join(
            f"- {category.id} ({category.name}): "
            + "; ".join(c.clinical or c.sign for c in category.criteria if c.action != "soon")
            for category in self.book.categories
        )

    def assess(self, question: str, max_tokens: int = 400) -> ModelVerdict:
        """One forced tool call over the screened question (personal details already removed)."""
        tag = evidence_tag()
        system = template("triage_system").substitute(tag=tag, criteria=self._criteria, tool=self.tool.name)
        user = template("triage_user").substitute(tag=tag, message=escape(question), tool=self.tool.name)
        started = time.perf_counter()
        try:
            data = self.llm.call_tool(system, [{"role": "user", "content": user}], self.tool, max_tokens=max_tokens)
            verdict = ModelVerdict.model_validate(data)
        except (LLMError, ValidationError) as exc:
            failure = self.redact(str(exc)) if isinstance(exc, LLMError) else "unusable triage reply"
            return ModelVerdict(failure=failure[:200], ms=(time.perf_counter() - started) * 1000.0)
        verdict.ms = (time.perf_counter() - started) * 1000.0
        if verdict.action in ACTIONS and verdict.category != "none":
            sign = verdict.sign.strip() or self.book.category(verdict.category).name
            verdict.findings = [
                Finding(
                    category=verdict.category,
                    sign=sign[:80],
                    action=verdict.action,
                    by="model",
                    evidence=verdict.reason[:200],
                )
            ]
        return verdict

    def raised(self, screened: Screened, verdict: ModelVerdict | None = None, max_tokens: int = 400) -> Screened:
        """``screened`` with the model's findings and referral added: a flag raised, never one lowered."""
        verdict = verdict or self.assess(screened.question, max_tokens)
        if verdict.failure:
            return screened
        update: dict = {"by_model": True}
        if not screened.language_ok and verdict.english.strip():
            update.update(language=verdict.language, english=verdict.english.strip())
        raised = screened.model_copy(update=update)
        if verdict.referral in REFERRALS[1:]:  # Screened's personal_dosing, _interaction or _decision
            raised = raised.referred(verdict.referral)
        return raised.with_findings(verdict.findings) if verdict.findings else raised


__all__ = ["ModelTriage", "ModelVerdict", "triage_tool"]
