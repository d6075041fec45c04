"""The record prior: a passage's place among passages fused with its record's place among documents.

HSRDR ranks records better than any passage reranker here ranks passages (README, issue 27: over the top 50 fused
records the reranked top-5 passages held a gold snippet for 0.894 of the BioASQ dev cancer questions; the same
passages with the record prior 0.922, and over the top 10 records 0.961). So the final order is a weighted
reciprocal-rank fusion of the two rankings, ``1 / (k + passage place) + w / (k + record place)``, with at most
``per_record`` passages of one record among the top; the order of records by their best passage (MaxP) is recorded
in the trace. A passage that addresses its reader stays last whatever its record.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from cpqa.options import PassageOptions
from cpqa.passages.evidence import addresses_reader
from cpqa.types import Passage, StageLog, StageRecord


def with_record_prior(passages: Sequence[Passage], record_ranks: Mapping[str, int], options: PassageOptions,
                      log: StageLog | None = None) -> list[Passage]:
    """``passages`` (best first) reordered by the record prior, at most ``options.per_record`` per record first."""
    unranked = len(record_ranks)
    k, weight = options.record_prior_k, options.record_prior

    def score(position: int, passage: Passage) -> float:
        if addresses_reader(passage.text):
            return -1.0
        return 1.0 / (k + position + 1) + weight / (k + record_ranks.get(passage.pmid, unranked) + 1)

    scored = sorted(enumerate(passages), key=lambda item: (-score(*item), item[0]))
    first, rest, taken = [], [], Counter()
    for _, passage in scored:
        (first if taken[passage.pmid] < options.per_record else rest).append(passage)
        taken[passage.pmid] += 1
    ordered = first + rest
    if log is not None:
        log.stages.setdefault("rerank", StageRecord()).info.update(
            record_prior=weight, records_by_best_passage=list(dict.fromkeys(p.pmid for p in ordered)))
    return ordered


__all__ = ["with_record_prior"]
