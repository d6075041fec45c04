"""The language model's triage pass, run beside the search (``cpqa.safety.model_triage``): started as soon as the
rules and the meaning screen are done, joined before the answer is written. What it raises reaches a progress
display as a second ``screened`` event before the answer; the trace records its timing and what fired."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

from cpqa.options import PipelineOptions
from cpqa.safety.model_triage import ModelTriage, ModelVerdict
from cpqa.safety.screening import Screened
from cpqa.trace import RetrievalTrace
from cpqa.types import StageRecord


class TriagePass:
    """``start(screened, options)``: the model's triage in a worker thread (None when off); ``join(...)``: the
    screened question with what it raised."""

    def __init__(self, triage: ModelTriage, workers: int = 4):
        self.triage = triage
        self._workers = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cpqa-triage")

    def start(self, screened: Screened, options: PipelineOptions) -> Future[ModelVerdict] | None:
        if not options.safety.model_triage:
            return None
        return self._workers.submit(self.triage.assess, screened.question, options.safety.model_triage_max_tokens)

    def join(
        self, pending: Future[ModelVerdict], screened: Screened, trace: RetrievalTrace, notify: Callable[..., None]
    ) -> Screened:
        """Wait for the verdict and merge it (a flag raised, never lowered); tell the display when it changed what
        is shown first."""
        verdict = pending.result()
        raised = self.triage.raised(screened, verdict)
        trace.stages["model_triage"] = StageRecord(
            ms=verdict.ms,
            info={
                "action": verdict.action,
                "category": verdict.category,
                "referral": verdict.referral,
                "language": verdict.language,
                "failed": verdict.failure is not None,
            },
        )
        if verdict.failure:
            trace.warn(f"the language model's triage pass could not be used ({verdict.failure})")
        trace.triage, trace.language = list(raised.triage), raised.language
        trace.translated_question = raised.english
        shown = (
            raised.urgent,
            raised.care_soon,
            raised.personal_dosing,
            raised.personal_interaction,
            raised.personal_decision,
        )
        before = (
            screened.urgent,
            screened.care_soon,
            screened.personal_dosing,
            screened.personal_interaction,
            screened.personal_decision,
        )
        if shown != before:
            notify("screened", raised)
        return raised

    def close(self) -> None:
        self._workers.shutdown(wait=False, cancel_futures=True)


__all__ = ["TriagePass"]
