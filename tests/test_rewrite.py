"""Rule-based rewrite: concepts, ladders that parse, stay safe against hostile text and relax in order,
and dialogue distillation across turns."""

from __future__ import annotations

import json
import re

import pytest

from cpqa.sources.boolean import BoolOp, Term, parse
from cpqa.rewrite.concepts import process_question
from cpqa.rewrite.rule_ladder import build_ladder, rank_concepts
from cpqa.rewrite.rewriter import Rewriter
from cpqa.rewrite.vocabulary import BUILTIN, Vocabulary
from tests.conftest import shared

VOCAB = Vocabulary(BUILTIN)
HOSTILE = [
    'lung cancer" OR "aspirin',
    "breast cancer) OR (tamoxifen[mh]",
    "does chemo work NOT radiotherapy[tiab] AND (prostate cancer",
    'what about [all] "" ( ) * OR AND NOT melanoma"[mh]',
    "Is it ( really [ safe ] to use OR skip chemotherapy?",
    "NOT OR AND",
]


def _ops(node) -> set[str]:
    if isinstance(node, BoolOp):
        return {node.op} | _ops(node.left) | _ops(node.right)
    return set()


def _terms(node) -> list[Term]:
    if isinstance(node, BoolOp):
        return _terms(node.left) + _terms(node.right)
    return [node] if isinstance(node, Term) else []


def _conjuncts(node) -> list:
    if isinstance(node, BoolOp) and node.op == "AND":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def pubmedqa_questions() -> list[str]:
    path = shared("pubmedqa", "dev_cancer_questions.jsonl")
    return [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]


def test_concepts_stopwords_abbreviations_and_spelling():
    p = process_question("Do nomograms predict biochemical recurrence (BCR) in prostate cancers?", VOCAB)
    texts = {c.text: c for c in p.concepts}
    assert "do" not in texts and "in" not in texts
    assert texts["biochemical recurrence"].phrases == ["biochemical recurrence", "BCR"]
    assert texts["prostate cancers"].mesh == "Prostatic Neoplasms" and texts["prostate cancers"].core
    assert texts["predict"].weak and not texts["nomograms"].weak
    light = {
        c.text: c for c in process_question("Does being overweight make you more likely to get it?", VOCAB).concepts
    }
    assert light["make"].weak and not light["overweight"].weak  # a light verb says nothing of the subject
    anyone = {c.text: c for c in process_question("Can anyone get mesothelioma?", VOCAB).concepts}
    assert anyone["anyone"].weak  # an indefinite pronoun names no one in particular
    told = {c.text: c for c in process_question("what if they say you cant have surgery", VOCAB).concepts}
    assert told["cant"].weak and told["say"].weak and not told["surgery"].weak  # the asking, not the subject
    fixed = process_question("side efects of pembrolizumub in lung cancr", VOCAB)
    assert fixed.corrections == {"efects": "effect", "pembrolizumub": "pembrolizumab", "cancr": "cancer"}
    assert fixed.intent == "side_effects"
    # a near miss of a vocabulary word that completes no term is left alone
    assert process_question("Does addition of valproic acid help?", VOCAB).corrections == {}


def test_an_abbreviation_the_question_defines_spans_the_words_ab3p_finds():
    """NCBI's Ab3P decides how many words "(TACE)" stands for; the first-letter rule alone would take
    "therapy transarterial chemoembolization"."""
    question = "Does sorafenib therapy transarterial chemoembolization (TACE) improve survival?"
    concepts = {c.text: c for c in process_question(question, Vocabulary(BUILTIN)).concepts}
    assert concepts["transarterial chemoembolization"].phrases == ["transarterial chemoembolization", "TACE"]
    assert "therapy" in concepts


def test_a_name_ending_in_a_number_keeps_its_bracketed_abbreviation():
    """ "receptor kinase 1 (GRK1)": the symbol, the most telling word for the search, was lost with the number."""
    question = "Which disorder is caused by mutations in G-protein coupled receptor kinase 1 (GRK1)?"
    concepts = {c.text: c for c in process_question(question, Vocabulary(BUILTIN)).concepts}
    assert concepts["g-protein coupled receptor kinase 1"].phrases[-1] == "GRK1"
    numbers = {c.text for c in process_question("Is stage 2 breast cancer curable in 5 years?", VOCAB).concepts}
    assert not {"2", "5"} & numbers  # a number with no abbreviation after it is still no concept


