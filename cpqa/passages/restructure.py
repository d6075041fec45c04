"""Context restructuring: evidence sentences grouped into topics, the most informative kept, topics ordered by
relevance (after "Searching for best practices in RAG", Wang et al. 2024, and RECOMP-style compression).

1. The retrieved passages are split into sentences (the extractive answerer's splitter) and embedded.
2. Topics: agglomerative clustering of the sentence embeddings (cosine, average linkage, a similarity cut).
3. Within each topic, TextRank (PageRank over the cosine-similarity graph) keeps the ``per_topic`` most central
   sentences, in their original order.
4. Topics are ordered by the profile's reranker (MedCPT cross-encoder, or the offline fusion reranker) scoring
   [question, topic text].
The answerer cites PMIDs per evidence document, so each topic becomes one passage per source PMID.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, TextNode
from pydantic import BaseModel, Field

from cpqa.options import PassageOptions
from cpqa.models.encoders import Encoder, unit_rows
from cpqa.passages.seos import split_sentences
from cpqa.types import Passage

_DEFAULTS = PassageOptions()  # restructure_similarity, restructure_per_topic, restructure_damping


class EvidenceSentence(BaseModel):
    pmid: str
    text: str
    passage: int  # index of the passage it came from
    start: int | None = None  # character offsets in the source text, when the passage has them
    end: int | None = None
    centrality: float = 0.0


class Topic(BaseModel):
    sentences: list[EvidenceSentence] = Field(default_factory=list)  # kept sentences, original order
    size: int = 0  # sentences in the topic before selection
    relevance: float = 0.0  # reranker score of [question, topic text]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)


class Restructured(BaseModel):
    topics: list[Topic]  # most relevant first
    passages: list[Passage]  # what the answerer gets: one passage per (topic, PMID)


def evidence_sentences(
    passages: Sequence[Passage], min_words: int = _DEFAULTS.min_sentence_words
) -> list[EvidenceSentence]:
    """Every sentence of the passages, with offsets in the source text where the passage has them; a piece of
    fewer than ``min_words`` words (a label, a fragment) carries no claim and is left out."""
    out: list[EvidenceSentence] = []
    for i, p in enumerate(passages):
        for span in split_sentences(p.text):
            if span.words < min_words:
                continue
            start, end = (p.start + span.start, p.start + span.end) if p.start is not None else (None, None)
            out.append(
                EvidenceSentence(pmid=p.pmid, text=p.text[span.start : span.end], passage=i, start=start, end=end)
            )
    return out


def cluster(vectors: np.ndarray, similarity: float = _DEFAULTS.restructure_similarity) -> list[int]:
    """A topic label per vector: average-linkage clusters whose mean cosine similarity is at least ``similarity``."""
    n = len(vectors)
    if n < 2:
        return [0] * n
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=1.0 - similarity
    )
    return [int(label) for label in model.fit_predict(unit_rows(vectors))]


def textrank(vectors: np.ndarray, damping: float = _DEFAULTS.restructure_damping, iterations: int = 100) -> np.ndarray:
    """PageRank centrality over the graph of positive cosine similarities (no self-loops)."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0)
    unit = unit_rows(vectors)
    weights = np.clip(unit @ unit.T, 0.0, None)
    np.fill_diagonal(weights, 0.0)
    out_weight = weights.sum(axis=1, keepdims=True)
    transition = np.where(out_weight > 0, weights / np.maximum(out_weight, 1e-12), 1.0 / n)
    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        new = (1.0 - damping) / n + damping * transition.T @ rank
        if np.abs(new - rank).sum() < 1e-9:
            return new
        rank = new
    return rank


def _relevance(question: str, texts: list[str], reranker: BaseNodePostprocessor) -> list[float]:
    nodes = [NodeWithScore(node=TextNode(id_=str(i), text=t), score=0.0) for i, t in enumerate(texts)]
    ranked = reranker.postprocess_nodes(nodes, query_str=question)
    scores = [float("-inf")] * len(texts)
    for n in ranked:
        scores[int(n.node.node_id)] = float(n.score or 0.0)
    return scores


def restructure(
    question: str,
    passages: Sequence[Passage],
    encoder: Encoder,
    reranker: BaseNodePostprocessor,
    options: PassageOptions = _DEFAULTS,
) -> Restructured:
    """Topics of the evidence, most relevant first, and the passages the answerer is given (``options``: the
    topics' similarity, sentences kept per topic, TextRank's damping, the shortest sentence read)."""
    per_topic = options.restructure_per_topic
    sentences = evidence_sentences(passages, options.min_sentence_words)
    if not sentences:
        return Restructured(topics=[], passages=list(passages))
    vectors = np.asarray(encoder.encode([s.text for s in sentences]), dtype=np.float32)
    labels = cluster(vectors, options.restructure_similarity)
    topics: list[Topic] = []
    for label in sorted(set(labels), key=labels.index):
        members = [i for i, lab in enumerate(labels) if lab == label]
        centrality = textrank(vectors[members], options.restructure_damping)
        best = sorted(np.argsort(-centrality, kind="stable")[:per_topic])
        kept = [sentences[members[j]].model_copy(update={"centrality": round(float(centrality[j]), 6)}) for j in best]
        topics.append(Topic(sentences=kept, size=len(members)))
    for topic, score in zip(topics, _relevance(question, [t.text for t in topics], reranker)):
        topic.relevance = score
    topics.sort(key=lambda t: -t.relevance)
    return Restructured(topics=topics, passages=topic_passages(topics, passages))


def topic_passages(topics: Sequence[Topic], passages: Sequence[Passage]) -> list[Passage]:
    """One passage per (topic, PMID), topics in order, carrying the source passage's provenance."""
    out: list[Passage] = []
    for t, topic in enumerate(topics, 1):
        by_pmid: dict[str, list[EvidenceSentence]] = {}
        for s in topic.sentences:
            by_pmid.setdefault(s.pmid, []).append(s)
        for pmid, group in by_pmid.items():
            source = passages[group[0].passage]
            spans = [(s.start, s.end) for s in group if s.start is not None and s.end is not None]  # set together
            out.append(
                source.model_copy(
                    update={
                        "node_id": f"topic{t}:{pmid}",
                        "text": " ".join(s.text for s in group),
                        "score": topic.relevance,
                        "section": f"topic {t}" + (f" ({source.section})" if source.section else ""),
                        "start": min(a for a, _ in spans) if spans else None,
                        "end": max(b for _, b in spans) if spans else None,
                        "sentences": None,
                    }
                )
            )
    return out
