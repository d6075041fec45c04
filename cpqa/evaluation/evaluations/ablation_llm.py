"""The strategy ablation (issue 10), part 2: the options that need a language model.

* Adaptive retrieval with Claude's judgement (under the safety guard): skip rate per question set.
* HyDE / Query2Doc on document retrieval: semantic search (E1) with the question, against the question plus
  Claude's pseudo-answer, through the retrieval harness and its metrics (needs the vector index).
* CMMQA columns (the harness of ``evaluations.cmmqa``): the full pipeline, and the full pipeline with HyDE, COT-Refine,
  adaptive retrieval, or choice-shuffling self-consistency (``cpqa.evaluation.stats.shuffle``, K orders).

With an Anthropic key these are Claude's numbers. Without one, Claude is played by the local stand-in
(``cpqa.testing.anthropic_standin``): the harness runs end to end, but the numbers measure nothing about
Claude, and the report says so. Stand-in runs are cached under their own answerer name, never mixed with
Claude's.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from pydantic import BaseModel, SecretStr

from cpqa.config import Settings
from cpqa.evaluation.evaluations.choosers import AnswererChooser, Choice, Chooser, llm_name
from cpqa.evaluation.evaluations.retrieval import Question, Run, evaluate
from cpqa.models.providers import load_llm
from cpqa.rewrite.adaptive import AdaptiveRetrieval, skip_rate
from cpqa.types import Passage
from cpqa.safety.screening import check_question

STANDIN = "stand-in"
STANDIN_NOTE = (
    "Claude was played by the local Anthropic stand-in: these numbers show the harness runs end to end "
    "and measure nothing about Claude. Run with ANTHROPIC_API_KEY set for real ones."
)
# name -> (strategy options of the pipeline, shuffle K, chooser refines)
CMMQA_VARIANTS: dict[str, tuple[dict[str, Any], int, bool]] = {
    "full": ({}, 1, False),
    "full+hyde": ({"hyde": True}, 1, False),
    "full+cot_refine": ({}, 1, True),
    "full+adaptive_retrieval": ({"adaptive_retrieval": True}, 1, False),
    "full+shuffle5": ({}, 5, False),
}


class AdaptiveLLMRate(BaseModel):
    questions: int
    skip_rate: float
    guarded: int  # skips Claude proposed that the safety guard overrode
    by_rules: int  # decisions that fell back to the rules (Claude failed)


@contextmanager
def claude_settings(settings: Settings, standin: bool) -> Iterator[tuple[Settings, str]]:
    """Settings that reach Claude: the configured key, or (``standin`` or no key) the local stand-in."""
    if settings.has_llm and not standin:
        yield settings, llm_name(settings)
        return
    from cpqa.testing.anthropic_standin import AnthropicStandIn

    with AnthropicStandIn() as api:
        yield (
            settings.model_copy(
                update={
                    "cpqa_llm_provider": "anthropic",
                    "anthropic_api_key": SecretStr("standin-dummy-key"),
                    "anthropic_base_url": api.url,
                }
            ),
            STANDIN,
        )


# ------------------------------------------------------------------ adaptive retrieval (Claude)
def adaptive_llm_rates(question_sets: dict[str, list[str]], settings: Settings) -> dict[str, AdaptiveLLMRate]:
    adaptive = AdaptiveRetrieval(settings, load_llm(settings))
    out = {}
    for name, texts in question_sets.items():
        decisions = [adaptive.decide(t, personal_dosing=check_question(t).personal_dosing) for t in texts]
        out[name] = AdaptiveLLMRate(
            questions=len(texts),
            skip_rate=round(skip_rate(decisions), 4),
            guarded=sum(d.guarded for d in decisions),
            by_rules=sum(d.method == "rules" for d in decisions),
        )
    return out


# ------------------------------------------------------------------ HyDE on semantic search
def hyde_ablation(questions: Sequence[Question], settings: Settings) -> dict:
    """The pipeline's E1 without and with HyDE on ``questions``; ``{"skipped": why}`` without a vector index."""
    from cpqa.documents.semantic import IndexMissing
    from cpqa.pipeline import Pipeline

    with Pipeline(settings) as pipeline:
        runs = {
            "E1 (semantic)": Run("E1", pipeline.options),
            "E1 + HyDE (Query2Doc)": Run("E1", pipeline.options.with_overrides(hyde=True)),
        }
        try:
            return evaluate(questions, runs, pipeline)
        except IndexMissing as exc:
            return {"skipped": f"no vector index ({exc}); build it with `cpqa index build`"}


