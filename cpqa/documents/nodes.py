"""Documents as LlamaIndex nodes: what E1, E2 and HSRDR return from ``retrieve``.

A node's id is ``pmid:<PMID>``; its metadata carries the provenance (path, ranks, category, source, RRF).
E1 and E2 alone return bare PMID nodes (no text: they rank, they do not fetch); HSRDR returns the fetched
records (title + abstract, or the full text for PMC sources)."""

from __future__ import annotations

from typing import Any

from llama_index.core.schema import NodeWithScore, TextNode

from cpqa.types import Article, Candidate

PROVENANCE = (
    "pmid",
    "pmcid",
    "source",
    "category",
    "rrf",
    "semantic_rank",
    "boolean_rank",
    "semantic_score",
    "path",
    "rank",
    "title",
    "year",
    "journal",
)


def pmid_node(pmid: str, score: float | None, **provenance: Any) -> NodeWithScore:
    """A ranked PMID without its record."""
    metadata = {"pmid": pmid, **provenance}
    return NodeWithScore(
        node=TextNode(id_=f"pmid:{pmid}", text="", metadata=metadata, excluded_embed_metadata_keys=list(metadata)),
        score=score,
    )


def document_node(candidate: Candidate, article: Article) -> NodeWithScore:
    """A retrieved document: title + abstract, or the full text for D2/D3; score = its RRF."""
    parts = [article.title, article.abstract]
    if candidate.source != "D1":
        parts += [p for s in article.body_sections for p in ([s.title] if s.title else []) + s.paragraphs]
    metadata = {
        "pmid": candidate.pmid,
        "pmcid": candidate.pmcid,
        "source": candidate.source,
        "category": candidate.category,
        "rrf": candidate.rrf,
        "semantic_rank": candidate.semantic_rank,
        "boolean_rank": candidate.boolean_rank,
        "title": article.title,
        "year": article.year,
        "journal": article.journal,
    }
    node = TextNode(
        id_=f"pmid:{candidate.pmid}",
        text="\n\n".join(p for p in parts if p),
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=["rrf", "category", "semantic_rank", "boolean_rank"],
    )
    return NodeWithScore(node=node, score=candidate.rrf)
