"""The options of stages 4-5: passages, segmentation, reranking, the support check and the answer."""

from __future__ import annotations


from pydantic import Field

from cpqa.options.base import SmallToBig, _Section
from cpqa.types import Mode


class PassageOptions(_Section):
    """Stage 4: SEOS passages, two-stage retrieval and the answerer's context."""

    max_documents: int | None = Field(
        default=5,
        ge=1,
        description="only the N best-fused documents reach "
        "passage retrieval, so only they are segmented on first sight (None: every "
        "document HSRDR keeps); chosen with the record prior on the BioASQ tuning "
        "split, where more records only let weaker ones in (docs/results.md, issue "
        "27)",
    )
    record_prior: float = Field(
        default=2.0,
        ge=0.0,
        description="weight of the record's place in the document "
        "ranking beside the passage's place in the reranked list (weighted RRF; 0: the "
        "passage ranking alone)",
    )
    record_prior_k: int = Field(default=10, ge=1, description="the record prior's RRF constant")
    per_record: int = Field(default=2, ge=1, description="passages of one record among the top before any third")
    top_k: int = Field(default=20, ge=1, description="passages kept by the dense retriever")
    top_n: int = Field(default=5, ge=1, description="passages kept by the reranker")
    preclinical_demotion: int = Field(
        default=5,
        ge=0,
        description="patient mode: passages from animal or cell-line "
        "studies move this many places down the reranked list, so human clinical "
        "evidence is read first (0: off; clinician mode: off)",
    )
    patient_passage_words: int = Field(
        default=120,
        ge=20,
        description="D4: a patient section is cut into chunks of whole sentences of at most this many words; its first "
        "chunk and the one covering most of the question's words reach the answer",
    )
    urgent_top_n: int = Field(
        default=3,
        ge=1,
        description="an urgent question's evidence: at most this many passages, from human studies only (the urgent "
        "message is what the person needs; the evidence stays short)",
    )
    matryoshka_dim: int | None = Field(
        default=None, ge=1, description="passage embedding size (paper profile); fixed when the pipeline loads"
    )
    multi_query: bool = Field(
        default=False,
        description="passage retrieval with the search intent and variants of it, fused by reciprocal rank",
    )
    multi_query_k: int = Field(
        default=60,
        ge=1,
        description="multi-query: the reciprocal-rank constant on 0-based ranks (LlamaIndex's QueryFusionRetriever's; "
        "not tuned here)",
    )
    min_sentence_words: int = Field(
        default=4, ge=1, description="a shorter piece of a passage (a label, a fragment) carries no claim to quote"
    )
    small_to_big: SmallToBig = Field(
        default="off",
        description="give the answerer the retrieved passages' neighbouring passages or their enclosing section",
    )
    small_to_big_window: int = Field(default=1, ge=1, le=5, description="neighbouring passages on each side")
    small_to_big_max_words: int = Field(
        default=600, ge=50, description="small-to-big: a section longer than this is cut (a context budget, not tuned)"
    )
    restructure: bool = Field(
        default=False,
        description="evidence sentences grouped into topics, TextRank-selected, topics ordered by reranker relevance",
    )
    restructure_similarity: float = Field(
        default=0.5, gt=0, le=1, description="restructure: sentences closer than this (cosine) may share a topic"
    )
    restructure_per_topic: int = Field(default=3, ge=1, description="restructure: sentences kept per topic")
    restructure_damping: float = Field(
        default=0.85, gt=0, lt=1, description="restructure: TextRank's damping (PageRank's usual 0.85, not tuned here)"
    )
    repack: bool = Field(
        default=False, description="most relevant evidence at the edges of the context (LlamaIndex LongContextReorder)"
    )


class SegmentationOptions(_Section):
    """Stage 4a: SEOS, cross-validated on the chunking dev benchmark (docs/results.md, issue 27): halves tuned on one,
    judged on the other. A passage vector reads the whole chunk, window by window, so a chunk may pass the embedder's
    window. Fixed when the pipeline loads: the passage store keeps the layouts these settings made."""

    window_fill: float = Field(
        default=3.0, gt=0, description="a chunk fills at most this share of the passage embedder's token window"
    )
    overlap_fill: float = Field(default=0.0, ge=0, lt=1, description="overlap bound as a share of the chunk bound")
    gap_window: int = Field(default=3, ge=1, description="sentences on each side of a gap when scoring its depth")
    cutoff_sd: float = Field(default=1.0, description="boundary cut-off: mean + cutoff_sd * std of valley depths")
    min_fraction: float = Field(default=0.25, ge=0, le=1, description="segments under this share of the bound merge")


class RerankOptions(_Section):
    """Stage 4b: the offline reranker (the paper profile's cross-encoder has no knob). Fixed when the pipeline
    loads."""

    dense_weight: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="offline fusion reranker: weight of passage-embedding cosine beside BM25 (both min-max scaled)",
    )


class SupportOptions(_Section):
    """Stage 5b: every cited sentence checked against what it cites; below the threshold it is removed. Chosen by
    ``cpqa eval support`` (best balanced accuracy on the tuning half: 0.957, held out 0.937)."""

    support_threshold: float = Field(default=0.55, ge=0.0, le=1.0, description="support score a sentence needs")
    support_cosine_share: float = Field(
        default=0.5, ge=0.0, le=1.0, description="support score = share * cosine + (1 - share) * word coverage"
    )
    verify_max_tokens: int = Field(default=1024, ge=64, description="a language model's budget for the verification")


