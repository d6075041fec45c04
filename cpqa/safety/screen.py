"""The screen, one object for every way in: the pipeline, the app, the CLI, the REST API and MCP screen a question
through it, so the rules, triage by meaning, a language model's pass, translation and referrals are decided in one
place (``cpqa.safety``).

A front end makes one before any model is loaded (``Screen.for_front_end``: the instant rules, which show an urgent
message at once); the pipeline makes the whole one (with the meaning check's encoder and, where a model is
configured, the model's pass). What the front end screened, the pipeline completes (``complete``) and never screens
again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from cpqa.config import Settings
from cpqa.options import PipelineOptions, SafetyOptions
from cpqa.safety.screening import Screened, check_question, with_meaning
from cpqa.safety.triage_pass import PendingTriage, TriagePass
from cpqa.types import Question

if TYPE_CHECKING:
    from cpqa.safety.meaning import MeaningTriage


class Screen:
    """``run(question, options)``, stage 1's entry: the screened question (``check`` screens a string for a front
    end; ``complete`` adds the meaning check to one screened before it could run); ``start_model_pass`` runs the
    model's triage beside the search (None when there is no model or the pass is off). ``model_configured``: a
    language model reads (and translates) questions, so one in another language is not refused."""

    def __init__(
        self,
        model_configured: bool = False,
        meaning: "MeaningTriage | None" = None,
        model_pass: TriagePass | None = None,
    ):
        self.model_configured = model_configured
        self.meaning = meaning
        self.model_pass = model_pass

    @classmethod
    def for_front_end(cls, settings: Settings) -> "Screen":
        """The instant screen a front end shows before the pipeline loads: the rules, and whether a model will
        translate."""
        return cls(model_configured=settings.has_llm)

    def translates(self, options: SafetyOptions) -> bool:
        """Whether a language model's pass will read (and translate) a question in another language."""
        return self.model_configured and options.model_triage

    def run(self, question: Question | Screened, options: PipelineOptions) -> Screened:
        """Stage 1's entry: ``question`` screened, or one a front end screened completed (never screened again);
        raises ``InvalidQuestion`` when nothing usable is left."""
        if isinstance(question, Screened):
            return self.complete(question, options.safety)
        return self.check(question.text, options.safety, question.history)

    def check(self, question: str | None, options: SafetyOptions, history: Sequence[str] = ()) -> Screened:
        """Screen ``question`` once; raises ``InvalidQuestion`` when nothing usable is left."""
        return check_question(question, self.meaning, options, history, translated=self.translates(options))

    def complete(self, screened: Screened, options: SafetyOptions) -> Screened:
        """``screened`` with the meaning check added where it could not run yet (a front end's instant screen)."""
        return with_meaning(screened, self.meaning, options) if self.meaning is not None else screened

    def start_model_pass(self, screened: Screened, options: PipelineOptions) -> PendingTriage | None:
        return self.model_pass.start(screened, options) if self.model_pass is not None else None

    def close(self) -> None:
        if self.model_pass is not None:
            self.model_pass.close()


__all__ = ["Screen"]
