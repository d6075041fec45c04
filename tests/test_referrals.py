"""A referral (personal dosing, one's own medicines together, a personal treatment decision) reaches the person on
every path: an answer, "not directly", an abstention for an unmentioned drug, no evidence at all, a model-written
answer, a failed search; and through every front end (the CLI, REST, SSE, MCP and the app test theirs). It is a field
of the answer (``Answer.referral``), not words inside its text."""

from __future__ import annotations

import json
import re

import pytest

from cpqa.answer.messages import NO_EVIDENCE, SEARCH_FAILED
from cpqa.options import PipelineOptions
from cpqa.passages.finder import PassageFinding
from cpqa.pipeline import Pipeline
from cpqa.safety.screening import DECISION_REFERRAL, DOSING_REFERRAL, INTERACTION_REFERRAL
from cpqa.testing.anthropic_standin import AnthropicStandIn

OPTIONS = PipelineOptions.of(max_documents=5)
# One question per kind of referral whose drug or treatment the sample holds, and one whose drug it never names.
FOUND = {
    "dosing": ("Should I stop my tamoxifen because the hot flashes are so bad?", DOSING_REFERRAL),
    "interaction": ("Can I drink grapefruit juice with my tamoxifen?", INTERACTION_REFERRAL),
    "decision": ("Should I have chemotherapy after my breast cancer surgery?", DECISION_REFERRAL),
}
UNMENTIONED = {
    "dosing": ("Can I take an extra ondansetron tablet if I still feel sick after the first one?", DOSING_REFERRAL),
    "interaction": ("Is it safe to take St John's wort with my palbociclib?", INTERACTION_REFERRAL),
    "decision": ("Should I go ahead with lutetium-177 dotatate for my tumour?", DECISION_REFERRAL),
}
ISSUE_QUESTIONS = [  # the dosing questions that lost their referral (issue 34)
    "Can I take an extra ondansetron tablet if I still feel sick after the first one?",
    "How much dexamethasone should I take the day before my chemo?",
    "Should I stop my letrozole because my joints hurt so much?",
    "My son weighs 20 kg, what dose of mercaptopurine should he get?",
    "My oncologist gave me 20 mg, would 40 mg work better for me?",
]


@pytest.fixture(scope="module")
def pipeline(sample_settings):
    with Pipeline(sample_settings, OPTIONS) as loaded:
        yield loaded


def _referred(answer, message: str) -> None:
    assert answer.referral is not None and message in answer.referral, answer.referral
    assert message not in answer.text  # a field of its own, shown once


@pytest.mark.parametrize("kind", sorted(FOUND))
def test_a_referral_comes_with_an_answer_from_evidence(pipeline, kind):
    question, message = FOUND[kind]
    result = pipeline.ask(question)
    assert result.trace.passages  # evidence was found (answered, or said not to answer directly)
    _referred(result.answer, message)


@pytest.mark.parametrize("kind", sorted(UNMENTIONED))
def test_a_referral_survives_the_abstention_for_a_drug_the_evidence_never_names(pipeline, kind):
    question, message = UNMENTIONED[kind]
    result = pipeline.ask(question)
    assert result.answer.abstained, result.answer.text
    _referred(result.answer, message)


@pytest.mark.parametrize("question", ISSUE_QUESTIONS)
def test_every_dosing_question_of_the_report_gets_its_referral(pipeline, question):
    _referred(pipeline.ask(question).answer, DOSING_REFERRAL)


@pytest.mark.parametrize("kind", sorted(FOUND))
def test_a_referral_comes_when_no_evidence_is_found(pipeline, kind, monkeypatch):
    question, message = FOUND[kind]
    monkeypatch.setattr(pipeline.finder, "run", lambda *args, **kwargs: PassageFinding())
    answer = pipeline.ask(question).answer
    assert answer.text == NO_EVIDENCE and answer.abstained
    _referred(answer, message)


@pytest.mark.parametrize("kind", sorted(FOUND))
def test_a_referral_comes_when_the_search_fails(pipeline, kind, monkeypatch):
    question, message = FOUND[kind]

    def broken(*args, **kwargs):
        raise OSError("the store is gone")

    monkeypatch.setattr(pipeline.documents, "search", broken)
    result = pipeline.ask(question)
    assert result.answer.text == SEARCH_FAILED and result.answer.written_by == "triage"
    _referred(result.answer, message)
    assert any("retrieval failed" in w for w in result.trace.warnings)


def test_a_failed_search_without_a_referral_or_urgent_sign_is_an_error(pipeline, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("the store is gone")

    monkeypatch.setattr(pipeline.documents, "search", broken)
    with pytest.raises(OSError):
        pipeline.ask("What are the side effects of tamoxifen?")


def test_an_ordinary_question_gets_no_referral(pipeline):
    assert pipeline.ask("What are the side effects of tamoxifen?").answer.referral is None


@pytest.mark.parametrize("kind", sorted(FOUND))
def test_a_model_written_answer_carries_the_referral_and_the_model_is_told(sample_home, kind):
    from cpqa.config import get_settings

    question, message = FOUND[kind]
    with AnthropicStandIn() as api:
        settings = get_settings(
            cpqa_home=sample_home, cpqa_profile="offline", anthropic_api_key="sk-standin", anthropic_base_url=api.url
        )
        with Pipeline(settings, OPTIONS) as pipe:
            answer = pipe.ask(question).answer
        asked = [json.dumps(r) for r in api.requests if (r.get("tool_choice") or {}).get("name") == "give_answer"]
    assert answer.written_by == "llm"
    _referred(answer, message)
    assert asked and "own" in asked[-1]  # the personal-question note reached the model


def test_the_rest_answer_and_the_event_stream_carry_the_referral(pipeline):
    from fastapi.testclient import TestClient

    from cpqa.serving.api import create_app

    client = TestClient(create_app(pipeline, rate_per_minute=0))
    question, message = UNMENTIONED["dosing"]
    body = client.post("/v1/ask", json={"question": question}).json()
    assert message in body["answer"]["referral"]
    events = client.post("/v1/ask", json={"question": question}, headers={"Accept": "text/event-stream"}).text
    blocks = [b for b in events.split("\n\n") if b.strip()]
    parsed = [
        (b.split("\n")[0].removeprefix("event: "), json.loads(b.split("\n", 1)[1].removeprefix("data: ")))
        for b in blocks
    ]
    screened = next(data for event, data in parsed if event == "screened")
    answered = next(data for event, data in parsed if event == "answer")
    assert message in screened["referral"] and message in answered["answer"]["referral"]
    assert [event for event, _ in parsed].index("screened") < [event for event, _ in parsed].index("answer")


def test_the_command_line_prints_the_referral_once_before_the_answer(sample_home, monkeypatch):
    from typer.testing import CliRunner

    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    question, message = UNMENTIONED["dosing"]
    result = CliRunner().invoke(app, ["ask", question], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    flat = " ".join(re.sub("[│╭╮╰╯─]", " ", result.stdout).split())  # the panels' borders aside
    assert flat.count(message) == 1
    assert "Ask your care team" in flat and flat.index(message) < flat.index("Answer (not enough evidence")
