"""Small-to-big: retrieve small SEOS passages (precise matching), give the answerer more context around them.

Two modes. ``neighbours``: the passage and the ``window`` SEOS passages before and after it in the same
section. ``section``: the whole enclosing section (for a PubMed abstract, the whole abstract; for a PMC full
text, the body section). Both work on character offsets into ``cpqa.passages.records.source_text(article)``, the text
SEOS offsets refer to, so the context given is exact source text. Expanded passages of one document that
overlap are merged into the higher-ranked one, so no evidence is given twice. A section longer than
``max_words`` falls back to neighbours. ``SmallToBigPostprocessor`` (``cpqa.passages.context``) applies it as a
LlamaIndex node postprocessor; offsets make LlamaIndex's prev/next-node postprocessors (which need a docstore)
unnecessary here.
"""

from __future__ import annotations

from typing import Iterable, Literal, Mapping, Sequence

from llama_index.core.schema import BaseNode

from cpqa.options import PassageOptions
from cpqa.passages.records import source_text
from cpqa.types import Article, Passage

Mode = Literal["neighbours", "section"]
_MAX_WORDS = PassageOptions().small_to_big_max_words

Span = tuple[int, int]
SourceText = tuple[str, list[Span]]  # a document's text and its section spans


def enclosing(spans: Sequence[Span], start: int, end: int) -> Span | None:
    """The span of ``spans`` that holds ``[start, end)`` (or, failing that, its start)."""
    for a, b in spans:
        if a <= start and end <= b:
            return a, b
    for a, b in spans:
        if a <= start < b:
            return a, b
    return None


def expand_span(
    span: Span,
    siblings: Sequence[Span],
    sections: Sequence[Span],
    mode: Mode,
    window: int = 1,
    text: str | None = None,
    max_words: int = _MAX_WORDS,
) -> Span:
    """The context span for a retrieved ``span``: its enclosing section, or it and ``window`` neighbouring
    siblings (the passages of the same document, by start) on each side, never crossing its section."""
    if window < 1:
        raise ValueError("window must be at least 1")
    start, end = span
    section = enclosing(sections, start, end) or (start, end)
    if mode == "section":
        words = len(text[section[0] : section[1]].split()) if text is not None else 0
        if words <= max_words:  # a passage that overruns its section keeps its own end
            return min(start, section[0]), max(end, section[1])
    elif mode != "neighbours":
        raise ValueError(f"mode must be 'neighbours' or 'section', not {mode!r}")
    inside = sorted({s for s in siblings if section[0] <= s[0] and s[1] <= section[1]} | {(start, end)})
    i = inside.index((start, end))
    low, high = inside[max(0, i - window)], inside[min(len(inside) - 1, i + window)]
    return min(start, low[0]), max(end, high[1])


def merge_ranked(spans: Sequence[tuple[str, Span]]) -> list[tuple[int, Span]]:
    """Merge spans of the same document that overlap into the earliest (highest-ranked) one.

    Returns ``(rank of the kept span, merged span)`` pairs in rank order."""
    kept: list[tuple[int, str, Span]] = []
    for rank, (doc, (a, b)) in enumerate(spans):
        for j, (r, d, (c, e)) in enumerate(kept):
            if d == doc and a < e and c < b:
                kept[j] = (r, d, (min(a, c), max(b, e)))
                break
        else:
            kept.append((rank, doc, (a, b)))
    changed = True
    while changed:  # a merge may make two kept spans overlap
        changed = False
        for i in range(len(kept)):
            for j in range(i + 1, len(kept)):
                (r, d, (a, b)), (_, d2, (c, e)) = kept[i], kept[j]
                if d == d2 and a < e and c < b:
                    kept[i] = (r, d, (min(a, c), max(b, e)))
                    del kept[j]
                    changed = True
                    break
            if changed:
                break
    return [(r, span) for r, _, span in kept]


def node_spans(nodes: Iterable[BaseNode]) -> dict[str, list[Span]]:
    """SEOS passage offsets per document key (PMID, else PMCID)."""
    spans: dict[str, list[Span]] = {}
    for node in nodes:
        meta = node.metadata
        key = str(meta.get("pmid") or meta.get("pmcid") or "")
        if key and meta.get("start") is not None and meta.get("end") is not None:
            spans.setdefault(key, []).append((int(meta["start"]), int(meta["end"])))
    return spans


def article_sources(articles: Iterable[Article]) -> dict[str, SourceText]:
    """The text SEOS offsets refer to and its section spans, per document key (PMID, else PMCID)."""
    out: dict[str, SourceText] = {}
    for article in articles:
        text, sections = source_text(article)
        out[article.key] = (text, [(a, b) for _, a, b in sections])
    return out


def expand_passages(
    passages: Sequence[Passage],
    sources: Mapping[str, SourceText],
    siblings: Mapping[str, list[Span]],
    mode: Mode = "neighbours",
    window: int = 1,
    max_words: int = _MAX_WORDS,
) -> list[Passage]:
    """The answerer's context for ``passages`` (best first): each widened to its neighbours or section.

    ``sources`` maps a passage's PMID (or PMCID) to its document's text and sections; ``siblings`` to the spans of
    that document's SEOS passages. A passage without offsets or source is kept as it is."""
    wide: list[tuple[str, Span]] = []
    for i, p in enumerate(passages):
        key = p.pmid or p.pmcid or ""
        if key not in sources or p.start is None or p.end is None:
            wide.append((f"\x00{i}", (0, 0)))  # unique key: never merged
            continue
        text, sections = sources[key]
        wide.append(
            (key, expand_span((p.start, p.end), siblings.get(key, []), sections, mode, window, text, max_words))
        )
    out: list[Passage] = []
    for rank, (a, b) in merge_ranked(wide):
        p = passages[rank]
        key = wide[rank][0]
        if key not in sources:
            out.append(p)
            continue
        out.append(
            p.model_copy(
                update={
                    "text": sources[key][0][a:b],
                    "start": a,
                    "end": b,
                    "sentences": None,
                    "node_id": f"{p.node_id}:{mode}",
                }
            )
        )
    return out