class AnswerOptions(_Section):
    """Stage 5: who writes, for whom, and how the extractive answer (no language model) quotes. The dense
    threshold, floor share and rank decay were chosen by a sweep over 120 BioASQ dev questions outside the cancer set
    (quote precision against gold snippets 0.587 -> 0.718; docs/results.md, issue 17)."""

    mode: Mode = "patient"
    cot_refine: bool = Field(
        default=False, description="answer without retrieval, then revise against the evidence; needs a language model"
    )
    answer_max_tokens: int = Field(default=2048, ge=64, description="a language model's output budget per answer")
    evidence_scorer: bool = Field(
        default=False,
        description="extractive, for a clinician: research sentences scored by the evidence scorer (offline: the "
        "encoder trained here) instead of the passage embedder (off: held out, quote precision rose on the BioASQ dev "
        "split 0.787 -> 0.807 and the cancer set 0.811 -> 0.847, but the 60 changed cancer answers judged blind 121 "
        "-> 113 points, 18 better before and 16 after: docs/results.md, issue 36, stop 61)",
    )
    ranker: bool = Field(
        default=False,
        description="extractive: the answer ranker trained here (cpqa train ranker) orders the candidate quotes by "
        "the probability that each names the answer (off: by similarity; first quotes naming an exact answer on the "
        "BioASQ tuning split 0.497 -> 0.523, but on questions never tuned on 0.439 -> 0.439 on the 500-question dev "
        "split and 0.517 -> 0.500 on the cancer questions: docs/results.md, issue 35)",
    )
    ranker_candidates: int = Field(
        default=16, ge=0, description="extractive: research sentences the ranker orders, best by similarity first"
    )
    chooser: bool = Field(
        default=False,
        description="extractive: the cross-encoder answer chooser trained here (cpqa train chooser) rescores the best "
        "research sentences (off: measured no better than similarity: docs/results.md, issue 35)",
    )
    chooser_candidates: int = Field(
        default=0,
        ge=0,
        description="extractive: research sentences the chooser rescores, best by similarity first (0: none; on the "
        "BioASQ tuning split rescoring 16 lowered first quotes naming an exact answer 0.394 -> 0.384-0.389 at "
        "thresholds 0.5-0.9: docs/results.md, issue 35)",
    )
    chooser_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="extractive: a research sentence the chooser scores at least this answers the question, whatever "
        "the addressing rule says",
    )
    asked_first: bool = Field(
        default=True,
        description="extractive: a sentence naming the kind of thing a 'which' question asks for (a disease, a gene, a "
        "drug, an organism, a name) and the question's subject is quoted first (cpqa.answer.asked_type)",
    )
    min_lexical_score: float = Field(
        default=0.3, ge=0.0, le=1.0, description="extractive, no encoder: word coverage below which evidence is thin"
    )
    min_dense_score: float = Field(
        default=0.4, ge=-1.0, le=1.0, description="extractive: cosine below which evidence is thin"
    )
    rank_decay: float = Field(
        default=0.1,
        ge=0.0,
        lt=0.25,
        description="extractive: the n-th passage's sentences weigh 1 - decay * (n - 1) (the reranker's order counts)",
    )
    floor_share: float = Field(
        default=0.8, ge=0.0, le=1.0, description="extractive: a quote scores at least this share of the best one"
    )
    coverage_bonus: float = Field(
        default=0.3,
        ge=0.0,
        description="extractive: a sentence covering question words no chosen one covers is worth up to this much more",
    )
    # Set by hand with the extractive answer (issue 17) and kept through its sweep, which tuned the threshold, floor
    # share and rank decay around them; not swept themselves.
    restating_weight: float = Field(
        default=0.7, gt=0.0, description="extractive: a background or objective sentence's weight (it restates)"
    )
    answering_weight: float = Field(
        default=1.15, gt=0.0, description="extractive: a results or conclusions sentence's weight (it answers)"
    )
    aim_weight: float = Field(default=0.75, gt=0.0, description="extractive: a sentence stating an aim or asking")
    finding_weight: float = Field(default=1.1, gt=0.0, description="extractive: a sentence stating a finding")
    same_share: float = Field(
        default=0.9, gt=0.0, le=1.0, description="extractive: quotes sharing this share of their words are one"
    )
    max_quotes: int = Field(default=3, ge=1, description="extractive: sentences quoted")
    quotes_per_record: int = Field(default=2, ge=1, description="extractive: sentences quoted from one record")
    max_quote_words: int = Field(
        default=80, ge=10, description="extractive: longer 'sentences' are tables or run-on text a reader cannot check"
    )
    rare_record_share: float = Field(
        default=0.005,
        gt=0.0,
        le=1.0,
        description="a question word in fewer than this share of the store's records (and rare in English) names "
        "something the evidence must mention, else an extractive answer abstains",
    )
    rare_word_zipf: float = Field(
        default=3.0, description="... rare in English: below this Zipf frequency (wordfreq; 3 = once per million)"
    )
    min_records_for_share: int = Field(
        default=1000,
        ge=1,
        description="... the share is read only from a store of at least this many records (below it, a share means "
        "nothing; a floor, not tuned)",
    )
    distinctive_word_zipf: float = Field(
        default=4.0, description="words of a name below this Zipf frequency carry it ('hodgkin', not 'disease')"
    )
    drug_name_zipf: float = Field(
        default=2.0,
        description="a word on a drug's INN stem or a code name is a drug's name below this Zipf frequency "
        "('tepotinib' 0; 'peptide' 3.0 and 'oncogene' 2.2 end as stems do; set by hand, not tuned)",
    )


__all__ = ["AnswerOptions", "PassageOptions", "RerankOptions", "SegmentationOptions", "SupportOptions"]
