"""What surrounds an answer on every path (``as_shown``): the disclaimer, the urgent message, the referral and the
screen's notices, each once, whoever wrote the answer."""

from __future__ import annotations

from cpqa.answer.messages import DISCLAIMERS, SEARCH_FAILED
from cpqa.answer.postedit import as_shown
from cpqa.safety.screening import DOSING_REFERRAL, Screened
from cpqa.types import Answer

SOON = "Tell your cancer care team today."
SCREENED = Screened(
    question="How much tamoxifen should I take? My ankle is swollen.",
    notices=["Personal details were removed from your question."],
    urgent="Call your acute oncology line now.",
    care_soon=SOON,
    personal_dosing=True,
)


def test_a_failed_search_still_carries_everything_the_screen_found():
    shown = as_shown(Answer(text=SEARCH_FAILED, abstained=True, written_by="triage"), SCREENED, "patient")
    assert shown.urgent == SCREENED.urgent and shown.referral == DOSING_REFERRAL
    assert shown.notices == [SOON, *SCREENED.notices]  # the amber sign's message first
    assert shown.disclaimer == DISCLAIMERS["patient"]


def test_notices_come_once_and_a_refusal_is_not_repeated_as_a_notice():
    refusal = "Only English questions are supported for now."
    screened = SCREENED.model_copy(update={"notices": [refusal, *SCREENED.notices], "care_soon": None})
    answer = Answer(text=refusal, abstained=True, written_by="triage", notices=list(SCREENED.notices))
    assert as_shown(answer, screened, "clinician").notices == list(SCREENED.notices)
    assert as_shown(answer, screened, "clinician").disclaimer == DISCLAIMERS["clinician"]


def test_what_the_answerer_set_is_kept():
    answer = Answer(text="x", disclaimer="own", urgent="first", referral="own referral")
    shown = as_shown(answer, SCREENED, "patient")
    assert (shown.disclaimer, shown.urgent, shown.referral) == ("own", "first", "own referral")
