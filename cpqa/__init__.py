"""CPQA: cancer patient question answering grounded in PubMed and PMC evidence.

The library in one import, loaded lazily so that ``import cpqa`` stays fast::

    from cpqa import Pipeline, PipelineOptions

    with Pipeline(options=PipelineOptions.of(mode="clinician", years=10)) as pipeline:
        result = pipeline.ask("Does tamoxifen reduce the risk of breast cancer recurrence?")
    print(result.answer.text)              # cited [PMID:...] sentences, or an explained abstention
    print(result.trace.passages[0].pmid)   # the evidence and every retrieval decision
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpqa.fronts import lazy_front

__version__ = "0.1.0"

_EXPORTS = {
    "Pipeline": "cpqa.pipeline",
    "Result": "cpqa.trace",
    "Retrieved": "cpqa.trace",
    "PipelineOptions": "cpqa.options",
    "Settings": "cpqa.config",
    "get_settings": "cpqa.config",
    "Answer": "cpqa.types",
    "Passage": "cpqa.types",
    "RetrievalTrace": "cpqa.trace",
    "InvalidQuestion": "cpqa.safety.screening",
    "Progress": "cpqa.progress",
}
__all__ = [
    "Answer",
    "InvalidQuestion",
    "Passage",
    "Pipeline",
    "PipelineOptions",
    "Progress",
    "Result",
    "Retrieved",
    "RetrievalTrace",
    "Settings",
    "get_settings",
]

if TYPE_CHECKING:
    from cpqa.config import Settings, get_settings
    from cpqa.options import PipelineOptions
    from cpqa.pipeline import Pipeline
    from cpqa.progress import Progress
    from cpqa.safety.screening import InvalidQuestion
    from cpqa.trace import Result, RetrievalTrace, Retrieved
    from cpqa.types import Answer, Passage


__getattr__ = lazy_front(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
