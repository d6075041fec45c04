"""``cpqa ask``: answer a question with cited evidence, or print the answer and the whole trace as JSON."""

from __future__ import annotations

import re
from pathlib import Path
from types import TracebackType
from typing import Optional, Sequence

import typer
from rich.markup import escape

from cpqa.cli.common import OPTION, OPTIONS_FILE, fail, pipeline_options, print_json
from cpqa.answer.citations import MARKER, citation_numbers, marker_pmids
from cpqa.documents.study_type import badge as study_badge
from cpqa.progress import DRAFT_TITLE, Progress
from cpqa.references import PUBMED_URL, passage_heading, passage_link, record_source
from cpqa.trace import RetrievalTrace
from cpqa.types import Answer

PATH_NAMES = {"E1": "semantic search", "E2": "PubMed Boolean search", "BM25": "keyword search"}
CATEGORY_NAMES = {"E1": "semantic search (E1)", "E2": "Boolean search (E2)", "E3": "semantic + Boolean (E3)"}
SOURCE_NAMES = {"D1": "abstract (D1)", "D2": "PMC review (D2)", "D3": "PMC full text (D3)"}
SAMPLE_HINT = "../shared/data/corpus/pubmed_sample.xml.gz"


def empty_store_message(store_path: str) -> str:
    return (
        f"the local evidence store is empty ({store_path}). Ingest PubMed records first, e.g.\n"
        f"  cpqa ingest pubmed {SAMPLE_HINT}\n  cpqa index build\n"
        "(any PubMed XML works, .gz too); then ask again."
    )


def require_records(settings) -> None:
    """Stop with how to ingest when the evidence store is empty, and with how to recover when it is damaged."""
    from cpqa.sources.store import Store, StoreDamaged

    try:
        with Store(settings.store_path) as store:
            count = store.count()
    except StoreDamaged as exc:
        fail(str(exc))
    if count == 0:
        fail(empty_store_message(str(settings.store_path)))


def number_citations(answer: Answer) -> str:
    """The answer text with each ``[PMID]`` marker replaced by its number (``citation_numbers``)."""
    numbers = citation_numbers(answer.text, answer.citations)

    def replace(match: re.Match) -> str:
        return "[" + ", ".join(str(numbers[p]) for p in marker_pmids(match.group(0))) + "]"

    return MARKER.sub(replace, answer.text)


class ProgressDisplay:
    """A live status line and, while Claude writes, the unchecked draft as plain text; both vanish when the run
    ends, so the checked answer printed next replaces the draft."""

    def __init__(self, console, draft: bool = True, shown: list[str] | None = None):
        """``shown``: the messages already printed first; a later screen's new ones (a language model's triage
        raising a flag) are printed above the status line as they arrive, before the answer."""
        from rich.live import Live
        from rich.spinner import Spinner

        self.spinner = Spinner("dots", text="Loading models...")
        self.show_draft = draft
        self.draft = ""
        self.shown = shown if shown is not None else []
        self.live = Live(self.spinner, console=console, transient=True, refresh_per_second=8)

    def __call__(self, event: Progress) -> None:
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        from cpqa.safety.screening import first_messages

        if event.stage == "screened" and event.screened is not None:
            new = [m for m in first_messages(event.screened) if m not in self.shown]
            show_first(new, event.screened.urgent, self.live.console, event.screened.referral)
            self.shown.extend(new)
        self.spinner.update(text=event.label + "...")
        if event.stage == "drafting" and self.show_draft:
            self.draft = event.draft or ""
            self.live.update(Group(self.spinner, Panel(Text(self.draft), title=DRAFT_TITLE, border_style="dim")))

    def __enter__(self) -> "ProgressDisplay":
        self.live.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.live.__exit__(exc_type, exc, traceback)


def show_first(messages: list[str], urgent: str | None, console, referral: str | None = None) -> None:
    """The screening result, printed before any model loads: the urgent-care message in a red panel, the referral
    in a yellow one, then notes."""
    from rich.panel import Panel

    for message in messages:
        if message == urgent:
            console.print(Panel(escape(message), title="Urgent", border_style="bold red"))
        elif message == referral:
            console.print(Panel(escape(message), title="Ask your care team", border_style="yellow"))
        else:
            console.print(f"[yellow]Note:[/] {escape(message)}")


