"""CPQA: the Streamlit app for patients and clinicians (``streamlit run ui/app.py``).

A thin layer over ``cpqa.pipeline``: the pipeline and its models load once per server, answers are cached
per question in the session, and everything shown comes from the Answer and its RetrievalTrace."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpqa.config import NCBI_EUTILS_URL, get_settings  # noqa: E402
from cpqa.models.encoders import resolve  # noqa: E402
from cpqa.progress import DRAFT_TITLE  # noqa: E402
from cpqa.documents.boolean_search import uses_local_store  # noqa: E402
from cpqa.safety.screening import check_question, first_messages, install_log_redaction, prepare  # noqa: E402
from cpqa.documents.study_type import badge as study_badge  # noqa: E402
from ui.render import PUBMED_URL, citation_numbers, evidence_card, linked_answer  # noqa: E402

SOURCE_LABELS = {"D1": "PubMed abstracts", "D2": "PMC reviews (full text)", "D3": "Other PMC articles (full text)"}
COMPONENT_LABELS = {
    "semantic_query": "Semantic search",
    "article_encoder": "Article index",
    "sentence_embedder": "Passage splitting",
    "passage_retriever": "Passage retrieval",
    "reranker": "Reranking",
}

st.set_page_config(page_title="CPQA: cancer questions answered from the evidence", page_icon="🎗️", layout="wide")


@st.cache_resource(show_spinner="Loading the search and language models…")
def load_pipeline():
    """One pipeline per server: models, indexes and caches are shared by every session; a deployment's options
    file (``CPQA_OPTIONS_FILE``) applies."""
    from cpqa.options_file import load_options
    from cpqa.pipeline import Pipeline

    settings = get_settings()
    return Pipeline(settings, load_options(settings.cpqa_options_file))


def component_status(settings) -> list[tuple[str, str, str]]:
    """(component, what serves it, what to set to change it) for the sidebar."""
    rows = []
    for component, label in COMPONENT_LABELS.items():
        choice = resolve(component, settings)
        hint = "" if choice.profile == "paper" else "offline: the paper model's weights are not available here"
        rows.append((label, f"{choice.model} ({'paper model' if choice.profile == 'paper' else 'offline'})", hint))
    if settings.has_llm:
        rows.append(("Rewriting and answers", f"{settings.cpqa_llm_model} ({settings.cpqa_llm_provider})", ""))
    else:
        rows.append(
            (
                "Rewriting and answers",
                "rule-based searches, extractive answers (offline)",
                "set ANTHROPIC_API_KEY for answers written by Claude, or CPQA_LLM_PROVIDER=openai-compatible "
                "with CPQA_LLM_BASE_URL for a local model",
            )
        )
    if uses_local_store(settings):
        ncbi, hint = "local store (offline twin of PubMed search)", "NCBI not used: offline profile or unreachable"
    elif settings.cpqa_eutils_url.rstrip("/") == NCBI_EUTILS_URL.rstrip("/"):
        ncbi = "NCBI E-utilities" if settings.ncbi_email else "NCBI E-utilities (set NCBI_EMAIL, as NCBI asks)"
        hint = "" if settings.ncbi_api_key else "set NCBI_API_KEY for 10 requests/s instead of 3"
    else:
        ncbi, hint = "E-utilities mirror", settings.cpqa_eutils_url
    rows.append(("PubMed search", ncbi, hint))
    return rows


def sidebar(settings) -> dict:
    with st.sidebar:
        st.header("Settings")
        mode = st.radio(
            "I am a",
            ["patient", "clinician"],
            horizontal=True,
            help="Patients get plain language; clinicians get study types and numbers.",
        )
        limit_years = st.toggle("Only recent publications", value=False)
        years = st.slider("Published in the last N years", 1, 30, 10) if limit_years else None
        sources = st.multiselect(
            "Evidence sources", list(SOURCE_LABELS), default=["D1", "D2"], format_func=SOURCE_LABELS.get
        )
        if st.button("New conversation"):
            st.session_state.turns = []
        st.divider()
        st.subheader("Components")
        for label, serving, hint in component_status(settings):
            st.markdown(
                f"**{label}**: {serving}" + (f"  \n<small>{hint}</small>" if hint else ""), unsafe_allow_html=True
            )
    return {"mode": mode, "years": years, "sources": tuple(sources) or ("D1",)}


def show_answer(answer, trace) -> None:
    if answer.urgent:
        st.error(f"**Please act now.** {answer.urgent}", icon="🚨")
    for notice in answer.notices:
        st.info(notice, icon="ℹ️")
    numbers = citation_numbers(answer.text, answer.citations)
    if answer.written_by == "extractive":
        st.caption("Evidence summary assembled from the passages below, not written by a language model.")
    st.markdown(linked_answer(answer.text, numbers, trace.passages))
    if answer.flags:
        st.warning("Checked after writing: " + "; ".join(answer.flags))
    if answer.disclaimer:
        st.caption(answer.disclaimer)
    if trace.passages:
        st.markdown("**Evidence**")
        for passage in trace.passages:
            st.markdown(evidence_card(numbers.get(passage.pmid), passage, answer.text), unsafe_allow_html=True)
    show_provenance(trace)


def show_provenance(trace) -> None:
    with st.expander("How this answer was found"):
        for warning in trace.warnings:
            st.warning(warning)
        if trace.removed_sentences:
            st.markdown("**Removed before you saw the answer** (not supported by the evidence they cite)")
            st.table(
                [
                    {
                        "sentence": r.sentence,
                        "cited": ", ".join(r.pmids),
                        "judged by": r.judged_by,
                        "verdict": r.verdict,
                    }
                    for r in trace.removed_sentences
                ]
            )
        if trace.search_intent:
            st.markdown(f"**Search intent:** {trace.search_intent}")
        if trace.ladder:
            st.markdown("**Boolean searches, most specific first**")
            st.table(
                [
                    {
                        "level": lv.level,
                        "query": lv.expression,
                        "hits": lv.count,
                        "new": lv.new_pmids,
                        "ms": round(lv.ms, 1),
                    }
                    for lv in trace.ladder
                ]
            )
        st.markdown("**Models**")
        st.table(
            [
                {
                    "component": c.component,
                    "model": c.model,
                    "provider": c.provider or "local",
                    "profile": c.profile,
                    "why": c.reason,
                }
                for c in trace.models.values()
            ]
        )
        st.markdown("**Stage timings**")
        st.table([{"stage": name, "ms": round(rec.ms, 1)} for name, rec in trace.stages.items()])
        if trace.candidates:
            kept = [c for c in trace.candidates if c.kept]
            st.markdown(f"**Candidate documents:** {len(kept)} kept of {len(trace.candidates)}")
            st.dataframe(
                [
                    {
                        "pmid": c.pmid,
                        "found by": c.category,
                        "source": c.source,
                        "study type": study_badge(c.evidence_type),
                        "rrf": round(c.rrf, 4),
                        "semantic": c.semantic_score,
                        "kept": c.kept,
                        "why dropped": c.dropped_reason or "",
                    }
                    for c in trace.candidates
                ],
                hide_index=True,
            )


def show_first(screened) -> None:
    """The screening result, shown the moment it is known, above the progress box: urgent care first."""
    for message in first_messages(screened):
        if message == screened.urgent:
            st.error(f"**Please act now.** {message}", icon="🚨")
        else:
            st.info(message, icon="ℹ️")


def run_question(question: str, history: list[str], options: dict):
    """Screen the question (before any model loads: bad input is refused at once, an urgent message shown at
    once), then ask the pipeline, showing its progress stage by stage; cached per question in the session."""
    screened = check_question(question, history=history)
    key = (question, tuple(history), options["mode"], options["years"], options["sources"])
    cache = st.session_state.setdefault("answers", {})
    if key in cache:
        return cache[key]
    first = st.container()
    with first:
        show_first(screened)
    pipeline = load_pipeline()
    draft = st.empty()

    def progress(event) -> None:
        status.update(label=event.label + "…")
        if event.stage == "drafting":  # Claude's answer as it streams, as plain text until it is checked
            with draft.container():
                st.caption(DRAFT_TITLE)
                st.text(event.draft or "")

    with st.status("Searching the evidence…", expanded=False) as status:
        result = pipeline.ask(screened, **options, progress=progress)  # screened once: the meaning check is added
        status.update(label="Done", state="complete")
    first.empty()  # the answer shows the same messages first
    draft.empty()  # ... and replaces the draft with the checked answer
    cache[key] = result
    return result


def main() -> None:
    settings = get_settings()
    install_log_redaction(settings)
    prepare()  # the screening models, once per server: a question's first messages show at once
    options = sidebar(settings)
    st.title("Cancer questions, answered from the evidence")
    st.caption(
        "Answers cite PubMed and PubMed Central. This is information, not medical advice: "
        "talk to your care team about your own treatment."
    )
    turns = st.session_state.setdefault("turns", [])
    for turn in turns:
        with st.chat_message("user"):
            st.markdown(turn["question"])
        with st.chat_message("assistant"):
            if turn.get("error"):
                st.error(turn["error"])
            else:
                show_answer(turn["answer"], turn["trace"])

    # While a question runs the input is disabled (a second question would rerun the script and silently drop
    # the first one's answer); the submit callback disables it before the run that answers, which re-enables it.
    running = st.session_state.get("running", False)
    st.chat_input(
        "Ask about a cancer, a treatment, side effects, screening…",
        disabled=running,
        on_submit=_started,
        key="question_box",
    )
    question = st.session_state.pop("pending", None)
    if question is None:
        st.session_state["running"] = False
        if not turns:
            st.markdown(
                f"Try: *What are the side effects of pembrolizumab in lung cancer?* "
                f"Every claim links to its source on [PubMed]({PUBMED_URL.format(pmid='')})."
            )
        return
    try:
        answer_turn(question, turns, options, settings)
    finally:
        st.session_state["running"] = False
    st.rerun()  # re-enable the input


def _started() -> None:
    """The submit callback, run before the script: keep the question and disable the input for the run."""
    st.session_state["pending"] = st.session_state.get("question_box") or ""
    st.session_state["running"] = True


def answer_turn(question: str, turns: list[dict], options: dict, settings) -> None:
    history = [t["question"] for t in turns if not t.get("error")]
    with st.chat_message("user"):
        st.markdown(question)
    with st.chat_message("assistant"):
        try:
            result = run_question(question, history, options)
        except ValueError as exc:  # bad input (empty, unusable): the message is meant for the user
            turns.append({"question": question, "error": settings.redact(str(exc))})
            st.error(turns[-1]["error"])
            return
        except Exception as exc:  # noqa: BLE001 - the app must answer every question with something readable
            message = (
                "Sorry, something went wrong while answering. Your question was not lost; "
                f"please try again. ({type(exc).__name__}: {settings.redact(str(exc))[:200]})"
            )
            turns.append({"question": question, "error": message})
            st.error(message)
            return
        turns.append({"question": question, "answer": result.answer, "trace": result.trace})
        show_answer(result.answer, result.trace)


main()