# ------------------------------------------------------------------ CMMQA columns
class StrategyPassages:
    """CMMQA evidence: the pipeline's passages (its answerer context when a strategy reshaped it) with strategy
    options on; no passages when adaptive retrieval answered without evidence. One pipeline serves every variant."""

    def __init__(self, pipeline, **options: Any):
        self.pipeline = pipeline
        self.options = options

    def __call__(self, question: str) -> list[Passage]:
        trace = self.pipeline.ask(question, mode="clinician", **self.options).trace
        return list(trace.context or trace.passages)


class RefineChooser:
    """COT-Refine for multiple choice: choose without evidence, then again against it with the first choice as
    the draft (``multiple_choice.refine_choose``)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.name = f"cot_refine+claude:{settings.cpqa_llm_model}"

    def choose(self, question: str, options: dict[str, str], passages: list[Passage]) -> Choice:
        from cpqa.answer.answerer import Answerer
        from cpqa.evaluation.evaluations.multiple_choice import parse_answer_letter, refine_choose

        llm = load_llm(self.settings)  # one client per question, so its usage is this question's
        answer = refine_choose(Answerer(llm, redact=self.settings.redact), question, options, passages)
        if answer.written_by != "llm":
            raise RuntimeError(f"{llm.label} did not answer: {' '.join(answer.notices)[:200]}")
        usage = llm.usage
        return Choice(
            letter=answer.letter or parse_answer_letter(answer.text, options),
            raw=answer.text,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            calls=usage.calls,
        )


def cmmqa_ablation(
    settings: Settings, llm_name: str, limit: int | None, variants: Sequence[str] = tuple(CMMQA_VARIANTS)
) -> dict:
    """Accuracy and macro F1 per variant on CMMQA (cached per question and variant, as the harness does)."""
    from cpqa.evaluation.evaluations.cmmqa import evaluate as evaluate_cmmqa
    from cpqa.evaluation.evaluations.cmmqa import select
    from cpqa.evaluation.data.cmmqa_data import BUILD_COMMAND, CMMQAMissing, load_cmmqa

    unknown = [v for v in variants if v not in CMMQA_VARIANTS]
    if unknown:
        raise ValueError(f"unknown CMMQA variant(s) {', '.join(unknown)}; known: {', '.join(CMMQA_VARIANTS)}")
    try:
        questions = select(load_cmmqa(settings), limit)
    except CMMQAMissing:
        return {"skipped": f"CMMQA not built: run `{BUILD_COMMAND}`"}
    from cpqa.options import PipelineOptions
    from cpqa.pipeline import Pipeline

    pipeline = Pipeline(settings, PipelineOptions.of(mode="clinician"))
    out: dict[str, Any] = {}
    for name in variants:
        options, shuffle, refine = CMMQA_VARIANTS[name]
        chooser: Chooser = RefineChooser(settings) if refine else AnswererChooser(settings)
        if llm_name == STANDIN:
            chooser.name = f"{chooser.name} via {STANDIN}"  # never share a cache with Claude's answers
        report, _ = evaluate_cmmqa(
            settings,
            name,
            questions,
            shuffle=shuffle,
            chooser=chooser,
            evidence=StrategyPassages(pipeline, **options),
            workers=1,
        )
        out[name] = {
            "n": report.answered,
            "accuracy": round(report.average.accuracy, 4),
            "f1": round(report.average.f1, 4),
            "errors": report.errors,
            "unparsed": report.unparsed,
            "per_dataset_accuracy": {d: round(s.accuracy, 4) for d, s in report.datasets.items()},
        }
    return out
