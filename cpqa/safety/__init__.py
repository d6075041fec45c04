"""Stage 1, screening: empty / overlong / non-English input, personal details removed, urgent triage,
dosing and personal-decision referrals. Runs before anything leaves the machine.

Front: ``Screen`` (``run(Question, options) -> Screened``; ``check``, ``complete``, ``start_model_pass``) and its result
``Screened``; the parts a pipeline builds it from (``MeaningTriage``, ``ModelTriage``, ``TriagePass``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpqa.fronts import lazy_front

_EXPORTS = {
    "Screen": "cpqa.safety.screen",
    "Screened": "cpqa.safety.screening",
    "InvalidQuestion": "cpqa.safety.screening",
    "check_question": "cpqa.safety.screening",
    "prepare": "cpqa.safety.screening",
    "MeaningTriage": "cpqa.safety.meaning",
    "ModelTriage": "cpqa.safety.model_triage",
    "TriagePass": "cpqa.safety.triage_pass",
    "PendingTriage": "cpqa.safety.triage_pass",
}
__all__ = [
    "check_question",
    "InvalidQuestion",
    "MeaningTriage",
    "ModelTriage",
    "PendingTriage",
    "prepare",
    "Screen",
    "Screened",
    "TriagePass",
]
__getattr__ = lazy_front(__name__, _EXPORTS)

if TYPE_CHECKING:
    from cpqa.safety.meaning import MeaningTriage
    from cpqa.safety.model_triage import ModelTriage
    from cpqa.safety.screen import Screen
    from cpqa.safety.screening import check_question, InvalidQuestion, prepare, Screened
    from cpqa.safety.triage_pass import PendingTriage, TriagePass