def test_every_pubmedqa_ladder_parses_and_has_three_levels():
    for question in pubmedqa_questions():
        ladder = build_ladder(process_question(question, VOCAB).concepts)
        assert len(ladder) >= 3, question
        for expression in ladder:
            parse(expression)


@pytest.mark.parametrize("question", HOSTILE)
def test_user_text_cannot_change_the_query_structure(settings, question):
    result = Rewriter(settings).rewrite(question)
    assert result.method == "rules"
    for expression in result.ladder:
        node = parse(expression)  # never a syntax error
        assert "NOT" not in _ops(node)  # "NOT" in the question is a word, never an operator
        for term in _terms(node):
            assert not set(term.text) & set('"()[]*')
            assert term.field in {"tiab", "mh", "tw", "all"}
    if result.ladder:  # the most specific level is exactly one conjunct per strong concept
        strong, _ = rank_concepts(result.concepts)
        assert len(_conjuncts(parse(result.ladder[0]))) == len(strong)


def test_question_with_nothing_searchable_gives_an_empty_ladder(settings):
    result = Rewriter(settings).rewrite("what is it?")
    assert result.ladder == [] and "no searchable concept" in result.notes[-1]
    with pytest.raises(ValueError, match="empty"):
        Rewriter(settings).rewrite("   ")


def test_levels_relax_in_order_on_the_sample_store(sample_settings):
    from cpqa.sources.store import Store

    rewriter = Rewriter(sample_settings)
    with Store(sample_settings.store_path) as store:
        for question in pubmedqa_questions()[:25]:
            counts = [store.search(e, retmax=1).count for e in rewriter.rewrite(question).ladder]
            assert counts == sorted(counts), (question, counts)
            assert counts[-1] > 0


def test_levels_relax_in_order_with_the_mesh_tables(settings, sample_settings):
    """With the MeSH / DO tables the ladders carry headings and synonyms; the order still holds."""
    from typer.testing import CliRunner

    from cpqa.cli import app
    from cpqa.sources.store import Store

    assert CliRunner().invoke(app, ["ingest", "mesh", str(shared("mesh"))]).exit_code == 0
    rewriter = Rewriter(settings)
    assert rewriter.vocabulary.source.endswith("terms.json")
    bioasq = shared("bioasq", "dev_cancer_questions.jsonl").read_text().splitlines()[:12]
    with Store(sample_settings.store_path) as store:
        for question in [json.loads(line)["question"] for line in bioasq] + pubmedqa_questions()[:8]:
            ladder = rewriter.rewrite(question).ladder
            counts = [store.search(e, retmax=1).count for e in ladder]
            assert counts == sorted(counts), (question, counts)


def test_levels_relax_in_order_on_the_mirror(sample_settings):
    from cpqa.config import get_settings
    from cpqa.sources.mirror_server import MirrorServer
    from cpqa.sources.ncbi.client import EutilsClient

    rewriter = Rewriter(sample_settings)
    with MirrorServer(sample_settings.store_path) as mirror:
        client_settings = get_settings(
            cpqa_home=sample_settings.cpqa_home, cpqa_eutils_url=mirror.url, ncbi_api_key="mirror-needs-no-key"
        )
        with EutilsClient(client_settings) as client:
            for question in [
                "Is breast cancer prognosis inherited?",
                "Does pain intensity predict a poor opioid response in cancer patients?",
            ]:
                counts = [client.search(e, retmax=1).count for e in rewriter.rewrite(question).ladder]
                assert counts == sorted(counts) and counts[-1] > 0, (question, counts)


