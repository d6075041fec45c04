"""A language model's triage pass (issue 30): beside the search, it raises a flag the rules and the meaning screen
missed (never lowers one), reaches the progress display before the answer, is recorded in the trace, and translates
a question in another language for the search, which is answered in the asker's language. Claude is played by the
Anthropic stand-in (a real HTTP server speaking the Messages API; no real model can run here)."""

from __future__ import annotations

import pytest

from cpqa.pipeline import Pipeline
from cpqa.safety.model_triage import ModelTriage
from cpqa.safety.screening import check_question
from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply, default_responder

QUIET = "my dad keeps saying he just wants to sleep and not wake up, and he is on chemo"  # for the model to judge
TRIAGE = "triage_message"


def verdict(action="none", category="none", sign="", referral="none", language="English", english=""):
    return Reply.tool(
        {
            "action": action,
            "category": category,
            "sign": sign,
            "referral": referral,
            "language": language,
            "english": english,
            "reason": "stand-in verdict",
        },
        name=TRIAGE,
    )


@pytest.fixture(scope="module")
def claude(sample_home):
    from cpqa.config import get_settings

    with AnthropicStandIn() as api:
        settings = get_settings(
            cpqa_home=sample_home,
            cpqa_profile="offline",
            anthropic_api_key="sk-standin",
            anthropic_base_url=api.url,
            cpqa_llm_max_retries=0,
        )
        with Pipeline(settings) as pipeline:
            yield api, pipeline


@pytest.fixture
def model(claude):
    api, pipeline = claude
    api.default = default_responder
    return api, ModelTriage(pipeline.llm)


def test_the_model_raises_a_flag_with_its_evidence_and_the_prompt_lists_the_criteria(model):
    api, triage = model
    api.script(verdict("crisis", "mood", "indirect thoughts of ending his life"))
    screened = check_question("my dad says it would be easier for everyone if he wasn't around")
    assert not screened.urgent  # what the rules alone see
    raised = triage.raised(screened)
    assert raised.crisis and raised.urgent.startswith("If you are thinking about suicide") and raised.by_model
    [finding] = [f for f in raised.triage if f.by == "model"]
    assert finding.category == "mood" and finding.evidence == "stand-in verdict"
    request = api.aside_requests[-1]
    assert request["tool_choice"]["name"] == TRIAGE and "spinal cord compression" in request["system"]
    assert "easier for everyone" in request["messages"][0]["content"]  # as data, inside the delimiter


def test_the_model_never_lowers_a_flag_and_its_failure_leaves_the_screen_as_it_was(model):
    api, triage = model
    screened = check_question("I'm on chemo and shivering with a temperature of 38.4")
    api.script(verdict())  # "nothing urgent"
    assert triage.raised(screened).urgent == screened.urgent
    api.default = lambda request: Reply.error(500)
    failed = triage.assess(screened.question)
    api.default = default_responder
    assert failed.failure and triage.raised(screened, failed) == screened
    api.script(verdict(referral="interaction"))
    assert triage.raised(check_question("Can I have a glass of wine tonight?")).personal_interaction


def test_an_unscripted_model_raises_nothing(model):
    api, triage = model
    ordinary = check_question("What is the survival rate of stage 2 breast cancer?")
    assert triage.raised(ordinary).with_findings([]) == triage.raised(ordinary)
    assert triage.raised(ordinary).urgent is None and not triage.raised(ordinary).personal_dosing


def test_in_the_pipeline_the_raised_flag_reaches_the_display_before_the_answer_and_the_trace(claude):
    api, pipeline = claude
    api.default = default_responder
    api.script(verdict("crisis", "mood", "wishing not to wake up"))
    events = []
    result = pipeline.ask(QUIET, progress=lambda e: events.append(e))
    stages = [e.stage for e in events]
    raised = [i for i, e in enumerate(events) if e.stage == "screened" and e.screened and e.screened.crisis]
    assert raised and raised[0] < stages.index("answer")  # before the answer is written
    assert result.answer.urgent and result.answer.urgent.startswith("If you are thinking about suicide")
    assert any(f.by == "model" and f.category == "mood" for f in result.trace.triage)
    assert "model_triage" in result.trace.stages and result.trace.stages["model_triage"].info["action"] == "crisis"


def test_a_question_in_another_language_is_searched_in_english_and_answered_in_it(claude):
    api, pipeline = claude
    api.default = default_responder
    spanish = "¿El tamoxifeno reduce el riesgo de recaída del cáncer de mama?"
    english = "Does tamoxifen reduce the risk of breast cancer recurrence?"
    api.script(verdict(language="Spanish", english=english))
    result = pipeline.ask(spanish)
    assert result.trace.language == "Spanish" and result.trace.translated_question == english
    assert result.trace.question == spanish  # the trace keeps both
    assert result.trace.rewrite is not None and result.trace.rewrite.question == english  # searched in English
    answered = [r for r in api.requests if (r.get("tool_choice") or {}).get("name") == "give_answer"]
    assert answered and "Write the answer in Spanish" in answered[-1]["system"]
    assert not result.answer.text.endswith("Please ask your question in English.")


def test_offline_a_question_in_another_language_is_refused_in_it(sample_home):
    from cpqa.config import get_settings

    with Pipeline(get_settings(cpqa_home=sample_home, cpqa_profile="offline")) as pipeline:
        result = pipeline.ask("¿El tamoxifeno reduce el riesgo de recaída del cáncer de mama?")
    assert result.answer.text.startswith("Por ahora solo se admiten preguntas en inglés")
    assert result.answer.abstained and not result.trace.passages
