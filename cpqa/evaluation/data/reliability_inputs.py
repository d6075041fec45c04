"""Bad input and personal details, end to end through the pipeline of a reliability ``World``: what is refused,
and whether any personal value reaches E-utilities, Anthropic, the trace, the answer or a log."""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

from pydantic import BaseModel

from cpqa.evaluation.evaluations.reliability import QUESTION, World, strings


class InputResult(BaseModel):
    name: str
    outcome: str  # "refused: <message>" or "answered"
    handled: bool  # refused with a clear message, or answered as the case requires
    detail: str = ""


def _no_control(result, sent: list[str]) -> str:
    bad = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u200e]")
    return "control characters passed on" if bad.search(result.trace.question) or any(map(bad.search, sent)) else ""


def _truncated(result, sent: list[str]) -> str:
    from cpqa.options import SafetyOptions

    noticed = any("longer than" in n for n in result.answer.notices)
    return (
        "" if noticed and len(result.trace.question) <= SafetyOptions().max_question_chars else "no truncation notice"
    )


def _english_only(result, sent: list[str]) -> str:
    from cpqa.safety.screening import ENGLISH_ONLY

    if not result.answer.text.endswith(ENGLISH_ONLY):  # in the asker's language first, then in English
        return "answered a non-English question without saying only English is supported"
    return "outside calls were made" if sent else ""


def _structure_kept(result, sent: list[str]) -> str:
    """Every esearch term parses, and the user's field tags / history references never became syntax."""
    from cpqa.sources.boolean import BooleanQueryError, validate

    terms = [t for level in result.trace.ladder for t in [level.expression]]
    for term in terms:
        try:
            validate(term)
        except BooleanQueryError:
            return f"unparseable term {term[:60]!r}"
        if re.search(r"\[(?:uid|au)\]|#1", term):
            return f"user syntax reached the query: {term[:80]!r}"
    return "" if terms and not any(level.error for level in result.trace.ladder) else "no clean ladder"


BAD_INPUTS: list[tuple[str, str, Callable | None]] = [
    ("empty", "", None),
    ("whitespace only", " \n\t \r\n ", None),
    ("control / invisible characters only", "\x00\x07\x1b\u200b\u200e", None),
    ("no letters", "?? 1234 !! ...", None),
    (
        "control characters inside",
        "What do\x00 mathematical\x1b models tell\u200b us about cancer metabolism?\x07",
        _no_control,
    ),
    ("over 2,000 characters", QUESTION + " Please also consider tumour metabolism in detail." * 60, _truncated),
    ("Spanish", "¿Qué nos dicen los modelos matemáticos sobre el metabolismo del cáncer?", _english_only),
    ("Chinese", "数学模型告诉我们关于癌症代谢的什么？", _english_only),
    (
        "Boolean and quoting characters",
        'Do "mathematical models" OR 1[uid] tell us (about cancer[au] metabolism NOT #1* AND glycolysis?',
        _structure_kept,
    ),
]


def run_bad_input(world: World, name: str, text: str, check: Callable | None) -> InputResult:
    """Ask ``text``; ``check`` (None: it must be refused) returns the problem with the answer, or ''."""
    from cpqa.safety.screening import InvalidQuestion

    ncbi_since, claude_since = len(world.ncbi.requests), len(world.claude.requests)
    try:
        result = world.pipeline.ask(text)
    except InvalidQuestion as exc:
        sent = world.sent(ncbi_since, claude_since)
        return InputResult(
            name=name,
            outcome=f"refused: {exc}",
            handled=check is None and not sent,
            detail="outside calls were made" if sent else "",
        )
    problem = check(result, world.sent(ncbi_since, claude_since)) if check else "accepted an unusable question"
    return InputResult(name=name, outcome=_outcome(result), handled=not problem, detail=problem)


def _outcome(result) -> str:
    from cpqa.safety.screening import ENGLISH_ONLY

    if result.answer.text.endswith(ENGLISH_ONLY):
        return "told only English is supported; nothing searched"
    notices = [n for n in result.answer.notices if "longer than" in n]
    return "answered" + (
        " with a truncation notice"
        if notices
        else f", {len(result.trace.ladder)} clean ladder levels"
        if result.trace.ladder
        else ""
    )


def run_bad_inputs(world: World) -> list[InputResult]:
    return [run_bad_input(world, *case) for case in BAD_INPUTS]


PHI_QUESTION = (
    "My name is Marisol Quintanilla-Brewer, born 03/14/1931, MRN 48213377, SSN 123-45-6789. "
    "Call me at 555-201-4477 or marisol.qb@example.com; I live at 42 Larkspur Street. I am 93 years old. " + QUESTION
)
PHI_VALUES = [
    "Marisol",
    "Quintanilla",
    "03/14/1931",
    "48213377",
    "123-45-6789",
    "555-201-4477",
    "marisol.qb@example.com",
    "Larkspur",
    "93 years",
]


class PHIResult(BaseModel):
    kinds_removed: list[str]
    values: int
    leaked: dict[str, list[str]]  # sink -> personal values found there (must be empty)
    notice_shown: bool
    answered: bool


@contextmanager
def captured_logs() -> Iterator[list[str]]:
    """Every log record any logger makes meanwhile, formatted, at DEBUG."""
    lines: list[str] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: lines.append(logging.Formatter().format(record))  # type: ignore[method-assign]
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def run_phi(world: World, question: str = PHI_QUESTION, values: Sequence[str] = PHI_VALUES) -> PHIResult:
    ncbi_since, claude_since, standin_since = (
        len(world.ncbi.requests),
        len(world.claude.requests),
        len(world.standin.requests),
    )
    with captured_logs() as logs:
        result = world.pipeline.ask(question)
    sinks = {
        "E-utilities requests": "\n".join(world.sent(ncbi_since, len(world.claude.requests))),
        "Anthropic requests": "\n".join(
            [*strings(world.standin.requests[standin_since:]), *world.sent(len(world.ncbi.requests), claude_since)]
        ),
        "trace": result.trace.model_dump_json(),
        "answer": result.answer.model_dump_json(),
        "logs": "\n".join(logs),
    }
    leaked = {sink: [v for v in values if v.lower() in text.lower()] for sink, text in sinks.items()}
    return PHIResult(
        kinds_removed=result.trace.stages["safety"].info.get("removed_phi", []),
        values=len(values),
        leaked={k: v for k, v in leaked.items() if v},
        notice_shown=any("Personal details were removed" in n for n in result.answer.notices),
        answered=bool(result.answer.citations),
    )
