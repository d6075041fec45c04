"""CMMQA: the cancer filter, metrics, answer parsing, shuffling, caching/resume and the Claude path."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from conftest import shared
from cpqa.evaluation.stats.classification import average, macro_prf, score
from cpqa.evaluation.evaluations.cmmqa import evaluate, hard_negatives, load_predictions, save_run, select
from cpqa.evaluation.data.cmmqa_data import MCQuestion, cmmqa_path, load_cmmqa
from cpqa.evaluation.evaluations.multiple_choice import parse_answer_letter
from cpqa.evaluation.stats.pricing import estimate_cost
from cpqa.evaluation.stats.shuffle import Permutation, majority, permutations
from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply, request_text


# ---------------------------------------------------------------- the filter
@pytest.fixture(scope="module")
def cmmqa_build(tmp_path_factory):
    from cpqa.config import get_settings
    from ingestion.cmmqa import build_cmmqa

    bench, mesh = shared("mirage", "benchmark.json"), shared("mesh")
    s = get_settings(cpqa_home=tmp_path_factory.mktemp("cmmqa_home"), cpqa_profile="offline")
    counts = build_cmmqa(bench, mesh, s)
    return counts, {q.key: q for q in load_cmmqa(s)}


def test_filter_counts_are_stable(cmmqa_build):
    counts, _ = cmmqa_build
    assert counts.total == {"mmlu": 1089, "medqa": 1273, "medmcqa": 4183, "pubmedqa": 500, "bioasq": 618}
    assert counts.kept == {"mmlu": 45, "medqa": 171, "medmcqa": 275, "pubmedqa": 65, "bioasq": 95}


def test_filter_spot_checks(cmmqa_build):
    _, kept = cmmqa_build
    bench = json.loads(shared("mirage", "benchmark.json").read_text())
    # Non-cancer questions are dropped: the first MedQA question (a tendon cut in carpal tunnel surgery),
    # the first BioASQ one (losartan and brain atrophy in Alzheimer's disease).
    assert "medqa:0000" not in kept and "carpal tunnel" in bench["medqa"]["0000"]["question"]
    assert "bioasq:6402c910201352f04a00000c" not in kept
    # Every kept question names its term, and the term's words are in the question or options.
    for q in kept.values():
        text = " ".join([q.question, *q.options.values()])
        assert q.matched_text and re.search(re.escape(q.matched_text), text, re.I)
    breast = [q for q in kept.values() if q.matched_text.lower() == "breast cancer"]
    assert breast and all(q.matched_term == "Breast Neoplasms" for q in breast)


def test_matcher_word_boundaries_plurals_and_acronyms():
    from cpqa.rewrite.vocabulary import Term
    from ingestion.cmmqa import CancerMatcher

    m = CancerMatcher(
        [
            Term(name="Breast Neoplasms", synonyms=["breast cancer"]),
            Term(name="Carcinoma"),
            Term(name="acute lymphoblastic leukemia", synonyms=["ALL"]),
            Term(name="chronic myeloid leukemia", synonyms=["CML"]),
            Term(name="Nevus"),
        ]
    )
    assert m.match("Risk of BREAST CANCERS in carriers")[0] == "Breast Neoplasms"
    assert m.match("breast neoplasm")[0] == "Breast Neoplasms"
    assert m.match("multiple carcinomata of the skin")[0] == "Carcinoma"
    assert m.match("nevi on the back")[0] == "Nevus"
    assert m.match("adenocarcinoma of the colon") is None  # no match inside a word
    assert m.match("Features are ALL EXCEPT") is None  # "ALL" is left out
    assert m.match("imatinib for CML") == ("chronic myeloid leukemia", "CML")
    assert m.match("the cml level") is None  # acronyms are case-sensitive


# ---------------------------------------------------------------- metrics
def test_metrics_against_hand_computed_values():
    gold = ["A", "A", "B", "B", "C"]
    pred = ["A", "B", "B", "B", None]
    # A: tp 1, predicted 1, gold 2 -> P 1, R .5, F1 2/3;  B: tp 2, predicted 3, gold 2 -> P 2/3, R 1, F1 .8;
    # C: tp 0, predicted 0, gold 1 -> 0, 0, 0.  Macro: P 5/9, R 1/2, F1 (2/3 + .8)/3.
    p, r, f1 = macro_prf(gold, pred)
    assert p == pytest.approx(5 / 9) and r == pytest.approx(0.5) and f1 == pytest.approx((2 / 3 + 0.8) / 3)
    s = score(gold, pred)
    assert s.n == 5 and s.accuracy == pytest.approx(0.6)
    # A predicted label outside the gold set counts as a class: precision 0, recall 0.
    assert macro_prf(["A", "A"], ["A", "D"]) == pytest.approx((0.5, 0.25, 1 / 3))
    avg = average([score(["A"], ["A"]), score(["A", "B"], ["B", "B"]), score([], [])])
    assert avg.n == 3 and avg.accuracy == pytest.approx(0.75)
    with pytest.raises(ValueError):
        score(["A"], [])


def test_cost_uses_the_price_table():
    cost = estimate_cost("claude-sonnet-4-5-20250929", 1_000_000, 100_000)
    assert cost.usd == pytest.approx(3.0 + 1.5)
    assert estimate_cost("some-other-model", 10, 10).usd is None


# ---------------------------------------------------------------- answer parsing
OPTIONS = {"A": "Tamoxifen", "B": "Letrozole", "C": "Surgery", "D": "Radiation"}


@pytest.mark.parametrize(
    "text, letter",
    [
        ("Answer: (B)", "B"),
        ("the correct option is c.", "C"),
        ("**D**", "D"),
        ('{"answer": "C", "reason": "..."}', "C"),
        ('```json\n{"answer_choice": "a"}\n```', "A"),
        ("Option D is tempting, but A fits best.\nAnswer: A", "A"),
        ("The answer is a rare choice here; final answer: D", "D"),
        ("C) Surgery", "C"),
        ("The final answer is $\\boxed{B}$", "B"),
        ("Letrozole", "B"),
        ("I would choose **(C) Surgery** for this patient.", "C"),
        ("none of these look right", None),
        ("Answer: E", None),  # not an option
        ("", None),
    ],
)
def test_parse_answer_letter(text, letter):
    assert parse_answer_letter(text, OPTIONS) == letter


def test_parse_yes_no_maybe_by_option_text():
    yn = {"A": "yes", "B": "no", "C": "maybe"}
    assert parse_answer_letter("Based on the trials the effect is uncertain.\nFinal answer: maybe.", yn) == "C"
    assert parse_answer_letter("Answer: no", yn) == "B"
    assert parse_answer_letter("yes", yn) == "A"
    # Words of an option inside a sentence are not a choice.
    assert parse_answer_letter("The scorer found no evidence supporting any option.", yn) is None


# ---------------------------------------------------------------- shuffling
def test_shuffle_maps_back_to_original_letters():
    perms = permutations(["A", "B", "C", "D"], 4, seed="q1")
    assert [p.shown for p in perms][0] == ["A", "B", "C", "D"] and len({tuple(p.shown) for p in perms}) == 4
    for perm in perms:
        shown = perm.options(OPTIONS)
        displayed = next(k for k, v in shown.items() if v == "Surgery")
        assert perm.to_original(displayed) == "C"
    p = Permutation(["A", "B", "C"], ["C", "A", "B"])
    assert p.options({"A": "x", "B": "y", "C": "z"}) == {"A": "z", "B": "x", "C": "y"}
    assert p.to_original("A") == "C" and p.to_original(None) is None
    assert majority(["B", None, "A", "A", "B"]) == "B"  # tie: first chosen wins
    assert majority([None, None]) is None
    assert [q.shown for q in permutations(["A", "B"], 3, seed="x")][:2] == [["A", "B"], ["B", "A"]]


# ---------------------------------------------------------------- harness
QUESTIONS = [
    MCQuestion(
        dataset=d,
        qid=f"{d}-{i}",
        question=f"Which drug treats cancer case {d} {i}?",
        options={"A": "wrong one", "B": "right one", "C": "wrong two", "D": "wrong three"}
        if d not in ("pubmedqa", "bioasq")
        else {"A": "right one", "B": "wrong one"},
        answer="B" if d not in ("pubmedqa", "bioasq") else "A",
        matched_term="Neoplasms",
    )
    for d in ("mmlu", "medqa", "medmcqa", "pubmedqa", "bioasq")
    for i in range(3)
]


def _write_cmmqa(settings, questions=QUESTIONS):
    path = cmmqa_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(q.model_dump_json() + "\n" for q in questions))


def knows_the_answer(request):
    """Reasons a little, then names the displayed letter of the option reading "right one"."""
    text = request_text(request)
    letter = re.search(r"^([A-D])\. right one$", text, re.M).group(1)
    return Reply.text(f"Let me think step by step. The other options do not fit.\n\n**Answer: ({letter})**")


@pytest.fixture
def claude_env(settings, monkeypatch):
    with AnthropicStandIn(default=knows_the_answer) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-dummy-standin-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("CPQA_LLM_MAX_RETRIES", "0")
        from cpqa.config import get_settings

        s = get_settings()
        _write_cmmqa(s)
        yield api, s


def test_baseline1_through_the_anthropic_standin(claude_env):
    api, s = claude_env
    report, results = evaluate(s, "baseline1", load_cmmqa(s), shuffle=3, workers=2)
    assert report.answerer == "claude:" + s.cpqa_llm_model
    assert report.average.accuracy == 1.0 and report.answered == 15 and report.errors == 0
    assert len(api.requests) == 45  # 3 orderings per question
    assert all(r.votes == [r.gold] * 3 for r in results)
    assert report.cost.calls == 45 and report.cost.input_tokens > 0 and report.cost.usd > 0
    assert "sk-dummy" not in report.model_dump_json()
    first = api.requests[0]
    assert "Answer: X" in first["system"] and "Documents:" not in request_text(first)


def test_resume_after_interruption(claude_env):
    api, s = claude_env
    qs = load_cmmqa(s)
    # The API fails from the 6th call on: 5 questions are answered and cached, 10 fail and are not.
    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        return knows_the_answer(request) if calls["n"] <= 5 else Reply.error(500)

    api.default = flaky
    report, _ = evaluate(s, "baseline1", qs, workers=1)
    assert report.answered == 5 and report.errors == 10 and "HTTP 500" in report.error_examples[0]
    api.default = knows_the_answer
    before = len(api.requests)
    report, _ = evaluate(s, "baseline1", qs, workers=2)
    assert len(api.requests) - before == 10  # only the failed questions were asked again
    assert report.from_cache == 5 and report.answered == 15 and report.average.accuracy == 1.0
    # A changed configuration (shuffling) is a different cache key.
    report, _ = evaluate(s, "baseline1", qs[:2], shuffle=2)
    assert report.from_cache == 0


def test_hard_negatives_from_saved_runs(settings, tmp_path):
    from cpqa.evaluation.evaluations.cmmqa import EvalConfig, QuestionResult, score_results

    def run(method, wrong):
        results = [
            QuestionResult(
                key=f"{method}|{q.key}|x",
                config="x",
                dataset=q.dataset,
                qid=q.qid,
                gold=q.answer,
                predicted=("C" if q.key in wrong else q.answer),
            )
            for q in QUESTIONS
        ]
        report = score_results(method, "test", EvalConfig(method=method, answerer="test"), results)
        return load_predictions(save_run(settings, report, results))

    one = run("baseline1", {"mmlu:mmlu-0", "medqa:medqa-1", "bioasq:bioasq-2"})
    two = run("baseline2", {"mmlu:mmlu-0", "bioasq:bioasq-2", "pubmedqa:pubmedqa-0"})
    assert hard_negatives([one, two]) == {"mmlu:mmlu-0", "bioasq:bioasq-2"}


def test_select_round_robin():
    picked = select(QUESTIONS, 7)
    assert [q.dataset for q in picked] == ["mmlu", "medqa", "medmcqa", "pubmedqa", "bioasq", "mmlu", "medqa"]


def test_cli_says_which_command_builds_cmmqa(home):
    from cpqa.cli import app

    result = CliRunner().invoke(app, ["eval", "cmmqa", "--method", "baseline1", "--json"])
    assert result.exit_code == 2 and "cpqa ingest cmmqa" in result.output


def test_cli_negatives_end_to_end(claude_env):
    from cpqa.cli import app

    api, s = claude_env
    runner = CliRunner()
    ok = runner.invoke(app, ["eval", "cmmqa", "--method", "baseline1", "--json"])
    assert ok.exit_code == 0, ok.output
    payload = json.loads(ok.stdout)
    assert set(payload["datasets"]) == {"mmlu", "medqa", "medmcqa", "pubmedqa", "bioasq"}
    assert payload["method"] == "baseline1" and payload["average"]["accuracy"] == 1.0
    # Nothing was wrong, so there is no negative subset: a clear error.
    neg = runner.invoke(app, ["eval", "cmmqa", "--method", "baseline1", "--negatives-from", "baseline1"])
    assert neg.exit_code == 2 and "no question" in neg.output
    missing = runner.invoke(app, ["eval", "cmmqa", "--negatives-from", "baseline2"])
    assert missing.exit_code == 2 and "cpqa eval cmmqa --method baseline2" in missing.output


def test_offline_answerer_scores_options_against_evidence(settings):
    """No key: the answerer's retrieval-only baseline picks the option the evidence supports."""
    from cpqa.types import Passage

    q = MCQuestion(
        dataset="medqa",
        qid="x1",
        question="Which drug is a selective estrogen receptor modulator used for breast cancer?",
        options={"A": "Imatinib", "B": "Tamoxifen", "C": "Cisplatin", "D": "Rituximab"},
        answer="B",
    )
    evidence = [
        Passage(
            node_id="n1",
            pmid="1",
            text="Tamoxifen is a selective estrogen receptor modulator used to "
            "treat estrogen receptor positive breast cancer.",
        )
    ]
    report, results = evaluate(settings, "baseline2", [q], evidence=lambda question: evidence)
    assert report.answerer.startswith("offline evidence-similarity") and results[0].predicted == "B"
    assert results[0].evidence == ["1"] and report.cost is None
    # Baseline 1 offline has no evidence: the scorer abstains and the question counts as wrong (unparsed).
    report, results = evaluate(settings, "baseline1", [q])
    assert results[0].predicted is None and report.unparsed == 1 and report.average.accuracy == 0.0