def test_follow_up_carries_the_entities_across_turns(settings):
    rewriter = Rewriter(settings)
    history = ["Does pembrolizumab work for lung cancer?"]
    result = rewriter.rewrite("what about its side effects?", history=history)
    assert "pembrolizumab" in result.search_intent and "lung cancer" in result.search_intent
    assert {c.text for c in result.concepts} >= {"pembrolizumab", "side effects", "lung cancer"}
    assert result.intent == "side_effects" and result.relations == ["side_effects(pembrolizumab, lung cancer)"]
    first = result.ladder[0]
    assert '"pembrolizumab"[tiab]' in first and '"adverse effects"[tiab]' in first and "Lung Neoplasms" in first
    # a third turn still finds the drug two turns back when the last turn named nothing new
    later = rewriter.rewrite("is it safe in pregnancy?", history=[*history, "How long does treatment last?"])
    assert "pembrolizumab" in later.search_intent
    # a self-contained question keeps its own subject
    own = rewriter.rewrite("What is the survival for breast cancer?", history=history)
    assert own.search_intent == "What is the survival for breast cancer?"
    # an ordinary word of the last turn ("thank", "mother") names nothing: the drug before it is carried
    for small_talk in ("Thank you, that helps.", "My mother had it too."):
        polite = rewriter.rewrite("what about its side effects?", history=[*history, small_talk])
        assert "pembrolizumab" in polite.search_intent, (small_talk, polite.search_intent)
    # a drug the vocabulary does not list is still carried (a word general English rarely uses)
    unlisted = rewriter.rewrite("what about its side effects?", history=["Is zanubrutinib approved?"])
    assert "zanubrutinib" in unlisted.search_intent


@pytest.mark.parametrize(
    "question,history",
    [
        (
            "My name is Margaret Olsen and my date of birth is 4 May 1961. What are the side effects of olaparib in "
            "ovarian cancer?",
            [],
        ),
        (
            "What about the side effects?",
            ["I'm Margaret Olsen, born 1961-05-04, and I take olaparib for ovarian cancer."],
        ),
        ("Call me at 617-555-0134 or jane@example.org: does tamoxifen cause hot flashes?", []),
    ],
)
def test_placeholders_never_reach_a_ladder_level(settings, question, history):
    from cpqa.safety.screening import check_question, scrub_phi

    screened = check_question(question)
    scrubbed = [scrub_phi(t) for t in history]
    assert screened.removed_phi or all(s.removed for s in scrubbed)  # the details were found ...
    result = Rewriter(settings).rewrite(screened.question, history=[s.text for s in scrubbed])
    searched = " ".join([result.search_intent or "", *result.ladder]).lower()
    assert not re.search(r"\bname\b|\bdate\b|\bphone\b|\bemail\b|\bbirth\b|\bcall\b", searched), searched  # ... gone
    assert any(drug in searched for drug in ("olaparib", "tamoxifen"))  # the question's meaning stays


def test_a_word_english_does_not_use_is_read_as_the_common_word_it_misspells():
    """A consumer's typo ("sympotms") is corrected though it completes no vocabulary term, so it neither misleads
    the search nor is asked of the evidence as a name; a name, capitalised or written in capitals, is left alone."""
    fixed = process_question("myeloma sympotms, is it hereditry?", VOCAB)
    assert fixed.corrections == {"sympotms": "symptoms", "hereditry": "hereditary"}
    assert "myeloma symptoms" in fixed.normalized and "sympotms" not in {c.text for c in fixed.concepts}
    for named in ("Is the Oncomine Dx test accurate?", "Which variant caller is VarDict?", "Is tepotinib effective?"):
        assert process_question(named, VOCAB).corrections == {}


def test_the_answer_reads_the_question_as_the_rule_based_rewrite_corrected_it():
    from cpqa.answer.compose import answered_question
    from cpqa.rewrite.rewriter import RewriteResult
    from cpqa.safety.screening import Screened

    asked = "myeloma sympotms back pain"
    rules = RewriteResult(question=asked, normalized="myeloma symptoms back pain", search_intent="")
    assert answered_question(Screened(question=asked), rules) == "myeloma symptoms back pain"
    reworded = rules.model_copy(update={"method": "llm", "normalized": "What are the symptoms of multiple myeloma?"})
    assert answered_question(Screened(question=asked), reworded) == asked  # a model's rewording is not the question
