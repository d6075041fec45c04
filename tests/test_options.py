"""One options tree: every tuned value a field of ``PipelineOptions`` with the tuned value as its only default, set
from a deployment's TOML file or ``--option name=value``, and refused with one clear line when it cannot be used."""

from __future__ import annotations

import inspect

import pytest
from typer.testing import CliRunner

from cpqa.answer.extractive import rank_sentences, select_extracts
from cpqa.answer.verify import SupportChecker
from cpqa.cli import app
from cpqa.documents.boolean_search import run_ladder
from cpqa.options import (
    AnswerOptions,
    DocumentOptions,
    PipelineOptions,
    RerankOptions,
    SegmentationOptions,
    SupportOptions,
)
from cpqa.options_file import OptionsError, load_options, parse_assignments
from cpqa.passages.rerank import FusionReranker
from cpqa.passages.seos import SEOSNodeParser
from cpqa.types import Passage

DEPLOYMENT = """
top_n = 3

[documents]
years = 10
sources = ["D1", "D3"]

[answer]
mode = "clinician"
"""


def test_an_options_file_sets_knobs_by_section_and_assignments_win(tmp_path):
    path = tmp_path / "deploy.toml"
    path.write_text(DEPLOYMENT.replace("top_n = 3\n", "") + "\n[passages]\ntop_n = 3\n", encoding="utf-8")
    assert load_options(tmp_path / "deploy.toml").passages.top_n == 3
    options = load_options(path, ["years=5", "hyde=true", "matryoshka_dim=none", "max_documents=none"])
    assert options.documents.years == 5 and options.documents.sources == ("D1", "D3")  # the assignment wins
    assert options.answer.mode == "clinician" and options.passages.top_n == 3 and options.rewrite.hyde is True
    assert options.passages.max_documents is None  # "none" sets an optional knob to None, not "keep"
    assert options.segmentation == SegmentationOptions()  # the rest keep their tuned values
    assert load_options(None, ["sources=D2"]).documents.sources == ("D2",)


@pytest.mark.parametrize(
    ("text", "assignments", "message"),
    [
        ("[documents]\nyeers = 5\n", [], "did you mean years"),
        ("[answer]\nyears = 5\n", [], "belongs in [documents]"),
        ("[documents\n", [], "not valid TOML"),
        ("answer = 3\n", [], "must be a table"),
        ("", ["years"], "name=value"),
        ("", ["years=500"], "documents.years"),
        ("", ["mode=doctor"], "answer.mode"),
        ("", ["top_n=three"], "passages.top_n"),
    ],
)
def test_bad_options_are_refused_with_one_clear_line(tmp_path, text, assignments, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(OptionsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_options(path, assignments)
    with pytest.raises(OptionsError, match="not found"):
        load_options(tmp_path / "missing.toml")


def test_assignments_are_typed_by_the_knob():
    assert parse_assignments(["sources=D1, D3", "years=5"]) == {"sources": ("D1", "D3"), "years": "5"}
    assert load_options(None, ["ladder_field_weights=1,2,0.5"]).documents.ladder_field_weights == (1.0, 2.0, 0.5)


def test_the_tuned_values_have_one_home():
    """The parts built outside a pipeline take their defaults from the options, so nothing contradicts them."""
    fields = set(SEOSNodeParser.model_fields)
    assert not fields & set(SegmentationOptions.model_fields)  # the parser takes its section, never a copy of it
    assert SEOSNodeParser.model_fields["options"].default_factory is SegmentationOptions
    assert not set(FusionReranker.model_fields) & set(RerankOptions.model_fields)
    assert FusionReranker.model_fields["options"].default_factory is RerankOptions
    ladder = inspect.signature(run_ladder).parameters
    tuned = DocumentOptions()
    assert ladder["min_docs"].default == tuned.ladder_min_docs and ladder["retmax"].default == tuned.ladder_retmax
    assert ladder["level_decay"].default == tuned.ladder_level_decay
    assert ladder["level_bonus"].default == tuned.ladder_level_bonus and ladder["rrf_k"].default == tuned.ladder_rrf_k
    assert SupportChecker().threshold == SupportOptions().support_threshold
    from cpqa.answer.extractive import is_whole
    from cpqa.words import is_specialist
    from cpqa.rewrite.hyde import hyde_transform

    answer, rewrite = AnswerOptions(), PipelineOptions().rewrite
    assert inspect.signature(is_whole).parameters["max_words"].default == answer.max_quote_words
    assert inspect.signature(is_specialist).parameters["rare_zipf"].default == answer.rare_word_zipf
    from cpqa.answer.asked_type import names_drug

    assert inspect.signature(names_drug).parameters["name_zipf"].default == answer.drug_name_zipf
    assert inspect.signature(hyde_transform).parameters["max_tokens"].default == rewrite.hyde_max_tokens


def test_answer_and_support_knobs_change_what_they_govern():
    texts = [
        "Tamoxifen caused hot flashes in most women of the first trial.",
        "Hot flashes under tamoxifen were mild and faded within a year.",
        "Women on tamoxifen reported night sweats alongside hot flashes.",
        "Tamoxifen hot flashes responded to venlafaxine in a small study.",
    ]
    passages = [Passage(node_id=f"n{i}", pmid=str(11111111 + i), text=t) for i, t in enumerate(texts)]
    question = "Does tamoxifen cause hot flashes?"
    ranked, threshold = rank_sentences(question, passages)
    wide = AnswerOptions(floor_share=0.0)
    assert len(select_extracts(ranked, threshold, question, wide)) == AnswerOptions().max_quotes
    assert len(select_extracts(ranked, threshold, question, wide.model_copy(update={"max_quotes": 1}))) == 1
    _, strict = rank_sentences(question, passages, options=AnswerOptions(min_lexical_score=0.9))
    assert strict == 0.9
    claim = "Tamoxifen cures every cancer [PMID:11111111]."
    assert SupportChecker().verify(claim, passages).removed  # unsupported at the tuned threshold
    assert not SupportChecker(options=SupportOptions(support_threshold=0.0)).verify(claim, passages).removed


def test_cli_commands_take_options_and_refuse_bad_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("CPQA_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    for command in (["ask", "What is tamoxifen?"], ["serve"], ["mcp"], ["options"]):
        result = runner.invoke(app, [*command, "--option", "yeers=5"])
        assert result.exit_code == 2 and "unknown pipeline option 'yeers'" in result.output, command
    path = tmp_path / "deploy.toml"
    path.write_text(DEPLOYMENT, encoding="utf-8")
    shown = runner.invoke(app, ["options", "--options-file", str(path), "-o", "top_k=7", "--json"])
    assert shown.exit_code == 0, shown.output
    assert '"top_k": 7' in shown.stdout and '"years": 10' in shown.stdout and '"top_n": 3' in shown.stdout
    monkeypatch.setenv("CPQA_OPTIONS_FILE", str(path))  # a deployment's file, from the environment
    assert '"mode": "clinician"' in runner.invoke(app, ["options", "--json"]).stdout


def test_every_knob_is_reachable_by_its_bare_name():
    flat = PipelineOptions().flat()
    assert len(flat) == sum(len(f.annotation.model_fields) for f in PipelineOptions.model_fields.values())
    for name in flat:
        PipelineOptions.section_of(name)
