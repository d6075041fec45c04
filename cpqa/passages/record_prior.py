"""The record prior: a passage's place among passages fused with its record's place among documents.

HSRDR ranks records better than any passage reranker here ranks passages (docs/results.md, "The passage stage earns
its place (issue 27)": over the top 50 fused records the reranked top-5 passages held a gold snippet for 0.894 of
the BioASQ dev cancer questions; the same passages with the record prior 0.922, and over the top 10 records 0.961).
So the final order is a weighted reciprocal-rank fusion of the two rankings,
``1 / (k + passage place) + w / (k + record place)``, with at most ``per_record`` passages of one record among the
top; the order of records by their best passage (MaxP) is recorded in the trace. A passage that addresses its reader
stays last whatever its record.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from cpqa.fusion import rrf_score
from cpqa.documents.study_type import PRECLINICAL
from cpqa.options import PassageOptions
from cpqa.quotable import addresses_reader
from cpqa.types import Passage, StageLog, StageRecord


def with_record_prior(
    passages: Sequence[Passage],
    record_ranks: Mapping[str, int],
    options: PassageOptions,
    log: StageLog | None = None,
    demotion: int = 0,
) -> list[Passage]:
    """``passages`` (best first) reordered by the record prior, at most ``options.per_record`` per record first; each
    keeps the reranker's score as ``rerank_score`` and takes the fused one as ``score``. ``demotion``: places an
    animal or cell-line study moves down, in the passage ranking and in the record ranking alike (patient mode)."""
    unranked = len(record_ranks)
    k, weight = options.record_prior_k, options.record_prior

    def score(position: int, passage: Passage) -> float:
        if addresses_reader(passage.text):
            return -2.0
        moved = demotion if passage.evidence_type in PRECLINICAL else 0  # its place and its record's move down
        # the passage's own ranking and its record's, fused as every ranking is (a record unranked comes last)
        return rrf_score(position + moved + 1, k) + rrf_score(
            record_ranks.get(passage.pmid, unranked) + moved + 1, k, weight
        )

    scored = sorted(((score(i, p), i, p) for i, p in enumerate(passages)), key=lambda item: (-item[0], item[1]))
    taken: Counter[str] = Counter()
    rescored = []
    for value, position, passage in scored:
        taken[passage.pmid] += 1
        if taken[passage.pmid] > options.per_record and value >= 0:
            value -= 1.0  # behind every record's first per_record passages, ahead of those addressing the reader
        rescored.append((value, position, passage.model_copy(update={"score": value, "rerank_score": passage.score})))
    ordered = [p for _, _, p in sorted(rescored, key=lambda item: (-item[0], item[1]))]
    if log is not None:
        log.stages.setdefault("rerank", StageRecord()).info.update(
            record_prior=weight, records_by_best_passage=list(dict.fromkeys(p.pmid for p in ordered))
        )
    return ordered


__all__ = ["with_record_prior"]
