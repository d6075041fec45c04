"""The language model's triage pass, run beside the search (``cpqa.safety.model_triage``): started as soon as the
rules and the meaning screen are done, joined before the answer is written. What it raises reaches a progress
display as a second ``screened`` event before the answer; its timing and what fired come back as a log the pipeline
takes into the trace."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

from cpqa.options import PipelineOptions
from cpqa.safety.model_triage import ModelTriage, ModelVerdict
from cpqa.safety.screening import Screened, first_messages
from cpqa.types import StageLog, StageRecord


@dataclass
class PendingTriage:
    """The model's verdict on one question, on its way: ``join`` waits for it and merges it."""

    triage: ModelTriage
    verdict: Future[ModelVerdict]

    def done(self) -> bool:
        return self.verdict.done()

    def join(self, screened: Screened, notify: Callable[..., None]) -> tuple[Screened, StageLog]:
        """``screened`` with what the model raised (a flag raised, never lowered), and the pass's log (its timing,
        what fired, a warning when it failed); the display is told when it changes what is shown first."""
        verdict = self.verdict.result()
        raised = self.triage.raised(screened, verdict)
        log = StageLog()
        log.stages["model_triage"] = StageRecord(
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
            log.warn(f"the language model's triage pass could not be used ({verdict.failure})")
        if first_messages(raised) != first_messages(screened):
            notify("screened", raised)
        return raised, log


class TriagePass:
    """``start(screened, options)``: the model's triage in a worker thread, as a ``PendingTriage`` (None when off)."""

    def __init__(self, triage: ModelTriage, workers: int = 4):
        self.triage = triage
        self._workers = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cpqa-triage")

    def start(self, screened: Screened, options: PipelineOptions) -> PendingTriage | None:
        if not options.safety.model_triage:
            return None
        verdict = self._workers.submit(self.triage.assess, screened.question, options.safety.model_triage_max_tokens)
        return PendingTriage(self.triage, verdict)

    def close(self) -> None:
        self._workers.shutdown(wait=False, cancel_futures=True)


__all__ = ["PendingTriage", "TriagePass"]
