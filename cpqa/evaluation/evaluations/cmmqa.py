"""The CMMQA harness (the paper's Tables III and V): baseline 1 (Claude, chain of thought, no retrieval),
baseline 2 (the top 5 whole documents from semantic search in the prompt) and the full pipeline (retrieval,
then the answerer's multiple-choice mode on the passages), scored per source dataset and on average.

Every answered question is appended to a JSONL cache in ``settings.eval_dir`` keyed by method, question and
configuration, so an interrupted run resumes where it stopped; failed questions are not cached and are
retried next time. ``shuffle`` > 1 asks each question with the options in K orders and takes the majority.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Iterable, Literal

from pydantic import BaseModel, Field

from cpqa.config import Settings
from cpqa.evaluation.evaluations.choosers import (
    PROMPT_VERSION,
    AnswererChooser,
    Chooser,
    LLMChooser,
    Evidence,
    PipelinePassages,
    TopDocuments,
    no_evidence,
)
from cpqa.evaluation.stats.classification import ClassificationScores, average, score
from cpqa.evaluation.data.cmmqa_data import DATASETS, MCQuestion
from cpqa.evaluation.stats.pricing import Cost, estimate_cost
from cpqa.evaluation.stats.shuffle import majority, permutations

Method = Literal["baseline1", "baseline2", "full"]
METHODS: tuple[str, ...] = ("baseline1", "baseline2", "full")


class EvalConfig(BaseModel):
    """Everything that changes an answer; its digest keys the cache."""

    method: str
    answerer: str
    shuffle: int = 1
    prompt: str = PROMPT_VERSION
    profile: str = "auto"
    top_documents: int = 5

    @property
    def digest(self) -> str:
        return hashlib.sha1(self.model_dump_json().encode()).hexdigest()[:12]


class QuestionResult(BaseModel):
    key: str
    config: str
    dataset: str
    qid: str
    gold: str
    predicted: str | None
    votes: list[str | None] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)  # PMIDs shown to the answerer
    raw: str = ""  # the last reply, cut to 2,000 characters
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    ms: float = 0.0

    @property
    def correct(self) -> bool:
        return self.predicted == self.gold


class CMMQAReport(BaseModel):
    method: str
    answerer: str
    subset: str = "all"
    config: EvalConfig
    datasets: dict[str, ClassificationScores]
    average: ClassificationScores
    answered: int
    from_cache: int
    unparsed: int  # answers with no recognisable option letter (counted wrong)
    errors: int  # questions that failed (not cached, retried on the next run)
    error_examples: list[str] = Field(default_factory=list)
    cost: Cost | None = None
    elapsed_s: float = 0.0
    run_file: str | None = None


def question_key(method: str, question: MCQuestion, config: EvalConfig) -> str:
    return f"{method}|{question.key}|{config.digest}"


def select(questions: list[MCQuestion], limit: int | None) -> list[MCQuestion]:
    """The first ``limit`` questions taken round-robin over the datasets, so a small run covers all five."""
    if limit is None or limit >= len(questions):
        return list(questions)
    queues = {d: [q for q in questions if q.dataset == d] for d in DATASETS}
    out: list[MCQuestion] = []
    while len(out) < limit:
        for d in DATASETS:
            if queues[d] and len(out) < limit:
                out.append(queues[d].pop(0))
    return out


class ResultCache:
    """Append-only JSONL of answered questions; safe to append from worker threads."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def load(self, config: EvalConfig) -> dict[str, QuestionResult]:
        found: dict[str, QuestionResult] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    result = QuestionResult.model_validate_json(line)
                except ValueError:  # a line cut short by an interruption
                    continue
                if result.config == config.digest:
                    found[result.key] = result
        return found

    def append(self, result: QuestionResult) -> None:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(result.model_dump_json() + "\n")


