"""The switches of the answer-quality strategies; ``PipelineOptions`` extends this model, so every switch is
recorded in ``trace.options``. All default to off: the paper's pipeline unchanged."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

SmallToBig = Literal["off", "neighbours", "section"]


class StrategyOptions(BaseModel):
    """Per-question strategy switches (issue 10); each can be overridden in ``Pipeline.ask``."""

    adaptive_retrieval: bool = Field(
        default=False, description="decide per question whether retrieval is needed (Claude, rule-based fallback); "
        "off by default for a patient-facing product")
    hyde: bool = Field(default=False, description="search with the question plus a drafted pseudo-answer "
                       "(HyDE / Query2Doc); needs Claude")
    multi_query: bool = Field(default=False, description="passage retrieval with the search intent and concept "
                              "variants of it, fused by reciprocal rank")
    small_to_big: SmallToBig = Field(default="off", description="give the answerer the retrieved passages' "
                                     "neighbouring passages or their enclosing section")
    small_to_big_window: int = Field(default=1, ge=1, le=5, description="neighbouring passages on each side")
    repack: bool = Field(default=False, description="most relevant evidence first, second most relevant last")
    restructure: bool = Field(default=False, description="evidence sentences grouped into topics, TextRank-selected, "
                              "topics ordered by reranker relevance")
    cot_refine: bool = Field(default=False, description="answer without retrieval, then revise against the "
                             "evidence; needs Claude")
