"""The LLM rewrite module: a question (and earlier turns) -> concepts, intent and a Boolean query ladder.

With Claude: one forced tool call whose JSON schema covers the whole structure. Every expression Claude
writes is checked with ``cpqa.sources.boolean``; a broken one is repaired when simple fixes make it parse
(quotes, brackets, dangling operators, unknown tags) and dropped otherwise. A ladder short of three levels
is completed with rule-built levels from Claude's own concepts; no usable answer after one re-ask (for
malformed output; the SDK retries transport errors itself) falls back to the rule-based builder.
Without Claude: dialogue distillation, rule-based concepts and the rule-based ladder; the search intent names the
clinical terms of the question's lay words ("womb cancer (endometrial cancer or uterine cancer)", ``lay_terms.gloss``).
A concept Claude leaves in lay words gets their clinical terms as synonyms.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Sequence, get_args

from pydantic import BaseModel, Field, ValidationError

from cpqa.prompts import escape, text
from cpqa.sources.boolean import FIELD_TAGS, BooleanQueryError, validate
from cpqa.rewrite.concepts import Concept, Intent, detect_intent, process_question
from cpqa.config import Settings
from cpqa.rewrite.dialogue import distill
from cpqa.models.llm import LLM, LLMError, LLMUnavailable, ToolSpec
from cpqa.rewrite.lay_terms import gloss, with_clinical_terms
from cpqa.rewrite.rule_ladder import build_ladder, ranking_expression
from cpqa.rewrite.vocabulary import Vocabulary, load_vocabulary
from cpqa.types import ComponentChoice
from cpqa.options import PipelineOptions, RewriteOptions

if TYPE_CHECKING:
    from cpqa.safety.screening import Screened

MAX_EXPRESSION_CHARS = 8000
INTENTS = list(get_args(Intent))


class _LadderConcept(BaseModel):
    text: str
    mesh: str | None = Field(None, description="MeSH heading, if known")
    synonyms: list[str] = Field(default_factory=list, max_length=8)
    role: Literal["core", "supporting", "weak"]


class _LadderInput(BaseModel):
    normalized: str = Field(description="the question, spelling corrected and normalised")
    search_intent: str = Field(description="a self-contained question to search for")
    intent: Intent
    concepts: list[_LadderConcept] = Field(min_length=1, max_length=10)
    relations: list[str] = Field(default_factory=list)
    ladder: list[str] = Field(min_length=1, max_length=8, description="PubMed Boolean expressions, most specific first")


LADDER_TOOL = ToolSpec.of(
    "query_ladder",
    "Record the processed question and a ladder of PubMed Boolean queries, most specific first.",
    _LadderInput,
    optional=("mesh", "synonyms", "relations"),
)


class RewriteResult(BaseModel):
    question: str
    normalized: str
    search_intent: str
    concepts: list[Concept] = Field(default_factory=list)
    intent: Intent = "general"
    relations: list[str] = Field(default_factory=list)  # rules: "intent(entity, ...)"; Claude: its phrases
    ladder: list[str] = Field(default_factory=list)
    # What ranks E2's union in "bestmatch" (every word of every concept and the MeSH headings, ORed; "" without
    # concepts): written here once, so E2 reads it instead of building it again
    ranking: str = ""
    method: Literal["llm", "rules"] = "rules"
    notes: list[str] = Field(default_factory=list)


def _rules_choice(reason: str) -> ComponentChoice:
    return ComponentChoice(component="rewriter", model="rule-based Boolean ladder", profile="offline", reason=reason)


class Rewriter:
    """Turns questions into ladders; uses ``llm`` when it is given and configured, rules otherwise."""

    def __init__(self, settings: Settings, llm: LLM | None = None, vocabulary: Vocabulary | None = None):
        self.settings = settings
        self.llm = llm
        self.vocabulary = vocabulary if vocabulary is not None else load_vocabulary(settings)
        self.system_prompt = text("rewrite_system")
        self.user_template = text("rewrite_user")

    @property
    def choice(self) -> ComponentChoice:
        if self.llm is not None and self.llm.available:
            return self.llm.choice("rewriter")
        return _rules_choice(self.llm.unconfigured if self.llm is not None else "no language model")

    def used(self, rewrite: RewriteResult) -> ComponentChoice:
        """The rewriter that actually wrote ``rewrite``: the rules when the model could not be used."""
        if rewrite.method == "rules" and self.llm is not None and self.llm.available:
            return _rules_choice(f"{self.llm.label} could not be used for this question (see the rewrite notes)")
        return self.choice

    def run(self, screened: Screened, options: PipelineOptions) -> RewriteResult:
        """Stage 2's entry: the screened question rewritten (one in another language in the model's English)."""
        return self.rewrite(screened.english or screened.question, screened.history, options.rewrite)

    def rewrite(
        self, question: str, history: Sequence[str] = (), options: RewriteOptions | None = None
    ) -> RewriteResult:
        """The question's concepts and Boolean ladder, by the rewrite ``options`` (``term_links`` adds the learned
        term-mapping links to the vocabulary of the rule-based rewrite; the model's budget, the earlier turns read,
        the ladder's and the lay words' budgets)."""
        options = options or RewriteOptions()
        question = " ".join((question or "").split())
        if not question:
            raise ValueError("empty question")
        history = [" ".join(t.split()) for t in history if t and t.strip()][-options.history_turns :]
        notes: list[str] = []
        if self.llm is not None and self.llm.available:
            result = self._with_claude(self.llm, question, history, notes, options)
            if result is not None:
                return result
        vocabulary = self.linked_vocabulary if options.term_links else self.vocabulary
        return self._with_rules(question, history, notes, vocabulary, options)

    # ------------------------------------------------------------------ rules
    @cached_property
    def linked_vocabulary(self) -> Vocabulary:
        """The settings' vocabulary plus the term links ``cpqa index build`` learned from the records."""
        return load_vocabulary(self.settings, term_links=True)

    def _with_rules(
        self, question: str, history: list[str], notes: list[str], vocabulary: Vocabulary, options: RewriteOptions
    ) -> RewriteResult:
        searched = options.lay_searched
        corrected = process_question(question, vocabulary, searched)
        if corrected.corrections:
            notes.append("spelling: " + ", ".join(f"{a} -> {b}" for a, b in corrected.corrections.items()))
        distilled = distill(corrected.normalized, history, vocabulary, corrected.concepts, searched)
        if distilled.carried:
            notes.append(f"carried from earlier turns: {', '.join(distilled.carried)}")
        processed = process_question(distilled.search_intent, vocabulary, searched) if distilled.carried else corrected
        if processed.lay:
            notes.append("lay words: " + "; ".join(f"{k} -> {', '.join(v)}" for k, v in processed.lay.items()))
        ladder = build_ladder(processed.concepts, options)
        if not ladder:
            notes.append("no searchable concept in the question")
        entities = [c.text for c in processed.concepts if c.kind in ("disease", "treatment")]
        searched_intent = gloss(distilled.search_intent, vocabulary, options.lay_glossed)  # BM25, E1, passages read it
        relations = [f"{processed.intent}({', '.join(entities)})"] if entities else []
        return RewriteResult(
            question=question,
            normalized=corrected.normalized,
            search_intent=searched_intent,
            concepts=processed.concepts,
            intent=processed.intent,
            relations=relations,
            ladder=ladder,
            ranking=ranking_expression(processed.concepts),
            method="rules",
            notes=notes,
        )

    # ------------------------------------------------------------------ Claude
    def _messages(self, question: str, history: list[str], problem: str | None) -> list[dict]:
        # Escaped like the answerer's evidence, so user text cannot close the <question> / <history> delimiters.
        text = self.user_template.format(
            history="\n".join(f"- {escape(t)}" for t in history) or "(none)", question=escape(question)
        )
        if problem:
            text += f"\nYour previous answer could not be used ({problem}). Call the tool again, following its schema."
        return [{"role": "user", "content": text}]

    def _with_claude(
        self, llm: LLM, question: str, history: list[str], notes: list[str], options: RewriteOptions
    ) -> RewriteResult | None:
        problem: str | None = None
        for attempt in (1, 2):
            try:
                data = llm.call_tool(
                    self.system_prompt,
                    self._messages(question, history, problem),
                    LADDER_TOOL,
                    max_tokens=options.rewrite_max_tokens,
                )
                result = self._from_tool(llm, question, data, notes, options)
            except LLMError as exc:
                message = self.settings.redact(str(exc))
                if isinstance(exc, LLMUnavailable) or attempt == 2:
                    notes.append(f"{llm.label} failed ({message}); rule-based ladder used")
                    return None
                problem = message
                continue
            except (ValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
                problem = f"malformed tool input: {type(exc).__name__}"
                if attempt == 2:
                    notes.append(f"{llm.label}'s answer was unusable ({problem}); rule-based ladder used")
                    return None
                continue
            if result is not None:
                return result
            problem = "no usable query in the ladder and no concepts"
        notes.append(f"{llm.label}'s answer was unusable ({problem}); rule-based ladder used")
        return None

    def _from_tool(
        self, llm: LLM, question: str, data: dict[str, Any], notes: list[str], options: RewriteOptions
    ) -> RewriteResult | None:
        concepts = [_concept(item) for item in data.get("concepts") or [] if str(item.get("text", "")).strip()]
        ladder: list[str] = []
        for expression in data.get("ladder") or []:
            checked = repair_expression(str(expression))
            if checked is None:
                notes.append(f"dropped an invalid {llm.label} expression")
            elif checked not in ladder:
                if checked != expression:
                    notes.append(f"repaired a {llm.label} expression")
                ladder.append(checked)
        least = options.min_levels
        if len(ladder) < least and concepts:
            filler = [level for level in build_ladder(concepts, options) if level not in ladder]
            if filler:
                notes.append(
                    f"{min(len(filler), least - len(ladder))} rule-built level(s) added from {llm.label}'s concepts"
                )
            ladder += filler[-(least - len(ladder)) :] if ladder else filler
        if not ladder:
            return None
        normalized = " ".join(str(data.get("normalized") or "").split()) or question
        intent = data.get("intent") if data.get("intent") in INTENTS else detect_intent(normalized)
        return RewriteResult(
            question=question,
            normalized=normalized,
            search_intent=" ".join(str(data.get("search_intent") or "").split()) or normalized,
            concepts=concepts,
            intent=intent,
            relations=[str(r) for r in data.get("relations") or []][:10],
            ladder=ladder,
            ranking=ranking_expression(concepts),
            method="llm",
            notes=notes,
        )


def _concept(item: dict[str, Any]) -> Concept:
    role = item.get("role", "supporting")
    text = " ".join(str(item["text"]).split())
    mesh = item.get("mesh")
    return Concept(
        text=text,
        phrases=[text],
        synonyms=with_clinical_terms([str(s) for s in item.get("synonyms") or [] if str(s).strip()], text),
        mesh=str(mesh).strip() or None if mesh else None,
        core=role == "core",
        weak=role == "weak",
        kind="disease" if role == "core" else "other",
    )


_TAG = re.compile(r"\[([^\[\]]*)\]")
_DANGLING = re.compile(r"^\s*(?:AND|OR|NOT)\b\s*|\s*\b(?:AND|OR|NOT)\s*$")


def repair_expression(expression: str) -> str | None:
    """``expression`` if it parses, else a minimally repaired version that parses, else None."""
    text = " ".join(expression.replace("\u201c", '"').replace("\u201d", '"').split())
    if not text or len(text) > MAX_EXPRESSION_CHARS:
        return None
    for fix in (lambda t: t, _drop_unknown_tags, _close_quotes, _strip_dangling, _balance_parentheses):
        text = fix(text)
        try:
            validate(text)
            return text
        except BooleanQueryError:
            continue
    return None


def _drop_unknown_tags(text: str) -> str:
    return _TAG.sub(lambda m: m.group(0) if " ".join(m.group(1).lower().split()) in FIELD_TAGS else "", text)


def _close_quotes(text: str) -> str:
    if text.count('"') % 2:
        i = text.rfind('"')
        text = text[:i] + text[i + 1 :]
    return text


def _strip_dangling(text: str) -> str:
    text = re.sub(r"\b(AND|OR|NOT)(?:\s+(?:AND|OR|NOT)\b)+", r"\1", text)
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\(\s*(?:AND|OR|NOT)\b", "(", text)
    text = re.sub(r"\b(?:AND|OR|NOT)\s*\)", ")", text)
    previous = None
    while previous != text:
        previous, text = text, _DANGLING.sub("", text)
    return text


def _balance_parentheses(text: str) -> str:
    out, depth = [], 0
    in_quote = False
    for ch in text:
        if ch == '"':
            in_quote = not in_quote
        elif not in_quote and ch == ")":
            if depth == 0:
                continue
            depth -= 1
        elif not in_quote and ch == "(":
            depth += 1
        out.append(ch)
    return "".join(out) + ")" * depth
