"""The pipeline end to end over the shared sample (offline profile), with Claude played by the stand-in."""

from __future__ import annotations

import json
import re
import threading

import pytest

from cpqa.answer.answerer import ANSWER_TOOL
from cpqa.options import PipelineOptions
from cpqa.pipeline import Pipeline
from cpqa.safety.screening import InvalidQuestion
from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply, default_responder, request_text

QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"
STAGES = {"safety", "rewrite", "documents", "segmentation", "passage_retrieval", "rerank", "answer", "total"}
OUTSIDE = "99999999"
OPTIONS = PipelineOptions.of(max_documents=8)  # keeps each cold question to a few seconds


@pytest.fixture(scope="session")
def pipeline(sample_settings) -> Pipeline:
    return Pipeline(sample_settings, OPTIONS)


@pytest.fixture(scope="session")
def offline_result(pipeline):
    return pipeline.ask(QUESTION)


def test_answers_with_citations_that_exist_in_the_evidence(offline_result):
    answer, trace = offline_result.answer, offline_result.trace
    assert trace.passages, "the sample holds tamoxifen / breast cancer abstracts"
    assert answer.citations and not answer.abstained
    evidence = {p.pmid for p in trace.passages}
    assert set(answer.citations) <= evidence
    for pmid in re.findall(r"PMID:\s*(\d+)", answer.text):
        assert pmid in evidence
    assert answer.disclaimer and answer.written_by == "extractive"


def test_trace_holds_every_stage_and_serialises(offline_result):
    trace = offline_result.trace
    assert STAGES <= set(trace.stages)
    assert all(trace.stages[s].ms > 0 for s in STAGES)  # each stage ran and was timed
    assert all(trace.stages["total"].ms >= trace.stages[s].ms for s in STAGES)
    assert trace.stages["total"].ms >= sum(trace.stages[s].ms for s in ("rewrite", "documents", "answer"))
    assert trace.profile == "offline"
    assert {"rewriter", "answerer", "sentence_embedder", "passage_retriever", "evidence_scorer", "reranker"} <= set(
        trace.models
    )
    assert "BM25" in trace.models["reranker"].model
    assert trace.ladder and trace.candidates
    assert {c.pmid for c in trace.candidates} >= {p.pmid for p in trace.passages}
    assert all(p.score is not None and p.dense_score is not None for p in trace.passages)
    scores = [p.score for p in trace.passages]
    assert scores == sorted(scores, reverse=True) and len(scores) <= PipelineOptions().passages.top_n
    assert trace.options.answer.mode == "patient" and trace.options.passages.top_k == 20
    assert trace.stages["segmentation"].info["documents"] <= OPTIONS.passages.max_documents
    assert trace.rewrite.method == "rules" and trace.search_intent
    json.loads(trace.model_dump_json())


def test_options_are_recorded_and_validated(pipeline):
    result = pipeline.ask(QUESTION, mode="clinician", years=30, top_n=2)
    assert result.trace.options.answer.mode == "clinician" and result.trace.options.documents.years == 30
    assert len(result.trace.passages) <= 2
    assert result.answer.disclaimer != pipeline.ask(QUESTION).answer.disclaimer
    with pytest.raises(ValueError):
        pipeline.ask(QUESTION, matryoshka_dim=64)
    with pytest.raises(ValueError):
        pipeline.ask(QUESTION, top_k=0)
    with pytest.raises(InvalidQuestion):
        pipeline.ask("   ")


def test_urgent_message_comes_first_and_evidence_still_follows(pipeline):
    result = pipeline.ask(
        "I had chemotherapy last week and now I have a fever of 39 and chills. Is infection common after chemotherapy?"
    )
    assert result.answer.urgent
    assert result.trace.stages["safety"].info["urgent"] is True
    assert result.trace.passages and result.answer.text


def test_the_screening_result_reaches_the_progress_callback_before_any_retrieval(pipeline, monkeypatch):
    """The urgent message and the dosing referral are reported first, in the order a display needs them."""
    from cpqa.safety.screening import DOSING_REFERRAL, first_messages

    events: list[str] = []
    seen: list = []

    def on_progress(event) -> None:
        events.append(event.stage)
        if event.screened is not None:
            seen.append(event.screened)

    for name in ("semantic", "boolean", "bm25"):
        retriever = getattr(pipeline, name)
        original = retriever.search
        monkeypatch.setattr(
            retriever,
            "search",
            lambda *a, _original=original, _name=name, **k: (events.append(f"retrieval:{_name}"), _original(*a, **k))[
                1
            ],
        )
    pipeline.ask("I'm coughing up blood right now. Should I stop taking my tamoxifen dose?", progress=on_progress)
    assert events[:2] == ["safety", "screened"]
    assert events.index("screened") < min(i for i, e in enumerate(events) if e.startswith("retrieval:"))
    messages = first_messages(seen[0])
    assert messages[0] == seen[0].urgent and DOSING_REFERRAL in messages


