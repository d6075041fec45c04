"""Every knob of the query pipeline in one typed object, one nested section per stage (paper-qa style).

``Settings`` (``cpqa.config``) holds the environment and secrets; ``PipelineOptions`` holds how a question is
processed, and is recorded in every trace. Every tuned value is a field here, its tuned value the only default: the
stages read their section, and a part built outside a pipeline takes its defaults from these classes. Field names
are unique across sections, so a caller may override any knob by its bare name (``pipeline.ask(q, years=5,
hyde=True)``; ``cpqa ask --option years=5``); ``with_overrides`` routes it to its section. A deployment writes them in
a TOML file, one table per section (``cpqa.options_file``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cpqa.options.base import LadderRanking, SmallToBig, _Section
from cpqa.options.evidence import AnswerOptions, PassageOptions, RerankOptions, SegmentationOptions, SupportOptions
from cpqa.options.search import DocumentOptions, RewriteOptions, SafetyOptions


class PipelineOptions(_Section):
    """How one question is processed; every section has defaults, so ``PipelineOptions()`` is the paper's pipeline."""

    safety: SafetyOptions = Field(default_factory=SafetyOptions)
    rewrite: RewriteOptions = Field(default_factory=RewriteOptions)
    documents: DocumentOptions = Field(default_factory=DocumentOptions)
    segmentation: SegmentationOptions = Field(default_factory=SegmentationOptions)
    passages: PassageOptions = Field(default_factory=PassageOptions)
    rerank: RerankOptions = Field(default_factory=RerankOptions)
    answer: AnswerOptions = Field(default_factory=AnswerOptions)
    support: SupportOptions = Field(default_factory=SupportOptions)

    @classmethod
    def section_of(cls, name: str) -> str:
        """The section that holds the knob ``name``; ValueError for an unknown knob."""
        for section, field in cls.model_fields.items():
            if name in field.annotation.model_fields:  # type: ignore[union-attr]
                return section
        raise ValueError(f"unknown pipeline option {name!r}")

    @classmethod
    def of(cls, **knobs: Any) -> "PipelineOptions":
        """Options from bare knob names: ``PipelineOptions.of(mode="clinician", top_n=3)``."""
        return cls().with_overrides(**knobs)

    def with_overrides(self, **knobs: Any) -> "PipelineOptions":
        """A copy with knobs replaced by bare name (or by section, given a dict); None keeps the current value."""
        data = self.model_dump()
        for name, value in knobs.items():
            if value is None:
                continue
            if name in type(self).model_fields:
                data[name] = {**data[name], **(value.model_dump() if isinstance(value, BaseModel) else value)}
            else:
                data[self.section_of(name)][name] = value
        return type(self).model_validate(data)

    def load_time(self) -> dict[str, Any]:
        """The knobs fixed when a pipeline loads (the models' sizes, the stored layouts), by bare name."""
        fixed = {**self.segmentation.model_dump(), **self.rerank.model_dump()}
        return {
            **fixed,
            "matryoshka_dim": self.passages.matryoshka_dim,
            "hyde_max_tokens": self.rewrite.hyde_max_tokens,
        }

    def flat(self) -> dict[str, Any]:
        """Every knob by bare name (for tables and logs)."""
        return {k: v for section in self.model_dump(mode="json").values() for k, v in section.items()}


__all__ = [
    "AnswerOptions",
    "DocumentOptions",
    "LadderRanking",
    "PassageOptions",
    "PipelineOptions",
    "RerankOptions",
    "RewriteOptions",
    "SafetyOptions",
    "SegmentationOptions",
    "SmallToBig",
    "SupportOptions",
]
