"""Every answer sentence supported by the passages it cites, and no advice to change a treatment.

Runs after any answerer. Each sentence that cites evidence gets a support score against the passages of the PMIDs
it cites: half the best cosine similarity (passage embedder) between the sentence and one of their sentences, half
the share of the sentence's content words (numbers included) that those passages contain (``SupportOptions``). A
sentence below ``support_threshold`` (set on BioASQ dev data by ``cpqa eval support``) is removed and listed. With a
language model, a verification pass judges the (sentence, cited passages) pairs instead; a claim it leaves out, or a
pass that fails, falls back to the score. A claim that cites nothing is scored against all the passages and removed
("uncited") below the threshold. A quote is verbatim, so the extractive answer always passes; the check bites on
written answers. An answer advising the reader to start, stop or change a treatment is replaced by the care-team
referral.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
from pydantic import BaseModel, Field

from cpqa.answer.citations import MARKER, cited_claims, claim_text, claims_of, is_claim, marker_pmids
from cpqa.answer.extractive import passage_sentences, split_sentences
from cpqa.answer.intent import Addressing, record_text
from cpqa.answer.messages import NOT_DIRECT, NOT_DIRECT_WRITTEN
from cpqa.models.encoders import Encoder, unit_rows
from cpqa.quotable import directs_treatment_change
from cpqa.options import SupportOptions
from cpqa.models.llm import LLM, LLMError, ToolSpec
from cpqa.prompts import escape, evidence_tag, template
from cpqa.types import Answer, Passage, RemovedSentence
from cpqa.words import content_terms

TREATMENT_REFERRAL = (
    "This answer would have advised starting, stopping or changing a treatment. Research evidence cannot tell "
    "you what is right for you: please talk to your care team (your oncologist, nurse or pharmacist) before "
    "changing anything about your treatment."
)

Verdict = Literal["supported", "unsupported", "contradicted"]
VERDICTS: tuple[str, ...] = ("supported", "unsupported", "contradicted")  # the stand-in's default is the first


class _ClaimVerdict(BaseModel):
    claim: int = Field(ge=1)
    verdict: Verdict
    reason: str = ""


class _Verdicts(BaseModel):
    verdicts: list[_ClaimVerdict]


VERIFY_TOOL = ToolSpec.of(
    "judge_claims",
    "Give one verdict per claim: is it supported by the evidence it cites?",
    _Verdicts,
    optional=("reason",),
)


def advises_treatment_change(sentence: str) -> bool:
    """Whether a sentence tells the reader (or patients) to start, stop or change a treatment."""
    return directs_treatment_change(MARKER.sub("", sentence))


@dataclass
class Claim:
    line: int
    position: int  # in the line
    sentence: str
    pmids: list[str]


class Verification(BaseModel):
    """The answer text with unsupported sentences removed, and what was removed."""

    text: str
    removed: list[RemovedSentence] = []
    checked: int = 0  # sentences that cite evidence and were checked
    method: str = "offline"  # "offline" (support score) or "llm" (verification pass, score as fallback)
    advice: bool = False  # a sentence advised a treatment change: the answer must become the referral


class SupportChecker:
    """``verify(text, passages)``: keep the sentences the cited evidence supports."""

    def __init__(self, encoder: Encoder | None = None, llm: LLM | None = None, options: SupportOptions | None = None):
        self.encoder, self.llm = encoder, llm
        self.options = options or SupportOptions()

    @property
    def threshold(self) -> float:
        return self.options.support_threshold

    def score(self, sentence: str, cited: Sequence[Passage]) -> float:
        """Support of ``sentence`` by the ``cited`` passages (0..1): cosine and content-word coverage, halved."""
        claim = claim_text(sentence)
        words = set(content_terms(claim))
        evidence = set(content_terms(" ".join(p.evidence_text for p in cited)))
        coverage = len(words & evidence) / len(words) if words else 0.0
        if self.encoder is None:
            return coverage
        pool = [s for p in cited for s in (*passage_sentences(p), *split_sentences(p.conclusion or ""))] or [
            p.text for p in cited
        ]
        vectors = unit_rows(self.encoder.encode(pool))
        cosine = float(np.max(vectors @ unit_rows(self.encoder.encode([claim]))[0])) if len(pool) else 0.0
        share = self.options.support_cosine_share
        return share * max(cosine, 0.0) + (1.0 - share) * coverage

    def verify(self, text: str, passages: Sequence[Passage], uncited: bool = True) -> Verification:
        """``uncited``: check the sentences that cite nothing too (a model's text; not our own labels)."""
        by_pmid: dict[str, list[Passage]] = {}
        for passage in passages:
            by_pmid.setdefault(passage.pmid, []).append(passage)
        lines = [claims_of(line) for line in text.splitlines()]
        claims = [
            Claim(i, j, s, [p for m in MARKER.finditer(s) for p in marker_pmids(m.group(0)) if p in by_pmid])
            for i, line in enumerate(lines)
            for j, s in enumerate(line)
        ]
        unsourced = [c for c in claims if not c.pmids and is_claim(c.sentence)] if uncited else []
        claims = [c for c in claims if c.pmids]
        result = Verification(
            text=text, checked=len(claims), advice=any(advises_treatment_change(s) for line in lines for s in line)
        )
        verdicts = self._claude_verdicts(self.llm, claims, by_pmid) if self.llm is not None and claims else {}
        if verdicts:
            result.method = "llm"
        drop: set[tuple[int, int]] = set()
        for index, claim in enumerate(claims):
            verdict = verdicts.get(index)
            # The score only when Claude gave no verdict: embedding every claim again would be wasted work.
            score: float | None = None
            if verdict:
                supported = verdict == "supported"
            else:
                score = self.score(claim.sentence, [p for pmid in claim.pmids for p in by_pmid[pmid]])
                supported = score >= self.threshold
            if not supported:
                drop.add((claim.line, claim.position))
                result.removed.append(
                    RemovedSentence(
                        sentence=claim.sentence,
                        pmids=claim.pmids,
                        score=None if score is None else round(score, 3),
                        judged_by="llm" if verdict else "support score",
                        verdict=verdict or "unsupported",
                    )
                )
        # A claim that cites nothing stays only if the evidence as a whole supports it (a weak model writes such claims
        # from memory; a strong one, framing such as what the studies had in common).
        for claim in unsourced:
            score = self.score(claim.sentence, passages)
            if score < self.threshold:
                drop.add((claim.line, claim.position))
                result.removed.append(
                    RemovedSentence(sentence=claim.sentence, score=round(score, 3), verdict="uncited")
                )
        if drop:
            kept = [" ".join(s for j, s in enumerate(line) if (i, j) not in drop) for i, line in enumerate(lines)]
            result.text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
        return result

    def _claude_verdicts(self, llm: LLM, claims: list[Claim], by_pmid: dict[str, list[Passage]]) -> dict[int, Verdict]:
        """Claude's verdict per claim index; {} when the pass fails (the support score decides then)."""
        tag = evidence_tag()
        blocks = []
        for number, claim in enumerate(claims, 1):
            evidence = "\n".join(
                f'<{tag} pmid="{escape(p.pmid)}">\n{escape(p.evidence_text)}\n</{tag}>'
                for pmid in claim.pmids
                for p in by_pmid[pmid]
            )
            blocks.append(f"Claim {number}: {escape(MARKER.sub('', claim.sentence).strip())}\n{evidence}")
        system = template("verify_system").substitute(tag=tag, tool=VERIFY_TOOL.name)
        user = template("verify_user").substitute(pairs="\n\n".join(blocks), count=len(claims), tool=VERIFY_TOOL.name)
        try:
            data = llm.call_tool(
                system, [{"role": "user", "content": user}], VERIFY_TOOL, max_tokens=self.options.verify_max_tokens
            )
        except LLMError:
            return {}
        verdicts: dict[int, Verdict] = {}
        for item in data.get("verdicts") or []:
            if not isinstance(item, dict):
                continue
            claimed, verdict = item.get("claim"), item.get("verdict")
            if isinstance(claimed, int) and 1 <= claimed <= len(claims) and verdict in VERDICTS:
                verdicts[claimed - 1] = verdict
        return verdicts


def judged(answer: Answer, passages: Sequence[Passage], addressing: Addressing) -> Answer:
    """A model-written answer judged by the same rule as the quotes: when none of its cited sentences addresses the
    question, it says so first (unless it already does)."""
    records: dict[str, str] = {}
    for passage in passages:
        records[passage.pmid] = f"{records.get(passage.pmid, '')} {record_text(passage)}"
    direct = any(
        addressing.addresses(claim, " ".join(records.get(pmid, "") for pmid in pmids))
        for claim, pmids in cited_claims(answer.text)
    )
    if direct or answer.text.startswith(NOT_DIRECT):
        return answer.model_copy(update={"direct": direct})
    return answer.model_copy(update={"text": f"{NOT_DIRECT_WRITTEN}\n\n{answer.text}", "direct": False})
