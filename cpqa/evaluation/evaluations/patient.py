"""Answers from patient information, measured (``cpqa eval patient``; issue 35).

MedQuAD questions of pages never tuned on (the ``eval`` split of ``cpqa/evaluation/data/medquad_splits.json``) go
through the product's own ``Pipeline.ask``, as a patient asks them. Each question's gold is the section it was
written for. Reported per collection and per question kind:
- ``gold_at_1`` / ``gold_at_3``: the gold section among the first 1 / 3 patient sections the search found;
- ``first_quote_in_gold``: the answer's first quote is a sentence of the gold section (by its text: a few sections
  are repeated word for word on another page);
- ``led_by_patient_information``: the answer's first citation is a patient page (D4);
- ``direct``: the answer says it answers (not "does not answer this directly"), and ``abstained``.
``consumer_answers`` runs consumer questions without gold (LiveQA's): the share answered directly and the share led
by patient information.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable, Iterable, Sequence

from cpqa.answer.citations import MARKER, marker_pmids
from cpqa.trace import Result
from cpqa.types import Answer, PatientSection

_QUOTE = re.compile(r'"([^"]{10,})"')


def first_quote(answer: Answer) -> tuple[str, str] | None:
    """(the record key cited, the quoted text) of the answer's first quoted line, or None."""
    for line in answer.text.splitlines():
        quote, marker = _QUOTE.search(line), MARKER.search(line)
        if quote and marker:
            keys = marker_pmids(marker.group(0))
            if keys:
                return keys[0], quote.group(1)
    return None


def in_section(quoted: tuple[str, str], section: PatientSection) -> bool:
    """Whether a quote (cited key, text) is of ``section``: cited by its key (a quote is checked against the passage it
    cites), or by its text (a few sections are repeated word for word on another page: a PDQ summary's two versions;
    a list the store keeps as "Surgery; Radiation therapy; ..." reads as the page's bullets)."""
    return quoted[0] == section.key or _flat(quoted[1]).rstrip(".") in _flat(section.text)


def _flat(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.,]+", " ", text.lower()).split())


def led_by_patient_information(answer: Answer) -> bool:
    return bool(answer.citations) and not answer.citations[0].isdigit()


def _ratios(rows: list[dict[str, bool]]) -> dict[str, float | int]:
    keys = sorted({k for row in rows for k in row})
    return {"questions": len(rows), **{k: round(sum(row[k] for row in rows) / len(rows), 3) for k in keys}}


def patient_answers(
    ask: Callable[[str], Result], sections: Iterable[PatientSection], progress: Callable[[int], None] | None = None
) -> dict:
    """``ask`` (``Pipeline.ask``) on each section's MedQuAD question, scored against the section (module docstring)."""
    by_collection: dict[str, list[dict[str, bool]]] = defaultdict(list)
    by_kind: dict[str, list[dict[str, bool]]] = defaultdict(list)
    examples: list[dict] = []
    for number, section in enumerate(sections, start=1):
        result = ask(section.question)
        answer, trace = result.answer, result.trace
        found = [hit.section.key for hit in trace.patient]
        quoted = first_quote(answer)
        row = {
            "gold_at_1": section.key in found[:1],
            "gold_at_3": section.key in found[:3],
            "first_quote_in_gold": quoted is not None and in_section(quoted, section),
            "led_by_patient_information": led_by_patient_information(answer),
            "direct": bool(answer.direct) and not answer.abstained,
            "abstained": answer.abstained,
        }
        by_collection[section.collection].append(row)
        by_kind[section.kind].append(row)
        if len(examples) < 12:
            examples.append({"question": section.question, "gold": section.key, "quote": quoted, **row})
        if progress is not None:
            progress(number)
    every = [row for rows in by_collection.values() for row in rows]
    return {
        "all": _ratios(every) if every else {"questions": 0},
        "by_collection": {name: _ratios(rows) for name, rows in sorted(by_collection.items())},
        "by_kind": {name: _ratios(rows) for name, rows in sorted(by_kind.items())},
        "examples": examples,
    }


def consumer_answers(ask: Callable[[str], Result], questions: Sequence[str]) -> dict:
    """Consumer questions without gold: how many are answered directly, and led by patient information."""
    rows = []
    for question in questions:
        answer = ask(question).answer
        rows.append(
            {
                "direct": bool(answer.direct) and not answer.abstained,
                "led_by_patient_information": led_by_patient_information(answer),
                "abstained": answer.abstained,
                "referred": answer.referral is not None,
            }
        )
    return _ratios(rows) if rows else {"questions": 0}


__all__ = ["consumer_answers", "first_quote", "led_by_patient_information", "patient_answers"]
