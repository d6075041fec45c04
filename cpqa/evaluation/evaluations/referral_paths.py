"""Referrals by answer path, measured (``cpqa eval safety --referral-paths``; issue 34).

Every referral phrasing of a set (``dosing``, ``interaction``, ``decision``) is asked through the product's own
``Pipeline``, once as it is and once with no evidence reachable (PubMed abstracts of the last year only: nothing in
the store is that recent, and no patient pages),
and each answer is sorted by the path it took: answered, "not directly", an abstention (a treatment the evidence
never names, thin or unsupported evidence), no evidence at all, or a triage message (a refusal, a failed search).
Reported per kind and path: the questions and the share whose answer carries the referral (``Answer.referral``).
A phrasing the screen does not refer is counted apart (``not_referred``): that is the screen's recall, which
``triage_scores`` measures; here the question is whether a referral the screen raised reaches the person."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from cpqa.answer.messages import NO_EVIDENCE
from cpqa.types import Answer

KINDS = ("dosing", "interaction", "decision")


def answer_path(answer: Answer) -> str:
    """The path an answer took, read from the answer alone."""
    if answer.written_by == "triage":
        return "triage"
    if answer.text == NO_EVIDENCE:
        return "no_evidence"
    if answer.abstained:
        return "abstained"
    if answer.direct is False:
        return "not_directly"
    return "answered"


def referral_paths(pipeline, path: Path, no_evidence_years: int = 1) -> dict:
    """The referral phrasings of the set at ``path`` through ``pipeline``: per kind and answer path, how many and
    the share referred (see the module docstring)."""
    sets = json.loads(Path(path).read_text(encoding="utf-8"))
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    missed: list[dict] = []
    not_referred = 0
    for kind in KINDS:
        for text in sets.get(kind) or []:
            screened = pipeline.screen(text)
            if screened.referral is None:
                not_referred += 1
                continue
            nothing = {"years": no_evidence_years, "sources": ("D1",)}
            for variant, overrides in (("as asked", {}), ("no evidence", nothing)):
                answer = pipeline.ask(screened, **overrides).answer
                where = answer_path(answer)
                cell = counts[kind][where]
                cell[0] += 1
                cell[1] += answer.referral == screened.referral
                if answer.referral != screened.referral:
                    missed.append({"kind": kind, "variant": variant, "path": where, "text": text})
    by_kind = {
        kind: {where: {"questions": n, "referred": round(hit / n, 4)} for where, (n, hit) in sorted(paths.items())}
        for kind, paths in counts.items()
    }
    total = sum(n for paths in counts.values() for n, _ in paths.values())
    referred = sum(hit for paths in counts.values() for _, hit in paths.values())
    return {
        "answers": total,
        "referred": round(referred / total, 4) if total else None,
        "by_kind_and_path": by_kind,
        "not_referred_by_the_screen": not_referred,
        "missed": missed,
    }


__all__ = ["KINDS", "answer_path", "referral_paths"]
