"""``cpqa eval answers`` and ``cpqa eval support``: the scoring rules on hand-made cases, the BioASQ gold reader on
the real golden files, and the command end to end (the product, the naive baseline, answers another build wrote)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.answer.messages import NOT_DIRECT
from cpqa.evaluation.data.bioasq_gold import GoldQuestion, Snippet, bioasq_gold, exact_answers
from cpqa.evaluation.evaluations.answers import (
    answer_sentences,
    holds_snippet,
    matches,
    names_exact_answer,
    read_answers,
    score_question,
    summarise,
)
from cpqa.words import content_terms

GOLD = GoldQuestion(
    id="q1",
    question="Does tamoxifen reduce breast cancer recurrence?",
    snippets=[
        Snippet(pmid="1", text="Five years of adjuvant tamoxifen reduced breast cancer recurrence by 39% in women."),
        Snippet(pmid="2", text="Hot flashes were the most common side effect of tamoxifen."),
    ],
)


def test_answer_sentences_are_the_quoted_or_cited_ones_without_markers():
    text = (
        "Evidence extracts, not written by a language model: the sentences below.\n\n"
        '- "Tamoxifen reduced recurrence by 39%." [PMID:1]\n- "Hot flashes were common." [PMID:2]\n'
        "Written claim about tamoxifen [PMID:1]. A sentence without any citation at all."
    )
    assert answer_sentences(text) == [
        "Tamoxifen reduced recurrence by 39%.",
        "Hot flashes were common.",
        "Written claim about tamoxifen.",
    ]


def test_a_sentence_matches_a_snippet_holding_six_tenths_of_its_words():
    snippets = [set(content_terms(s.text)) for s in GOLD.snippets]
    assert matches("Adjuvant tamoxifen reduced breast cancer recurrence.", snippets)
    assert not matches("Aromatase inhibitors cause joint pain and bone loss in women.", snippets)
    assert holds_snippet(["Hot flashes were the most common side effect of tamoxifen in the trial."], snippets)
    assert not holds_snippet(["Tamoxifen was given."], snippets)


def test_answers_from_a_file_count_the_research_passages_as_the_pipeline_does(tmp_path):
    # the gold snippets are PubMed's: five patient sections first do not push the record out of the top five
    pages = [{"pmid": f"cancergov-{i}", "source": "D4", "text": "Tamoxifen is a drug."} for i in range(5)]
    record = {"pmid": "1", "source": "D1", "text": GOLD.snippets[0].text}
    line = {"index": 0, "answer": {"text": "x", "abstained": True}, "trace": {"passages": [*pages, record]}}
    saved = tmp_path / "answers.jsonl"
    saved.write_text(json.dumps(line) + "\n")
    assert read_answers(saved, [GOLD], [GOLD.question])[0]["snippet_hit_at_5"]


def test_scores_pool_sentences_and_count_abstentions():
    rows = [
        score_question(
            GOLD,
            '- "Adjuvant tamoxifen reduced breast cancer recurrence." [PMID:1]\n'
            '- "Aromatase inhibitors cause joint pain." [PMID:3]',
            False,
            [GOLD.snippets[0].text],
            types={"1": "randomized controlled trial", "3": "animal study"},
        ),
        score_question(GOLD, "No answer.", True, [], removed=2),
    ]
    summary = summarise(rows)
    assert summary["quote_precision"] == 0.5 and summary["quoted_sentences"] == 2
    assert summary["snippet_hit_at_5"] == 0.5 and summary["abstention_rate"] == 0.5
    assert summary["unsupported_removed"] == 2 and summary["questions_with_removals"] == 1
    assert summary["preclinical_quote_share"] == 0.5


def test_exact_answers_are_read_for_factoid_and_list_questions_only():
    assert exact_answers({"type": "factoid", "exact_answer": [["PD-1", "programmed death 1"], "PD1"]}) == [
        ["PD-1", "programmed death 1"],
        ["PD1"],
    ]
    assert exact_answers({"type": "list", "exact_answer": [[" X  chromosome "], []]}) == [["X chromosome"]]
    assert exact_answers({"type": "yesno", "exact_answer": "yes"}) == []
    assert exact_answers({"type": "summary"}) == []


def test_an_abbreviation_the_quoted_record_defines_names_its_long_form():
    exact = [["porphyria"]]
    quote = "In November 2019, givosiran was approved for the treatment of adults with AHP."
    record = "Givosiran is an RNA interference therapeutic for acute hepatic porphyria (AHP). " + quote
    assert names_exact_answer(quote, exact, record)
    assert not names_exact_answer(quote, exact)  # the sentence alone names no porphyria
    assert not names_exact_answer("Givosiran lowers ALA in adults.", exact, record)  # AHP itself must be used


def test_an_answer_written_with_its_other_name_in_brackets_is_named_by_either():
    types = [["myotonic dystrophy type 1 (DM1)"], ["myotonic dystrophy type 2 (DM2)"]]
    assert names_exact_answer("There are two types: myotonic dystrophy type 1 and myotonic dystrophy type 2.", types)
    assert names_exact_answer("Patients with DM1 were enrolled.", types)
    assert names_exact_answer("The DMD gene, located on Xp21, is large.", [["X chromosome (Xp21)"]])
    assert names_exact_answer("It models multiple sclerosis in mice.", [["Model of MS (Multiple Sclerosis)"]])
    nested = [["mutations in SMN1 (encoding survival motor neuron protein (SMN))"]]
    assert names_exact_answer("SMA is caused by mutations in SMN1.", nested)
    assert not names_exact_answer("SMN protein levels were measured.", nested)  # a bracket holding one: no name
    assert not names_exact_answer("The M (male) group.", [["Mx (M)"]])  # a short form under 3 characters is not one
    assert not names_exact_answer("Patients with DM1 were enrolled.", types, other_forms=False)  # the recipes' labels


def test_a_quote_naming_an_exact_answer_is_counted_against_the_answers_opening():
    exact = [["PD-1", "programmed death 1"]]
    assert names_exact_answer("Camrelizumab is a humanised anti-PD-1 antibody.", exact)
    assert not names_exact_answer("Camrelizumab targets PD-10 in mice.", exact)  # whole phrases only
    assert names_exact_answer("Activity was scored with the Rachmilewitz index in UC.", [["ulcerative colitis"]])
    assert names_exact_answer("It is used in adults with XLH.", [["X-linked hypophosphatemia"]])
    assert names_exact_answer("Safinamide is approved in PD.", [["Parkinson's disease"]])
    assert not names_exact_answer("MS was used.", [["mass"]])  # one word has no initials
    assert names_exact_answer("It treats recurrent Clostridioides difficile infection.", [["C. difficile"]])
    assert names_exact_answer("Familial haemophagocytic lymphohistiocytosis", [["hemophagocytic lymphohistiocytosis"]])
    prostate = [["Nonmetastatic castration-resistant prostate cancer"]]
    assert names_exact_answer("It is approved for non-metastatic, castration-resistant prostate cancer.", prostate)
    gold = GoldQuestion(id="f", question="Which molecule is targeted by camrelizumab?", exact=exact)
    quote = '- "Camrelizumab is a humanised anti-PD-1 antibody." [PMID:1]'
    rows = [
        score_question(gold, f"{NOT_DIRECT} The closest evidence:\n\n{quote}", False, []),
        score_question(gold, quote, False, []),
        score_question(gold, '- "Camrelizumab was well tolerated." [PMID:1]', False, []),
        score_question(GOLD, '- "Adjuvant tamoxifen reduced breast cancer recurrence." [PMID:1]', False, []),
    ]
    summary = summarise(rows)
    assert summary["exact_answer_questions"] == 3  # the yes/no question has no exact answer
    assert summary["first_sentence_names_exact"] == round(2 / 3, 4)
    assert summary["not_direct_quoting_exact"] == round(1 / 3, 4)
    assert summary["direct_quoting_no_exact"] == round(1 / 3, 4)


def test_a_blind_judge_sees_first_sentences_without_their_system_and_is_set_beside_the_ruler(tmp_path):
    from cpqa.cli import app
    from cpqa.evaluation.evaluations.blind import judged, write_items

    gold = GoldQuestion(id="f", question="Which molecule is targeted by camrelizumab?", exact=[["PD-1"]])
    other = GoldQuestion(id="g", question="Which receptor is targeted by spesolimab?", exact=[["interleukin-36"]])
    ours = [
        score_question(gold, '- "Camrelizumab is an anti-PD-1 antibody." [PMID:1]', False, []),
        score_question(other, '- "Spesolimab is an IL-36 receptor inhibitor." [PMID:2]', False, []),
        score_question(GOLD, '- "Adjuvant tamoxifen reduced breast cancer recurrence." [PMID:1]', False, []),
    ]
    naive = [score_question(gold, '- "Camrelizumab was well tolerated." [PMID:1]', False, [])]
    assert write_items(tmp_path, {"pipeline": ours, "naive_baseline": naive}) == 3  # exact-answer questions only
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert all(set(item) == {"n", "question", "gold_answers", "sentence"} for item in items)  # no system, no ruler
    labels = {item["n"]: "camrelizumab was" not in item["sentence"].lower() for item in items}  # the judge's reading
    refused = CliRunner().invoke(app, ["eval", "blind", str(tmp_path)])
    assert refused.exit_code != 0  # no labels yet: an error, not a score
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps({"n": n, "names": v}) + "\n" for n, v in labels.items()))
    result = judged(tmp_path)
    assert result["pipeline"] == {
        "items": 2,
        "judged_names_exact": 1.0,
        "ruler_names_exact": 0.5,  # "IL-36 receptor" is not written as the gold answer is
        "ruler_recall": 0.5,
        "ruler_precision": 1.0,
    }
    assert result["naive_baseline"]["judged_names_exact"] == 0.0


def test_bioasq_gold_reads_dev_questions_with_snippets_and_ideal_answers():
    from conftest import shared

    gold = bioasq_gold(shared("mirage", "rawdata", "bioasq"), shared("bioasq", "dev_cancer_questions.jsonl"))
    assert 150 <= len(gold) <= 179
    assert all(q.snippets and q.question for q in gold)
    assert sum(bool(q.ideal) for q in gold) > 0.9 * len(gold)
    assert all(q.type in ("factoid", "list") for q in gold if q.exact)
    assert sum(bool(q.exact) for q in gold) > 0.9 * sum(q.type in ("factoid", "list") for q in gold)
    assert len({q.id for q in gold}) == len(gold)


def test_support_calibration_separates_own_snippets_from_a_similar_questions():
    from conftest import shared

    from cpqa.answer.verify import SupportChecker
    from cpqa.evaluation.evaluations.support import calibrate, support_pairs

    gold = bioasq_gold(shared("mirage", "rawdata", "bioasq"), shared("bioasq", "dev_cancer_questions.jsonl"))[:40]
    result = calibrate(support_pairs(gold, SupportChecker()))  # term coverage alone (no encoder): fast
    assert result["held_out"]["balanced_accuracy"] > 0.75
    assert result["chosen"]["threshold"] in {row["threshold"] for row in result["sweep"]}


@pytest.mark.slow  # two pipelines over two questions
def test_eval_answers_scores_the_product_the_naive_baseline_and_answers_from_a_file(
    indexed_home, tmp_path, monkeypatch
):
    from conftest import shared

    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(indexed_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    gold = bioasq_gold(shared("mirage", "rawdata", "bioasq"), shared("bioasq", "dev_cancer_questions.jsonl"))[:2]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps({"id": q.id, "question": q.question}) + "\n" for q in gold))
    asked = CliRunner().invoke(app, ["ask", "--questions", str(questions), "--json"])
    assert asked.exit_code == 0, asked.output
    written = tmp_path / "answers.jsonl"
    written.write_text(asked.stdout)
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "answers",
            "--questions",
            str(questions),
            "--raw",
            str(shared("mirage", "rawdata", "bioasq")),
            "--answers",
            f"file={written}",
            "--blind",
            str(tmp_path / "blind"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    key = json.loads((tmp_path / "blind" / "key.json").read_text())
    assert payload["blind_items"] == len(key) and {k["system"] for k in key} <= {"pipeline", "naive_baseline", "file"}
    systems = payload["systems"]
    assert set(systems) == {"pipeline", "naive_baseline", "file"} and payload["questions"] == 2
    # The same build answering the same questions scores the same, from the file or live.
    for key in ("quote_precision", "snippet_hit_at_5", "abstention_rate"):
        assert systems["file"][key] == systems["pipeline"][key]
    assert systems["naive_baseline"]["quoted_sentences"] <= 6


def test_eval_answers_refuses_a_malformed_answers_argument(tmp_path):
    from conftest import shared

    from cpqa.cli import app

    result = CliRunner().invoke(
        app,
        ["eval", "answers", "--questions", str(shared("bioasq", "dev_cancer_questions.jsonl")), "--answers", "nofile"],
    )
    assert result.exit_code == 2 and "NAME=PATH" in result.output


def test_an_answer_is_named_by_a_greek_letter_s_name_and_by_its_words_inflected():
    assert names_exact_answer("IL-1beta and TNF-alpha activated Tpl2.", [["IL-1\u03b2"]])
    assert names_exact_answer("It binds IL-1\u03b2 in vitro.", [["IL-1 beta"]])
    assert not names_exact_answer("IL-1 receptor levels were measured.", [["IL-1\u03b2"]])  # the letter is part of it
    assert names_exact_answer(
        "Amphiregulin and Epiregulin belong to the Epidermal growth factors family.",
        [["epidermal growth factor family"]],
    )
    assert names_exact_answer("Retrotransposons are activated as organisms age.", [["Activation"]])
    assert names_exact_answer("Tumours were smaller in treated mice.", [["tumor"]])  # a British spelling, stemmed too
    assert not names_exact_answer("The patients' status was recorded.", [["statins"]])
    assert not names_exact_answer(
        "Retrotransposons are activated as organisms age.", [["Activation"]], other_forms=False
    )
