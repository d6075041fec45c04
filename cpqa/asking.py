"""One question on its way through the pipeline's stages (``cpqa.pipeline``): what its steps share."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from cpqa.options import PipelineOptions
from cpqa.progress import Progress
from cpqa.safety import PendingTriage, Screened
from cpqa.trace import RetrievalTrace


@dataclass
class Asking:
    """One question on its way through the stages, which the pipeline's steps share instead of long argument lists:
    its options, the trace only the pipeline writes, who hears of each stage (``progress``), the screen as it stands
    (the model's triage pass, running beside the search, may raise a flag before the answer) and that pass."""

    options: PipelineOptions
    trace: RetrievalTrace
    progress: Callable[[Progress], None] | None = None
    pending: PendingTriage | None = None
    started: float = field(default_factory=time.perf_counter)
    screen: Screened | None = None  # set by the safety step, first of all

    @property
    def screened(self) -> Screened:
        if self.screen is None:
            raise RuntimeError("the question has not been screened yet")
        return self.screen

    @screened.setter
    def screened(self, screened: Screened) -> None:
        self.screen = screened

    def notify(self, stage: str, screened: Screened | None = None, draft: str | None = None) -> None:
        if self.progress is not None:
            self.progress(Progress(stage=stage, screened=screened, draft=draft))