def test_nothing_found_abstains(pipeline):
    result = pipeline.ask("qwxyzzy plorbtastic frumble?")
    assert result.answer.abstained and not result.answer.citations


def test_concurrent_questions_share_one_pipeline(pipeline, offline_result):
    questions = [QUESTION, "What are the side effects of cisplatin?", QUESTION]
    results: dict[int, object] = {}

    def ask(i: int) -> None:
        results[i] = pipeline.ask(questions[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(questions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    assert results[0].answer.citations == results[2].answer.citations == offline_result.answer.citations
    assert results[1].trace.question != results[0].trace.question


def _claude_settings(sample_home, url: str):
    from cpqa.config import get_settings

    return get_settings(
        cpqa_home=sample_home, cpqa_profile="offline", anthropic_api_key="sk-standin-key", anthropic_base_url=url
    )


def _answer_with(answer: dict):
    """Answer requests get ``answer`` (with ``{pmid}`` replaced by the first evidence PMID); others the default."""

    def respond(request: dict) -> Reply:
        if (request.get("tool_choice") or {}).get("name") != ANSWER_TOOL.name:
            return default_responder(request)
        first = re.findall(r'pmid="(\d+)"', request_text(request))[0]
        return Reply.tool(json.loads(json.dumps(answer).replace("{pmid}", first)))

    return respond


@pytest.fixture(scope="module")
def claude(sample_home):
    with AnthropicStandIn() as api:
        yield api, Pipeline(_claude_settings(sample_home, api.url), OPTIONS)


def test_the_trace_names_the_extractive_fallback_when_claude_cannot_be_reached(claude):
    api, pipe = claude
    api.default = lambda request: Reply.error(529)
    try:
        result = pipe.ask(QUESTION)
    finally:
        api.default = default_responder
    assert result.answer.written_by == "extractive"
    assert (
        result.trace.models["answerer"].model.startswith("extractive")
        and "Claude" in result.trace.models["answerer"].reason
    )
    assert pipe.models["answerer"].model != result.trace.models["answerer"].model  # the pipeline's own stays Claude
    # the rewrite fell back to the rules too, and the models table says so
    assert result.trace.rewrite.method == "rules"
    rewriter = result.trace.models["rewriter"]
    assert rewriter.model == "rule-based Boolean ladder" and "Claude could not be used" in rewriter.reason
    assert pipe.models["rewriter"].provider == "anthropic"


def test_citation_outside_the_evidence_is_removed_and_flagged(claude):
    api, pipe = claude
    api.default = _answer_with(
        {
            "reasoning": "r",
            "abstained": False,
            "citations": ["{pmid}", OUTSIDE],
            "answer": f"Tamoxifen lowers recurrence [PMID:{{pmid}}]. It cures all [PMID:{OUTSIDE}].",
        }
    )
    result = pipe.ask(QUESTION)
    answer = result.answer
    assert answer.written_by == "llm"
    assert OUTSIDE not in answer.citations and OUTSIDE not in answer.text
    assert f"removed_unknown_citation:{OUTSIDE}" in answer.flags
    assert answer.citations and set(answer.citations) <= {p.pmid for p in result.trace.passages}
    assert result.trace.models["answerer"].profile == "paper"
    assert "sk-standin-key" not in result.trace.model_dump_json()


def test_claude_streams_its_draft_through_progress_and_the_checked_answer_replaces_it(claude):
    api, pipe = claude
    api.default = _answer_with(
        {
            "reasoning": "r",
            "abstained": False,
            "citations": ["{pmid}"],
            "answer": f"Tamoxifen lowers recurrence [PMID:{{pmid}}]. It cures all [PMID:{OUTSIDE}].",
        }
    )
    events = []
    result = pipe.ask(QUESTION, progress=events.append)
    stages = [e.stage for e in events]
    drafts = [e.draft for e in events if e.stage == "drafting"]
    assert stages.index("screened") < stages.index("answer") < stages.index("drafting")
    assert drafts and OUTSIDE in drafts[-1]  # the draft as Claude wrote it ...
    assert OUTSIDE not in result.answer.text and result.answer.written_by == "llm"  # ... the checked answer
    assert pipe.ask(QUESTION).answer.text == result.answer.text  # no progress callback: no stream, same answer


def test_abstention_passes_through(claude):
    api, pipe = claude
    api.default = _answer_with(
        {"reasoning": "r", "abstained": True, "citations": [], "answer": "The evidence does not answer this question."}
    )
    answer = pipe.ask(QUESTION).answer
    assert answer.abstained and answer.citations == [] and answer.written_by == "llm"


def test_patient_and_clinician_prompts_differ(claude):
    api, pipe = claude
    api.default = _answer_with(
        {"reasoning": "r", "abstained": False, "citations": ["{pmid}"], "answer": "Yes [PMID:{pmid}]."}
    )
    systems = {}
    for mode in ("patient", "clinician"):
        before = len(api.requests)
        pipe.ask(QUESTION, mode=mode)
        answer_requests = [
            r for r in api.requests[before:] if (r.get("tool_choice") or {}).get("name") == ANSWER_TOOL.name
        ]
        systems[mode] = str(answer_requests[-1]["system"])
    assert systems["patient"] != systems["clinician"]
    assert "plain" in systems["patient"].lower() and "clinician" in systems["clinician"].lower()


def test_history_reaches_the_rewriter(pipeline):
    result = pipeline.ask("What about its side effects?", history=["Does tamoxifen help in breast cancer?"])
    assert result.trace.stages["safety"].info["history_turns"] == 1
    assert "tamoxifen" in result.trace.search_intent.lower()


@pytest.mark.parametrize(
    "question,absent",
    [
        ("Does tisagenlecleucel work for lymphoma?", "tisagenlecleucel"),  # a CAR-T therapy no vocabulary lists
        ("Is nivolumab effective in melanoma?", "nivolumab"),  # a drug no record of the sample names
    ],
)
def test_extractive_answer_abstains_when_a_key_concept_the_vocabulary_lacks_is_absent(pipeline, question, absent):
    result = pipeline.ask(question)
    assert result.answer.abstained and not result.answer.citations
    assert any(f"does not mention {absent}" in w for w in result.trace.warnings)


def test_key_concepts_are_specialist_words_rare_in_the_store_or_known_kinds(pipeline):
    from cpqa.answer.extractive import key_concepts

    concepts = pipeline.rewriter.rewrite("Does exercise help with fatigue during chemotherapy?").concepts
    key = {c.text for c in key_concepts(concepts, pipeline.record_share)}
    assert key == {"chemotherapy"}  # a treatment the vocabulary knows; "fatigue" is rare in the records, not in English
    concepts = pipeline.rewriter.rewrite("Is olaparib effective in ovarian cancer with BRCA mutations?").concepts
    key = {c.text for c in key_concepts(concepts, pipeline.record_share)}
    assert {"olaparib", "brca", "ovarian cancer"} <= key and "mutations" not in key and "effective" not in key
    # the word saying what is asked is not what the answer must be about ("does not mention tradename")
    concepts = pipeline.rewriter.rewrite("What is the tradename of tamoxifen?").concepts
    assert {c.text for c in key_concepts(concepts, pipeline.record_share)} == {"tamoxifen"}


def test_extractive_answer_abstains_when_the_evidence_never_names_the_treatment(pipeline):
    result = pipeline.ask("What are the side effects of pembrolizumab in lung cancer?")  # not in the sample
    assert result.answer.abstained and not result.answer.citations
    assert "pembrolizumab" in result.answer.text
    assert any("does not mention pembrolizumab" in w for w in result.trace.warnings)


def test_retrieve_finds_the_evidence_without_writing_an_answer(pipeline):
    found = pipeline.retrieve("My name is Ann Smith. Does tamoxifen reduce breast cancer recurrence?", top_n=3)
    assert found.trace.passages and len(found.trace.passages) <= 3
    assert "answer" not in found.trace.stages and {"safety", "rewrite", "documents"} <= set(found.trace.stages)
    assert "Ann" not in found.trace.model_dump_json() and found.screened.removed_phi == ["name"]


def test_a_question_is_screened_once_and_its_search_starts_one_way(pipeline):
    """A front end screens with the rules before any model loads; the pipeline takes that result and only adds the
    meaning check. ``search_documents`` (the REST and MCP search) is the start of ``ask`` and ``retrieve``."""
    from cpqa.safety.screening import check_question

    screened = check_question("someone is sitting on my chest and I'm sweating, what now?")
    assert not screened.by_meaning and screened.urgent is None  # the rules alone miss this one
    found = pipeline.search_documents(screened, years=50)
    assert found.trace.stages["safety"].info["screened_before"] and found.screened.urgent  # meaning completed it
    assert found.screened.by_meaning and found.trace.options.documents.years == 50
    asked = pipeline.search_documents(QUESTION)
    retrieved = pipeline.retrieve(QUESTION)
    assert asked.trace.candidates and not asked.trace.passages and retrieved.trace.passages
    assert [c.pmid for c in asked.trace.candidates] == [c.pmid for c in retrieved.trace.candidates]
    assert set(asked.trace.stages) >= {"safety", "rewrite", "documents"} and "segmentation" not in asked.trace.stages


def test_a_question_never_climbs_back_to_an_earlier_stage(pipeline, sample_settings, caplog):
    """Each stage reads what the stages before it returned (issue 37): following one question through the product
    (``cpqa bench structure``'s path), no step goes from a stage into an earlier one. Every log record made meanwhile
    passes through the log redactor every CLI command installs (``cpqa.safety.secrets``): logging is no step."""
    import logging

    from cpqa.evaluation.benchmarks.structure import question_path
    from cpqa.safety.secrets import install_log_redaction

    install_log_redaction(sample_settings)
    caplog.set_level(logging.DEBUG)  # the libraries the stages call log (bm25s builds an index per question)
    path = question_path(pipeline, QUESTION)
    assert path["climbs_back_up"] == 0, path
    assert path["rooms_entered"] >= 30  # the recording saw the whole path, every stage's rooms