def make_chooser(method: str, settings: Settings) -> Chooser:
    """The language model's chain of thought for the baselines when one is configured (Claude in the paper); the
    answerer's choice mode otherwise."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if settings.has_llm and method != "full":
        return LLMChooser(settings)
    return AnswererChooser(settings)


def make_evidence(method: str, settings: Settings, top_documents: int = 5) -> Evidence:
    if method == "baseline1":
        return no_evidence
    if method == "baseline2":
        return TopDocuments(settings, k=top_documents)
    return PipelinePassages(settings)


def answer_question(
    question: MCQuestion, key: str, config: EvalConfig, chooser: Chooser, evidence: Evidence
) -> QuestionResult:
    start = time.perf_counter()
    passages = evidence(question.question)  # question-only retrieval: options are not searched
    votes: list[str | None] = []
    tokens_in = tokens_out = calls = 0
    raw = ""
    for perm in permutations(list(question.options), config.shuffle, seed=question.key):
        choice = chooser.choose(question.question, perm.options(question.options), passages)
        votes.append(perm.to_original(choice.letter))
        tokens_in += choice.input_tokens
        tokens_out += choice.output_tokens
        calls += choice.calls
        raw = choice.raw
    return QuestionResult(
        key=key,
        config=config.digest,
        dataset=question.dataset,
        qid=question.qid,
        gold=question.answer,
        predicted=majority(votes),
        votes=votes,
        evidence=[p.pmid for p in passages],
        raw=raw[:2000],
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        calls=calls,
        ms=(time.perf_counter() - start) * 1000.0,
    )


def evaluate(
    settings: Settings,
    method: str,
    questions: list[MCQuestion],
    *,
    shuffle: int = 1,
    workers: int | None = None,
    subset: str = "all",
    chooser: Chooser | None = None,
    evidence: Evidence | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[CMMQAReport, list[QuestionResult]]:
    """Answer ``questions`` with ``method`` (cached answers are reused) and score them."""
    chooser = chooser or make_chooser(method, settings)
    config = EvalConfig(method=method, answerer=chooser.name, shuffle=shuffle, profile=settings.cpqa_profile)
    cache = ResultCache(settings.eval_dir / "cmmqa" / "cache" / f"{method}.jsonl")
    keys = {q.key: question_key(method, q, config) for q in questions}
    done = cache.load(config)
    cached = {k: done[k] for k in keys.values() if k in done}
    todo = [q for q in questions if keys[q.key] not in done]
    started = time.perf_counter()
    errors: list[str] = []
    fresh: dict[str, QuestionResult] = {}
    if todo:
        evidence = evidence or make_evidence(method, settings)
        workers = workers or (4 if settings.has_llm else 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(answer_question, q, keys[q.key], config, chooser, evidence): q for q in todo}
            try:
                for n, future in enumerate(as_completed(futures), 1):
                    q = futures[future]
                    try:
                        result = future.result()
                    except Exception as exc:  # noqa: BLE001 - one failed question must not end the run
                        errors.append(settings.redact(f"{q.key}: {type(exc).__name__}: {exc}")[:300])
                    else:
                        cache.append(result)
                        fresh[result.key] = result
                    if progress:
                        progress(n, len(todo))
            except KeyboardInterrupt:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    results = [r for q in questions if (r := cached.get(keys[q.key]) or fresh.get(keys[q.key]))]
    report = score_results(method, chooser.name, config, results, subset=subset)
    report.from_cache = len(cached)
    report.errors = len(errors)
    report.error_examples = errors[:5]
    report.elapsed_s = round(time.perf_counter() - started, 2)
    if settings.has_llm:
        tokens_in, tokens_out = sum(r.input_tokens for r in results), sum(r.output_tokens for r in results)
        calls = sum(r.calls for r in results)
        if isinstance(evidence, PipelinePassages):  # the pipeline's own rewrite/answer calls, this run only
            usage = evidence.llm_usage
            tokens_in, tokens_out, calls = (
                tokens_in + usage.input_tokens,
                tokens_out + usage.output_tokens,
                calls + usage.calls,
            )
        report.cost = estimate_cost(settings.cpqa_llm_model, tokens_in, tokens_out, calls)
    return report, results


def score_results(
    method: str, answerer: str, config: EvalConfig, results: Iterable[QuestionResult], subset: str = "all"
) -> CMMQAReport:
    results = list(results)
    per: dict[str, ClassificationScores] = {}
    for d in DATASETS:
        rows = [r for r in results if r.dataset == d]
        per[d] = score([r.gold for r in rows], [r.predicted for r in rows])
    return CMMQAReport(
        method=method,
        answerer=answerer,
        subset=subset,
        config=config,
        datasets=per,
        average=average(list(per.values())),
        answered=len(results),
        from_cache=0,
        unparsed=sum(r.predicted is None for r in results),
        errors=0,
    )


# ---------------------------------------------------------------- saved runs and hard negatives
def runs_dir(settings: Settings) -> Path:
    return settings.eval_dir / "cmmqa" / "runs"


def save_run(settings: Settings, report: CMMQAReport, results: list[QuestionResult]) -> Path:
    """Write the report with its per-question predictions; the latest run of a method is ``<method>.json``."""
    name = report.method if report.subset == "all" else f"{report.method}-{report.subset}"
    path = runs_dir(settings) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    report.run_file = str(path)
    predictions = [
        {"question": r.key.split("|")[1], "dataset": r.dataset, "gold": r.gold, "predicted": r.predicted}
        for r in results
    ]
    path.write_text(
        json.dumps({"report": report.model_dump(mode="json"), "predictions": predictions}, indent=1), encoding="utf-8"
    )
    return path


def resolve_run(settings: Settings, ref: str) -> Path:
    """A saved run given as a path, or as a method name (its latest run in the data home)."""
    path = Path(ref)
    if path.exists():
        return path
    saved = runs_dir(settings) / f"{ref}.json"
    if saved.exists():
        return saved
    raise FileNotFoundError(
        f"no saved CMMQA run {ref!r} (neither a file nor {saved}); run `cpqa eval cmmqa --method {ref}` first"
    )


def load_predictions(path: Path) -> dict[str, bool]:
    """Question key ("dataset:qid") -> answered correctly, from a saved run."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {p["question"]: p["predicted"] == p["gold"] for p in data["predictions"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a saved CMMQA run ({exc})") from None


def hard_negatives(runs: list[dict[str, bool]]) -> set[str]:
    """Questions every run answered, and every run got wrong (the paper's "negative" subset)."""
    if not runs:
        return set()
    common = set.intersection(*(set(r) for r in runs))
    return {k for k in common if not any(r[k] for r in runs)}
