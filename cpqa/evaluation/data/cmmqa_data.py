"""The CMMQA dataset as the harness reads it: MIRAGE questions kept by the cancer filter.

``cpqa ingest cmmqa MIRAGE_JSON --mesh DIR`` (``ingestion/cmmqa.py``) writes it to the data home; ``cpqa``
never imports ``ingestion``, so this module only knows the file's place and shape.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from cpqa.config import Settings

# MIRAGE's five sources, in the paper's column order, with their display names.
DATASETS: dict[str, str] = {
    "mmlu": "MMLU-Med",
    "medqa": "MedQA-US",
    "medmcqa": "MedMCQA",
    "pubmedqa": "PubMedQA*",
    "bioasq": "BioASQ-Y/N",
}
BUILD_COMMAND = "cpqa ingest cmmqa ../shared/data/mirage/benchmark.json --mesh ../shared/data/mesh"


class MCQuestion(BaseModel):
    """One multiple-choice question; ``matched_term`` is the cancer term that kept it in CMMQA."""

    dataset: str
    qid: str
    question: str
    options: dict[str, str]
    answer: str
    matched_term: str | None = None
    matched_text: str | None = None  # the words of the question that matched it
    pmids: list[str] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.dataset}:{self.qid}"


class CMMQACounts(BaseModel):
    """Per-dataset totals before and after the cancer filter."""

    total: dict[str, int]
    kept: dict[str, int]
    terms: int  # distinct surface forms the filter matched against


class CMMQAMissing(FileNotFoundError):
    """The CMMQA file has not been built in this data home."""


def cmmqa_dir(settings: Settings) -> Path:
    return settings.home / "cmmqa"


def cmmqa_path(settings: Settings) -> Path:
    return cmmqa_dir(settings) / "cmmqa.jsonl"


def counts_path(settings: Settings) -> Path:
    return cmmqa_dir(settings) / "counts.json"


def load_cmmqa(settings: Settings) -> list[MCQuestion]:
    path = cmmqa_path(settings)
    if not path.exists():
        raise CMMQAMissing(f"CMMQA not built in {settings.home}: run `{BUILD_COMMAND}` first")
    with path.open(encoding="utf-8") as handle:
        return [MCQuestion.model_validate_json(line) for line in handle if line.strip()]


def load_counts(settings: Settings) -> CMMQACounts:
    path = counts_path(settings)
    if not path.exists():
        raise CMMQAMissing(f"CMMQA counts not built in {settings.home}: run `{BUILD_COMMAND}` first")
    return CMMQACounts.model_validate(json.loads(path.read_text(encoding="utf-8")))
