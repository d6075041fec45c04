"""``cpqa ask`` and ``cpqa bench latency`` through the real command line, over a small slice of the sample."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from cpqa.cli import app
from cpqa.cli.ask import number_citations
from cpqa.sources.jsonl import read_question_texts
from cpqa.types import Answer

WORDS = ("tamoxifen", "cisplatin")


@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    """A store with the sample's tamoxifen and cisplatin abstracts plus a few others (cold runs stay short)."""
    from cpqa.config import get_settings
    from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
    from cpqa.sources.store import Store
    from conftest import shared

    path = shared("corpus", "pubmed_sample.xml.gz")
    picked, others = [], []
    for article, raw in iter_pubmed_records(path):
        if any(w in article.abstract.lower() for w in WORDS):
            picked.append((article, raw))
        elif len(others) < 10:
            others.append((article, raw))
    home = tmp_path_factory.mktemp("small_home")
    with Store(get_settings(cpqa_home=home).store_path) as store:
        store.upsert(picked[:25] + others)
    return home


@pytest.fixture
def env(small_home, monkeypatch):
    monkeypatch.setenv("CPQA_HOME", str(small_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    return small_home


@pytest.mark.slow  # a cold pipeline (SEOS over every candidate) takes well over a few seconds
def test_ask_json_prints_answer_and_trace(env):
    result = CliRunner().invoke(app, ["ask", "Does tamoxifen reduce breast cancer recurrence?", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    answer, trace = payload["answer"], payload["trace"]
    assert {"text", "citations", "abstained", "flags", "disclaimer"} <= set(answer)
    assert {"profile", "models", "stages", "ladder", "candidates", "passages", "warnings"} <= set(trace)
    assert answer["citations"] and answer["disclaimer"]
    assert set(answer["citations"]) <= {p["pmid"] for p in trace["passages"]}
    assert all({"pmid", "text", "score"} <= set(p) for p in trace["passages"])
    assert all("ms" in stage for stage in trace["stages"].values())


@pytest.mark.slow  # a cold pipeline (SEOS over every candidate) takes well over a few seconds
def test_ask_readable_output_numbers_citations_and_links_pubmed(env):
    question = ["ask", "What side effects does cisplatin cause?", "--mode", "clinician"]
    result = CliRunner().invoke(app, [*question, "--evidence"])
    assert result.exit_code == 0, result.output
    assert "https://pubmed.ncbi.nlm.nih.gov/" in result.stdout
    assert "Evidence passages" in result.stdout and "Models (profile: offline)" in result.stdout
    assert "[1]" in result.stdout and "BM25" in result.stdout
    plain = CliRunner().invoke(app, question, env={"COLUMNS": "80"})  # what a person reads: no tables
    assert plain.exit_code == 0 and "Evidence passages" not in plain.stdout and "Models (" not in plain.stdout
    assert "(untitled)" not in plain.stdout and "Flag:" not in plain.stdout
    assert max(len(line) for line in plain.stdout.splitlines()) <= 80


@pytest.mark.slow  # a cold pipeline
def test_ask_streams_claude_and_prints_only_the_checked_answer(env, api, monkeypatch):
    from cpqa.testing.anthropic_standin import Reply

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-stream-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    default = api.default

    def respond(request):
        tool = (request.get("tool_choice") or {}).get("name")
        if tool == "query_ladder":
            return Reply.tool(
                {
                    "normalized": "tamoxifen breast cancer recurrence",
                    "intent": "treatment",
                    "search_intent": "Does tamoxifen reduce breast cancer recurrence?",
                    "concepts": [{"text": "tamoxifen", "role": "core"}],
                    "ladder": ["tamoxifen[tiab]"],
                }
            )
        if tool != "give_answer":
            return default(request)
        first = re.findall(r'pmid="(\d+)"', str(request["messages"]))[0]
        return Reply.tool(
            {
                "reasoning": "r",
                "abstained": False,
                "citations": [first],
                "answer": f"Tamoxifen lowers recurrence [PMID:{first}]. Stop it now [PMID:99999999].",
            }
        )

    api.default = respond
    result = CliRunner().invoke(app, ["ask", "Does tamoxifen reduce breast cancer recurrence?", "--evidence"])
    assert result.exit_code == 0, result.output
    answers = [r for r in api.requests if (r.get("tool_choice") or {}).get("name") == "give_answer"]
    assert answers and answers[-1]["stream"] is True
    assert "Tamoxifen lowers recurrence [1]" in result.stdout
    assert "Stop it now" not in result.stdout  # the draft was replaced by the checked answer
    assert "removed_unknown_citation:99999999" in result.stdout  # an internal flag: shown with --evidence only
    assert "sk-ant-cli-stream-test" not in result.output


def test_ask_on_an_empty_store_says_how_to_ingest(home):
    result = CliRunner().invoke(app, ["ask", "Does tamoxifen work?"])
    assert result.exit_code == 2
    assert "cpqa ingest pubmed" in result.output and "empty" in result.output


def test_ask_rejects_bad_input(env):
    runner = CliRunner()
    assert runner.invoke(app, ["ask", "x", "--mode", "doctor"]).exit_code == 2
    assert runner.invoke(app, ["ask", "x", "--source", "D9"]).exit_code == 2
    empty = runner.invoke(app, ["ask", "   "])
    assert empty.exit_code == 2 and "empty" in empty.output


def test_citations_are_numbered_as_every_front_end_numbers_them():
    answer = Answer(text="A [PMID:222]. B [PMID:111, PMID:222]. C [PMID:333].", citations=["111", "222", "444"])
    assert number_citations(answer) == "A [1]. B [2, 1]. C [3]."  # by first appearance, as the app numbers them


def test_read_question_texts(tmp_path):
    good = tmp_path / "q.jsonl"
    good.write_text('{"question": "a?", "id": 1}\n\n{"Question": "b?"}\n{"question": "c?"}\n')
    assert read_question_texts(good, None) == ["a?", "b?", "c?"]
    assert read_question_texts(good, 2) == ["a?", "b?"]
    assert read_question_texts(tmp_path, 1) == ["a?"]  # a folder: every .jsonl file in it
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "a?"}\n{"q": "b"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl line 2"):
        read_question_texts(bad, None)
    bad.write_text("not json\n")
    with pytest.raises(ValueError, match="bad.jsonl line 1"):
        read_question_texts(bad, None)


@pytest.mark.slow
def test_bench_latency_json_against_in_process_mirror(env, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "\n".join(
            json.dumps({"question": q})
            for q in (
                "Does tamoxifen reduce breast cancer recurrence?",
                "What side effects does cisplatin cause?",
                "Is this ignored by --limit?",
            )
        )
        + "\n"
    )
    result = CliRunner().invoke(
        app, ["bench", "latency", "--questions", str(questions), "--limit", "2", "--mirror", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["n"] == 2
    first, stored, naive = payload["first_sight"], payload["stored_passages"], payload["naive"]
    assert all({"p50_ms", "p95_ms"} <= set(run["end_to_end"]) for run in (first, stored, naive))
    assert {"documents", "segmentation", "passage_retrieval", "rerank", "answer"} <= set(first["stages"])
    # first sight meets the records for the first time; the second pass finds them all stored
    assert first["segmented_per_question"] > 0 and stored["segmented_per_question"] == 0
    assert stored["stages"]["segmentation"]["p95_ms"] < first["stages"]["segmentation"]["p95_ms"]
    assert set(payload["ratio_to_naive"]) == {
        "first_sight_p50",
        "first_sight_p95",
        "stored_passages_p50",
        "stored_passages_p95",
    }
    assert first["ncbi_requests_per_question"] >= 1  # esearch went to the mirror
    assert re.match(r"http://127\.0\.0\.1:\d+/", payload["eutils_url"])
    assert payload["runtime"]["passage_retriever"] == "onnx-int8"
    assert first["to_screening"]["p95_ms"] < first["end_to_end"]["p50_ms"]  # safety long before the answer


@pytest.mark.slow  # base-free: tiny models, but three passes in a child process
def test_bench_latency_measures_the_paper_profile_with_random_models(env, tmp_path):
    from cpqa.evaluation.benchmarks.paper_cost import paper_latency

    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "Does tamoxifen reduce breast cancer recurrence?"}) + "\n")
    payload = paper_latency([questions], None, tmp_path / "hub", None, size="tiny")
    assert "random" in payload["weights"]  # the profile is "mixed": no language model here, only the paper's encoders
    assert payload["models"]["reranker"] == "ncbi/MedCPT-Cross-Encoder"
    assert payload["models"]["passage_retriever"] == "NeuML/pubmedbert-base-embeddings-matryoshka"
    assert payload["first_sight"]["segmented_per_question"] > 0
    assert payload["first_sight"]["stages"]["rerank"]["p50_ms"] > 0


@pytest.mark.slow  # one cold pipeline for the file
def test_ask_questions_answers_a_file_in_one_process_as_json_lines(env, tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"question": "Does tamoxifen reduce breast cancer recurrence?"}\n'
        '{"question": "?!?"}\n'
        '{"question": "My name is Jane Roe. What side effects does cisplatin cause?"}\n'
    )
    result = CliRunner().invoke(app, ["ask", "--questions", str(questions)])
    assert result.exit_code == 1  # one question could not be asked ...
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [line["index"] for line in lines] == [0, 1, 2]  # ... and nothing was dropped
    assert "no letters" in lines[1]["error"]
    assert lines[0]["answer"]["citations"] and lines[2]["trace"]["passages"]
    assert "Jane" not in result.stdout  # personal details never reach the output


def test_ask_needs_one_question_or_a_file(env, tmp_path):
    assert CliRunner().invoke(app, ["ask"]).exit_code == 2
    assert CliRunner().invoke(app, ["ask", "x?", "--questions", str(tmp_path)]).exit_code == 2


def test_a_person_reads_the_urgent_message_the_answer_and_titled_references_at_80_columns():
    """The terminal's shape, pinned without a model: at 80 columns nothing is wider than the screen, the urgent
    message comes first, the quoted answer is announced once, every reference has a readable heading (an untitled
    record by its journal, year and first words) and a whole link; the tables and internal flags wait for --evidence."""
    from rich.console import Console

    from cpqa.answer.messages import DISCLAIMERS, EXTRACTIVE_LABEL
    from cpqa.cli.ask import render
    from cpqa.trace import RetrievalTrace
    from cpqa.types import Passage

    passages = [
        Passage(node_id="a", pmid="17008699", text="Tamoxifen reduced recurrence by a third.", title="Tamoxifen trial"),
        Passage(
            node_id="b",
            pmid="22222222",
            text="In 412 women given tamoxifen for five years, hot flashes were the commonest side effect reported.",
            journal="Breast Cancer Res Treat",
            year=2006,
        ),
    ]
    answer = Answer(
        text=f'{EXTRACTIVE_LABEL}\n\n- "Tamoxifen reduced recurrence." [PMID:17008699]\n- "Flashes." [PMID:22222222]',
        citations=["17008699", "22222222"],
        written_by="extractive",
        urgent="If you have a fever over 38 C during chemotherapy, call your 24-hour oncology line now.",
        flags=["uncited_sentences:1"],
        disclaimer=DISCLAIMERS["patient"],
    )
    trace = RetrievalTrace(passages=passages)
    console = Console(width=80, record=True, force_terminal=False)
    render(answer, trace, console)
    text = console.export_text()
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert text.index("fever over 38") < text.index("Tamoxifen reduced") < text.index("References")
    assert "Tamoxifen trial" in text and "Breast Cancer Res Treat, 2006: In 412 women given tamoxifen" in text
    assert any(line.strip() == "https://pubmed.ncbi.nlm.nih.gov/22222222/" for line in lines)  # whole, on its own
    assert text.count("not written by a language model") == 1
    assert "Flag:" not in text and "Evidence passages" not in text and "(untitled)" not in text
    console = Console(width=80, record=True, force_terminal=False)
    render(answer, trace, console, evidence=True)
    detailed = console.export_text()
    assert "Evidence passages" in detailed and "Flag: uncited_sentences:1" in detailed


def test_an_untitled_record_is_named_by_its_journal_year_and_first_words():
    from cpqa.references import record_heading

    assert record_heading("A trial", "text", "J", 2001) == "A trial"
    assert record_heading("", "BACKGROUND: Tamoxifen was given to 40 women.", "Lancet", 2006) == (
        "Lancet, 2006: Tamoxifen was given to 40 women."
    )
    assert record_heading(None, " ".join(["word"] * 30)).endswith("word...")
    assert record_heading("", "", None, None) == "A PubMed record"


def test_an_urgent_sign_the_models_triage_raises_is_printed_before_the_answer(env, api, monkeypatch):
    """The language model's triage pass runs beside the search; what it raises is printed as it arrives, above the
    answer, once (the stand-in plays a model that reads indirect suicidal intent the rules do not)."""
    from cpqa.testing.anthropic_standin import Reply

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-triage-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    api.script(
        Reply.tool(
            {
                "action": "crisis",
                "category": "mood",
                "sign": "wishing not to wake up",
                "referral": "none",
                "language": "English",
                "english": "",
                "reason": "indirect suicidal intent",
            },
            name="triage_message",
        )
    )
    question = "my husband on chemo keeps saying it would be easier if he didn't wake up, what does chemo do?"
    result = CliRunner().invoke(app, ["ask", question])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.count("If you are thinking about suicide") == 1
    answer_starts = out.index("References") if "References" in out else out.index("This is general information")
    assert out.index("If you are thinking about suicide") < answer_starts


def _evidence_example():
    from cpqa.answer.messages import DISCLAIMERS, EXTRACTIVE_LABEL
    from cpqa.trace import RetrievalTrace
    from cpqa.types import ComponentChoice, Passage

    passages = [
        Passage(
            node_id="a",
            pmid="18041059",
            text="BACKGROUND; Despite the advantages from using aromatase inhibitors (AIs) compared with tamoxifen for "
            "early breast cancer, an unexpectedly elevated number of deaths without recurrence was observed. "
            + "Thromboembolic events were significantly more frequent in the tamoxifen arm. "
            * 6,
            title="Toxic effects of aromatase inhibitors versus tamoxifen: a meta-analysis",
            journal="J Natl Cancer Inst",
            year=2008,
            section="BACKGROUND",
            category="E3",
            evidence_type="meta-analysis",
            score=0.8123,
        ),
        Passage(node_id="b", pmid="19299238", text="Hot flashes were common.", year=2009, category="E1", score=0.5),
    ]
    models = {
        "answerer": ComponentChoice(
            component="answerer",
            model="extractive evidence answer (embedding similarity)",
            profile="offline",
            reason="no language model: ANTHROPIC_API_KEY is not set and CPQA_LLM_BASE_URL is not set",
        ),
        "reranker": ComponentChoice(
            component="reranker", model="BM25 + dense fusion (no cross-encoder weights offline)", profile="offline"
        ),
    }
    answer = Answer(
        text=f'{EXTRACTIVE_LABEL}\n\n- "Thromboembolic events were significantly more frequent." [PMID:18041059]',
        citations=["18041059"],
        flags=["uncited_sentences:1"],
        disclaimer=DISCLAIMERS["patient"],
    )
    return answer, RetrievalTrace(passages=passages, models=models, profile="offline")


def test_the_evidence_view_reads_at_80_columns_as_stacked_records():
    """``--evidence`` at 80 columns, pinned as a snapshot (tests/data/snapshots/ask_evidence_80.txt): one record per
    passage and per model, a heading line and its fields indented; no table broken into narrow columns, no word cut
    ("BACKGR" / "OUND", "ANTHROPIC_API_KE" / "Y")."""
    from pathlib import Path

    from rich.console import Console

    from cpqa.cli.ask import render

    answer, trace = _evidence_example()
    console = Console(width=80, record=True, force_terminal=False)
    render(answer, trace, console, evidence=True)
    text = "\n".join(line.rstrip() for line in console.export_text().splitlines())
    snapshot = Path(__file__).parent / "data" / "snapshots" / "ask_evidence_80.txt"
    assert max(len(line) for line in text.splitlines()) <= 80
    for word in ("BACKGROUND", "ANTHROPIC_API_KEY", "meta-analysis", "18041059"):
        assert word in text
    assert "1. PMID 18041059 · cited as [1]\n    Meta-analysis · 2008 · abstract (D1)" in text
    assert text == snapshot.read_text(encoding="utf-8").rstrip("\n"), text