def render(answer: Answer, trace: RetrievalTrace, console, shown: Sequence[str] = (), evidence: bool = False) -> None:
    """What a person reads, at any width: the urgent message first, the referral, the notices (each once: ``shown``
    were printed already), the answer, the numbered references by title, the disclaimer. ``evidence`` adds what a
    researcher checks: the evidence passages, the models, the sentences the support check removed, internal flags
    and warnings (``--json`` has all of it)."""
    from rich.markdown import Markdown
    from rich.panel import Panel

    first = [answer.urgent, answer.referral, *answer.notices]
    show_first([m for m in first if m and m not in shown], answer.urgent, console, answer.referral)
    label = "Answer (not enough evidence to answer)" if answer.abstained else "Answer"
    if answer.text and answer.text not in [*shown, *first]:  # a refusal already printed first is not repeated
        # No hyperlinks from an answer's text: the references below carry the only links.
        console.print(Panel(Markdown(number_citations(answer), hyperlinks=False), title=label, border_style="cyan"))
    show_references(answer, trace, console)
    if trace.lost_paths:
        lost = ", ".join(PATH_NAMES.get(path, path) for path in trace.lost_paths)
        console.print(
            f"\n[yellow]Note:[/] part of the search could not run ({lost}), so the evidence may be incomplete"
            + ("." if evidence else "; --evidence shows why.")
        )
    if evidence:
        show_evidence(answer, trace, console)
    console.print(f"\n[dim]{escape(answer.disclaimer)}[/]")


def show_references(answer: Answer, trace: RetrievalTrace, console) -> None:
    """The cited records, numbered as in the answer: a readable heading, journal and year, then the PubMed link on
    its own line (it stays whole at 80 columns)."""
    if not answer.citations:
        return
    from rich.table import Table

    by_pmid = {p.pmid: p for p in reversed(trace.passages)}  # best passage per PMID
    console.print("\n[bold]References[/]")
    grid = Table.grid(padding=(0, 1))  # a wrapped heading stays indented under its number
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(overflow="fold")
    for pmid, i in citation_numbers(answer.text, answer.citations).items():
        p = by_pmid.get(pmid)
        heading = passage_heading(p) if p else f"PubMed record {pmid}"
        source = record_source(p.journal, p.year) if p and p.title and not p.is_patient_information else ""
        line = f"{heading} ({source})" if source else heading
        url = passage_link(p) if p else PUBMED_URL.format(pmid=pmid)
        grid.add_row(f"  \\[{i}]", f"{escape(line)}\n[link={url}]{url}[/link]")
    console.print(grid)


EVIDENCE_CHARS = 400  # of a passage, in --evidence (the whole passage is in --json)


def show_evidence(answer: Answer, trace: RetrievalTrace, console) -> None:
    """``--evidence``: the checks' details, the passages best first and the models that served, each a stacked
    record (a heading line, then its fields indented), so they read at 80 columns where a wide table would not."""
    from rich.padding import Padding

    for flag in answer.flags:
        console.print(f"[yellow]Flag:[/] {escape(flag)}")
    for removed in answer.removed_sentences:
        console.print(
            f"[yellow]Removed[/] (not supported by PMID {', '.join(removed.pmids)}, {removed.judged_by}): "
            f"{escape(removed.sentence)}"
        )
    cited = citation_numbers(answer.text, answer.citations)
    if trace.passages:
        console.print("\n[bold]Evidence passages, best first[/]")
    for rank, p in enumerate(trace.passages, start=1):
        name = f"{p.site}: {p.pmid}" if p.is_patient_information else f"PMID {p.pmid}"
        console.print(f"{rank}. {escape(name)}" + (escape(f" · cited as [{cited[p.pmid]}]") if p.pmid in cited else ""))
        facts = [
            study_badge(p.evidence_type),
            str(p.year or ""),
            SOURCE_NAMES.get(p.source, p.source),
            f"found by {CATEGORY_NAMES.get(p.category, p.category)}" if p.category else "",
            f"score {p.score:.3f}",
            f"section {p.section}" if p.section else "",
        ]
        text = p.text if len(p.text) <= EVIDENCE_CHARS else p.text[: EVIDENCE_CHARS - 3].rsplit(" ", 1)[0] + "..."
        console.print(Padding(escape(" · ".join(f for f in facts if f) + "\n" + text), (0, 0, 0, 4)))
    console.print(f"\n[bold]Models (profile: {escape(trace.profile)})[/]")
    for choice in trace.models.values():
        console.print(f"{choice.component}")
        said = f"{choice.model} ({choice.provider or 'local'}, {choice.profile} profile)"
        console.print(Padding(escape(said + (f"\n{choice.reason}" if choice.reason else "")), (0, 0, 0, 4)))
    for warning in trace.warnings:
        console.print(f"[yellow]Warning:[/] {escape(warning)}")


