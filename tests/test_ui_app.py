"""The Streamlit app through streamlit.testing's AppTest, over the real pipeline on the shared sample."""

from pathlib import Path

import pytest

APP = str(Path(__file__).resolve().parents[1] / "ui" / "app.py")
QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"

pytestmark = pytest.mark.slow


@pytest.fixture
def app(indexed_home, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("CPQA_HOME", str(indexed_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert not at.exception
    return at


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at.session_state["turns"][-1]


def all_markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_the_sidebar_says_what_serves_in_plain_words_once(app):
    about = [e for e in app.sidebar.expander if e.label == "About this system"]
    assert len(about) == 1
    sidebar = "\n".join(m.value for m in app.sidebar.markdown)
    assert "quote the studies" in sidebar and "local copy of PubMed" in sidebar and "not installed" in sidebar
    for developer_text in ("all-MiniLM", "offline:", "ANTHROPIC_API_KEY", "E-utilities", "profile"):
        assert developer_text not in sidebar


def test_asking_shows_linked_citations_and_evidence_cards(app):
    turn = ask(app, QUESTION)
    answer, trace = turn["answer"], turn["trace"]
    assert answer.citations and trace.passages
    text = all_markdown(app)
    assert "https://pubmed.ncbi.nlm.nih.gov/" in text
    assert text.count("evidence-card") == len({p.pmid for p in trace.passages})  # one card a record
    assert "<mark>" in text  # cited sentences highlighted
    assert any("How this answer was found" in e.label for e in app.expander)
    assert app.caption and any(answer.disclaimer in c.value for c in app.caption)


def test_follow_up_carries_the_entity_across_turns(app):
    ask(app, QUESTION)
    follow = ask(app, "What about its side effects?")
    assert "tamoxifen" in follow["trace"].search_intent.lower()
    assert len(app.session_state["turns"]) == 2


def test_mode_switch_reaches_the_pipeline(app):
    app.sidebar.radio[0].set_value("clinician").run()
    turn = ask(app, QUESTION)
    assert turn["trace"].options.answer.mode == "clinician"


def test_filters_reach_the_pipeline(app):
    app.sidebar.toggle[0].set_value(True).run()
    app.sidebar.slider[0].set_value(5).run()
    app.sidebar.multiselect[0].set_value(["D1"]).run()
    turn = ask(app, QUESTION)
    assert turn["trace"].options.documents.years == 5
    assert turn["trace"].options.documents.sources == ("D1",)


def test_pipeline_failure_shows_a_friendly_error_and_keeps_the_question(app, monkeypatch):
    from cpqa.pipeline import Pipeline

    def broken(self, *args, **kwargs):
        raise RuntimeError("vector index corrupted")

    monkeypatch.setattr(Pipeline, "ask", broken)
    turn = ask(app, QUESTION)
    assert turn["question"] == QUESTION and "error" in turn
    assert any("Sorry, something went wrong" in e.value for e in app.error)


def test_empty_question_is_refused_clearly(app):
    turn = ask(app, "   ")
    assert "error" in turn
    assert app.error and "question" in app.error[0].value.lower()


def test_urgent_symptoms_put_one_urgent_banner_first(app):
    turn = ask(app, "I have a fever of 39C during my chemotherapy, what should I do?")
    assert turn["answer"].urgent
    assert app.error and app.error[0].value == turn["answer"].urgent
    assert sum("URGENT" in e.value for e in app.error) == 1 and "Please act now" not in app.error[0].value


def alerts_in_order(block) -> list[tuple[str, str]]:
    """The alerts (error, warning, info) under ``block``, in the order they are on the screen."""
    found = []
    for child in getattr(block, "children", {}).values():
        if child.type in {"error", "warning", "info"}:
            found.append((child.type, child.value))
        found += alerts_in_order(child)
    return found


def test_a_referral_shows_once_after_the_urgent_message_and_before_the_notices(app):
    turn = ask(
        app,
        "I have a fever of 39C during my chemotherapy. Would 40 mg of tamoxifen work better for me? "
        "My email is jane.doe@example.com",
    )
    answer = turn["answer"]
    assert answer.urgent and answer.referral and answer.notices
    alerts = alerts_in_order(app.chat_message[-1])
    assert alerts[:3] == [("error", answer.urgent), ("warning", answer.referral), ("info", answer.notices[0])]
    shown = [value for _, value in alerts] + [m.value for m in app.main.markdown]
    assert sum(answer.referral in value for value in shown) == 1  # in its own box, nowhere else


def test_the_answer_area_shows_no_internal_flags_and_says_once_that_it_quotes(app):
    ask(app, QUESTION)
    provenance = {m.value for e in app.main.expander for m in e.markdown}  # a researcher's view, kept
    shown = "\n".join([*(m.value for m in app.main.markdown if m.value not in provenance)])
    shown += "\n".join(w.value for w in app.main.warning)
    shown += "\n".join(i.value for i in app.main.info) + "\n".join(c.value for c in app.main.caption)
    assert "uncited_sentences" not in shown and "Checked after writing" not in shown
    assert shown.count("not written by a language model") == 1


def test_the_input_is_disabled_while_a_question_runs_and_enabled_after(app):
    turn = ask(app, QUESTION)
    assert turn["answer"].text and not app.chat_input[0].disabled  # answered; ready for the next question
    app.session_state["running"] = True  # as the submit callback leaves it while an answer is being written
    app.run()
    assert app.chat_input[0].disabled  # a second question cannot be typed in, so none is lost
    assert len(app.session_state["turns"]) == 1


@pytest.fixture
def app_with_a_model(indexed_home, monkeypatch):
    """The app with Claude played by the Anthropic stand-in (no real model can run here); the cached pipeline is
    dropped before and after, so the offline tests around this one keep theirs."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from cpqa.testing.anthropic_standin import AnthropicStandIn

    with AnthropicStandIn() as api:
        for name, value in {
            "CPQA_HOME": str(indexed_home),
            "CPQA_PROFILE": "offline",
            "ANTHROPIC_API_KEY": "sk-standin",
            "ANTHROPIC_BASE_URL": api.url,
            "CPQA_LLM_MAX_RETRIES": "0",
        }.items():
            monkeypatch.setenv(name, value)
        st.cache_resource.clear()
        at = AppTest.from_file(APP, default_timeout=180)
        at.run()
        assert not at.exception
        yield api, at
    st.cache_resource.clear()


def test_a_crisis_only_the_model_recognises_puts_the_crisis_message_first(app_with_a_model):
    from cpqa.testing.anthropic_standin import Reply

    api, at = app_with_a_model
    quiet = "my dad keeps saying he just wants to sleep and not wake up, and he is on chemo"
    verdict = {"action": "crisis", "category": "mood", "sign": "wishing not to wake up", "referral": "none"}
    verdict |= {"language": "English", "english": "", "reason": "stand-in verdict"}
    api.script(Reply.tool(verdict, name="triage_message"))
    turn = ask(at, quiet)
    answer, trace = turn["answer"], turn["trace"]
    assert any(f.by == "model" and f.category == "mood" for f in trace.triage)
    assert answer.urgent and answer.urgent.startswith("If you are thinking about suicide")
    assert at.error and at.error[0].value == answer.urgent  # the first thing on the screen
    assert sum("suicide" in e.value for e in at.error) == 1
