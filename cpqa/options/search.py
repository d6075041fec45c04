"""The options of stages 1-3: the screen, the rewrite and HSRDR (what is searched)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from cpqa.options.base import LadderRanking, _Section
from cpqa.types import Source


class SafetyOptions(_Section):
    """Stage 1: the screen. Triage by meaning fires when a question is this close (cosine) to an urgent prototype
    and this much closer to it than to any ordinary question (``cpqa eval safety``, docs/results.md)."""

    triage_threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="cosine to the nearest urgent prototype")
    triage_margin: float = Field(
        default=0.1, ge=0.0, le=1.0, description="... ahead of the nearest ordinary question by at least this"
    )
    triage_method: Literal["prototypes", "classifier", "either"] = Field(
        default="either",
        description="triage by meaning: nearest phrasing, a classifier over the phrasings, or either firing "
        "(chosen by cross-validation; docs/results.md, issue 30)",
    )
    triage_probability: float = Field(
        default=0.5, gt=0.0, lt=1.0, description="... the classifier's probability that a question is urgent"
    )
    referral_probability: float = Field(
        default=0.5, gt=0.0, lt=1.0, description="referrals by meaning: the classifier's probability of a referral kind"
    )
    model_triage: bool = Field(
        default=True,
        description="with a language model configured, a short triage call beside the search may raise a flag "
        "(never lower one), and translates a question in another language for the search",
    )
    model_triage_max_tokens: int = Field(default=400, ge=64, description="the triage call's output budget")
    foreign_confidence: float = Field(
        default=0.9,
        gt=0.0,
        le=1.0,
        description="a question counts as not English only when the language detector is this sure of another",
    )
    classifier_c: float = Field(
        default=4.0,
        gt=0.0,
        description="triage by meaning: the classifiers' regularisation, chosen by 5-fold cross-validation over the "
        "phrasings (docs/results.md, issue 30); fixed when the pipeline loads",
    )
    max_question_chars: int = Field(
        default=2000,
        ge=100,
        description="a longer message is cut to its question (with as much of the text before it as fits); a "
        "budget for searches and prompts, not tuned",
    )


class RewriteOptions(_Section):
    """Stage 2: what is searched."""

    adaptive_retrieval: bool = Field(
        default=False,
        description="decide per question whether retrieval is needed (Claude, rule-based fallback); "
        "off by default for a patient-facing product",
    )
    term_links: bool = Field(
        default=False,
        description="local Automatic Term Mapping: add the MeSH-heading and "
        "abbreviation links `cpqa index build` learns from the records to the vocabulary (off: "
        "on the BioASQ tuning split they cost E2 recall; docs/results.md, "
        "'HSRDR against the naive hybrid (issue 15)')",
    )
    hyde: bool = Field(
        default=False,
        description="search E1 with the question plus a drafted pseudo-answer "
        "(HyDE / Query2Doc); needs a language model",
    )
    history_turns: int = Field(default=6, ge=1, description="earlier dialogue turns the rewrite reads (a budget)")
    min_levels: int = Field(
        default=3, ge=1, description="a model's ladder shorter than this is filled with rule-built levels"
    )
    ladder_and_concepts: int = Field(
        default=6, ge=2, description="rule ladder: concepts ANDed at most (C(5, 2) = 10 clauses in an 'm of n' level)"
    )
    ladder_synonyms: int = Field(default=5, ge=0, description="rule ladder: synonyms ORed per concept at most")
    ladder_synonym_words: int = Field(default=4, ge=1, description="rule ladder: longer synonyms are left out")
    lay_searched: int = Field(
        default=3,
        ge=1,
        description="lay words: clinical terms searched beside them at every level (the rest widen the last one)",
    )
    lay_glossed: int = Field(
        default=2, ge=0, description="lay words: clinical terms the search intent names after them"
    )
    nonword_zipf: float = Field(
        default=1.0,
        description="spelling: a question word rarer than this in English (wordfreq's Zipf scale) is a misspelling "
        "when one common English word lies an edit from it ('sympotms'); set by hand",
    )
    speller_zipf: float = Field(
        default=3.0, description="spelling: ... a common English word: this frequent or more (once per million words)"
    )
    stage_list: int = Field(
        default=3,
        ge=2,
        description="a text naming this many stages (or grades) or more, by number, lists them and names none "
        "('Stage 0; Stage I; ...'); set by hand",
    )
    definitional_words: int = Field(
        default=12, ge=1, description="adaptive retrieval's rules: a longer question is never 'definitional'"
    )
    rewrite_max_tokens: int = Field(default=2048, ge=64, description="a language model's budget for the rewrite")
    decision_max_tokens: int = Field(default=300, ge=16, description="... for adaptive retrieval's decision")
    hyde_max_tokens: int = Field(
        default=400, ge=16, description="... for HyDE's pseudo-answer (fixed when the pipeline loads)"
    )


class DocumentOptions(_Section):
    """Stage 3: HSRDR. The fusion (E1 1.5, E2 1.0 with the Best-Match-like "bestmatch" ladder ranking and title 4 /
    abstract 1 / MeSH 2 field weights, plain BM25 0.5, RRF k 10) was chosen by ``cpqa eval fusion`` on the 400-question
    BioASQ tuning split (``cpqa/evaluation/data/bioasq_splits.json``) beside the encoder trained here, and measured on
    the dev split and the cancer questions it was not tuned on; the sweeps and the held-out numbers are in
    docs/results.md ("A biomedical retriever trained here (issue 36)"; MiniLM's: "HSRDR against the naive hybrid
    (issue 15)")."""

    years: int | None = Field(default=None, ge=1, le=100, description="only evidence from the last N years (1-100)")
    sources: tuple[Source, ...] = Field(
        default=("D1", "D2", "D4"),
        min_length=1,
        description="D1 PubMed abstracts, D2 PMC reviews, D3 other PMC full texts, D4 NIH patient information "
        "(cancer.gov, MedlinePlus and other NIH pages: `cpqa ingest medquad`)",
    )
    patient_sections: int = Field(
        default=3, ge=1, description="D4: the patient-information sections searched for that reach the passages"
    )
    patient_pool: int = Field(
        default=12,
        ge=1,
        description="D4: of the sections found first, those of a kind the question asks for (its signs, outlook, "
        "treatment...) are preferred",
    )
    patient_focus_pool: int = Field(
        default=50,
        ge=0,
        description="D4: of the sections found first, those of a page about the condition the question names come "
        "first, a growth's page first for a question about a growth (12, the kind's pool, missed cancer.gov's and "
        "MedlinePlus's kidney cancer pages at 21 and 23 for a question about smoking and kidney cancer)",
    )
    # D4's own fusion, chosen on the cancer.gov questions of MedQuAD's tuning and train pages (539; eval pages
    # untouched): equal weights gave recall@1/@3 0.48/0.86, below dense alone (0.69/0.92; BM25 alone 0.24/0.60);
    # BM25 at 0.3 gave 0.69/0.91 (docs/results.md, issue 35).
    patient_rrf_k: int = Field(default=10, ge=1, description="D4: reciprocal-rank k (as HSRDR's; 60 gave the same)")
    patient_bm25_weight: float = Field(default=0.3, ge=0.0, description="D4: BM25's weight in the fusion")
    patient_dense_weight: float = Field(default=1.0, ge=0.0, description="D4: the dense path's weight")
    patient_depth: int = Field(default=50, ge=1, description="D4: candidates each path passes to the fusion")
    patient_dense_words: int = Field(
        default=100,
        ge=10,
        description="D4: the dense path reads a section's opening words only (100, about 130 word pieces, rather than "
        "the encoder's 256-piece window raised dense recall@1 on the cancer.gov tuning and train questions from 0.60 "
        "to 0.75, in half the time); fixed when the patient index is built",
    )
    hnsw_coarse_from: int = Field(
        default=8192,
        ge=1,
        description="E1's IVF index: from this many lists on, the centroids are searched by HNSW (a flat scan of them "
        "costs more than the lists; measured in docs/results.md, issue 19); fixed when the index is built",
    )
    e1_k: int = Field(default=100, ge=1, description="semantic hits taken into fusion")
    ladder_min_docs: int = Field(
        default=200, ge=1, description="the Boolean ladder stops once this many PMIDs are found (a depth budget)"
    )
    ladder_retmax: int = Field(
        default=100,
        ge=1,
        le=9_999,
        description="PMIDs asked for per ladder level (PubMed esearch serves the first 9,999)",
    )
    ladder_ranking: LadderRanking = Field(
        default="bestmatch",
        description="E2's order: 'ladder' = earlier, more "
        "specific levels first; 'rrf' = every level run and fused by RRF; "
        "'weighted' = the levels run within the budget, fused by RRF with "
        "specific levels weighing more; 'bestmatch' = the levels run within "
        "the budget, ranked by field-weighted BM25 plus a level bonus "
        "(Best-Match-like; 'weighted' on E-utilities)",
    )
    ladder_level_decay: float = Field(
        default=0.9, gt=0.0, le=1.0, description="'weighted': level n weighs decay ** (n - 1)"
    )
    ladder_level_bonus: float = Field(
        default=0.1,
        ge=0.0,
        description="'bestmatch': bonus for the most specific "
        "level that found a document, level n earning bonus * decay ** (n - 1), "
        "beside its BM25 score normalised to the best hit (1.0)",
    )
    ladder_field_weights: tuple[float, float, float] = Field(
        default=(4.0, 1.0, 2.0),
        description="'bestmatch': BM25 weight of title, abstract and MeSH (local store; title 4 / MeSH 2 chosen with "
        "the trained encoder's fusion on the tuning split, issue 36; equal weights were best beside MiniLM)",
    )
    ladder_rrf_k: int = Field(
        default=60, ge=1, description="'rrf' / 'weighted': the RRF constant fusing the ladder's levels (the paper's)"
    )
    rrf_k: int = Field(default=10, ge=1, description="the RRF constant fusing the paths")
    e1_weight: float = Field(default=1.5, ge=0.0, description="0 leaves the path out")
    e2_weight: float = Field(default=1.0, ge=0.0, description="0 leaves the path out")
    bm25_weight: float = Field(
        default=0.5,
        ge=0.0,
        description="plain BM25 over title + abstract as a third path; 0 leaves it out (0.5 beside the encoder trained "
        "here, chosen on the BioASQ tuning split; 1.5 beside MiniLM: docs/results.md, issue 36)",
    )
    bm25_k: int = Field(default=100, ge=1, description="BM25 hits taken into fusion")
    fusion_depth: int = Field(default=100, ge=1, description="ranks per path that enter fusion")
    max_docs: int = Field(default=50, ge=1, description="kept candidates returned")
    rerank_records: int = Field(
        default=0,
        ge=0,
        description="the first kept records the record reranker trained here reads beside the question, where E1 runs "
        "offline (cpqa.documents.record_rerank); 0: none. Off: trained on two CPU cores it moved held-out recall@20 "
        "by +0.004 (dev split) and +0.001 (cancer), MRR@10 by -0.001 and -0.006, for about 150 ms a question "
        "(docs/results.md, issue 36, stop 60); 25 with rerank_weight 0.02 was best on the tuning split",
    )
    rerank_weight: float = Field(
        default=0.02,
        ge=0.0,
        description="a reranked record's score: 1 / (rrf_k + its place in the fusion's order) + this x the reranker's "
        "probability (0.02 with 25 records: chosen on the BioASQ tuning split, issue 36)",
    )

    @property
    def weights(self) -> dict[str, float]:
        """Fusion weight per path; a path of weight 0 does not run."""
        return {"E1": self.e1_weight, "E2": self.e2_weight, "BM25": self.bm25_weight}


__all__ = ["DocumentOptions", "RewriteOptions", "SafetyOptions"]