def ask(
    question: Optional[str] = typer.Argument(None, help="The question, in plain words."),
    questions: Optional[Path] = typer.Option(
        None,
        "--questions",
        help="A JSONL file (or a folder of them) with a "
        "question field: all answered by one loaded pipeline, one JSON line "
        "each (index, question as searched, answer, trace) on stdout.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the answer and the whole retrieval trace as JSON."),
    evidence: bool = typer.Option(
        False, "--evidence", help="Also print the evidence passages, the models and the checks' details."
    ),
    mode: Optional[str] = typer.Option(
        None, "--mode", help="patient (plain language; the default) or clinician (the option mode)."
    ),
    years: Optional[int] = typer.Option(
        None, "--years", min=1, max=100, help="Only evidence from the last N years (1-100)."
    ),
    source: Optional[list[str]] = typer.Option(
        None,
        "--source",
        help="D1 abstracts, D2 PMC reviews, D3 other PMC, D4 NIH patient information (repeat; default D1, D2, D4).",
    ),
    options_file: Optional[Path] = OPTIONS_FILE,
    option: Optional[list[str]] = OPTION,
) -> None:
    """Answer a question with cited evidence"""
    if (question is None) == (questions is None):
        fail("give one QUESTION, or --questions FILE for many")
    if mode not in (None, "patient", "clinician"):
        fail(f"--mode must be patient or clinician, not {mode!r}")
    bad = [s for s in source or () if s not in ("D1", "D2", "D3", "D4")]
    if bad:
        fail(f"--source takes D1, D2, D3 or D4, not {', '.join(bad)}")
    from rich.console import Console

    from cpqa.config import get_settings
    from cpqa.safety.screen import Screen
    from cpqa.safety.screening import InvalidQuestion, first_messages

    settings = get_settings()
    options = pipeline_options(settings, options_file, option)
    if questions is not None:
        return ask_many(questions, settings, options, mode=mode, years=years, sources=source or None)
    assert question is not None  # exactly one of QUESTION and --questions (checked above)
    try:  # bad input is refused, and an urgent message shown, before any model loads
        screened = Screen.for_front_end(settings).check(question, options.safety)
    except InvalidQuestion as exc:
        fail(str(exc))
    console = Console(stderr=json_out)
    shown = first_messages(screened)
    show_first(shown, screened.urgent, console, screened.referral)

    from cpqa.models.encoders import ModelUnavailable
    from cpqa.pipeline import Pipeline

    require_records(settings)
    try:
        with ProgressDisplay(console, not json_out, shown) as display, Pipeline(settings, options) as pipeline:
            result = pipeline.ask(screened, mode=mode, years=years, sources=source or None, progress=display)
    except (InvalidQuestion, ModelUnavailable, ValueError) as exc:
        fail(settings.redact(str(exc)))
    if json_out:
        print_json(
            {"answer": result.answer.model_dump(mode="json"), "trace": result.trace.model_dump(mode="json")}, settings
        )
    else:
        render(result.answer, result.trace, console, shown, evidence=evidence)


def ask_many(path: Path, settings, options, **overrides) -> None:
    """``cpqa ask --questions FILE``: every question of a file through one pipeline, a JSON line each. A question
    that cannot be asked gets a line with its error (nothing is dropped) and the exit code is 1."""
    import json
    import sys

    from cpqa.sources.jsonl import read_question_texts
    from cpqa.pipeline import Pipeline
    from cpqa.safety.screening import InvalidQuestion

    try:
        texts = read_question_texts(path)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    require_records(settings)
    failed = 0
    with Pipeline(settings, options) as pipeline:
        for index, text in enumerate(texts):
            try:
                screened = pipeline.screen(text, options=options)  # once; no personal details in the output
                result = pipeline.ask(screened, **overrides)
                line = {
                    "index": index,
                    "question": screened.question,
                    "answer": result.answer.model_dump(mode="json"),
                    "trace": result.trace.model_dump(mode="json"),
                }
            except (InvalidQuestion, ValueError) as exc:
                failed += 1
                line = {"index": index, "error": str(exc)}
            sys.stdout.write(settings.redact(json.dumps(line, ensure_ascii=False, default=str)) + "\n")
            sys.stdout.flush()
    if failed:
        typer.echo(f"error: {failed} of {len(texts)} questions could not be asked (see their lines)", err=True)
        raise typer.Exit(1)
