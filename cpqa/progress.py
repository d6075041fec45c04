"""What a question's progress looks like to a display: the events ``Pipeline.ask`` reports and their labels.

Light on purpose (no models, no stores): the CLI and the app import it before anything heavy loads."""

from __future__ import annotations

from pydantic import BaseModel

from cpqa.safety.screening import Screened

STAGE_LABELS = {
    "safety": "Checking the question",
    "screened": "Question checked",
    "rewrite": "Rewriting the question into PubMed searches",
    "documents": "Searching PubMed (Boolean ladder + semantic search)",
    "segmentation": "Finding the passages of each article",
    "passage_retrieval": "Ranking passages",
    "answer": "Writing the answer",
    "drafting": "Writing the answer",
}
DRAFT_TITLE = "Draft, as it is written (citations not yet checked)"


class Progress(BaseModel):
    """What ``Pipeline.ask`` reports as it goes: each stage as it starts, and first of all ``stage="screened"`` with
    the screening result (urgent-care message, dosing referral, personal details removed), before any retrieval,
    so a display can show it at once. While Claude writes, ``stage="drafting"`` events carry the answer so far
    (``draft``, not yet citation-checked); the pipeline's result holds the checked answer that replaces it."""

    stage: str
    screened: Screened | None = None
    draft: str | None = None

    @property
    def label(self) -> str:
        return STAGE_LABELS.get(self.stage, self.stage)
