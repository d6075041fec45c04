"""CPQA: the Streamlit app for patients and clinicians (``streamlit run ui/app.py``).

A thin layer over ``cpqa.pipeline``: the pipeline and its models load once per server, answers are cached
per question in the session, and everything shown comes from the Answer and its RetrievalTrace."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpqa.config import NCBI_EUTILS_URL, get_settings  # noqa: E402
from cpqa.models.encoders import PAPER_MODELS as PAPER_COMPONENTS, resolve  # noqa: E402
from cpqa.progress import DRAFT_TITLE  # noqa: E402
from cpqa.documents.boolean_search import uses_local_store  # noqa: E402
from cpqa.options_file import load_options  # noqa: E402
from cpqa.safety.screen import Screen  # noqa: E402
from cpqa.safety.screening import first_messages, prepare  # noqa: E402
from cpqa.safety.secrets import install_log_redaction  # noqa: E402
from cpqa.answer.citations import citation_numbers  # noqa: E402
from cpqa.documents.study_type import badge as study_badge  # noqa: E402
from ui.render import (  # noqa: E402
    PUBMED_URL,
    URGENT_KEY,
    URGENT_STYLE,
    evidence_card,
    linked_answer,
    record_groups,
    split_preclinical,
)

SOURCE_LABELS = {
    "D4": "Patient information (cancer.gov, MedlinePlus, NIH)",
    "D1": "PubMed abstracts",
    "D2": "PMC reviews (full text)",
    "D3": "Other PMC articles (full text)",
}
PAPER_MODELS = "the biomedical models of the research CPQA follows (MedCPT and PubMedBERT)"
st.set_page_config(
    page_title="CPQA: cancer questions answered from the evidence",
    page_icon="🎗️",
    layout="wide",
    menu_items={"About": "CPQA answers questions about cancer from PubMed and PMC evidence, citing every claim."},
)


_urgent_keys = itertools.count()  # the script runs afresh each time: keys unique within a run


def urgent_banner(message: str) -> None:
    """The urgent-care (or crisis) message: an alert that stays pinned in view while its answer is read."""
    with st.container(key=f"{URGENT_KEY}{next(_urgent_keys)}"):
        st.error(message, icon=":material/emergency:")


@st.cache_resource(show_spinner="Loading the search and language models…")
def load_pipeline():
    """One pipeline per server: models, indexes and caches are shared by every session; a deployment's options
    file (``CPQA_OPTIONS_FILE``) applies."""
    from cpqa.pipeline import Pipeline

    settings = get_settings()
    return Pipeline(settings, load_options(settings.cpqa_options_file))


def about_system(settings) -> list[str]:
    """What answers, searches and reads the evidence, in plain words, once each (the trace names every model)."""
    if settings.has_llm:
        answers = (
            f"Answers are written by a language model ({settings.cpqa_llm_model}) from the studies found, and every "
            "sentence is checked against the study it cites."
        )
    else:
        answers = (
            "Answers quote the studies found, sentence by sentence: no language model is set up on this server "
            "(an administrator can add one)."
        )
    if uses_local_store(settings):
        search = "Searches a local copy of PubMed records kept on this server."
    elif settings.cpqa_eutils_url.rstrip("/") == NCBI_EUTILS_URL.rstrip("/"):
        search = "Searches PubMed and PubMed Central at the US National Library of Medicine, as you ask."
    else:
        search = "Searches PubMed records through this organisation's own copy of PubMed's search service."
    paper = [resolve(component, settings).profile == "paper" for component in PAPER_COMPONENTS]
    if all(paper):
        models = f"Finds and ranks evidence with {PAPER_MODELS}."
    elif any(paper):
        models = f"Finds and ranks evidence partly with {PAPER_MODELS}, partly with general-purpose language models."
    else:
        models = (
            "Finds and ranks evidence with a general-purpose sentence model bundled with CPQA; "
            f"{PAPER_MODELS} are not installed on this server."
        )
    return [answers, search, models]


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
            "Evidence sources",
            list(SOURCE_LABELS),
            default=list(load_options(settings.cpqa_options_file).documents.sources),  # the deployment's
            format_func=SOURCE_LABELS.get,
        )
        if st.button("New conversation"):
            st.session_state.turns = []
        with st.expander("About this system"):
            for line in about_system(settings):
                st.markdown(line)
    return {"mode": mode, "years": years, "sources": tuple(sources) or ("D1",)}


REFERRAL_ICON = ":material/medical_information:"


def show_answer(answer, trace, records: dict[str, str] | None = None) -> None:
    """The answer as a person reads it: one urgent banner first (pinned in view), the care-team or pharmacist
    referral, notices, the answer (whose first line says when it quotes the studies), the disclaimer, then the
    evidence cards, one a record (``records``: the whole abstracts, by PMID); what the checks found stays in the
    provenance."""
    if answer.urgent:
        urgent_banner(answer.urgent)
    if answer.referral:
        st.warning(answer.referral, icon=REFERRAL_ICON)
    for notice in answer.notices:
        st.info(notice, icon=":material/info:")
    numbers = citation_numbers(answer.text, answer.citations)
    st.markdown(linked_answer(answer.text, numbers, trace.passages))
    if answer.disclaimer:
        st.caption(answer.disclaimer)
    if trace.passages:
        show_evidence(answer.text, numbers, trace.passages, trace.options.answer.mode, records or {})
    show_provenance(answer, trace)


LAB_STUDIES = "Laboratory and animal studies"


def show_evidence(text: str, numbers: dict[str, int], passages, mode: str, records: dict[str, str]) -> None:
    """One card a record; for a patient, studies in animals or cells come after the studies of people, folded."""
    groups = record_groups(passages)
    people, lab = split_preclinical(groups) if mode == "patient" else (groups, [])

    def card(group) -> None:
        pmid = group[0].pmid
        html = evidence_card(numbers.get(pmid), group, text, mode, records.get(pmid))
        st.markdown(html, unsafe_allow_html=True)

    st.markdown("**Evidence**")
    if not people:
        st.caption("None of the evidence found comes from studies of people.")
    for group in people:
        card(group)
    if lab:
        with st.expander(f"{LAB_STUDIES} ({len(lab)})", expanded=False):
            st.caption("Early research in animals or cells: it may not apply to people.")
            for group in lab:
                card(group)


def record_texts(pipeline, passages) -> dict[str, str]:
    """The whole abstracts of the records the evidence comes from (from the local store), by PMID."""
    texts = {}
    pages = [p.pmid for p in passages if p.is_patient_information]
    if pages and pipeline.patient is not None:  # a patient page's whole section
        texts.update({key: section.text for key, section in pipeline.patient.store.get(pages).items()})
    for pmid in dict.fromkeys(p.pmid for p in passages if not p.is_patient_information):
        try:
            article = pipeline.store.get(pmid)
        except Exception:  # noqa: BLE001 - a card without its whole abstract still shows the passage
            article = None
        if article is not None and article.abstract:
            texts[pmid] = article.abstract
    return texts


def show_provenance(answer, trace) -> None:
    with st.expander("How this answer was found"):
        for warning in trace.warnings:
            st.warning(warning)
        if answer.flags:
            st.markdown("**Checks after writing:** " + "; ".join(answer.flags))
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
            urgent_banner(message)
        elif message == screened.referral:
            st.warning(message, icon=REFERRAL_ICON)
        else:
            st.info(message, icon=":material/info:")


def run_question(question: str, history: list[str], options: dict):
    """Screen the question (before any model loads: bad input is refused at once, an urgent message shown at
    once), then ask the pipeline, showing its progress stage by stage; cached per question in the session."""
    settings = get_settings()
    safety = load_options(settings.cpqa_options_file).safety  # the deployment's, as the pipeline's
    screened = Screen.for_front_end(settings).check(question, safety, history)
    key = (question, tuple(history), options["mode"], options["years"], options["sources"])
    cache = st.session_state.setdefault("answers", {})
    if key in cache:
        return cache[key]
    first = st.empty()
    with first.container():
        show_first(screened)
    pipeline = load_pipeline()
    draft = st.empty()

    def progress(event) -> None:
        if event.stage == "screened" and event.screened is not None:  # a later screen (by meaning, a model) raised
            with first.container():
                show_first(event.screened)
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
    st.html(URGENT_STYLE)
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
                show_answer(turn["answer"], turn["trace"], turn.get("records"))

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
        records = record_texts(load_pipeline(), result.trace.passages)
        turns.append({"question": question, "answer": result.answer, "trace": result.trace, "records": records})
        show_answer(result.answer, result.trace, records)


main()
