"""The embedder x reranker pairing experiment: pair sources, scoring, generation, unavailable models."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import shared
from cpqa.models.encoders import MINILM, ModelUnavailable
from cpqa.evaluation.data.pair_sources import bioasq_pairs, generate_pairs, normalized_question, question_problem
from cpqa.evaluation.evaluations.pairs import (
    BM25,
    FUSION,
    NO_RERANK,
    Pair,
    PairSet,
    load_pairs,
    passage_id,
    run_matrix,
    save_pairs,
)
from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply

TOY = [
    (
        "q1",
        "What drug blocks estrogen receptors in breast cancer?",
        "Tamoxifen blocks estrogen receptors in breast cancer cells and lowers recurrence.",
    ),
    (
        "q2",
        "Which virus causes most cervical cancer?",
        "Persistent infection with human papillomavirus causes most cervical cancers.",
    ),
    ("q3", "Does smoking cause lung cancer?", "Cigarette smoking is the leading cause of lung cancer worldwide."),
]
DISTRACTORS = [
    "Aspirin reduces fever and inflammation.",
    "Insulin lowers blood glucose in diabetes.",
    "Statins lower LDL cholesterol.",
    "Vaccination prevents measles outbreaks.",
]


def toy_pairs() -> list[Pair]:
    pairs = [Pair(query_id=q, query=text, passage_id=passage_id(p, "toy"), passage=p) for q, text, p in TOY]
    # Distractors belong to a query of their own so they join the pool.
    pairs += [
        Pair(query_id="qx", query="What treats diabetes?", passage_id=passage_id(d, "toy"), passage=d)
        for d in DISTRACTORS
    ]
    return pairs


def test_pair_set_pools_and_limits():
    ps = PairSet(toy_pairs())
    assert len(ps.queries) == 4 and len(ps.passages) == 7 and len(ps.gold["qx"]) == 4
    small = ps.limit(2)
    assert list(small.queries) == ["q1", "q2"] and len(small.passages) == 2
    with pytest.raises(ValueError):
        PairSet([])


def test_bm25_and_minilm_matrix_on_toy_pairs(settings):
    ps = PairSet(toy_pairs())
    cells = run_matrix(ps, settings, [BM25, "minilm"], [NO_RERANK, FUSION], top_k=5)
    assert [(c.embedder, c.reranker) for c in cells] == [
        (BM25, NO_RERANK),
        (BM25, FUSION),
        (MINILM, NO_RERANK),
        (MINILM, FUSION),
    ]
    for c in cells:
        assert c.available and c.queries == 4 and c.passages == 7
        assert c.hits_at_5 == 1.0  # 7 passages, top 5: each toy query finds its passage
        assert 0.75 <= c.mrr_at_5 <= 1.0 and c.query_ms > 0 and c.index_s >= 0


def test_hits_and_mrr_hand_computed(settings, monkeypatch):
    """A fixed first stage: the gold passage at rank 2 for q1, rank 6 for q2 (outside the top 5)."""
    from cpqa.evaluation.evaluations import pairs as mod

    ps = PairSet(
        [
            Pair(query_id="q1", query="a", passage_id="p2", passage="two"),
            Pair(query_id="q2", query="b", passage_id="p6", passage="six"),
        ]
        + [Pair(query_id="filler", query="c", passage_id=f"p{i}", passage=f"text {i}") for i in (1, 3, 4, 5, 7)]
    )

    class Fixed:
        index_s = 0.0
        ids = [f"p{i}" for i in range(1, 8)]

        def __init__(self, *args):
            pass

        def search(self, query, k):
            return [(f"p{i}", 1.0 / i) for i in range(1, 8)][:k]

    monkeypatch.setattr(mod, "FirstStage", Fixed)
    cell = run_matrix(ps, settings, [BM25], [NO_RERANK], top_k=7)[0]
    # q1: hit, RR 1/2; q2: miss (rank 6), RR 0; filler: gold p1,p3,p4,p5,p7 -> hit, RR 1. Means over 3 queries.
    assert cell.hits_at_5 == pytest.approx(2 / 3, abs=1e-4) and cell.mrr_at_5 == pytest.approx(
        (0.5 + 0 + 1) / 3, abs=1e-4
    )


def test_unavailable_models_are_reported_with_the_reason(settings):
    ps = PairSet(toy_pairs())
    cells = run_matrix(
        ps, settings, [BM25, "BAAI/bge-large-en-v1.5"], [NO_RERANK, "ncbi/MedCPT-Cross-Encoder"], top_k=5
    )
    by = {(c.embedder, c.reranker): c for c in cells}
    assert len(cells) == 4
    assert by[(BM25, NO_RERANK)].available
    missing = [c for c in cells if not c.available]
    assert len(missing) == 3 and all("unreachable" in c.reason or "cache" in c.reason for c in missing)
    assert by[("BAAI/bge-large-en-v1.5", NO_RERANK)].hits_at_5 is None


def test_load_embedder_raises_model_unavailable(settings):
    from cpqa.evaluation.evaluations.pairs import load_embedder

    with pytest.raises(ModelUnavailable, match="WhereIsAI/UAE-Large-V1"):
        load_embedder("WhereIsAI/UAE-Large-V1", settings)


def test_bioasq_snippet_pairs():
    raw = shared("mirage", "rawdata", "bioasq")
    dev = shared("bioasq", "dev_questions.jsonl")
    pairs = bioasq_pairs(raw, dev)
    ids = {json.loads(line)["id"] for line in dev.read_text().splitlines()}
    queries = {p.query_id for p in pairs}
    assert queries <= ids and len(queries) == 2310
    assert all(p.source == "bioasq" and p.pmid and p.pmid.isdigit() for p in pairs)
    by_q = {}
    for p in pairs:
        by_q.setdefault(p.query_id, []).append(p)
    losartan = by_q["6402c910201352f04a00000c"]  # "Can losartan reduce brain atrophy in Alzheimer's disease?"
    assert any("losartan" in p.passage.lower() for p in losartan)
    assert all(len({p.passage_id for p in ps}) == len(ps) for ps in by_q.values())  # no duplicate gold


def test_save_and_load_pairs(tmp_path):
    path = tmp_path / "p.jsonl"
    save_pairs(toy_pairs(), path)
    assert load_pairs(path) == toy_pairs()
    path.write_text('{"query": "no id"}\n')
    with pytest.raises(ValueError, match="p.jsonl:1"):
        load_pairs(path)


def test_question_checks():
    assert question_problem("Can tamoxifen cause hot flashes in women?", "passage") is None
    assert question_problem("tamoxifen", "passage")
    assert question_problem("What does the passage say about tamoxifen?", "x")
    assert normalized_question("Can Tamoxifen cause hot flashes?") == normalized_question(
        "can tamoxifen cause hot flashes"
    )


PASSAGES = [
    (
        f"store:{i:04d}",
        str(1000 + i),
        f"Passage number {i} about tamoxifen and hot flashes in women "
        f"treated for breast cancer, with outcomes measured over five years of follow up in trial {i}.",
    )
    for i in range(6)
]


@pytest.fixture
def claude(settings, monkeypatch):
    with AnthropicStandIn() as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-dummy-standin-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("CPQA_LLM_MAX_RETRIES", "0")
        from cpqa.config import get_settings
        from cpqa.models.llm import Claude

        s = get_settings()
        yield api, s, Claude(s)


def test_generation_against_the_standin_with_malformed_output(claude):
    api, s, llm = claude
    api.script(
        Reply.tool({"question": "Do hot flashes from tamoxifen get better over time?", "asker": "patient"}),
        Reply.tool({"asker": "patient"}),  # missing question: schema violation
        Reply.text("Here is a question: what about tamoxifen?"),  # no tool call at all
        Reply.tool({"question": "do hot flashes from TAMOXIFEN get better over time", "asker": "patient"}),  # no '?'
        Reply.tool({"question": "Do hot flashes from tamoxifen get better over time?", "asker": "clinician"}),  # dup
        Reply.tool({"question": "How common are hot flashes with adjuvant tamoxifen?", "asker": "clinician"}),
    )
    pairs, report = generate_pairs(s, 5, llm, passages=PASSAGES)
    assert [p.query for p in pairs] == [
        "Do hot flashes from tamoxifen get better over time?",
        "How common are hot flashes with adjuvant tamoxifen?",
    ]
    assert report.written == 2 and report.rejected == 3 and report.duplicates == 1
    assert pairs[1].source == "synthetic:clinician" and pairs[0].passage_id == "store:0000"
    assert len(api.requests) == 6 and api.requests[0]["tool_choice"]["name"] == "write_question"
    assert "sk-dummy" not in report.model_dump_json()
    # Reuse: passages already in the saved set are not asked again.
    more, _ = generate_pairs(s, 5, llm, passages=PASSAGES, existing=pairs)
    assert all(p.passage_id not in {q.passage_id for q in pairs} for p in more)


def test_cli_builds_bioasq_pairs_and_runs_bm25(home, tmp_path):
    from cpqa.cli import app

    raw, dev = shared("mirage", "rawdata", "bioasq"), shared("bioasq", "dev_questions.jsonl")
    runner = CliRunner()
    built = runner.invoke(app, ["eval", "pairs", "--from-bioasq", str(raw), "--dev-questions", str(dev), "--json"])
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout)["queries"] == 2310
    res = runner.invoke(
        app,
        ["eval", "pairs", "--pairs", "bioasq", "--limit", "50", "--embedders", "none", "--rerankers", "none", "--json"],
    )
    assert res.exit_code == 0, res.output
    cell = json.loads(res.stdout)["cells"][0]
    assert cell["available"] and 0.0 < cell["hits_at_5"] <= 1.0 and cell["queries"] == 50
    gen = runner.invoke(app, ["eval", "pairs", "--generate", "3", "--from-store"])
    assert gen.exit_code == 2 and "ANTHROPIC_API_KEY" in gen.output


def test_cli_generates_pairs_from_store_passages(sample_home, tmp_path, monkeypatch):
    """``--generate N --from-store``: SEOS passages of the sample store, one Claude question each, saved for reuse."""
    import shutil

    from cpqa.cli import app

    home = tmp_path / "home"
    home.mkdir()
    for part in sample_home.glob("store.sqlite*"):
        shutil.copy(part, home / part.name)
    questions = iter(
        [
            "What helps with fatigue during chemotherapy?",
            "Is this tumor marker useful for screening?",
            "How often does this cancer come back after surgery?",
        ]
    )
    with AnthropicStandIn(default=lambda request: Reply.tool({"question": next(questions), "asker": "patient"})) as api:
        for name, value in {
            "CPQA_HOME": str(home),
            "CPQA_PROFILE": "offline",
            "ANTHROPIC_API_KEY": "sk-dummy-standin",
            "ANTHROPIC_BASE_URL": api.url,
        }.items():
            monkeypatch.setenv(name, value)
        result = CliRunner().invoke(app, ["eval", "pairs", "--generate", "2", "--from-store", "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["written"] == 2 and len(api.requests) == 2
        saved = load_pairs(home / "eval" / "pairs" / "synthetic.jsonl")
        assert [p.query for p in saved] == [
            "What helps with fatigue during chemotherapy?",
            "Is this tumor marker useful for screening?",
        ]
        assert all(p.pmid and p.source == "synthetic:patient" and len(p.passage.split()) >= 25 for p in saved)
        assert f"PMID {saved[0].pmid}" in api.requests[0]["messages"][0]["content"]
