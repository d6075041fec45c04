"""Record reranking after HSRDR's fusion (issue 36): a cross-encoder trained here reads the question beside each of
the first kept records, and its probability moves them within the fusion's order.

The model (``cpqa train reranker``; cpqa/models/trained/reranker) is all-MiniLM-L6-v2 with a one-logit head, trained
on the BioASQ train split's questions against the records HSRDR keeps for them (gold records against the others),
reading "title. abstract" to 128 word pieces, as E1 reads a record. A reranked record's score is its place in the
fusion's order, ``1 / (rrf_k + rank)``, plus ``rerank_weight`` times the model's probability that it answers. Alone
it ranks below the fusion; beside it, it lifted the tuning split's recall@20 / MRR@10 by 0.002 / 0.004, but held out
by 0.004 / -0.001 (dev split) and 0.001 / -0.006 (cancer) for about 180 ms a question, so it is off
(``rerank_records`` 0; docs/results.md, issue 36, stop 60). The paper profile has no document reranker (MedCPT's
cross-encoder reranks passages), so HSRDR reranks only where E1 runs offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from cpqa.fusion import rrf_score
from cpqa.models.cross_encoder import TrainedPairScorer, probability
from cpqa.models.names import TRAINED_DIR
from cpqa.options import DocumentOptions
from cpqa.types import RetrievedDocument

TRAINED_RERANKER = TRAINED_DIR / "reranker"
MAX_TOKENS = 128  # as trained


class RecordReranker:
    """``rerank(question, documents, options)``: the first ``rerank_records`` documents by their place in HSRDR's
    order and the model's probability; the rest follow as they were. Each reranked candidate keeps its logit
    (``Candidate.reranker_score``)."""

    name = "cpqa-record-reranker (all-MiniLM-L6-v2 cross-encoder trained on PubMed questions here; int8)"

    def __init__(self, model: Path | str = TRAINED_RERANKER):
        self._scorer = TrainedPairScorer(model, MAX_TOKENS)

    def rerank(
        self, question: str, documents: Sequence[RetrievedDocument], options: DocumentOptions
    ) -> list[RetrievedDocument]:
        head = list(documents[: options.rerank_records])
        if len(head) < 2:
            return list(documents)
        logits = self._scorer.logits(question, [d.article.title_and_abstract for d in head])
        for document, logit in zip(head, logits):
            document.candidate.reranker_score = round(float(logit), 4)
        chance = probability(logits)
        score = [rrf_score(rank, options.rrf_k) + options.rerank_weight * p for rank, p in enumerate(chance, 1)]
        order = sorted(range(len(head)), key=lambda i: -score[i])  # stable: ties keep the fusion's order
        return [head[i] for i in order] + list(documents[len(head) :])


__all__ = ["MAX_TOKENS", "TRAINED_RERANKER", "RecordReranker"]
