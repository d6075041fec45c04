"""What answers a CMMQA question: evidence providers (none, top documents, the pipeline's passages) and
choosers (Claude with chain of thought over a prompt of our own, or the answerer's multiple-choice mode,
which without a key scores each option by its similarity to the evidence)."""

from __future__ import annotations

import threading
from typing import Callable, Protocol

from pydantic import BaseModel

from cpqa import prompts
from cpqa.config import Settings
from cpqa.evaluation.evaluations.multiple_choice import choose, parse_answer_letter
from cpqa.types import Article, Passage

OFFLINE_ANSWERER = "offline evidence-similarity scoring (retrieval-only baseline, no language model)"
PROMPT_VERSION = "cmmqa-choice-v1"
MAX_DOC_WORDS = 400


class Choice(BaseModel):
    """One answer to one ordering of the options."""

    letter: str | None
    raw: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0


class Chooser(Protocol):
    name: str

    def choose(self, question: str, options: dict[str, str], passages: list[Passage]) -> Choice: ...


Evidence = Callable[[str], list[Passage]]


def format_options(options: dict[str, str]) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())


def format_evidence(passages: list[Passage]) -> str:
    return "\n\n".join(
        f"[{i}] PMID {p.pmid}{f' — {p.title}' if p.title else ''}\n{p.text}" for i, p in enumerate(passages, 1)
    )


def llm_name(settings: Settings) -> str:
    """The configured language model as results name it ("claude:<model>" for the paper's Claude)."""
    prefix = "claude" if settings.cpqa_llm_provider == "anthropic" else settings.cpqa_llm_provider
    return f"{prefix}:{settings.cpqa_llm_model}"


class _PerThreadLLM:
    """One language-model client per worker thread, so each question's token usage is its own."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._local = threading.local()

    def get(self):
        from cpqa.models.providers import load_llm

        if getattr(self._local, "client", None) is None:
            self._local.client = load_llm(self.settings)
        return self._local.client


class LLMChooser:
    """Baselines 1 and 2: the language model (Claude in the paper) reasons step by step and ends with
    ``Answer: X``; the letter is parsed."""

    def __init__(self, settings: Settings, max_tokens: int = 1024):
        self.name = llm_name(settings)
        self.max_tokens = max_tokens
        self._clients = _PerThreadLLM(settings)
        self._template = prompts.text("cmmqa_choice")

    def choose(self, question: str, options: dict[str, str], passages: list[Passage]) -> Choice:
        clause = " and against the numbered documents below" if passages else ""
        system = self._template.format(evidence_clause=clause)
        body = f"Question: {question}\n\nOptions:\n{format_options(options)}"
        if passages:
            body = f"Documents:\n{format_evidence(passages)}\n\n{body}"
        client = self._clients.get()
        before = client.usage
        text = client.complete(system, [{"role": "user", "content": body}], max_tokens=self.max_tokens)
        after = client.usage
        return Choice(
            letter=parse_answer_letter(text, options),
            raw=text,
            input_tokens=after.input_tokens - before.input_tokens,
            output_tokens=after.output_tokens - before.output_tokens,
            calls=after.calls - before.calls,
        )


class AnswererChooser:
    """The answerer's multiple-choice mode (``multiple_choice.choose``): Claude with a key, else the
    offline evidence-similarity scoring of each option (embedding similarity with the sentence embedder)."""

    def __init__(self, settings: Settings):
        from cpqa.answer.answerer import Answerer

        self.settings = settings
        self._Answerer = Answerer
        self.uses_llm = settings.has_llm
        self._clients = _PerThreadLLM(settings) if self.uses_llm else None
        if self.uses_llm:
            self.name = f"answerer+{llm_name(settings)}"
            self._offline = None
        else:
            from cpqa.models.encoders import load_encoder

            encoder, _ = load_encoder("sentence_embedder", settings)
            self._offline = Answerer(encoder=encoder, redact=settings.redact)
            self.name = f"{OFFLINE_ANSWERER}: {self._offline.choice.model}"

    def choose(self, question: str, options: dict[str, str], passages: list[Passage]) -> Choice:
        if self._clients is None:
            assert self._offline is not None  # __init__ builds it whenever there are no LLM clients
            answer = choose(self._offline, question, options, passages)
            return Choice(letter=_letter(answer, options), raw=answer.text)
        client = self._clients.get()
        before = client.usage
        answer = choose(self._Answerer(client, redact=self.settings.redact), question, options, passages)
        after = client.usage
        if answer.written_by != "llm":  # the answerer fell back to offline scoring: not the model's answer
            raise RuntimeError(f"{client.label} did not answer: {' '.join(answer.notices)[:200]}")
        return Choice(
            letter=_letter(answer, options),
            raw=answer.text,
            input_tokens=after.input_tokens - before.input_tokens,
            output_tokens=after.output_tokens - before.output_tokens,
            calls=after.calls - before.calls,
        )


def _letter(answer, options: dict[str, str]) -> str | None:
    """The answer's letter; its text is parsed only when it is a reply that chose (never an abstention)."""
    if answer.letter and answer.letter.upper() in {k.upper() for k in options}:
        return answer.letter.upper()
    if answer.abstained or answer.written_by != "llm":
        return None
    return parse_answer_letter(answer.text, options)


def article_passage(article: Article, score: float) -> Passage:
    """A whole document as one passage: title and abstract, cut to ``MAX_DOC_WORDS`` words."""
    words = (article.abstract or "").split()
    text = " ".join(words[:MAX_DOC_WORDS]) + (" ..." if len(words) > MAX_DOC_WORDS else "")
    return Passage(
        node_id=f"doc:{article.key}",
        pmid=article.pmid or article.key,
        text=text,
        score=score,
        title=article.title,
        year=article.year,
        journal=article.journal,
        pmcid=article.pmcid,
    )


class TopDocuments:
    """Baseline 2's evidence: the top ``k`` whole documents from semantic search over the local store."""

    def __init__(self, settings: Settings, k: int = 5):
        from cpqa.documents.semantic import SemanticSearch

        self.settings = settings
        self.k = k
        self.search = SemanticSearch(settings)

    def __call__(self, question: str) -> list[Passage]:
        from cpqa.sources.store import Store

        hits = self.search.search(question, k=self.k)
        with Store(self.settings.store_path) as store:
            articles = store.get_many([pmid for pmid, _ in hits])
        return [article_passage(articles[pmid], score) for pmid, score in hits if pmid in articles]


def no_evidence(question: str) -> list[Passage]:
    return []


class PipelinePassages:
    """The full method's evidence: the pipeline's top passages (rewrite, HSRDR, SEOS, dense + rerank).

    ``Pipeline`` offers retrieval only through ``ask``, which also writes an answer; that answer is discarded
    and the answerer's multiple-choice mode runs on the same passages. Its Claude calls (rewrite, answer)
    show in ``llm_usage``.
    """

    def __init__(self, settings: Settings):
        from cpqa.options import PipelineOptions
        from cpqa.pipeline import Pipeline

        self.pipeline = Pipeline(settings, PipelineOptions.of(mode="clinician"))

    def __call__(self, question: str) -> list[Passage]:
        return list(self.pipeline.ask(question, mode="clinician").trace.passages)

    @property
    def llm_usage(self):
        return self.pipeline.llm.usage
