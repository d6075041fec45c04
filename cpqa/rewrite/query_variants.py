"""Query variants for multi-query retrieval, from the rewrite's own concepts (no language model): the search
intent, then the intent with one concept replaced by its MeSH heading or first synonym."""

from __future__ import annotations

from cpqa.rewrite.rewriter import RewriteResult


def concept_queries(rewrite: RewriteResult, limit: int = 4) -> list[str]:
    """The search intent first, then up to ``limit - 1`` concept variants of it."""
    base = rewrite.search_intent or rewrite.normalized or rewrite.question
    queries = [base]
    lowered = base.lower()
    for concept in rewrite.concepts:
        if concept.weak:
            continue
        alternatives = [a for a in [concept.mesh, *concept.synonyms] if a and a.lower() != concept.text.lower()]
        position = lowered.find(concept.text.lower())
        for alternative in alternatives[:1]:
            variant = (
                base[:position] + alternative + base[position + len(concept.text) :]
                if position >= 0
                else f"{base} {alternative}"
            )
            if variant not in queries:
                queries.append(variant)
        if len(queries) >= limit:
            break
    return queries[:limit]
